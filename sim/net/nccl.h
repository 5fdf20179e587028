/* nccl: NCCL's own model of how it runs a collective, as its source states it, per version
 * (2.8 to 2.30): what its topology detection sees (link bandwidths per GPU architecture), what
 * its graph search concludes (rings: channels and bandwidth per channel), how many channels and
 * which algorithm and protocol it picks for a call of a given size (src/graph/tuning.cc), with the
 * latency and bandwidth its tuning model predicts for each choice, and how it cuts point-to-point
 * transfers (channels per peer, chunk and network message sizes). Pure functions of a topology
 * and a configuration; the flow model (sim/net/collective.c) executes what this decides. Times in
 * microseconds and bandwidths in GB/s (10^9 bytes/s) here, as NCCL's tables are. */
#pragma once

#include <glib.h>

#include "sim/schedule/coll_names.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

#define MS_NCCL_ERROR (ms_nccl_error_quark())
GQuark ms_nccl_error_quark(void);
typedef enum {
    MS_NCCL_ERROR_VERSION, /* a version outside those modelled */
    MS_NCCL_ERROR_ARCH,    /* a GPU architecture that cannot be told or is not modelled */
    MS_NCCL_ERROR_CONFIG,  /* a configuration value out of range, or masks that allow nothing */
    MS_NCCL_ERROR_TOPOLOGY /* ranks NCCL could not build rings over (no route, no NIC) */
} MsNcclError;

/* NCCL_VERSION_CODE of a release: major * 10000 + minor * 100 + patch (2.10.3 = 21003). The
 * modelled range, and the default: the release PyTorch 2.x wheels shipped most (2.18.x). */
#define MS_NCCL_VERSION(major, minor, patch) ((major)*10000 + (minor)*100 + (patch))
#define MS_NCCL_VERSION_MIN MS_NCCL_VERSION(2, 8, 0)
#define MS_NCCL_VERSION_MAX MS_NCCL_VERSION(2, 30, 99)
#define MS_NCCL_VERSION_DEFAULT MS_NCCL_VERSION(2, 18, 6)
/* The default on Blackwell (SM100 and later): the first release with its own figures (2.25.1:
 * NVLink 40 GB/s per link, its bandwidth caps, NVLS; before it NCCL takes a B200 for a Hopper at
 * half its NVLink rate), not 2.18.6, which predates the GPU. */
#define MS_NCCL_VERSION_DEFAULT_SM100 MS_NCCL_VERSION(2, 25, 1)
/* The release a spec without a version runs at on GPUs of architecture arch. */
guint ms_nccl_default_version(guint arch);
/* A network spec's version=log: each measured row runs at the release its log printed
 * (validate/calibrate.h, ms_calibrate_row_model), the default where it printed none. Never a
 * communicator's version. */
#define MS_NCCL_VERSION_LOG 1u

typedef enum {
    MS_NCCL_ALGO_TREE,
    MS_NCCL_ALGO_RING,
    MS_NCCL_ALGO_NVLS,      /* NVLink SHARP: the NVSwitch reduces and multicasts (one node) */
    MS_NCCL_ALGO_NVLS_TREE, /* NVLS in each node, a tree of its NVLS heads across nodes */
    MS_NCCL_N_ALGOS,
} MsNcclAlgo;

typedef enum {
    MS_NCCL_PROTO_LL,
    MS_NCCL_PROTO_LL128,
    MS_NCCL_PROTO_SIMPLE,
    MS_NCCL_N_PROTOS,
} MsNcclProto;

const char *ms_nccl_algo_name(MsNcclAlgo algo);    /* "tree", "ring", "nvls", "nvlstree" */
const char *ms_nccl_proto_name(MsNcclProto proto); /* "LL", "LL128", "Simple" */
gboolean ms_nccl_algo_from_name(const char *name, MsNcclAlgo *out);   /* case-insensitive */
gboolean ms_nccl_proto_from_name(const char *name, MsNcclProto *out); /* case-insensitive */

/* Parses "2.18", "2.18.6" or a version code ("21806"); a minor alone ("2.18") stands for its
 * newest patch release (code 21899), so that every rule a patch of it introduced applies. FALSE
 * for anything else or a version outside [MS_NCCL_VERSION_MIN, MS_NCCL_VERSION_MAX]. */
