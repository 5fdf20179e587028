/* nccl_comm: ncclCommInit's conclusions for a set of ranks: per node the ring and tree searches
 * (nccl_graph.c) over NCCL's view of the node (nccl_view.c), combined across nodes as init.cc
 * does (fewest channels, least bandwidth, worst path type), LL128's enable rule, the channel
 * duplications of connect.cc and the user's limits, and the point-to-point channels of paths.cc.
 * Homogeneous GPUs only; CollNet, which needs SHARP switches, is not modelled (NVLS on one node
 * is, nccl_nvls.c). */
#include "nccl_private.h"

#include <math.h>
#include <string.h>

static const guint known_archs[] = {70, 75, 80, 86, 89, 90, 100};

static gboolean
check_config(const MsNcclConfig *cfg, guint version, GError **error)
{
    guint maxch = nccl_max_channels(version);
    if (version < MS_NCCL_VERSION_MIN || version > MS_NCCL_VERSION_MAX) {
        g_set_error(error, MS_NCCL_ERROR, MS_NCCL_ERROR_VERSION,
                    "NCCL version %u.%u.%u is outside the modelled %u.%u.%u .. %u.%u.%u",
                    version / 10000, version / 100 % 100, version % 100,
                    MS_NCCL_VERSION_MIN / 10000, MS_NCCL_VERSION_MIN / 100 % 100,
                    MS_NCCL_VERSION_MIN % 100, MS_NCCL_VERSION_MAX / 10000,
                    MS_NCCL_VERSION_MAX / 100 % 100, MS_NCCL_VERSION_MAX % 100);
        return FALSE;
    }
    gboolean arch_ok = cfg->arch == 0;
    for (guint i = 0; i < G_N_ELEMENTS(known_archs); i++) {
        arch_ok |= cfg->arch == known_archs[i];
    }
    if (!arch_ok) {
        g_set_error(error, MS_NCCL_ERROR, MS_NCCL_ERROR_ARCH,
                    "GPU architecture sm%u is not modelled (70, 75, 80, 86, 89, 90, 100 are)",
                    cfg->arch);
        return FALSE;
    }
    const struct {
        const char *name;
        guint value, max;
    } limits[] = {
        {"min_channels", cfg->min_channels, maxch},
        {"max_channels", cfg->max_channels, maxch},
        {"net_peer_channels", cfg->net_peer_channels, maxch},
        {"algo_mask", cfg->algo_mask, (1u << MS_NCCL_N_ALGOS) - 1},
        {"proto_mask", cfg->proto_mask, (1u << MS_NCCL_N_PROTOS) - 1},
    };
    for (guint i = 0; i < G_N_ELEMENTS(limits); i++) {
        if (limits[i].value > limits[i].max) {
            g_set_error(error, MS_NCCL_ERROR, MS_NCCL_ERROR_CONFIG,
                        "%s %u is out of range (at most %u for NCCL %u.%u)", limits[i].name,
                        limits[i].value, limits[i].max, version / 10000, version / 100 % 100);
            return FALSE;
        }
    }
    return TRUE;
}

/* The GPUs' SM version: the configured one, else from every rank's model, which must agree. */
static gboolean
ranks_arch(const MsTopology *topo, const guint *ranks, guint n, guint cfg_arch, guint *arch,
           GError **error)
{
    if (cfg_arch != 0) {
        *arch = cfg_arch;
        return TRUE;
    }
    for (guint i = 0; i < n; i++) {
        const char *model = ms_topology_gpu_spec(topo, ranks[i])->model;
        guint a = 0;
        if (!ms_nccl_arch_of_model(model, &a)) {
            g_set_error(error, MS_NCCL_ERROR, MS_NCCL_ERROR_ARCH,
                        "GPU %u: model '%s' names no GPU architecture moesim knows", ranks[i],
                        model ? model : "(none)");
            return FALSE;
        }
        if (i > 0 && a != *arch) {
            g_set_error(error, MS_NCCL_ERROR, MS_NCCL_ERROR_ARCH,
                        "GPU %u is sm%u and GPU %u sm%u: mixed architectures are not modelled",
                        ranks[0], *arch, ranks[i], a);
            return FALSE;
        }
        *arch = a;
    }
    return TRUE;
}

