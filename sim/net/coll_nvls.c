/* coll_nvls: the flows of NCCL's NVLS allreduce on one node.
 *
 * NCCL's kernel (RunWorkElement<AllReduce, NVLS, Simple>, v2.18.3
 * src/collectives/device/all_reduce.h:378-470; src/device/all_reduce.h from 2.19; the buffers in
 * src/transport/nvls.cc) splits the buffer into one share per GPU (the NVLS heads). Its scatter
 * and gather warps copy the user buffers into and out of the GPU's own memory bound to the
 * multicast object (memory traffic, not the NVSwitch link). Its reduce warps issue
 * multimem.ld_reduce on the multicast address of the head's share: the NVSwitch reads that share
 * from every GPU, reduces in the switch and returns the sum to the head; then multimem.st of the
 * sum: the head writes it once and the switch copies it to every GPU. Per GPU and direction on its
 * NVSwitch link, for S bytes over n GPUs: up:   every share of its buffer for the reductions (S) +
 * its reduced share stored (S/n); down: its reduced share (S/n) + every share multicast back (S).
 * moesim routes flows between GPUs, not to the switch, so the phase is an exchange in which GPU
 * i sends (S + S/n) / (n - 1) to each other GPU: every GPU link then carries exactly S + S/n up
 * and down, as NCCL's does. The switch's own work (reduction, replication) is not a link and
 * costs nothing here.
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
ms_coll_nvls_link_bytes(guint64 bytes, guint n)
{
    return n < 2 ? 0 : bytes + bytes / n;
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
    guint64 up = ms_coll_nvls_link_bytes(spec->bytes, n);
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
    for (guint p = 0; p < m; p++) {
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
