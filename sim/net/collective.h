/* collective: NCCL-style collectives as flow DAGs on the simulated network. Each rank launches its
 * part when it wants (its stream reaches the op); a transfer starts only once both of its ends
 * have launched (NCCL's rendezvous), and each rank's part completes when its own sends, receives
 * and local copies are done, as a rank's NCCL kernel does. Flows are generated lazily from the
 * algorithm's structure, so a 1024-rank ring allreduce never holds more than its live flows.
 *
 * Algorithms (what NCCL / Tutel / ScheMoE do, at flow level):
 *   alltoall  direct  every pair at once (grouped ncclSend/ncclRecv); with window W > 0, NCCL's
 *                     round order: in round r rank i sends to i+r, at most W rounds in flight
 *             2dh     Tutel's 2D-hierarchical: intra-node a2a aggregating by destination local
 *                     rank, layout copy, inter-node a2a among equal local ranks, layout copy
 *             pipe    ScheMoE's Pipe-A2A: intra-node and inter-node pairs as two concurrent calls
 *                     on separate communicators/streams (each with its own window)
 *             deepep  DeepEP's normal (high-throughput) kernels: a token for another node crosses
 *                     the network once per node (the deduplicated bytes of `rdma`) between GPUs
 *                     of the same local index, and NVLink carries it within the nodes: after
 *                     the RDMA hop on the receiving node (dispatch), before it on the sending
 *                     node (`returning`: the combine). Both legs run at once, as DeepEP's
 *                     forwarding pipelines them chunk by chunk.
 *   allreduce ring    NCCL ring with C channels; channel c crosses nodes through a different NIC;
 *                     a step waits for the chunk it forwards and for its connection's last step
 *             hier    intra-node reduce-scatter, inter-node ring allreduce per local rank,
 *                     intra-node all-gather
 *   reducescatter / allgather  ring
 * Sizes follow nccl-tests: for allreduce the buffer per rank; for alltoall the whole send buffer
 * of a rank (size/n per pair, unless a per-pair matrix is given); for reducescatter / allgather the
 * whole (unscattered / gathered) buffer. */
#pragma once

#include <glib.h>

#include "sim/net/net_model.h"
#include "sim/schedule/coll_names.h"
#include "sim/sim.h"

G_BEGIN_DECLS

#define MS_COLL_ERROR (ms_coll_error_quark())
GQuark ms_coll_error_quark(void);
typedef enum {
    MS_COLL_ERROR_INVALID, /* a spec that does not describe a collective */
} MsCollError;

typedef struct {
    MsCollOp op;
    MsCollAlgo algo;
    guint n_ranks;      /* participants */
    const guint *ranks; /* their topology GPU ranks; NULL = 0..n_ranks-1 */
    guint64 bytes;      /* nccl-tests size (see above); ignored when matrix is given */
    /* alltoall only: n_ranks x n_ranks bytes, matrix[src * n + dst]; copied. NULL = uniform. */
    const guint64 *matrix;
    /* deepep only: n_ranks x n_ranks bytes the RDMA leg carries [src * n + dst], non-zero only
     * between GPUs of the same local index on different nodes; and whether the tokens return
     * to their home GPUs (the combine: gathered over NVLink on the sending node, then sent over
     * RDMA to the GPU of the home's local index) rather than leave them (the dispatch: sent
     * over RDMA to the GPU of the home's local index on the expert's node, then over NVLink). */
    const guint64 *rdma;
    gboolean returning;
    guint channels;    /* ring channels; 0 = one per NIC of a node (at least 1) */
    guint window;      /* alltoall direct/pipe: rounds in flight per rank; 0 = all */
    MsTime alpha;      /* per-call overhead before a rank's first transfer */
    MsTime step_delay; /* extra delay before every ring step's transfer */
    double weight;     /* share weight of this collective's flows; 0 = 1 */
    /* Transfers skip their route latency: a calibrated alpha already holds every hop's latency. */
    gboolean no_hop_latency;
    /* A flat ring, or a direct all-to-all whose pair sizes repeat from node to node (a padded
     * one), whose participants all launch at one instant, over links that repeat from node to
     * node and carry nothing else, may be simulated by one node's flows standing for all
     * (sim/net/coll_sym.c): the same times, far fewer flows. It goes on flow by flow from the
     * instant another transfer comes onto its links. FALSE: always flow by flow. */
    gboolean symmetric;
    /* How the collective becomes flows (net_model.h); NULL: the flow model. Under the nccl model
     * the algorithm (auto), channels (0), alpha and every flow's latency, weight and wire bytes
     * follow NCCL's choice for the call; an algorithm, channel count or alpha given here stays. */
    MsNetModel *net;
} MsCollSpec;

/* Limits that reject an absurd spec before anything is allocated. A collective generating more
 * flows than this (an all-to-all over more than 16384 ranks, a ring of thousands of ranks with
 * hundreds of channels) would need gigabytes of tables and hours of simulation. */
