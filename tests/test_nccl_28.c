/* Tests of NCCL's own model (sim/net/nccl.h) at its oldest releases, 2.8 and 2.9, against 2.10:
 * the link figures, speed list, tree patterns, LL128 caps per operation, tree factors, threads
 * and Intel P2P overhead those releases had, each worked out by hand from the tags' source
 * (lines given in each test). Version parsing and the 2.8 p2p cuts are in test_nccl.c. */
#include "nccl_fixture.h"
#include "sim/net/nccl.h"
#include "topologies/topology.h"

#include <string.h>

#define MIB (G_GUINT64_CONSTANT(1) << 20)
#define V MS_NCCL_VERSION

static MsTopology *a100, *a100x2, *lina, *abci, *dgx1;

static int
suite_init(void)
{
    a100 = nccl_fx_load("dgx-a100");
    a100x2 = nccl_fx_load("dgx-a100-2node");
    lina = nccl_fx_load("lina-testbed");
    abci = nccl_fx_load_src("validate/data/corpus/abci-v100/topology.ini");
    dgx1 = nccl_fx_load("dgx1-v100");
    return a100 && a100x2 && lina && abci && dgx1 ? 0 : 1;
}

static int
suite_clean(void)
{
    MsTopology **all[] = {&a100, &a100x2, &lina, &abci, &dgx1};
    nccl_fx_clear(all, G_N_ELEMENTS(all));
    return 0;
}

/* Graph = the search's channels x GB/s per channel (after its own dup), channels =
 * comm->nChannels. */
static void
check_graph(const MsNcclComm *c, guint graph, double bw, guint channels)
{
    CU_ASSERT_EQUAL(c->graph_channels, graph);
    MS_ASSERT_REL(c->bw_intra, bw, 1e-12);
    CU_ASSERT_EQUAL(c->channels, channels);
    if (c->graph_channels != graph || c->channels != channels) {
        fprintf(stderr, "\n  v%u: graph %u x %g, channels %u; expected %u x %g, %u\n", c->version,
                c->graph_channels, c->bw_intra, c->channels, graph, bw, channels);
    }
}

/* A box of two GPUs on an Intel CPU's root ports (PCIe Gen3 x16, NCCL's 12 GB/s): their path
 * crosses the root complex (PHB), where NCCL counts INTEL_P2P_OVERHEAD on every PCIe link. */
static const char host_box_ini[] = "[topology]\nformat = 1\nname = host\ndescription = host\n"
                                   "[gpu]\nmodel = V100-PCIE-16GB\npeak = 112TFLOPS\n"
                                   "hbm = 900GBps\nmemory = 16GiB\nlaunch_overhead = 4us\n"
                                   "[device g0]\nkind = gpu\nnode = 0\n"
                                   "[device g1]\nkind = gpu\nnode = 0\n"
                                   "[device cpu]\nkind = cpu\nnode = 0\n"
                                   "[link g0 cpu]\nclass = pcie\nbandwidth = 15.75GBps\n"
                                   "latency = 0.5us\n"
                                   "[link g1 cpu]\nclass = pcie\nbandwidth = 15.75GBps\n"
                                   "latency = 0.5us\n";

/* NCCL 2.8 and 2.9 against 2.10, every figure from the tags' source: v2.8.4 and v2.9.9
 * src/graph/topo.h:16-17 (NVLink 21), search.cc:651 / :710 (one speed list: 42, 30, 24, 21, ...),
 * tuning.cc:74 (LL128 caps per operation: allgather 18.3, reducescatter 15.2, allreduce 16.9),
 * :76 (Ampere tree caps 24.0, 22.5, 16.0), :129 / :131 (tree LL128 x 0.915 across nodes), :267 /
 * :269 (tree correction, LL128 0.5 at 2^13 x 64 B and 0.7 at 2^17 x 64 B), init.cc:652 / :565
 * (simple tree on two nodes), search.cc:682 / :741 (split tree before SM80), enqueue.cc:313-314 /
 * :398-400 (two extra warps for Tree/Simple); v2.8.4 topo.h:31 (INTEL_P2P_OVERHEAD 12/9). */
