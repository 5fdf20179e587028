/* holdout: held-out evaluation of the calibration (see holdout.h). */
#include "holdout.h"

#include <string.h>

#include "validate/fit.h"

void
ms_holdout_alternate_sizes(const MsMeasurementSet *set, guint offset, gboolean *held)
{
    /* Rows of one configuration alternate in size order: sort each group's rows by size. */
    guint n = ms_measurement_set_size(set);
    g_autofree guint *order = g_new(guint, MAX(n, 1));
    for (guint i = 0; i < n; i++) {
        order[i] = i;
        held[i] = FALSE;
    }
    g_autofree guint8 *done = g_new0(guint8, MAX(n, 1));
    for (guint i = 0; i < n; i++) {
        if (done[i]) {
            continue;
        }
        const MsMeasurement *a = ms_measurement_set_get(set, i);
        g_autoptr(GArray) group = g_array_new(FALSE, FALSE, sizeof(guint));
        for (guint j = i; j < n; j++) {
            const MsMeasurement *b = ms_measurement_set_get(set, j);
            if (!done[j] && b->kind == a->kind && b->ranks == a->ranks &&
                b->ranks_per_node == a->ranks_per_node && g_strcmp0(b->label, a->label) == 0) {
                done[j] = 1;
                g_array_append_val(group, j);
            }
        }
        guint *g = (guint *)group->data;
        for (guint x = 1; x < group->len; x++) {
            for (guint y = x; y > 0 && ms_measurement_set_get(set, g[y - 1])->bytes >
                                           ms_measurement_set_get(set, g[y])->bytes;
                 y--) {
                guint t = g[y];
                g[y] = g[y - 1];
                g[y - 1] = t;
            }
        }
        for (guint x = 0; x < group->len; x++) {
            held[g[x]] = x % 2 == offset % 2;
        }
    }
}

gboolean
ms_holdout_configs(const MsMeasurementSet *set, const char *list, gboolean *held, GError **error)
{
    g_auto(GStrv) items = g_strsplit(list, ",", -1);
    guint n = ms_measurement_set_size(set);
    for (guint i = 0; i < n; i++) {
        held[i] = FALSE;
    }
    if (items[0] == NULL) {
        g_set_error(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_ARGUMENT,
                    "no held-out configuration given (e.g. 4x4,8x4)");
        return FALSE;
    }
    for (guint k = 0; items[k]; k++) {
        guint r = 0, p = 0, matched = 0;
        if (!ms_calibration_parse_config(items[k], &r, &p)) {
            g_set_error(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_ARGUMENT,
                        "held-out configuration '%s' is not RANKSxPER_NODE (e.g. 8x4)", items[k]);
            return FALSE;
        }
        for (guint i = 0; i < n; i++) {
            const MsMeasurement *m = ms_measurement_set_get(set, i);
            if (ms_measurement_kind_is_comm(m->kind) && m->ranks == r && m->ranks_per_node == p) {
                held[i] = TRUE;
                matched++;
            }
        }
        if (matched == 0) {
            g_set_error(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_ARGUMENT,
                        "held-out configuration '%s' matches no communication measurement",
                        items[k]);
            return FALSE;
        }
    }
    return TRUE;
}

static MsHoldoutGroup *
group_for(GArray *groups, const MsMeasurement *m)
{
    for (guint k = 0; k < groups->len; k++) {
        MsHoldoutGroup *g = &g_array_index(groups, MsHoldoutGroup, k);
        if (g->kind == m->kind && g->ranks == m->ranks && g->per_node == m->ranks_per_node) {
            return g;
        }
    }
    MsHoldoutGroup g = {m->kind, m->ranks, m->ranks_per_node, {0}};
    g_array_append_val(groups, g);
    return &g_array_index(groups, MsHoldoutGroup, groups->len - 1);
}

/* Predicted and measured times of held-out rows, over all of them and per group. */
typedef struct {
    GArray *groups; /* MsHoldoutGroup, borrowed; the groups from first on are these rows' */
    guint first;
    GArray *pred, *meas;  /* double */
    GPtrArray *per_group; /* GArray of (predicted, measured) pairs, per group from first */
} Pairs;

static Pairs
pairs_init(GArray *groups)
{
    return (Pairs){groups, groups->len, g_array_new(FALSE, FALSE, sizeof(double)),
                   g_array_new(FALSE, FALSE, sizeof(double)),
                   g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref)};
}

static void
pairs_clear(Pairs *p)
{
    g_array_unref(p->pred);
    g_array_unref(p->meas);
    g_ptr_array_unref(p->per_group);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Pairs, pairs_clear)

static void
pairs_add(Pairs *p, const MsMeasurement *m, double t)
{
    g_array_append_val(p->pred, t);
    g_array_append_val(p->meas, m->seconds);
    MsHoldoutGroup *g = group_for(p->groups, m);
    guint gi = g - &g_array_index(p->groups, MsHoldoutGroup, 0) - p->first;
    while (p->per_group->len <= gi) {
        g_ptr_array_add(p->per_group, g_array_new(FALSE, FALSE, sizeof(double)));
    }
    GArray *pm = p->per_group->pdata[gi];
    g_array_append_val(pm, t);
    g_array_append_val(pm, m->seconds);
}

