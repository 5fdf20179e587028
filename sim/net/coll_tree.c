/* coll_tree: NCCL's tree allreduce as connections, payload bytes. Each channel runs one of NCCL's
 * two trees across nodes and a chain through every node's GPUs; every tree edge carries the
 * channel's share up (reduce) and down (broadcast), pipelined by chunk (runTreeUpDown and
 * runTreeSplit: v2.18 src/collectives/device/all_reduce.h:98-170), so all connections move at
 * once. Ignores the pipeline's fill (paid as NCCL's latency) and its coupling of the edges. */
#include "coll_tree.h"

#include <math.h>
#include <string.h>

/* NCCL's tree patterns (v2.18 src/include/graph.h:67-69): which GPU of a node's chain connects
 * to the parent node (always the chain's first) and to each child node. */
typedef enum {
    PATTERN_BALANCED = 1, /* parent and the second child on the first GPU, the first child on the
                           * second GPU */
    PATTERN_SPLIT = 2,    /* parent on the first GPU, both children on the second (2.8, 2.9) */
    PATTERN_SIMPLE = 3,   /* everything through the first GPU (NCCL_TOPO_PATTERN_TREE) */
} Pattern;

/* One connection: a channel's tree edge in one direction. */
typedef struct {
    guint src, dst;
    guint64 payload;
} Conn;

static void
add_conn(GArray *conns, guint src, guint dst, guint64 payload)
{
    Conn c = {src, dst, payload};
    g_array_append_val(conns, c);
}

static gint
cmp_conn(gconstpointer pa, gconstpointer pb)
{
    const Conn *a = pa, *b = pb;
    if (a->src != b->src) {
        return a->src < b->src ? -1 : 1;
    }
    return a->dst < b->dst ? -1 : a->dst > b->dst;
}

/* The phase's flows: one per connected pair (its connections' payloads summed, and their
 * count), sorted by sender then receiver, so that the order is the same on every run. */
static void
fill_flows(Phase *ph, guint n, GArray *conns)
{
    g_array_sort(conns, cmp_conn);
    const Conn *c = (const Conn *)conns->data;
    ph->pair_bytes = g_new(guint64, MAX(conns->len, 1));
    ph->flow_src = g_new(guint, MAX(conns->len, 1));
    ph->flow_dst = g_new(guint, MAX(conns->len, 1));
    ph->flow_conns = g_new(guint, MAX(conns->len, 1));
    ph->sender_first = g_new0(guint, n + 1);
    guint f = 0;
    for (guint k = 0; k < conns->len; k++) {
        if (k == 0 || c[k].src != c[k - 1].src || c[k].dst != c[k - 1].dst) {
            ph->flow_src[f] = c[k].src;
            ph->flow_dst[f] = c[k].dst;
            ph->pair_bytes[f] = 0;
            ph->flow_conns[f] = 0;
            ph->sender_first[c[k].src + 1]++;
            f++;
        }
        ph->pair_bytes[f - 1] += c[k].payload;
        ph->flow_conns[f - 1]++;
    }
    ph->n_flows = f;
    for (guint p = 0; p < n; p++) {
        ph->sender_first[p + 1] += ph->sender_first[p];
    }
}

/* The chain of channel c through a node's participants (in local order): NCCL's tree graph
 * starts each channel at the GPU its NIC enters and visits the node's GPUs as a path; moesim's
 * search packs the channels but does not reproduce NCCL's path order, so the tree's chain is the
 * ring's block order for the same channel (coll_build.c). */
static void
chain(const guint *block, guint size, guint c, guint *out)
{
    g_autofree guint *pos = g_new(guint, MAX(size, 1));
    ms_coll_block_order(size, c, pos);
    for (guint t = 0; t < size; t++) {
        out[t] = block[pos[t]];
    }
}

/* Node indices (node ids ascending: NCCL numbers nodes in the order of their first rank, and
 * participants are node-major) and each node's participants in local order. */
typedef struct {
    guint n_nodes;
    guint *start, *size; /* per node: its first entry in members, its participant count */
    guint *members;      /* participants node by node, each node's in local order */
} Nodes;

