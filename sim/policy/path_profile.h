/* path_profile: the statistics of tokens' expert paths that Lina's inference estimate learns
 * from earlier batches (USENIX ATC'23, section 5): for every MoE layer l and depth d up to
 * MS_PATH_MAX_DEPTH, how often the tokens whose first-choice experts at layers l-d .. l-1 were a
 * given path then chose each expert at l, and each layer's expert popularity. Counts are
 * token-expert assignments; estimates are expected assignments (doubles, summed in a fixed order
 * so results are reproducible). Memory grows with the distinct paths seen. */
#pragma once

#include <glib.h>

#include "traces/trace_routing.h"

G_BEGIN_DECLS

/* Longest path kept: four 16-bit expert ids make one 64-bit key. */
#define MS_PATH_MAX_DEPTH 4u

typedef struct _MsPathProfile MsPathProfile;

/* Keeps paths up to depth layers long (1 .. MS_PATH_MAX_DEPTH): the deepest path an estimate
 * will ask for (Lina's `path`), so that deeper tables, the largest, are neither filled nor
 * consulted. */
MsPathProfile *ms_path_profile_new(guint experts, guint layers, guint depth);
void ms_path_profile_free(MsPathProfile *prof);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsPathProfile, ms_path_profile_free)

/* Learns from a batch with token paths. MS_POLICY_ERROR_INPUT (sim/policy/policy.h) when the
 * batch has no paths or a different number of experts or MoE layers. */
gboolean ms_path_profile_add(MsPathProfile *prof, const MsRouting *batch, GError **error);
guint ms_path_profile_n_batches(const MsPathProfile *prof);

/* Estimated token-expert assignments per expert at MoE layer m of batch (load has one entry per
 * expert; they sum to the batch's assignments): each token adds its top_k choices spread as the
 * tokens that shared its path over the previous min(depth, m) layers (at most the profile's
 * depth) spread theirs, backing off to shorter paths, then to the layer's popularity, then to
 * uniform when the profile knows nothing.
 * prof may be NULL (uniform). Without paths in the batch, the layer's popularity. */
void ms_path_profile_estimate(const MsPathProfile *prof, const MsRouting *batch, guint m,
                              guint depth, double *load);

G_END_DECLS