/* Each group's statistics and *all; MS_FIT_ERROR_INPUT when no row was held out. */
static gboolean
pairs_finish(Pairs *p, MsErrorStats *all, GError **error)
{
    if (p->pred->len == 0) {
        g_set_error(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT,
                    "no communication measurement is held out");
        return FALSE;
    }
    for (guint k = 0; k < p->per_group->len; k++) {
        GArray *pm = p->per_group->pdata[k];
        guint m = pm->len / 2;
        g_autofree double *pr = g_new(double, m);
        g_autofree double *me = g_new(double, m);
        for (guint j = 0; j < m; j++) {
            pr[j] = g_array_index(pm, double, 2 * j);
            me[j] = g_array_index(pm, double, 2 * j + 1);
        }
        MsHoldoutGroup *g = &g_array_index(p->groups, MsHoldoutGroup, p->first + k);
        if (!ms_error_stats(pr, me, m, &g->stats, error)) {
            return FALSE;
        }
    }
    return ms_error_stats((double *)p->pred->data, (double *)p->meas->data, p->pred->len, all,
                          error);
}

static gboolean
holdout_gemm(const MsTopology *topo, const MsMeasurementSet *set, const MsCalibrateOptions *opts,
             GArray *groups, GError **error)
{
    g_autoptr(GArray) points = g_array_new(FALSE, FALSE, sizeof(MsGemmPoint));
    gboolean has = FALSE;
    for (guint i = 0; i < ms_measurement_set_size(set) && !has; i++) {
        has = ms_measurement_set_get(set, i)->kind == MS_MEASUREMENT_GEMM;
    }
    if (!has) {
        return TRUE;
    }
    if (!ms_measurement_set_expert_points(set, opts->expert_d_model, opts->expert_d_ffn,
                                          opts->expert_gated, points, error)) {
        return FALSE;
    }
    g_autofree gboolean *held = g_new(gboolean, points->len);
    ms_holdout_every(held, points->len, 2, 1);
    MsRoofline roof;
    ms_calibrate_roofline(topo, &roof);
    MsHoldoutGroup g = {MS_MEASUREMENT_GEMM, 1, 1, {0}};
    if (!ms_holdout_gemm((MsGemmPoint *)points->data, points->len, held, &roof, &g.stats, error)) {
        return FALSE;
    }
    g_array_append_val(groups, g);
    return TRUE;
}

gboolean
ms_calibrate_holdout(const char *topology, const MsMeasurementSet *set, const gboolean *held,
                     const MsCalibrateOptions *opts_in, GArray *groups, MsErrorStats *all,
                     GError **error)
{
    MsCalibrateOptions opts = opts_in ? *opts_in : ms_calibrate_default_options;
    guint n = ms_measurement_set_size(set);
    g_autofree gboolean *use = g_new(gboolean, MAX(n, 1));
    for (guint i = 0; i < n; i++) {
        use[i] = !held[i];
    }
    opts.use = use;
    g_autoptr(MsTopology) topo = ms_topology_load(topology, error);
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    if (topo == NULL || !ms_calibrate(topo, set, &opts, cal, NULL, error)) {
        return FALSE;
    }
    g_auto(Pairs) pairs = pairs_init(groups);
    for (guint i = 0; i < n; i++) {
        const MsMeasurement *m = ms_measurement_set_get(set, i);
        if (!held[i] || !ms_measurement_kind_is_comm(m->kind) || !ms_calibrate_row_default(m)) {
            continue;
        }
        double t;
        if (!ms_calibrate_predict(topo, cal, m, &t, error)) {
            return FALSE;
        }
        pairs_add(&pairs, m, t);
    }
    return pairs_finish(&pairs, all, error) && holdout_gemm(topo, set, &opts, groups, error);
}

gboolean
ms_nccl_fit_holdout(const MsTopology *topo, const MsMeasurementSet *set, const gboolean *held,
                    const MsNetSpec *base, MsNcclFit *fit, GArray *groups, MsErrorStats *all,
                    GError **error)
{
    g_autoptr(MsMeasurementSet) kept = ms_measurement_set_new();
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        if (!held[i] && !ms_measurement_set_add(kept, ms_measurement_set_get(set, i), error)) {
            return FALSE;
        }
    }
    if (!ms_nccl_fit(topo, kept, base, fit, error)) {
        return FALSE;
    }
    g_autoptr(MsNetModel) net = ms_net_model_new(&fit->spec, topo, error);
    if (net == NULL) {
        return FALSE;
    }
    g_auto(Pairs) pairs = pairs_init(groups);
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        const MsMeasurement *m = ms_measurement_set_get(set, i);
        double t;
        if (!held[i] || !ms_nccl_fit_uses(m)) {
            continue;
        }
        if (!ms_calibrate_predict_net(topo, NULL, net, m, &t, error)) {
            return FALSE;
        }
        pairs_add(&pairs, m, t);
    }
    return pairs_finish(&pairs, all, error);
}
