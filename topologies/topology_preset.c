/* topology_preset: the [preset] form. N nodes x G GPUs with NVSwitch, an NVLink mesh or a PCIe
 * switch inside the node, NICs per GPU or per node, a non-blocking switch or a two-level fat tree
 * between nodes. Bandwidths bytes/s per direction, latencies per link; see docs/topology.md for
 * the graph each choice builds. Keys that do not apply to the chosen shape are refused. */
#include "topology_private.h"

#include <string.h>

typedef enum { INTRA_NONE, INTRA_NVSWITCH, INTRA_NVLINK_MESH, INTRA_PCIE_SWITCH } Intra;
typedef enum { NICS_NONE, NICS_PER_GPU, NICS_PER_NODE } Nics;
typedef enum { FABRIC_SWITCH, FABRIC_FAT_TREE } Fabric;

static const char *const intra_names[] = {"none", "nvswitch", "nvlink_mesh", "pcie_switch", NULL};
static const char *const nics_names[] = {"none", "per_gpu", "per_node", NULL};
static const char *const fabric_names[] = {"switch", "fat_tree", NULL};

typedef struct {
    guint64 nodes, gpn;
    guint intra, nics, fabric;
    MsBandwidth intra_bw;
    MsTime intra_lat;
    guint64 intra_links;
    MsBandwidth nic_bw, gpu_nic_bw;
    MsTime nic_lat, gpu_nic_lat, fabric_lat;
    guint64 per_leaf;
    double oversub;
} Preset;

#define G "preset"

/* Keys that exist but do not apply to the shape chosen: naming one is a mistake worth reporting,
 * e.g. oversubscription with fabric = switch would otherwise be silently ignored. */
