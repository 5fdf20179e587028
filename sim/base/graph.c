/* graph: successor lists in compressed-row form (one offset per node, one array of successors:
 * 4 bytes per node and per edge), Kahn's algorithm over them, and the walk that names a cycle. */
#include "graph.h"

struct _MsGraph {
    guint n;
    MsGraphDepsFn deps;
    gconstpointer data;
    guint32 *off;  /* n + 1: successors of node i are succ[off[i]] .. succ[off[i + 1] - 1] */
    guint32 *succ; /* off[n] */
};

MsGraph *
ms_graph_new(guint n_nodes, MsGraphDepsFn deps, gconstpointer data)
{
    g_return_val_if_fail(deps != NULL, NULL);
    g_autofree guint32 *off = g_new0(guint32, (gsize)n_nodes + 1);
    for (guint32 i = 0; i < n_nodes; i++) {
        guint k = 0;
        const guint32 *d = deps(data, i, &k);
        for (guint e = 0; e < k; e++) {
            g_return_val_if_fail(d[e] < n_nodes, NULL);
            off[d[e] + 1]++;
        }
    }
    for (guint i = 0; i < n_nodes; i++) {
        off[i + 1] += off[i];
    }
    MsGraph *g = g_new0(MsGraph, 1);
    g->n = n_nodes;
    g->deps = deps;
    g->data = data;
    g->succ = g_new(guint32, MAX(off[n_nodes], 1));
    /* Filling node by node in id order leaves every successor list sorted. */
    g_autofree guint32 *fill = g_memdup2(off, ((gsize)n_nodes + 1) * sizeof(guint32));
    for (guint32 i = 0; i < n_nodes; i++) {
        guint k = 0;
        const guint32 *d = deps(data, i, &k);
        for (guint e = 0; e < k; e++) {
            g->succ[fill[d[e]]++] = i;
        }
    }
    g->off = g_steal_pointer(&off);
    return g;
}

void
ms_graph_free(MsGraph *g)
{
    if (g == NULL) {
        return;
    }
    g_free(g->off);
    g_free(g->succ);
    g_free(g);
}

guint
ms_graph_n_nodes(const MsGraph *g)
{
    return g->n;
}

guint
ms_graph_n_edges(const MsGraph *g)
{
    return g->off[g->n];
}

const guint32 *
ms_graph_successors(const MsGraph *g, guint32 node, guint *n)
{
    g_return_val_if_fail(node < g->n, NULL);
    *n = g->off[node + 1] - g->off[node];
    return g->succ + g->off[node];
}

/* The first dependency of node that Kahn's algorithm left unplaced (every unplaced node has one:
 * it is unplaced because one of its dependencies is). */
static guint32
unplaced_dep(const MsGraph *g, const guint *left, guint32 node)
{
    guint k = 0;
    const guint32 *d = g->deps(g->data, node, &k);
    for (guint e = 0; e < k; e++) {
        if (left[d[e]]) {
            return d[e];
        }
    }
    g_assert_not_reached();
}

/* Walking "waits for" links from an unplaced node must come back to a node already seen: that
 * node is on a cycle, and walking on from it goes round that cycle. */
static GArray *
find_cycle(const MsGraph *g, const guint *left)
{
    guint32 i = 0;
    while (left[i] == 0) {
        i++;
    }
    g_autofree guint8 *seen = g_new0(guint8, g->n);
    while (!seen[i]) {
        seen[i] = 1;
        i = unplaced_dep(g, left, i);
    }
    GArray *cycle = g_array_new(FALSE, FALSE, sizeof(guint32));
    guint32 j = i;
    do {
        g_array_append_val(cycle, j);
        j = unplaced_dep(g, left, j);
    } while (j != i);
    return cycle;
}

gboolean
ms_graph_sort(const MsGraph *g, guint32 *order, GArray **cycle)
{
    guint n = g->n;
    /* left[i]: dependencies of node i not yet placed (counted with repeats, as successors are). */
    g_autofree guint *left = g_new0(guint, MAX(n, 1));
    for (guint i = 0; i < n; i++) {
        for (guint e = g->off[i]; e < g->off[i + 1]; e++) {
            left[g->succ[e]]++;
        }
    }
    g_autofree guint32 *queue = order ? NULL : g_new(guint32, MAX(n, 1));
    guint32 *q = order ? order : queue;
    guint head = 0, tail = 0;
    for (guint32 i = 0; i < n; i++) {
        if (left[i] == 0) {
            q[tail++] = i;
        }
    }
    while (head < tail) {
        guint32 i = q[head++];
        for (guint e = g->off[i]; e < g->off[i + 1]; e++) {
            if (--left[g->succ[e]] == 0) {
                q[tail++] = g->succ[e];
            }
        }
    }
    if (tail == n) {
        return TRUE;
    }
    if (cycle) {
        *cycle = find_cycle(g, left);
    }
    return FALSE;
}