gboolean ms_nccl_parse_version(const char *text, guint *version);

/* What the user (or a calibration) tells NCCL. Zero-initialised fields take NCCL's defaults. */
typedef struct {
    guint version;      /* 0: MS_NCCL_VERSION_DEFAULT */
    guint arch;         /* GPU SM version: 70, 75, 80, 86, 89, 90, 100; 0: from the GPU model */
    gboolean amd_cpu;   /* hosts with AMD CPUs: NCCL's llMaxBw row and network overhead */
    guint algo_mask;    /* NCCL_ALGO: bit (1 << MsNcclAlgo) set = allowed; 0: NCCL's default */
    guint proto_mask;   /* NCCL_PROTO: bit (1 << MsNcclProto) set = allowed; 0: NCCL's default */
    guint min_channels; /* NCCL_MIN_NCHANNELS; 0: unset */
    guint max_channels; /* NCCL_MAX_NCHANNELS; 0: unset */
    guint net_peer_channels; /* NCCL_NCHANNELS_PER_NET_PEER; 0: the version's default */
} MsNcclConfig;

/* The SM version of a GPU model name as topologies spell it ("A100-SXM4-80GB" 80, "H100..." and
 * "H200..." 90, "V100..." 70, "B200"/"GB200" 100, "RTX 2080 Ti" 75, "RTX 4090" 89, "L40..." 89,
 * "A10"/"A40"/"RTX 3090" 86); FALSE when the name says nothing known. */
gboolean ms_nccl_arch_of_model(const char *model, guint *arch);

/* Link bandwidth as NCCL's topology detection counts it, GB/s per direction (graph/topo.h): one
 * NVLink of that architecture under that version (SM80: 21 in 2.8-2.9, 22 in 2.10-2.17, 20 from
 * 2.18 ...); a
 * PCIe link whose nominal (datasheet) bandwidth is nominal_gbps (NCCL counts lanes x GT/s / 80:
 * a Gen4 x16 link of 31.5 GB/s is 24); a NIC port of that line rate (Gb/s / 8). */
double ms_nccl_nvlink_bw(guint arch, guint version);
double ms_nccl_pci_bw(double nominal_gbps);

/* A communicator: what NCCL concludes at ncclCommInit for these ranks of the topology. */
typedef struct {
    guint version, arch;
    gboolean amd_cpu;
    guint n_ranks, n_nodes, ppn; /* ppn: ranks per node (the most on one node) */
    gboolean intra_nvlink;       /* the ring graph's intra-node hops are NVLink (else PCIe) */
    double net_latency_us;       /* graphs' latencyInter: the net plugin's latency, 0 on one node */
    const char *intra_path;      /* the ring graph's intra-node path type as NCCL prints it
                                  * ("NVL", "NVB", "PIX", "PXB", "PXN", "PHB", "SYS"; static) */
    gboolean ll128;              /* LL128 enabled by NCCL's rule for this machine and version */
    guint graph_channels;        /* ring graph search result, before any duplication */
    double bw_intra, bw_inter;   /* the graph's bandwidth per channel, GB/s */
    /* The tree graph (searched with the ring's channel count): its bandwidth per channel, which
     * NCCL raises inside the node when it can, and whether its pattern is the simple tree (the
     * search fell back from the balanced one, the tuning model then takes 15% off; or 2.8 and
     * 2.9 asked for it on two nodes) or, in 2.8 and 2.9 on GPUs before SM80, the split tree. */
    guint tree_channels;
    double tree_bw_intra, tree_bw_inter;
    gboolean tree_simple, tree_split;
    /* NVLS (nccl_nvls.c): comm->nvlsChannels, 0 when NCCL does not enable it here, and the NVLS
     * graph's channels and bandwidth per channel: on one node NVLS's, across nodes NVLS_TREE's
     * (the graph then searched with the NICs, one NVLS head per channel). */
    guint nvls_channels, nvls_graph_channels;
    double nvls_bw, nvls_bw_inter; /* the graph's bwIntra and bwInter, GB/s per channel */
    guint channels;                /* comm->nChannels: after duplication and the user limits */
    guint p2p_channels;            /* comm->p2pnChannels */
    guint p2p_channels_per_peer;   /* comm->p2pnChannelsPerPeer */
    guint algo_mask, proto_mask;   /* what the configuration allows */
} MsNcclComm;