static void
nodes_init(Nodes *nd, guint n, const guint *node_of, const guint *local_of)
{
    g_autofree guint *order = g_new(guint, n);
    for (guint i = 0; i < n; i++) {
        order[i] = i;
    }
    /* Insertion sort by (node, local): stable, and n is at most a few thousand. */
    for (guint i = 1; i < n; i++) {
        for (guint j = i; j > 0; j--) {
            guint a = order[j - 1], b = order[j];
            if (node_of[a] < node_of[b] ||
                (node_of[a] == node_of[b] && local_of[a] <= local_of[b])) {
                break;
            }
            order[j - 1] = b;
            order[j] = a;
        }
    }
    nd->members = g_steal_pointer(&order);
    nd->start = g_new(guint, n + 1);
    nd->size = g_new0(guint, n + 1);
    nd->n_nodes = 0;
    for (guint i = 0; i < n; i++) {
        if (i == 0 || node_of[nd->members[i]] != node_of[nd->members[i - 1]]) {
            nd->start[nd->n_nodes++] = i;
        }
        nd->size[nd->n_nodes - 1]++;
    }
}

static void
nodes_clear(Nodes *nd)
{
    g_free(nd->start);
    g_free(nd->size);
    g_free(nd->members);
}

/* The GPU of a node's chain that a child node of child_type connects to. */
static guint
attach(const guint *chain_gpus, guint size, Pattern pattern, guint child_type)
{
    /* v2.18 src/graph/connect.cc:49-55: parent index 0, child 0 index 1 unless the pattern is
     * the simple tree, child 1 index 0, 1 for the split tree (v2.8.4 connect.cc:43-45; only 2.8
     * and 2.9 ask for it). One GPU per node is always the simple pattern (v2.18 search.cc:850). */
    if (size > 1 && ((child_type == 0 && pattern != PATTERN_SIMPLE) || pattern == PATTERN_SPLIT)) {
        return chain_gpus[1];
    }
    return chain_gpus[0];
}

/* plan as the one TREE phase of every participant, in one group in their order. */
static Phase *
tree_phase(PhasePlan *plan, guint n, guint channels)
{
    memset(plan, 0, sizeof *plan);
    Phase *ph = &plan->phases[0];
    plan->n_phases = 1;
    ms_coll_phase_init(ph, PHASE_TREE, n, 1, n);
    ph->channels = channels;
    for (guint i = 0; i < n; i++) {
        ph->members[i] = ph->pos_of[i] = i;
        ph->group_of[i] = 0;
    }
    return ph;
}

void
ms_coll_tree_build(PhasePlan *plan, guint n, guint64 bytes, guint channels, const MsNcclComm *comm,
                   const guint *node_of, const guint *local_of)
{
    Phase *ph = tree_phase(plan, n, channels);
    g_autoptr(GArray) conns = g_array_new(FALSE, FALSE, sizeof(Conn));
    if (n < 2 || channels == 0) {
        fill_flows(ph, n, conns);
        return;
    }
    Nodes nd;
    nodes_init(&nd, n, node_of, local_of);
    Pattern pattern = comm->tree_simple  ? PATTERN_SIMPLE
                      : comm->tree_split ? PATTERN_SPLIT
                                         : PATTERN_BALANCED;
    /* The channels before NCCL duplicates them (comm->nChannels = min(tree, ring), v2.18
     * src/init.cc:935): channel c of the duplicated set runs the second tree when c mod 2 x that
     * is in the upper half (connect.cc:141-142; later copies repeat the pattern). */
    guint base = MAX(1, MIN(comm->graph_channels, comm->tree_channels));
    g_autofree guint *chains = g_new(guint, n);
    for (guint c = 0; c < channels; c++) {
        guint64 slice = bytes / channels + (c < bytes % channels ? 1 : 0);
        gboolean second = c % (2 * base) >= base;
        for (guint a = 0; a < nd.n_nodes; a++) {
            guint *ch = &chains[nd.start[a]];
            chain(&nd.members[nd.start[a]], nd.size[a], c, ch);
            /* Inside the node: up is towards the chain's first GPU (connect.cc:56-57). */
            for (guint t = 1; t < nd.size[a]; t++) {
                add_conn(conns, ch[t], ch[t - 1], slice);
                add_conn(conns, ch[t - 1], ch[t], slice);
            }
        }
        for (guint a = 0; a < nd.n_nodes; a++) {
            MsNcclTreeNode t0, t1;
            ms_nccl_dtree(nd.n_nodes, a, &t0, &t1);
            const MsNcclTreeNode *t = second ? &t1 : &t0;
            if (t->up < 0) {
                continue;
            }
            /* The node's first GPU sends up to the GPU of the parent's chain that its child type
             * names (connect.cc:145-156: setTreeUp with treeToChild0 or treeToChild1). */
            guint u = (guint)t->up;
            guint me = chains[nd.start[a]];
            guint peer = attach(&chains[nd.start[u]], nd.size[u], pattern, t->child_type);
            add_conn(conns, me, peer, slice);
            add_conn(conns, peer, me, slice);
        }
    }
    nodes_clear(&nd);
    fill_flows(ph, n, conns);
}

