/* compute: roofline kernel times with a calibrated efficiency curve over token counts. Times are
 * computed in double seconds and rounded once to picoseconds, so that a kernel's time does not
 * depend on the order its terms were added. */
#include "compute.h"

#include <math.h>

G_DEFINE_QUARK(ms_compute_error_quark, ms_compute_error)

struct _MsComputeModel {
    char *gpu; /* the GPU's name, for messages */
    MsGpuSpec spec;
    MsDtype dtype;
    MsFlops peak;
    MsBandwidth hbm;
    MsTime launch;
    double slowdown;
    double pace; /* kernel bodies take this many times their time (a straggler) */
    guint n;     /* curve points; 0 = constant default efficiency */
    double *tokens;
    double *efficiency;
};

MsComputeModel *
ms_compute_model_new(const MsGpuSpec *spec, GError **error)
{
    g_return_val_if_fail(spec != NULL, NULL);
    if (!(spec->peak_flops > 0) || !isfinite(spec->peak_flops)) {
        g_set_error(error, MS_COMPUTE_ERROR, MS_COMPUTE_ERROR_INVALID,
                    "GPU %s: peak_flops %g is not a positive finite rate",
                    spec->model ? spec->model : "(unnamed)", spec->peak_flops);
        return NULL;
    }
    if (!(spec->hbm_bandwidth > 0) || !isfinite(spec->hbm_bandwidth)) {
        g_set_error(error, MS_COMPUTE_ERROR, MS_COMPUTE_ERROR_INVALID,
                    "GPU %s: hbm_bandwidth %g is not a positive finite bandwidth",
                    spec->model ? spec->model : "(unnamed)", spec->hbm_bandwidth);
        return NULL;
    }
    if (spec->launch_overhead == MS_TIME_NEVER) {
        g_set_error(error, MS_COMPUTE_ERROR, MS_COMPUTE_ERROR_INVALID,
                    "GPU %s: launch_overhead is not set", spec->model ? spec->model : "(unnamed)");
        return NULL;
    }
    MsComputeModel *model = g_new0(MsComputeModel, 1);
    model->gpu = g_strdup(spec->model ? spec->model : "(unnamed)");
    model->spec = *spec;
    model->spec.model = model->gpu;
    model->dtype = MS_DTYPE_FP16;
    model->peak = spec->peak_flops;
    model->hbm = spec->hbm_bandwidth;
    model->launch = spec->launch_overhead;
    model->slowdown = 1.0;
    model->pace = 1.0;
    return model;
}

void
ms_compute_model_free(MsComputeModel *model)
{
    if (model == NULL) {
        return;
    }
    g_free(model->tokens);
    g_free(model->efficiency);
    g_free(model->gpu);
    g_free(model);
}

gboolean
ms_compute_model_set_dtype(MsComputeModel *model, MsDtype dtype, GError **error)
{
    g_return_val_if_fail(model != NULL && (guint)dtype < MS_DTYPE_N, FALSE);
    MsFlops peak = 0;
    if (!ms_gpu_spec_peak(&model->spec, dtype, &peak) || !(peak > 0) || !isfinite(peak)) {
        g_set_error(error, MS_COMPUTE_ERROR, MS_COMPUTE_ERROR_INVALID,
                    "GPU %s has no %s peak: the model computes in %s, so its topology's [gpu] "
                    "group needs peak_%s (docs/topology.md)",
                    model->gpu, ms_dtype_name(dtype), ms_dtype_name(dtype), ms_dtype_name(dtype));
        return FALSE;
    }
    model->dtype = dtype;
    model->peak = peak;
    return TRUE;
}

MsDtype
ms_compute_model_dtype(const MsComputeModel *model)
{
    return model->dtype;
}

gboolean
ms_compute_model_apply_schedule(MsComputeModel *model, const MsSchedule *s, GError **error)
{
    const char *name = ms_schedule_get_meta(s, "dtype");
    MsDtype dtype;
    if (name == NULL) {
        return TRUE;
    }
    if (!ms_dtype_from_name(name, &dtype)) {
        g_set_error(error, MS_COMPUTE_ERROR, MS_COMPUTE_ERROR_INVALID,
                    "the schedule's dtype '%s' is none of %s", name, ms_dtype_names_text());
        return FALSE;
    }
    return ms_compute_model_set_dtype(model, dtype, error);
}

