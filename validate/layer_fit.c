/* layer_fit: the fits of layer_fit.h on paired per-layer rows: two relative least-squares lines
 * (compute and all-to-all parts), the time between ops per op, and an ordinary least-squares
 * plane for what forward MoE layers take beyond that. */
#include "layer_fit.h"

#include <math.h>
#include <string.h>

#include "sim/compute.h"

G_DEFINE_QUARK(ms_layer_fit_error_quark, ms_layer_fit_error)

/* Parts measured at or below this (us) are timer noise. */
#define MIN_PART_US 0.5

static const MsLayerPart compute_parts[] = {MS_LAYER_ATTENTION, MS_LAYER_GATE, MS_LAYER_EXPERT,
                                            MS_LAYER_FFN, MS_LAYER_OTHER};
static const MsLayerPart a2a_parts[] = {MS_LAYER_DISPATCH, MS_LAYER_COMBINE};

typedef struct {
    const MsLayerRow *sim, *meas;
} Pair;

/* y = a n + s x by relative least squares (minimising sum ((a n + s x) / y - 1)^2); a < 0 is
 * refitted with a = 0. FALSE when no s > 0 solves it. */
static gboolean
fit_line(const GArray *n, const GArray *x, const GArray *y, double *a, double *s)
{
    double snn = 0, snx = 0, sxx = 0, sn = 0, sx = 0;
    for (guint i = 0; i < y->len; i++) {
        double yi = g_array_index(y, double, i);
        double u = g_array_index(n, double, i) / yi, v = g_array_index(x, double, i) / yi;
        snn += u * u, snx += u * v, sxx += v * v, sn += u, sx += v;
    }
    double det = snn * sxx - snx * snx;
    *a = det > 0 ? (sn * sxx - sx * snx) / det : 0;
    *s = det > 0 ? (snn * sx - snx * sn) / det : 0;
    if (!(*a >= 0) || !(*s > 0)) {
        *a = 0;
        *s = sxx > 0 ? sx / sxx : 0;
    }
    return *s > 0 && isfinite(*s);
}

static guint
ops_of(const MsLayerRow *r, const MsLayerPart *parts, guint n)
{
    guint ops = 0;
    for (guint i = 0; i < n; i++) {
        ops += r->part_ops[parts[i]];
    }
    return ops;
}

static double
host_total(const MsLayerRow *r)
{
    return r->part_us[MS_LAYER_HOST] + MAX(0.0, r->layer_us - r->busy_us);
}

static gboolean
is_moe_forward(const MsLayerRow *sim)
{
    return sim->phase == MS_PHASE_FORWARD && sim->experts > 0;
}

/* Fits parts (one line over all of them); stats over the fitted points. */
static gboolean
fit_parts(const GArray *pairs, const MsLayerPart *parts, guint n_parts, double *a, double *s,
          MsErrorStats *stats)
{
    g_autoptr(GArray) n = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GArray) x = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GArray) y = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < pairs->len; i++) {
        const Pair *p = &g_array_index(pairs, Pair, i);
        for (guint k = 0; k < n_parts; k++) {
            MsLayerPart part = parts[k];
            double ops = p->sim->part_ops[part], yi = p->meas->part_us[part];
            double xi = p->sim->part_us[part];
            if (ops > 0 && xi > 0 && yi > MIN_PART_US) {
                g_array_append_val(n, ops);
                g_array_append_val(x, xi);
                g_array_append_val(y, yi);
            }
        }
    }
    memset(stats, 0, sizeof *stats);
    if (y->len == 0) {
        return FALSE;
    }
    if (!fit_line(n, x, y, a, s)) {
        return FALSE;
    }
    g_autoptr(GArray) pred = g_array_sized_new(FALSE, FALSE, sizeof(double), y->len);
    for (guint i = 0; i < y->len; i++) {
        double v = *a * g_array_index(n, double, i) + *s * g_array_index(x, double, i);
        g_array_append_val(pred, v);
    }
    return ms_error_stats((double *)pred->data, (double *)y->data, y->len, stats, NULL);
}

