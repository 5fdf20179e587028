/* calibration_apply: what the simulator does with a calibration: link classes given the figures
 * that make their representative routes take the fitted time, and collectives given their
 * per-call overhead and their transfers stretched by the size efficiency (calibration.h). */
#include "calibration.h"

#include <math.h>

/* The link that limits a route's bandwidth (the first of the narrowest). */
static guint
bottleneck(const MsTopology *topo, const guint32 *route, guint n)
{
    guint best = route[0];
    for (guint i = 1; i < n; i++) {
        if (ms_topology_link(topo, route[i])->bandwidth < ms_topology_link(topo, best)->bandwidth) {
            best = route[i];
        }
    }
    return best;
}

gboolean
ms_calibration_scope_pair(const MsTopology *topo, gboolean inter, guint *a, guint *b)
{
    guint gpn = ms_topology_gpus_per_node(topo);
    *a = 0;
    if (inter) {
        *b = gpn;
        return gpn > 0 && ms_topology_n_nodes(topo) > 1;
    }
    *b = 1;
    return gpn > 1 || (gpn == 0 && ms_topology_n_gpus(topo) > 1 &&
                       ms_topology_gpu_node(topo, 1) == ms_topology_gpu_node(topo, 0));
}

const guint32 *
ms_calibration_scope_route(const MsTopology *topo, gboolean inter, guint *n, guint *neck)
{
    guint a, b;
    *n = 0;
    if (!ms_calibration_scope_pair(topo, inter, &a, &b)) {
        return NULL;
    }
    const guint32 *route = ms_topology_gpu_route(topo, a, b, n, NULL);
    if (route == NULL || *n == 0) {
        return NULL;
    }
    *neck = bottleneck(topo, route, *n);
    return route;
}

gboolean
ms_calibration_apply_topology(const MsCalibration *cal, MsTopology *topo, GError **error)
{
    for (guint scope = 0; scope < 2; scope++) {
        guint n = 0, neck = 0;
        const guint32 *route = ms_calibration_scope_route(topo, scope == 1, &n, &neck);
        if (route == NULL) {
            continue;
        }
        const MsLink *nl = ms_topology_link(topo, neck);
        MsCalibrationLink fit;
        if (!isfinite(nl->bandwidth) || !ms_calibration_link(cal, nl->klass, &fit)) {
            continue;
        }
        MsTime other = 0;
        guint same = 0;
        for (guint i = 0; i < n; i++) {
            const MsLink *l = ms_topology_link(topo, route[i]);
            if (l->klass == nl->klass) {
                same++;
            } else {
                other += l->latency;
            }
        }
        MsTime per_link = fit.latency > other ? (fit.latency - other) / same : 0;
        ms_topology_set_class(topo, nl->klass, fit.bandwidth / ms_topology_link_count(topo, neck),
                              per_link);
    }
    (void)error;
    return TRUE;
}

static guint
spec_ranks_per_node(const MsTopology *topo, const MsCollSpec *spec)
{
    g_autoptr(GHashTable) count = g_hash_table_new(g_direct_hash, g_direct_equal);
    guint most = 0;
    for (guint p = 0; p < spec->n_ranks; p++) {
        guint rank = spec->ranks ? spec->ranks[p] : p;
        gpointer node = GUINT_TO_POINTER(ms_topology_gpu_node(topo, rank) + 1);
        guint k = GPOINTER_TO_UINT(g_hash_table_lookup(count, node)) + 1;
        g_hash_table_insert(count, node, GUINT_TO_POINTER(k));
        most = MAX(most, k);
    }
    return most;
}

void
ms_calibration_apply_model(const MsCalibration *cal, MsModel *model)
{
    MsFramework f;
    if (ms_calibration_framework(cal, &f, NULL)) {
        ms_model_set_framework(model, &f);
    }
}

guint64
ms_calibration_stretch(guint64 bytes, double eff)
{
    return ms_u64_saturate((double)bytes / eff);
}

guint64 *
ms_calibration_adjust_collective(const MsCalibration *cal, const MsTopology *topo, MsCollSpec *spec)
{
    MsMeasurementKind kind = spec->op == MS_COLL_ALLTOALL        ? MS_MEASUREMENT_ALLTOALL
                             : spec->op == MS_COLL_ALLGATHER     ? MS_MEASUREMENT_ALLGATHER
                             : spec->op == MS_COLL_REDUCESCATTER ? MS_MEASUREMENT_REDUCESCATTER
                                                                 : MS_MEASUREMENT_ALLREDUCE;
    MsTime alpha = 0;
    const MsEffTable *table = NULL;
    if (!ms_calibration_collective_lookup(cal, kind, spec->n_ranks, spec_ranks_per_node(topo, spec),
                                          &alpha, &table)) {
        return NULL;
    }
    spec->alpha = alpha;
    spec->no_hop_latency = TRUE;
    gsize cells = (gsize)spec->n_ranks * spec->n_ranks;
    /* The mean bytes a rank sends, summed in floating point: the whole matrix of a large
     * all-to-all can hold more than 2^64 bytes between all its ranks. */
    double size = (double)spec->bytes;
    if (spec->matrix) {
        double total = 0;
        for (gsize k = 0; k < cells; k++) {
            total += (double)spec->matrix[k];
        }
        size = floor(total / spec->n_ranks);
    }
    double eff = table ? ms_eff_table_eval(table, size) : 1.0;
    if (!(eff > 0) || eff == 1.0) {
        return NULL;
    }
    spec->bytes = ms_calibration_stretch(spec->bytes, eff);
    if (spec->matrix == NULL) {
        return NULL;
    }
    guint64 *scaled = g_new(guint64, cells);
    for (gsize k = 0; k < cells; k++) {
        scaled[k] = ms_calibration_stretch(spec->matrix[k], eff);
    }
    spec->matrix = scaled;
    return scaled;
}
