/* nccl_tune: NCCL's tuning model (src/graph/tuning.cc) and its choice for one call (enqueue.cc):
 * per (algorithm, protocol) a latency in microseconds and an algorithm bandwidth in GB/s from
 * the graph search's channels and per-channel bandwidth, the time of a call of n bytes, the pair
 * of least time, and the channels and threads it runs with. Ring and tree, NVLS on one node for
 * allreduce, reducescatter and allgather and NVLS_TREE's allreduce across nodes (nccl_nvls.c);
 * CollNet and PAT need hardware (SHARP switches) or shapes (one GPU per node) not modelled. */
#include "nccl_private.h"

#include <math.h>

/* Latencies, microseconds; {LL, LL128, Simple}. */
static const NcclBand base_tree[] = {
    {V(2, 10, 0), {4.4, 4.4, 0}},    /* v2.10 src/graph/tuning.cc:56 */
    {V(2, 18, 0), {6.8, 14.0, 0}},   /* v2.18 tuning.cc:57 */
    {V(2, 23, 0), {6.8, 14.0, 8.4}}, /* v2.23.4 tuning.cc:57 */
};
static const NcclBand base_ring[] = {
    {V(2, 10, 0), {3.6, 10.0, 8.4}}, /* v2.10 tuning.cc:56 */
    {V(2, 18, 0), {6.6, 14.0, 8.4}}, /* v2.18 tuning.cc:57 */
};
/* hwLat rows. Tree/Simple went 28 -> 4 (NVLink), 6 (PCI), 14 (net) in 2.18.3, back to 28 in
 * 2.19.1 and to 4/4/14 in 2.23.4; the untagged 2.18.2 is taken to be like 2.18.1. */
static const NcclBand nvl_tree[] = {
    {V(2, 10, 0), {.52, 1.25, 28}}, /* v2.10 tuning.cc:65 */
    {V(2, 18, 0), {.6, 1.25, 28}},  /* v2.18.1 tuning.cc:69 */
    {V(2, 18, 3), {.6, 1.25, 4}},   /* v2.18.3 tuning.cc:67 */
    {V(2, 19, 0), {.6, 1.25, 28}},  /* v2.19.1 tuning.cc:67 */
    {V(2, 23, 0), {.6, 1.25, 4}},   /* v2.23.4 tuning.cc:67 */
};
static const NcclBand nvl_ring[] = {
    {V(2, 10, 0), {.47, 1.9, 3.4}}, /* v2.10 tuning.cc:65 */
    {V(2, 18, 0), {.6, 1.9, 3.4}},  /* v2.18.1 tuning.cc:69 */
};
static const NcclBand pci_tree[] = {
    {V(2, 10, 0), {1.0, 1.9, 28}}, /* v2.10 tuning.cc:67 */
    {V(2, 18, 3), {1.0, 1.9, 6}},  /* v2.18.3 tuning.cc:71 */
    {V(2, 19, 0), {1.0, 1.9, 28}}, /* v2.19.1 tuning.cc:71 */
    {V(2, 23, 0), {1.0, 1.9, 4}},  /* v2.23.4 tuning.cc:71 */
};
static const NcclBand pci_ring[] = {
    {V(2, 10, 0), {1.0, 2.5, 5.7}}, /* v2.10 tuning.cc:67, unchanged to v2.30 :165 */
};
static const NcclBand net_tree[] = {
    {V(2, 10, 0), {5.0, 8.5, 28}}, /* v2.10 tuning.cc:69 */
    {V(2, 18, 3), {5.0, 8.5, 14}}, /* v2.18.3 tuning.cc:75 */
    {V(2, 19, 0), {5.0, 8.5, 28}}, /* v2.19.1 tuning.cc:75 */
    {V(2, 23, 0), {5.0, 8.5, 14}}, /* v2.23.4 tuning.cc:75 */
};
/* Net Ring/Simple: 9.6 (2.10, 2.11), 28 (2.12.7 to 2.13.4), 9.6 again (2.14.3 to 2.17), 14
 * from 2.18.1. */
