/* Tests of NVLS_TREE (NVLS inside each node, a tree of NVLS heads between nodes) under the nccl
 * network model: when NCCL enables it (releases, multicast, nodes), the NVLS graph searched with
 * the NICs, its tuning model in closed form per release on two and four DGX H100 and on two B200
 * nodes, NCCL's choice, and its flows (sim/net/coll_tree.c): their count and bytes, the time alone
 * against NCCL's prediction, both engines alike. */
#include "nccl_fixture.h"
#include "sim/net/collective.h"
#include "sim/net/nccl.h"
#include "sim/net/net_model.h"
#include "sim/sim.h"
#include "topologies/topology.h"

#define MIB (G_GUINT64_CONSTANT(1) << 20)
#define V MS_NCCL_VERSION

static MsTopology *h100x2, *h100x4, *b200x2, *plain;

/* Two DGX H100 whose NVSwitches are not declared multicast-capable. */
static const char plain_ini[] = "[topology]\nformat = 1\nname = plain\ndescription = plain\n"
                                "[gpu]\nmodel = H100-SXM5-80GB\npeak = 989TFLOPS\n"
                                "hbm = 3350GBps\nmemory = 80GiB\nlaunch_overhead = 4us\n"
                                "[preset]\nnodes = 2\ngpus_per_node = 8\nintra = nvswitch\n"
                                "intra_bandwidth = 450GBps\nintra_links = 18\n"
                                "intra_latency = 0.7us\nnics = per_gpu\nnic_bandwidth = 400Gbps\n"
                                "nic_latency = 0.6us\nfabric = switch\nfabric_latency = 0.13us\n";

static int
suite_init(void)
{
    g_autoptr(GError) err = NULL;
    h100x2 = nccl_fx_load_src("validate/data/corpus/dgx-h100/topology.ini");
    h100x4 = nccl_fx_load("dgx-h100-4node");
    b200x2 = nccl_fx_load_src("validate/data/corpus/mit-b200/topology.ini");
    plain = ms_topology_load_data(plain_ini, strlen(plain_ini), "plain", &err);
    return h100x2 && h100x4 && b200x2 && plain ? 0 : 1;
}

static int
suite_clean(void)
{
    MsTopology **all[] = {&h100x2, &h100x4, &b200x2, &plain};
    nccl_fx_clear(all, G_N_ELEMENTS(all));
    return 0;
}

/* Across nodes NCCL enables NVLS (then NVLS_TREE only) from 2.18.1 through 2.19 and from 2.21.5,
 * not in 2.20. The NVLS graph searched with the NICs (SM90's inter-node list {48, 45, 42, 40 ...})
 * keeps the first speed with a channel per NIC: 8 channels at 40 GB/s on a DGX H100 (9 x 40 fits
 * its 360 GB/s NVSwitch link, 9 x 42 does not, nor in the 370.8 of 2.20.3 on), and from 2.19.3
 * pass 2 raises bwInter to 48 (the list's top; the 400 Gb/s NIC is 50). B200 at
 * 2.29.2: 96 is above the NIC, 48 fits 9 x 48 in 721.8, inter stays 48. */
static void
test_enable(void)
{
    guint on[] = {V(2, 18, 1), V(2, 18, 3), V(2, 19, 3), V(2, 21, 5),
                  V(2, 22, 3), V(2, 28, 3), V(2, 30, 7)};
    for (guint v = 0; v < G_N_ELEMENTS(on); v++) {
        MsNcclComm c = nccl_fx_comm(h100x2, on[v], 16);
        CU_ASSERT_EQUAL(c.n_nodes, 2);
        CU_ASSERT_EQUAL(c.nvls_graph_channels, 8);
        CU_ASSERT_EQUAL(c.nvls_channels, 16);
        MS_ASSERT_REL(c.nvls_bw, 40.0, 1e-12);
        MS_ASSERT_REL(c.nvls_bw_inter, on[v] >= V(2, 19, 3) ? 48.0 : 40.0, 1e-12);
    }
    guint off[] = {V(2, 17, 1), V(2, 20, 3), V(2, 20, 5)};
    for (guint v = 0; v < G_N_ELEMENTS(off); v++) {
        CU_ASSERT_EQUAL(nccl_fx_comm(h100x2, off[v], 16).nvls_graph_channels, 0);
    }
    CU_ASSERT_EQUAL(nccl_fx_comm(plain, V(2, 19, 3), 16).nvls_graph_channels, 0);
    MsNcclComm b = nccl_fx_comm(b200x2, V(2, 29, 2), 16);
    CU_ASSERT_EQUAL(b.nvls_graph_channels, 8);
    CU_ASSERT_EQUAL(b.nvls_channels, 32);
    MS_ASSERT_REL(b.nvls_bw, 48.0, 1e-12);
    MS_ASSERT_REL(b.nvls_bw_inter, 48.0, 1e-12);
}

