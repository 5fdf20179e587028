/* nccl_view: what NCCL's topology detection and path computation see of one node's GPUs
 * (graph/topo.cc, paths.cc), built from a moesim topology: per GPU pair a path of type NVL
 * (a direct NVLink or both GPUs on one NVSwitch), NVB (two NVLinks through a third GPU) or the
 * topology's PCIe route (PIX, PXB, PHB, SYS), each link counted at NCCL's figure; per NIC its
 * line rate and the path to its closest GPU. Ignores what the topology does not say: CPU models
 * (a socket link counts as Skylake's), PCIe switch sharing it does not model, NVLink to CPUs. */
#include "nccl_private.h"

#include <math.h>
#include <string.h>

typedef struct {
    const MsTopology *topo;
    guint version, arch;
    gint node;
    GHashTable *out;   /* device -> GArray of its outgoing link indices (devices of the node) */
    GHashTable *slots; /* link index -> slot + 1 */
    GArray *slot_bw;   /* double */
    GArray *slot_pci;  /* gboolean */
} Build;

/* NCCL's figure of a link, GB/s per direction. */
static double
figure(const Build *b, guint link)
{
    const MsLink *l = ms_topology_link(b->topo, link);
    double gbps = l->bandwidth / 1e9;
    switch (l->klass) {
    case MS_LINK_NVLINK:
    case MS_LINK_NVSWITCH:
        /* count x ncclTopoNVLinkBw (v2.18 src/graph/topo.cc:528-530) */
        return ms_topology_link_count(b->topo, link) * ms_nccl_nvlink_bw(b->arch, b->version);
    case MS_LINK_PCIE:
        return isinf(gbps) ? INFINITY : ms_nccl_pci_bw(gbps);
    case MS_LINK_CPU:
        /* The topology names no CPU model: SKL_QPI_BW, 9 until 2.17 (v2.10 src/graph/topo.h:20),
         * 10 from 2.18.1 (v2.18 topo.h:21). */
        return b->version >= V(2, 18, 0) ? 10.0 : 9.0;
    case MS_LINK_NIC:
        /* port speed in Mb/s / 8000 (v2.10 src/graph/topo.cc:337): the line rate / 8 */
        return gbps;
    default:
        return INFINITY;
    }
}

static guint
slot_of(Build *b, guint link)
{
    gpointer v = g_hash_table_lookup(b->slots, GUINT_TO_POINTER(link));
    if (v != NULL) {
        return GPOINTER_TO_UINT(v) - 1;
    }
    double f = figure(b, link);
    g_array_append_val(b->slot_bw, f);
    gboolean pci = ms_topology_link(b->topo, link)->klass == MS_LINK_PCIE;
    g_array_append_val(b->slot_pci, pci);
    g_hash_table_insert(b->slots, GUINT_TO_POINTER(link), GUINT_TO_POINTER(b->slot_bw->len));
    return b->slot_bw->len - 1;
}

static GArray *
out_links(const Build *b, guint dev)
{
    return g_hash_table_lookup(b->out, GUINT_TO_POINTER(dev));
}

/* The first link from device a to device b of a class in mask, or G_MAXUINT. */
static guint
find_link(const Build *b, guint from, guint to, guint mask)
{
    GArray *out = out_links(b, from);
    for (guint i = 0; out != NULL && i < out->len; i++) {
        guint l = g_array_index(out, guint, i);
        const MsLink *k = ms_topology_link(b->topo, l);
        if (k->to == to && (mask & (1u << k->klass))) {
            return l;
        }
    }
    return G_MAXUINT;
}

#define NVMASK ((1u << MS_LINK_NVLINK) | (1u << MS_LINK_NVSWITCH))

/* Type of a route by what it crosses (v2.18 src/graph/topo.h:54-81): PIX through at most one
 * PCIe switch, PXB through several, PHB through a CPU, SYS across CPUs, PXN through a GPU. */
