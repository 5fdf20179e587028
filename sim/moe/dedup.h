/* dedup: the token counts of one MoE layer's expert-parallel group as DeepEP sends them: each
 * token once to every GPU that hosts one of its experts, and once over the network to every
 * other node that does (to the GPU of the token's local index there). Counts are tokens; they
 * need the routing's token paths, since counts per expert cannot tell how many tokens share a
 * GPU or a node. */
#pragma once

#include <glib.h>

#include "sim/moe/placement.h"
#include "traces/trace_routing.h"

G_BEGIN_DECLS

/* For group g of the placement (every expert with exactly one replica in it) at moe_layer:
 * pair[i * n + j] = tokens of the group's i-th rank with at least one expert on its j-th rank,
 * rdma[i * n + j] = tokens of rank i with at least one expert on the node of rank j, where j is
 * the rank of i's local index on that node (other nodes only; 0 elsewhere). node_of gives the
 * node of every rank of the placement; a rank's local index is its position among the group's
 * ranks on its node. n is the group size; both matrices have n x n entries. The routing must
 * have paths. */
void ms_dedup_matrices(const MsRouting *routing, guint moe_layer, const MsPlacement *p, guint g,
                       const guint *node_of, guint64 *pair, guint64 *rdma);

G_END_DECLS
