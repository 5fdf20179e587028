/* coll_nccl: what the nccl network model decides for a collective (see collective.c): NCCL's
 * communicator and choice for the call, and, once the phases exist, the call's overhead, wire
 * factor, per-step latency and message weight. */
#include <math.h>

#include "coll_nvls.h"
#include "coll_private.h"
#include "coll_tree.h"

/* Bus bandwidth (bytes/s) of the collective's first ring phase on the links as the model gives
 * them, alone: every hop of every channel moves its step at once, so the busiest link, counted
 * in hops over its bandwidth, sets it; kept per communicator and channel count. 0 when the
 * first phase is not one ring over all participants. */
static double
ring_bus_bandwidth(MsColl *coll, MsNetModel *net, const MsNcclComm *comm)
{
    const Phase *ph = &coll->plan.phases[0];
    if (ph->kind != PHASE_RING || ph->n_groups != 1 || ph->m < 2) {
        return 0;
    }
    double *slot = ms_net_model_ring_slot(net, comm, ph->channels);
    if (!isnan(*slot)) {
        return *slot;
    }
    const MsTopology *topo = ms_sim_topology(coll->sim);
    g_autofree guint *hops = g_new0(guint, MAX(ms_topology_n_links(topo), 1));
    guint m = ph->m;
    for (guint c = 0; c < ph->channels; c++) {
        const guint *order = &ph->order[(gsize)c * m];
        for (guint i = 0; i < m; i++) {
            guint src = coll->device[ph->members[order[i]]];
            guint dst = coll->device[ph->members[order[(i + 1) % m]]];
            guint n = 0;
            const guint32 *route = ms_net_model_route(net, src, dst, &n, NULL);
            for (guint k = 0; route && k < n; k++) {
                hops[route[k]]++;
            }
        }
    }
    double worst = 0;
    for (guint l = 0; l < ms_topology_n_links(topo); l++) {
        double bw = ms_net_model_link_bandwidth(net, l);
        if (hops[l] && isfinite(bw)) {
            worst = MAX(worst, hops[l] / bw);
        }
    }
    *slot = worst > 0 ? ph->channels / worst : 0;
    return *slot;
}

/* Seconds the first phase's flows take alone on the links at one wire byte per payload byte:
 * the rings' bus time, or the tree's busiest link (every connection carries a channel's share);
 * 0 when neither applies. */
static double
links_time(MsColl *coll, const MsCollSpec *spec, const MsNcclComm *comm)
{
    const Phase *ph = &coll->plan.phases[0];
    if (ph->kind == PHASE_TREE) {
        double per =
            ms_coll_tree_link_time(ph, coll->device, spec->net, ms_sim_topology(coll->sim));
        return ph->channels ? per * (double)spec->bytes / ph->channels : 0;
    }
    double bus = ring_bus_bandwidth(coll, spec->net, comm);
    return bus > 0 ? ms_coll_busbw_factor(spec->op, coll->n) * (double)spec->bytes / bus : 0;
}

/* What the nccl model decides for the whole call, once its phases exist: NCCL's fixed cost as
 * the per-call overhead (unless the spec gives one), and for ring phases the chosen protocol's
 * wire factor (its predicted time per byte over that of the rings on the links at NCCL's
 * figures), its latency (the size-dependent factor of its tuning model applied) and the weight of
 * its network messages. A tree's connections (coll_tree.c) or, under tree=ring-flows, the
 * ring's flows get the wire factor of the tree's predicted time; its latency is paid up front. */
