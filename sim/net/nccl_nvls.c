/* nccl_nvls: NVLS (NVLink SHARP) in NCCL's model, on one node: when NCCL enables it (the
 * transport's support test and the NVLS graph search), and what its tuning model predicts for
 * an allreduce with it. NVLS_TREE (across nodes), NVLS for reducescatter and allgather (from
 * 2.19), releases before 2.18 and from 2.28, and Blackwell are not modelled: NVLS is then off. */
#include "nccl_private.h"

/* comm->nvlsChannels: NCCL_NVLS_NCHANNELS, default 16 (v2.18.3 src/transport/nvls.cc:231,
 * v2.22.3 :138), within [minCTAs, maxCTAs] (1 and MAXCHANNELS by default, :257). */
#define NVLS_NCHANNELS 16

void
nccl_nvls_init(MsNcclComm *c, const NcclNode *nd, gboolean multicast)
{
    c->nvls_channels = c->nvls_graph_channels = 0;
    c->nvls_bw = 0;
    /* ncclNvlsInit (v2.18.3 nvls.cc:233-258): NCCL_NVLS_ENABLE=2 asks the GPU for
     * CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED (the topology's intra_multicast) and needs more
     * than two GPUs in the node's topology (:239; v2.22.3 :147). An NVLS graph needs an NVSwitch
     * and SM90 (v2.18.3 search.cc:830). On several nodes NVLS is off without CollNet (v2.18.3
     * tuning.cc:266, v2.20.5 nvls.cc:240). Modelled: 2.18.1 to 2.27, SM90 only. */
    gboolean release = c->version >= V(2, 18, 0) && c->version < V(2, 28, 0);
    if (!release || !multicast || c->n_nodes != 1 || nd->n_gpus <= 2 || c->arch < 90 ||
        c->arch >= 100) {
        return;
    }
    double sp = nccl_nvls_speed(nd, c->version, c->arch);
    /* No NVLS graph: NVLS support dropped (v2.18.3 src/init.cc:1004). */
    if (!(sp > 0)) {
        return;
    }
    c->nvls_graph_channels = nd->n_gpus;
    c->nvls_bw = sp;
    c->nvls_channels = NVLS_NCHANNELS;
}

gboolean
nccl_nvls_cost(const MsNcclComm *c, MsCollOp op, MsNcclProto proto, MsNcclCost *out)
{
    /* Simple only (v2.18.3 tuning.cc:172); allreduce here (reducescatter and allgather join in
     * v2.19.1 tuning.cc:168-169, not modelled). */
    if (c->nvls_channels == 0 || op != MS_COLL_ALLREDUCE || proto != MS_NCCL_PROTO_SIMPLE) {
        return FALSE;
    }
    /* busBw = nChannels x bw, bw = min(bwIntra, bwInter) from 2.19 (v2.19.3 tuning.cc:175; the
     * graph has one speed for both), then x 5/6 (v2.18.3 tuning.cc:197, v2.22.3 :214). */
    out->bus_bw = c->nvls_graph_channels * c->nvls_bw;
    out->alg_bw = out->bus_bw * 5.0 / 6.0;
    /* Latency on one node: baseLat 23 in 2.18 with no hardware term (v2.18.3 tuning.cc:59, 69,
     * 235-236); from 2.19.1 no baseLat and the NVLink hwLat alone: 23 (v2.19.3 tuning.cc:58, 69,
     * 240), 25 from 2.21.5 (v2.21.5 tuning.cc:69; v2.27.3 :147). */
    gboolean base = c->version < V(2, 19, 0);
    double lat = c->version < V(2, 21, 0) ? 23.0 : 25.0;
    out->base_us = base ? lat : 0;
    out->intra_us = base ? 0 : lat;
    out->inter_us = 0;
    out->latency_us = lat;
    return TRUE;
}
