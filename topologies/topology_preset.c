/* topology_preset: the [preset] form. N nodes x G GPUs with NVSwitch, an NVLink mesh or a PCIe
 * switch inside the node, NICs per GPU or per node, a non-blocking switch or a two-tier fat tree
 * (leaves, optionally one per rail, and spines, sized by the oversubscription and the switch
 * radix) between nodes. Bandwidths bytes/s per direction, latencies per link; see
 * docs/topology.md for the graph each choice builds. Keys that do not apply are refused. The
 * builder records the shape it built (TopoShape) for the routes of topology_shape.c. */
#include "topology_private.h"

#include <math.h>
#include <string.h>

typedef enum { INTRA_NONE, INTRA_NVSWITCH, INTRA_NVLINK_MESH, INTRA_PCIE_SWITCH } Intra;
typedef enum { NICS_NONE, NICS_PER_GPU, NICS_PER_NODE } Nics;
typedef enum { FABRIC_SWITCH, FABRIC_FAT_TREE } Fabric;

/* Spellings in the order of the enums above (topology_load.c's table reads them). */
const char *const topo_intra_names[] = {"none", "nvswitch", "nvlink_mesh", "pcie_switch", NULL};
const char *const topo_nics_names[] = {"none", "per_gpu", "per_node", NULL};
const char *const topo_fabric_names[] = {"switch", "fat_tree", NULL};
const char *const topo_routing_names[] = {"d_mod_k", "ecmp", NULL};

typedef struct {
    guint64 nodes, gpn;
    guint intra, nics, fabric;
    MsBandwidth intra_bw;
    MsTime intra_lat;
    guint64 intra_links;
    gboolean multicast; /* intra_multicast */
    MsBandwidth nic_bw, gpu_nic_bw;
    MsTime nic_lat, gpu_nic_lat, fabric_lat;
    MsTime net_plugin_lat; /* nccl_net_latency: not a link's, NCCL's tuning model's */
    guint64 per_leaf;
    double oversub;
    /* Fat tree: rails, spines, radix (0: not given), routing; derived: leaves, the leaf's NIC
     * ports and uplink ports, physical links per leaf-spine pair. */
    gboolean rail;
    guint64 tiers, spines, radix;
    guint routing;
    guint64 n_leaves, down_ports, up_ports, bundle;
    /* Three tiers: leaves per pod (all leaves with two), pods, cores per spine index and the
     * links of each spine-core pair; core_group 0 without a core layer. */
    guint64 pod_leaves, n_pods, core_group, core_bundle;
} Preset;

#define G "preset"

static const MsRange *
F(const char *key)
{
    return topo_field("[preset]", key);
}

/* Keys that exist but do not apply to the shape chosen: naming one is a mistake worth reporting,
 * e.g. oversubscription with fabric = switch would otherwise be silently ignored. */