static const NcclBand net_ring[] = {
    {V(2, 10, 0), {2.7, 4.0, 9.6}}, /* v2.10 tuning.cc:69 */
    {V(2, 12, 0), {2.7, 4.0, 28}},  /* v2.12 tuning.cc:69 */
    {V(2, 14, 0), {2.7, 4.0, 9.6}}, /* v2.14.3 tuning.cc:71 */
    {V(2, 18, 0), {2.7, 4.0, 14}},  /* v2.18.1 tuning.cc:77 */
};

double
nccl_hw_latency(guint version, NcclHw hw, MsNcclAlgo algo, MsNcclProto proto)
{
    gboolean tree = algo == MS_NCCL_ALGO_TREE;
    const double *row =
        hw == NCCL_HW_NVLINK ? (tree ? NCCL_BAND(nvl_tree, version) : NCCL_BAND(nvl_ring, version))
        : hw == NCCL_HW_PCI  ? (tree ? NCCL_BAND(pci_tree, version) : NCCL_BAND(pci_ring, version))
                             : (tree ? NCCL_BAND(net_tree, version) : NCCL_BAND(net_ring, version));
    return row[proto];
}

double
nccl_base_latency(guint version, MsNcclAlgo algo, MsNcclProto proto)
{
    return (algo == MS_NCCL_ALGO_TREE ? NCCL_BAND(base_tree, version)
                                      : NCCL_BAND(base_ring, version))[proto];
}

/* Per-architecture bandwidth caps, GB/s, {1 node, 2 nodes, 4 and more}; rows Volta (and every
 * architecture below Ampere), Ampere, Hopper, Blackwell. */
enum { VOLTA, AMPERE, HOPPER, BLACKWELL, N_ROWS };

/* The table row of the GPUs: by exact SM version until 2.16 (v2.10 tuning.cc:94 compCap80,
 * v2.15.1 tuning.cc:111), by ">=" from 2.17.1 (v2.17.1 tuning.cc:115), Blackwell from 2.25.1
 * (v2.25.1 tuning.cc; v2.30 tuning.cc:263-266). */
static guint
arch_row(guint version, guint arch)
{
    if (version < V(2, 15, 0)) {
        return arch == 80 ? AMPERE : VOLTA;
    }
    if (version < V(2, 17, 0)) {
        return arch == 80 ? AMPERE : arch == 90 ? HOPPER : VOLTA;
    }
    if (version >= V(2, 25, 0) && arch >= 100) {
        return BLACKWELL;
    }
    return arch >= 90 ? HOPPER : arch >= 80 ? AMPERE : VOLTA;
}

/* llMaxBws: the same in 2.8 and 2.9 (v2.8.4 tuning.cc:75, v2.9.9 :75). */
static const NcclBand ll_volta[] = {{V(2, 10, 0), {39.0, 39.0, 20.4}}};  /* v2.10 tuning.cc:74 */
static const NcclBand ll_ampere[] = {{V(2, 10, 0), {87.7, 22.5, 19.0}}}; /* v2.10 tuning.cc:74 */
static const NcclBand ll_hopper[] = {
    {V(2, 10, 0), {87.7, 22.5, 19.0}},  /* v2.15.1 tuning.cc:85 */
    {V(2, 21, 0), {141.0, 45.0, 35.0}}, /* v2.21.5 tuning.cc:89 (2.20.5 still 87.7) */
};
static const NcclBand ll_blackwell[] = {{V(2, 25, 0), {282.0, 90.0, 70.0}}}; /* v2.25.1 :155 */

static const NcclBand tree_volta[] = {{V(2, 8, 0), {26.5, 18.5, 10.0}}}; /* v2.8.4 :76, v2.10 :75 */
static const NcclBand tree_ampere[] = {
    {V(2, 8, 0), {24.0, 22.5, 16.0}},  /* v2.8.4 tuning.cc:76, v2.9.9 :76 */
    {V(2, 10, 0), {24.0, 23.6, 17.8}}, /* v2.10 tuning.cc:75 */
};
static const NcclBand tree_hopper[] = {
    {V(2, 10, 0), {24.0, 23.6, 17.8}}, /* v2.15.1 tuning.cc:91 */
    {V(2, 17, 0), {38.7, 41.4, 33.0}}, /* v2.17.1 tuning.cc:94 */
    {V(2, 18, 3), {38.7, 41.4, 36.0}}, /* v2.18.3 tuning.cc:105 */
};
static const NcclBand tree_blackwell[] = {
    {V(2, 25, 0), {77.4, 82.8, 72.0}}, /* v2.25.1 tuning.cc:174 (2 x Hopper) */
    {V(2, 28, 0), {70.0, 42.8, 24.0}}, /* v2.28.3 tuning.cc:191 */
};
/* LL128 caps per channel: one figure of 20 until 2.16 (v2.10 tuning.cc:73), one per
 * architecture for ring and tree alike in 2.17 and 2.18.1 ({20, 20, 36.7}, v2.17.1 tuning.cc:84),
 * separate ring and tree tables from 2.18.3. */
