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
#define TOPO_MAX_LINK_COUNT 1024u
#define TOPO_MAX_NAME 64u
/* A link latency above this is a typo (ms for us), not a machine. */
#define TOPO_MAX_LATENCY MS_PS_PER_S
/* Routes (computed or given) have at most this many links. */
#define TOPO_MAX_HOPS 64

#define TOPO_NONE G_MAXUINT32

/* Spellings of the enums in files, NULL-terminated, indexed by enum value. */
extern const char *const topo_class_names[MS_LINK_N_CLASSES + 1];
extern const char *const topo_kind_names[];
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

struct _MsTopology {
    char *name;
    char *description;
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
    guint32 *out_start; /* CSR of outgoing links per device */
    guint32 *out_links;
    guint32 *node_start; /* CSR of devices per node */
    guint32 *node_devices;
    /* Route cache: one table per source, published with an atomic pointer store. */
    GMutex route_lock;
    TopoRouteTable **routes;
    TopoScratch *scratch; /* search state reused under route_lock */
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
/* A bandwidth with a unit, or "unlimited" (INFINITY) when allow_unlimited. Absent: MISSING when
 * required, else *out is left alone. */
gboolean topo_get_bandwidth(const MsIni *ini, const char *group, const char *key, gboolean required,
                            gboolean allow_unlimited, MsBandwidth *out, GError **error);
/* A link latency with a unit, at most TOPO_MAX_LATENCY. */
gboolean topo_get_latency(const MsIni *ini, const char *group, const char *key, gboolean required,
                          MsTime *out, GError **error);
/* One of names (NULL-terminated); *out is its index. */
gboolean topo_get_enum(const MsIni *ini, const char *group, const char *key, gboolean required,
                       const char *const *names, guint *out, GError **error);
/* The blank-separated words of a group header ("link a b" -> {"link", "a", "b"}), NULL-ended;
 * free with g_strfreev. Groups are checked to have the right number of words before use. */
char **topo_group_words(const char *group);
/* The device a group header names, or a MS_TOPOLOGY_ERROR_INVALID at that group. */
gboolean topo_group_device(const MsTopology *topo, const MsIni *ini, const char *group,
                           const char *name, guint *device, GError **error);
/* Device names: 1..TOPO_MAX_NAME characters of [A-Za-z0-9._-]. */
gboolean topo_valid_name(const char *name);

/* The two forms. Both return an unfinished topology (devices and links only). */
MsTopology *topo_build_preset(const MsIni *ini, const char *name, const char *description,
                              const MsGpuSpec *gpu, GError **error);
MsTopology *topo_build_explicit(const MsIni *ini, const char *name, const char *description,
                                const MsGpuSpec *gpu, GError **error);

G_END_DECLS