static gboolean
check_applicable(const MsIni *ini, const Preset *p, GError **error)
{
    gboolean no_fat_tree = p->nics == NICS_NONE || p->fabric != FABRIC_FAT_TREE;
    gboolean one_nic = p->nics == NICS_PER_NODE;
    const struct {
        const char *key;
        gboolean off;
        const char *when;
    } rules[] = {
        {"intra_bandwidth", p->intra == INTRA_NONE, "intra = none"},
        {"intra_latency", p->intra == INTRA_NONE, "intra = none"},
        {"intra_links", p->intra == INTRA_NONE, "intra = none"},
        {"intra_multicast", p->intra != INTRA_NVSWITCH, "intra is not nvswitch"},
        {"nic_bandwidth", p->nics == NICS_NONE, "nics = none"},
        {"nic_latency", p->nics == NICS_NONE, "nics = none"},
        {"nccl_net_latency", p->nics == NICS_NONE, "nics = none"},
        {"gpu_nic_bandwidth", p->nics == NICS_NONE, "nics = none"},
        {"gpu_nic_latency", p->nics == NICS_NONE, "nics = none"},
        {"fabric", p->nics == NICS_NONE, "nics = none"},
        {"fabric_latency", p->nics == NICS_NONE, "nics = none"},
        {"nodes_per_leaf", no_fat_tree, "fabric is not fat_tree"},
        {"oversubscription", no_fat_tree, "fabric is not fat_tree"},
        {"rail_optimised", no_fat_tree, "fabric is not fat_tree"},
        {"rail_optimised", one_nic, "nics = per_node (a node has one NIC, one rail)"},
        {"spines", no_fat_tree, "fabric is not fat_tree"},
        {"tiers", no_fat_tree, "fabric is not fat_tree"},
        {"switch_radix", no_fat_tree, "fabric is not fat_tree"},
        {"fabric_routing", no_fat_tree, "fabric is not fat_tree"},
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
    if (!ms_ini_range_uint(ini, G, F("nodes"), TRUE, &p->nodes, error) ||
        !ms_ini_range_uint(ini, G, F("gpus_per_node"), TRUE, &p->gpn, error)) {
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
    if (!ms_ini_range_choice(ini, G, F("intra"), p->gpn > 1, &p->intra, error) ||
        !ms_ini_range_choice(ini, G, F("nics"), p->nodes > 1, &p->nics, error)) {
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
           ms_ini_range_choice(ini, G, F("fabric"), TRUE, &p->fabric, error);
}

static gboolean
read_figures(const MsIni *ini, Preset *p, GError **error)
{
    p->intra_links = 1;
    p->gpu_nic_bw = INFINITY;
    p->gpu_nic_lat = 0;
    p->per_leaf = 1;
    p->oversub = 1;
    p->tiers = 2;
    if (p->intra != INTRA_NONE &&
        (!topo_get_bandwidth(ini, G, F("intra_bandwidth"), TRUE, FALSE, &p->intra_bw, error) ||
         !ms_ini_range_time(ini, G, F("intra_latency"), TRUE, &p->intra_lat, error) ||
         !ms_ini_range_uint(ini, G, F("intra_links"), FALSE, &p->intra_links, error) ||
         !ms_ini_range_bool(ini, G, F("intra_multicast"), FALSE, &p->multicast, error))) {
        return FALSE;
    }
    if (p->nics == NICS_NONE) {
        return TRUE;
    }
    if (!topo_get_bandwidth(ini, G, F("nic_bandwidth"), TRUE, FALSE, &p->nic_bw, error) ||
        !ms_ini_range_time(ini, G, F("nic_latency"), TRUE, &p->nic_lat, error) ||
        !ms_ini_range_time(ini, G, F("nccl_net_latency"), FALSE, &p->net_plugin_lat, error) ||
        !topo_get_bandwidth(ini, G, F("gpu_nic_bandwidth"), p->nics == NICS_PER_NODE, TRUE,
                            &p->gpu_nic_bw, error) ||
        !ms_ini_range_time(ini, G, F("gpu_nic_latency"), FALSE, &p->gpu_nic_lat, error) ||
        !ms_ini_range_time(ini, G, F("fabric_latency"), TRUE, &p->fabric_lat, error)) {
        return FALSE;
    }
    return p->fabric != FABRIC_FAT_TREE ||
           (ms_ini_range_uint(ini, G, F("nodes_per_leaf"), TRUE, &p->per_leaf, error) &&
            ms_ini_range_double(ini, G, F("oversubscription"), TRUE, &p->oversub, error) &&
            ms_ini_range_bool(ini, G, F("rail_optimised"), FALSE, &p->rail, error) &&
            ms_ini_range_uint(ini, G, F("tiers"), FALSE, &p->tiers, error) &&
            ms_ini_range_uint(ini, G, F("switch_radix"), FALSE, &p->radix, error) &&
            ms_ini_range_uint(ini, G, F("spines"), FALSE, &p->spines, error) &&
            ms_ini_range_choice(ini, G, F("fabric_routing"), FALSE, &p->routing, error));
}

/* The smallest divisor d of `ports` for which `fan` switches x ports / d links fit a switch of
 * `radix` ports; 0 when none does. Used for the spines of a two-tier tree (ports: a leaf's
 * uplinks, fan: the leaves) and the cores of a three-tier one (ports: a spine's uplinks, fan:
 * the pods). */
static guint64
fewest_fitting(guint64 ports, guint64 fan, guint64 radix)
{
    for (guint64 d = 1; d <= ports; d++) {
        if (ports % d == 0 && fan * (ports / d) <= radix) {
            return d;
        }
    }
    return 0;
}

/* Two tiers: every leaf to every spine with `bundle` links. The radix, when given, chooses the
 * spine count unless `spines` does, and bounds the spines' ports. */
static gboolean
size_two_tier(const MsIni *ini, Preset *p, GError **error)
{
    gboolean given = ms_ini_has_key(ini, G, "spines");
    if (!given) {
        p->spines = p->radix ? fewest_fitting(p->up_ports, p->n_leaves, p->radix) : 1;
    }
    p->pod_leaves = p->n_leaves;
    if (p->spines == 0) {
        topo_error(ini, G, "switch_radix", error, MS_TOPOLOGY_ERROR_INVALID,
                   "%" G_GUINT64_FORMAT " leaves need a third switch tier (tiers = 3): no spine "
                   "count joins them with switches of %" G_GUINT64_FORMAT " ports",
                   p->n_leaves, p->radix);
        return FALSE;
    }
    if (p->up_ports % p->spines != 0) {
        topo_error(ini, G, "spines", error, MS_TOPOLOGY_ERROR_INVALID,
                   "%" G_GUINT64_FORMAT " uplink ports per leaf do not spread evenly over "
                   "%" G_GUINT64_FORMAT " spines",
                   p->up_ports, p->spines);
        return FALSE;
    }
    p->bundle = p->up_ports / p->spines;
    if (p->radix && p->n_leaves * p->bundle > p->radix) {
        topo_error(ini, G, "spines", error, MS_TOPOLOGY_ERROR_INVALID,
                   "%" G_GUINT64_FORMAT " leaves x %" G_GUINT64_FORMAT " links need spines of "
                   "%" G_GUINT64_FORMAT " ports, more than the radix %" G_GUINT64_FORMAT,
                   p->n_leaves, p->bundle, p->n_leaves * p->bundle, p->radix);
        return FALSE;
    }
    return TRUE;
}

/* Three tiers, as DGX SuperPOD builds them past two: leaves in pods, each leaf one link to each
 * of its pod's spines (one spine per leaf uplink), a spine's ports half down to the pod's leaves
 * and half up to the cores; spine j of every pod reaches the same group of cores. */
static gboolean
size_three_tier(const MsIni *ini, Preset *p, GError **error)
{
    if (p->radix == 0) {
        topo_error(ini, G, "tiers", error, MS_TOPOLOGY_ERROR_INVALID,
                   "a three-tier fat tree is sized by switch_radix, which is missing");
        return FALSE;
    }
    if (ms_ini_has_key(ini, G, "spines")) {
        topo_error(ini, G, "spines", error, MS_TOPOLOGY_ERROR_INVALID,
                   "does not apply when tiers = 3 (a pod has one spine per leaf uplink)");
        return FALSE;
    }
    guint64 half = p->radix / 2;
    p->spines = p->up_ports;
    p->bundle = 1;
    p->pod_leaves = half;
    p->n_pods = (p->n_leaves + half - 1) / half;
    if (p->n_pods == 1) {
        p->pod_leaves = p->n_leaves; /* one pod: the cores would join nothing */
        return TRUE;
    }
    p->core_group = fewest_fitting(half, p->n_pods, p->radix);
    if (p->core_group == 0) {
        topo_error(ini, G, "switch_radix", error, MS_TOPOLOGY_ERROR_INVALID,
                   "%" G_GUINT64_FORMAT " pods of %" G_GUINT64_FORMAT " leaves need a fourth "
                   "switch tier with switches of %" G_GUINT64_FORMAT " ports",
                   p->n_pods, half, p->radix);
        return FALSE;
    }
    p->core_bundle = half / p->core_group;
    return TRUE;
}

/* Sizes the fat tree in whole switch ports at nic_bandwidth: a leaf has one down port per NIC it
 * serves (nodes_per_leaf NICs per rail, or every NIC of nodes_per_leaf nodes) and down /
 * oversubscription uplink ports. */
static gboolean
size_fat_tree(const MsIni *ini, Preset *p, GError **error)
{
    guint64 npn = p->nics == NICS_PER_GPU ? p->gpn : 1;
    guint64 groups = (p->nodes + p->per_leaf - 1) / p->per_leaf;
    p->rail = p->rail && npn > 1;
    p->n_leaves = groups * (p->rail ? npn : 1);
    p->down_ports = p->per_leaf * (p->rail ? 1 : npn);
    double up = p->down_ports / p->oversub;
    p->up_ports = (guint64)llround(up);
    if (p->up_ports < 1 || fabs(up - (double)p->up_ports) > 1e-9 * up) {
        topo_error(ini, G, "oversubscription", error, MS_TOPOLOGY_ERROR_INVALID,
                   "a leaf's %" G_GUINT64_FORMAT " NIC ports over %g is %g uplink ports, not a "
                   "whole number",
                   p->down_ports, p->oversub, up);
        return FALSE;
    }
    if (p->radix && p->down_ports + p->up_ports > p->radix) {
        topo_error(ini, G, "switch_radix", error, MS_TOPOLOGY_ERROR_INVALID,
                   "a leaf needs %" G_GUINT64_FORMAT " NIC ports and %" G_GUINT64_FORMAT
                   " uplink ports, more than its %" G_GUINT64_FORMAT,
                   p->down_ports, p->up_ports, p->radix);
        return FALSE;
    }
    if (!(p->tiers == 3 ? size_three_tier(ini, p, error) : size_two_tier(ini, p, error))) {
        return FALSE;
    }
    if (p->n_leaves == 1) {
        p->spines = 0; /* one leaf joins everything: no spine layer */
        return TRUE;
    }
    guint64 n_spines = p->spines * ((p->n_leaves + p->pod_leaves - 1) / p->pod_leaves);
    guint64 links = 2 * (p->n_leaves * p->spines + n_spines * p->core_group);
    if (p->bundle > TOPO_MAX_LINK_COUNT || p->core_bundle > TOPO_MAX_LINK_COUNT ||
        links > TOPO_MAX_LINKS) {
        topo_error(ini, G, "nodes_per_leaf", error, MS_TOPOLOGY_ERROR_INVALID,
                   "%" G_GUINT64_FORMAT " leaves and %" G_GUINT64_FORMAT
                   " spines need %" G_GUINT64_FORMAT " directed links of up to %" G_GUINT64_FORMAT
                   " physical "
                   "ones, beyond the limits (%u, %u)",
                   p->n_leaves, n_spines, links, MAX(p->bundle, p->core_bundle), TOPO_MAX_LINKS,
                   TOPO_MAX_LINK_COUNT);
        return FALSE;
    }
    return TRUE;
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

/* A pair of directed links; `back_extra` is added to the latency of b->a (a switch crossing).
 * Returns the index of a->b; b->a follows it. */
static guint32
pair(MsTopology *topo, guint a, guint b, MsBandwidth bw, guint count, MsTime lat, MsTime back_extra,
     MsLinkClass klass)
{
    guint32 first = topo->links->len;
    gboolean fresh = topo_add_link(topo, a, b, bw, count, lat, klass) &&
                     topo_add_link(topo, b, a, bw, count, lat + back_extra, klass);
    g_assert(fresh);
    return first;
}

/* Device indices of a preset, laid out GPUs first (index = rank), then per node its switch
 * and NICs, then the network (one switch, or the leaves and then the spines). */
typedef struct {
    gboolean has_switch;
    guint nics_per_node, per_node; /* per_node: devices after the GPUs, per node */
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

/* The leaf that NIC i of a node hangs from. */
static guint
leaf_of(const Preset *p, guint node, guint i)
{
    guint group = node / p->per_leaf;
    return p->rail ? group * (guint)p->gpn + i : group;
}

static void
add_network_devices(MsTopology *topo, const Preset *p)
{
    if (p->fabric == FABRIC_SWITCH) {
        add(topo, MS_DEVICE_SWITCH, -1, "fabric");
        return;
    }
    for (guint k = 0; k < p->n_leaves; k++) {
        if (p->rail) {
            add(topo, MS_DEVICE_SWITCH, -1, "leaf%u.%u", k / (guint)p->gpn, k % (guint)p->gpn);
        } else {
            add(topo, MS_DEVICE_SWITCH, -1, "leaf%u", k);
        }
    }
    guint pods = p->spines ? (p->n_leaves + p->pod_leaves - 1) / p->pod_leaves : 0;
    for (guint s = 0; s < pods * p->spines; s++) {
        if (p->tiers == 3) {
            add(topo, MS_DEVICE_SWITCH, -1, "spine%u.%u", s / (guint)p->spines,
                s % (guint)p->spines);
        } else {
            add(topo, MS_DEVICE_SWITCH, -1, "spine%u", s);
        }
    }
    for (guint c = 0; c < p->spines * p->core_group; c++) {
        add(topo, MS_DEVICE_SWITCH, -1, "core%u.%u", c / (guint)p->core_group,
            c % (guint)p->core_group);
    }
}

static void
add_devices(MsTopology *topo, const Preset *p, Layout *l)
{
    l->has_switch = p->intra == INTRA_NVSWITCH || p->intra == INTRA_PCIE_SWITCH;
    l->nics_per_node = p->nics == NICS_NONE ? 0 : p->nics == NICS_PER_GPU ? p->gpn : 1;
    l->per_node = l->has_switch + l->nics_per_node;
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
    if (p->nics != NICS_NONE) {
        add_network_devices(topo, p);
    }
}

/* Node 0's links are recorded in the shape as they are added: every node repeats them. */
static void
add_intra_links(MsTopology *topo, const Preset *p, const Layout *l, guint node, TopoShape *sh)
{
    guint first = node * p->gpn;
    if (p->intra == INTRA_NVLINK_MESH) {
        for (guint i = 0; i < p->gpn; i++) {
            for (guint j = i + 1; j < p->gpn; j++) {
                guint32 k = pair(topo, first + i, first + j, p->intra_bw, p->intra_links,
                                 p->intra_lat, 0, MS_LINK_NVLINK);
                if (node == 0) {
                    sh->mesh[i * p->gpn + j] = k;
                    sh->mesh[j * p->gpn + i] = k + 1;
                }
            }
        }
    } else if (p->intra != INTRA_NONE) {
        MsLinkClass klass = p->intra == INTRA_NVSWITCH ? MS_LINK_NVSWITCH : MS_LINK_PCIE;
        for (guint i = 0; i < p->gpn; i++) {
            guint32 k = pair(topo, first + i, node_switch(l, node), p->intra_bw, p->intra_links,
                             p->intra_lat, 0, klass);
            if (node == 0) {
                sh->intra_up[i] = k;
                sh->intra_dn[i] = k + 1;
            }
        }
    }
}

/* Each NIC of a node joined to its GPU (per_gpu) or to all of them (per_node) over PCIe, and to
 * the network switch of the node; a link leaving a network switch pays fabric_latency. */
static void
add_nic_links(MsTopology *topo, const Preset *p, const Layout *l, guint node, TopoShape *sh)
{
    guint first = node * p->gpn;
    for (guint i = 0; i < l->nics_per_node; i++) {
        guint nic = node_nic(l, node, i);
        guint net = l->first_net + (p->fabric == FABRIC_SWITCH ? 0 : leaf_of(p, node, i));
        for (guint g = 0; g < p->gpn; g++) {
            if (p->nics == NICS_PER_NODE || g == i) {
                guint32 k =
                    pair(topo, first + g, nic, p->gpu_nic_bw, 1, p->gpu_nic_lat, 0, MS_LINK_PCIE);
                if (node == 0) {
                    sh->gpu_nic[g] = k;
                    sh->nic_gpu[g] = k + 1;
                }
            }
        }
        guint32 k = pair(topo, nic, net, p->nic_bw, 1, p->nic_lat, p->fabric_lat, MS_LINK_NIC);
        if (node == 0) {
            sh->nic_up[i] = k;
            sh->nic_dn[i] = k + 1;
        }
    }
}

/* Every leaf to every spine of its pod with `bundle` links of nic_bandwidth, leaf-major (leaf k
 * -> spine j of its pod is first + 2 (k spines + j)); then, with three tiers, spine j of each pod
 * to each core of group j with `core_bundle` links (spine i -> core c of its group is
 * first_core_link + 2 (i core_group + c)). */
static void
add_spine_links(MsTopology *topo, const Preset *p, const Layout *l, TopoShape *sh)
{
    guint first_spine = l->first_net + p->n_leaves;
    sh->first_spine_link = topo->links->len;
    for (guint k = 0; k < p->n_leaves; k++) {
        guint pod = k / p->pod_leaves;
        for (guint j = 0; j < p->spines; j++) {
            pair(topo, l->first_net + k, first_spine + pod * p->spines + j, p->bundle * p->nic_bw,
                 p->bundle, p->fabric_lat, 0, MS_LINK_FABRIC);
        }
    }
    guint pods = (p->n_leaves + p->pod_leaves - 1) / p->pod_leaves;
    guint first_core = first_spine + pods * p->spines;
    sh->first_core_link = topo->links->len;
    for (guint i = 0; p->core_group && i < pods * p->spines; i++) {
        guint j = i % p->spines;
        for (guint c = 0; c < p->core_group; c++) {
            pair(topo, first_spine + i, first_core + j * p->core_group + c,
                 p->core_bundle * p->nic_bw, p->core_bundle, p->fabric_lat, 0, MS_LINK_FABRIC);
        }
    }
}

static TopoShape *
shape_new(const Preset *p, const Layout *l)
{
    TopoShape *sh = g_new0(TopoShape, 1);
    guint gpn = p->gpn;
    sh->gpn = gpn;
    sh->nics_per_node = l->nics_per_node;
    sh->intra = p->intra == INTRA_NONE ? 0 : p->intra == INTRA_NVLINK_MESH ? 2 : 1;
    sh->per_gpu = p->nics == NICS_PER_GPU;
    sh->intra_up = g_new0(guint32, gpn);
    sh->intra_dn = g_new0(guint32, gpn);
    sh->mesh = g_new0(guint32, sh->intra == 2 ? gpn * gpn : 1);
    sh->gpu_nic = g_new0(guint32, gpn);
    sh->nic_gpu = g_new0(guint32, gpn);
    sh->nic_up = g_new0(guint32, MAX(l->nics_per_node, 1));
    sh->nic_dn = g_new0(guint32, MAX(l->nics_per_node, 1));
    if (p->nics != NICS_NONE && p->fabric == FABRIC_FAT_TREE) {
        sh->rail = p->rail;
        sh->per_leaf = p->per_leaf;
        sh->n_leaves = p->n_leaves;
        sh->leaf_ports = p->down_ports;
        sh->spines = p->spines;
        sh->pod_leaves = p->pod_leaves;
        sh->n_pods = p->spines ? (p->n_leaves + p->pod_leaves - 1) / p->pod_leaves : 0;
        sh->core_group = p->core_group;
        sh->spread = p->routing == 1 ? TOPO_SPREAD_ECMP : TOPO_SPREAD_D_MOD_K;
    }
    return sh;
}

static void
build(MsTopology *topo, const Preset *p)
{
    Layout l;
    add_devices(topo, p, &l);
    TopoShape *sh = shape_new(p, &l);
    for (guint node = 0; node < p->nodes; node++) {
        add_intra_links(topo, p, &l, node, sh);
        if (p->nics != NICS_NONE) {
            add_nic_links(topo, p, &l, node, sh);
        }
        if (node == 0) {
            sh->node_links = topo->links->len;
        }
    }
    if (p->nics != NICS_NONE && p->fabric == FABRIC_FAT_TREE && p->spines > 0) {
        add_spine_links(topo, p, &l, sh);
    }
    topo->shape = sh;
}

gboolean
topo_preset_shape(const MsIni *ini, guint *nodes, guint *gpus_per_node, GError **error)
{
    Preset p = {0};
    if (!read_shape(ini, &p, error)) {
        return FALSE;
    }
    *nodes = (guint)p.nodes;
    *gpus_per_node = (guint)p.gpn;
    return TRUE;
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
        "intra_multicast",
        "nics",
        "nic_bandwidth",
        "nic_latency",
        "nccl_net_latency",
        "gpu_nic_bandwidth",
        "gpu_nic_latency",
        "fabric",
        "fabric_latency",
        "nodes_per_leaf",
        "oversubscription",
        "rail_optimised",
        "tiers",
        "spines",
        "switch_radix",
        "fabric_routing",
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
        !check_applicable(ini, &p, error) || !read_figures(ini, &p, error) ||
        (p.nics != NICS_NONE && p.fabric == FABRIC_FAT_TREE && !size_fat_tree(ini, &p, error))) {
        return NULL;
    }
    MsTopology *topo = topo_new(name, description, gpu);
    build(topo, &p);
    topo->multicast = p.multicast;
    topo->nccl_net_latency = p.net_plugin_lat;
    return topo;
}