static const NcclBand ring128_hopper[] = {
    {V(2, 10, 0), {20.0, 20.0, 20.0}},
    {V(2, 17, 0), {36.7, 36.7, 36.7}}, /* v2.17.1 tuning.cc:84, v2.18.3 tuning.cc:95 */
};
static const NcclBand ring128_blackwell[] = {
    {V(2, 25, 0), {73.4, 73.4, 73.4}}, /* v2.25.1 tuning.cc:162 */
    {V(2, 28, 7), {73.4, 34.6, 73.4}}, /* v2.28.7 tuning.cc:179 (2.28.3 still 73.4) */
    {V(2, 29, 0), {34.5, 34.6, 34.5}}, /* v2.29.2 tuning.cc:179 */
    {V(2, 29, 7), {40.0, 40.0, 40.0}}, /* v2.29.7 tuning.cc:180 */
};
static const NcclBand tree128_hopper[] = {
    {V(2, 10, 0), {20.0, 20.0, 20.0}},
    {V(2, 17, 0), {36.7, 36.7, 36.7}}, /* v2.17.1 tuning.cc:84 */
    {V(2, 18, 3), {36.7, 36.7, 29.0}}, /* v2.18.3 tuning.cc:100 */
};
static const NcclBand tree128_blackwell[] = {
    {V(2, 25, 0), {73.4, 73.4, 58.0}},  /* v2.25.1 tuning.cc:168 */
    {V(2, 28, 0), {55.6, 31.67, 20.0}}, /* v2.28.3 tuning.cc:185 */
};
/* 20 for Volta and Ampere from 2.10 (v2.10 tuning.cc:73, v2.18 tuning.cc:93-99). */
static const NcclBand ring128_volta[] = {{V(2, 10, 0), {20.0, 20.0, 20.0}}};
static const NcclBand ring128_ampere[] = {{V(2, 10, 0), {20.0, 20.0, 20.0}}};
static const NcclBand tree128_volta[] = {{V(2, 10, 0), {20.0, 20.0, 20.0}}};
static const NcclBand tree128_ampere[] = {{V(2, 10, 0), {20.0, 20.0, 20.0}}};

