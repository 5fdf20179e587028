/* lina_place: Lina's replicate-and-pack placement of one MoE layer (USENIX ATC'23, section 5.2)
 * for given expert loads (token-expert assignments, doubles): popular experts get GPUs of their
 * own in proportion to their load, unpopular ones are packed, so that the busiest GPU's load is
 * as small as this allows and never above that of the placement the batch starts from. Ignores
 * memory: how many experts a GPU may hold is max_pack's business. */
#pragma once

#include <glib.h>

#include "sim/moe/placement.h"

G_BEGIN_DECLS

/* Lina's placement over n_ranks GPUs, starting from home (complete, one group). The smallest
 * bound L on a GPU's load (bisection) for which the experts fit: an expert above L is popular
 * and gets ceil(load / L) replicas, each with an equal share of its load, on distinct GPUs;
 * every replica is packed first-fit decreasing into GPUs of capacity L when that fits n GPUs,
 * else largest first onto the least loaded GPU that can take it. A GPU holds at most max_pack
 * unpopular experts, or, when the loaded experts outnumber n_ranks x max_pack, twice their mean
 * count. Experts without load count towards no limit and stay on their first GPU in home. GPUs
 * left over go to the expert with the highest load per replica among those whose replicas have
 * GPUs of their own (in Lina's setting, experts no more than GPUs, popular experts always do).
 * Each GPU's experts go to the free GPU where home holds the most of them (less weight to move).
 * Guarantee: no GPU's load (an expert's load split evenly over its replicas) is above L, nor
 * above the busiest GPU's load under home: when the search cannot beat home, home's layout is
 * returned. A zero total gives home's layout. */
MsPlacement *ms_lina_place(const double *load, guint experts, guint n_ranks, guint max_pack,
                           const MsPlacement *home);
/* The same, where each GPU's experts prefer a GPU on which prefer (one group of n_ranks, any
 * number of replicas, complete or not) has one of them, instead of home: the GPUs whose caches
 * hold an expert, when experts live in host memory. NULL: home. */
MsPlacement *ms_lina_place_prefer(const double *load, guint experts, guint n_ranks, guint max_pack,
                                  const MsPlacement *home, const MsPlacement *prefer);

/* The busiest GPU's load under a placement (group 0): each expert's load split evenly over its
 * replicas. */
double ms_lina_busiest(const MsPlacement *p, const double *load);

G_END_DECLS
