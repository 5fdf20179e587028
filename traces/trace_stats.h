/* trace_stats: what a trace says about expert load and token paths, accumulated one iteration at
 * a time: per MoE layer the hottest expert's share, max/mean load, Gini coefficient and entropy of
 * the expert loads, and the cross-layer path consistency Lina's inference scheduler relies on.
 * Loads are token-expert assignments summed over source ranks; placement is ignored. */
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
    double gini;
    double entropy_bits;
    double entropy_norm; /* entropy / log2(experts); 1 for a single expert */
    gboolean has_paths;  /* path figures below are set (paths exist and a next layer exists) */
    double path_consistency;
    double path_baseline;
} MsTraceLayerStats;

typedef struct _MsTraceStats MsTraceStats;

MsTraceStats *ms_trace_stats_new(const MsTraceHeader *header);
void ms_trace_stats_free(MsTraceStats *stats);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsTraceStats, ms_trace_stats_free)

/* Accounts one iteration, which must have the shape of the header given to _new. */
void ms_trace_stats_add(MsTraceStats *stats, const MsRouting *routing);

guint64 ms_trace_stats_iterations(const MsTraceStats *stats);
guint64 ms_trace_stats_tokens(const MsTraceStats *stats);
/* Iterations that carried token paths. */
guint64 ms_trace_stats_path_iterations(const MsTraceStats *stats);

void ms_trace_stats_layer(const MsTraceStats *stats, guint32 layer, MsTraceLayerStats *out);
/* The layers' figures averaged over layers; path figures pooled over all layer steps. */
void ms_trace_stats_summary(const MsTraceStats *stats, MsTraceLayerStats *out);

G_END_DECLS
