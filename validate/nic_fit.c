/* nic_fit: each concurrency row paired with its all-to-all alone, its ranks placed and its
 * simulated time alone computed once (the exponent changes nothing when nothing contends); then
 * the squared log error of the slowdowns as a function of the exponent, minimised over [0, 1] by
 * a grid and a golden-section search, and the standard error from its residuals. */
#include "nic_fit.h"

#include <math.h>
#include <string.h>

#include "validate/calibrate.h"
#include "validate/nic_sim.h"

G_DEFINE_QUARK(ms_nic_fit_error_quark, ms_nic_fit_error)

/* The grid's step, the golden-section search's tolerance on x, and the step of the derivative
 * the standard error takes: fine enough that the fit lands within 0.001 of its best point, the
 * derivative's step well above the search's tolerance. */
#define GRID_STEP 0.05
#define TOLERANCE 1e-3
#define DERIVATIVE_STEP 0.02
/* Below this sensitivity (the slowdowns' log moving by less than 0.1% over the whole [0, 1]) the
 * rows say nothing about the exponent. */
#define FLAT 1e-3

typedef struct {
    const MsMeasurement *m;
    guint *ranks;
    double measured; /* its slowdown: together over alone, as measured */
    double alone_s;  /* the simulated all-to-all alone */
    guint calls;
} Row;

typedef struct {
    const MsTopology *topo;
    MsNetSpec base;
    GArray *rows; /* Row */
} Fit;

static const char *
where(const MsMeasurement *m)
{
    return m->source && *m->source ? m->source : "<memory>";
}

static void
row_clear(gpointer p)
{
    g_free(((Row *)p)->ranks);
}

guint
ms_nic_fit_count(const MsMeasurementSet *set)
{
    guint n = 0;
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        n += ms_measurement_set_get(set, i)->kind == MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE;
    }
    return n;
}

static gboolean
same_config(const MsMeasurement *a, const MsMeasurement *u)
{
    return a->kind == MS_MEASUREMENT_ALLTOALL && a->bytes == u->bytes && a->ranks == u->ranks &&
           a->ranks_per_node == u->ranks_per_node && a->channels == u->channels && a->qps == u->qps;
}

const MsMeasurement *
ms_nic_fit_alone_row(const MsMeasurementSet *set, guint i)
{
    const MsMeasurement *u = ms_measurement_set_get(set, i), *any = NULL;
    for (guint j = i; j-- > 0;) {
        const MsMeasurement *a = ms_measurement_set_get(set, j);
        if (same_config(a, u) && g_strcmp0(a->source, u->source) == 0) {
            return a;
        }
    }
    for (guint j = 0; j < ms_measurement_set_size(set) && any == NULL; j++) {
        const MsMeasurement *a = ms_measurement_set_get(set, j);
        any = same_config(a, u) ? a : NULL;
    }
    return any;
}

/* The model of a row's spec at exponent x, one per channel count (cached in models). */
static MsNetModel *
model_for(const Fit *f, GHashTable *models, const MsMeasurement *m, double x, GError **error)
{
    MsNetModel *model = g_hash_table_lookup(models, GUINT_TO_POINTER(m->channels));
    if (model) {
        return model;
    }
    MsNetSpec spec;
    ms_calibrate_row_spec(&f->base, m, &spec);
    spec.message_exponent = x;
    if ((model = ms_net_model_new(&spec, f->topo, error)) == NULL) {
        return NULL;
    }
    g_hash_table_insert(models, GUINT_TO_POINTER(m->channels), model);
    return model;
}

static GHashTable *
models_new(void)
{
    return g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                 (GDestroyNotify)ms_net_model_free);
}

static gboolean
located(gboolean ok, const MsMeasurement *m, GError **error)
{
    if (!ok) {
        g_prefix_error(error, "%s:%u: %s: ", where(m), m->line, ms_measurement_kind_name(m->kind));
    }
    return ok;
}