static gboolean
check_ranks(const MsTopology *topo, const guint *ranks, guint n, GError **error)
{
    guint n_gpus = ms_topology_n_gpus(topo);
    g_autofree gboolean *seen = g_new0(gboolean, n_gpus);
    if (n == 0) {
        g_set_error(error, MS_NCCL_ERROR, MS_NCCL_ERROR_CONFIG, "a communicator of no ranks");
        return FALSE;
    }
    for (guint i = 0; i < n; i++) {
        if (ranks[i] >= n_gpus || seen[ranks[i]]) {
            g_set_error(error, MS_NCCL_ERROR, MS_NCCL_ERROR_CONFIG,
                        ranks[i] >= n_gpus ? "rank %u: the topology has GPUs 0..%u"
                                           : "rank %u is given twice",
                        ranks[i], n_gpus - 1);
            return FALSE;
        }
        seen[ranks[i]] = TRUE;
    }
    return TRUE;
}

/* LL128's default, only on the platforms NVIDIA verified: intra-node paths NVLink (NVB allowed
 * from 2.18.3), network paths within PCIe switches (PXB; PXN for SM90 from 2.17.1, except in
 * 2.27.3's P2C rule), and SM70/SM80, SM90 from 2.15.1, SM100 from 2.25.1, every SM70+ from
 * 2.27.3 (v2.10 tuning.cc:191-197, v2.15.1 :229, v2.17.1 :245, v2.18 :280-294, v2.25.1 :426,
 * v2.27.3 and v2.27.5 tuning.cc, v2.30 :514-536). The CUDA 11.8 exception for 2-rank Hopper
 * rings is not modelled: moesim does not know the CUDA version. */
static gboolean
ll128_enabled(guint v, guint arch, NcclPath intra, NcclPath inter)
{
    NcclPath intra_max = v >= V(2, 18, 3) ? NCCL_PATH_NVB : NCCL_PATH_NVL;
    gboolean archs = v >= V(2, 27, 0)
                         ? arch >= 70
                         : arch == 70 || arch == 80 || (arch == 90 && v >= V(2, 15, 0)) ||
                               (arch == 100 && v >= V(2, 25, 0));
    gboolean pxn = arch >= 90 && v >= V(2, 17, 0) && (v < V(2, 27, 0) || v >= V(2, 27, 5));
    return archs && intra <= intra_max && inter <= (pxn ? NCCL_PATH_PXN : NCCL_PATH_PXB);
}

/* ncclTopoPostset (v2.10 connect.cc:288-308, v2.18 :386-418, v2.30 :447-482): every channel is
 * doubled; Hopper across nodes with rings above 45 GB/s doubles again (from 2.18.1 while it
 * fits MAXCHANNELS, from 2.20.3 below 16 channels, SM90 and later from 2.25.1); then
 * NCCL_MAX_NCHANNELS caps and NCCL_MIN_NCHANNELS copies channels up. */
static guint
connect_channels(const MsNcclComm *c, const MsNcclConfig *cfg, guint graph_channels)
{
    guint v = c->version, maxch = nccl_max_channels(v);
    guint nch = MIN(maxch, 2 * graph_channels);
    gboolean hopper = v >= V(2, 25, 0) ? c->arch >= 90 : c->arch == 90;
    if (v >= V(2, 18, 0) && hopper && c->n_nodes > 1 && c->bw_intra > 45.0 &&
        (v >= V(2, 20, 0) ? nch < 16 : 2 * nch <= maxch)) {
        nch *= 2;
    }
    if (cfg->max_channels) {
        nch = MIN(nch, cfg->max_channels);
    }
    return MAX(nch, cfg->min_channels);
}

