/* coll_private: a collective's state, shared by collective.c (flow by flow) and coll_sym.c (a
 * symmetric ring or padded all-to-all by representatives). Private to sim/net. */
#pragma once

#include "coll_phase.h"

typedef struct CollSym CollSym;

/* Flow indices (below MS_COLL_MAX_FLOWS) and the phase travel together in a transfer's 40-bit
 * argument. */
#define IDX_BITS 38
G_STATIC_ASSERT(MS_COLL_MAX_FLOWS <= (G_GUINT64_CONSTANT(1) << IDX_BITS));
#define IDX_MASK ((G_GUINT64_CONSTANT(1) << IDX_BITS) - 1)
#define NONE G_MAXUINT

struct _MsColl {
    MsSim *sim;
    MsCollOp op;
    MsCollAlgo algo;
    guint n;
    double weight;
    MsTime alpha, step_delay;
    gboolean no_hop_latency;
    guint *device;   /* per participant */
    double *copy_bw; /* per participant: bytes/s of a device-local copy */
    PhasePlan plan;
    guint32 handler;
    guint8 *launched;
    MsTime *end;
    guint64 *sent;
    guint n_finished;
    guint64 n_flows;
    MsCollRankDoneFn done;
    gpointer done_ctx;
    GArray *zero;     /* flows of zero bytes to complete (explicit stack, no recursion) */
    GArray *finished; /* participants in completion order, for the done callbacks */
    guint n_notified; /* of them, those whose callback has run */

    /* Under the nccl network model (see ms_coll_nccl_setup): */
    MsNetModel *net;        /* NULL: the flow model */
    const MsNcclComm *comm; /* NCCL's communicator over the participants */
    MsNcclChoice choice;    /* for ring phases */
    guint *node_of;         /* per participant: its node */
    double wire;            /* ring phases: wire bytes per payload byte of the protocol */
    MsTime lat_step;        /* ring phases: latency of every step */
    double net_weight;      /* ring phases: share weight of a connection through a NIC */

    /* Simulated by representatives (coll_sym.c): NULL when flow by flow. */
    gboolean symmetric; /* the spec allows it */
    MsTime first_launch;
    guint n_launched;
    CollSym *sym;
};

/* --- flow identity ---
 * A2A flow index: (g * m + p) * (m - 1) + (r - 1), sender position p, round r.
 * TREE flow index: its place in the phase's list of connected pairs.
 * RING flow index: ((g * C + c) * S + s) * m + i, ring index i sends step s of channel c. */

typedef struct {
    guint src, dst; /* participants */
    guint64 bytes;
    guint conns; /* connections the flow stands for: a TREE pair's, else 1 */
} FlowInfo;

static inline FlowInfo
flow_info(const Phase *ph, guint64 idx)
{
    FlowInfo f;
    guint m = ph->m;
    f.conns = 1;
    if (ph->kind == PHASE_TREE) {
        f.src = ph->flow_src[idx];
        f.dst = ph->flow_dst[idx];
        f.bytes = ph->pair_bytes[idx];
        f.conns = ph->flow_conns[idx];
    } else if (ph->kind == PHASE_A2A) {
        guint r = idx % (m - 1) + 1;
        guint64 gp = idx / (m - 1);
        guint g = gp / m, p = gp % m;
        f.src = ph->members[(gsize)g * m + p];
        f.dst = ph->members[(gsize)g * m + (p + r) % m];
        f.bytes = ph->pair_bytes[idx];
    } else {
        guint i = idx % m;
        guint64 rest = idx / m;
        guint s = rest % ph->steps;
        rest /= ph->steps;
        guint c = rest % ph->channels, g = rest / ph->channels;
        const guint *order = &ph->order[((gsize)g * ph->channels + c) * m];
        f.src = ph->members[(gsize)g * m + order[i]];
        f.dst = ph->members[(gsize)g * m + order[(i + 1) % m]];
        f.bytes = ms_coll_ring_chunk(ph, c, s, i);
    }
    return f;
}

/* Ring flow (s, i) of a channel, s >= 1, waits for two flows: (s-1, i-1), which brings the chunk
 * it forwards, and (s-1, i), its sender's previous step on the same connection, since NCCL moves
 * a channel's steps between two ranks in order. Without the second, a step that started a little
 * early would take more than its share of a link and run further ahead at every step, so that a
 * one-byte difference between chunks could change the result by percents. */