/* The layer time the fitted compute, all-to-all and per-op figures predict for a simulated row
 * (us): each part changes by what its fit gives, every compute op gains the time between ops. */
static double
predict_layer(const MsLayerFit *f, const MsLayerRow *sim)
{
    double t = sim->layer_us;
    for (guint k = 0; k < G_N_ELEMENTS(compute_parts); k++) {
        MsLayerPart p = compute_parts[k];
        if (sim->part_ops[p]) {
            t +=
                f->compute_op_s * 1e6 * sim->part_ops[p] + (f->compute_scale - 1) * sim->part_us[p];
        }
    }
    for (guint k = 0; f->has_a2a && k < G_N_ELEMENTS(a2a_parts); k++) {
        MsLayerPart p = a2a_parts[k];
        if (sim->part_ops[p]) {
            t += f->a2a_alpha_s * 1e6 * sim->part_ops[p] + (f->a2a_factor - 1) * sim->part_us[p];
        }
    }
    return t + f->gap_op_s * 1e6 * ops_of(sim, compute_parts, G_N_ELEMENTS(compute_parts));
}

/* r = L + E experts + T tokens by ordinary least squares over columns that vary. */
static void
fit_framework(const GArray *pairs, MsLayerFit *f)
{
    g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(double) * 4);
    guint emin = G_MAXUINT, emax = 0, tmin = G_MAXUINT, tmax = 0;
    for (guint i = 0; i < pairs->len; i++) {
        const Pair *p = &g_array_index(pairs, Pair, i);
        if (!is_moe_forward(p->sim)) {
            continue;
        }
        double row[4] = {1, p->sim->experts, p->sim->tokens,
                         p->meas->layer_us - predict_layer(f, p->sim)};
        g_array_append_vals(rows, row, 1);
        emin = MIN(emin, p->sim->experts), emax = MAX(emax, p->sim->experts);
        tmin = MIN(tmin, p->sim->tokens), tmax = MAX(tmax, p->sim->tokens);
    }
    f->moe_layers = rows->len;
    if (rows->len == 0) {
        return;
    }
    gboolean use[3] = {TRUE, emax > emin, tmax > tmin};
    f->expert_folded = !use[1];
    f->token_folded = !use[2];
    /* Normal equations over the used columns (at most 3 x 3), by Gaussian elimination. */
    guint idx[3], k = 0;
    for (guint c = 0; c < 3; c++) {
        if (use[c]) {
            idx[k++] = c;
        }
    }
    double A[3][4] = {{0}};
    for (guint i = 0; i < rows->len; i++) {
        const double *r = &g_array_index(rows, double, 4 * i);
        for (guint a = 0; a < k; a++) {
            for (guint b = 0; b < k; b++) {
                A[a][b] += r[idx[a]] * r[idx[b]];
            }
            A[a][k] += r[idx[a]] * r[3];
        }
    }
    for (guint c = 0; c < k; c++) {
        guint piv = c;
        for (guint r = c + 1; r < k; r++) {
            piv = fabs(A[r][c]) > fabs(A[piv][c]) ? r : piv;
        }
        for (guint j = 0; j <= k; j++) {
            double t = A[c][j];
            A[c][j] = A[piv][j];
            A[piv][j] = t;
        }
        if (fabs(A[c][c]) < 1e-300) {
            return;
        }
        for (guint r = 0; r < k; r++) {
            if (r != c) {
                double m = A[r][c] / A[c][c];
                for (guint j = c; j <= k; j++) {
                    A[r][j] -= m * A[c][j];
                }
            }
        }
    }
    double coef[3] = {0};
    for (guint c = 0; c < k; c++) {
        coef[idx[c]] = A[c][k] / A[c][c];
    }
    /* Host time is not negative: a term the data drives below 0 is 0. */
    f->framework.layer_s = MAX(0.0, coef[0]) * 1e-6;
    f->framework.expert_s = MAX(0.0, coef[1]) * 1e-6;
    f->framework.token_s = MAX(0.0, coef[2]) * 1e-6;
}

