/* lina_infer: Lina's inference scheduler (USENIX ATC'23, section 5). Tokens that took the same
 * path through the previous MoE layers tend to choose the same experts next, so the popularity
 * of layer l's experts is estimated from each token's path over the previous `path` layers
 * (default 3) with statistics learned from earlier batches (path_profile.h). Phase 1 places the
 * layer from the estimate before it runs: popular experts get replicas in proportion to their
 * load, unpopular ones are packed, at most max_pack per GPU, so that the busiest GPU's load is
 * as small as this allows (lina_place.h). Phase 2, after
 * the layer's gate, compares the estimated popular experts with the real ones and re-plans from
 * the real loads when they differ. Loads are token-expert assignments; weights are bytes. */
#pragma once

#include "expert_cache.h"
#include "lina_place.h"
#include "path_profile.h"
#include "policy.h"
#include "sim/moe/placement.h"

G_BEGIN_DECLS

/* Whether two load vectors make the same experts popular (above total / n_ranks): phase 2's
 * test of the estimate against the gate's real choices. */
gboolean ms_lina_same_popular(const double *a, const double *b, guint experts, guint n_ranks);
/* Weight bytes to move so that every GPU holds what `to` puts there: an n x n matrix [src * n +
 * dst] of expert_bytes per expert a GPU lacks (held neither in home nor in also, which may be
 * NULL), sent from the expert's first replica in home. NULL when nothing moves; *total gets the
 * bytes. */
guint64 *ms_lina_moves(const MsPlacement *to, const MsPlacement *home, const MsPlacement *also,
                       guint64 expert_bytes, guint64 *total);

/* The lina policy in inference mode: fills cfg->layers (one MsLayerPlacement per MoE layer) and
 * metadata (lina.placement, lina.weights; dynamic: lina.replans, lina.weight_bytes,
 * lina.estimate_error; weights=host: lina.host_bytes, lina.host_late_bytes, lina.cache_experts,
 * lina.host_link). With weights=host the loads go through a copy of in->cache (an empty cache
 * when NULL), which is left as it was. MS_POLICY_ERROR_INPUT when the batch has no token paths
 * (dynamic placement), or weights=host finds no host link or no room (lina_host.h). */
gboolean ms_lina_infer_configure(const MsPolicy *policy, const MsPolicyInput *in, MsPlanConfig *cfg,
                                 GError **error);

/* The cache a planner keeps across batches for a lina policy with weights=host in inference
 * (lina_host.h's capacity): NULL without an error when the policy keeps none, NULL with its error
 * when the host link or the room is missing. */
MsExpertCache *ms_lina_infer_cache_new(const MsPolicy *policy, const MsPolicyInput *in,
                                       guint n_ranks, GError **error);
/* Puts a batch's expert uses into the cache, as planning it would (call before its paths are
 * learned, as the estimate planning saw them). */
gboolean ms_lina_infer_learn(const MsPolicy *policy, const MsPolicyInput *in, MsExpertCache *cache,
                             GError **error);

G_END_DECLS
