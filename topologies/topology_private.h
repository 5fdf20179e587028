/* topology_private: the body of MsTopology and the builder shared by the files of the topology
 * module (model, loaders, routes, flows). Not installed, not for other modules: they see only
 * topology.h. Sizes are bounded here so that every loader refuses absurd inputs before it
 * allocates anything. */
#pragma once

#include "sim/base/ini.h"
#include "topology.h"

G_BEGIN_DECLS

/* Limits: far beyond any machine moesim models (a 65536-GPU cluster), small enough that a file
 * asking for more is refused before any allocation. */
#define TOPO_MAX_GPUS 65536u
#define TOPO_MAX_NODES 65536u
#define TOPO_MAX_GPUS_PER_NODE 1024u
#define TOPO_MAX_DEVICES (1u << 20)
#define TOPO_MAX_LINKS (1u << 22)
/* An explicit description (a file's [device] and [link] groups), counted in the file's text before
 * it is parsed: about twice the largest cluster moesim models written out (65536 GPUs, a NIC
 * each, 8192 NVSwitch nodes under 256 leaves: 139,600 devices and 213,000 links). A file at these
 * limits (43 MB) peaks at 1.35 GB before it is refused or built; 2.1 million devices in 64 MiB,
 * refused from this count, at 69 MB (docs/performance.md, "Memory limits"). */
#define TOPO_MAX_FILE_DEVICES (1u << 18)
#define TOPO_MAX_FILE_LINKS (1u << 19)
#define TOPO_MAX_LINK_COUNT 1024u
#define TOPO_MAX_NAME 64u
/* Routes (computed or given) have at most this many links. */
#define TOPO_MAX_HOPS 64

#define TOPO_NONE G_MAXUINT32

/* Spellings of the enums in files, NULL-terminated, indexed by enum value. */
extern const char *const topo_class_names[MS_LINK_N_CLASSES + 1];
extern const char *const topo_kind_names[];
/* The preset's choices (topology_preset.c): intra, nics, fabric, fabric_routing. */
extern const char *const topo_intra_names[];
extern const char *const topo_nics_names[];
extern const char *const topo_fabric_names[];
extern const char *const topo_routing_names[];
/* Index of name in a NULL-terminated table, or -1. */
gint topo_name_index(const char *const *names, const char *name);

typedef struct {
    const char *name; /* in the topology's string chunk */
    MsDeviceKind kind;
    gint node; /* -1: outside any node */
    gint rank; /* -1: not a GPU */
} TopoDevice;

typedef struct {
    guint count;           /* physical links bundled in this directed link */
    MsBandwidth select_bw; /* figures as loaded: routes are chosen on these, so a calibration */
    MsTime select_lat;     /* applied later never changes which path a pair takes */
} TopoLinkExtra;

typedef struct {
    guint32 src, dst, n;
    guint32 *links;
} TopoGivenRoute;

/* Routes from one source to every device: links[start[d] .. start[d+1]) is the route to d when
 * reach[d]. Allocated once, never changed or moved after it is published. */
typedef struct {
    guint32 *start;
    guint32 *links;
    guint8 *reach;
} TopoRouteTable;

typedef struct _TopoScratch TopoScratch;

/* How a fat tree spreads traffic over its equal-cost spines (docs/topology.md, "Fat trees"). */
typedef enum {
    TOPO_SPREAD_D_MOD_K, /* by destination: the destination NIC's leaf port modulo the spines */
    TOPO_SPREAD_ECMP,    /* by a fixed hash of the (source, destination) device pair */
} TopoSpread;

/* The shape of a preset, recorded as it is built, so that a route between two GPUs is computed
 * from it in constant time (topology_shape.c) instead of searched: per-source route tables cost
 * devices x GPUs of memory once every GPU sends, which at 16384 GPUs does not fit. Every node of
 * a preset has the same links in the same order, so node k's link with local offset o is
 * k x node_links + o; the offsets below are node 0's. */