static void
test_release_28(void)
{
    /* DGX A100 (12 NVLinks of 21): 6 rings of 42 fill 252 GB/s, doubled to 12 x 21. The same
     * in 2.9.9; 2.10.3 has 12 x 22 (44 of its intra list). */
    MsNcclComm c = nccl_fx_comm(a100, V(2, 8, 4), 0);
    check_graph(&c, 12, 21, 24);
    check_graph((MsNcclComm[]){nccl_fx_comm(a100, V(2, 9, 9), 0)}, 12, 21, 24);
    check_graph((MsNcclComm[]){nccl_fx_comm(a100, V(2, 10, 3), 0)}, 12, 22, 24);
    /* DGX-1 (hybrid cube mesh, 1 or 2 NVLinks of 21 per pair): 6 x 21 in 2.8, 6 x 22 in 2.10. */
    check_graph((MsNcclComm[]){nccl_fx_comm(dgx1, V(2, 8, 4), 0)}, 6, 21, 12);
    check_graph((MsNcclComm[]){nccl_fx_comm(dgx1, V(2, 10, 3), 0)}, 6, 22, 12);
    /* Ring/LL128: 12 x 21 = 252, the all-SM80 cap 235, x 0.92 = 216.2, under the operation's
     * cap x 12 channels: allreduce 202.8 binds (x 8/14), allgather 219.6 does not (x 8/7),
     * reducescatter 182.4 binds (x 8/7). 2.10.3: 12 x 20 = 240 does not bind. */
    const double ring_bus = 235.0 * 0.92;
    MsNcclCost k = nccl_fx_cost(&c, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL128, 8);
    MS_ASSERT_REL(k.alg_bw, 12 * 16.9 * 8 / 14, 1e-6);
    MS_ASSERT_REL(k.latency_us, 10.0 + 14 * 1.9, 1e-6);
    k = nccl_fx_cost(&c, MS_COLL_ALLGATHER, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL128, 8);
    MS_ASSERT_REL(k.alg_bw, ring_bus * 8 / 7, 1e-6);
    k = nccl_fx_cost(&c, MS_COLL_REDUCESCATTER, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL128, 8);
    MS_ASSERT_REL(k.alg_bw, 12 * 15.2 * 8 / 7, 1e-6);
    MsNcclComm c10 = nccl_fx_comm(a100, V(2, 10, 3), 0);
    k = nccl_fx_cost(&c10, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL128, 8);
    MS_ASSERT_REL(k.alg_bw, ring_bus * 8 / 14, 1e-6);
    MsNcclChoice ch;
    CU_ASSERT_TRUE_FATAL(ms_nccl_choose(&c, MS_COLL_ALLREDUCE, 8 * MIB, &ch));
    CU_ASSERT_TRUE(ch.algo == MS_NCCL_ALGO_RING && ch.proto == MS_NCCL_PROTO_LL128);
    MS_ASSERT_REL(ch.cost.time_us, 36.6 + 8 * MIB / (1000 * 12 * 16.9 * 8 / 14), 1e-6);

    /* Two DGX A100 (ring 8 x 24, tree 8 x 30 inside): Tree/LL128 = min(min(235 x .92, 8 x 22.5)
     * x .915, 8 x 16.9) / 2 = 67.6, x .6 at 1 MiB (2^14 x 64 B) and x .7 at 8 MiB (2^17);
     * 2.10.3: min(min(216.2, 8 x 23.6) x 120/128, 8 x 20) / 2 = 80, x .6 and x .9. Latency
     * 4.4 + 2 (7 x 1.25 + 1 x 8.5) = 38.9 in both. */
    MsNcclComm two = nccl_fx_comm(a100x2, V(2, 8, 4), 0);
    MsNcclComm two10 = nccl_fx_comm(a100x2, V(2, 10, 3), 0);
    k = nccl_fx_cost(&two, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_TREE, MS_NCCL_PROTO_LL128, MIB);
    MS_ASSERT_REL(k.alg_bw, 8 * 16.9 / 2 * 0.6, 1e-6);
    MS_ASSERT_REL(k.latency_us, 38.9, 1e-6);
    k = nccl_fx_cost(&two, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_TREE, MS_NCCL_PROTO_LL128, 8 * MIB);
    MS_ASSERT_REL(k.alg_bw, 8 * 16.9 / 2 * 0.7, 1e-6);
    k = nccl_fx_cost(&two10, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_TREE, MS_NCCL_PROTO_LL128, 8 * MIB);
    MS_ASSERT_REL(k.alg_bw, 80 * 0.9, 1e-6);
    /* So at 8 MiB 2.8.4 runs Ring/LL128 (min(8 x 24 x .92, 8 x 16.9) x 16/30; 10 + 28 x 1.9 +
     * 2 x 4.0) where 2.10.3 runs Tree/LL128. */
    CU_ASSERT_TRUE_FATAL(ms_nccl_choose(&two, MS_COLL_ALLREDUCE, 8 * MIB, &ch));
    CU_ASSERT_TRUE(ch.algo == MS_NCCL_ALGO_RING && ch.proto == MS_NCCL_PROTO_LL128);
    MS_ASSERT_REL(ch.cost.time_us, 71.2 + 8 * MIB / (1000 * 8 * 16.9 * 16 / 30), 1e-6);
    CU_ASSERT_TRUE_FATAL(ms_nccl_choose(&two10, MS_COLL_ALLREDUCE, 8 * MIB, &ch));
    CU_ASSERT_TRUE(ch.algo == MS_NCCL_ALGO_TREE && ch.proto == MS_NCCL_PROTO_LL128);
    /* Two nodes: the simple tree pattern in 2.8 and 2.9, the balanced one in 2.10. */
    CU_ASSERT_TRUE(two.tree_simple && !two.tree_split);
    CU_ASSERT_TRUE(nccl_fx_comm(a100x2, V(2, 9, 9), 0).tree_simple);
    CU_ASSERT_FALSE(two10.tree_simple);
    /* Tree/Simple threads: 512 + 2 warps in 2.8, + 4 warps from 2.10. */
    MsNcclConfig cfg = {.version = V(2, 8, 4),
                        .algo_mask = 1u << MS_NCCL_ALGO_TREE,
                        .proto_mask = 1u << MS_NCCL_PROTO_SIMPLE};
    MsNcclComm masked;
    CU_ASSERT_TRUE_FATAL(ms_nccl_comm_init(&masked, a100x2, NULL, 16, &cfg, NULL));
    CU_ASSERT_TRUE(ms_nccl_choose(&masked, MS_COLL_ALLREDUCE, 256 * MIB, &ch) &&
                   ch.algo == MS_NCCL_ALGO_TREE && ch.threads == 512 + 64);
    cfg.version = V(2, 10, 3);
    CU_ASSERT_TRUE_FATAL(ms_nccl_comm_init(&masked, a100x2, NULL, 16, &cfg, NULL));
    CU_ASSERT_TRUE(ms_nccl_choose(&masked, MS_COLL_ALLREDUCE, 256 * MIB, &ch) &&
                   ch.algo == MS_NCCL_ALGO_TREE && ch.threads == 512 + 128);

    /* V100 nodes (ABCI): the split tree on more than two nodes before 2.10, the simple tree on
     * two; A100 nodes (Lina's 4) keep the balanced tree. */
    MsNcclComm v4 = nccl_fx_comm(abci, V(2, 8, 4), 16);
    CU_ASSERT_TRUE(v4.n_nodes == 4 && v4.tree_split && !v4.tree_simple);
    CU_ASSERT_TRUE(nccl_fx_comm(abci, V(2, 9, 9), 16).tree_split);
    CU_ASSERT_FALSE(nccl_fx_comm(abci, V(2, 10, 3), 16).tree_split);
    MsNcclComm v2 = nccl_fx_comm(abci, V(2, 8, 4), 8);
    CU_ASSERT_TRUE(v2.n_nodes == 2 && v2.tree_simple && !v2.tree_split);
    MsNcclComm l4 = nccl_fx_comm(lina, V(2, 8, 4), 0);
    CU_ASSERT_TRUE(l4.n_nodes == 4 && !l4.tree_split && !l4.tree_simple);
    /* Lina's tree (1 channel, 12 across): min(12 x .92, 1 x 16.0) x 0.915 / 2, under the cap of
     * 16.9, x .6 at 64 KiB (2^10 x 64 B); 2.10.3 x 120/128. */
    k = nccl_fx_cost(&l4, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_TREE, MS_NCCL_PROTO_LL128, 64 * 1024);
    MS_ASSERT_REL(k.alg_bw, 12 * 0.92 * 0.915 / 2 * 0.6, 1e-6);
    MsNcclComm l10 = nccl_fx_comm(lina, V(2, 10, 3), 0);
    k = nccl_fx_cost(&l10, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_TREE, MS_NCCL_PROTO_LL128, 64 * 1024);
    MS_ASSERT_REL(k.alg_bw, 12 * 0.92 * 120 / 128 / 2 * 0.6, 1e-6);

    /* Two GPUs through an Intel root complex, links of 12: a ring of s takes s x 12/9 in 2.8, so
     * 9 is the first speed that fits (12 x 12/9 = 16 and 10 x 12/9 = 13.3 do not); s x 6/5 from
     * 2.9, so 10 fits; AMD hosts take the speed itself, 12. */
    g_autoptr(GError) err = NULL;
    g_autoptr(MsTopology) host =
        ms_topology_load_data(host_box_ini, strlen(host_box_ini), "host", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(host);
    MsNcclComm h28 = nccl_fx_comm(host, V(2, 8, 4), 0);
    CU_ASSERT_STRING_EQUAL(h28.intra_path, "PHB");
    check_graph(&h28, 1, 9, 2);
    check_graph((MsNcclComm[]){nccl_fx_comm(host, V(2, 9, 9), 0)}, 1, 10, 2);
    cfg = (MsNcclConfig){.version = V(2, 8, 4), .amd_cpu = TRUE};
    MsNcclComm amd;
    CU_ASSERT_TRUE_FATAL(ms_nccl_comm_init(&amd, host, NULL, 2, &cfg, NULL));
    check_graph(&amd, 1, 12, 2);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"NCCL 2.8 and 2.9 against 2.10", test_release_28},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"nccl_28", suite_init, suite_clean, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
