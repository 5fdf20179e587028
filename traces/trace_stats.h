/* trace_stats: what a trace says about expert load and token paths, accumulated one iteration at
 * a time: per MoE layer the hottest expert's share, max/mean load, Gini coefficient and entropy of
 * the expert loads, the cross-layer path consistency Lina's inference scheduler relies on, and,
 * given an expert layout over nodes, how many nodes each token's experts reach. Loads are
 * token-expert assignments summed over source ranks; placement is otherwise ignored. */
#pragma once

#include <glib.h>

#include "trace.h"
#include "trace_routing.h"

G_BEGIN_DECLS

/* Gini coefficient of n loads: 0 when all are equal, (n-1)/n when one holds everything; 0 for
 * n == 0 or all-zero loads. */
double ms_trace_gini(const guint64 *loads, guint n);
/* Shannon entropy in bits of the load shares: log2(n) when uniform, 0 when one holds everything
 * (and for all-zero loads). */
double ms_trace_entropy_bits(const guint64 *loads, guint n);

/* Per-layer figures, each averaged over the iterations that route tokens (shares and ratios are
 * computed per iteration, then averaged). Path figures describe the step from this layer to the
 * next: for every expert e, the tokens that chose e here form a group; consistency is the share
 * of the group's next-layer choices that fall on the group's own top_k most chosen next-layer
 * experts, averaged over groups weighted by their tokens (and over iterations likewise).
 * baseline is what independent choices would give: the share of the next layer's choices that
 * go to its top_k experts overall. */
typedef struct {
    double hot_share;     /* hottest expert's share of the layer's assignments */
    double hot_share_max; /* the largest of that over iterations */
    double max_mean;      /* max load / mean load */
    double max_min;       /* max load / min load (INFINITY when an expert got nothing) */
    double gini;
    double entropy_bits;
    double entropy_norm; /* entropy / log2(experts); 1 for a single expert */
    gboolean has_paths;  /* path figures below are set (paths exist and a next layer exists) */
    double path_consistency;
    double path_top2; /* the same on the group's 2 x top_k most chosen next experts */
    double path_baseline;
    gboolean has_nodes; /* node figures are set (an expert layout and token paths) */
    double nodes_mean;  /* distinct nodes a token's top_k experts sit on, mean over tokens */
    guint32 nodes_max;  /* and the most */
} MsTraceLayerStats;

typedef struct _MsTraceStats MsTraceStats;

/* Counts nodes reached with the header's expert_nodes layout when it declares a node limit. */
MsTraceStats *ms_trace_stats_new(const MsTraceHeader *header);
/* Counts nodes reached with experts on `nodes` nodes in contiguous blocks instead (before any
 * iteration is added). FALSE with MS_TRACE_ERROR_LIMIT when nodes is 0 or does not divide the
 * experts. */
gboolean ms_trace_stats_set_expert_nodes(MsTraceStats *stats, guint32 nodes, GError **error);
/* The layout in use, 0 for none. */
guint32 ms_trace_stats_expert_nodes(const MsTraceStats *stats);
/* Token-layers whose experts reach exactly i nodes, i = 0 .. expert_nodes (*n = expert_nodes +
 * 1); NULL without a layout. Owned by stats. */
const guint64 *ms_trace_stats_nodes_histogram(const MsTraceStats *stats, guint *n);
void ms_trace_stats_free(MsTraceStats *stats);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsTraceStats, ms_trace_stats_free)

/* Accounts one iteration, which must have the shape of the header given to _new. */
void ms_trace_stats_add(MsTraceStats *stats, const MsRouting *routing);

guint64 ms_trace_stats_iterations(const MsTraceStats *stats);
guint64 ms_trace_stats_tokens(const MsTraceStats *stats);
/* Tokens routed by layer group `group` (< the header's groups; the first group's is _tokens). */
guint64 ms_trace_stats_group_tokens(const MsTraceStats *stats, guint32 group);
/* Iterations that carried token paths. */
guint64 ms_trace_stats_path_iterations(const MsTraceStats *stats);

void ms_trace_stats_layer(const MsTraceStats *stats, guint32 layer, MsTraceLayerStats *out);
/* The layers' figures averaged over layers; path figures pooled over all layer steps. */
void ms_trace_stats_summary(const MsTraceStats *stats, MsTraceLayerStats *out);

G_END_DECLS