typedef struct {
    guint gpn, nics_per_node;
    guint intra;        /* 0 none, 1 through a node switch, 2 NVLink mesh */
    gboolean per_gpu;   /* NIC i of a node serves GPU i, else one NIC serves them all */
    guint32 node_links; /* links per node */
    guint32 *intra_up;  /* [gpn] gpu -> node switch */
    guint32 *intra_dn;  /* [gpn] node switch -> gpu */
    guint32 *mesh;      /* [gpn x gpn] gpu a -> gpu b */
    guint32 *gpu_nic;   /* [gpn] gpu -> its NIC */
    guint32 *nic_gpu;   /* [gpn] its NIC -> gpu */
    guint32 *nic_up;    /* [nics_per_node] NIC -> network */
    guint32 *nic_dn;    /* [nics_per_node] network -> NIC */
    /* Fat tree; n_leaves 0 for a switch fabric or no network. Leaves are grouped in pods of
     * pod_leaves (all leaves with two tiers); each leaf links to the `spines` spines of its pod,
     * spine j of every pod to the core_group cores of group j (no cores: core_group 0). */
    gboolean rail;            /* a leaf per rail per group of nodes */
    guint per_leaf, n_leaves; /* nodes a leaf serves, leaves */
    guint leaf_ports;         /* NIC ports of a leaf */
    guint spines;             /* per pod; 0 with a single leaf */
    guint pod_leaves, n_pods, core_group;
    TopoSpread spread;
    guint32 first_spine_link; /* leaf k -> spine j of its pod: + 2 (k spines + j) */
    guint32 first_core_link;  /* spine i -> core c of its group: + 2 (i core_group + c) */
} TopoShape;

/* GPU-to-GPU routes of a preset, in blocks of TOPO_BLOCK destination ranks per source rank:
 * links[start[i] .. start[i+1]) is the route to the block's i-th rank. Built on first use,
 * published with an atomic pointer store, never changed or moved after. */
#define TOPO_BLOCK 64u
typedef struct {
    guint32 start[TOPO_BLOCK + 1];
    guint32 links[];
} TopoRouteBlock;

struct _MsTopology {
    char *name;
    char *description;
    char *source; /* the file it was read from, "topology NAME" for a shipped one, or NULL */
    char *gpu_model;
    MsGpuSpec gpu;
    GStringChunk *strings;
    GArray *devices;          /* TopoDevice */
    GHashTable *device_index; /* name -> index + 1 */
    GArray *links;            /* MsLink */
    GArray *link_extra;       /* TopoLinkExtra, parallel to links */
    GHashTable *link_index;   /* "from->to" -> index + 1 */
    GArray *given;            /* TopoGivenRoute, sorted by (src, dst) after finishing */
    /* Derived by topo_finish. */
    guint *gpu_devices; /* rank -> device */
    guint n_gpus, n_nodes, gpus_per_node, nics_per_node;
    gboolean multicast;      /* the NVSwitches take multicast and in-switch reductions (presets) */
    MsTime nccl_net_latency; /* what NCCL's net plugin reports for the NICs (presets) */
    guint32 *out_start;      /* CSR of outgoing links per device */
    guint32 *out_links;
    guint32 *node_start; /* CSR of devices per node */
    guint32 *node_devices;
    /* Route cache: one table per source, published with an atomic pointer store. */
    GMutex route_lock;
    TopoRouteTable **routes;
    TopoScratch *scratch;         /* search state reused under route_lock */
    TopoShape *shape;             /* presets only */
    TopoRouteBlock ***gpu_blocks; /* presets: per source rank, its blocks (both lazily) */
};

/* Builder, used by the loaders in this order: topo_new, topo_add_device..., topo_add_link...,
 * topo_add_given_route..., topo_finish. Devices and links are refused (FALSE) when the name is
 * already taken; the loader reports that with the file location. */
MsTopology *topo_new(const char *name, const char *description, const MsGpuSpec *gpu);
gboolean topo_add_device(MsTopology *topo, const char *name, MsDeviceKind kind, gint node,
                         guint *index);
/* bandwidth is the directed link's total (count physical links together). */
gboolean topo_add_link(MsTopology *topo, guint from, guint to, MsBandwidth bandwidth, guint count,
                       MsTime latency, MsLinkClass klass);