gboolean
ms_layer_fit(const MsLayerTable *sim, const MsLayerTable *meas, const MsLayerSelect *sel,
             double launch_s, MsLayerFit *out, GError **error)
{
    memset(out, 0, sizeof *out);
    g_autoptr(GArray) pairs = g_array_new(FALSE, FALSE, sizeof(Pair));
    for (guint i = 0; i < ms_layer_table_n_rows(meas); i++) {
        const MsLayerRow *b = ms_layer_table_row(meas, i);
        if (b->iteration < sel->first || b->iteration > sel->last) {
            continue;
        }
        const MsLayerRow *a = ms_layer_table_find(sim, b->iteration, b->layer, b->phase, b->gpu);
        if (a == NULL) {
            continue;
        }
        if (a->part_us[MS_LAYER_HOST] > 0) {
            g_set_error(error, MS_LAYER_FIT_ERROR, MS_LAYER_FIT_ERROR_INPUT,
                        "the simulation has host time (layer %d, iteration %u): simulate the run "
                        "without framework figures, so that the fit finds them",
                        a->layer, a->iteration);
            return FALSE;
        }
        Pair p = {a, b};
        g_array_append_val(pairs, p);
    }
    out->pairs = pairs->len;
    if (pairs->len == 0) {
        g_set_error(error, MS_LAYER_FIT_ERROR, MS_LAYER_FIT_ERROR_INPUT,
                    "no measured layer (of the iterations asked for) is in the simulation: "
                    "simulate the measured run's model, topology, trace and iterations");
        return FALSE;
    }
    if (!fit_parts(pairs, compute_parts, G_N_ELEMENTS(compute_parts), &out->compute_op_s,
                   &out->compute_scale, &out->compute_stats)) {
        g_set_error(error, MS_LAYER_FIT_ERROR, MS_LAYER_FIT_ERROR_FIT,
                    "no compute part (attention, gate, expert, FFN) was measured in both tables, "
                    "or no positive scale reproduces them");
        return FALSE;
    }
    out->compute_op_s *= 1e-6;
    out->efficiency = MS_COMPUTE_DEFAULT_EFFICIENCY / out->compute_scale;
    out->launch_s = out->compute_scale * launch_s + out->compute_op_s;
    out->has_a2a = fit_parts(pairs, a2a_parts, G_N_ELEMENTS(a2a_parts), &out->a2a_alpha_s,
                             &out->a2a_factor, &out->a2a_stats);
    out->a2a_alpha_s *= 1e-6;
    if (!out->has_a2a) {
        out->a2a_alpha_s = 0;
        out->a2a_factor = 1;
    }
    /* Time between ops: from the layers without framework work of their own (dense layers and
     * backward), per compute op. */
    double host = 0, ops = 0;
    for (guint i = 0; i < pairs->len; i++) {
        const Pair *p = &g_array_index(pairs, Pair, i);
        if (!is_moe_forward(p->sim)) {
            host += host_total(p->meas) - host_total(p->sim);
            ops += ops_of(p->sim, compute_parts, G_N_ELEMENTS(compute_parts));
        }
    }
    out->gap_op_s = ops > 0 ? MAX(0.0, host / ops) * 1e-6 : 0;
    ms_framework_defaults(MS_FRAMEWORK_CUSTOM, TRUE, &out->framework);
    out->framework.op_s = out->gap_op_s;
    fit_framework(pairs, out);
    g_autoptr(GArray) pred = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GArray) real = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < pairs->len; i++) {
        const Pair *p = &g_array_index(pairs, Pair, i);
        double v = predict_layer(out, p->sim);
        if (is_moe_forward(p->sim)) {
            v += 1e6 * ms_framework_layer_s(&out->framework, p->sim->experts, p->sim->tokens);
        }
        if (p->meas->layer_us > MIN_PART_US) {
            g_array_append_val(pred, v);
            g_array_append_val(real, p->meas->layer_us);
        }
    }
    if (real->len) {
        ms_error_stats((double *)pred->data, (double *)real->data, real->len, &out->layer_stats,
                       NULL);
    }
    return TRUE;
}

