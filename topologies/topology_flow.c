/* topology_flow: injection and bisection bandwidth (bytes/s, one direction) by max-flow over the
 * link graph (Dinic's algorithm, capacities = link bandwidths, INFINITY for unlimited links).
 * Static capacities only: this says what the wiring allows, not what a traffic pattern gets. */
#include "topology_private.h"

#include <string.h>

typedef struct {
    guint to;
    guint next; /* next arc leaving the same vertex */
    double cap; /* residual capacity; arcs 2i and 2i+1 are each other's reverse */
} Arc;

typedef struct {
    guint n;
    guint *first; /* per vertex, TOPO_NONE when it has no arc */
    GArray *arcs;
} Flow;

static Flow *
flow_new(guint n)
{
    Flow *f = g_new0(Flow, 1);
    f->n = n;
    f->first = g_new(guint, n);
    memset(f->first, 0xff, sizeof(guint) * n);
    f->arcs = g_array_new(FALSE, FALSE, sizeof(Arc));
    return f;
}

static void
flow_free(Flow *f)
{
    g_free(f->first);
    g_array_unref(f->arcs);
    g_free(f);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Flow, flow_free)

static void
flow_add(Flow *f, guint u, guint v, double cap)
{
    Arc fwd = {v, f->first[u], cap}, rev = {u, f->first[v], 0};
    f->first[u] = f->arcs->len;
    g_array_append_val(f->arcs, fwd);
    f->first[v] = f->arcs->len;
    g_array_append_val(f->arcs, rev);
}

#define ARC(f, i) (&g_array_index((f)->arcs, Arc, (i)))

/* Levels from s over arcs with residual capacity; FALSE when t is not reached. */
static gboolean
levels(Flow *f, guint s, guint t, gint *level, guint *queue)
{
    memset(level, 0xff, sizeof(gint) * f->n);
    level[s] = 0;
    queue[0] = s;
    guint qlen = 1;
    for (guint qi = 0; qi < qlen; qi++) {
        guint u = queue[qi];
        for (guint a = f->first[u]; a != TOPO_NONE; a = ARC(f, a)->next) {
            if (ARC(f, a)->cap > 0 && level[ARC(f, a)->to] < 0) {
                level[ARC(f, a)->to] = level[u] + 1;
                queue[qlen++] = ARC(f, a)->to;
            }
        }
    }
    return level[t] >= 0;
}

/* Pushes the bottleneck of the arc path; returns it (INFINITY ends the whole computation). */
static double
augment(Flow *f, const guint *path, guint len)
{
    double push = INFINITY;
    for (guint i = 0; i < len; i++) {
        push = MIN(push, ARC(f, path[i])->cap);
    }
    if (isinf(push)) {
        return push;
    }
    for (guint i = 0; i < len; i++) {
        ARC(f, path[i])->cap -= push;
        ARC(f, path[i] ^ 1)->cap += push;
    }
    return push;
}

/* One blocking flow in the level graph, by an iterative depth-first walk (no recursion: an
 * explicit topology may be a long chain). */
static double
blocking_flow(Flow *f, guint s, guint t, gint *level, guint *iter, guint *path)
{
    double total = 0;
    guint len = 0, v = s;
    for (guint u = 0; u < f->n; u++) {
        iter[u] = f->first[u];
    }
    for (;;) {
        if (v == t) {
            double push = augment(f, path, len);
            if (isinf(push)) {
                return push;
            }
            total += push;
            len = 0;
            v = s;
            continue;
        }
        while (iter[v] != TOPO_NONE &&
               !(ARC(f, iter[v])->cap > 0 && level[ARC(f, iter[v])->to] == level[v] + 1)) {
            iter[v] = ARC(f, iter[v])->next;
        }
        if (iter[v] != TOPO_NONE) {
            path[len++] = iter[v];
            v = ARC(f, iter[v])->to;
            continue;
        }
        if (v == s) {
            return total;
        }
        level[v] = -1;
        v = ARC(f, path[--len] ^ 1)->to;
        iter[v] = ARC(f, iter[v])->next;
    }
}