#define MS_COLL_MAX_CHANNELS 256u
#define MS_COLL_MAX_FLOWS (G_GUINT64_CONSTANT(1) << 28)

typedef struct _MsColl MsColl;
/* Called when participant index `rank_index` (0..n_ranks-1) has finished its part, once per
 * participant, from a simulation event. The owner may free the collective from the callback of
 * the last participant to finish. */
typedef void (*MsCollRankDoneFn)(MsColl *coll, guint rank_index, gpointer ctx);

/* Validates the spec against the simulation's topology and prepares the collective; nothing
 * moves until ranks launch. Returns NULL with MS_COLL_ERROR_INVALID for an unknown op, a bad
 * op/algo combination, zero ranks or more than the topology's GPUs, a rank out of range or
 * repeated, a size above MS_BYTES_MAX (or a matrix row or column summing above it), a negative
 * or non-finite weight, more than MS_COLL_MAX_CHANNELS channels or MS_COLL_MAX_FLOWS flows, or
 * 2dh/pipe/hier/deepep over ranks not spread evenly over their nodes, or deepep without an rdma
 * matrix or with RDMA bytes between GPUs that are not the same local index of two nodes. */
MsColl *ms_coll_new(MsSim *sim, const MsCollSpec *spec, MsCollRankDoneFn done, gpointer ctx,
                    GError **error);
void ms_coll_free(MsColl *coll);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsColl, ms_coll_free)

/* Runs the collective of spec alone on a fresh simulation of topo (with the link figures of
 * spec->net's model when given), every participant launching at time 0; *end is when the last
 * one finished. FALSE with ms_coll_new's or the simulation's error. */
gboolean ms_coll_run_alone(const MsTopology *topo, const MsCollSpec *spec, MsTime *end,
                           GError **error);

/* Participant rank_index launches its part now (each exactly once). */
void ms_coll_launch(MsColl *coll, guint rank_index);
/* Convenience: launches every participant now. */
void ms_coll_launch_all(MsColl *coll);

gboolean ms_coll_finished(const MsColl *coll);
guint ms_coll_n_ranks(const MsColl *coll);
/* Time the participant finished its part (MS_TIME_NEVER if not yet). */
MsTime ms_coll_rank_end(const MsColl *coll, guint rank_index);
/* Bytes each participant sends over the network in total (excluding local copies), and the number
 * of flows the collective has generated so far. */
guint64 ms_coll_bytes_sent(const MsColl *coll, guint rank_index);
guint64 ms_coll_n_flows(const MsColl *coll);
/* Under the nccl model, what NCCL chose for an allreduce, reducescatter or allgather; NULL
 * otherwise. */
const MsNcclChoice *ms_coll_nccl_choice(const MsColl *coll);

/* What one of the collective's network flows is, told by its transfer argument (from
 * ms_sim_flow_owner, for the handler ms_coll_handler): for a timeline per connection. */
typedef struct {
    guint phase;         /* the collective's phase (0 for single-phase algorithms) */
    const char *pattern; /* "a2a" (a send to one peer), "ring" (a channel's step), "tree" (a
                          * connected pair), "nvls" */
    guint src, dst;      /* devices (topology GPU ranks) */
    gint channel;        /* ring: its channel; -1 otherwise */
    guint step;          /* ring: its step; 0 otherwise */
    /* Connections the flow stands for: under the nccl model the p2p channels of a send (NCCL
     * spreads it over them) or a tree pair's; 1 for a ring step and under the flow model. */
    guint conns;
} MsCollFlowLabel;
/* FALSE for an argument that names no flow of the collective. Costs nothing while not called. */
gboolean ms_coll_flow_label(const MsColl *coll, guint64 arg, MsCollFlowLabel *out);
/* The simulation handler the collective's transfers complete to. */
guint32 ms_coll_handler(const MsColl *coll);

/* Enumerates the flows of a single-phase collective (direct alltoall, ring allreduce,
 * reducescatter, allgather) whose participants all launch at once, in an order where every flow
 * comes after the flows it waits for: fn gets the source and destination devices, the bytes and
 * the enumeration indices of the n_preds flows it waits for (an all-to-all flow waits for at most
 * its window predecessor, a ring step for the chunk it forwards and for its sender's previous
 * step). Empty all-to-all pairs are skipped (their successors wait for what they waited for);
 * empty ring steps are listed as zero-byte flows from the sender to itself, which end as soon as
 * they may start. Replayed as a flow list, these flows end when the collective's do. Returns
 * FALSE for multi-phase algorithms. Used to hand a peer simulator the flows moesim simulates. */
typedef void (*MsCollFlowFn)(gpointer ctx, guint src_device, guint dst_device, guint64 bytes,
                             const gint64 *preds, guint n_preds);
gboolean ms_coll_enumerate(const MsColl *coll, MsCollFlowFn fn, gpointer ctx);

/* nccl-tests bus-bandwidth factor of an op over n ranks: 2(n-1)/n for allreduce, (n-1)/n else. */
double ms_coll_busbw_factor(MsCollOp op, guint n);

G_END_DECLS