/* The tuning model by hand, 8 channels of bwIntra 40 and bwInter 40 (2.18) or 48:
 * 2.18.3: bus 8 x 40 = 320, alg x 0.70 nNodes / 2(nNodes - 1): 224 on two nodes, 149.33 on four
 * (bwInter 40); latency 23 + 2 (nNodes - 1) x 19: 61 and 137.
 * 2.19.3: bus 8 x min(40, 48, or 24 past two nodes) = 320 or 192, alg x 5/6: 266.67 and 160;
 * latency 23 + 2 log2(nNodes) x 14: 51 and 79. 2.22.3: the NVLink's 25: 53 and 81.
 * 2.28.3: min(40 x 0.85 x 7/8 x 2 = 59.5, 48 x 2 on two nodes or 48, 57.7 or 45.5): 57.7 and 45.5,
 * bus 461.6 and 364, alg x nRanks / 2(nRanks - 1): 246.19 and 187.87; latency 53 and 81.
 * 2.30.7: the network's 20.9: 66.8 and 108.6.
 * B200 2.29.2: min(48 x 0.74 x 7/8 x 2 = 62.16, 96, 96) x 8 = 497.28, alg 265.22; 25 + 41.8. */
static void
test_tuning(void)
{
    static const struct {
        guint version, nodes;
        double bus, alg, lat;
    } rows[] = {
        {V(2, 18, 3), 2, 320, 224, 61},
        {V(2, 18, 3), 4, 320, 149.333333, 137},
        {V(2, 19, 3), 2, 320, 266.666667, 51},
        {V(2, 19, 3), 4, 192, 160, 79},
        {V(2, 22, 3), 2, 320, 266.666667, 53},
        {V(2, 22, 3), 4, 192, 160, 81},
        {V(2, 28, 3), 2, 461.6, 246.186667, 53},
        {V(2, 28, 3), 4, 364, 187.870968, 81},
        {V(2, 30, 7), 2, 461.6, 246.186667, 66.8},
        {V(2, 30, 7), 4, 364, 187.870968, 108.6},
    };
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
        MsNcclComm c =
            nccl_fx_comm(rows[i].nodes == 2 ? h100x2 : h100x4, rows[i].version, 8 * rows[i].nodes);
        MsNcclCost k;
        ms_nccl_cost(&c, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_NVLS_TREE, MS_NCCL_PROTO_SIMPLE,
                     1024 * MIB, &k);
        CU_ASSERT_TRUE_FATAL(k.enabled);
        MS_ASSERT_REL(k.bus_bw, rows[i].bus, 1e-6);
        MS_ASSERT_REL(k.alg_bw, rows[i].alg, 1e-6);
        MS_ASSERT_REL(k.latency_us, rows[i].lat, 1e-9);
        MS_ASSERT_REL(k.time_us, rows[i].lat + 1024 * MIB / (1000.0 * rows[i].alg), 1e-6);
        /* Simple only, allreduce only. */
        ms_nccl_cost(&c, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_NVLS_TREE, MS_NCCL_PROTO_LL128, 0, &k);
        CU_ASSERT_FALSE(k.enabled);
        ms_nccl_cost(&c, MS_COLL_ALLGATHER, MS_NCCL_ALGO_NVLS_TREE, MS_NCCL_PROTO_SIMPLE, 0, &k);
        CU_ASSERT_FALSE(k.enabled);
        /* Plain NVLS needs CollNet across nodes. */
        ms_nccl_cost(&c, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_NVLS, MS_NCCL_PROTO_SIMPLE, 0, &k);
        CU_ASSERT_FALSE(k.enabled);
    }
    MsNcclComm b = nccl_fx_comm(b200x2, V(2, 29, 2), 16);
    MsNcclCost k;
    ms_nccl_cost(&b, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_NVLS_TREE, MS_NCCL_PROTO_SIMPLE, 4096 * MIB,
                 &k);
    MS_ASSERT_REL(k.bus_bw, 497.28, 1e-6);
    MS_ASSERT_REL(k.latency_us, 25 + 2 * 20.9, 1e-9);
    /* Below 512 MiB the tree's Simple correction applies on SM100 (64 MiB: log2(2^26 / 64) = 20,
     * 0.8). */
    ms_nccl_cost(&b, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_NVLS_TREE, MS_NCCL_PROTO_SIMPLE, 64 * MIB, &k);
    MS_ASSERT_REL(k.bus_bw, 497.28 * 0.8, 1e-6);
    /* One node: never. */
    MsNcclComm one = nccl_fx_comm(h100x2, V(2, 22, 3), 8);
    ms_nccl_cost(&one, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_NVLS_TREE, MS_NCCL_PROTO_SIMPLE, 0, &k);
    CU_ASSERT_FALSE(k.enabled);
}

/* NCCL's choice at 1 GiB on two DGX H100: NVLS_TREE where it is enabled (its 224 GB/s or more
 * against the ring's), the ring in 2.20.3 and under algo=ring. */