/* Channels per peer (paths.cc ncclTopoGetNchannels, v2.18 :669-691): a local NVLink peer 2 x
 * links, any other local peer 2; a remote one 1 in 2.10 and 2.11 (v2.10 paths.cc:491),
 * NCCL_NCHANNELS_PER_NET_PEER (2) from 2.12.7, an automatic count from 2.20.3 (v2.22
 * paths.cc:715-729: 2 halved while 2 x nRanks > 4 x p2pnChannels, at least the NICs needed to
 * carry the GPU's CPU link) and from 2.29.2 (v2.30 paths.cc:941-951: one per close NIC, more
 * when their bandwidth exceeds NCCL_P2P_PER_CHANNEL_NET_BW = 14 GB/s each). */
static guint
peer_channels(const MsNcclComm *c, const MsNcclConfig *cfg, const NcclNode *nd, guint g, guint p2p)
{
    guint v = c->version, best = G_MAXUINT;
    double nvl = ms_nccl_nvlink_bw(c->arch, v);
    for (guint j = 0; j < nd->n_gpus; j++) {
        if (j == g) {
            continue;
        }
        NcclPath t = nd->type[g * nd->n_gpus + j];
        gboolean nv = t == NCCL_PATH_NVL || (t == NCCL_PATH_NVB && v >= V(2, 30, 0));
        guint links = nv ? MAX(1, (guint)(nd->bw[g * nd->n_gpus + j] / nvl)) : 1;
        best = MIN(best, 2 * links);
    }
    if (c->n_nodes == 1) {
        return best;
    }
    guint net;
    if (v < V(2, 12, 0)) {
        net = 1;
    } else if (cfg->net_peer_channels) {
        net = cfg->net_peer_channels;
    } else if (v < V(2, 20, 0)) {
        net = 2;
    } else if (v < V(2, 29, 0)) {
        guint chmax = 2, count = 0;
        while (chmax * c->n_ranks > 4 * p2p && chmax > 1) {
            chmax /= 2;
        }
        for (double sum = 0; count < nd->gpu_nets[g] && sum < nd->gpu_cpu_bw[g]; count++) {
            sum += nd->gpu_net_bw[g];
        }
        net = MAX(count, chmax);
    } else {
        guint count = 0;
        double bw = 0;
        while (count < nd->gpu_nets[g]) {
            bw += nd->gpu_net_bw[g];
            count++;
            if (bw >= nd->gpu_cpu_bw[g]) {
                break;
            }
        }
        net = count ? MAX(count, ((guint)bw + 13) / 14) : 2;
    }
    return MIN(best, net);
}

static guint
pow2_up(guint v)
{
    guint p = 1;
    while (p < v) {
        p <<= 1;
    }
    return p;
}

/* p2pnChannels and p2pnChannelsPerPeer (v2.18 paths.cc:702-733, v2.22 :737-770, v2.30
 * :960-1003). */
static void
p2p_channels(MsNcclComm *c, const MsNcclConfig *cfg, const NcclNode *nodes, guint n_nodes)
{
    guint v = c->version, maxch = nccl_max_channels(v);
    guint p2p = MAX(MIN(c->channels, maxch), 1);
    guint min = v >= V(2, 29, 0) ? maxch : p2p;
    for (guint k = 0; k < n_nodes; k++) {
        for (guint g = 0; g < nodes[k].n_gpus; g++) {
            if (c->n_ranks > 1) {
                min = MIN(min, peer_channels(c, cfg, &nodes[k], g, p2p));
            }
        }
    }
    c->p2p_channels = pow2_up(p2p);
    c->p2p_channels_per_peer = pow2_up(min);
    if (v >= V(2, 29, 0) && c->n_nodes > 1 && cfg->net_peer_channels == 0) {
        /* Fit all peers in one round of 8 per channel (NCCL_MAX_DEV_WORK_P2P_PER_BATCH). */
        while (c->p2p_channels_per_peer * ((c->n_ranks + 7) / 8) > c->p2p_channels &&
               c->p2p_channels_per_peer > 1) {
            c->p2p_channels_per_peer /= 2;
        }
    } else if (v >= V(2, 22, 0)) {
        c->p2p_channels_per_peer = MIN(c->p2p_channels_per_peer, c->p2p_channels);
    }
}

