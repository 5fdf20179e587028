/* trace_stats: sums of per-iteration figures, and the path consistency computed by bucketing each
 * token's next-layer choices under every expert it chose (a counting sort, linear in tokens). */
#include "trace_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    guint64 iterations; /* iterations with a non-zero load at this layer */
    double hot, hot_max, max_mean, max_min, gini, entropy;
    double path_num, path2_num, path_den, base_num;
    guint64 node_tokens, node_sum; /* tokens counted, and the nodes they reach */
    guint32 node_max;
} LayerSums;

struct _MsTraceStats {
    MsTraceHeader header;
    guint64 iterations, tokens, path_iterations;
    guint64 group_tokens[MS_TRACE_MAX_GROUPS]; /* tokens routed by each layer group */
    LayerSums *layers;
    guint64 *loads;      /* scratch: [experts] */
    guint32 nodes;       /* expert layout over nodes, 0: none */
    guint64 *nodes_hist; /* [nodes + 1] */
};

static int
compare_u64(const void *a, const void *b)
{
    guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
    return x < y ? -1 : x > y;
}

double
ms_trace_gini(const guint64 *loads, guint n)
{
    if (n == 0) {
        return 0;
    }
    g_autofree guint64 *sorted = g_memdup2(loads, (gsize)n * sizeof(guint64));
    qsort(sorted, n, sizeof(guint64), compare_u64);
    double total = 0, weighted = 0;
    for (guint i = 0; i < n; i++) {
        total += (double)sorted[i];
        weighted += (double)(i + 1) * (double)sorted[i];
    }
    if (total == 0) {
        return 0;
    }
    /* G = sum_i sum_j |x_i - x_j| / (2 n^2 mean), in its sorted closed form. */
    return 2 * weighted / (n * total) - (double)(n + 1) / n;
}

double
ms_trace_entropy_bits(const guint64 *loads, guint n)
{
    double total = 0, h = 0;
    for (guint i = 0; i < n; i++) {
        total += (double)loads[i];
    }
    for (guint i = 0; i < n && total > 0; i++) {
        if (loads[i]) {
            double s = (double)loads[i] / total;
            h -= s * log2(s);
        }
    }
    return h;
}

MsTraceStats *
ms_trace_stats_new(const MsTraceHeader *header)
{
    MsTraceStats *s = g_new0(MsTraceStats, 1);
    s->header = *header;
    s->layers = g_new0(LayerSums, header->layers);
    s->loads = g_new(guint64, header->experts);
    if (header->max_nodes) {
        s->nodes = header->expert_nodes;
        s->nodes_hist = g_new0(guint64, s->nodes + 1);
    }
    return s;
}

gboolean
ms_trace_stats_set_expert_nodes(MsTraceStats *s, guint32 nodes, GError **error)
{
    g_return_val_if_fail(s->iterations == 0, FALSE);
    if (nodes == 0 || s->header.experts % nodes != 0) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT,
                    "expert nodes = %u does not divide experts = %u into equal blocks", nodes,
                    s->header.experts);
        return FALSE;
    }
    s->nodes = nodes;
    g_free(s->nodes_hist);
    s->nodes_hist = g_new0(guint64, nodes + 1);
    return TRUE;
}

guint32
ms_trace_stats_expert_nodes(const MsTraceStats *s)
{
    return s->nodes;
}

const guint64 *
ms_trace_stats_nodes_histogram(const MsTraceStats *s, guint *n)
{
    *n = s->nodes ? s->nodes + 1 : 0;
    return s->nodes_hist;
}

void
ms_trace_stats_free(MsTraceStats *s)
{
    if (s == NULL) {
        return;
    }
    g_free(s->layers);
    g_free(s->loads);
    g_free(s->nodes_hist);
    g_free(s);
}

static void
add_loads(MsTraceStats *s, const MsRouting *r, guint32 layer)
{
    guint n = s->header.experts;
    guint64 total = 0, max = 0, min = G_MAXUINT64;
    for (guint32 e = 0; e < n; e++) {
        s->loads[e] = ms_routing_expert_load(r, layer, e);
        total += s->loads[e];
        max = MAX(max, s->loads[e]);
        min = MIN(min, s->loads[e]);
    }
    if (total == 0) {
        return;
    }
    LayerSums *sum = &s->layers[layer];
    double hot = (double)max / (double)total;
    sum->iterations++;
    sum->hot += hot;
    sum->hot_max = MAX(sum->hot_max, hot);
    sum->max_mean = sum->max_mean + (double)max * n / (double)total;
    sum->max_min += min > 0 ? (double)max / (double)min : INFINITY;
    sum->gini += ms_trace_gini(s->loads, n);
    sum->entropy += ms_trace_entropy_bits(s->loads, n);
}

/* Inserts v into top (k values, descending). */
static void
keep_top(guint64 *top, guint k, guint64 v)
{
    if (v <= top[k - 1]) {
        return;
    }
    guint i = k - 1;
    while (i > 0 && top[i - 1] < v) {
        top[i] = top[i - 1];
        i--;
    }
    top[i] = v;
}