static gboolean
check_curve(const double *tokens, const double *efficiency, guint n, GError **error)
{
    for (guint i = 0; i < n; i++) {
        if (!(tokens[i] > 0) || !isfinite(tokens[i]) || (i > 0 && !(tokens[i] > tokens[i - 1]))) {
            g_set_error(error, MS_COMPUTE_ERROR, MS_COMPUTE_ERROR_INVALID,
                        "efficiency curve: tokens[%u] = %g (token counts must be > 0 and "
                        "strictly increasing)",
                        i, tokens[i]);
            return FALSE;
        }
        if (!(efficiency[i] > 0) || !(efficiency[i] <= MS_COMPUTE_EFFICIENCY_MAX)) {
            g_set_error(error, MS_COMPUTE_ERROR, MS_COMPUTE_ERROR_INVALID,
                        "efficiency curve: efficiency[%u] = %g is outside (0, %g]", i,
                        efficiency[i], MS_COMPUTE_EFFICIENCY_MAX);
            return FALSE;
        }
    }
    return TRUE;
}

gboolean
ms_compute_model_set_curve(MsComputeModel *model, const double *tokens, const double *efficiency,
                           guint n, GError **error)
{
    g_return_val_if_fail(model != NULL, FALSE);
    g_return_val_if_fail(n == 0 || (tokens != NULL && efficiency != NULL), FALSE);
    if (!check_curve(tokens, efficiency, n, error)) {
        return FALSE;
    }
    g_free(model->tokens);
    g_free(model->efficiency);
    model->n = n;
    model->tokens = n ? g_new(double, n) : NULL;
    model->efficiency = n ? g_new(double, n) : NULL;
    for (guint i = 0; i < n; i++) {
        model->tokens[i] = tokens[i];
        model->efficiency[i] = efficiency[i];
    }
    return TRUE;
}

/* A factor by which kernel bodies grow: 1 (none) to MS_COMPUTE_SLOWDOWN_MAX. */
static gboolean
check_factor(double factor, const char *what, GError **error)
{
    if (!(factor >= 1.0) || !(factor <= MS_COMPUTE_SLOWDOWN_MAX)) {
        g_set_error(error, MS_COMPUTE_ERROR, MS_COMPUTE_ERROR_INVALID, "%s %g is outside [1, %g]",
                    what, factor, MS_COMPUTE_SLOWDOWN_MAX);
        return FALSE;
    }
    return TRUE;
}

gboolean
ms_compute_model_set_overlap_slowdown(MsComputeModel *model, double factor, GError **error)
{
    g_return_val_if_fail(model != NULL, FALSE);
    if (!check_factor(factor, "overlap slowdown", error)) {
        return FALSE;
    }
    model->slowdown = factor;
    return TRUE;
}

double
ms_compute_model_overlap_slowdown(const MsComputeModel *model)
{
    return model->slowdown;
}

gboolean
ms_compute_model_set_pace(MsComputeModel *model, double factor, GError **error)
{
    g_return_val_if_fail(model != NULL, FALSE);
    if (!check_factor(factor, "straggler factor", error)) {
        return FALSE;
    }
    model->pace = factor;
    return TRUE;
}

void
ms_compute_model_set_launch(MsComputeModel *model, MsTime launch)
{
    g_return_if_fail(model != NULL && launch != MS_TIME_NEVER);
    model->launch = launch;
}

MsTime
ms_compute_model_launch(const MsComputeModel *model)
{
    return model->launch;
}

MsFlops
ms_compute_model_peak(const MsComputeModel *model)
{
    return model->peak;
}

MsBandwidth
ms_compute_model_hbm(const MsComputeModel *model)
{
    return model->hbm;
}