static NcclPath
classify(const MsTopology *topo, const guint32 *route, guint n)
{
    guint switches = 0, cpus = 0;
    gboolean sys = FALSE, gpu = FALSE;
    for (guint i = 0; i < n; i++) {
        const MsLink *l = ms_topology_link(topo, route[i]);
        sys |= l->klass == MS_LINK_CPU;
        if (i + 1 < n) {
            MsDeviceKind k = ms_topology_device_kind(topo, l->to);
            switches += k == MS_DEVICE_SWITCH;
            cpus += k == MS_DEVICE_CPU;
            gpu |= k == MS_DEVICE_GPU;
        }
    }
    return sys || cpus > 1 ? NCCL_PATH_SYS
           : gpu           ? NCCL_PATH_PXN
           : cpus          ? NCCL_PATH_PHB
           : switches > 1  ? NCCL_PATH_PXB
                           : NCCL_PATH_PIX;
}

/* A pair without peer-to-peer is a topology's [route] up to the CPU and back (moesim does not
 * detect peer-to-peer). From 2.19.1 NCCL diverts such a pair through the CPU too: ncclTopoCheckP2p
 * clears p2p whenever NVML reports P2P disabled, and ncclTopoComputePaths then adds the CPU step
 * (v2.19.1 src/graph/paths.cc:320-329 and 553-558). Up to 2.18 it only set p2p = 0 under
 * NCCL_IGNORE_DISABLED_P2P and otherwise just logged (v2.18.6 paths.cc:320-328), so the search
 * kept the direct PCIe path: the route with any detour back to a device it already crossed cut
 * out (gpu0;pcie0;cpu0;pcie0;gpu1 -> gpu0;pcie0;gpu1). Returns the cut route's length. */
static guint
cut_detours(const MsTopology *t, const guint32 *r, guint n, guint32 *out)
{
    guint k = 0;
    for (guint h = 0; h < n; h++) {
        guint32 from = ms_topology_link(t, r[h])->from;
        for (guint m = 0; m < k; m++) {
            if (ms_topology_link(t, out[m])->from == from) {
                k = m;
                break;
            }
        }
        out[k++] = r[h];
    }
    return k;
}

/* The path between GPUs i and j as NCCL computes it (paths.cc ncclTopoSetPaths: NVLink first,
 * through NVSwitch or one intermediate GPU, else PCIe). */
static gboolean
pair_path(Build *b, NcclNode *nd, guint i, guint j, GArray *slots, GError **error)
{
    const MsTopology *t = b->topo;
    guint di = ms_topology_gpu_device(t, nd->rank[i]), dj = ms_topology_gpu_device(t, nd->rank[j]);
    guint k = i * nd->n_gpus + j, route[2], len = 0;
    NcclPath type = NCCL_PATH_NVL;
    guint l = find_link(b, di, dj, 1u << MS_LINK_NVLINK);
    if (l != G_MAXUINT) {
        route[len++] = l;
    }
    GArray *out = out_links(b, di);
    for (guint a = 0; len == 0 && out != NULL && a < out->len; a++) {
        guint l1 = g_array_index(out, guint, a);
        const MsLink *k1 = ms_topology_link(t, l1);
        if (k1->klass == MS_LINK_NVSWITCH &&
            (l = find_link(b, k1->to, dj, 1u << MS_LINK_NVSWITCH)) != G_MAXUINT) {
            route[len++] = l1;
            route[len++] = l;
        }
    }
    double best = 0;
    for (guint c = 0; len == 0 && c < nd->n_gpus; c++) {
        guint dc = ms_topology_gpu_device(t, nd->rank[c]);
        guint l1 = find_link(b, di, dc, NVMASK), l2 = find_link(b, dc, dj, NVMASK);
        if (c != i && c != j && l1 != G_MAXUINT && l2 != G_MAXUINT) {
            double bw = MIN(figure(b, l1), figure(b, l2));
            if (bw > best) {
                best = bw;
                route[0] = l1;
                route[1] = l2;
                type = NCCL_PATH_NVB;
            }
        }
    }
    if (best > 0) {
        len = 2;
    }
    const guint32 *r = NULL;
    g_autofree guint32 *cut = NULL;
    guint rn = len;
    if (len == 0) {
        r = ms_topology_gpu_route(t, nd->rank[i], nd->rank[j], &rn, error);
        if (r == NULL) {
            g_prefix_error(error, "NCCL path from GPU %u to GPU %u: ", nd->rank[i], nd->rank[j]);
            return FALSE;
        }
        if (b->version < V(2, 19, 0)) {
            cut = g_new(guint32, rn);
            rn = cut_detours(t, r, rn, cut);
            r = cut;
        }
        type = classify(t, r, rn);
    }
    nd->type[k] = type;
    nd->bw[k] = INFINITY;
    for (guint h = 0; h < rn; h++) {
        guint link = r ? r[h] : route[h];
        guint s = slot_of(b, link);
        g_array_append_val(slots, s);
        nd->bw[k] = MIN(nd->bw[k], g_array_index(b->slot_bw, double, s));
    }
    return TRUE;
}