typedef struct {
    guint64 *group;          /* [experts] tokens that chose e at layer l */
    guint64 *offset;         /* [experts + 1] */
    const guint16 **entries; /* the next-layer choices of each token, bucketed by expert at l:
                              * tokens x top_k pointers, so scratch stays below the iteration's
                              * own size whatever top_k */
    guint32 *next;           /* [experts] counts within one bucket */
    guint16 *touched;
} PathScratch;

static void
bucket_choices(const MsTraceStats *s, const MsRouting *r, guint32 layer, PathScratch *p)
{
    guint n = s->header.experts, k = s->header.top_k;
    memset(p->group, 0, n * sizeof(guint64));
    for (guint32 rank = 0; rank < s->header.ranks; rank++) {
        for (guint32 t = 0; t < ms_routing_n_tokens(r, rank); t++) {
            const guint16 *ids = ms_routing_token_experts(r, rank, t, layer);
            for (guint i = 0; i < k; i++) {
                p->group[ids[i]]++;
            }
        }
    }
    p->offset[0] = 0;
    for (guint e = 0; e < n; e++) {
        p->offset[e + 1] = p->offset[e] + p->group[e];
    }
    g_autofree guint64 *fill = g_memdup2(p->offset, n * sizeof(guint64));
    for (guint32 rank = 0; rank < s->header.ranks; rank++) {
        for (guint32 t = 0; t < ms_routing_n_tokens(r, rank); t++) {
            const guint16 *ids = ms_routing_token_experts(r, rank, t, layer);
            const guint16 *nxt = ms_routing_token_experts(r, rank, t, layer + 1);
            for (guint i = 0; i < k; i++) {
                p->entries[fill[ids[i]]++] = nxt;
            }
        }
    }
}

/* Sum over groups of the choices landing on the group's own top_k next-layer experts, and on its
 * 2 x top_k (into *twice). */
static guint64
group_top_sum(const MsTraceStats *s, PathScratch *p, guint64 *twice)
{
    guint n = s->header.experts, k = s->header.top_k, k2 = MIN(2 * k, n);
    guint64 total = 0, top[2 * MS_TRACE_MAX_TOP_K];
    *twice = 0;
    for (guint e = 0; e < n; e++) {
        guint n_touched = 0;
        for (guint64 i = p->offset[e]; i < p->offset[e + 1]; i++) {
            for (guint j = 0; j < k; j++) {
                guint16 x = p->entries[i][j];
                if (p->next[x]++ == 0) {
                    p->touched[n_touched++] = x;
                }
            }
        }
        memset(top, 0, k2 * sizeof(guint64));
        for (guint i = 0; i < n_touched; i++) {
            keep_top(top, k2, p->next[p->touched[i]]);
            p->next[p->touched[i]] = 0;
        }
        for (guint i = 0; i < k2; i++) {
            total += i < k ? top[i] : 0;
            *twice += top[i];
        }
    }
    return total;
}

/* Share of layer's assignments on its top_k experts: the independent-choice baseline. */
static double
top_k_share(const MsTraceStats *s, const MsRouting *r, guint32 layer)
{
    guint k = s->header.top_k;
    guint64 top[MS_TRACE_MAX_TOP_K] = {0}, total = 0;
    for (guint32 e = 0; e < s->header.experts; e++) {
        guint64 load = ms_routing_expert_load(r, layer, e);
        total += load;
        keep_top(top, k, load);
    }
    guint64 sum = 0;
    for (guint i = 0; i < k; i++) {
        sum += top[i];
    }
    return total ? (double)sum / (double)total : 0;
}

static void
add_paths(MsTraceStats *s, const MsRouting *r)
{
    guint n = s->header.experts, k = s->header.top_k;
    guint64 tokens = ms_routing_total_tokens(r);
    if (tokens == 0 || s->header.layers < 2) {
        return;
    }
    PathScratch p = {
        .group = g_new(guint64, n),
        .offset = g_new(guint64, n + 1),
        .entries = g_new(const guint16 *, tokens *k),
        .next = g_new0(guint32, n),
        .touched = g_new(guint16, n),
    };
    for (guint32 layer = 0; layer + 1 < s->header.layers; layer++) {
        bucket_choices(s, r, layer, &p);
        double den = (double)tokens * k * k;
        LayerSums *sum = &s->layers[layer];
        guint64 twice = 0;
        sum->path_num += (double)group_top_sum(s, &p, &twice);
        sum->path2_num += (double)twice;
        sum->path_den += den;
        sum->base_num += top_k_share(s, r, layer + 1) * den;
    }
    g_free(p.group);
    g_free(p.offset);
    g_free((gpointer)p.entries);
    g_free(p.next);
    g_free(p.touched);
}

