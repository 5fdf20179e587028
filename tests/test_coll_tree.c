/* Tests of NCCL's tree allreduce under the nccl model: the double binary tree NCCL builds across
 * nodes (pinned for 2, 3, 4 and 16 nodes), the bytes the tree's connections move per node and
 * direction in closed form, the tree alone against NCCL's predicted time, and the tree sharing
 * NICs with an all-to-all, where its own pattern and the ring's flows load different NICs. */
#include <math.h>

#include "ms_test.h"
#include "sim/net/collective.h"
#include "sim/net/net_model.h"
#include "sim/sim.h"

typedef struct {
    gint up, d0, d1;
    guint type;
} Want;

/* Both trees of every node against a table worked out by hand from ncclGetBtree and
 * ncclGetDtree (src/graph/trees.cc, the same in 2.10.3, 2.18.6, 2.22.3 and 2.30.7), and every
 * edge seen from both ends: a node's parent lists it as the child its type says. */
static void
check_dtree(guint n, const Want *w0, const Want *w1)
{
    for (guint r = 0; r < n; r++) {
        MsNcclTreeNode t[2];
        ms_nccl_dtree(n, r, &t[0], &t[1]);
        const Want *w[2] = {&w0[r], &w1[r]};
        for (guint k = 0; k < 2; k++) {
            if (t[k].up != w[k]->up || t[k].down[0] != w[k]->d0 || t[k].down[1] != w[k]->d1 ||
                (t[k].up >= 0 && t[k].child_type != w[k]->type)) {
                fprintf(stderr, "\n  %u nodes, node %u, tree %u: up %d down %d %d type %u", n, r, k,
                        t[k].up, t[k].down[0], t[k].down[1], t[k].child_type);
            }
            CU_ASSERT_EQUAL(t[k].up, w[k]->up);
            CU_ASSERT_EQUAL(t[k].down[0], w[k]->d0);
            CU_ASSERT_EQUAL(t[k].down[1], w[k]->d1);
            if (t[k].up >= 0) {
                CU_ASSERT_EQUAL(t[k].child_type, w[k]->type);
                MsNcclTreeNode p[2];
                ms_nccl_dtree(n, (guint)t[k].up, &p[0], &p[1]);
                CU_ASSERT_EQUAL(p[k].down[t[k].child_type], (gint)r);
            }
        }
    }
}

static void
test_dtree(void)
{
    /* 2 nodes: node 0 is the root of the first tree, node 1 of its mirror. */
    const Want a0[] = {{-1, -1, 1, 0}, {0, -1, -1, 1}};
    const Want a1[] = {{1, -1, -1, 1}, {-1, -1, 0, 0}};
    check_dtree(2, a0, a1);
    /* 3 nodes (odd: the second tree is the first shifted by one node). */
    const Want b0[] = {{-1, -1, 2, 0}, {2, -1, -1, 0}, {0, 1, -1, 1}};
    const Want b1[] = {{1, 2, -1, 1}, {-1, -1, 0, 0}, {0, -1, -1, 0}};
    check_dtree(3, b0, b1);
    /* 4 nodes: 0 - 2 - {1, 3}, and its mirror 3 - 1 - {2, 0}. */
    const Want c0[] = {{-1, -1, 2, 0}, {2, -1, -1, 0}, {0, 1, 3, 1}, {2, -1, -1, 1}};
    const Want c1[] = {{1, -1, -1, 1}, {3, 2, 0, 1}, {1, -1, -1, 0}, {-1, -1, 1, 0}};
    check_dtree(4, c0, c1);
    /* 16 nodes: the first tree is the btree of the illustration in trees.cc (0 - 8 - {4, 12}
     * ...); the second mirrors it (node r's place is node 15 - r's in the first). */
    const Want d0[] = {
        {-1, -1, 8, 0}, {2, -1, -1, 0},  {4, 1, 3, 0},    {2, -1, -1, 1},
        {8, 2, 6, 0},   {6, -1, -1, 0},  {4, 5, 7, 1},    {6, -1, -1, 1},
        {0, 4, 12, 1},  {10, -1, -1, 0}, {12, 9, 11, 0},  {10, -1, -1, 1},
        {8, 10, 14, 1}, {14, -1, -1, 0}, {12, 13, 15, 1}, {14, -1, -1, 1},
    };
    Want d1[16];
    for (guint r = 0; r < 16; r++) {
        const Want *m = &d0[15 - r];
        d1[r] = (Want){m->up < 0 ? -1 : 15 - m->up, m->d0 < 0 ? -1 : 15 - m->d0,
                       m->d1 < 0 ? -1 : 15 - m->d1, m->type};
    }
    check_dtree(16, d0, d1);
}