/* One node's ring and tree graphs. */
static gboolean
node_graphs(const NcclNode *nd, const MsNcclComm *c, NcclGraph *ring, NcclGraph *tree)
{
    NcclSearch s = {c->version, c->arch, c->n_nodes > 1,
                    FALSE,      1,       nccl_max_channels(c->version) / 2};
    nccl_search(nd, &s, ring);
    s.tree = TRUE;
    s.min_channels = s.max_channels = ring->channels;
    nccl_search(nd, &s, tree);
    return TRUE;
}

/* What NCCL's own search, run on the DGX H100 layout (a PCIe switch per two GPUs and their two
 * 400 Gb/s NICs), concludes for the tree where its backtracking differs from the packing: one
 * speed less than the ring in 2.18.1 (45 of the SM90 list), the simple tree pattern from 2.18.3
 * to 2.19.1 (2.19.3 is balanced again). With one GPU per node the tree is always the simple
 * pattern (v2.18 src/graph/search.cc:850). 2.8 and 2.9 ask for the simple tree on at most two
 * nodes, else the balanced one (v2.8.4 src/init.cc:652, v2.9.9 init.cc:565; 2.10 always asks
 * for the balanced tree, v2.10 init.cc:597), and the search turns the balanced tree into the
 * split tree on GPUs before SM80 (v2.8.4 search.cc:679-682, v2.9.9 :741). The search's fallback
 * from the split to the simple tree when the split finds nothing (v2.8.4 search.cc:741-745) is
 * not modelled: the packing does not tell the patterns apart. */
static void
tree_quirks(MsNcclComm *c, const NcclGraph *ring, NcclGraph *tree)
{
    guint v = c->version;
    if (c->ppn == 1 || (v < V(2, 10, 0) && c->n_nodes <= 2)) {
        c->tree_simple = TRUE;
    } else if (v < V(2, 10, 0) && c->arch < 80) {
        c->tree_split = TRUE;
    }
    if (c->arch >= 90 && c->n_nodes > 1 && c->ppn > 1 && ring->bw_inter >= 48.0) {
        if (v >= V(2, 18, 0) && v < V(2, 18, 3)) {
            tree->bw_inter = tree->bw_intra = 45.0;
        } else if (v >= V(2, 18, 3) && v < V(2, 19, 3)) {
            c->tree_simple = TRUE;
        }
    }
}