/* totalBw (v2.18 src/graph/search.cc:27-35): the most a GPU has on NVLink, or on PCIe. */
static void
gpu_totals(Build *b, NcclNode *nd)
{
    for (guint i = 0; i < nd->n_gpus; i++) {
        guint d = ms_topology_gpu_device(b->topo, nd->rank[i]);
        GArray *out = out_links(b, d);
        double nvl = 0, pci = 0;
        for (guint a = 0; out != NULL && a < out->len; a++) {
            guint l = g_array_index(out, guint, a);
            const MsLink *k = ms_topology_link(b->topo, l);
            double f = figure(b, l);
            if (NVMASK & (1u << k->klass)) {
                nvl += f;
            } else if (k->klass == MS_LINK_PCIE && !isinf(f)) {
                pci = f;
                if (ms_topology_device_kind(b->topo, k->to) == MS_DEVICE_CPU) {
                    nd->gpu_cpu_bw[i] = f;
                }
            }
        }
        nd->total_bw = MAX(nd->total_bw, MAX(nvl, pci));
    }
}

/* Whether every pair goes GPU -> NVSwitch -> GPU through one switch, and each GPU's links to it:
 * the shape whose packing has a closed form (nccl_pack.c). */
static void
nvswitch_shape(Build *b, NcclNode *nd)
{
    guint n = nd->n_gpus;
    nd->nvs_up = g_new0(double, n);
    nd->nvs_down = g_new0(double, n);
    nd->nvswitch = n > 1;
    guint sw = G_MAXUINT;
    for (guint i = 0; i < n && nd->nvswitch; i++) {
        for (guint j = 0; j < n && nd->nvswitch; j++) {
            guint k = i * n + j;
            if (i == j) {
                continue;
            }
            guint off = nd->path_off[k];
            if (nd->type[k] != NCCL_PATH_NVL || nd->path_off[k + 1] - off != 2) {
                nd->nvswitch = FALSE;
                break;
            }
            nd->nvs_up[i] = nd->slot_bw[nd->path[off]];
            nd->nvs_down[j] = nd->slot_bw[nd->path[off + 1]];
        }
        guint d = ms_topology_gpu_device(b->topo, nd->rank[i]);
        GArray *out = out_links(b, d);
        for (guint a = 0; out != NULL && a < out->len && nd->nvswitch; a++) {
            const MsLink *l = ms_topology_link(b->topo, g_array_index(out, guint, a));
            if (l->klass == MS_LINK_NVSWITCH) {
                nd->nvswitch = sw == G_MAXUINT || sw == l->to;
                sw = l->to;
            }
        }
    }
}