/* A row's placement, its time alone and its timed calls under model. */
static gboolean
prepare(const MsTopology *topo, MsNetModel *model, Row *r, GError **error)
{
    const MsMeasurement *m = r->m;
    r->ranks = g_new(guint, m->ranks);
    if (!ms_calibrate_place(topo, m->ranks, m->ranks_per_node, r->ranks, error)) {
        return FALSE;
    }
    MsNicCase c = {m->ranks, r->ranks, m->bytes, m->background_bytes, model};
    double ar = 0;
    if (!ms_nic_sim_alone(topo, &c, MS_NIC_SIM_MIN_CALLS, &r->alone_s, error) ||
        !ms_nic_sim_background(topo, &c, MS_NIC_SIM_MIN_CALLS, &ar, error)) {
        return FALSE;
    }
    r->calls = ms_nic_sim_calls(r->alone_s, ar);
    if (r->calls > MS_NIC_SIM_MIN_CALLS &&
        !ms_nic_sim_alone(topo, &c, r->calls, &r->alone_s, error)) {
        return FALSE;
    }
    return TRUE;
}

static gboolean
collect(Fit *f, const MsMeasurementSet *set, GError **error)
{
    g_autoptr(GHashTable) models = models_new();
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        const MsMeasurement *m = ms_measurement_set_get(set, i);
        if (m->kind != MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE) {
            continue;
        }
        const MsMeasurement *a = ms_nic_fit_alone_row(set, i);
        if (a == NULL) {
            g_set_error(error, MS_NIC_FIT_ERROR, MS_NIC_FIT_ERROR_ALONE,
                        "%s:%u: alltoall_under_allreduce of %" G_GUINT64_FORMAT
                        " B over %ux%u (channels %u, qps %u): no alltoall row of the same size, "
                        "ranks and NCCL configuration to compare it with (moesim bench writes "
                        "one just before it)",
                        where(m), m->line, m->bytes, m->ranks, m->ranks_per_node, m->channels,
                        m->qps);
            return FALSE;
        }
        Row r = {.m = m, .measured = m->seconds / a->seconds};
        g_array_append_val(f->rows, r);
        MsNetModel *model = model_for(f, models, m, f->base.message_exponent, error);
        if (model == NULL ||
            !located(prepare(f->topo, model, &g_array_index(f->rows, Row, f->rows->len - 1), error),
                     m, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

/* Every row's ln(simulated slowdown / measured) at exponent x (into res), and their squared sum;
 * pred, when not NULL, receives the simulated slowdowns. */
static gboolean
evaluate(const Fit *f, double x, double *res, double *pred, double *sum, GError **error)
{
    g_autoptr(GHashTable) models = models_new();
    *sum = 0;
    for (guint i = 0; i < f->rows->len; i++) {
        const Row *r = &g_array_index(f->rows, Row, i);
        MsNetModel *model = model_for(f, models, r->m, x, error);
        if (model == NULL) {
            return FALSE;
        }
        MsNicCase c = {r->m->ranks, r->ranks, r->m->bytes, r->m->background_bytes, model};
        double t = 0;
        if (!located(ms_nic_sim_together(f->topo, &c, r->calls, &t, error), r->m, error)) {
            return FALSE;
        }
        double s = t / r->alone_s;
        res[i] = log(s / r->measured);
        *sum += res[i] * res[i];
        if (pred) {
            pred[i] = s;
        }
    }
    return TRUE;
}

/* The x of least squared error: the best point of the grid, then a golden-section search over
 * the grid steps on either side of it. */
static gboolean
minimise(const Fit *f, double *res, double *best_x, GError **error)
{
    guint n_grid = (guint)lround(1 / GRID_STEP) + 1, best = 0;
    double best_s = INFINITY;
    for (guint k = 0; k < n_grid; k++) {
        double s = 0;
        if (!evaluate(f, k * GRID_STEP, res, NULL, &s, error)) {
            return FALSE;
        }
        if (s < best_s) {
            best_s = s;
            best = k;
        }
    }
    double lo = MAX(0.0, (best - 1.0) * GRID_STEP), hi = MIN(1.0, (best + 1.0) * GRID_STEP);
    const double g = (sqrt(5) - 1) / 2;
    double a = hi - g * (hi - lo), b = lo + g * (hi - lo), sa = 0, sb = 0;
    if (!evaluate(f, a, res, NULL, &sa, error) || !evaluate(f, b, res, NULL, &sb, error)) {
        return FALSE;
    }
    while (hi - lo > TOLERANCE) {
        if (sa <= sb) {
            hi = b;
            b = a;
            sb = sa;
            a = hi - g * (hi - lo);
            if (!evaluate(f, a, res, NULL, &sa, error)) {
                return FALSE;
            }
        } else {
            lo = a;
            a = b;
            sa = sb;
            b = lo + g * (hi - lo);
            if (!evaluate(f, b, res, NULL, &sb, error)) {
                return FALSE;
            }
        }
    }
    /* The grid point stays when the search found nothing better (a minimum at an end of [0, 1]). */
    double x = (lo + hi) / 2, s = 0;
    if (!evaluate(f, x, res, NULL, &s, error)) {
        return FALSE;
    }
    *best_x = s <= best_s ? x : best * GRID_STEP;
    return TRUE;
}

static int
cmp_double(gconstpointer a, gconstpointer b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of |exp(res) - 1| over n residuals. */
static double
median_error(const double *res, guint n)
{
    g_autofree double *e = g_new(double, MAX(n, 1));
    for (guint i = 0; i < n; i++) {
        e[i] = fabs(exp(res[i]) - 1);
    }
    qsort(e, n, sizeof(double), cmp_double);
    return n % 2 ? e[n / 2] : 0.5 * (e[n / 2 - 1] + e[n / 2]);
}

/* se^2 = sigma^2 / sum J^2: sigma^2 the residuals' variance (n - 1 degrees of freedom), J each
 * residual's derivative in x by a central difference (one-sided at the ends of [0, 1]). */
static gboolean
standard_error(const Fit *f, double x, const double *res, double *se, GError **error)
{
    guint n = f->rows->len;
    double lo = MAX(0.0, x - DERIVATIVE_STEP), hi = MIN(1.0, x + DERIVATIVE_STEP), s = 0;
    g_autofree double *r_lo = g_new(double, n);
    g_autofree double *r_hi = g_new(double, n);
    if (!evaluate(f, lo, r_lo, NULL, &s, error) || !evaluate(f, hi, r_hi, NULL, &s, error)) {
        return FALSE;
    }
    double jj = 0, rss = 0;
    for (guint i = 0; i < n; i++) {
        double d = (r_hi[i] - r_lo[i]) / (hi - lo);
        jj += d * d;
        rss += res[i] * res[i];
    }
    if (sqrt(jj) < FLAT) {
        g_set_error(error, MS_NIC_FIT_ERROR, MS_NIC_FIT_ERROR_FLAT,
                    "the simulated slowdowns of the %u alltoall_under_allreduce rows do not "
                    "depend on the message exponent (no NIC carries both collectives' "
                    "connections on this topology?)",
                    n);
        return FALSE;
    }
    *se = sqrt(rss / (n - 1) / jj);
    return TRUE;
}

static void
fill_groups(const Fit *f, const double *res, GArray *groups)
{
    for (guint i = 0; i < f->rows->len; i++) {
        const MsMeasurement *m = g_array_index(f->rows, Row, i).m;
        MsNicFitGroup *g = NULL;
        for (guint k = 0; k < groups->len && g == NULL; k++) {
            MsNicFitGroup *o = &g_array_index(groups, MsNicFitGroup, k);
            g = o->channels == m->channels && o->qps == m->qps ? o : NULL;
        }
        if (g == NULL) {
            MsNicFitGroup fresh = {m->channels, m->qps, 0, 0};
            g_array_append_val(groups, fresh);
            g = &g_array_index(groups, MsNicFitGroup, groups->len - 1);
        }
        g->mean_log_error += (res[i] - g->mean_log_error) / ++g->rows;
    }
}

static gboolean
fit_rows(Fit *f, MsNicFit *out, GError **error)
{
    guint n = f->rows->len;
    g_autofree double *res = g_new(double, n);
    double x = 0, s = 0, se = 0;
    if (!evaluate(f, f->base.message_exponent, res, NULL, &s, error)) {
        return FALSE;
    }
    out->median_before = median_error(res, n);
    if (!minimise(f, res, &x, error) || !evaluate(f, x, res, NULL, &s, error) ||
        !standard_error(f, x, res, &se, error)) {
        return FALSE;
    }
    out->spec = f->base;
    out->spec.message_exponent = x;
    out->exponent_se = se;
    out->rows = n;
    out->median_after = median_error(res, n);
    out->groups = g_array_new(FALSE, FALSE, sizeof(MsNicFitGroup));
    fill_groups(f, res, out->groups);
    return TRUE;
}

gboolean
ms_nic_fit(const MsTopology *topo, const MsMeasurementSet *set, const MsNetSpec *base,
           MsNicFit *out, GError **error)
{
    if (base->kind != MS_NET_NCCL) {
        g_set_error(error, MS_NIC_FIT_ERROR, MS_NIC_FIT_ERROR_SPEC,
                    "only the nccl network model has a NIC arbitration to fit");
        return FALSE;
    }
    guint n = ms_nic_fit_count(set);
    if (n < 2) {
        g_set_error(error, MS_NIC_FIT_ERROR, MS_NIC_FIT_ERROR_NO_DATA,
                    "%u alltoall_under_allreduce rows: the message exponent needs at least 2 "
                    "(moesim bench --what concurrency)",
                    n);
        return FALSE;
    }
    Fit f = {.topo = topo, .base = *base};
    f.rows = g_array_new(FALSE, FALSE, sizeof(Row));
    g_array_set_clear_func(f.rows, row_clear);
    MsNicFit fit = {0};
    gboolean ok = collect(&f, set, error) && fit_rows(&f, &fit, error);
    g_array_unref(f.rows);
    if (ok) {
        *out = fit;
    }
    return ok;
}

void
ms_nic_fit_clear(MsNicFit *fit)
{
    g_clear_pointer(&fit->groups, g_array_unref);
}

static void
append_config(GString *s, guint32 channels, guint32 qps)
{
    if (channels) {
        g_string_append_printf(s, "channels %u", channels);
    } else {
        g_string_append(s, "NCCL's channels");
    }
    if (qps) {
        g_string_append_printf(s, ", %u QPs per connection", qps);
    } else {
        g_string_append(s, ", NCCL's QPs per connection");
    }
}

char *
ms_nic_fit_describe(const MsNicFit *fit)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s,
                           "message_exponent %.3f +- %.3f (%u rows; slowdown error median %.1f%% "
                           "before, %.1f%% after)\n",
                           fit->spec.message_exponent, fit->exponent_se, fit->rows,
                           100 * fit->median_before, 100 * fit->median_after);
    for (guint k = 0; fit->groups && fit->groups->len > 1 && k < fit->groups->len; k++) {
        const MsNicFitGroup *g = &g_array_index(fit->groups, MsNicFitGroup, k);
        g_string_append(s, "  ");
        append_config(s, g->channels, g->qps);
        /* Rounded first, so that a residual of nothing reads +0.0%, never -0.0%. */
        double pct = round(1000 * (exp(g->mean_log_error) - 1)) / 10;
        g_string_append_printf(s, ": %u rows, mean slowdown error %+.1f%%\n", g->rows,
                               pct == 0 ? 0.0 : pct);
    }
    return g_string_free(s, FALSE);
}

gboolean
ms_nic_fit_predict(const MsTopology *topo, const MsNetSpec *spec, const MsMeasurement *row,
                   double *alone_s, double *together_s, GError **error)
{
    g_return_val_if_fail(row->kind == MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE, FALSE);
    g_autoptr(MsNetModel) model = NULL;
    if (spec) {
        MsNetSpec own;
        ms_calibrate_row_spec(spec, row, &own);
        if ((model = ms_net_model_new(&own, topo, error)) == NULL) {
            return FALSE;
        }
    }
    Row r = {.m = row};
    gboolean ok = located(prepare(topo, model, &r, error), row, error);
    MsNicCase c = {row->ranks, r.ranks, row->bytes, row->background_bytes, model};
    ok = ok && located(ms_nic_sim_together(topo, &c, r.calls, together_s, error), row, error);
    if (ok && alone_s) {
        *alone_s = r.alone_s;
    }
    g_free(r.ranks);
    return ok;
}
