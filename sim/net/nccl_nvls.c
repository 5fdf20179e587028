/* nccl_nvls: NVLS (NVLink SHARP) in NCCL's model: when NCCL enables it (the transport's support
 * test and the NVLS graph search), and what its tuning model predicts for an allreduce (from
 * 2.18.1), a reducescatter or an allgather (from 2.19.1) on one node, and for NVLS_TREE's
 * allreduce across nodes (2.18.1-2.19, from 2.21.5). Modelled from 2.18.1 on SM90 and from 2.25.1
 * on SM100; 2.17 (NVLS on the ring graph at ratio 0.75, v2.17.1 tuning.cc:127, 173) is not: NVLS
 * is then off. */
#include "nccl_private.h"

/* comm->nvlsChannels: NCCL_NVLS_NCHANNELS, 16 (v2.18.3 src/transport/nvls.cc:231, v2.22.3
 * :138); from 2.25.1 by architecture, 16 on SM90 and 32 on SM100 (v2.25.1 nvls.cc:144-145,
 * 176), 24 on one SM100 node from 2.27.3 (v2.27.3 nvls.cc:149, 179-190; v2.30.7 :210-213); on
 * several SM100 nodes from 2.30.7 by the NICs (ncclNvlsTreeSm100Tuning, v2.30.7 nvls.cc:163-199:
 * 32 on two nodes with 48 GB/s NICs, else 24 with NICs of 96 GB/s or more and up to 8 GPUs a
 * node, or of 48 to 96); within [minCTAs, maxCTAs], 1 and MAXCHANNELS by default. */
static guint
nvls_channels(const MsNcclComm *c, const NcclNode *nd)
{
    if (c->arch < 100 || c->version < V(2, 25, 0)) {
        return 16;
    }
    if (c->n_nodes == 1) {
        return c->version >= V(2, 27, 0) ? 24 : 32;
    }
    double nic = INFINITY;
    for (guint k = 0; k < nd->n_nics; k++) {
        nic = MIN(nic, nd->nic_bw[k]);
    }
    if (c->version < V(2, 30, 0) || (c->n_nodes == 2 && nic >= 48.0)) {
        return 32;
    }
    if (nic >= 96.0) {
        return c->ppn <= 8 ? 24 : 32;
    }
    return nic >= 48.0 ? 24 : 32;
}

/* NVLS across nodes is NVLS_TREE, which NCCL enables with NVLS from 2.18.1 through 2.19 and from
 * 2.21.5; 2.20's ncclNvlsInit returns on nNodes > 1 (v2.20.5 nvls.cc:240). */
static gboolean
nvls_across_nodes(guint version)
{
    return version < V(2, 20, 0) || version >= V(2, 21, 0);
}