/* A NIC's route from GPU i when it stays on PCIe inside the node: its type and narrowest link. */
static gboolean
nic_route(Build *b, NcclNode *nd, guint i, guint nic, NcclPath *type, double *pci)
{
    guint n = 0;
    guint dev = ms_topology_gpu_device(b->topo, nd->rank[i]);
    const guint32 *r = ms_topology_route(b->topo, dev, nic, &n, NULL);
    if (r == NULL || n == 0) {
        return FALSE;
    }
    *pci = INFINITY;
    for (guint h = 0; h < n; h++) {
        const MsLink *l = ms_topology_link(b->topo, r[h]);
        if (l->klass == MS_LINK_NIC || (NVMASK & (1u << l->klass)) ||
            ms_topology_device_node(b->topo, l->to) != b->node) {
            return FALSE;
        }
        *pci = MIN(*pci, figure(b, r[h]));
    }
    *type = classify(b->topo, r, n);
    return TRUE;
}

static gboolean
add_nics(Build *b, NcclNode *nd, GError **error)
{
    GArray *bw = g_array_new(FALSE, FALSE, sizeof(double));
    GArray *pci = g_array_new(FALSE, FALSE, sizeof(double));
    GArray *type = g_array_new(FALSE, FALSE, sizeof(NcclPath));
    GArray *gpu = g_array_new(FALSE, FALSE, sizeof(guint));
    guint n_dev = ms_topology_n_devices(b->topo);
    for (guint d = 0; d < n_dev; d++) {
        if (ms_topology_device_kind(b->topo, d) != MS_DEVICE_NIC ||
            ms_topology_device_node(b->topo, d) != b->node) {
            continue;
        }
        double line = INFINITY, best = -1;
        NcclPath best_type = NCCL_PATH_SYS;
        guint best_gpu = 0;
        GArray *out = out_links(b, d);
        for (guint a = 0; out != NULL && a < out->len; a++) {
            guint l = g_array_index(out, guint, a);
            if (ms_topology_link(b->topo, l)->klass == MS_LINK_NIC) {
                line = MIN(line, figure(b, l));
            }
        }
        for (guint i = 0; i < nd->n_gpus && !isinf(line); i++) {
            NcclPath t;
            double p;
            if (nic_route(b, nd, i, d, &t, &p)) {
                if (p > best || (p == best && t < best_type)) {
                    best = p;
                    best_type = t;
                    best_gpu = i;
                }
                /* ncclTopoGetLocal: the NICs of best bandwidth, then of best type. */
                double path_bw = MIN(p, line);
                if (path_bw > nd->gpu_net_bw[i] + 1e-9) {
                    nd->gpu_net_bw[i] = path_bw;
                    nd->gpu_nets[i] = 1;
                } else if (fabs(path_bw - nd->gpu_net_bw[i]) <= 1e-9) {
                    nd->gpu_nets[i]++;
                }
            }
        }
        if (best >= 0) {
            g_array_append_val(bw, line);
            g_array_append_val(pci, best);
            g_array_append_val(type, best_type);
            g_array_append_val(gpu, best_gpu);
        }
    }
    nd->n_nics = bw->len;
    nd->nic_bw = (double *)g_array_free(bw, FALSE);
    nd->nic_pci = (double *)g_array_free(pci, FALSE);
    nd->nic_type = (NcclPath *)g_array_free(type, FALSE);
    nd->nic_gpu = (guint *)g_array_free(gpu, FALSE);
    if (nd->n_nics == 0) {
        g_set_error(error, MS_NCCL_ERROR, MS_NCCL_ERROR_TOPOLOGY,
                    "node %d of the communicator has no NIC its GPUs reach over PCIe, so NCCL "
                    "could not build rings across nodes",
                    b->node);
        return FALSE;
    }
    return TRUE;
}

