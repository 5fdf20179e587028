/* trace_routing: one iteration of a trace (a training step or an inference batch) in memory: for
 * each MoE layer, source rank and expert the number of tokens routed there, the tokens each rank
 * routes, and, when the iteration came from token records, every token's path (its top_k experts
 * at each layer, layer-major). Units are tokens; which rank hosts an expert is not its business. */
#pragma once

#include <glib.h>

#include "trace.h"

G_BEGIN_DECLS

typedef struct _MsRouting MsRouting;

/* A routing is built, then sealed, then read:
 *   ms_routing_new, then either ms_routing_add_count or ms_routing_add_token calls (never both:
 *   MS_TRACE_ERROR_MIXED), then ms_routing_seal; the getters below need a sealed routing.
 * ms_routing_new validates the header (MS_TRACE_ERROR_LIMIT) before allocating and refuses an
 * iteration above MS_TRACE_MAX_ITERATION (MS_TRACE_ERROR_OVERFLOW). */
MsRouting *ms_routing_new(const MsTraceHeader *header, guint64 iteration, GError **error);
void ms_routing_free(MsRouting *routing);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsRouting, ms_routing_free)

/* Count record: tokens from src_rank routed to expert at layer. Errors: MS_TRACE_ERROR_RANGE,
 * MS_TRACE_ERROR_DUPLICATE (that cell given before in this iteration), MS_TRACE_ERROR_MIXED. */
gboolean ms_routing_add_count(MsRouting *routing, guint32 layer, guint32 src_rank, guint32 expert,
                              guint32 tokens, GError **error);
/* Token record: experts holds layers * top_k ids, layer-major, each layer's ids in the gate's
 * order (best first). Errors: MS_TRACE_ERROR_RANGE, MS_TRACE_ERROR_PATH (an expert twice within
 * one layer), MS_TRACE_ERROR_DUPLICATE (token_id seen before on that rank in this iteration),
 * MS_TRACE_ERROR_LIMIT (more than MS_TRACE_MAX_TOKENS_PER_RANK tokens on a rank),
 * MS_TRACE_ERROR_MIXED. */
gboolean ms_routing_add_token(MsRouting *routing, guint64 token_id, guint32 src_rank,
                              const guint32 *experts, GError **error);
/* n token records at once, as n ms_routing_add_token calls would add them: ids first_id,
 * first_id + 1, ..., experts n paths of layers * top_k ids one after another. The same errors,
 * for the first token that fails; the routing must then be freed. */
gboolean ms_routing_add_tokens(MsRouting *routing, guint64 first_id, guint32 src_rank, guint32 n,
                               const guint32 *experts, GError **error);
/* Ends building. Checks that the counts make whole tokens: for every rank the token-expert
 * assignments of every layer add up to the same total, a multiple of top_k (each token picks
 * top_k distinct experts per layer), and when the header fixes tokens_per_rank, that each rank
 * routes exactly that many. FALSE with MS_TRACE_ERROR_INCONSISTENT (or _LIMIT) naming the
 * iteration, rank and layer; the routing must then be freed. */
gboolean ms_routing_seal(MsRouting *routing, GError **error);
/* Forgets the token paths of a sealed routing, keeping its counts (a count-level iteration). */
void ms_routing_drop_paths(MsRouting *routing);

const MsTraceHeader *ms_routing_header(const MsRouting *routing);
guint64 ms_routing_iteration(const MsRouting *routing);
/* Tokens routed from src_rank to expert at layer. */
guint32 ms_routing_count(const MsRouting *routing, guint32 layer, guint32 src_rank, guint32 expert);
/* The row of counts of (layer, src_rank): experts entries, owned by the routing. */
const guint32 *ms_routing_counts(const MsRouting *routing, guint32 layer, guint32 src_rank);
/* Tokens routed to expert at layer from all ranks. */
guint64 ms_routing_expert_load(const MsRouting *routing, guint32 layer, guint32 expert);
/* Tokens that rank routes in this iteration (each goes to top_k experts at every layer of the
 * first layer group: of every layer when the trace has no groups). */
guint32 ms_routing_rank_tokens(const MsRouting *routing, guint32 rank);
/* Tokens that rank routes at MoE layer `layer` (its layer group's, trace.h). */
guint32 ms_routing_layer_tokens(const MsRouting *routing, guint32 layer, guint32 rank);
guint64 ms_routing_total_tokens(const MsRouting *routing);

/* Paths exist when the iteration was built from token records (and not dropped). */
gboolean ms_routing_has_paths(const MsRouting *routing);
/* Tokens of rank with a path: ms_routing_rank_tokens when paths exist, else 0. */
guint32 ms_routing_n_tokens(const MsRouting *routing, guint32 rank);
/* The top_k expert ids (gate order) that token (0..n_tokens-1, in record order) of rank chose at
 * layer; owned by the routing. */
const guint16 *ms_routing_token_experts(const MsRouting *routing, guint32 rank, guint32 token,
                                        guint32 layer);
guint64 ms_routing_token_id(const MsRouting *routing, guint32 rank, guint32 token);

/* Same iteration, shape, counts and (when present) paths and token ids; provenance is ignored. */
gboolean ms_routing_equal(const MsRouting *a, const MsRouting *b);

G_END_DECLS
