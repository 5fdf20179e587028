/* nccl_nvls: NVLS (NVLink SHARP) in NCCL's model, on one node: when NCCL enables it (the
 * transport's support test and the NVLS graph search), and what its tuning model predicts for
 * an allreduce (from 2.18.1), a reducescatter or an allgather (from 2.19.1) with it. Modelled
 * from 2.18.1 on SM90 and from 2.25.1 on SM100. NVLS_TREE (across nodes) and 2.17 (NVLS on the
 * ring graph at ratio 0.75, v2.17.1 tuning.cc:127, 173) are not: NVLS is then off. */
#include "nccl_private.h"

/* comm->nvlsChannels: NCCL_NVLS_NCHANNELS, 16 (v2.18.3 src/transport/nvls.cc:231, v2.22.3
 * :138); from 2.25.1 by architecture, 16 on SM90 and 32 on SM100 (v2.25.1 nvls.cc:144-145,
 * 176), 24 on one SM100 node from 2.27.3 (v2.27.3 nvls.cc:149, 179-190; v2.30.7 :210-213);
 * within [minCTAs, maxCTAs], 1 and MAXCHANNELS by default. */
static guint
nvls_channels(guint version, guint arch)
{
    if (arch < 100 || version < V(2, 25, 0)) {
        return 16;
    }
    return version >= V(2, 27, 0) ? 24 : 32;
}

void
nccl_nvls_init(MsNcclComm *c, const NcclNode *nd, gboolean multicast)
{
    c->nvls_channels = c->nvls_graph_channels = 0;
    c->nvls_bw = c->nvls_bw_inter = 0;
    /* ncclNvlsInit (v2.18.3 nvls.cc:233-258): NCCL_NVLS_ENABLE=2 asks the GPU for
     * CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED (the topology's intra_multicast) and needs more
     * than two GPUs in the node's topology (:239; v2.28.3 :160), at least two from 2.29.2
     * (v2.29.2 :161). An NVLS graph needs an NVSwitch and SM90 or later (v2.18.3 search.cc:830,
     * v2.29.2 :1062); SM100 has its own speeds from 2.25.1. On several nodes NVLS is off without
     * CollNet (v2.18.3 tuning.cc:266, v2.20.5 nvls.cc:240, v2.30.7 tuning.cc:505). */
    guint min_gpus = c->version >= V(2, 29, 0) ? 2 : 3;
    gboolean arch = c->arch >= 90 && (c->arch < 100 || c->version >= V(2, 25, 0));
    if (c->version < V(2, 18, 0) || !multicast || c->n_nodes != 1 || nd->n_gpus < min_gpus ||
        !arch) {
        return;
    }
    double inter = 0;
    double sp = nccl_nvls_speed(nd, c->version, c->arch, &inter);
    /* No NVLS graph: NVLS support dropped (v2.18.3 src/init.cc:1004). */
    if (!(sp > 0)) {
        return;
    }
    c->nvls_graph_channels = nd->n_gpus;
    c->nvls_bw = sp;
    c->nvls_bw_inter = inter;
    c->nvls_channels = nvls_channels(c->version, c->arch);
}

/* Whether NCCL offers NVLS for op on this communicator (one node, NVLS enabled): allreduce from
 * 2.18.1; reducescatter and allgather from 2.19.1 (v2.18.3 tuning.cc:168-169 skip them, v2.19.3
 * :168-169 and enqueue.cc:1171-1172 admit them on one node), and from 2.25.1 only with at most
 * NCCL_MAX_NVLS_ARITY = 32 GPUs (v2.25.1 enqueue.cc:1610; v2.29.2 :1909, include/device.h:208). */
static gboolean
nvls_offers(const MsNcclComm *c, MsCollOp op)
{
    if (op == MS_COLL_ALLREDUCE) {
        return TRUE;
    }
    if (op != MS_COLL_REDUCESCATTER && op != MS_COLL_ALLGATHER) {
        return FALSE;
    }
    return c->version >= V(2, 19, 0) && (c->version < V(2, 25, 0) || c->n_ranks <= 32);
}

gboolean
nccl_nvls_cost(const MsNcclComm *c, MsCollOp op, MsNcclProto proto, MsNcclCost *out)
{
    /* Simple only (v2.18.3 tuning.cc:172, v2.30.7 :301). */
    if (c->nvls_channels == 0 || proto != MS_NCCL_PROTO_SIMPLE || !nvls_offers(c, op)) {
        return FALSE;
    }
    gboolean ar = op == MS_COLL_ALLREDUCE;
    guint nch = c->nvls_graph_channels;
    if (c->version < V(2, 28, 0)) {
        /* busBw = nChannels x bw, bw = min(bwIntra, bwInter) from 2.19 (v2.19.3 tuning.cc:175;
         * bwInter is never the lower), then x 5/6 (v2.18.3 tuning.cc:197, v2.27.3 :324). From
         * 2.23.4 no ratio for reducescatter and allgather: algBw = busBw (v2.22.3 tuning.cc:211
         * exempts CollNet only, v2.23.4 :221 every algorithm but the ring). */
        out->bus_bw = nch * c->nvls_bw;
        gboolean ratio = ar || c->version < V(2, 23, 0);
        out->alg_bw = ratio ? out->bus_bw * 5.0 / 6.0 : out->bus_bw;
    } else {
        /* From 2.28.3: per channel bwIntra x nvlsEfficiency (Hopper 0.85, Blackwell 0.74) x
         * (nChannels - 1) / nChannels, x 2 for allreduce (two operations pipelined), else x
         * (ppn - 1) / ppn, at most bwInter; then for allreduce the ring's ratio
         * nRanks / 2(nRanks - 1), none for the others (v2.28.3 tuning.cc:134-138, 286-300, 346;
         * v2.30.7 :139-144, 307-323, 376-379). */
        if (nch < 2) {
            return FALSE;
        }
        double eff = c->arch >= 100 ? 0.74 : 0.85;
        double n = c->n_ranks;
        double intra = c->nvls_bw * eff * (nch - 1) / nch * (ar ? 2.0 : (n - 1) / n);
        out->bus_bw = nch * MIN(intra, c->nvls_bw_inter);
        out->alg_bw = ar ? out->bus_bw * n / (2.0 * (n - 1)) : out->bus_bw;
    }
    /* Latency on one node, every operation alike: baseLat 23 in 2.18 with no hardware term
     * (v2.18.3 tuning.cc:59, 69, 235-236); from 2.19.1 no baseLat and the NVLink hwLat alone: 23
     * (v2.19.3 tuning.cc:58, 69, 240), 25 from 2.21.5 (v2.21.5 tuning.cc:69; v2.27.3 :147;
     * v2.29.2 :152, 391-392). */
    gboolean base = c->version < V(2, 19, 0);
    double lat = c->version < V(2, 21, 0) ? 23.0 : 25.0;
    out->base_us = base ? lat : 0;
    out->intra_us = base ? 0 : lat;
    out->inter_us = 0;
    out->latency_us = lat;
    return TRUE;
}