void
ms_coll_nccl_setup(MsColl *coll, const MsCollSpec *spec, const MsNcclComm *comm,
                   const MsNcclChoice *ch, const guint *node_of)
{
    coll->net = spec->net;
    coll->comm = comm;
    coll->choice = *ch;
    coll->node_of = g_memdup2(node_of, coll->n * sizeof(guint));
    coll->wire = 1.0;
    const MsNetSpec *net = ms_net_model_spec(spec->net);
    MsNcclCost c0;
    if (spec->op == MS_COLL_ALLTOALL) {
        /* A grouped send/receive is one kernel; NCCL's model gives a Simple kernel this cost. */
        ms_nccl_cost(comm, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_SIMPLE, 0, &c0);
        if (spec->alpha == 0) {
            coll->alpha = ms_time_from_us(c0.base_us * net->latency_scale);
        }
        return;
    }
    ms_nccl_cost(comm, spec->op, ch->algo, ch->proto, 0, &c0);
    double scale = c0.latency_us > 0 ? ch->cost.latency_us / c0.latency_us : 1.0;
    /* Seconds per byte NCCL's model gives the choice, over those of the rings on the links. */
    double t = (ch->cost.time_us - ch->cost.latency_us) * 1e-6;
    double t_links = links_time(coll, spec, comm);
    if (spec->bytes && t > 0 && t_links > 0) {
        coll->wire = CLAMP(t / t_links / net->proto_efficiency[ch->proto], 1.0 / 64, 64.0);
    }
    if (coll->plan.phases[0].nvls) {
        double w = ms_coll_nvls_wire(coll, spec->net, t) / net->proto_efficiency[ch->proto];
        coll->wire = CLAMP(w, 1.0 / 64, 64.0);
    }
    /* NCCL pipelines a ring's steps over each connection, so its model charges the network's
     * latency on the few steps that cross nodes, not on every step a NIC carries. Here a
     * connection moves its steps one after another: the latency is spread evenly over the
     * steps, so that any chain of them (the longest is every step) adds up to NCCL's. */
    scale *= net->latency_scale;
    double base = c0.base_us * scale;
    const Phase *ph = &coll->plan.phases[0];
    guint steps = ph->kind == PHASE_RING ? ph->steps : 0;
    if (ch->algo == MS_NCCL_ALGO_RING && steps) {
        coll->lat_step = ms_time_from_us((ch->cost.latency_us * net->latency_scale - base) / steps);
    } else {
        base = ch->cost.latency_us * net->latency_scale;
    }
    if (spec->alpha == 0) {
        coll->alpha = ms_time_from_us(base);
    }
    coll->net_weight = ms_net_model_message_weight(spec->net, ch->message);
}

/* Peers a rank sends to at once in a grouped send/receive: every p2p channel runs a few peer
 * operations at a time and a peer takes the channels it spreads over (0: all of them). */
guint
ms_coll_nccl_window(const MsNcclComm *comm, guint n)
{
    MsNcclP2p p2p;
    ms_nccl_p2p(comm, 0, FALSE, &p2p);
    guint w = comm->p2p_channels * p2p.peers_per_channel / MAX(1, comm->p2p_channels_per_peer);
    return w + 1 >= n ? 0 : MAX(w, 1);
}

/* Under the nccl model: NCCL's communicator, and its choice for the call. */
const MsNcclComm *
ms_coll_nccl_comm(const MsCollSpec *spec, MsNcclChoice *ch, GError **error)
{
    /* NCCL never tunes a call on one rank: enqueue.cc hands it to ncclLaunchOneRank, a copy when
     * out of place and nothing in place, as the flow model's collective of one rank is. */
    if (spec->net == NULL || ms_net_model_kind(spec->net) != MS_NET_NCCL || spec->n_ranks < 2) {
        return NULL;
    }
    const MsNcclComm *comm = ms_net_model_comm(spec->net, spec->ranks, spec->n_ranks, error);
    if (comm && spec->op != MS_COLL_ALLTOALL && !ms_nccl_choose(comm, spec->op, spec->bytes, ch)) {
        g_set_error(error, MS_COLL_ERROR, MS_COLL_ERROR_INVALID,
                    "%s of %" G_GUINT64_FORMAT " B: the network model allows NCCL no algorithm "
                    "and protocol for it",
                    ms_coll_op_name(spec->op), spec->bytes);
        return NULL;
    }
    return comm;
}