void
nccl_nvls_init(MsNcclComm *c, const NcclNode *nd, gboolean multicast, gboolean first)
{
    if (first) {
        c->nvls_channels = c->nvls_graph_channels = 0;
        c->nvls_bw = c->nvls_bw_inter = 0;
    } else if (c->nvls_graph_channels == 0) {
        return;
    }
    /* ncclNvlsInit (v2.18.3 nvls.cc:233-258): NCCL_NVLS_ENABLE=2 asks the GPU for
     * CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED (the topology's intra_multicast) and needs more
     * than two GPUs in the node's topology (:239; v2.28.3 :160), at least two from 2.29.2
     * (v2.29.2 :161). An NVLS graph needs an NVSwitch and SM90 or later (v2.18.3 search.cc:830,
     * v2.29.2 :1062); SM100 has its own speeds from 2.25.1. Plain NVLS on several nodes needs
     * CollNet (v2.18.3 tuning.cc:266, v2.30.7 tuning.cc:505): there only NVLS_TREE runs. */
    guint min_gpus = c->version >= V(2, 29, 0) ? 2 : 3;
    gboolean arch = c->arch >= 90 && (c->arch < 100 || c->version >= V(2, 25, 0));
    gboolean nodes = c->n_nodes == 1 || nvls_across_nodes(c->version);
    double inter = 0, sp = 0;
    guint graph_channels = nd->n_gpus;
    if (c->version >= V(2, 18, 0) && multicast && nodes && nd->n_gpus >= min_gpus && arch) {
        /* On one node the graph has no NICs (ncclTopoTrimSystem removes them, v2.18.3
         * graph/topo.cc); across nodes it is searched with them. */
        sp = c->n_nodes == 1
                 ? nccl_nvls_speed(nd, c->version, c->arch, &inter)
                 : nccl_nvls_speed_nets(nd, c->version, c->arch, &inter, &graph_channels);
    }
    /* No NVLS graph: NVLS support dropped (v2.18.3 src/init.cc:1004). */
    if (!(sp > 0)) {
        c->nvls_channels = c->nvls_graph_channels = 0;
        c->nvls_bw = c->nvls_bw_inter = 0;
        return;
    }
    /* Across nodes the fewest channels and the least bandwidth (src/init.cc AllGather3). */
    c->nvls_graph_channels = first ? graph_channels : MIN(c->nvls_graph_channels, graph_channels);
    c->nvls_bw = first ? sp : MIN(c->nvls_bw, sp);
    c->nvls_bw_inter = first ? inter : MIN(c->nvls_bw_inter, inter);
    c->nvls_channels = nvls_channels(c, nd);
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
    if (c->nvls_channels == 0 || c->n_nodes != 1 || proto != MS_NCCL_PROTO_SIMPLE ||
        !nvls_offers(c, op)) {
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

/* perChMaxNVLSTreeBws of 2.28.3 and later, GB/s, on two nodes and on more (v2.28.3
 * tuning.cc:193-198: Hopper 57.7 and 45.5, Blackwell 96.0 and 43.1; Blackwell's 43.8 on more from
 * v2.29.2 :197, 80.0 from v2.30.7 :210). */
static double
nvls_tree_max_bw(const MsNcclComm *c)
{
    gboolean two = c->n_nodes <= 2;
    if (c->arch < 100) {
        return two ? 57.7 : 45.5;
    }
    if (two) {
        return 96.0;
    }
    return c->version >= V(2, 30, 0) ? 80.0 : c->version >= V(2, 29, 0) ? 43.8 : 43.1;
}

gboolean
nccl_nvls_tree_cost(const MsNcclComm *c, MsCollOp op, MsNcclProto proto, MsNcclCost *out)
{
    /* Allreduce only (v2.18.3 tuning.cc:166-169 skip the others for every algorithm but the
     * ring; later releases add NVLS and PAT for them, not NVLS_TREE), Simple only (:172), on
     * several nodes (:260). */
    if (c->nvls_graph_channels == 0 || c->n_nodes < 2 || op != MS_COLL_ALLREDUCE ||
        proto != MS_NCCL_PROTO_SIMPLE) {
        return FALSE;
    }
    double nch = c->nvls_graph_channels, nodes = c->n_nodes, n = c->n_ranks;
    gboolean two = c->n_nodes <= 2;
    if (c->version < V(2, 19, 0)) {
        /* bw = bwIntra on up to two nodes, else bwInter; algBw = busBw x 0.70 nNodes /
         * 2(nNodes - 1) (v2.18.3 tuning.cc:175, 198). */
        out->bus_bw = nch * (two ? c->nvls_bw : c->nvls_bw_inter);
        out->alg_bw = out->bus_bw * 0.70 * nodes / (2 * (nodes - 1));
    } else if (c->version < V(2, 28, 0)) {
        /* bw = min(bwIntra, bwInter, halved past two nodes), then x 5/6 (v2.19.3 tuning.cc:176,
         * 199; v2.22.3 :174, 214; v2.27.3 :275, 324). */
        out->bus_bw = nch * MIN(c->nvls_bw, two ? c->nvls_bw_inter : c->nvls_bw_inter / 2);
        out->alg_bw = out->bus_bw * 5.0 / 6.0;
    } else {
        /* From 2.28.3 as NVLS (nccl_nvls_cost) with bwInter doubled on two nodes and at most
         * perChMaxNVLSTreeBw, then the ring's ratio (v2.28.3 tuning.cc:285-300, 348). */
        if (nch < 2) {
            return FALSE;
        }
        double eff = c->arch >= 100 ? 0.74 : 0.85;
        double intra = c->nvls_bw * eff * (nch - 1) / nch * 2.0;
        double inter = c->nvls_bw_inter * (two ? 2.0 : 1.0);
        out->bus_bw = nch * MIN(MIN(intra, inter), nvls_tree_max_bw(c));
        out->alg_bw = out->bus_bw * n / (2.0 * (n - 1));
    }
    /* Latency: 2.18 baseLat 23 and 2(nNodes - 1) x hwLat NET 19 (v2.18.3 tuning.cc:59, 77,
     * 237-238); from 2.19.1 no baseLat, the NVLink hwLat (23, 25 from 2.21.5) and 2 log2(nNodes) x
     * the network's (14, 20.9 from 2.29.2) (v2.19.3 tuning.cc:58, 69, 77, 242-243; v2.22.3 :69, 77;
     * v2.29.2 :153, 165, 394-395). The NIC's own latency (graph latencyInter) is 0 for
     * InfiniBand's verbs (net_ib.cc's properties). */
    if (c->version < V(2, 19, 0)) {
        out->base_us = 23.0;
        out->inter_us = 19.0;
        out->intra_us = 0;
        out->latency_us = out->base_us + 2 * (nodes - 1) * out->inter_us;
    } else {
        out->base_us = 0;
        out->intra_us = c->version < V(2, 21, 0) ? 23.0 : 25.0;
        /* interLat: hwLat NET and the net plugin's latency, twice for Simple (v2.19.3
         * tuning.cc:208-210). */
        out->inter_us = (c->version < V(2, 29, 0) ? 14.0 : 20.9) + 2 * c->net_latency_us;
        out->latency_us = out->intra_us + 2 * nccl_log2i(c->n_nodes) * out->inter_us;
    }
    return TRUE;
}