gboolean
ms_nccl_comm_init(MsNcclComm *out, const MsTopology *topo, const guint *ranks, guint n,
                  const MsNcclConfig *cfg, GError **error)
{
    g_return_val_if_fail(out != NULL && topo != NULL && cfg != NULL, FALSE);
    memset(out, 0, sizeof(*out));
    guint version = cfg->version ? cfg->version : MS_NCCL_VERSION_DEFAULT;
    g_autofree guint *sorted = g_new(guint, MAX(n, 1));
    for (guint i = 0; i < n; i++) {
        sorted[i] = ranks ? ranks[i] : i;
    }
    if (!check_config(cfg, version, error) || !check_ranks(topo, sorted, n, error)) {
        return FALSE;
    }
    guint arch = 0;
    if (!ranks_arch(topo, sorted, n, cfg->arch, &arch, error)) {
        return FALSE;
    }
    /* Ranks node by node (topology ranks are node-major). */
    for (guint i = 1; i < n; i++) {
        for (guint j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
            guint t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    }
    MsNcclComm *c = out;
    c->version = version;
    c->arch = arch;
    c->amd_cpu = cfg->amd_cpu;
    c->net_latency_us = 0;
    c->n_ranks = n;
    GArray *nodes = g_array_new(FALSE, TRUE, sizeof(NcclNode));
    for (guint i = 0; i < n;) {
        guint node = ms_topology_gpu_node(topo, sorted[i]), j = i;
        while (j < n && ms_topology_gpu_node(topo, sorted[j]) == node) {
            j++;
        }
        g_array_set_size(nodes, nodes->len + 1);
        c->ppn = MAX(c->ppn, j - i);
        i = j;
    }
    c->n_nodes = nodes->len;
    c->nvls_channels = c->nvls_graph_channels = 0;
    c->nvls_bw = c->nvls_bw_inter = 0;
    gboolean ok = TRUE;
    NcclGraph ring = {0}, tree = {0};
    NcclPath type_inter = NCCL_PATH_PIX;
    for (guint i = 0, k = 0; i < n && ok; k++) {
        guint node = ms_topology_gpu_node(topo, sorted[i]), j = i;
        while (j < n && ms_topology_gpu_node(topo, sorted[j]) == node) {
            j++;
        }
        NcclNode *nd = &g_array_index(nodes, NcclNode, k);
        ok = nccl_node_build(nd, topo, sorted + i, j - i, c->n_nodes > 1, version, arch, error);
        nd->intel_cpu = !cfg->amd_cpu;
        NcclGraph r, t;
        if (ok) {
            nccl_nvls_init(c, nd, ms_topology_multicast(topo), k == 0);
        }
        if (ok && node_graphs(nd, c, &r, &t)) {
            /* Across ranks the fewest channels, the least bandwidth, the worst type (v2.18
             * src/init.cc AllGather3). */
            ring = k == 0
                       ? r
                       : (NcclGraph){MIN(ring.channels, r.channels), MIN(ring.bw_intra, r.bw_intra),
                                     MIN(ring.bw_inter, r.bw_inter),
                                     MAX(ring.type_intra, r.type_intra)};
            tree = k == 0
                       ? t
                       : (NcclGraph){MIN(tree.channels, t.channels), MIN(tree.bw_intra, t.bw_intra),
                                     MIN(tree.bw_inter, t.bw_inter),
                                     MAX(tree.type_intra, t.type_intra)};
            for (guint q = 0; q < nd->n_nics; q++) {
                type_inter = k == 0 && q == 0 ? nd->nic_type[q] : MAX(type_inter, nd->nic_type[q]);
            }
        }
        i = j;
    }
    if (ok) {
        tree_quirks(c, &ring, &tree);
        /* topoPathTypeStr (v2.18 src/graph/topo.cc:24), in NcclPath's order. */
        static const char *const path_names[] = {"LOC", "NVL", "NVB", "PIX",
                                                 "PXB", "PXN", "PHB", "SYS"};
        /* A graph across nodes takes the latency its NIC reports (ncclNetProperties.latency,
         * v2.12.7 src/graph/topo.cc:658, search.cc:468; the NICs of a moesim topology all
         * report one). */
        c->net_latency_us = c->n_nodes > 1 ? ms_time_to_us(ms_topology_nccl_net_latency(topo)) : 0;
        c->intra_nvlink = ring.type_intra == NCCL_PATH_NVL;
        c->intra_path = path_names[ring.type_intra];
        c->graph_channels = ring.channels;
        c->bw_intra = ring.bw_intra;
        c->bw_inter = ring.bw_inter;
        c->tree_channels = tree.channels;
        c->tree_bw_intra = tree.bw_intra;
        c->tree_bw_inter = tree.bw_inter;
        c->ll128 = ll128_enabled(version, arch, MAX(ring.type_intra, tree.type_intra), type_inter);
        /* comm->nChannels = min(tree, ring) (v2.18 src/init.cc:935). */
        c->channels = connect_channels(c, cfg, MIN(ring.channels, tree.channels));
        c->algo_mask = cfg->algo_mask ? cfg->algo_mask : (1u << MS_NCCL_N_ALGOS) - 1;
        c->proto_mask = cfg->proto_mask ? cfg->proto_mask : (1u << MS_NCCL_N_PROTOS) - 1;
        p2p_channels(c, cfg, (NcclNode *)nodes->data, nodes->len);
    }
    for (guint k = 0; k < nodes->len; k++) {
        nccl_node_clear(&g_array_index(nodes, NcclNode, k));
    }
    g_array_free(nodes, TRUE);
    if (!ok) {
        memset(out, 0, sizeof(*out));
    }
    return ok;
}
