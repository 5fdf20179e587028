/* coll_nvls: the flows of NCCL's NVLS allreduce, reducescatter and allgather on one node.
 *
 * Allreduce (RunWorkElement<AllReduce, NVLS, Simple>, v2.18.3
 * src/collectives/device/all_reduce.h:378-470; src/device/all_reduce.h from 2.19; the buffers in
 * src/transport/nvls.cc) splits the buffer into one share per GPU (the NVLS heads). Its scatter
 * and gather warps copy the user buffers into and out of the GPU's own memory bound to the
 * multicast object (memory traffic, not the NVSwitch link). Its reduce warps issue
 * multimem.ld_reduce on the multicast address of the head's share: the NVSwitch reads that share
 * from every GPU, reduces in the switch and returns the sum to the head; then multimem.st of the
 * sum: the head writes it once and the switch copies it to every GPU. Per GPU and direction on its
 * NVSwitch link, for S bytes over n GPUs: up:   every share of its buffer for the reductions (S) +
 * its reduced share stored (S/n); down: its reduced share (S/n) + every share multicast back (S).
 *
 * Reducescatter (RunWorkElement<ReduceScatter, NVLS, Simple>, v2.19.3
 * src/device/reduce_scatter.h:92-167; RunWorkColl from v2.22.3 :78, v2.29.2 :144, v2.30.7 :152)
 * is the first half: its scatter warps copy the n shares of the send buffer (S in all) into the
 * multicast-bound memory, and its reduce warps' multimem.ld_reduce of the GPU's own share reads
 * that share from every GPU: up S (each GPU's copy of every share is read once), down S/n (its
 * reduced share). Allgather (v2.19.3 src/device/all_gather.h:102-170; v2.22.3 :85, v2.29.2
 * :175, v2.30.7 :187) is the second: its bcast warps multimem.st the GPU's S/n bytes once and
 * the switch writes them to every GPU, whose gather warps copy the n shares out locally: up S/n,
 * down S. Unregistered buffers throughout (the registered variants skip the local copies only).
 *
 * moesim routes flows between GPUs, not to the switch, so the phase is an exchange in which GPU
 * i sends L / (n - 1) to each other GPU, L the busier direction's bytes: S + S/n for allreduce,
 * S for the other two. Every GPU link then carries L up and down: exactly NCCL's bytes for
 * allreduce; for reducescatter (allgather) the down (up) direction carries S instead of S/n,
 * which costs nothing alone (the busier direction sets the time) and overstates that direction
 * under contention. The switch's own work (reduction, replication) is not a link and costs
 * nothing here.
 *
 * Time: NCCL's tuning model predicts latency + S / algBw (nccl_nvls.c). The latency is paid up
 * front (the collective's alpha); the flows move their bytes scaled by one wire factor, the
 * predicted transfer time over the time the flows take alone at the links' bandwidths, so that
 * alone the call takes NCCL's predicted time, and under contention the links it really loads
 * slow it. No other factor. */
#include "coll_nvls.h"

#include <math.h>
#include <string.h>

guint64
ms_coll_nvls_link_bytes(MsCollOp op, guint64 bytes, guint n)
{
    if (n < 2) {
        return 0;
    }
    return op == MS_COLL_ALLREDUCE ? bytes + bytes / n : bytes;
}

void
ms_coll_nvls_build(PhasePlan *plan, const MsCollSpec *spec)
{
    guint n = spec->n_ranks;
    memset(plan, 0, sizeof *plan);
    Phase *ph = &plan->phases[0];
    ph->kind = PHASE_A2A;
    ph->nvls = TRUE;
    ph->n_groups = 1;
    ph->m = n;
    ph->members = g_new(guint, n);
    ph->group_of = g_new(guint, n);
    ph->pos_of = g_new(guint, n);
    for (guint i = 0; i < n; i++) {
        ph->members[i] = ph->pos_of[i] = i;
        ph->group_of[i] = 0;
    }
    ph->entered = g_new0(guint8, n);
    ph->finished = g_new0(guint8, n);
    ph->pending = g_new0(guint, n);
    ph->preds_left = g_new0(guint, n);
    ph->parked = g_new0(GArray *, n);
    plan->n_phases = 1;
    if (n < 2) {
        return;
    }
    /* Round r of every sender: an equal part of its link bytes, the remainder on the first
     * rounds; a GPU receives round r from exactly one sender for each r, so it receives what
     * each sends. */
    guint64 up = ms_coll_nvls_link_bytes(spec->op, spec->bytes, n);
    guint64 base = up / (n - 1), rem = up % (n - 1);
    ph->pair_bytes = g_new(guint64, (gsize)n * (n - 1));
    for (guint p = 0; p < n; p++) {
        for (guint r = 1; r < n; r++) {
            ph->pair_bytes[(gsize)p * (n - 1) + (r - 1)] = base + (r - 1 < rem ? 1 : 0);
        }
    }
}

double
ms_coll_nvls_wire(const MsColl *coll, MsNetModel *net, double t_s)
{
    const Phase *ph = &coll->plan.phases[0];
    const MsTopology *topo = ms_sim_topology(coll->sim);
    guint n_links = ms_topology_n_links(topo);
    if (ph->m < 2 || !(t_s > 0) || n_links == 0) {
        return 1.0;
    }
    g_autofree double *load = g_new0(double, n_links);
    guint m = ph->m;
    for (guint k = 0; ph->kind == PHASE_TREE && k < ph->n_flows; k++) {
        guint len = 0;
        const guint32 *route = ms_net_model_route(net, coll->device[ph->flow_src[k]],
                                                  coll->device[ph->flow_dst[k]], &len, NULL);
        for (guint q = 0; route && q < len; q++) {
            load[route[q]] += (double)ph->pair_bytes[k];
        }
    }
    for (guint p = 0; ph->kind == PHASE_A2A && p < m; p++) {
        for (guint r = 1; r < m; r++) {
            guint src = coll->device[ph->members[p]];
            guint dst = coll->device[ph->members[(p + r) % m]];
            guint k = 0;
            const guint32 *route = ms_net_model_p2p_route(net, src, dst, &k, NULL);
            for (guint q = 0; route && q < k; q++) {
                load[route[q]] += (double)phase_pair_bytes(ph, 0, p, r);
            }
        }
    }
    double worst = 0;
    for (guint l = 0; l < n_links; l++) {
        double bw = ms_net_model_link_bandwidth(net, l);
        if (load[l] > 0 && isfinite(bw) && bw > 0) {
            worst = MAX(worst, load[l] / bw);
        }
    }
    return worst > 0 ? CLAMP(t_s / worst, 1.0 / 64, 64.0) : 1.0;
}
