/* placement: where the experts of one MoE layer live, and the all-to-all traffic that routed
 * tokens make under it. Ranks form groups of consecutive ranks (expert-parallel groups in
 * training, one group of all ranks in inference); every group holds every expert at least once;
 * a token goes to a replica of its expert inside its own group, and the tokens of one (source,
 * expert) pair are split evenly over that expert's replicas. Units: tokens; bytes are the
 * caller's (tokens x d_model x dtype). Ignores memory limits and where the weights came from. */
#pragma once

#include <glib.h>

#include "traces/trace_routing.h"

G_BEGIN_DECLS

typedef struct _MsPlacement MsPlacement;

/* An empty placement of n_ranks ranks in groups of group_size (which must divide n_ranks), for
 * `experts` experts; fill it with ms_placement_add. */
MsPlacement *ms_placement_new(guint n_ranks, guint experts, guint group_size);
/* Training layout: groups of ep consecutive ranks, experts / ep experts per rank, contiguous
 * (expert e on rank group_first + e / (experts / ep)). ep must divide both counts. */
MsPlacement *ms_placement_new_ep(guint n_ranks, guint experts, guint ep);
/* Inference `static`: one group, one copy of each expert, spread evenly: expert e on rank
 * e x n_ranks / experts. */
MsPlacement *ms_placement_new_static(guint n_ranks, guint experts);
MsPlacement *ms_placement_copy(const MsPlacement *p);
void ms_placement_free(MsPlacement *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsPlacement, ms_placement_free)

/* Adds a replica of expert on rank (which must lie in group). Adding the same one twice is a
 * programmer error. */
void ms_placement_add(MsPlacement *p, guint group, guint expert, guint rank);

/* Local-first routing (FasterMoE's shadowed experts): a source that hosts a replica of an expert
 * keeps all its tokens for that expert; the others split theirs evenly over the replicas. Off by
 * default; copies keep it. */
void ms_placement_set_local_first(MsPlacement *p, gboolean local_first);
gboolean ms_placement_local_first(const MsPlacement *p);

guint ms_placement_n_ranks(const MsPlacement *p);
guint ms_placement_n_experts(const MsPlacement *p);
guint ms_placement_group_size(const MsPlacement *p);
guint ms_placement_n_groups(const MsPlacement *p);
/* The replicas of expert in group, in the order added (owned by p). */
const guint *ms_placement_replicas(const MsPlacement *p, guint group, guint expert, guint *n);
/* Whether rank hosts expert; the number of experts a rank hosts. */
gboolean ms_placement_hosts(const MsPlacement *p, guint rank, guint expert);
guint ms_placement_n_local(const MsPlacement *p, guint rank);
/* TRUE when every expert has a replica in every group. */
gboolean ms_placement_complete(const MsPlacement *p);
/* Whether two placements put the same replicas in the same groups (order ignored). */
gboolean ms_placement_equal(const MsPlacement *a, const MsPlacement *b);

/* The traffic of one MoE layer of one iteration under a placement. */
typedef struct _MsTraffic MsTraffic;

/* Maps the routing's counts at moe_layer onto the placement (same ranks and experts as the
 * routing). capacity holds one value per source rank, or is NULL for dropless routing (the
 * tokens of each (source, expert) pair are sent as routed). A capacity C > 0 pads every pair of
 * that source to exactly C slots (the fixed-size buffers of capacity-based gating), and the
 * routed tokens beyond C are dropped and counted. */
MsTraffic *ms_traffic_new(const MsRouting *routing, guint moe_layer, const MsPlacement *p,
                          const guint64 *capacity);
void ms_traffic_free(MsTraffic *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsTraffic, ms_traffic_free)

const MsPlacement *ms_traffic_placement(const MsTraffic *t);
/* Routed tokens beyond capacity, summed over ranks and experts. */
guint64 ms_traffic_dropped(const MsTraffic *t);
/* Token slots sent from src to dst (global ranks). */
guint64 ms_traffic_tokens(const MsTraffic *t, guint src, guint dst);
/* Token slots src sends to ranks other than itself. */
guint64 ms_traffic_sent_off_rank(const MsTraffic *t, guint src);

/* Chunk c of k (k >= 1, c < k) of the group's all-to-all: every (source, expert, replica) share x
 * is cut into k parts of x / k tokens, the first x % k parts one larger, so the chunks add up to
 * the whole exactly. matrix receives group_size x group_size token counts [src * n + dst] in
 * group order. */
void ms_traffic_chunk_matrix(const MsTraffic *t, guint group, guint c, guint k, guint64 *matrix);
/* Tokens rank receives in chunk c of k for each expert it hosts: per_expert has
 * ms_placement_n_experts entries (0 for experts not hosted); returns the total. */
guint64 ms_traffic_chunk_received(const MsTraffic *t, guint rank, guint c, guint k,
                                  guint64 *per_expert);

/* Peer chunks (FasterMoE's group-wise exchange): the group's ranks form peer groups of `peers`
 * consecutive ranks (peers divides the group size), and chunk c of size / peers holds the shares
 * whose destination's peer group is c after the source's, cyclically: chunk 0 stays inside the
 * source's peer group, chunk c is the exchange with the peer group c further on. matrix and
 * per_expert as for ms_traffic_chunk_matrix and ms_traffic_chunk_received; the chunks add up to
 * the whole exactly. */
void ms_traffic_peer_matrix(const MsTraffic *t, guint group, guint c, guint peers, guint64 *matrix);
guint64 ms_traffic_peer_received(const MsTraffic *t, guint rank, guint c, guint peers,
                                 guint64 *per_expert);

G_END_DECLS