/* Nodes each token's experts reach at each layer, under the layout. */
static void
add_nodes(MsTraceStats *s, const MsRouting *r)
{
    guint k = s->header.top_k;
    guint32 ids[MS_TRACE_MAX_TOP_K];
    for (guint32 layer = 0; layer < s->header.layers; layer++) {
        LayerSums *sum = &s->layers[layer];
        for (guint32 rank = 0; rank < s->header.ranks; rank++) {
            for (guint32 t = 0; t < ms_routing_n_tokens(r, rank); t++) {
                const guint16 *e = ms_routing_token_experts(r, rank, t, layer);
                for (guint i = 0; i < k; i++) {
                    ids[i] = e[i];
                }
                guint reached = ms_trace_nodes_reached(s->header.experts, s->nodes, ids, k);
                sum->node_tokens++;
                sum->node_sum += reached;
                sum->node_max = MAX(sum->node_max, reached);
                s->nodes_hist[reached]++;
            }
        }
    }
}

void
ms_trace_stats_add(MsTraceStats *s, const MsRouting *r)
{
    const MsTraceHeader *h = ms_routing_header(r);
    g_return_if_fail(h->experts == s->header.experts && h->layers == s->header.layers &&
                     h->ranks == s->header.ranks && h->top_k == s->header.top_k);
    s->iterations++;
    s->tokens += ms_routing_total_tokens(r);
    for (guint32 g = 0; g < ms_trace_header_n_groups(&s->header); g++) {
        for (guint32 rank = 0; rank < s->header.ranks; rank++) {
            s->group_tokens[g] += ms_routing_layer_tokens(r, s->header.group_first[g], rank);
        }
    }
    for (guint32 layer = 0; layer < s->header.layers; layer++) {
        add_loads(s, r, layer);
    }
    if (ms_routing_has_paths(r)) {
        s->path_iterations++;
        add_paths(s, r);
        if (s->nodes) {
            add_nodes(s, r);
        }
    }
}

guint64
ms_trace_stats_iterations(const MsTraceStats *s)
{
    return s->iterations;
}

guint64
ms_trace_stats_tokens(const MsTraceStats *s)
{
    return s->tokens;
}

guint64
ms_trace_stats_group_tokens(const MsTraceStats *s, guint32 group)
{
    g_return_val_if_fail(group < ms_trace_header_n_groups(&s->header), 0);
    return s->group_tokens[group];
}

guint64
ms_trace_stats_path_iterations(const MsTraceStats *s)
{
    return s->path_iterations;
}

void
ms_trace_stats_layer(const MsTraceStats *s, guint32 layer, MsTraceLayerStats *out)
{
    g_return_if_fail(layer < s->header.layers);
    const LayerSums *sum = &s->layers[layer];
    memset(out, 0, sizeof(*out));
    double it = sum->iterations ? (double)sum->iterations : 1;
    out->hot_share = sum->hot / it;
    out->hot_share_max = sum->hot_max;
    out->max_mean = sum->max_mean / it;
    out->max_min = sum->max_min / it;
    out->gini = sum->gini / it;
    out->entropy_bits = sum->entropy / it;
    double log_n = log2((double)s->header.experts);
    out->entropy_norm = log_n > 0 ? out->entropy_bits / log_n : 1;
    out->has_paths = sum->path_den > 0;
    if (out->has_paths) {
        out->path_consistency = sum->path_num / sum->path_den;
        out->path_top2 = sum->path2_num / sum->path_den;
        out->path_baseline = sum->base_num / sum->path_den;
    }
    out->has_nodes = sum->node_tokens > 0;
    if (out->has_nodes) {
        out->nodes_mean = (double)sum->node_sum / (double)sum->node_tokens;
        out->nodes_max = sum->node_max;
    }
}

void
ms_trace_stats_summary(const MsTraceStats *s, MsTraceLayerStats *out)
{
    memset(out, 0, sizeof(*out));
    double num = 0, num2 = 0, den = 0, base = 0;
    guint64 node_tokens = 0, node_sum = 0;
    guint32 layers = s->header.layers;
    for (guint32 l = 0; l < layers; l++) {
        MsTraceLayerStats one;
        ms_trace_stats_layer(s, l, &one);
        out->hot_share += one.hot_share / layers;
        out->hot_share_max = MAX(out->hot_share_max, one.hot_share_max);
        out->max_mean += one.max_mean / layers;
        out->max_min += one.max_min / layers;
        out->gini += one.gini / layers;
        out->entropy_bits += one.entropy_bits / layers;
        out->entropy_norm += one.entropy_norm / layers;
        num += s->layers[l].path_num;
        num2 += s->layers[l].path2_num;
        den += s->layers[l].path_den;
        base += s->layers[l].base_num;
        node_tokens += s->layers[l].node_tokens;
        node_sum += s->layers[l].node_sum;
        out->nodes_max = MAX(out->nodes_max, s->layers[l].node_max);
    }
    out->has_paths = den > 0;
    if (out->has_paths) {
        out->path_consistency = num / den;
        out->path_top2 = num2 / den;
        out->path_baseline = base / den;
    }
    out->has_nodes = node_tokens > 0;
    out->nodes_mean = node_tokens ? (double)node_sum / (double)node_tokens : 0;
}