static void
test_choice(void)
{
    static const struct {
        guint version;
        MsNcclAlgo algo;
    } rows[] = {
        {V(2, 18, 3), MS_NCCL_ALGO_NVLS_TREE},
        {V(2, 19, 3), MS_NCCL_ALGO_NVLS_TREE},
        {V(2, 20, 3), MS_NCCL_ALGO_RING},
        {V(2, 22, 3), MS_NCCL_ALGO_NVLS_TREE},
    };
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
        MsNcclComm c = nccl_fx_comm(h100x2, rows[i].version, 16);
        MsNcclChoice ch;
        CU_ASSERT_TRUE_FATAL(ms_nccl_choose(&c, MS_COLL_ALLREDUCE, 1024 * MIB, &ch));
        CU_ASSERT_EQUAL(ch.algo, rows[i].algo);
        if (ch.algo == MS_NCCL_ALGO_NVLS_TREE) {
            CU_ASSERT_EQUAL(ch.proto, MS_NCCL_PROTO_SIMPLE);
            CU_ASSERT_EQUAL(ch.channels, 16);
        }
        c.algo_mask = 1u << MS_NCCL_ALGO_RING;
        CU_ASSERT_TRUE_FATAL(ms_nccl_choose(&c, MS_COLL_ALLREDUCE, 1024 * MIB, &ch));
        CU_ASSERT_EQUAL(ch.algo, MS_NCCL_ALGO_RING);
    }
}

/* One allreduce alone on the first n ranks. */
static NcclFxRun
run(const MsTopology *topo, MsNetModel *net, guint n, guint64 bytes, gboolean symmetric)
{
    return nccl_fx_run(topo, net, MS_COLL_ALLREDUCE, n, bytes, symmetric);
}

/* Each GPU sends (S + S/8) / 7 to each of its node's 7 others (the NVLS exchange) and, as the
 * head of its NIC's channel, S/16 to its peer head on every tree edge it has: on two nodes one
 * edge per tree, both with the other node's same GPU, so 2 x S/16 = S/8 in one flow of two
 * connections. Flows: 2 x 56 + 16 = 128 on two nodes. On four nodes every node has an edge in
 * each tree at least, 2 x 3 edges in all. Alone within 3% of NCCL's prediction; the
 * symmetric-classes engine does not take the tree, so both engines agree. */
static void
test_flows(void)
{
    static const char *const specs[] = {"nccl:version=2.18.3", "nccl:version=2.22.3",
                                        "nccl:version=2.30.7"};
    static const guint64 sizes[] = {256 * MIB, 1024 * MIB + 48};
    for (guint v = 0; v < G_N_ELEMENTS(specs); v++) {
        g_autoptr(MsNetModel) net = nccl_fx_model(specs[v], h100x2);
        for (guint s = 0; s < G_N_ELEMENTS(sizes); s++) {
            guint64 S = sizes[s];
            NcclFxRun flows = run(h100x2, net, 16, S, FALSE),
                      classes = run(h100x2, net, 16, S, TRUE);
            CU_ASSERT_EQUAL_FATAL(flows.ch.algo, MS_NCCL_ALGO_NVLS_TREE);
            CU_ASSERT_EQUAL(flows.flows, 128);
            for (guint i = 0; i < 16; i++) {
                CU_ASSERT_EQUAL(flows.sent[i], (S + S / 8) / 7 * 7 + 2 * (S / 8 / 2));
            }
            MS_ASSERT_REL(flows.end_us, flows.ch.cost.time_us, 0.03);
            CU_ASSERT_EQUAL(classes.end_us, flows.end_us);
        }
    }
    /* On four nodes the ring wins at 2.22.3 (NVLS_TREE halves bwInter there): asked for. */
    g_autoptr(MsNetModel) four = nccl_fx_model("nccl:version=2.22.3,algo=nvlstree", h100x4);
    NcclFxRun r = run(h100x4, four, 32, 1024 * MIB, FALSE);
    CU_ASSERT_EQUAL_FATAL(r.ch.algo, MS_NCCL_ALGO_NVLS_TREE);
    guint64 intra = (1024 * MIB + 128 * MIB) / 7 * 7, edge = 1024 * MIB / 16;
    guint64 total = 0;
    for (guint i = 0; i < 32; i++) {
        /* At least one edge per tree; the node's GPUs all heads alike. */
        CU_ASSERT_TRUE(r.sent[i] >= intra + 2 * edge);
        CU_ASSERT_EQUAL((r.sent[i] - intra) % edge, 0);
        CU_ASSERT_EQUAL(r.sent[i], r.sent[i / 8 * 8]);
        total += r.sent[i] - intra;
    }
    /* Each tree has nNodes - 1 = 3 edges, each carried both ways by each of the 8 heads. */
    CU_ASSERT_EQUAL(total, 2 * 3 * 2 * 8 * edge);
    MS_ASSERT_REL(r.end_us, r.ch.cost.time_us, 0.03);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"when NCCL enables NVLS_TREE, its graph with the NICs", test_enable},
        {"NVLS_TREE in the tuning model, per release", test_tuning},
        {"NCCL's choice at 1 GiB on two DGX H100", test_choice},
        {"NVLS_TREE flows: bytes, time alone, both engines", test_flows},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"coll_nvls_tree", suite_init, suite_clean, tests},
                                         {NULL}};
    return ms_test_main(argc, argv, suites);
}