static inline guint64
ring_index(const Phase *ph, guint64 gc, guint s, guint i)
{
    return (gc * ph->steps + s) * ph->m + i;
}

/* The A2A flow of the same sender that may start once idx is done (its window moved on), or
 * G_MAXUINT64. */
static inline guint64
a2a_successor(const Phase *ph, guint64 idx)
{
    guint m = ph->m;
    guint r = idx % (m - 1) + 1;
    if (ph->window == 0 || r + ph->window > m - 1) {
        return G_MAXUINT64;
    }
    return idx + ph->window;
}

/* Shared by collective.c and coll_sym.c. */
void ms_coll_check_finished(MsColl *coll, guint ph_id, guint part);
/* How flow f of phase ph crosses the network: its wire bytes, share weight and latency
 * (MS_TIME_NEVER: its route's). */
void ms_coll_flow_params(const MsColl *coll, const Phase *ph, const FlowInfo *f, guint64 *wire,
                         double *weight, MsTime *latency);
/* The route of a flow of phase ph_id between two participants; NULL (after a critical warning:
 * the topology's routes were there when the collective was made) when there is none. */
const guint32 *ms_coll_route(MsColl *coll, guint ph_id, guint src_part, guint dst_part, guint *n);

/* A device-local copy's time, and its completion scheduled after delay (collective.c). */
MsTime ms_coll_copy_time(const MsColl *coll, guint part, guint64 bytes);
void ms_coll_copy_after(MsColl *coll, guint ph_id, guint part, MsTime delay);

/* coll_nccl.c, under the nccl network model. NCCL's communicator for the spec's ranks and its
 * choice for the call into ch; NULL without error under another model, NULL with error when the
 * communicator cannot be made or the model allows NCCL no algorithm for the call. */
const MsNcclComm *ms_coll_nccl_comm(const MsCollSpec *spec, MsNcclChoice *ch, GError **error);
/* Peers a rank sends to at once in a grouped send/receive over n ranks (0: all of them). */
guint ms_coll_nccl_window(const MsNcclComm *comm, guint n);
/* Once the phases exist: the call's overhead (unless the spec gives one), wire factor, per-step
 * latency and network message weight as NCCL's model decides them; keeps comm and node_of. */
void ms_coll_nccl_setup(MsColl *coll, const MsCollSpec *spec, const MsNcclComm *comm,
                        const MsNcclChoice *ch, const guint *node_of);

/* coll_sym.c: a flat ring, or an all-to-all of one group whose pair sizes repeat from node to
 * node (a padded one), whose participants all launched at one instant, over links that repeat
 * from node to node and carry nothing else, run by the participants of its first block of nodes
 * (the representatives) for all. Tries to start so at the collective's first entry: TRUE when it
 * did (every participant has entered its phase). */
gboolean ms_coll_sym_try_start(MsColl *coll);
/* Ring indices (participants) per block. */
guint ms_coll_sym_block(const MsColl *coll);
/* The representative a participant's flows are simulated by. */
guint ms_coll_sym_rep(const MsColl *coll, guint part);
/* The route a representative's flow idx takes instead of its own (route, n links; an
 * all-to-all's representatives share one link per orbit of links), its latency set from its own
 * route where it was the route's (MS_TIME_NEVER). */
const guint32 *ms_coll_sym_route(MsColl *coll, guint64 idx, const guint32 *route, guint *n,
                                 MsTime *latency);
/* Hooks: a representative's transfer started (network id) or is done; a representative
 * finished its part (its images finish with it); a participant's local copy is done. */
void ms_coll_sym_started(MsColl *coll, guint64 idx, const FlowInfo *f, guint32 id);
void ms_coll_sym_flow_done(MsColl *coll, guint64 idx);
void ms_coll_sym_finished(MsColl *coll, guint part);
void ms_coll_sym_copy_done(MsColl *coll, guint part);
/* Another transfer is about to use one of the collective's links: every flow the representatives
 * stand for becomes a flow of its own, and the collective goes on flow by flow. */
void ms_coll_sym_expand(MsColl *coll);
void ms_coll_sym_free(MsColl *coll);
