/* topology_shape: routes of a preset computed from its shape (TopoShape) in constant time, and
 * the spine (and core) a fat tree spreads each route over. A GPU pair's route is the one the
 * search of topology_route.c finds (fewest links: the GPU's own NIC, its leaf, up only as far as
 * needed), except that among the equal-cost spines and cores the fabric's routing picks one: by
 * destination (D-mod-k, the static routing an InfiniBand subnet manager computes for a fat tree)
 * or by a fixed hash of the pair (ECMP, as Ethernet switches spread RoCE flows). */
#include "topology_private.h"

/* Node 0's link at offset `local`, moved to `node`. */
static inline guint32
node_link(const TopoShape *sh, guint node, guint32 local)
{
    return node * sh->node_links + local;
}

/* The NIC a GPU's traffic leaves and enters by: its own, or the node's only one. */
static inline guint
nic_of(const TopoShape *sh, guint local_gpu)
{
    return sh->per_gpu ? local_gpu : 0;
}

static inline guint
leaf_of(const TopoShape *sh, guint node, guint nic)
{
    guint group = node / sh->per_leaf;
    return sh->rail ? group * sh->nics_per_node + nic : group;
}

/* A NIC's number among all leaf ports: its leaf x ports per leaf + its port on the leaf. */
static inline guint64
port_id(const TopoShape *sh, guint node, guint nic)
{
    guint pos = node % sh->per_leaf;
    guint port = sh->rail ? pos : pos * sh->nics_per_node + nic;
    return (guint64)leaf_of(sh, node, nic) * sh->leaf_ports + port;
}

/* splitmix64's finaliser: a fixed, well-mixed hash, so ECMP choices depend only on the pair. */
static inline guint64
mix64(guint64 z)
{
    z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

void
topo_shape_pick(const TopoShape *sh, const MsTopology *topo, guint src, guint dst, guint *spine,
                guint *core)
{
    guint64 key = dst;
    if (sh->spread == TOPO_SPREAD_ECMP) {
        key = mix64(((guint64)src << 32) | dst);
    } else {
        /* D-mod-k: the destination's leaf port, first modulo the spines, then the rest of it
         * modulo the cores of a group, as on a k-ary tree. */
        const TopoDevice *d = topo_dev(topo, dst);
        if (d->kind == MS_DEVICE_GPU) {
            key = port_id(sh, d->node, nic_of(sh, d->rank % sh->gpn));
        } else if (d->kind == MS_DEVICE_NIC) {
            /* A node's NICs follow its GPUs and its switch, if any, in index order. */
            guint first = topo->node_devices[topo->node_start[d->node] + sh->gpn];
            key = port_id(sh, d->node, dst - first - (sh->intra == 1));
        }
    }
    *spine = key % sh->spines;
    *core = sh->core_group ? (key / sh->spines) % sh->core_group : 0;
}

static inline guint32
leaf_up(const TopoShape *sh, guint leaf, guint spine)
{
    return sh->first_spine_link + 2 * (leaf * sh->spines + spine);
}

static inline guint32
spine_up(const TopoShape *sh, guint pod, guint spine, guint core)
{
    return sh->first_core_link + 2 * ((pod * sh->spines + spine) * sh->core_group + core);
}

/* The switch links from leaf la to leaf lb (la != lb) over spine j (and core c); returns how
 * many it wrote. */
static guint
fabric_hops(const TopoShape *sh, guint la, guint lb, guint j, guint c, guint32 *out)
{
    guint pa = la / sh->pod_leaves, pb = lb / sh->pod_leaves, n = 0;
    out[n++] = leaf_up(sh, la, j);
    if (pa != pb) {
        out[n++] = spine_up(sh, pa, j, c);
        out[n++] = spine_up(sh, pb, j, c) + 1;
    }
    out[n++] = leaf_up(sh, lb, j) + 1;
    return n;
}

guint
topo_shape_gpu_route(const MsTopology *topo, guint src_rank, guint dst_rank, guint32 *out)
{
    const TopoShape *sh = topo->shape;
    if (src_rank == dst_rank) {
        return 0;
    }
    guint a = src_rank / sh->gpn, i = src_rank % sh->gpn;
    guint b = dst_rank / sh->gpn, j = dst_rank % sh->gpn;
    if (a == b) {
        if (sh->intra == 2) {
            out[0] = node_link(sh, a, sh->mesh[i * sh->gpn + j]);
            return 1;
        }
        out[0] = node_link(sh, a, sh->intra_up[i]);
        out[1] = node_link(sh, a, sh->intra_dn[j]);
        return 2;
    }
    guint ni = nic_of(sh, i), nj = nic_of(sh, j), n = 0;
    out[n++] = node_link(sh, a, sh->gpu_nic[i]);
    out[n++] = node_link(sh, a, sh->nic_up[ni]);
    if (sh->n_leaves > 0) {
        guint la = leaf_of(sh, a, ni), lb = leaf_of(sh, b, nj);
        if (la != lb) {
            guint spine, core;
            topo_shape_pick(sh, topo, src_rank, dst_rank, &spine, &core);
            n += fabric_hops(sh, la, lb, spine, core, out + n);
        }
    }
    out[n++] = node_link(sh, b, sh->nic_dn[nj]);
    out[n++] = node_link(sh, b, sh->nic_gpu[j]);
    return n;
}

/* Whether link l is a leaf-spine (kind 0) or spine-core (kind 1) link going up (dir 0) or down
 * (dir 1). Spine-core links follow the leaf-spine ones. */
static gboolean
fabric_link(const TopoShape *sh, guint32 l, guint kind, guint dir)
{
    guint32 first = kind == 0 ? sh->first_spine_link : sh->first_core_link;
    guint32 end =
        kind == 0 ? sh->first_core_link : first + 2 * sh->n_pods * sh->spines * sh->core_group;
    return l >= first && l < end && (l - first) % 2 == dir;
}

void
topo_shape_respine(const MsTopology *topo, guint src, guint dst, guint32 *links, guint n)
{
    const TopoShape *sh = topo->shape;
    if (sh == NULL || (sh->spines < 2 && sh->core_group < 2)) {
        return;
    }
    for (guint k = 0; k + 1 < n; k++) {
        if (!fabric_link(sh, links[k], 0, 0)) {
            continue;
        }
        /* leaf -> spine -> leaf, or leaf -> spine -> core -> spine -> leaf. */
        guint len = fabric_link(sh, links[k + 1], 0, 1) ? 2 : 4;
        if (len == 4 && (k + 3 >= n || !fabric_link(sh, links[k + 1], 1, 0) ||
                         !fabric_link(sh, links[k + 3], 0, 1))) {
            return;
        }
        guint la = (links[k] - sh->first_spine_link) / 2 / sh->spines;
        guint lb = (links[k + len - 1] - sh->first_spine_link) / 2 / sh->spines;
        guint spine, core;
        topo_shape_pick(sh, topo, src, dst, &spine, &core);
        fabric_hops(sh, la, lb, spine, core, links + k);
        return;
    }
}

void
topo_shape_free(TopoShape *sh)
{
    if (sh == NULL) {
        return;
    }
    g_free(sh->intra_up);
    g_free(sh->intra_dn);
    g_free(sh->mesh);
    g_free(sh->gpu_nic);
    g_free(sh->nic_gpu);
    g_free(sh->nic_up);
    g_free(sh->nic_dn);
    g_free(sh);
}
