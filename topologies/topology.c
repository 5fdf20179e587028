/* topology: the device/link model, its builder and accessors. Bandwidths are bytes/s per
 * direction (count already multiplied in, INFINITY for links that never constrain), latencies
 * MsTime. Loading lives in topology_load.c, routes in topology_route.c, flows in
 * topology_flow.c. */
#include "topology_private.h"

#include <string.h>

G_DEFINE_QUARK(ms_topology_error_quark, ms_topology_error)

const char *const topo_class_names[MS_LINK_N_CLASSES + 1] = {
    [MS_LINK_NVLINK] = "nvlink", [MS_LINK_NVSWITCH] = "nvswitch", [MS_LINK_PCIE] = "pcie",
    [MS_LINK_CPU] = "cpu",       [MS_LINK_NIC] = "nic",           [MS_LINK_FABRIC] = "fabric",
    [MS_LINK_N_CLASSES] = NULL,
};

const char *const topo_kind_names[] = {
    [MS_DEVICE_GPU] = "gpu",
    [MS_DEVICE_NIC] = "nic",
    [MS_DEVICE_SWITCH] = "switch",
    [MS_DEVICE_CPU] = "cpu",
    NULL,
};

gint
topo_name_index(const char *const *names, const char *name)
{
    for (gint i = 0; names[i]; i++) {
        if (g_strcmp0(name, names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

const char *
ms_link_class_name(MsLinkClass klass)
{
    g_return_val_if_fail(klass < MS_LINK_N_CLASSES, "?");
    return topo_class_names[klass];
}

gboolean
ms_link_class_from_name(const char *name, MsLinkClass *out)
{
    gint i = topo_name_index(topo_class_names, name);
    if (i >= 0) {
        *out = i;
    }
    return i >= 0;
}

const char *
ms_device_kind_name(MsDeviceKind kind)
{
    g_return_val_if_fail(kind <= MS_DEVICE_CPU, "?");
    return topo_kind_names[kind];
}

gboolean
ms_device_kind_from_name(const char *name, MsDeviceKind *out)
{
    gint i = topo_name_index(topo_kind_names, name);
    if (i >= 0) {
        *out = i;
    }
    return i >= 0;
}

MsTopology *
topo_new(const char *name, const char *description, const MsGpuSpec *gpu)
{
    MsTopology *topo = g_new0(MsTopology, 1);
    topo->name = g_strdup(name);
    topo->description = g_strdup(description ? description : "");
    topo->gpu_model = g_strdup(gpu->model);
    topo->gpu = *gpu;
    topo->gpu.model = topo->gpu_model;
    topo->strings = g_string_chunk_new(4096);
    topo->devices = g_array_new(FALSE, FALSE, sizeof(TopoDevice));
    topo->device_index = g_hash_table_new(g_str_hash, g_str_equal);
    topo->links = g_array_new(FALSE, FALSE, sizeof(MsLink));
    topo->link_extra = g_array_new(FALSE, FALSE, sizeof(TopoLinkExtra));
    topo->link_index = g_hash_table_new(g_str_hash, g_str_equal);
    topo->given = g_array_new(FALSE, FALSE, sizeof(TopoGivenRoute));
    g_mutex_init(&topo->route_lock);
    return topo;
}

void
ms_topology_free(MsTopology *topo)
{
    if (topo == NULL) {
        return;
    }
    topo_routes_clear(topo);
    topo_shape_free(topo->shape);
    g_mutex_clear(&topo->route_lock);
    for (guint i = 0; i < topo->given->len; i++) {
        g_free(g_array_index(topo->given, TopoGivenRoute, i).links);
    }
    g_array_unref(topo->given);
    g_hash_table_unref(topo->link_index);
    g_array_unref(topo->link_extra);
    g_array_unref(topo->links);
    g_hash_table_unref(topo->device_index);
    g_array_unref(topo->devices);
    g_string_chunk_free(topo->strings);
    g_free(topo->gpu_devices);
    g_free(topo->out_start);
    g_free(topo->out_links);
    g_free(topo->node_start);
    g_free(topo->node_devices);
    g_free(topo->gpu_model);
    g_free(topo->description);
    g_free(topo->source);
    g_free(topo->name);
    g_free(topo);
}

gboolean
topo_add_device(MsTopology *topo, const char *name, MsDeviceKind kind, gint node, guint *index)
{
    if (g_hash_table_contains(topo->device_index, name)) {
        return FALSE;
    }
    TopoDevice d = {g_string_chunk_insert(topo->strings, name), kind, node, -1};
    g_array_append_val(topo->devices, d);
    g_hash_table_insert(topo->device_index, (gpointer)d.name, GUINT_TO_POINTER(topo->devices->len));
    if (index) {
        *index = topo->devices->len - 1;
    }
    return TRUE;
}

gboolean
topo_add_link(MsTopology *topo, guint from, guint to, MsBandwidth bandwidth, guint count,
              MsTime latency, MsLinkClass klass)
{
    g_autofree char *name =
        g_strconcat(topo_dev(topo, from)->name, "->", topo_dev(topo, to)->name, NULL);
    if (g_hash_table_contains(topo->link_index, name)) {
        return FALSE;
    }
    MsLink l = {from, to, bandwidth, latency, klass, g_string_chunk_insert(topo->strings, name)};
    TopoLinkExtra x = {count, l.bandwidth, latency};
    g_array_append_val(topo->links, l);
    g_array_append_val(topo->link_extra, x);
    g_hash_table_insert(topo->link_index, (gpointer)l.name, GUINT_TO_POINTER(topo->links->len));
    return TRUE;
}

gboolean
topo_find_link(const MsTopology *topo, guint from, guint to, guint *link)
{
    g_autofree char *name =
        g_strconcat(topo_dev(topo, from)->name, "->", topo_dev(topo, to)->name, NULL);
    guint i = GPOINTER_TO_UINT(g_hash_table_lookup(topo->link_index, name));
    if (i == 0) {
        return FALSE;
    }
    *link = i - 1;
    return TRUE;
}

void
topo_add_given_route(MsTopology *topo, guint src, guint dst, guint32 *links, guint n)
{
    TopoGivenRoute r = {src, dst, n, links};
    g_array_append_val(topo->given, r);
}

static gint
cmp_given(gconstpointer a, gconstpointer b)
{
    const TopoGivenRoute *x = a, *y = b;
    if (x->src != y->src) {
        return x->src < y->src ? -1 : 1;
    }
    return x->dst < y->dst ? -1 : (x->dst > y->dst);
}

static guint32 *
copy_u32(const guint32 *src, guint n)
{
    guint32 *out = g_new(guint32, MAX(n, 1));
    memcpy(out, src, sizeof(guint32) * n);
    return out;
}

/* Compressed adjacency: out-links of each device in link order (the order routes tie-break on
 * is by device index, so this order never shows in results). */
static void
build_adjacency(MsTopology *topo)
{
    guint n = topo->devices->len, m = topo->links->len;
    topo->out_start = g_new0(guint32, n + 1);
    topo->out_links = g_new(guint32, MAX(m, 1));
    for (guint i = 0; i < m; i++) {
        topo->out_start[g_array_index(topo->links, MsLink, i).from + 1]++;
    }
    for (guint d = 0; d < n; d++) {
        topo->out_start[d + 1] += topo->out_start[d];
    }
    g_autofree guint32 *fill = copy_u32(topo->out_start, n);
    for (guint i = 0; i < m; i++) {
        topo->out_links[fill[g_array_index(topo->links, MsLink, i).from]++] = i;
    }
}

/* Devices grouped by node (node-major, file order inside a node); GPU ranks follow it. */
static void
build_nodes(MsTopology *topo)
{
    guint n = topo->devices->len, nn = topo->n_nodes;
    topo->node_start = g_new0(guint32, nn + 1);
    for (guint d = 0; d < n; d++) {
        if (topo_dev(topo, d)->node >= 0) {
            topo->node_start[topo_dev(topo, d)->node + 1]++;
        }
    }
    for (guint k = 0; k < nn; k++) {
        topo->node_start[k + 1] += topo->node_start[k];
    }
    topo->node_devices = g_new(guint32, MAX(topo->node_start[nn], 1));
    g_autofree guint32 *fill = copy_u32(topo->node_start, nn + 1);
    for (guint d = 0; d < n; d++) {
        gint node = topo_dev(topo, d)->node;
        if (node >= 0) {
            topo->node_devices[fill[node]++] = d;
        }
    }
    topo->gpu_devices = g_new(guint, MAX(topo->n_gpus, 1));
    guint rank = 0;
    for (guint i = 0; i < topo->node_start[nn]; i++) {
        TopoDevice *dev = &g_array_index(topo->devices, TopoDevice, topo->node_devices[i]);
        if (dev->kind == MS_DEVICE_GPU) {
            dev->rank = rank;
            topo->gpu_devices[rank++] = topo->node_devices[i];
        }
    }
}

/* The common count of devices of a kind per node, or 0 when nodes differ. */
static guint
per_node_count(const MsTopology *topo, MsDeviceKind kind)
{
    guint common = 0;
    for (guint k = 0; k < topo->n_nodes; k++) {
        guint c = 0;
        for (guint i = topo->node_start[k]; i < topo->node_start[k + 1]; i++) {
            c += topo_dev(topo, topo->node_devices[i])->kind == kind;
        }
        if (k > 0 && c != common) {
            return 0;
        }
        common = c;
    }
    return common;
}

void
topo_finish(MsTopology *topo)
{
    guint n = topo->devices->len;
    gint max_node = -1;
    topo->n_gpus = 0;
    for (guint d = 0; d < n; d++) {
        max_node = MAX(max_node, topo_dev(topo, d)->node);
        topo->n_gpus += topo_dev(topo, d)->kind == MS_DEVICE_GPU;
    }
    topo->n_nodes = max_node + 1;
    build_adjacency(topo);
    build_nodes(topo);
    topo->gpus_per_node = per_node_count(topo, MS_DEVICE_GPU);
    topo->nics_per_node = per_node_count(topo, MS_DEVICE_NIC);
    g_array_sort(topo->given, cmp_given);
    topo->routes = g_new0(TopoRouteTable *, n);
    if (topo->shape) {
        topo->gpu_blocks = g_new0(TopoRouteBlock **, MAX(topo->n_gpus, 1));
    }
}

const char *
ms_topology_name(const MsTopology *topo)
{
    return topo->name;
}

const char *
ms_topology_description(const MsTopology *topo)
{
    return topo->description;
}

const char *
ms_topology_source(const MsTopology *topo)
{
    return topo->source ? topo->source : topo->name;
}

guint
ms_topology_n_devices(const MsTopology *topo)
{
    return topo->devices->len;
}

const char *
ms_topology_device_name(const MsTopology *topo, guint device)
{
    g_return_val_if_fail(device < topo->devices->len, NULL);
    return topo_dev(topo, device)->name;
}

MsDeviceKind
ms_topology_device_kind(const MsTopology *topo, guint device)
{
    g_return_val_if_fail(device < topo->devices->len, MS_DEVICE_SWITCH);
    return topo_dev(topo, device)->kind;
}

gint
ms_topology_device_node(const MsTopology *topo, guint device)
{
    g_return_val_if_fail(device < topo->devices->len, -1);
    return topo_dev(topo, device)->node;
}

gboolean
ms_topology_find_device(const MsTopology *topo, const char *name, guint *device)
{
    guint i = GPOINTER_TO_UINT(g_hash_table_lookup(topo->device_index, name));
    if (i == 0) {
        return FALSE;
    }
    *device = i - 1;
    return TRUE;
}

gboolean
ms_topology_find_link(const MsTopology *topo, const char *name, guint *link)
{
    for (guint l = 0; l < topo->links->len; l++) {
        if (strcmp(g_array_index(topo->links, MsLink, l).name, name) == 0) {
            *link = l;
            return TRUE;
        }
    }
    return FALSE;
}

guint
ms_topology_n_gpus(const MsTopology *topo)
{
    return topo->n_gpus;
}

guint
ms_topology_gpu_device(const MsTopology *topo, guint rank)
{
    g_return_val_if_fail(rank < topo->n_gpus, 0);
    return topo->gpu_devices[rank];
}

gint
ms_topology_device_rank(const MsTopology *topo, guint device)
{
    g_return_val_if_fail(device < topo->devices->len, -1);
    return topo_dev(topo, device)->rank;
}

guint
ms_topology_n_nodes(const MsTopology *topo)
{
    return topo->n_nodes;
}

guint
ms_topology_gpu_node(const MsTopology *topo, guint rank)
{
    g_return_val_if_fail(rank < topo->n_gpus, 0);
    return topo_dev(topo, topo->gpu_devices[rank])->node;
}

guint
ms_topology_gpus_per_node(const MsTopology *topo)
{
    return topo->gpus_per_node;
}

guint
ms_topology_nics_per_node(const MsTopology *topo)
{
    return topo->nics_per_node;
}

MsTime
ms_topology_nccl_net_latency(const MsTopology *topo)
{
    return topo->nccl_net_latency;
}

gboolean
ms_topology_multicast(const MsTopology *topo)
{
    return topo->multicast;
}

const MsGpuSpec *
ms_topology_gpu_spec(const MsTopology *topo, guint rank)
{
    g_return_val_if_fail(rank < topo->n_gpus, NULL);
    return &topo->gpu;
}

guint
ms_topology_n_links(const MsTopology *topo)
{
    return topo->links->len;
}

const MsLink *
ms_topology_link(const MsTopology *topo, guint link)
{
    g_return_val_if_fail(link < topo->links->len, NULL);
    return &g_array_index(topo->links, MsLink, link);
}

guint
ms_topology_link_count(const MsTopology *topo, guint link)
{
    g_return_val_if_fail(link < topo->links->len, 0);
    return g_array_index(topo->link_extra, TopoLinkExtra, link).count;
}

guint
ms_topology_set_class(MsTopology *topo, MsLinkClass klass, MsBandwidth bandwidth, MsTime latency)
{
    g_return_val_if_fail(klass < MS_LINK_N_CLASSES, 0);
    guint changed = 0;
    for (guint i = 0; i < topo->links->len; i++) {
        MsLink *l = &g_array_index(topo->links, MsLink, i);
        if (l->klass != klass) {
            continue;
        }
        /* An unlimited link was declared never to constrain: a fitted per-link figure for its
         * class does not make it a bottleneck. */
        gboolean touched = FALSE;
        if (bandwidth > 0 && !isinf(l->bandwidth)) {
            l->bandwidth = bandwidth * g_array_index(topo->link_extra, TopoLinkExtra, i).count;
            touched = TRUE;
        }
        if (latency != MS_TIME_NEVER) {
            l->latency = latency;
            touched = TRUE;
        }
        changed += touched;
    }
    return changed;
}

void
ms_topology_slow_link(MsTopology *topo, guint link, double factor)
{
    g_return_if_fail(link < topo->links->len && factor >= 1 && isfinite(factor));
    g_array_index(topo->links, MsLink, link).bandwidth /= factor;
}

gboolean
ms_gpu_spec_peak(const MsGpuSpec *spec, MsDtype dtype, MsFlops *out)
{
    g_return_val_if_fail(spec != NULL && (guint)dtype < MS_DTYPE_N, FALSE);
    if (spec->dtype_peak[dtype] > 0) {
        *out = spec->dtype_peak[dtype];
        return TRUE;
    }
    if (dtype == MS_DTYPE_FP16 || dtype == MS_DTYPE_BF16) {
        *out = spec->peak_flops;
        return TRUE;
    }
    return FALSE;
}