double
ms_coll_tree_link_time(const Phase *ph, const guint *device, MsNetModel *net,
                       const MsTopology *topo)
{
    guint n_links = ms_topology_n_links(topo);
    if (ph->n_flows == 0) {
        return 0;
    }
    g_autofree guint *hops = g_new0(guint, MAX(n_links, 1));
    for (guint k = 0; k < ph->n_flows; k++) {
        guint len = 0;
        const guint32 *route =
            ms_net_model_route(net, device[ph->flow_src[k]], device[ph->flow_dst[k]], &len, NULL);
        for (guint i = 0; route && i < len; i++) {
            hops[route[i]] += ph->flow_conns[k];
        }
    }
    double worst = 0;
    for (guint l = 0; l < n_links; l++) {
        double bw = ms_net_model_link_bandwidth(net, l);
        if (hops[l] && isfinite(bw)) {
            worst = MAX(worst, hops[l] / bw);
        }
    }
    return worst;
}

/* NVLS_TREE (RunWorkElement<AllReduce, NVLS_TREE, Simple>, v2.19.3 src/device/all_reduce.h:466;
 * its trees, graph/connect.cc:255-300): in each node NVLS reduces every GPU's buffer into one
 * share per NVLS head and multicasts the result back (coll_nvls.c: per GPU and direction S + S/m
 * on its NVSwitch link, m the node's GPUs, carried as an exchange among them); between nodes
 * head h of each node runs NCCL's double binary tree over the nodes with head h of the others,
 * channel c on tree c mod 2, so each tree edge carries half of the head's share S/H up (reduce)
 * and down (broadcast). Head h is the node's GPU h x m / H (H = the NVLS graph's channels, one
 * per NIC; on nodes with a NIC per GPU every GPU is a head). All flows move at once: NCCL
 * pipelines the stages by chunk. */
void
ms_coll_nvls_tree_build(PhasePlan *plan, guint n, guint64 bytes, const MsNcclComm *comm,
                        const guint *node_of, const guint *local_of)
{
    Phase *ph = tree_phase(plan, n, comm->nvls_channels);
    ph->nvls = TRUE;
    g_autoptr(GArray) conns = g_array_new(FALSE, FALSE, sizeof(Conn));
    Nodes nd;
    nodes_init(&nd, n, node_of, local_of);
    guint heads = MAX(comm->nvls_graph_channels, 1);
    for (guint a = 0; a < nd.n_nodes; a++) {
        const guint *mem = &nd.members[nd.start[a]];
        guint m = nd.size[a];
        guint64 each = m > 1 ? (bytes + bytes / m) / (m - 1) : 0;
        for (guint i = 0; i < m && each; i++) {
            for (guint j = 0; j < m; j++) {
                if (j != i) {
                    add_conn(conns, mem[i], mem[j], each);
                }
            }
        }
    }
    guint64 half = bytes / heads / 2;
    for (guint a = 0; a < nd.n_nodes && half; a++) {
        MsNcclTreeNode t[2];
        ms_nccl_dtree(nd.n_nodes, a, &t[0], &t[1]);
        for (guint k = 0; k < 2; k++) {
            if (t[k].up < 0) {
                continue;
            }
            guint u = (guint)t[k].up;
            for (guint h = 0; h < heads; h++) {
                guint me = nd.members[nd.start[a] + MIN(h * nd.size[a] / heads, nd.size[a] - 1)];
                guint peer = nd.members[nd.start[u] + MIN(h * nd.size[u] / heads, nd.size[u] - 1)];
                add_conn(conns, me, peer, half);
                add_conn(conns, peer, me, half);
            }
        }
    }
    nodes_clear(&nd);
    fill_flows(ph, n, conns);
}