double
ms_log_interp(const double *x, const double *y, guint n, double xq, gboolean log_y)
{
    g_return_val_if_fail(n >= 1, NAN);
    if (n == 1 || !(xq > x[0])) {
        return y[0];
    }
    if (xq >= x[n - 1]) {
        return y[n - 1];
    }
    /* Binary search for the bracket x[lo] <= xq < x[lo + 1]. */
    guint lo = 0, hi = n - 1;
    while (hi - lo > 1) {
        guint mid = lo + (hi - lo) / 2;
        if (x[mid] <= xq) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    double f = log(xq / x[lo]) / log(x[hi] / x[lo]);
    if (log_y) {
        return y[lo] * pow(y[hi] / y[lo], f);
    }
    return y[lo] + f * (y[hi] - y[lo]);
}

double
ms_compute_efficiency(const MsComputeModel *model, guint64 tokens)
{
    if (model->n == 0) {
        return MS_COMPUTE_DEFAULT_EFFICIENCY;
    }
    if (tokens == 0) {
        return model->efficiency[model->n - 1];
    }
    return ms_log_interp(model->tokens, model->efficiency, model->n, (double)tokens, TRUE);
}

/* The kernel body in seconds: the slower of the compute and memory terms. */
static double
body_seconds(const MsComputeModel *model, double flops, guint64 bytes, guint64 tokens)
{
    double compute = flops > 0 ? flops / (model->peak * ms_compute_efficiency(model, tokens)) : 0;
    double memory = (double)bytes / model->hbm;
    return model->pace * MAX(compute, memory);
}

MsTime
ms_compute_time(const MsComputeModel *model, double flops, guint64 bytes, guint64 tokens)
{
    g_return_val_if_fail(model != NULL && flops >= 0 && isfinite(flops), 0);
    double s = ms_time_to_s(model->launch) + body_seconds(model, flops, bytes, tokens);
    return ms_time_from_s(s);
}

MsTime
ms_compute_time_overlapped(const MsComputeModel *model, double flops, guint64 bytes, guint64 tokens)
{
    g_return_val_if_fail(model != NULL && flops >= 0 && isfinite(flops), 0);
    double s =
        ms_time_to_s(model->launch) + model->slowdown * body_seconds(model, flops, bytes, tokens);
    return ms_time_from_s(s);
}

void
ms_compute_op_parts(const MsComputeModel *model, const MsOpInfo *op, double *fixed_s,
                    double *body_s)
{
    g_return_if_fail(model != NULL && op != NULL);
    if (op->role == MS_ROLE_HOST) {
        *fixed_s = op->host_s;
        *body_s = 0;
        return;
    }
    guint64 rows = op->gemm_m ? op->gemm_m : op->tokens;
    *fixed_s = ms_time_to_s(model->launch) + op->host_s;
    *body_s = body_seconds(model, op->flops, (guint64)op->bytes, rows);
}

MsTime
ms_compute_op_time(const MsComputeModel *model, const MsOpInfo *op, gboolean overlapped)
{
    g_return_val_if_fail(model != NULL && op != NULL, 0);
    double fixed = 0, body = 0;
    ms_compute_op_parts(model, op, &fixed, &body);
    return ms_time_from_s(fixed + (overlapped ? model->slowdown : 1) * body);
}

void
ms_compute_expert_ffn_cost(guint64 tokens, guint64 d_model, guint64 d_ffn, gboolean gated,
                           guint dtype_bytes, double *flops, guint64 *bytes)
{
    double t = (double)tokens, dm = (double)d_model, df = (double)d_ffn;
    double matrices = gated ? 3.0 : 2.0;
    double up_width = gated ? 2.0 * df : df;
    /* Elements moved: weights once; input and up output; the activation reads the up output and
     * writes d_ffn per token; the down projection reads that and writes d_model per token. */
    double elements =
        matrices * dm * df + t * (dm + up_width) + t * (up_width + df) + t * (df + dm);
    *flops = tokens ? 2.0 * t * dm * df * matrices : 0.0;
    double b = tokens ? elements * (double)dtype_bytes : 0.0;
    *bytes = b >= 1.8e19 ? G_MAXUINT64 : (guint64)b;
}

MsTime
ms_compute_expert_ffn_time(const MsComputeModel *model, guint64 tokens, guint64 d_model,
                           guint64 d_ffn, gboolean gated, guint dtype_bytes)
{
    if (tokens == 0) {
        return 0;
    }
    double flops;
    guint64 bytes;
    ms_compute_expert_ffn_cost(tokens, d_model, d_ffn, gated, dtype_bytes, &flops, &bytes);
    return ms_compute_time(model, flops, bytes, tokens);
}