gboolean
ms_layer_fit_apply(const MsLayerFit *fit, MsCalibration *cal, GError **error)
{
    const double tokens[] = {1}, eff[] = {fit->efficiency};
    MsGemmCurve curve = {.n = 1, .tokens = (double *)tokens, .efficiency = (double *)eff};
    if (!(fit->efficiency <= MS_COMPUTE_EFFICIENCY_MAX)) {
        g_set_error(error, MS_LAYER_FIT_ERROR, MS_LAYER_FIT_ERROR_FIT,
                    "the measured compute runs %.3g times faster than the nominal model: an "
                    "efficiency of %.3g is above %g (is the GPU's peak for the model's datatype "
                    "right?)",
                    1 / fit->compute_scale, fit->efficiency, MS_COMPUTE_EFFICIENCY_MAX);
        return FALSE;
    }
    if (!ms_calibration_set_gemm(cal, &curve, 1.0, ms_time_from_s(fit->launch_s), error)) {
        return FALSE;
    }
    if (fit->has_a2a) {
        const double sizes[] = {1 << 20}, ratio[] = {1 / fit->a2a_factor};
        MsEffTable table = {.n = 1, .sizes = (double *)sizes, .ratios = (double *)ratio};
        if (!(ratio[0] <= MS_EFF_RATIO_MAX) || !(ratio[0] >= MS_EFF_RATIO_MIN)) {
            g_set_error(error, MS_LAYER_FIT_ERROR, MS_LAYER_FIT_ERROR_FIT,
                        "the measured all-to-alls take %.3g times what the flow model predicts "
                        "(a calibration stretches them by %g to %g): the topology's link "
                        "figures are far from the measured machine's; give it their measured "
                        "bandwidth, or calibrate its links first (docs/calibration.md)",
                        fit->a2a_factor, 1 / MS_EFF_RATIO_MAX, 1 / MS_EFF_RATIO_MIN);
            return FALSE;
        }
        if (!ms_calibration_set_collective(cal, MS_MEASUREMENT_ALLTOALL,
                                           ms_time_from_s(fit->a2a_alpha_s), &table, error)) {
            return FALSE;
        }
    }
    return ms_calibration_set_framework(cal, &fit->framework, fit->moe_layers, error);
}

GPtrArray *
ms_layer_fit_describe(const MsLayerFit *f)
{
    GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(a, g_strdup_printf("layers: %u rows paired", f->pairs));
    g_ptr_array_add(
        a, g_strdup_printf("compute: measured = %.4g us per op + %.4g x simulated (%u parts, "
                           "median error %.2f%%): efficiency %.4g, launch %.4g us",
                           f->compute_op_s * 1e6, f->compute_scale, f->compute_stats.n,
                           100 * f->compute_stats.median, f->efficiency, f->launch_s * 1e6));
    if (f->has_a2a) {
        g_ptr_array_add(a, g_strdup_printf("all-to-all: measured = %.4g us per call + %.4g x "
                                           "simulated (%u parts, median error %.2f%%)",
                                           f->a2a_alpha_s * 1e6, f->a2a_factor, f->a2a_stats.n,
                                           100 * f->a2a_stats.median));
    }
    g_ptr_array_add(a,
                    g_strdup_printf("time between ops: %.4g us per compute op", f->gap_op_s * 1e6));
    g_ptr_array_add(
        a,
        g_strdup_printf("framework (%u forward MoE layers): %.4g us per layer + %.4g us per "
                        "local expert%s + %.4g us per token%s",
                        f->moe_layers, f->framework.layer_s * 1e6, f->framework.expert_s * 1e6,
                        f->expert_folded ? " (one expert count: folded into the layer term)" : "",
                        f->framework.token_s * 1e6,
                        f->token_folded ? " (one token count: folded into the layer term)" : ""));
    g_ptr_array_add(a, g_strdup_printf("fitted layers: median error %.2f%%, p90 %.2f%%, max "
                                       "%.2f%% (%u rows)",
                                       100 * f->layer_stats.median, 100 * f->layer_stats.p90,
                                       100 * f->layer_stats.max, f->layer_stats.n));
    return a;
}