gboolean
nccl_node_build(NcclNode *nd, const MsTopology *topo, const guint *ranks, guint n,
                gboolean with_nics, guint version, guint arch, GError **error)
{
    memset(nd, 0, sizeof(*nd));
    nd->n_gpus = n;
    /* INTEL_P2P_OVERHEAD(speed): speed x 12/9 in 2.8 (v2.8.4 src/graph/topo.h:31), x 6/5 from
     * 2.9 (v2.9.9 topo.h:30, v2.10 topo.h:29, unchanged to v2.30 topo.h:39). */
    nd->intel_p2p = version >= V(2, 9, 0) ? 6.0 / 5.0 : 12.0 / 9.0;
    nd->rank = g_memdup2(ranks, n * sizeof(guint));
    nd->type = g_new0(NcclPath, n * n);
    nd->bw = g_new0(double, n *n);
    nd->path_off = g_new0(guint, n * n + 1);
    nd->gpu_net_bw = g_new0(double, n);
    nd->gpu_nets = g_new0(guint, n);
    nd->gpu_cpu_bw = g_new0(double, n);
    Build b = {topo, version, arch, (gint)ms_topology_gpu_node(topo, ranks[0])};
    b.out = g_hash_table_new_full(NULL, NULL, NULL, (GDestroyNotify)g_array_unref);
    b.slots = g_hash_table_new(NULL, NULL);
    b.slot_bw = g_array_new(FALSE, FALSE, sizeof(double));
    b.slot_pci = g_array_new(FALSE, FALSE, sizeof(gboolean));
    for (guint l = 0; l < ms_topology_n_links(topo); l++) {
        guint from = ms_topology_link(topo, l)->from;
        if (ms_topology_device_node(topo, from) != b.node) {
            continue;
        }
        GArray *out = out_links(&b, from);
        if (out == NULL) {
            out = g_array_new(FALSE, FALSE, sizeof(guint));
            g_hash_table_insert(b.out, GUINT_TO_POINTER(from), out);
        }
        g_array_append_val(out, l);
    }
    GArray *slots = g_array_new(FALSE, FALSE, sizeof(guint));
    gboolean ok = TRUE;
    nd->all_nvlink = TRUE;
    for (guint i = 0; i < n && ok; i++) {
        for (guint j = 0; j < n && ok; j++) {
            nd->path_off[i * n + j] = slots->len;
            if (i != j) {
                ok = pair_path(&b, nd, i, j, slots, error);
                nd->all_nvlink &= ok && nd->type[i * n + j] <= NCCL_PATH_NVB;
                nd->max_bw = MAX(nd->max_bw, nd->bw[i * n + j]);
            }
        }
    }
    nd->path_off[n * n] = slots->len;
    nd->slot_bw = (double *)b.slot_bw->data;
    nd->path = (guint *)slots->data;
    if (ok) {
        nvswitch_shape(&b, nd);
    }
    gpu_totals(&b, nd);
    ok = ok && (!with_nics || add_nics(&b, nd, error));
    nd->n_slots = b.slot_bw->len;
    nd->slot_bw = (double *)g_array_free(b.slot_bw, FALSE);
    nd->slot_pci = (gboolean *)g_array_free(b.slot_pci, FALSE);
    nd->path = (guint *)g_array_free(slots, FALSE);
    g_hash_table_destroy(b.out);
    g_hash_table_destroy(b.slots);
    if (!ok) {
        nccl_node_clear(nd);
    }
    return ok;
}

void
nccl_node_clear(NcclNode *nd)
{
    g_free(nd->rank);
    g_free(nd->slot_bw);
    g_free(nd->slot_pci);
    g_free(nd->type);
    g_free(nd->bw);
    g_free(nd->path_off);
    g_free(nd->path);
    g_free(nd->nic_bw);
    g_free(nd->nic_pci);
    g_free(nd->nic_type);
    g_free(nd->nic_gpu);
    g_free(nd->nvs_up);
    g_free(nd->nvs_down);
    g_free(nd->gpu_net_bw);
    g_free(nd->gpu_nets);
    g_free(nd->gpu_cpu_bw);
    memset(nd, 0, sizeof(*nd));
}