/* Looks a directed link up by its end devices. */
gboolean topo_find_link(const MsTopology *topo, guint from, guint to, guint *link);
/* Takes ownership of links. */
void topo_add_given_route(MsTopology *topo, guint src, guint dst, guint32 *links, guint n);
/* Derives ranks, node tables and adjacency. The loaders have checked that there is a GPU and
 * that nodes are numbered 0..N-1 with a GPU each. */
void topo_finish(MsTopology *topo);

/* Checks that every GPU reaches every other GPU (by a computed or a given route). On failure
 * returns FALSE with *src and *dst set to the first unreachable pair of ranks. */
gboolean topo_check_connected(MsTopology *topo, guint *src, guint *dst);
void topo_routes_clear(MsTopology *topo);

static inline const TopoDevice *
topo_dev(const MsTopology *topo, guint d)
{
    return &g_array_index(topo->devices, TopoDevice, d);
}

static inline const MsLink *
topo_link(const MsTopology *topo, guint i)
{
    return &g_array_index(topo->links, MsLink, i);
}

/* Parsing helpers shared by the loaders (topology_load.c). Errors carry FILE:LINE: [group] key.
 * topo_error sets a MS_TOPOLOGY_ERROR with that location. */
void topo_error(const MsIni *ini, const char *group, const char *key, GError **error,
                MsTopologyError code, const char *format, ...) G_GNUC_PRINTF(6, 7);
/* The range of a field of the file (topology_load.c's table); where is the group as the table
 * names it ("[preset]", "[link FROM TO]"). */
const MsRange *topo_field(const char *where, const char *key);
/* A bandwidth with a unit in range, or "unlimited" (INFINITY) when allow_unlimited. Absent:
 * MISSING when required, else *out is left alone. */
gboolean topo_get_bandwidth(const MsIni *ini, const char *group, const MsRange *range,
                            gboolean required, gboolean allow_unlimited, MsBandwidth *out,
                            GError **error);
/* The blank-separated words of a group header ("link a b" -> {"link", "a", "b"}), NULL-ended;
 * free with g_strfreev. Groups are checked to have the right number of words before use. */
char **topo_group_words(const char *group);
/* The device a group header names, or a MS_TOPOLOGY_ERROR_INVALID at that group. */
gboolean topo_group_device(const MsTopology *topo, const MsIni *ini, const char *group,
                           const char *name, guint *device, GError **error);
/* Device names: 1..TOPO_MAX_NAME characters of [A-Za-z0-9._-]. */
gboolean topo_valid_name(const char *name);

/* Preset shapes (topology_shape.c). A route between GPU ranks from the shape alone, into out
 * (at least TOPO_SHAPE_HOPS entries); returns its length. */
#define TOPO_SHAPE_HOPS 8
guint topo_shape_gpu_route(const MsTopology *topo, guint src_rank, guint dst_rank, guint32 *out);
/* Moves the spine hop of a searched route from src to dst (leaf -> spine -> leaf) onto the spine
 * the fabric's spreading picks; routes without one are left alone. */
void topo_shape_respine(const MsTopology *topo, guint src, guint dst, guint32 *links, guint n);
/* The spine index j (within a pod) and core c (within group j) a fat tree sends traffic from
 * device src to device dst through (dst: a GPU, a NIC or, for routes that end at a switch, that
 * switch). */
void topo_shape_pick(const TopoShape *shape, const MsTopology *topo, guint src, guint dst,
                     guint *spine, guint *core);
void topo_shape_free(TopoShape *shape);

/* The two forms. Both return an unfinished topology (devices and links only). */
MsTopology *topo_build_preset(const MsIni *ini, const char *name, const char *description,
                              const MsGpuSpec *gpu, GError **error);
MsTopology *topo_build_explicit(const MsIni *ini, const char *name, const char *description,
                                const MsGpuSpec *gpu, GError **error);
/* A preset's nodes and GPUs per node, read and range-checked as topo_build_preset reads them. */
gboolean topo_preset_shape(const MsIni *ini, guint *nodes, guint *gpus_per_node, GError **error);

G_END_DECLS