static double
flow_max(Flow *f, guint s, guint t)
{
    g_autofree gint *level = g_new(gint, f->n);
    g_autofree guint *queue = g_new(guint, f->n);
    g_autofree guint *iter = g_new(guint, f->n);
    g_autofree guint *path = g_new(guint, f->n);
    double total = 0;
    while (levels(f, s, t, level, queue)) {
        double push = blocking_flow(f, s, t, level, iter, path);
        if (isinf(push)) {
            return INFINITY;
        }
        total += push;
    }
    return total;
}

/* Position of device d among the devices of node (sorted by device index). */
static guint
node_local(const MsTopology *topo, guint node, guint d)
{
    const guint32 *lo = topo->node_devices + topo->node_start[node];
    guint a = 0, b = topo->node_start[node + 1] - topo->node_start[node];
    while (a < b) {
        guint mid = (a + b) / 2;
        if (lo[mid] < d) {
            a = mid + 1;
        } else {
            b = mid;
        }
    }
    return a;
}

/* Max-flow from GPU `rank` (or from all GPUs of the node when rank < 0) to everything outside
 * the node, over the node's own devices. Other GPUs are left out: they do not forward. */
static double
node_out_flow(const MsTopology *topo, guint node, gint rank)
{
    guint first = topo->node_start[node], cnt = topo->node_start[node + 1] - first;
    guint S = cnt, T = cnt + 1;
    g_autoptr(Flow) f = flow_new(cnt + 2);
    for (guint i = 0; i < cnt; i++) {
        guint u = topo->node_devices[first + i];
        gboolean is_gpu = topo_dev(topo, u)->kind == MS_DEVICE_GPU;
        gboolean source = is_gpu && (rank < 0 || topo_dev(topo, u)->rank == rank);
        if (is_gpu && !source) {
            continue;
        }
        if (source) {
            flow_add(f, S, i, INFINITY);
        }
        for (guint k = topo->out_start[u]; k < topo->out_start[u + 1]; k++) {
            const MsLink *l = topo_link(topo, topo->out_links[k]);
            if (topo_dev(topo, l->to)->node != (gint)node) {
                flow_add(f, i, T, l->bandwidth);
            } else if (topo_dev(topo, l->to)->kind != MS_DEVICE_GPU || rank < 0) {
                flow_add(f, i, node_local(topo, node, l->to), l->bandwidth);
            }
        }
    }
    return flow_max(f, S, T);
}

MsBandwidth
ms_topology_injection_bandwidth(const MsTopology *topo, guint rank)
{
    g_return_val_if_fail(rank < topo->n_gpus, 0);
    guint gpu = topo->gpu_devices[rank];
    if (topo->n_nodes == 1) {
        /* One node: what the GPU can put into the node's interconnect (its NICs lead nowhere
         * another GPU needs). */
        MsBandwidth sum = 0;
        for (guint k = topo->out_start[gpu]; k < topo->out_start[gpu + 1]; k++) {
            const MsLink *l = topo_link(topo, topo->out_links[k]);
            if (topo_dev(topo, l->to)->kind != MS_DEVICE_NIC) {
                sum += l->bandwidth;
            }
        }
        return sum;
    }
    guint node = topo_dev(topo, gpu)->node;
    guint n_node_gpus = 0;
    for (guint i = topo->node_start[node]; i < topo->node_start[node + 1]; i++) {
        n_node_gpus += topo_dev(topo, topo->node_devices[i])->kind == MS_DEVICE_GPU;
    }
    double own = node_out_flow(topo, node, rank);
    double share = node_out_flow(topo, node, -1) / n_node_gpus;
    return MIN(own, share);
}

MsBandwidth
ms_topology_bisection_bandwidth(const MsTopology *topo)
{
    guint n = topo->devices->len, half = topo->n_gpus / 2;
    if (half == 0) {
        return 0;
    }
    guint S = n, T = n + 1;
    g_autoptr(Flow) f = flow_new(n + 2);
    for (guint i = 0; i < topo->links->len; i++) {
        const MsLink *l = topo_link(topo, i);
        flow_add(f, l->from, l->to, l->bandwidth);
    }
    for (guint r = 0; r < topo->n_gpus; r++) {
        if (r < half) {
            flow_add(f, S, topo->gpu_devices[r], INFINITY);
        } else {
            flow_add(f, topo->gpu_devices[r], T, INFINITY);
        }
    }
    return flow_max(f, S, T);
}