/* Runs NCCL's detection and ring search over ranks (topology GPU ranks; NULL = 0..n-1) and fills
 * out. FALSE with MS_NCCL_ERROR for a version or architecture not modelled, configuration values
 * out of range, or ranks on several nodes without a NIC path. */
gboolean ms_nccl_comm_init(MsNcclComm *out, const MsTopology *topo, const guint *ranks, guint n,
                           const MsNcclConfig *cfg, GError **error);

/* The tuning model's view of one (algorithm, protocol) for an operation over the communicator:
 * its latency and its algorithm bandwidth (tuning.cc: comm->latencies and comm->bandwidths), and
 * the predicted time of a call of nbytes (nccl-tests size) with the size-dependent corrections of
 * ncclTopoGetAlgoTime (tree correction factors, the ring plateau). enabled is FALSE when the pair
 * does not apply (tree for other ops than allreduce, LL128 off, a mask) or has no bandwidth. */
typedef struct {
    gboolean enabled;
    double latency_us; /* whole-call latency the model charges */
    double base_us;    /* its fixed part (baseLat) */
    double intra_us;   /* per intra-node step (hwLat with the version's corrections) */
    double inter_us;   /* per inter-node step */
    double bus_bw;     /* bus bandwidth, GB/s */
    double alg_bw;     /* algorithm bandwidth, GB/s: what time divides nbytes by */
    double time_us;    /* latency + nbytes / alg_bw, with the corrections */
} MsNcclCost;

void ms_nccl_cost(const MsNcclComm *comm, MsCollOp op, MsNcclAlgo algo, MsNcclProto proto,
                  guint64 nbytes, MsNcclCost *out);

/* NCCL's choice for a call: the enabled pair of least predicted time, and the channels and
 * threads it runs with at that size (enqueue.cc's reduction for small sizes). For the flow
 * model, also the bytes NCCL puts in one network message per connection step (the proxy's send
 * size: a Simple ring step is stepSize x sliceSteps, LL and LL128 one step of their buffers,
 * smaller when the call is). FALSE for alltoall (see ms_nccl_p2p) or when no pair is enabled. */
typedef struct {
    MsNcclAlgo algo;
    MsNcclProto proto;
    MsNcclCost cost;
    guint channels;  /* used at this size, 1..comm->channels */
    guint threads;   /* per channel */
    guint64 message; /* bytes per network message of one connection */
} MsNcclChoice;

gboolean ms_nccl_choose(const MsNcclComm *comm, MsCollOp op, guint64 nbytes, MsNcclChoice *out);

/* How NCCL moves one send of nbytes to a peer inside a grouped send/receive (all-to-all): the
 * channels it spreads over, the chunk the kernel moves per step, the bytes of one network
 * message (a network connection's step: the chunk, or a quarter or half of it for small sends),
 * the protocol (LL for small intra-node sends from 2.14), and the most peers one channel serves
 * at once. */
typedef struct {
    guint channels;          /* channels this send uses (pieces) */
    guint64 chunk;           /* bytes per kernel step */
    guint64 message;         /* bytes per network message; 0 for a peer on the same node */
    MsNcclProto proto;       /* LL or Simple */
    guint peers_per_channel; /* concurrent peer operations one channel runs */
    double latency_us;       /* per send: the protocol's hop latency over that transport */
} MsNcclP2p;

void ms_nccl_p2p(const MsNcclComm *comm, guint64 nbytes, gboolean same_node, MsNcclP2p *out);

/* One node's place in one of NCCL's two trees across nodes (src/graph/trees.cc): its parent and
 * two children (node indices, nodes in the order of their first rank; -1: none), and whether it
 * is its parent's first (0) or second (1) child, which picks the GPU of the parent's node it
 * connects to (src/graph/connect.cc connectTrees). The root has no parent (child_type 0). */
typedef struct {
    gint up;
    gint down[2];
    guint child_type;
} MsNcclTreeNode;

/* NCCL's double binary tree (ncclGetDtree) over n_nodes nodes, as node `node` sees it: t0 the
 * tree of the first half of the channels, t1 that of the second. */
void ms_nccl_dtree(guint n_nodes, guint node, MsNcclTreeNode *t0, MsNcclTreeNode *t1);

G_END_DECLS