static double
cap(guint version, guint row, guint idx, const NcclBand *volta, const NcclBand *ampere,
    guint n_ampere, const NcclBand *hopper, guint n_hopper, const NcclBand *blackwell,
    guint n_blackwell)
{
    switch (row) {
    case VOLTA:
        return nccl_band(volta, 1, version)[idx];
    case AMPERE:
        return nccl_band(ampere, n_ampere, version)[idx];
    case HOPPER:
        return nccl_band(hopper, n_hopper, version)[idx];
    default:
        return nccl_band(blackwell, n_blackwell, version)[idx];
    }
}
#define CAP(version, row, idx, t)                                                                  \
    cap(version, row, idx, t##_volta, t##_ampere, G_N_ELEMENTS(t##_ampere), t##_hopper,            \
        G_N_ELEMENTS(t##_hopper), t##_blackwell, G_N_ELEMENTS(t##_blackwell))

/* LL128's cap per channel in 2.8 and 2.9: one per operation whatever the GPU, for rings and
 * trees alike (ll128MaxBwPerCh, v2.8.4 tuning.cc:72-74, v2.9.9 :72-74: broadcast 18.8, reduce
 * 12.0, allgather 18.3, reducescatter 15.2, allreduce 16.9); from 2.10 the tables above. */
static double
ll128_cap(guint version, guint row, guint idx, MsCollOp op, gboolean tree)
{
    if (version < V(2, 10, 0)) {
        return op == MS_COLL_ALLGATHER ? 18.3 : op == MS_COLL_REDUCESCATTER ? 15.2 : 16.9;
    }
    return tree ? CAP(version, row, idx, tree128) : CAP(version, row, idx, ring128);
}

/* Trees stick to the model poorly for medium sizes: a factor per power of two from 64 B to
 * 256 MiB, identical in every release from 2.10 (v2.10 tuning.cc:267-271, v2.30 :623-627). 2.8
 * and 2.9 differ in LL128's row only (v2.8.4 tuning.cc:267, v2.9.9 :269). From 2.29.2 the table
 * has a 24th column (512 MiB: 1.0, 1.0, 0.9), which only NVLS_TREE reads (v2.29.2
 * tuning.cc:580-584, 594-595). */
static const double tree_correction_ll128_28[23] = {
    1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
    .6,  .5,  .6,  .6,  .7,  .7, .8, .9, .9, .92, .92,
};
static const double tree_correction[MS_NCCL_N_PROTOS][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
};

/* ncclTopoGetAlgoTime from 2.29.2: NVLS_TREE allreduce on SM100 with x86 CPUs (every CPU a moesim
 * topology names) takes the tree's Simple factor up to 512 MiB (v2.29.2 tuning.cc:595; not in
 * 2.28.3). */
static double
nvls_tree_correction(const MsNcclComm *c, guint64 nbytes)
{
    gint log_size = nccl_log2i(nbytes >> 6);
    if (c->version < V(2, 29, 0) || c->arch < 100 || log_size < 0 || log_size >= 24) {
        return 1.0;
    }
    return tree_correction[MS_NCCL_PROTO_SIMPLE][log_size];
}

gint
nccl_log2i(guint64 n)
{
    gint l = -1;
    while (n) {
        n >>= 1;
        l++;
    }
    return l;
}

/* Steps of a ring: 2(n-1) for allreduce, n-1 for allgather and reducescatter; steps crossing
 * nodes: 2(nNodes-1) for allreduce in 2.10, 2.11 and again from 2.23.4, 2 nNodes from 2.12.7 to
 * 2.22 (v2.10 tuning.cc:115, v2.12 :114, v2.30 :411); nNodes-1 for the others. */
static void
ring_steps(const MsNcclComm *c, MsCollOp op, gint *steps, gint *inter)
{
    gboolean ar = op == MS_COLL_ALLREDUCE;
    gint n = (gint)c->n_ranks, nodes = (gint)c->n_nodes;
    *steps = ar ? 2 * (n - 1) : n - 1;
    if (nodes == 1) {
        *inter = 0;
    } else if (!ar) {
        *inter = nodes - 1;
    } else {
        /* With one rank per node this exceeds the steps: NCCL then counts the intra-node term
         * negative, and so does the model. */
        gboolean mid = c->version >= V(2, 12, 0) && c->version < V(2, 23, 0);
        *inter = mid ? 2 * nodes : 2 * (nodes - 1);
    }
}

/* Bus bandwidth of (algo, proto) after the model's refinements, GB/s (v2.10 tuning.cc:123-133,
 * v2.18 :174-183, v2.22 :172-183, v2.30 :306-337). */
static double
bus_bandwidth(const MsNcclComm *c, MsCollOp op, MsNcclAlgo a, MsNcclProto p)
{
    guint v = c->version, row = arch_row(v, c->arch);
    guint idx = c->n_nodes <= 2 ? c->n_nodes - 1 : 2;
    double ppn = (double)c->n_ranks / c->n_nodes;
    gboolean tree = a == MS_NCCL_ALGO_TREE;
    guint nch = tree ? c->tree_channels : c->graph_channels;
    double intra = tree ? c->tree_bw_intra : c->bw_intra;
    double inter = tree ? c->tree_bw_inter : c->bw_inter;
    double bus = nch * (c->n_nodes <= 2 ? intra : inter);
    /* LL: the GPU's row on one node, the CPU vendor's (Intel 0, AMD 1) across nodes. */
    guint ll_row = c->n_nodes == 1 ? row : c->amd_cpu ? AMPERE : VOLTA;
    double ll_max = CAP(v, ll_row, idx, ll);
    /* All-SM80 cap of 235 GB/s through 2.17 (v2.10 tuning.cc:127, v2.17.1 tuning.cc:153). */
    if (v < V(2, 18, 0) && row == AMPERE) {
        bus = MIN(bus, 235.0);
    }
    if (!tree && p == MS_NCCL_PROTO_LL) {
        /* x1/4 (x1/3 for one-node allgather / reducescatter) until 2.20, x1/2 from 2.21.5
         * (v2.21.5 tuning.cc:180). */
        double f = v >= V(2, 21, 0)                              ? 0.5
                   : (c->n_nodes > 1 || op == MS_COLL_ALLREDUCE) ? 1.0 / 4.0
                                                                 : 1.0 / 3.0;
        bus = MIN(ll_max, bus * f);
    }
    if (!tree && p == MS_NCCL_PROTO_LL128) {
        /* 0.7 when fewer than 2 ranks per node, until 2.22 (v2.22 tuning.cc:179, v2.23.4
         * :188 drops it). */
        double f = ppn < 2 && v < V(2, 23, 0) ? 0.7 : 0.92;
        bus = MIN(bus * f, nch * ll128_cap(v, row, idx, op, FALSE));
    }
    if (tree) {
        bus = MIN(bus * .92, nch * CAP(v, row, idx, tree));
        if (p == MS_NCCL_PROTO_LL) {
            bus = MIN(bus / 3.8, ll_max);
        }
        if (p == MS_NCCL_PROTO_LL128) {
            /* Across nodes 0.915 in 2.8 and 2.9 (v2.8.4 tuning.cc:129, v2.9.9 :131), 120/128
             * from 2.10 (v2.10 tuning.cc:131). */
            double across = v < V(2, 10, 0) ? 0.915 : 120.0 / 128.0;
            bus = MIN(bus * (c->n_nodes == 1 ? 7.0 / 9.0 : across),
                      nch * ll128_cap(v, row, idx, op, TRUE));
        }
        /* The simple tree pattern, from 2.18.3 (v2.18.3 tuning.cc:183). */
        if (c->tree_simple && v >= V(2, 18, 3)) {
            bus *= .85;
        }
    }
    return bus;
}

/* Base, intra-node and inter-node step latencies with the release's corrections. */
static void
step_latencies(const MsNcclComm *c, MsNcclAlgo a, MsNcclProto p, MsNcclCost *out)
{
    guint v = c->version;
    NcclHw intra_hw = c->intra_nvlink ? NCCL_HW_NVLINK : NCCL_HW_PCI;
    out->base_us = nccl_base_latency(v, a, p);
    out->intra_us = nccl_hw_latency(v, intra_hw, a, p);
    /* With one rank per node the tree's network latency, from 2.23.4 (v2.23.4 tuning.cc:236). */
    gboolean one_ppn = c->n_ranks == c->n_nodes && v >= V(2, 23, 0);
    out->inter_us = nccl_hw_latency(v, NCCL_HW_NET, one_ppn ? MS_NCCL_ALGO_TREE : a, p);
    /* The net plugin's latency (the graph's latencyInter): from 2.12.7 in place of hwLat NET when
     * it is not 0 (v2.12.7 tuning.cc:140), from 2.18.1 added to it, and once more for Simple, the
     * flush (v2.18.1 tuning.cc:194-196). Before 2.12 NCCL has no such property. */
    double net = c->net_latency_us;
    if (net > 0 && v >= V(2, 18, 0)) {
        out->inter_us += net * (p == MS_NCCL_PROTO_SIMPLE ? 2 : 1);
    } else if (net > 0 && v >= V(2, 12, 0)) {
        out->inter_us = net;
    }
    /* LL's intra-node steps x1.8 across nodes until 2.17 (v2.10 tuning.cc:142). */
    if (v < V(2, 18, 0) && c->n_nodes > 1 && p == MS_NCCL_PROTO_LL) {
        out->intra_us *= 1.8;
    }
    /* From 2.18.1 an inter-node ring launches every step on the network: 1 us (2 on AMD CPUs),
     * x3 for Simple (v2.18 tuning.cc:108-118, 218-224). */
    if (a == MS_NCCL_ALGO_RING && v >= V(2, 18, 0) && c->n_nodes > 1) {
        double overhead = (c->amd_cpu ? 2.0 : 1.0) * (p == MS_NCCL_PROTO_SIMPLE ? 3 : 1);
        out->intra_us = MAX(out->intra_us, overhead);
    }
}

/* Whether NVLS/Simple is enabled for op on the communicator, the algorithm and protocol masks
 * applied; its cost into out. */
static gboolean
nvls_available(const MsNcclComm *c, MsCollOp op, MsNcclCost *out)
{
    guint simple = 1u << MS_NCCL_PROTO_SIMPLE;
    return (c->algo_mask & (1u << MS_NCCL_ALGO_NVLS)) && (c->proto_mask & simple) &&
           c->n_ranks >= 2 && nccl_nvls_cost(c, op, MS_NCCL_PROTO_SIMPLE, out) && out->alg_bw > 0;
}

void
ms_nccl_cost(const MsNcclComm *comm, MsCollOp op, MsNcclAlgo algo, MsNcclProto proto,
             guint64 nbytes, MsNcclCost *out)
{
    g_return_if_fail(comm != NULL && out != NULL && algo < MS_NCCL_N_ALGOS &&
                     proto < MS_NCCL_N_PROTOS);
    *out = (MsNcclCost){0};
    if (algo == MS_NCCL_ALGO_NVLS) {
        /* NVLS has no size-dependent correction (v2.18.3 tuning.cc:381-397). */
        if (proto == MS_NCCL_PROTO_SIMPLE && nvls_available(comm, op, out)) {
            out->enabled = TRUE;
            out->time_us = out->latency_us + nbytes / (1000.0 * out->alg_bw);
        }
        return;
    }
    if (algo == MS_NCCL_ALGO_NVLS_TREE) {
        if ((comm->algo_mask & (1u << algo)) && (comm->proto_mask & (1u << proto)) &&
            nccl_nvls_tree_cost(comm, op, proto, out) && out->alg_bw > 0) {
            double k = nvls_tree_correction(comm, nbytes);
            out->alg_bw *= k;
            out->bus_bw *= k;
            out->enabled = TRUE;
            out->time_us = out->latency_us + nbytes / (1000.0 * out->alg_bw);
        }
        return;
    }
    gboolean tree = algo == MS_NCCL_ALGO_TREE;
    /* Tree only for allreduce; nothing for one rank (v2.18 tuning.cc:137, 166-169). */
    if (op == MS_COLL_ALLTOALL || comm->n_ranks < 2 || (tree && op != MS_COLL_ALLREDUCE)) {
        return;
    }
    gboolean allowed = (comm->algo_mask & (1u << algo)) && (comm->proto_mask & (1u << proto));
    /* Through 2.18 the algorithm mask only restricts allreduce (v2.10 tuning.cc:200, v2.18
     * :296-297); from 2.19.1 it restricts every operation, and a ring it leaves an operation
     * with nothing comes back as the backup (v2.19.3 tuning.cc:301-317, v2.22.3 :321-335): for
     * reducescatter and allgather the ring unless NVLS is there (nvls_available). */
    if (!tree && op != MS_COLL_ALLREDUCE && !(comm->algo_mask & (1u << algo))) {
        MsNcclCost nvls;
        allowed = (comm->proto_mask & (1u << proto)) &&
                  (comm->version < V(2, 19, 0) || !nvls_available(comm, op, &nvls));
    }
    if (!allowed || (proto == MS_NCCL_PROTO_LL128 && !comm->ll128)) {
        return;
    }
    gint steps, inter_steps;
    ring_steps(comm, op, &steps, &inter_steps);
    out->bus_bw = bus_bandwidth(comm, op, algo, proto);
    /* Bus to algorithm bandwidth: n/steps for rings, 1/2 for trees (v2.18 tuning.cc:195-199). */
    double ratio = tree ? 0.5 : (double)comm->n_ranks / steps;
    out->alg_bw = out->bus_bw * ratio;
    step_latencies(comm, algo, proto, out);
    double lat = out->base_us;
    if (tree) {
        gint ppn = (gint)(comm->n_ranks / comm->n_nodes);
        lat += 2 * ((ppn - 1) * out->intra_us + nccl_log2i(comm->n_nodes) * out->inter_us);
    } else {
        lat += (steps - inter_steps) * out->intra_us + inter_steps * out->inter_us;
    }
    if (!(out->alg_bw > 0)) {
        return;
    }
    out->enabled = TRUE;
    /* ncclTopoGetAlgoTime (v2.18 tuning.cc:381-397): the tree correction (NCCL's log2i(0) is 0
     * until 2.21, -1 and no correction from 2.22.3, v2.22 tuning.cc:433-434), then the ring
     * plateau. */
    gint log_size = nccl_log2i(nbytes >> 6);
    if (log_size < 0 && comm->version < V(2, 22, 0)) {
        log_size = 0;
    }
    if (tree && log_size >= 0 && log_size < 23) {
        const double *row = comm->version < V(2, 10, 0) && proto == MS_NCCL_PROTO_LL128
                                ? tree_correction_ll128_28
                                : tree_correction[proto];
        out->alg_bw *= row[log_size];
        out->bus_bw *= row[log_size];
    }
    if (!tree && proto == MS_NCCL_PROTO_SIMPLE && comm->n_nodes > 1 && op == MS_COLL_ALLREDUCE) {
        /* x1.9 once nbytes >= nRanks/16 x 64 KiB until 2.17 (v2.10 tuning.cc:282-283); from
         * 2.18.1 x1.4 on SM80 and later (1.9 before) once each channel and rank has 64 bytes
         * (v2.18 tuning.cc:390-393). */
        if (comm->version < V(2, 18, 0)) {
            if ((double)nbytes >= comm->n_ranks / 16.0 * 65536) {
                lat *= 1.9;
            }
        } else if (nbytes / ((guint64)comm->channels * comm->n_ranks) >= 64) {
            lat *= comm->arch < 80 ? 1.9 : 1.4;
        }
    }
    out->latency_us = lat;
    out->time_us = lat + nbytes / (1000.0 * out->alg_bw);
}

/* Threads a channel runs (v2.18 tuning.cc:121-133): Ring/Simple 256 when the ring graph's
 * bandwidth is no more than one PCIe Gen3 x16 (PCI_BW 12), else 512; Tree/Simple and LL 512
 * (NCCL_SIMPLE_MAX_NTHREADS, NCCL_LL_MAX_NTHREADS), LL128 640 (NCCL_LL128_MAX_NTHREADS, v2.10
 * include/devcomm.h:50-53, 69).
 * Bytes per thread before one more channel or thread (NCCL_*_THREAD_THRESHOLD, v2.10
 * include/comm.h:29-31): LL 8 (x nRanks for rings, v2.18 tuning.cc:344), LL128 8, Simple 64. */
static guint
max_threads(const MsNcclComm *c, MsNcclAlgo a, MsNcclProto p)
{
    if (p == MS_NCCL_PROTO_LL128) {
        return 640;
    }
    if (p == MS_NCCL_PROTO_SIMPLE && a == MS_NCCL_ALGO_RING) {
        return c->bw_intra * c->graph_channels <= 12.0 ? 256 : 512;
    }
    return 512;
}

static guint64
thread_threshold(const MsNcclComm *c, MsNcclAlgo a, MsNcclProto p)
{
    if (p == MS_NCCL_PROTO_SIMPLE) {
        return 64;
    }
    return p == MS_NCCL_PROTO_LL && a == MS_NCCL_ALGO_RING ? 8u * c->n_ranks : 8;
}

/* Channels and threads for a call of nbytes (v2.10 enqueue.cc:408-434, v2.18 :1189-1221): drop
 * channels, then halve threads while fewer than nc x nt x threshold bytes; from 2.20.3 the two
 * reductions run one after the other (v2.22 enqueue.cc:1614-1650). Simple adds a sync warp to
 * rings and four warps to trees, at least 3 warps from 2.13.4; trees use all 640 threads from
 * 2.22.3 (v2.22 enqueue.cc:1655). */
static void
channels_threads(const MsNcclComm *c, MsNcclAlgo a, MsNcclProto p, guint64 nbytes,
                 MsNcclChoice *out)
{
    guint64 nc = c->channels, nt = max_threads(c, a, p), thr = thread_threshold(c, a, p);
    if (a == MS_NCCL_ALGO_NVLS || a == MS_NCCL_ALGO_NVLS_TREE) {
        /* comm->nvlsChannels at every size, NCCL_MAX_NTHREADS (v2.18.3 enqueue.cc:1203-1205,
         * tuning.cc:128-129). */
        out->channels = c->nvls_channels;
        out->threads = 640;
        return;
    }
    if (c->version < V(2, 20, 0)) {
        while (nbytes < nc * nt * thr) {
            if (nc >= 2) {
                nc--;
            } else if (nt % 128 == 0) {
                nt /= 2;
            } else {
                break;
            }
        }
    } else {
        while (nbytes < nc * nt * thr && nc >= 2) {
            nc--;
        }
        while (nbytes < nc * nt * thr && nt % 128 == 0) {
            nt /= 2;
        }
    }
    if (p == MS_NCCL_PROTO_SIMPLE) {
        /* Trees add two warps in 2.8 and 2.9 (v2.8.4 enqueue.cc:313-314, v2.9.9 :398-400), four
         * from 2.10 (v2.10 enqueue.cc:428-430). */
        guint tree_warps = c->version < V(2, 10, 0) ? 2 : 4;
        nt += a == MS_NCCL_ALGO_RING ? 32 : tree_warps * 32;
    }
    if (c->version >= V(2, 13, 0) && nt < 3 * 32) {
        nt = 3 * 32;
    }
    if (a == MS_NCCL_ALGO_TREE && c->version >= V(2, 22, 0)) {
        nt = 640;
    }
    out->channels = (guint)nc;
    out->threads = (guint)nt;
}

/* Bytes of one network message of a connection. A step of Simple is NCCL_BUFFSIZE / NCCL_STEPS
 * = 4 MiB / 8 (v2.10 init.cc:466-479, include/devcomm.h:31); allreduce, allgather and
 * reducescatter rings send sliceSteps = 2 steps at a time (v2.10 include/collectives.h:80-89),
 * trees one; the proxy sends stepSize x sliceSteps (v2.22 transport/net.cc:1278-1280). An LL step
 * is 512 KiB / 8 = 64 KiB of lines carrying half as much data, an LL128 step 4915200 / 8 =
 * 614400 bytes carrying 120/128 of it (v2.10 init.cc:464-465, include/devcomm.h:33-73). A call
 * smaller than that sends what one rank has for one channel and step, in the protocol's lines. */
static guint64
message_bytes(const MsNcclComm *c, MsNcclAlgo a, MsNcclProto p, guint64 nbytes, guint nc)
{
    guint64 parts = (guint64)nc * (a == MS_NCCL_ALGO_RING ? c->n_ranks : 1);
    guint64 data = (nbytes + parts - 1) / parts;
    switch (p) {
    case MS_NCCL_PROTO_LL:
        return MIN((guint64)65536, 2 * ((data + 7) / 8 * 8));
    case MS_NCCL_PROTO_LL128:
        return MIN((guint64)614400, (data + 119) / 120 * 128);
    default:
        return MIN((guint64)(a == MS_NCCL_ALGO_RING ? 1u << 20 : 1u << 19), MAX(data, 1));
    }
}

gboolean
ms_nccl_choose(const MsNcclComm *comm, MsCollOp op, guint64 nbytes, MsNcclChoice *out)
{
    g_return_val_if_fail(comm != NULL && out != NULL, FALSE);
    *out = (MsNcclChoice){0};
    gboolean found = FALSE;
    /* The first pair of least time in NCCL's order, tree before ring before NVLS before NVLS_TREE
     * and LL before LL128 before Simple (v2.18 enqueue.cc:1153-1187). */
    for (guint a = 0; a < MS_NCCL_N_ALGOS; a++) {
        for (guint p = 0; p < MS_NCCL_N_PROTOS; p++) {
            MsNcclCost cost;
            ms_nccl_cost(comm, op, a, p, nbytes, &cost);
            if (cost.enabled && (!found || cost.time_us < out->cost.time_us)) {
                out->algo = a;
                out->proto = p;
                out->cost = cost;
                found = TRUE;
            }
        }
    }
    if (!found) {
        return FALSE;
    }
    channels_threads(comm, out->algo, out->proto, nbytes, out);
    out->message = message_bytes(comm, out->algo, out->proto, nbytes, out->channels);
    return TRUE;
}