static MsTopology *
load(const char *name)
{
    GError *error = NULL;
    MsTopology *t = ms_topology_load(name, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    return t;
}

static MsNetModel *
model(const char *spec_text, const MsTopology *topo)
{
    MsNetSpec spec;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_net_spec_parse(spec_text, &spec, &error));
    MsNetModel *m = ms_net_model_new(&spec, topo, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    return m;
}

/* The largest power-of-two size up to 1 GiB at which NCCL picks the tree for an allreduce over
 * every GPU (0: none). */
static guint64
tree_size(MsNetModel *net, guint n)
{
    const MsNcclComm *comm = ms_net_model_comm(net, NULL, n, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(comm);
    guint64 best = 0;
    for (guint64 s = 1024; s <= (G_GUINT64_CONSTANT(1) << 30); s *= 2) {
        MsNcclChoice ch;
        if (ms_nccl_choose(comm, MS_COLL_ALLREDUCE, s, &ch) && ch.algo == MS_NCCL_ALGO_TREE) {
            best = s;
        }
    }
    return best;
}

typedef struct {
    const MsTopology *topo;
    guint64 out[16], in[16], intra, total;
} Tally;

static void
tally(gpointer ctx, guint src, guint dst, guint64 bytes, const gint64 *preds, guint n_preds)
{
    Tally *t = ctx;
    gint a = ms_topology_device_node(t->topo, src), b = ms_topology_device_node(t->topo, dst);
    t->total += bytes;
    if (a == b) {
        t->intra += bytes;
    } else {
        t->out[a] += bytes;
        t->in[b] += bytes;
    }
}

static void
tally_coll(const MsTopology *topo, MsNetModel *net, guint64 bytes, Tally *t, guint *channels)
{
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    ms_net_model_apply(net, sim);
    MsCollSpec spec = {
        .op = MS_COLL_ALLREDUCE, .n_ranks = ms_topology_n_gpus(topo), .bytes = bytes, .net = net};
    g_autoptr(GError) error = NULL;
    g_autoptr(MsColl) coll = ms_coll_new(sim, &spec, NULL, NULL, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(coll);
    memset(t, 0, sizeof *t);
    t->topo = topo;
    CU_ASSERT_TRUE(ms_coll_enumerate(coll, tally, t));
    *channels = ms_coll_nccl_choice(coll)->channels;
}

/* Lina's testbed (4 nodes x 4 GPUs, one NIC per node), NCCL 2.10 at a size it runs as a tree.
 * A channel's tree has n - 1 edges (n - N in the chains, N - 1 across nodes), each carrying the
 * channel's share up and down: 2(n - 1) x size in all, as a ring's. Across nodes a node sends
 * (and receives) the share of every tree edge it has there, its parent's and its children's: in
 * the first tree (0 - 2 - {1, 3}) nodes 0, 1, 2, 3 have 1, 1, 3, 1 such edges, in the mirror
 * (3 - 1 - {2, 0}) 1, 3, 1, 1; with half the channels (half the bytes) on each tree, nodes 0 and
 * 3 move the size each way through their NIC and nodes 1 and 2 twice it. The ring's flows move
 * 2(n - 1)/n = 15/8 of the size through every NIC. */
static void
test_bytes_closed_form(void)
{
    g_autoptr(MsTopology) topo = load("lina-testbed");
    g_autoptr(MsNetModel) edges = model("nccl:version=2.10", topo);
    g_autoptr(MsNetModel) ring = model("nccl:version=2.10,tree=ring-flows", topo);
    guint64 size = tree_size(edges, 16);
    CU_ASSERT_TRUE_FATAL(size >= 65536);
    Tally t;
    guint channels = 0;
    tally_coll(topo, edges, size, &t, &channels);
    /* The split by halves is exact at a power-of-two size over an even channel count. */
    CU_ASSERT_TRUE_FATAL(channels % 2 == 0 && size % channels == 0);
    const double want[4] = {1, 2, 2, 1};
    for (guint a = 0; a < 4; a++) {
        CU_ASSERT_EQUAL(t.out[a], (guint64)(want[a] * size));
        CU_ASSERT_EQUAL(t.in[a], (guint64)(want[a] * size));
    }
    CU_ASSERT_EQUAL(t.total, 2 * 15 * size);
    CU_ASSERT_EQUAL(t.intra, 2 * 15 * size - 6 * size);
    Tally r;
    tally_coll(topo, ring, size, &r, &channels);
    CU_ASSERT_EQUAL(r.total, 2 * 15 * size);
    for (guint a = 0; a < 4; a++) {
        CU_ASSERT_EQUAL(r.out[a], size / 8 * 15);
    }
}

typedef struct {
    const MsTopology *topo;
    guint64 bytes[16][16]; /* by GPU rank, sender then receiver: flows between nodes */
} Pairs;

static void
pair_bytes(gpointer ctx, guint src, guint dst, guint64 bytes, const gint64 *preds, guint n_preds)
{
    Pairs *p = ctx;
    guint a = 0, b = 0;
    for (guint r = 0; r < 16; r++) {
        a = ms_topology_gpu_device(p->topo, r) == src ? r : a;
        b = ms_topology_gpu_device(p->topo, r) == dst ? r : b;
    }
    if (ms_topology_gpu_node(p->topo, a) != ms_topology_gpu_node(p->topo, b)) {
        p->bytes[a][b] += bytes;
    }
}

/* Which GPUs the nodes join at, on lina-testbed under 2.10 (2 channels: channel 0 runs the first
 * tree 0 - 2 - {1, 3}, channel 1 its mirror 3 - 1 - {2, 0}; the balanced pattern). Channel c's
 * chain through a node starts at its local GPU c (the ring's block order). A node's first GPU
 * connects to its parent; a child of type 0 joins the parent's second GPU, one of type 1 its
 * first (connect.cc:49-55). Channel 0: node 1 (type 0 under 2) GPU 4 to GPU 9, node 3 (type 1)
 * GPU 12 to GPU 8, node 2 (type 1 under 0) GPU 8 to GPU 0. Channel 1 (chains start at local 1):
 * node 2 (type 0 under 1) GPU 9 to GPU 6, node 0 (type 1 under 1) GPU 1 to GPU 5, node 1 (type 1
 * under 3) GPU 5 to GPU 13. Each carries the channel's half of the size both ways. */
/* The tree connections of an allreduce on lina-testbed under `spec`, 2 channels, against the
 * edges given (each carrying half the size both ways). */
static void
check_attach(const char *spec_text, const guint (*edges)[2], guint n_edges)
{
    g_autoptr(MsTopology) topo = load("lina-testbed");
    g_autoptr(MsNetModel) net = model(spec_text, topo);
    guint64 size = tree_size(net, 16);
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    ms_net_model_apply(net, sim);
    MsCollSpec spec = {.op = MS_COLL_ALLREDUCE, .n_ranks = 16, .bytes = size, .net = net};
    g_autoptr(GError) error = NULL;
    g_autoptr(MsColl) coll = ms_coll_new(sim, &spec, NULL, NULL, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(coll);
    CU_ASSERT_EQUAL_FATAL(ms_coll_nccl_choice(coll)->channels, 2);
    static Pairs p;
    memset(&p, 0, sizeof p);
    p.topo = topo;
    CU_ASSERT_TRUE(ms_coll_enumerate(coll, pair_bytes, &p));
    guint64 want[16][16] = {{0}};
    for (guint k = 0; k < n_edges; k++) {
        want[edges[k][0]][edges[k][1]] = want[edges[k][1]][edges[k][0]] = size / 2;
    }
    for (guint a = 0; a < 16; a++) {
        for (guint b = 0; b < 16; b++) {
            if (p.bytes[a][b] != want[a][b]) {
                fprintf(stderr,
                        "\n  %s: GPU %u to GPU %u: %" G_GUINT64_FORMAT
                        " B, want %" G_GUINT64_FORMAT,
                        spec_text, a, b, p.bytes[a][b], want[a][b]);
            }
            CU_ASSERT_EQUAL(p.bytes[a][b], want[a][b]);
        }
    }
}

static void
test_attach_gpus(void)
{
    static const guint edges[][2] = {{4, 9}, {12, 8}, {8, 0}, {9, 6}, {1, 5}, {5, 13}};
    check_attach("nccl:version=2.10", edges, G_N_ELEMENTS(edges));
    /* NCCL 2.8 on GPUs before SM80 (sm70 forced on the same machine): the split tree, whose
     * children both join the parent's second GPU (v2.8.4 connect.cc:43-45, search.cc:682).
     * Channel 0: node 3 now joins GPU 9, node 2 GPU 1; channel 1: node 0 joins GPU 6, node 1
     * GPU 14. */
    static const guint split[][2] = {{4, 9}, {12, 9}, {8, 1}, {9, 6}, {1, 6}, {5, 14}};
    check_attach("nccl:version=2.8.4,arch=sm70", split, G_N_ELEMENTS(split));
}

static MsTime
run_alone(const MsTopology *topo, MsNetModel *net, guint64 bytes)
{
    MsCollSpec spec = {
        .op = MS_COLL_ALLREDUCE, .n_ranks = ms_topology_n_gpus(topo), .bytes = bytes, .net = net};
    MsTime end = 0;
    g_autoptr(GError) error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_coll_run_alone(topo, &spec, &end, &error));
    return end;
}

/* Alone, the tree's connections take NCCL's predicted tree time within 3% (the rings' bound):
 * their wire factor is the predicted time over that of the busiest link. */
static void
test_alone_matches_nccl(void)
{
    static const struct {
        const char *topo, *net;
    } cases[] = {
        {"lina-testbed", "nccl:version=2.10"},   {"dgx-a100-2node", "nccl:version=2.18"},
        {"dgx-a100-2node", "nccl:version=2.22"}, {"dgx-a100-4node", "nccl:version=2.18"},
        {"dgx-a100-4node", "nccl:version=2.22"},
    };
    for (guint k = 0; k < G_N_ELEMENTS(cases); k++) {
        g_autoptr(MsTopology) topo = load(cases[k].topo);
        g_autoptr(MsNetModel) net = model(cases[k].net, topo);
        guint n = ms_topology_n_gpus(topo), trees = 0;
        const MsNcclComm *comm = ms_net_model_comm(net, NULL, n, NULL);
        for (guint64 s = 4096; s <= (G_GUINT64_CONSTANT(1) << 30); s *= 4) {
            MsNcclChoice ch;
            CU_ASSERT_TRUE_FATAL(ms_nccl_choose(comm, MS_COLL_ALLREDUCE, s, &ch));
            if (ch.algo != MS_NCCL_ALGO_TREE) {
                continue;
            }
            trees++;
            double got = ms_time_to_us(run_alone(topo, net, s));
            if (fabs(got / ch.cost.time_us - 1) > 0.03) {
                fprintf(stderr, "\n  %s %s %" G_GUINT64_FORMAT " B: %s %.2f us, NCCL %.2f",
                        cases[k].topo, cases[k].net, s, ms_nccl_proto_name(ch.proto), got,
                        ch.cost.time_us);
            }
            MS_ASSERT_REL(got, ch.cost.time_us, 0.03);
        }
        /* Each case has sizes NCCL runs as a tree, or it would test nothing. */
        CU_ASSERT_TRUE(trees > 0);
    }
}

static void
ignore(MsColl *coll, guint part, gpointer ctx)
{
}

#define A2A_BYTES (G_GUINT64_CONSTANT(1) << 20)

/* A tree allreduce over Lina's 16 GPUs and, at the same instant, an all-to-all among the GPUs
 * of nodes 0 and 3; returns when the all-to-all ends and when the allreduce does. */
static void
contend(const MsTopology *topo, MsNetModel *net, guint64 ar_bytes, MsTime *a2a_end, MsTime *ar_end)
{
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    ms_net_model_apply(net, sim);
    MsCollSpec ar = {.op = MS_COLL_ALLREDUCE, .n_ranks = 16, .bytes = ar_bytes, .net = net};
    guint ranks[8] = {0, 1, 2, 3, 12, 13, 14, 15};
    MsCollSpec a2a = {
        .op = MS_COLL_ALLTOALL, .n_ranks = 8, .ranks = ranks, .bytes = A2A_BYTES, .net = net};
    g_autoptr(GError) error = NULL;
    g_autoptr(MsColl) c1 = ms_coll_new(sim, &ar, ignore, NULL, &error);
    g_autoptr(MsColl) c2 = ms_coll_new(sim, &a2a, ignore, NULL, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c2);
    ms_coll_launch_all(c1);
    ms_coll_launch_all(c2);
    CU_ASSERT_TRUE_FATAL(ms_sim_run(sim, &error));
    *a2a_end = *ar_end = 0;
    for (guint i = 0; i < 8; i++) {
        *a2a_end = MAX(*a2a_end, ms_coll_rank_end(c2, i));
    }
    for (guint i = 0; i < 16; i++) {
        *ar_end = MAX(*ar_end, ms_coll_rank_end(c1, i));
    }
}

/* Alone, both ways of running the tree take NCCL's time. Their NIC loads differ: the ring's
 * flows put 15/8 of the size on every NIC, the tree's connections twice the size on the NICs of
 * nodes 1 and 2 and the size alone on those of nodes 0 and 3; both end when NCCL says, so the
 * busiest NIC carries the same wire bytes either way and the NICs of nodes 0 and 3 carry half
 * as many beside the tree's connections as beside the ring's flows. An all-to-all among the
 * GPUs of nodes 0 and 3, whose large messages weigh more at the NICs than the tree's, takes
 * those NICs either way and ends no later beside the tree. The allreduce is held back on those
 * two NICs only: beside the tree's connections half as many bytes are left there once the
 * all-to-all is gone (and the connections between nodes 1 and 2 were never held back), so it
 * must end sooner, and by more than half of what it still needs beside the ring's flows. */
static void
test_contended(void)
{
    g_autoptr(MsTopology) topo = load("lina-testbed");
    g_autoptr(MsNetModel) edges = model("nccl:version=2.10", topo);
    g_autoptr(MsNetModel) ring = model("nccl:version=2.10,tree=ring-flows", topo);
    guint64 size = tree_size(edges, 16);
    CU_ASSERT_TRUE_FATAL(size >= 65536);
    double alone_e = ms_time_to_us(run_alone(topo, edges, size));
    double alone_r = ms_time_to_us(run_alone(topo, ring, size));
    MS_ASSERT_REL(alone_e, alone_r, 0.03);
    MsTime a2a_e, ar_e, a2a_r, ar_r;
    contend(topo, edges, size, &a2a_e, &ar_e);
    contend(topo, ring, size, &a2a_r, &ar_r);
    fprintf(stderr,
            "\n  %" G_GUINT64_FORMAT " B tree + 1 MiB all-to-all on nodes 0, 3: all-to-all "
            "%.1f us beside the tree's connections, %.1f beside the ring's flows (allreduce %.1f, "
            "%.1f; alone %.1f)",
            size, ms_time_to_us(a2a_e), ms_time_to_us(a2a_r), ms_time_to_us(ar_e),
            ms_time_to_us(ar_r), alone_e);
    CU_ASSERT_TRUE(a2a_e <= a2a_r);
    CU_ASSERT_TRUE(ar_e < ar_r);
    CU_ASSERT_TRUE(ar_e - a2a_e < (ar_r - a2a_r) / 2);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"NCCL's double binary tree for 2, 3, 4 and 16 nodes", test_dtree},
        {"bytes per node and direction in closed form", test_bytes_closed_form},
        {"the GPUs where the nodes join, balanced and split patterns", test_attach_gpus},
        {"a tree alone takes NCCL's predicted time", test_alone_matches_nccl},
        {"beside an all-to-all: the tree loads its own NICs", test_contended},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"coll_tree", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