static gboolean
check_applicable(const MsIni *ini, const Preset *p, GError **error)
{
    gboolean no_fat_tree = p->nics == NICS_NONE || p->fabric != FABRIC_FAT_TREE;
    const struct {
        const char *key;
        gboolean off;
        const char *when;
    } rules[] = {
        {"intra_bandwidth", p->intra == INTRA_NONE, "intra = none"},
        {"intra_latency", p->intra == INTRA_NONE, "intra = none"},
        {"intra_links", p->intra == INTRA_NONE, "intra = none"},
        {"nic_bandwidth", p->nics == NICS_NONE, "nics = none"},
        {"nic_latency", p->nics == NICS_NONE, "nics = none"},
        {"gpu_nic_bandwidth", p->nics == NICS_NONE, "nics = none"},
        {"gpu_nic_latency", p->nics == NICS_NONE, "nics = none"},
        {"fabric", p->nics == NICS_NONE, "nics = none"},
        {"fabric_latency", p->nics == NICS_NONE, "nics = none"},
        {"nodes_per_leaf", no_fat_tree, "fabric is not fat_tree"},
        {"oversubscription", no_fat_tree, "fabric is not fat_tree"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(rules); i++) {
        if (rules[i].off && ms_ini_has_key(ini, G, rules[i].key)) {
            topo_error(ini, G, rules[i].key, error, MS_TOPOLOGY_ERROR_INVALID,
                       "does not apply when %s", rules[i].when);
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
read_shape(const MsIni *ini, Preset *p, GError **error)
{
    if (!ms_ini_get_uint(ini, G, "nodes", 1, TOPO_MAX_NODES, &p->nodes, error) ||
        !ms_ini_get_uint(ini, G, "gpus_per_node", 1, TOPO_MAX_GPUS_PER_NODE, &p->gpn, error)) {
        return FALSE;
    }
    if (p->nodes * p->gpn > TOPO_MAX_GPUS) {
        topo_error(ini, G, "nodes", error, MS_TOPOLOGY_ERROR_INVALID,
                   "%" G_GUINT64_FORMAT " nodes x %" G_GUINT64_FORMAT " GPUs is more than the "
                   "%u GPUs moesim models",
                   p->nodes, p->gpn, TOPO_MAX_GPUS);
        return FALSE;
    }
    p->intra = INTRA_NONE;
    p->nics = NICS_NONE;
    p->fabric = FABRIC_SWITCH;
    if (!topo_get_enum(ini, G, "intra", p->gpn > 1, intra_names, &p->intra, error) ||
        !topo_get_enum(ini, G, "nics", p->nodes > 1, nics_names, &p->nics, error)) {
        return FALSE;
    }
    if (p->intra == INTRA_NONE && p->gpn > 1) {
        topo_error(ini, G, "intra", error, MS_TOPOLOGY_ERROR_INVALID,
                   "'none' leaves the %" G_GUINT64_FORMAT " GPUs of a node unconnected", p->gpn);
        return FALSE;
    }
    if (p->nics == NICS_NONE && p->nodes > 1) {
        topo_error(ini, G, "nics", error, MS_TOPOLOGY_ERROR_INVALID,
                   "'none' leaves the %" G_GUINT64_FORMAT " nodes unconnected", p->nodes);
        return FALSE;
    }
    if (p->intra == INTRA_NVLINK_MESH && p->nodes * p->gpn * (p->gpn - 1) > TOPO_MAX_LINKS) {
        topo_error(ini, G, "intra", error, MS_TOPOLOGY_ERROR_INVALID,
                   "an NVLink mesh of %" G_GUINT64_FORMAT " GPUs per node needs more than %u "
                   "links",
                   p->gpn, TOPO_MAX_LINKS);
        return FALSE;
    }
    return p->nics == NICS_NONE ||
           topo_get_enum(ini, G, "fabric", TRUE, fabric_names, &p->fabric, error);
}

static gboolean
read_figures(const MsIni *ini, Preset *p, GError **error)
{
    p->intra_links = 1;
    p->gpu_nic_bw = INFINITY;
    p->gpu_nic_lat = 0;
    p->per_leaf = 1;
    p->oversub = 1;
    if (p->intra != INTRA_NONE &&
        (!topo_get_bandwidth(ini, G, "intra_bandwidth", TRUE, FALSE, &p->intra_bw, error) ||
         !topo_get_latency(ini, G, "intra_latency", TRUE, &p->intra_lat, error) ||
         !ms_ini_opt_uint(ini, G, "intra_links", 1, TOPO_MAX_LINK_COUNT, &p->intra_links, error))) {
        return FALSE;
    }
    if (p->nics == NICS_NONE) {
        return TRUE;
    }
    if (!topo_get_bandwidth(ini, G, "nic_bandwidth", TRUE, FALSE, &p->nic_bw, error) ||
        !topo_get_latency(ini, G, "nic_latency", TRUE, &p->nic_lat, error) ||
        !topo_get_bandwidth(ini, G, "gpu_nic_bandwidth", p->nics == NICS_PER_NODE, TRUE,
                            &p->gpu_nic_bw, error) ||
        !topo_get_latency(ini, G, "gpu_nic_latency", FALSE, &p->gpu_nic_lat, error) ||
        !topo_get_latency(ini, G, "fabric_latency", TRUE, &p->fabric_lat, error)) {
        return FALSE;
    }
    return p->fabric != FABRIC_FAT_TREE ||
           (ms_ini_get_uint(ini, G, "nodes_per_leaf", 1, p->nodes, &p->per_leaf, error) &&
            ms_ini_get_double(ini, G, "oversubscription", 1, 1000, &p->oversub, error));
}

static guint add(MsTopology *topo, MsDeviceKind kind, gint node, const char *format, ...)
    G_GNUC_PRINTF(4, 5);

static guint
add(MsTopology *topo, MsDeviceKind kind, gint node, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *name = g_strdup_vprintf(format, ap);
    va_end(ap);
    guint index = 0;
    gboolean fresh = topo_add_device(topo, name, kind, node, &index);
    g_assert(fresh); /* preset names are unique by construction */
    return index;
}

/* A pair of directed links; `back_extra` is added to the latency of b->a (a switch crossing). */
static void
pair(MsTopology *topo, guint a, guint b, MsBandwidth bw, guint count, MsTime lat, MsTime back_extra,
     MsLinkClass klass)
{
    gboolean fresh = topo_add_link(topo, a, b, bw, count, lat, klass) &&
                     topo_add_link(topo, b, a, bw, count, lat + back_extra, klass);
    g_assert(fresh);
}

/* Device indices of a preset, laid out GPUs first (index = rank), then per node its switch
 * and NICs, then the network (one switch, or the leaves and the spine). */
typedef struct {
    gboolean has_switch;
    guint n_leaves, nics_per_node, per_node; /* per_node: devices after the GPUs, per node */
    guint first_node_dev, first_net;
} Layout;

static guint
node_switch(const Layout *l, guint node)
{
    return l->first_node_dev + node * l->per_node;
}

static guint
node_nic(const Layout *l, guint node, guint i)
{
    return node_switch(l, node) + l->has_switch + i;
}

static void
add_devices(MsTopology *topo, const Preset *p, Layout *l)
{
    l->has_switch = p->intra == INTRA_NVSWITCH || p->intra == INTRA_PCIE_SWITCH;
    l->nics_per_node = p->nics == NICS_NONE ? 0 : p->nics == NICS_PER_GPU ? p->gpn : 1;
    l->per_node = l->has_switch + l->nics_per_node;
    l->n_leaves = (p->nodes + p->per_leaf - 1) / p->per_leaf;
    for (guint r = 0; r < p->nodes * p->gpn; r++) {
        add(topo, MS_DEVICE_GPU, r / p->gpn, "gpu%u", r);
    }
    l->first_node_dev = p->nodes * p->gpn;
    for (guint node = 0; node < p->nodes; node++) {
        if (l->has_switch) {
            add(topo, MS_DEVICE_SWITCH, node,
                p->intra == INTRA_NVSWITCH ? "n%u.nvswitch" : "n%u.pcie", node);
        }
        for (guint i = 0; i < l->nics_per_node; i++) {
            add(topo, MS_DEVICE_NIC, node, "n%u.nic%u", node, i);
        }
    }
    l->first_net = ms_topology_n_devices(topo);
    if (p->nics != NICS_NONE && p->fabric == FABRIC_SWITCH) {
        add(topo, MS_DEVICE_SWITCH, -1, "fabric");
    } else if (p->nics != NICS_NONE) {
        for (guint k = 0; k < l->n_leaves; k++) {
            add(topo, MS_DEVICE_SWITCH, -1, "leaf%u", k);
        }
        if (l->n_leaves > 1) {
            add(topo, MS_DEVICE_SWITCH, -1, "spine");
        }
    }
}

static void
add_intra_links(MsTopology *topo, const Preset *p, const Layout *l, guint node)
{
    guint first = node * p->gpn;
    if (p->intra == INTRA_NVLINK_MESH) {
        for (guint i = 0; i < p->gpn; i++) {
            for (guint j = i + 1; j < p->gpn; j++) {
                pair(topo, first + i, first + j, p->intra_bw, p->intra_links, p->intra_lat, 0,
                     MS_LINK_NVLINK);
            }
        }
    } else if (p->intra != INTRA_NONE) {
        MsLinkClass klass = p->intra == INTRA_NVSWITCH ? MS_LINK_NVSWITCH : MS_LINK_PCIE;
        for (guint i = 0; i < p->gpn; i++) {
            pair(topo, first + i, node_switch(l, node), p->intra_bw, p->intra_links, p->intra_lat,
                 0, klass);
        }
    }
}

/* Each NIC of a node joined to its GPU (per_gpu) or to all of them (per_node) over PCIe, and to
 * the network switch of the node; a link leaving a network switch pays fabric_latency. */
static void
add_nic_links(MsTopology *topo, const Preset *p, const Layout *l, guint node)
{
    guint first = node * p->gpn;
    guint net = l->first_net + (p->fabric == FABRIC_SWITCH ? 0 : node / p->per_leaf);
    for (guint i = 0; i < l->nics_per_node; i++) {
        guint nic = node_nic(l, node, i);
        for (guint g = 0; g < p->gpn; g++) {
            if (p->nics == NICS_PER_NODE || g == i) {
                pair(topo, first + g, nic, p->gpu_nic_bw, 1, p->gpu_nic_lat, 0, MS_LINK_PCIE);
            }
        }
        pair(topo, nic, net, p->nic_bw, 1, p->nic_lat, p->fabric_lat, MS_LINK_NIC);
    }
}

/* Leaf uplinks to the spine: the NIC bandwidth under the leaf divided by the ratio. */
static void
add_spine_links(MsTopology *topo, const Preset *p, const Layout *l)
{
    guint spine = l->first_net + l->n_leaves;
    for (guint k = 0; k < l->n_leaves; k++) {
        guint nodes_here = MIN(p->per_leaf, p->nodes - k * p->per_leaf);
        MsBandwidth up = nodes_here * l->nics_per_node * p->nic_bw / p->oversub;
        pair(topo, l->first_net + k, spine, up, 1, p->fabric_lat, 0, MS_LINK_FABRIC);
    }
}

static void
build(MsTopology *topo, const Preset *p)
{
    Layout l;
    add_devices(topo, p, &l);
    for (guint node = 0; node < p->nodes; node++) {
        add_intra_links(topo, p, &l, node);
        if (p->nics != NICS_NONE) {
            add_nic_links(topo, p, &l, node);
        }
    }
    if (p->nics != NICS_NONE && p->fabric == FABRIC_FAT_TREE && l.n_leaves > 1) {
        add_spine_links(topo, p, &l);
    }
}

MsTopology *
topo_build_preset(const MsIni *ini, const char *name, const char *description, const MsGpuSpec *gpu,
                  GError **error)
{
    static const char *const keys[] = {
        "nodes",
        "gpus_per_node",
        "intra",
        "intra_bandwidth",
        "intra_latency",
        "intra_links",
        "nics",
        "nic_bandwidth",
        "nic_latency",
        "gpu_nic_bandwidth",
        "gpu_nic_latency",
        "fabric",
        "fabric_latency",
        "nodes_per_leaf",
        "oversubscription",
        NULL,
    };
    guint n = 0;
    const char *const *groups = ms_ini_groups(ini, &n);
    for (guint i = 0; i < n; i++) {
        g_auto(GStrv) words = topo_group_words(groups[i]);
        if (strcmp(words[0], "device") == 0 || strcmp(words[0], "link") == 0) {
            topo_error(ini, groups[i], NULL, error, MS_TOPOLOGY_ERROR_INVALID,
                       "a topology is either a [preset] or [device]/[link] groups, not both");
            return NULL;
        }
    }
    Preset p = {0};
    if (!ms_ini_check_keys(ini, G, keys, error) || !read_shape(ini, &p, error) ||
        !check_applicable(ini, &p, error) || !read_figures(ini, &p, error)) {
        return NULL;
    }
    MsTopology *topo = topo_new(name, description, gpu);
    build(topo, &p);
    return topo;
}
