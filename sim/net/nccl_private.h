/* nccl_private: what the nccl_*.c files share and nccl.h does not show: NCCL's path types, the
 * lookup of a constant that changed from one release to another, and the hardware latency table
 * both the tuning model (nccl_tune.c) and point-to-point (nccl_p2p.c) read. Not part of the
 * library's interface. */
#pragma once

#include "nccl.h"

#define V MS_NCCL_VERSION

/* NCCL's path types (v2.18 src/graph/topo.h:54-81), in their order. 2.26 and 2.27 insert C2C and
 * P2C, which no moesim topology produces: only the order matters here. */
typedef enum {
    NCCL_PATH_LOC,
    NCCL_PATH_NVL,
    NCCL_PATH_NVB,
    NCCL_PATH_PIX,
    NCCL_PATH_PXB,
    NCCL_PATH_PXN,
    NCCL_PATH_PHB,
    NCCL_PATH_SYS,
} NcclPath;

/* The hardware rows of the latency tables (v2.18 src/graph/tuning.cc:62-64). */
typedef enum { NCCL_HW_NVLINK, NCCL_HW_PCI, NCCL_HW_NET } NcclHw;

/* A constant that changed between releases: the value from release `from` on. A table lists the
 * bands in increasing order; nccl_band picks the last one whose `from` is not after version. */
typedef struct {
    guint from;
    double v[3];
} NcclBand;

const double *nccl_band(const NcclBand *bands, guint n, guint version);
#define NCCL_BAND(table, version) nccl_band(table, G_N_ELEMENTS(table), version)

/* NCCL's log2i: the floor of log2(n), -1 for 0. */
gint nccl_log2i(guint64 n);

/* MAXCHANNELS of the release: 32, 64 from 2.25. */
guint nccl_max_channels(guint version);

/* hwLat[hw][algo][proto] and baseLat[algo][proto] of the release, microseconds. */
double nccl_hw_latency(guint version, NcclHw hw, MsNcclAlgo algo, MsNcclProto proto);
double nccl_base_latency(guint version, MsNcclAlgo algo, MsNcclProto proto);

/* NCCL's view of the GPUs of one node that a communicator uses (what its topology detection and
 * path computation give, graph/topo.cc and paths.cc), built from a moesim topology. Bandwidths
 * are NCCL's figures in GB/s: links x the NVLink figure, PCIe by ms_nccl_pci_bw, a NIC's line
 * rate / 8, INFINITY for a link the topology leaves unlimited. The links paths cross are the
 * "slots" whose bandwidth a ring or tree channel consumes. */
typedef struct {
    guint n_gpus;
    guint *rank; /* topology ranks of the node's GPUs, ascending */
    guint n_slots;
    double *slot_bw;        /* NCCL's figure of each link a path crosses */
    gboolean *slot_pci;     /* whether that link is PCIe (NCCL's LINK_PCI) */
    gboolean intel_cpu;     /* the node's CPUs are Intel x86 (not AMD): INTEL_P2P_OVERHEAD */
    double intel_p2p;       /* INTEL_P2P_OVERHEAD of the release: 12/9 in 2.8, 6/5 from 2.9 */
    NcclPath *type;         /* [i * n + j]: path type from GPU i to GPU j */
    double *bw;             /* [i * n + j]: the path's bandwidth (its narrowest link) */
    guint *path_off, *path; /* slots of path i->j: path[path_off[k] .. path_off[k + 1]) */
    double total_bw;        /* NCCL's totalBw: a GPU's NVLink bandwidth, or its PCIe link's */
    double max_bw;          /* NCCL's maxBw without NICs: the best GPU-to-GPU path */
    gboolean all_nvlink;    /* every pair NVL or NVB (ncclTopoPathAllNVLink) */
    gboolean nvswitch;      /* every pair through one NVSwitch: nvs_up/nvs_down per GPU */
    double *nvs_up, *nvs_down;
    /* The node's NICs, when the communicator spans nodes. */
    guint n_nics;
    double *nic_bw;     /* line rate / 8 */
    double *nic_pci;    /* narrowest link between the NIC and its closest GPU, INFINITY if none */
    guint *nic_gpu;     /* that closest GPU (index in rank[]) */
    NcclPath *nic_type; /* type of that path */
    double *gpu_net_bw; /* per GPU: bandwidth to its closest NICs together (p2p channels) */
    guint *gpu_nets;    /* per GPU: how many NICs are that close */
    double *gpu_cpu_bw; /* per GPU: its PCIe link to a CPU, 0 when it has none */
} NcclNode;

/* Builds the view of `n` GPU ranks of one node; with_nics adds the node's NICs. FALSE with
 * MS_NCCL_ERROR_TOPOLOGY when two of the GPUs have no route or with_nics finds no NIC. */
gboolean nccl_node_build(NcclNode *node, const MsTopology *topo, const guint *ranks, guint n,
                         gboolean with_nics, guint version, guint arch, GError **error);
void nccl_node_clear(NcclNode *node);

/* Channels of `speed` GB/s that fit the node's GPU-to-GPU paths with hops of type at most
 * max_type, at most max_channels (nccl_pack.c): cycles through all GPUs when starts is NULL,
 * else paths through all GPUs, channel c starting at GPU starts[c] (the GPU its NIC enters),
 * as many of them in order as fit. A single GPU fits max_channels. */
guint nccl_pack_rings(const NcclNode *node, double speed, NcclPath max_type, guint max_channels,
                      const guint *starts);
/* Channels of `speed` NIC k carries in and out: a ring's or, ring FALSE, a tree's. */
guint nccl_pack_nic(const NcclNode *node, guint k, double speed, gboolean ring, guint arch);

/* One graph search (nccl_graph.c): a ring, or a tree of exactly min_channels channels. */
typedef struct {
    guint version, arch;
    gboolean with_nics, tree;
    guint min_channels, max_channels;
} NcclSearch;

typedef struct {
    guint channels;
    double bw_intra, bw_inter; /* GB/s per channel */
    NcclPath type_intra;
} NcclGraph;

void nccl_search(const NcclNode *node, const NcclSearch *search, NcclGraph *graph);

/* NVLS (nccl_nvls.c). The speed of the NVLS graph of a node whose GPUs all reach one NVSwitch
 * (nccl_graph.c), 0 when none fits; whether NCCL enables NVLS on the communicator, and its
 * channels; the tuning model's bandwidth and latency of NVLS for an operation (FALSE when it
 * does not apply). */
double nccl_nvls_speed(const NcclNode *node, guint version, guint arch, double *bw_inter);
/* The same searched with the node's NICs (NVLS_TREE across nodes): bwIntra, 0 when none fits,
 * with bwInter and the channels (one NVLS head each). */
double nccl_nvls_speed_nets(const NcclNode *node, guint version, guint arch, double *bw_inter,
                            guint *channels);
/* Called for each node of the communicator in turn (first for the first): across nodes the
 * fewest channels and the least bandwidth, NVLS off when one node has none. */
void nccl_nvls_init(MsNcclComm *c, const NcclNode *node, gboolean multicast, gboolean first);
gboolean nccl_nvls_cost(const MsNcclComm *c, MsCollOp op, MsNcclProto proto, MsNcclCost *out);
/* NVLS_TREE's allreduce across nodes (FALSE when it does not apply), before the size-dependent
 * factor ms_nccl_cost applies. */
gboolean nccl_nvls_tree_cost(const MsNcclComm *c, MsCollOp op, MsNcclProto proto, MsNcclCost *out);
