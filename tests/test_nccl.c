/* Tests of NCCL's own model (sim/net/nccl.h): names and versions, link figures per release, the
 * channel counts NCCL's search finds on the shipped machines (each checked against that release's
 * src/graph/search.cc run on the machine described as an NCCL topology), LL128's rule, closed
 * forms of the tuning model computed by hand from the tables, the choice, threads and messages,
 * the point-to-point cuts per release, and every error. */
#include "nccl_fixture.h"
#include "sim/net/nccl.h"
#include "topologies/topology.h"

#define KIB (G_GUINT64_CONSTANT(1) << 10)
#define MIB (G_GUINT64_CONSTANT(1) << 20)
#define V MS_NCCL_VERSION

static MsTopology *a100, *a100x2, *h100, *h100x2, *lina, *schemoe, *dgx1, *pcie_box;

/* Two boxes of 4 A100 PCIe (Gen4 x16) on one switch, one 100 Gb/s NIC each: the "PCIe box with
 * one NIC" NCCL runs with 2 channels (sjeaugey, NVIDIA/nccl issue 689). */
static const char pcie_box_ini[] = "[topology]\nformat = 1\nname = box\ndescription = box\n"
                                   "[gpu]\nmodel = A100-PCIE-40GB\npeak = 312TFLOPS\n"
                                   "hbm = 1555GBps\nmemory = 40GiB\nlaunch_overhead = 4us\n"
                                   "[preset]\nnodes = 2\ngpus_per_node = 4\nintra = pcie_switch\n"
                                   "intra_bandwidth = 31.5GBps\nintra_latency = 0.5us\n"
                                   "nics = per_node\nnic_bandwidth = 100Gbps\nnic_latency = 1us\n"
                                   "gpu_nic_bandwidth = 31.5GBps\nfabric = switch\n"
                                   "fabric_latency = 0.1us\n";

static int
suite_init(void)
{
    a100 = nccl_fx_load("dgx-a100");
    a100x2 = nccl_fx_load("dgx-a100-2node");
    h100 = nccl_fx_load("dgx-h100");
    h100x2 = nccl_fx_load_src("validate/data/corpus/dgx-h100/topology.ini");
    lina = nccl_fx_load("lina-testbed");
    schemoe = nccl_fx_load("schemoe-testbed");
    dgx1 = nccl_fx_load("dgx1-v100");
    pcie_box = ms_topology_load_data(pcie_box_ini, strlen(pcie_box_ini), "box", NULL);
    return a100 && a100x2 && h100 && h100x2 && lina && schemoe && dgx1 && pcie_box ? 0 : 1;
}

static int
suite_clean(void)
{
    MsTopology **all[] = {&a100, &a100x2, &h100, &h100x2, &lina, &schemoe, &dgx1, &pcie_box};
    nccl_fx_clear(all, G_N_ELEMENTS(all));
    return 0;
}

static void
test_names(void)
{
    MsNcclAlgo a;
    MsNcclProto p;
    CU_ASSERT_STRING_EQUAL(ms_nccl_algo_name(MS_NCCL_ALGO_TREE), "tree");
    CU_ASSERT_STRING_EQUAL(ms_nccl_proto_name(MS_NCCL_PROTO_LL128), "LL128");
    CU_ASSERT_TRUE(ms_nccl_algo_from_name("RING", &a) && a == MS_NCCL_ALGO_RING);
    CU_ASSERT_TRUE(ms_nccl_proto_from_name("simple", &p) && p == MS_NCCL_PROTO_SIMPLE);
    CU_ASSERT_FALSE(ms_nccl_algo_from_name("collnet", &a));
    CU_ASSERT_FALSE(ms_nccl_proto_from_name(NULL, &p));
    guint v = 0;
    CU_ASSERT_TRUE(ms_nccl_parse_version("2.18.6", &v) && v == 21806);
    CU_ASSERT_TRUE(ms_nccl_parse_version("2.18", &v) && v == 21899);
    CU_ASSERT_TRUE(ms_nccl_parse_version("21003", &v) && v == 21003);
    CU_ASSERT_TRUE(ms_nccl_parse_version("2.30.99", &v) && v == MS_NCCL_VERSION_MAX);
    /* The oldest modelled release is 2.8.0; 2.7 is refused. */
    CU_ASSERT_TRUE(ms_nccl_parse_version("2.8.0", &v) && v == MS_NCCL_VERSION_MIN && v == 20800);
    CU_ASSERT_TRUE(ms_nccl_parse_version("2.8", &v) && v == 20899);
    CU_ASSERT_TRUE(ms_nccl_parse_version("2.9.9", &v) && v == 20909);
    CU_ASSERT_TRUE(ms_nccl_parse_version("20804", &v) && v == 20804);
    const char *bad[] = {"2.7",    "2.7.8",    "2.7.99", "20799", "2.31",     "23100",
                         "2.18.x", "abc",      "",       "2..18", "3.0",      "2.180",
                         "123456", "2.18.6-1", "2.18.",  ".18",   "2.18.100", "2.1.8"};
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        if (ms_nccl_parse_version(bad[i], &v)) {
            fprintf(stderr, "\n  '%s' parsed as %u\n", bad[i], v);
            CU_FAIL("a bad version parsed");
        }
    }
    CU_ASSERT_FALSE(ms_nccl_parse_version(NULL, &v));
}

static void
test_arch(void)
{
    const struct {
        const char *model;
        guint arch;
    } ok[] = {
        {"A100-SXM4-80GB", 80},
        {"A100-PCIE-40GB", 80},
        {"H100-SXM5-80GB", 90},
        {"H200-SXM-141GB", 90},
        {"V100-SXM2-32GB", 70},
        {"Tesla V100", 70},
        {"B200", 100},
        {"GB200", 100},
        {"RTX 2080 Ti", 75},
        {"RTX-2080-Ti", 75},
        {"GeForce RTX 4090", 89},
        {"L40S", 89},
        {"L4", 89},
        {"A10", 86},
        {"NVIDIA A10G", 86},
        {"A40", 86},
        {"RTX 3090", 86},
        {"Tesla T4", 75},
    };
    for (guint i = 0; i < G_N_ELEMENTS(ok); i++) {
        guint arch = 0;
        CU_ASSERT_TRUE(ms_nccl_arch_of_model(ok[i].model, &arch));
        if (arch != ok[i].arch) {
            fprintf(stderr, "\n  %s: sm%u, expected sm%u\n", ok[i].model, arch, ok[i].arch);
            CU_FAIL("wrong architecture");
        }
    }
    guint arch = 0;
    CU_ASSERT_FALSE(ms_nccl_arch_of_model("MI300X", &arch));
    CU_ASSERT_FALSE(ms_nccl_arch_of_model("", &arch));
    CU_ASSERT_FALSE(ms_nccl_arch_of_model(NULL, &arch));
}

static void
test_link_figures(void)
{
    /* ncclTopoNVLinkBw per release (graph/topo.h of each tag). */
    const struct {
        guint arch, version;
        double bw;
    } nvl[] = {
        {80, V(2, 10, 3), 22},    {80, V(2, 17, 1), 22},    {80, V(2, 18, 1), 20},
        {70, V(2, 12, 12), 22},   {70, V(2, 22, 3), 20},    {86, V(2, 18, 6), 12},
        {90, V(2, 12, 12), 22},   {90, V(2, 18, 6), 20},    {90, V(2, 19, 4), 20},
        {90, V(2, 20, 3), 20.6},  {100, V(2, 22, 3), 20.6}, {100, V(2, 25, 1), 40.0},
        {100, V(2, 27, 3), 40.0}, {100, V(2, 27, 5), 40.1}, {89, V(2, 18, 6), 20},
        {80, V(2, 8, 4), 21},     {70, V(2, 9, 9), 21},     {90, V(2, 9, 9), 21},
        {70, V(2, 8, 0), 21},     {86, V(2, 8, 4), 12},
    };
    for (guint i = 0; i < G_N_ELEMENTS(nvl); i++) {
        MS_ASSERT_REL(ms_nccl_nvlink_bw(nvl[i].arch, nvl[i].version), nvl[i].bw, 1e-12);
    }
    /* x16 Gen3/4/5 and x8 Gen3 nominal payload rates map to NCCL's 12, 24, 48, 6. */
    MS_ASSERT_REL(ms_nccl_pci_bw(15.75), 12.0, 1e-12);
    MS_ASSERT_REL(ms_nccl_pci_bw(15.754), 12.0, 1e-12);
    MS_ASSERT_REL(ms_nccl_pci_bw(31.5), 24.0, 1e-12);
    MS_ASSERT_REL(ms_nccl_pci_bw(63.0), 48.0, 1e-12);
    MS_ASSERT_REL(ms_nccl_pci_bw(7.877), 6.0, 1e-12);
    /* A figure no width x speed gives stays proportional. */
    MS_ASSERT_REL(ms_nccl_pci_bw(20.0), 20.0 * 12 / 15.754, 1e-12);
    CU_ASSERT_TRUE(isinf(ms_nccl_pci_bw(INFINITY)));
}

/* The known channel counts. Graph = the search's channels x GB/s per channel (after its own dup),
 * channels = comm->nChannels. */
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

static void
test_channels(void)
{
    /* DGX A100, one node: 6 rings of 40 (44 in 2.10) fill 12 NVLinks of 20 (22); the search
     * doubles them, connect doubles again: 24. */
    check_graph((MsNcclComm[]){nccl_fx_comm(a100, V(2, 10, 3), 0)}, 12, 22, 24);
    check_graph((MsNcclComm[]){nccl_fx_comm(a100, V(2, 18, 6), 0)}, 12, 20, 24);
    check_graph((MsNcclComm[]){nccl_fx_comm(a100, V(2, 22, 3), 0)}, 12, 20, 24);
    /* Two GPUs of it: the same 240 GB/s NVSwitch links. */
    check_graph((MsNcclComm[]){nccl_fx_comm(a100, V(2, 18, 6), 2)}, 12, 20, 24);
    /* Across nodes: one ring per NIC at 24 (the first speed below its 25 GB/s), no search dup
     * below 25: 8 x 24, 16 channels. The tree raises its intra-node speed to 30. */
    for (guint v = V(2, 10, 0); v <= V(2, 30, 0); v += 100) {
        MsNcclComm c = nccl_fx_comm(a100x2, v, 0);
        check_graph(&c, 8, 24, 16);
        CU_ASSERT_EQUAL(c.tree_channels, 8);
        MS_ASSERT_REL(c.tree_bw_intra, 30, 1e-12);
        MS_ASSERT_REL(c.tree_bw_inter, 24, 1e-12);
    }
    /* DGX H100, one node: 6 x 60 (360 or 370.8 GB/s of NVLink), dup to 12 x 30, 24 channels;
     * before SM90 had lists of its own, 9 x 44 of 396 dup to 16 x 22 (2.12). */
    check_graph((MsNcclComm[]){nccl_fx_comm(h100, V(2, 18, 6), 0)}, 12, 30, 24);
    check_graph((MsNcclComm[]){nccl_fx_comm(h100, V(2, 22, 3), 0)}, 12, 30, 24);
    check_graph((MsNcclComm[]){nccl_fx_comm(h100, V(2, 12, 12), 0)}, 16, 22, 32);
    /* DGX H100, two nodes: 8 x 48 through the 400 Gb/s NICs; 16 channels, doubled again for
     * Hopper in 2.18 and 2.19 (2 x 16 fits MAXCHANNELS), not from 2.20 (only below 16). */
    check_graph((MsNcclComm[]){nccl_fx_comm(h100x2, V(2, 18, 6), 0)}, 8, 48, 32);
    check_graph((MsNcclComm[]){nccl_fx_comm(h100x2, V(2, 19, 4), 0)}, 8, 48, 32);
    check_graph((MsNcclComm[]){nccl_fx_comm(h100x2, V(2, 22, 3), 0)}, 8, 48, 16);
    check_graph((MsNcclComm[]){nccl_fx_comm(h100x2, V(2, 30, 7), 0)}, 8, 48, 16);
    /* Lina testbed: one 100 Gb/s NIC (12.5 GB/s) per node, one ring of 12; 6 would fit two but
     * ties keep the first. 2 channels. Its tree climbs to 24 inside the node. */
    MsNcclComm l = nccl_fx_comm(lina, V(2, 10, 3), 0);
    check_graph(&l, 1, 12, 2);
    MS_ASSERT_REL(l.tree_bw_intra, 24, 1e-12);
    /* One Lina node: the 4-GPU NVLink mesh (4 links per pair) packs 6 rings of 44. */
    check_graph((MsNcclComm[]){nccl_fx_comm(lina, V(2, 10, 3), 4)}, 12, 22, 24);
    /* DGX-1's hybrid cube mesh: 6 rings of 22 use all 6 NVLinks of every GPU; below 25, no dup. */
    check_graph((MsNcclComm[]){nccl_fx_comm(dgx1, V(2, 10, 3), 0)}, 6, 22, 12);
    check_graph((MsNcclComm[]){nccl_fx_comm(dgx1, V(2, 18, 6), 0)}, 6, 20, 12);
    /* PCIe boxes with one NIC: 2 channels. SM75 GPUs also reserve 1/8 on the way back from the
     * NIC, so the ScheMoE testbed's ring runs at 10. */
    check_graph((MsNcclComm[]){nccl_fx_comm(pcie_box, V(2, 18, 6), 0)}, 1, 12, 2);
    check_graph((MsNcclComm[]){nccl_fx_comm(schemoe, V(2, 18, 6), 0)}, 1, 10, 2);
    CU_ASSERT_FALSE((MsNcclComm[]) { nccl_fx_comm(pcie_box, V(2, 18, 6), 0) } -> intra_nvlink);
}

/* Two GPUs without peer-to-peer on one PCIe 3.0 switch: NCCL's SHM transport goes through host
 * memory, and the topology routes the pair GPU -> switch -> CPU -> switch -> GPU. From 2.19.1
 * NCCL's path computation diverts such a pair through the CPU too (type PHB: ncclTopoCheckP2p
 * clears p2p when NVML reports P2P disabled, v2.19.1 src/graph/paths.cc:320-329, and
 * ncclTopoComputePaths adds the CPU step, paths.cc:553-558), so both hops of the ring cross the
 * switch's uplink of 12 GB/s (Gen3 x16) in each direction. On an Intel CPU each PCIe link of a
 * PHB path takes 6/5 of the speed (INTEL_P2P_OVERHEAD, v2.18 src/graph/topo.h:30, search.cc:70-77):
 * the largest speed s of the intra list with 2 x 6/5 x s <= 12 is 5; on AMD 2 x s <= 12 gives 6.
 * Up to 2.18.6 the check only logged (it set p2p = 0 under NCCL_IGNORE_DISABLED_P2P alone,
 * v2.18.6 paths.cc:320-328): the search keeps the direct path (PIX, no overhead), each hop on
 * links of its own, and one ring of 12 fits. One channel, no dup below 25, connect doubles it:
 * 2. The ring's bus bandwidth is the graph's. */
static const char shm_box_ini[] = "[topology]\nformat = 1\nname = shm\ndescription = shm\n"
                                  "[gpu]\nmodel = RTX-2080-Ti\npeak = 53.8TFLOPS\n"
                                  "hbm = 616GBps\nmemory = 11GiB\nlaunch_overhead = 4us\n"
                                  "[device g0]\nkind = gpu\nnode = 0\n"
                                  "[device g1]\nkind = gpu\nnode = 0\n"
                                  "[device sw]\nkind = switch\nnode = 0\n"
                                  "[device cpu]\nkind = cpu\nnode = 0\n"
                                  "[link g0 sw]\nclass = pcie\nbandwidth = 15.75GBps\n"
                                  "latency = 0.5us\n"
                                  "[link g1 sw]\nclass = pcie\nbandwidth = 15.75GBps\n"
                                  "latency = 0.5us\n"
                                  "[link sw cpu]\nclass = pcie\nbandwidth = 15.75GBps\n"
                                  "latency = 0.5us\n"
                                  "[route g0 g1]\npath = g0;sw;cpu;sw;g1\n"
                                  "[route g1 g0]\npath = g1;sw;cpu;sw;g0\n";

static void
test_shm_through_host(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(MsTopology) t = ms_topology_load_data(shm_box_ini, strlen(shm_box_ini), "shm", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    static const guint versions[] = {V(2, 10, 3), V(2, 12, 12), V(2, 18, 3), V(2, 18, 6),
                                     V(2, 19, 1), V(2, 19, 4),  V(2, 22, 3), V(2, 30, 7)};
    for (guint i = 0; i < G_N_ELEMENTS(versions); i++) {
        guint v = versions[i];
        gboolean diverted = v >= V(2, 19, 1);
        MsNcclComm intel = nccl_fx_comm(t, v, 0);
        CU_ASSERT_STRING_EQUAL(intel.intra_path, diverted ? "PHB" : "PIX");
        check_graph(&intel, 1, diverted ? 5 : 12, 2);
        CU_ASSERT_FALSE(intel.intra_nvlink);
        MsNcclCost k =
            nccl_fx_cost(&intel, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_SIMPLE, MIB);
        MS_ASSERT_REL(k.bus_bw, diverted ? 5.0 : 12.0, 1e-12);
        MsNcclConfig cfg = {.version = v, .amd_cpu = TRUE};
        MsNcclComm amd;
        CU_ASSERT_TRUE_FATAL(ms_nccl_comm_init(&amd, t, NULL, 2, &cfg, NULL));
        CU_ASSERT_STRING_EQUAL(amd.intra_path, diverted ? "PHB" : "PIX");
        check_graph(&amd, 1, diverted ? 6 : 12, 2);
    }
    /* The release before and the first with the diversion, side by side. */
    CU_ASSERT_STRING_EQUAL(nccl_fx_comm(t, V(2, 18, 6), 0).intra_path, "PIX");
    CU_ASSERT_STRING_EQUAL(nccl_fx_comm(t, V(2, 19, 1), 0).intra_path, "PHB");
    /* The overhead is for paths through a CPU only: one node of the A100 PCIe box, whose GPUs
     * share a switch (PIX) with Gen4 links of 24, packs 2 rings of 12 (with 6/5 it would be one
     * of 20). */
    check_graph((MsNcclComm[]){nccl_fx_comm(pcie_box, V(2, 18, 6), 4)}, 2, 12, 4);
}

static void
test_channel_limits(void)
{
    MsNcclConfig cfg = {.version = V(2, 18, 6), .max_channels = 4};
    MsNcclComm c;
    CU_ASSERT_TRUE_FATAL(ms_nccl_comm_init(&c, a100, NULL, 8, &cfg, NULL));
    CU_ASSERT_EQUAL(c.channels, 4);
    CU_ASSERT_EQUAL(c.p2p_channels, 4);
    cfg = (MsNcclConfig){.version = V(2, 18, 6), .min_channels = 32};
    CU_ASSERT_TRUE_FATAL(ms_nccl_comm_init(&c, a100, NULL, 8, &cfg, NULL));
    CU_ASSERT_EQUAL(c.channels, 32);
    /* MAXCHANNELS is 64 from 2.25. */
    cfg = (MsNcclConfig){.version = V(2, 25, 1), .min_channels = 64};
    CU_ASSERT_TRUE_FATAL(ms_nccl_comm_init(&c, a100, NULL, 8, &cfg, NULL));
    CU_ASSERT_EQUAL(c.channels, 64);
    /* A subset of ranks by list: GPUs 0 and 8 of two nodes, one per node. */
    guint two[] = {8, 0};
    cfg = (MsNcclConfig){.version = V(2, 18, 6)};
    CU_ASSERT_TRUE_FATAL(ms_nccl_comm_init(&c, h100x2, two, 2, &cfg, NULL));
    CU_ASSERT_EQUAL(c.n_nodes, 2);
    CU_ASSERT_EQUAL(c.ppn, 1);
    CU_ASSERT_TRUE(c.tree_simple); /* one GPU per node: the simple tree pattern */
}

static void
test_p2p_channels(void)
{
    /* One node: NVSwitch peers allow 2 x 12 links; 24 channels round up to 32 and 32. */
    MsNcclComm c = nccl_fx_comm(a100, V(2, 18, 6), 0);
    CU_ASSERT_EQUAL(c.p2p_channels, 32);
    CU_ASSERT_EQUAL(c.p2p_channels_per_peer, 32);
    /* Lina's mesh: 4 links per pair, 8 per peer; DGX-1: single-link and indirect pairs, 2. */
    CU_ASSERT_EQUAL(nccl_fx_comm(lina, V(2, 18, 6), 4).p2p_channels_per_peer, 8);
    CU_ASSERT_EQUAL(nccl_fx_comm(dgx1, V(2, 18, 6), 0).p2p_channels_per_peer, 2);
    /* Net peers: 1 in 2.10, NCCL_NCHANNELS_PER_NET_PEER 2 from 2.12, automatic 2 for 16 ranks
     * from 2.20 (2 x 16 <= 4 x 16), from 2.29 the NIC's 25 GB/s needs 2 of 14. */
    CU_ASSERT_EQUAL(nccl_fx_comm(a100x2, V(2, 10, 3), 0).p2p_channels_per_peer, 1);
    CU_ASSERT_EQUAL(nccl_fx_comm(a100x2, V(2, 12, 12), 0).p2p_channels_per_peer, 2);
    CU_ASSERT_EQUAL(nccl_fx_comm(a100x2, V(2, 22, 3), 0).p2p_channels_per_peer, 2);
    CU_ASSERT_EQUAL(nccl_fx_comm(a100x2, V(2, 30, 7), 0).p2p_channels_per_peer, 2);
    /* 400 Gb/s: 50 / 14 -> 4 per net peer in 2.30; 16 ranks, ceil(16 / 8) x 4 <= 16. */
    CU_ASSERT_EQUAL(nccl_fx_comm(h100x2, V(2, 30, 7), 0).p2p_channels_per_peer, 4);
    CU_ASSERT_EQUAL(nccl_fx_comm(h100x2, V(2, 22, 3), 0).p2p_channels_per_peer, 2);
    MsNcclConfig cfg = {.version = V(2, 18, 6), .net_peer_channels = 1};
    CU_ASSERT_TRUE_FATAL(ms_nccl_comm_init(&c, a100x2, NULL, 16, &cfg, NULL));
    CU_ASSERT_EQUAL(c.p2p_channels_per_peer, 1);
    CU_ASSERT_EQUAL(c.p2p_channels, 16);
}

static void
test_ll128_rule(void)
{
    CU_ASSERT_TRUE(nccl_fx_comm(a100, V(2, 10, 3), 0).ll128);   /* SM80 on NVLink */
    CU_ASSERT_TRUE(nccl_fx_comm(a100x2, V(2, 18, 6), 0).ll128); /* NICs within PCIe (PIX) */
    CU_ASSERT_TRUE(nccl_fx_comm(dgx1, V(2, 12, 12), 0).ll128);  /* SM70 */
    CU_ASSERT_FALSE(nccl_fx_comm(h100, V(2, 12, 12), 0).ll128); /* SM90 before 2.15 */
    CU_ASSERT_TRUE(nccl_fx_comm(h100, V(2, 15, 5), 0).ll128);
    CU_ASSERT_FALSE(nccl_fx_comm(schemoe, V(2, 18, 6), 0).ll128);  /* SM75, and PCIe inside */
    CU_ASSERT_FALSE(nccl_fx_comm(pcie_box, V(2, 30, 7), 0).ll128); /* PCIe inside, any release */
    /* Disabled LL128 has no bandwidth, whatever the mask. */
    MsNcclComm c = nccl_fx_comm(schemoe, V(2, 18, 6), 0);
    CU_ASSERT_FALSE(
        nccl_fx_cost(&c, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL128, MIB).enabled);
}

/* DGX A100, one node, 2.18: graph 12 x 20 = 240 GB/s, 8 ranks, 14 ring steps, all over NVLink. */
static void
test_tuning_one_node(void)
{
    MsNcclComm c = nccl_fx_comm(a100, V(2, 18, 6), 0);
    const double bus = 12 * 20.0, ring = 8.0 / 14;
    struct {
        MsNcclAlgo a;
        MsNcclProto p;
        double lat, alg;
    } want[] = {
        /* Ring LL: min(llMaxBw 87.7, 240 / 4); 6.6 + 14 x 0.6 */
        {MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL, 6.6 + 14 * 0.6, MIN(87.7, bus / 4) * ring},
        /* Ring LL128: min(240 x 0.92, 12 x 20); 14 + 14 x 1.9 */
        {MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL128, 14 + 14 * 1.9, MIN(bus * .92, 240.0) * ring},
        /* Ring Simple: 240; 8.4 + 14 x 3.4 */
        {MS_NCCL_ALGO_RING, MS_NCCL_PROTO_SIMPLE, 8.4 + 14 * 3.4, bus * ring},
        /* Tree: min(240 x .92, 12 x 24) then LL / 3.8, LL128 x 7/9 (cap 12 x 20), Simple; x 1/2;
         * 2 x 7 intra steps of 0.6, 1.25, 4 over 6.8, 14, 0 */
        {MS_NCCL_ALGO_TREE, MS_NCCL_PROTO_LL, 6.8 + 14 * 0.6, MIN(bus * .92 / 3.8, 87.7) / 2},
        {MS_NCCL_ALGO_TREE, MS_NCCL_PROTO_LL128, 14 + 14 * 1.25, bus * .92 * 7 / 9 / 2},
        {MS_NCCL_ALGO_TREE, MS_NCCL_PROTO_SIMPLE, 14 * 4.0, bus * .92 / 2},
    };
    for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
        /* 1 GiB: no tree correction (logSize 24), no plateau on one node. */
        MsNcclCost k = nccl_fx_cost(&c, MS_COLL_ALLREDUCE, want[i].a, want[i].p, 1024 * MIB);
        CU_ASSERT_TRUE(k.enabled);
        MS_ASSERT_REL(k.latency_us, want[i].lat, 1e-6);
        MS_ASSERT_REL(k.alg_bw, want[i].alg, 1e-6);
        MS_ASSERT_REL(k.time_us, want[i].lat + 1024.0 * MIB / (1000 * want[i].alg), 1e-6);
    }
    /* The same figures as the digest's tuning table (15.0/34.3, 40.6/126.2, 56.0/137.1). */
    MsNcclCost ll = nccl_fx_cost(&c, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL, 8);
    MS_ASSERT_REL(ll.latency_us, 15.0, 1e-9);
    /* Winners: Ring/LL at 1 KiB and 1 MiB (15 + 1 MiB / 34.3 GB/s < 40.6 + 1 MiB / 126.2),
     * Ring/Simple at 256 MiB. */
    const struct {
        guint64 bytes;
        MsNcclAlgo a;
        MsNcclProto p;
    } win[] = {{KIB, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL},
               {MIB, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL},
               {8 * MIB, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL128},
               {256 * MIB, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_SIMPLE}};
    for (guint i = 0; i < G_N_ELEMENTS(win); i++) {
        MsNcclChoice ch;
        CU_ASSERT_TRUE_FATAL(ms_nccl_choose(&c, MS_COLL_ALLREDUCE, win[i].bytes, &ch));
        CU_ASSERT_EQUAL(ch.algo, win[i].a);
        CU_ASSERT_EQUAL(ch.proto, win[i].p);
    }
    /* 2.10: baseLat 3.6 + 14 x 0.47; the 235 GB/s cap of all-SM80 machines on 12 x 22. */
    MsNcclComm old = nccl_fx_comm(a100, V(2, 10, 3), 0);
    MsNcclCost k = nccl_fx_cost(&old, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL, 8);
    MS_ASSERT_REL(k.latency_us, 3.6 + 14 * 0.47, 1e-9);
    k = nccl_fx_cost(&old, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_SIMPLE, 8);
    MS_ASSERT_REL(k.alg_bw, 235.0 * ring, 1e-6);
    /* 2.22: Ring/LL is x 1/2, so llMaxBw binds: 87.7 x 8/14; Tree/Simple NVLink latency 28. */
    MsNcclComm c22 = nccl_fx_comm(a100, V(2, 22, 3), 0);
    k = nccl_fx_cost(&c22, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL, 8);
    MS_ASSERT_REL(k.alg_bw, 87.7 * ring, 1e-6);
    k = nccl_fx_cost(&c22, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_TREE, MS_NCCL_PROTO_SIMPLE, 1024 * MIB);
    MS_ASSERT_REL(k.latency_us, 14 * 28.0, 1e-9);
    /* Allgather: ring only, n/(n-1), LL x 1/3 on one node until 2.20. */
    k = nccl_fx_cost(&c, MS_COLL_ALLGATHER, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL, 8);
    MS_ASSERT_REL(k.alg_bw, MIN(87.7, bus / 3) * 8 / 7, 1e-6);
    MS_ASSERT_REL(k.latency_us, 6.6 + 7 * 0.6, 1e-9);
    CU_ASSERT_FALSE(
        nccl_fx_cost(&c, MS_COLL_ALLGATHER, MS_NCCL_ALGO_TREE, MS_NCCL_PROTO_LL, 8).enabled);
}

/* DGX A100, two nodes, 2.18: ring 8 x 24, tree 8 x 30 inside / 24 across; 16 ranks. */
static void
test_tuning_two_nodes(void)
{
    MsNcclComm c = nccl_fx_comm(a100x2, V(2, 18, 6), 0);
    /* Tree/LL: min(8 x 30 x .92, 8 x 23.6) / 3.8, capped by the Intel 2-node llMaxBw 39.0, x 1/2;
     * 6.8 + 2 (7 x 0.6 + 1 x 5.0). */
    MsNcclCost k =
        nccl_fx_cost(&c, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_TREE, MS_NCCL_PROTO_LL, 1024 * MIB);
    MS_ASSERT_REL(k.alg_bw, MIN(MIN(240 * .92, 8 * 23.6) / 3.8, 39.0) / 2, 1e-6);
    MS_ASSERT_REL(k.latency_us, 6.8 + 2 * (7 * 0.6 + 5.0), 1e-9);
    /* At 64 KiB the tree correction for LL at log2(1024) = 10 is 0.6. */
    k = nccl_fx_cost(&c, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_TREE, MS_NCCL_PROTO_LL, 64 * KIB);
    MS_ASSERT_REL(k.time_us, 25.2 + 65536 / (1000 * 19.5 * 0.6), 1e-6);
    /* Ring/Simple: 8 x 24 x 16/30; 8.4 + 26 x max(3.4, 3 x 1.0) + 4 x 14 (nInterSteps = 2 x 2),
     * x 1.4 once nbytes / (16 channels x 16 ranks) reaches 64. */
    const double lat = 8.4 + 26 * 3.4 + 4 * 14.0;
    k = nccl_fx_cost(&c, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_SIMPLE, 16383);
    MS_ASSERT_REL(k.alg_bw, 192 * 16.0 / 30, 1e-6);
    MS_ASSERT_REL(k.latency_us, lat, 1e-9);
    k = nccl_fx_cost(&c, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_SIMPLE, 16384);
    MS_ASSERT_REL(k.latency_us, lat * 1.4, 1e-9);
    /* AMD hosts: the network overhead is 2 us, x3 for Simple, above the NVLink 3.4. */
    MsNcclConfig cfg = {.version = V(2, 18, 6), .amd_cpu = TRUE};
    MsNcclComm amd;
    CU_ASSERT_TRUE_FATAL(ms_nccl_comm_init(&amd, a100x2, NULL, 16, &cfg, NULL));
    k = nccl_fx_cost(&amd, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_SIMPLE, 8);
    MS_ASSERT_REL(k.latency_us, 8.4 + 26 * 6.0 + 4 * 14.0, 1e-9);
    /* 2.10: nInterSteps 2 (nNodes - 1), net Simple 9.6, LL's NVLink steps x 1.8, plateau x 1.9
     * from nRanks / 16 x 64 KiB. */
    MsNcclComm old = nccl_fx_comm(a100x2, V(2, 10, 3), 0);
    k = nccl_fx_cost(&old, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_SIMPLE, 65535);
    MS_ASSERT_REL(k.latency_us, 8.4 + 28 * 3.4 + 2 * 9.6, 1e-9);
    k = nccl_fx_cost(&old, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_SIMPLE, 65536);
    MS_ASSERT_REL(k.latency_us, (8.4 + 28 * 3.4 + 2 * 9.6) * 1.9, 1e-9);
    k = nccl_fx_cost(&old, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL, 8);
    MS_ASSERT_REL(k.latency_us, 3.6 + 28 * 0.47 * 1.8 + 2 * 2.7, 1e-9);
    /* One GPU per node (2.18): 2 ring steps but 2 x 2 network ones, so the intra-node term
     * counts -2 times (PCI row, no NVLink in the graph). */
    guint two[] = {0, 8};
    MsNcclComm ppn1;
    cfg = (MsNcclConfig){.version = V(2, 18, 6)};
    CU_ASSERT_TRUE_FATAL(ms_nccl_comm_init(&ppn1, h100x2, two, 2, &cfg, NULL));
    k = nccl_fx_cost(&ppn1, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_SIMPLE, 8);
    MS_ASSERT_REL(k.latency_us, 8.4 - 2 * 5.7 + 4 * 14.0, 1e-9);
    /* Ring LL128 with fewer than 2 ranks per node: x 0.7 until 2.22, x 0.92 from 2.23. */
    k = nccl_fx_cost(&ppn1, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL128, 8);
    MS_ASSERT_REL(k.bus_bw,
                  MIN(ppn1.graph_channels * ppn1.bw_intra * 0.7, ppn1.graph_channels * 36.7), 1e-6);
    /* Winners: Tree/LL at 8 B, Tree/LL128 at 1 MiB, Ring/Simple at 256 MiB. */
    MsNcclChoice ch;
    CU_ASSERT_TRUE(ms_nccl_choose(&c, MS_COLL_ALLREDUCE, 8, &ch) && ch.algo == MS_NCCL_ALGO_TREE &&
                   ch.proto == MS_NCCL_PROTO_LL);
    CU_ASSERT_TRUE(ms_nccl_choose(&c, MS_COLL_ALLREDUCE, MIB, &ch) &&
                   ch.algo == MS_NCCL_ALGO_TREE && ch.proto == MS_NCCL_PROTO_LL128);
    CU_ASSERT_TRUE(ms_nccl_choose(&c, MS_COLL_ALLREDUCE, 256 * MIB, &ch) &&
                   ch.algo == MS_NCCL_ALGO_RING && ch.proto == MS_NCCL_PROTO_SIMPLE);
}

static void
test_hopper_tree(void)
{
    /* NCCL's search on the DGX H100 layout: the simple tree pattern in 2.18.3 .. 2.19.1, taking
     * 15% off the tree; balanced before and after. */
    MsNcclComm c = nccl_fx_comm(h100x2, V(2, 18, 6), 0);
    CU_ASSERT_TRUE(c.tree_simple);
    MsNcclCost k =
        nccl_fx_cost(&c, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_TREE, MS_NCCL_PROTO_SIMPLE, 1024 * MIB);
    MS_ASSERT_REL(k.bus_bw, MIN(8 * 48 * .92, 8 * 41.4) * .85, 1e-6);
    CU_ASSERT_FALSE(nccl_fx_comm(h100x2, V(2, 19, 4), 0).tree_simple);
    CU_ASSERT_FALSE(nccl_fx_comm(h100x2, V(2, 17, 1), 0).tree_simple);
    MS_ASSERT_REL(nccl_fx_comm(h100x2, V(2, 18, 1), 0).tree_bw_inter, 45, 1e-12);
}

static void
test_choice_details(void)
{
    MsNcclComm c = nccl_fx_comm(a100, V(2, 18, 6), 0);
    MsNcclChoice ch;
    /* 8 B of Ring/LL: one channel, threads halved from 512 to 64, then at least 3 warps. */
    CU_ASSERT_TRUE_FATAL(ms_nccl_choose(&c, MS_COLL_ALLREDUCE, 8, &ch));
    CU_ASSERT_EQUAL(ch.channels, 1);
    CU_ASSERT_EQUAL(ch.threads, 96);
    CU_ASSERT_EQUAL(ch.message, 16); /* 8 data bytes in one 16-byte LL line */
    /* 64 KiB: 2 channels of 512 threads x 8 B x 8 ranks. */
    CU_ASSERT_TRUE_FATAL(ms_nccl_choose(&c, MS_COLL_ALLREDUCE, 64 * KIB, &ch));
    CU_ASSERT_EQUAL(ch.channels, 2);
    CU_ASSERT_EQUAL(ch.threads, 512);
    /* 256 MiB Ring/Simple: all 24 channels, 512 + a sync warp, 1 MiB messages (2 slices). */
    CU_ASSERT_TRUE_FATAL(ms_nccl_choose(&c, MS_COLL_ALLREDUCE, 256 * MIB, &ch));
    CU_ASSERT_EQUAL(ch.channels, 24);
    CU_ASSERT_EQUAL(ch.threads, 544);
    CU_ASSERT_EQUAL(ch.message, MIB);
    /* 2.22: trees always run 640 threads. */
    MsNcclComm c22 = nccl_fx_comm(a100x2, V(2, 22, 3), 0);
    CU_ASSERT_TRUE_FATAL(ms_nccl_choose(&c22, MS_COLL_ALLREDUCE, 8, &ch));
    CU_ASSERT_EQUAL(ch.algo, MS_NCCL_ALGO_TREE);
    CU_ASSERT_EQUAL(ch.threads, 640);
    /* Masks: NCCL_ALGO=ring, NCCL_PROTO=Simple. */
    MsNcclConfig cfg = {.version = V(2, 18, 6),
                        .algo_mask = 1u << MS_NCCL_ALGO_RING,
                        .proto_mask = 1u << MS_NCCL_PROTO_SIMPLE};
    MsNcclComm m;
    CU_ASSERT_TRUE_FATAL(ms_nccl_comm_init(&m, a100x2, NULL, 16, &cfg, NULL));
    CU_ASSERT_TRUE_FATAL(ms_nccl_choose(&m, MS_COLL_ALLREDUCE, 8, &ch));
    CU_ASSERT_EQUAL(ch.algo, MS_NCCL_ALGO_RING);
    CU_ASSERT_EQUAL(ch.proto, MS_NCCL_PROTO_SIMPLE);
    /* The algorithm mask leaves the ring of other operations alone. */
    cfg.algo_mask = 1u << MS_NCCL_ALGO_TREE;
    CU_ASSERT_TRUE_FATAL(ms_nccl_comm_init(&m, a100x2, NULL, 16, &cfg, NULL));
    CU_ASSERT_TRUE(ms_nccl_choose(&m, MS_COLL_REDUCESCATTER, MIB, &ch) &&
                   ch.algo == MS_NCCL_ALGO_RING);
    /* Only LL128 where LL128 is off: nothing to run. Alltoall and one rank: no collective. */
    cfg = (MsNcclConfig){.version = V(2, 18, 6), .proto_mask = 1u << MS_NCCL_PROTO_LL128};
    CU_ASSERT_TRUE_FATAL(ms_nccl_comm_init(&m, schemoe, NULL, 32, &cfg, NULL));
    CU_ASSERT_FALSE(ms_nccl_choose(&m, MS_COLL_ALLREDUCE, MIB, &ch));
    CU_ASSERT_FALSE(ms_nccl_choose(&c, MS_COLL_ALLTOALL, MIB, &ch));
    MsNcclComm one = nccl_fx_comm(a100, V(2, 18, 6), 1);
    CU_ASSERT_FALSE(ms_nccl_choose(&one, MS_COLL_ALLREDUCE, MIB, &ch));
}

static MsNcclP2p
p2p(const MsNcclComm *c, guint64 bytes, gboolean same_node)
{
    MsNcclP2p q;
    ms_nccl_p2p(c, bytes, same_node, &q);
    CU_ASSERT_EQUAL(q.peers_per_channel, 8);
    return q;
}

static void
test_p2p(void)
{
    /* 2.8 sends whole 128 KiB steps over the network (v2.8.4 proxy.cc:225-252); 2.9.9 halves
     * them for a piece below 8 steps (v2.9.9 proxy.cc:251-270): a 512 KiB send is one piece. */
    MsNcclComm c28 = nccl_fx_comm(a100x2, V(2, 8, 4), 0);
    MsNcclP2p q28 = p2p(&c28, 512 * KIB, FALSE);
    CU_ASSERT_TRUE(q28.channels == 1 && q28.chunk == 128 * KIB && q28.message == 128 * KIB);
    q28 = p2p((MsNcclComm[]){nccl_fx_comm(a100x2, V(2, 9, 9), 0)}, 512 * KIB, FALSE);
    CU_ASSERT_TRUE(q28.channels == 1 && q28.chunk == 128 * KIB && q28.message == 64 * KIB);
    /* 2.10, two nodes (1 channel per net peer): pieces of at least 512 KiB, steps of 128 KiB; a
     * network message is a quarter of a step below one step, half below eight. */
    MsNcclComm c10 = nccl_fx_comm(a100x2, V(2, 10, 3), 0);
    MsNcclP2p q = p2p(&c10, 64 * KIB, FALSE);
    CU_ASSERT_TRUE(q.channels == 1 && q.chunk == 64 * KIB && q.message == 32 * KIB);
    CU_ASSERT_EQUAL(q.proto, MS_NCCL_PROTO_SIMPLE);
    MS_ASSERT_REL(q.latency_us, 9.6, 1e-12);
    q = p2p(&c10, 16 * MIB, FALSE);
    CU_ASSERT_TRUE(q.channels == 1 && q.chunk == 128 * KIB && q.message == 128 * KIB);
    /* 2.18, two nodes: 2 per net peer, step 128 KiB; pieces 16 KiB .. 128 KiB; LL for small
     * intra-node sends (NVLink hop 0.6 us), never over the network. */
    MsNcclComm c18 = nccl_fx_comm(a100x2, V(2, 18, 6), 0);
    q = p2p(&c18, 16 * KIB, TRUE);
    CU_ASSERT_TRUE(q.proto == MS_NCCL_PROTO_LL && q.message == 0 && q.channels == 1);
    MS_ASSERT_REL(q.latency_us, 0.6, 1e-12);
    q = p2p(&c18, 16 * KIB, FALSE);
    CU_ASSERT_TRUE(q.proto == MS_NCCL_PROTO_SIMPLE && q.message == 16 * KIB);
    MS_ASSERT_REL(q.latency_us, 14.0, 1e-12);
    q = p2p(&c18, 64 * KIB, FALSE); /* two pieces of 32 KiB, messages of 128 KiB / 4 */
    CU_ASSERT_TRUE(q.channels == 2 && q.chunk == 32 * KIB && q.message == 32 * KIB);
    q = p2p(&c18, MIB, FALSE); /* pieces of 512 KiB < 8 steps: messages of 64 KiB */
    CU_ASSERT_TRUE(q.channels == 2 && q.chunk == 128 * KIB && q.message == 64 * KIB);
    /* 2.18, one node: 32 per peer cut to 4 for 8 ranks over 32 channels; NVLink step 512 KiB. */
    MsNcclComm one = nccl_fx_comm(a100, V(2, 18, 6), 0);
    q = p2p(&one, MIB, TRUE);
    CU_ASSERT_TRUE(q.channels == 4 && q.chunk == 256 * KIB && q.message == 0);
    q = p2p(&one, 64 * KIB, TRUE);
    CU_ASSERT_TRUE(q.channels == 1 && q.proto == MS_NCCL_PROTO_SIMPLE);
    /* 2.22: LL up to nChannelsMax (32) x 16 KiB in 32 KiB data steps; over the network the whole
     * send decides the message: 1 MiB is 8 steps, full 128 KiB messages. */
    MsNcclComm one22 = nccl_fx_comm(a100, V(2, 22, 3), 0);
    q = p2p(&one22, 64 * KIB, TRUE);
    CU_ASSERT_TRUE(q.proto == MS_NCCL_PROTO_LL && q.chunk == 32 * KIB && q.channels == 1);
    MsNcclComm c22 = nccl_fx_comm(a100x2, V(2, 22, 3), 0);
    q = p2p(&c22, MIB, FALSE);
    CU_ASSERT_TRUE(q.channels == 2 && q.message == 128 * KIB);
    q = p2p(&c22, 64 * KIB, FALSE);
    CU_ASSERT_TRUE(q.channels == 1 && q.message == 32 * KIB);
    /* PCIe inside a node: 128 KiB steps, the PCI hop latency. */
    MsNcclComm box = nccl_fx_comm(pcie_box, V(2, 18, 6), 4);
    q = p2p(&box, 16 * MIB, TRUE);
    CU_ASSERT_EQUAL(q.chunk, 128 * KIB);
    MS_ASSERT_REL(q.latency_us, 5.7, 1e-12);
}

static void
expect_init_error(const MsTopology *t, const guint *ranks, guint n, const MsNcclConfig *cfg,
                  gint code, const char *needle)
{
    MsNcclComm c;
    GError *err = NULL;
    CU_ASSERT_FALSE(ms_nccl_comm_init(&c, t, ranks, n, cfg, &err));
    MS_ASSERT_ERROR(err, MS_NCCL_ERROR, code, needle);
}

/* The latency a net plugin reports (aws-ofi-nccl: 75 us on p4d) enters NCCL's network hop: not
 * before 2.12, in place of hwLat NET from 2.12.7, added to it from 2.18.1 and twice for Simple;
 * one node never sees it. */
static void
test_net_plugin_latency(void)
{
    g_autofree char *ini = g_strconcat(pcie_box_ini, "nccl_net_latency = 75us\n", NULL);
    g_autoptr(GError) err = NULL;
    g_autoptr(MsTopology) efa = ms_topology_load_data(ini, strlen(ini), "efa", &err);
    g_assert_no_error(err);
    MS_ASSERT_REL(ms_time_to_us(ms_topology_nccl_net_latency(efa)), 75.0, 1e-12);
    CU_ASSERT_EQUAL(ms_topology_nccl_net_latency(pcie_box), 0);
    static const struct {
        guint version;
        MsNcclAlgo algo;
        MsNcclProto proto;
        double added; /* to the network hop; < 0: replaces it by 75 */
    } rows[] = {
        {V(2, 10, 3), MS_NCCL_ALGO_TREE, MS_NCCL_PROTO_LL, 0},
        {V(2, 12, 7), MS_NCCL_ALGO_TREE, MS_NCCL_PROTO_LL, -1},
        {V(2, 17, 1), MS_NCCL_ALGO_RING, MS_NCCL_PROTO_SIMPLE, -1},
        {V(2, 18, 3), MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL, 75},
        {V(2, 18, 3), MS_NCCL_ALGO_RING, MS_NCCL_PROTO_SIMPLE, 150},
        {V(2, 22, 3), MS_NCCL_ALGO_TREE, MS_NCCL_PROTO_LL, 75},
    };
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
        MsNcclComm with = nccl_fx_comm(efa, rows[i].version, 0);
        MsNcclComm without = nccl_fx_comm(pcie_box, rows[i].version, 0);
        MsNcclCost a = nccl_fx_cost(&with, MS_COLL_ALLREDUCE, rows[i].algo, rows[i].proto, 0);
        MsNcclCost b = nccl_fx_cost(&without, MS_COLL_ALLREDUCE, rows[i].algo, rows[i].proto, 0);
        CU_ASSERT_TRUE_FATAL(a.enabled && b.enabled);
        double want = rows[i].added < 0 ? 75.0 : b.inter_us + rows[i].added;
        MS_ASSERT_REL(a.inter_us, want, 1e-12);
        CU_ASSERT_TRUE(rows[i].added == 0 ? a.latency_us == b.latency_us
                                          : a.latency_us > b.latency_us);
    }
    MsNcclComm one = nccl_fx_comm(efa, V(2, 18, 3), 4);
    MsNcclComm plain = nccl_fx_comm(pcie_box, V(2, 18, 3), 4);
    MS_ASSERT_REL(
        nccl_fx_cost(&one, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL, 0).latency_us,
        nccl_fx_cost(&plain, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL, 0).latency_us,
        1e-12);
}

static void
test_errors(void)
{
    MsNcclConfig cfg = {.version = V(2, 7, 8)};
    expect_init_error(a100, NULL, 8, &cfg, MS_NCCL_ERROR_VERSION,
                      "2.7.8 is outside the modelled 2.8.0 .. 2.30.99");
    cfg = (MsNcclConfig){.version = V(2, 8, 0)};
    MsNcclComm oldest;
    g_autoptr(GError) none = NULL;
    CU_ASSERT_TRUE(ms_nccl_comm_init(&oldest, a100, NULL, 8, &cfg, &none));
    cfg = (MsNcclConfig){.version = V(2, 31, 0)};
    expect_init_error(a100, NULL, 8, &cfg, MS_NCCL_ERROR_VERSION, "2.31.0");
    cfg = (MsNcclConfig){.arch = 61};
    expect_init_error(a100, NULL, 8, &cfg, MS_NCCL_ERROR_ARCH, "sm61");
    cfg = (MsNcclConfig){.version = V(2, 18, 6), .min_channels = 33};
    expect_init_error(a100, NULL, 8, &cfg, MS_NCCL_ERROR_CONFIG, "min_channels 33");
    cfg = (MsNcclConfig){.max_channels = 65};
    expect_init_error(a100, NULL, 8, &cfg, MS_NCCL_ERROR_CONFIG, "max_channels 65");
    cfg = (MsNcclConfig){.algo_mask = 16};
    expect_init_error(a100, NULL, 8, &cfg, MS_NCCL_ERROR_CONFIG, "algo_mask 16");
    cfg = (MsNcclConfig){.proto_mask = 8};
    expect_init_error(a100, NULL, 8, &cfg, MS_NCCL_ERROR_CONFIG, "proto_mask 8");
    cfg = (MsNcclConfig){.net_peer_channels = 99};
    expect_init_error(a100, NULL, 8, &cfg, MS_NCCL_ERROR_CONFIG, "net_peer_channels 99");
    cfg = (MsNcclConfig){0};
    guint dup[] = {1, 1}, far[] = {0, 8};
    expect_init_error(a100, dup, 2, &cfg, MS_NCCL_ERROR_CONFIG, "rank 1 is given twice");
    expect_init_error(a100, far, 2, &cfg, MS_NCCL_ERROR_CONFIG,
                      "rank 8: the topology has GPUs 0..7");
    expect_init_error(a100, NULL, 0, &cfg, MS_NCCL_ERROR_CONFIG, "no ranks");
    /* A GPU model no architecture is known for. */
    g_autofree char *amd = g_strdup(pcie_box_ini);
    memcpy(strstr(amd, "A100-PCIE-40GB"), "MI300X-PCIE-00", 14);
    g_autoptr(MsTopology) mi = ms_topology_load_data(amd, strlen(amd), "mi", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mi);
    expect_init_error(mi, NULL, 8, &cfg, MS_NCCL_ERROR_ARCH, "MI300X-PCIE-00");
    /* Two nodes whose NICs hang off NVLink: no PCIe path to a NIC. */
    static const char odd[] = "[topology]\nformat = 1\nname = odd\ndescription = odd\n[gpu]\n"
                              "model = A100-SXM4-80GB\npeak = 312TFLOPS\nhbm = 2039GBps\n"
                              "memory = 80GiB\nlaunch_overhead = 4us\n"
                              "[device g0]\nkind = gpu\nnode = 0\n[device g1]\nkind = gpu\n"
                              "node = 1\n[device n0]\nkind = nic\nnode = 0\n[device n1]\n"
                              "kind = nic\nnode = 1\n[device sw]\nkind = switch\n"
                              "[link g0 n0]\nclass = nvlink\nbandwidth = 25GBps\nlatency = 1us\n"
                              "[link g1 n1]\nclass = nvlink\nbandwidth = 25GBps\nlatency = 1us\n"
                              "[link n0 sw]\nclass = nic\nbandwidth = 25GBps\nlatency = 1us\n"
                              "[link n1 sw]\nclass = nic\nbandwidth = 25GBps\nlatency = 1us\n";
    g_autoptr(GError) err = NULL;
    g_autoptr(MsTopology) t = ms_topology_load_data(odd, strlen(odd), "odd", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    expect_init_error(t, NULL, 2, &cfg, MS_NCCL_ERROR_TOPOLOGY, "no NIC its GPUs reach over PCIe");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"names and versions", test_names},
        {"GPU architectures of model names", test_arch},
        {"NVLink and PCIe figures per release", test_link_figures},
        {"channels NCCL's search finds on the shipped machines", test_channels},
        {"SHM through host memory, Intel's P2P overhead", test_shm_through_host},
        {"user channel limits and rank subsets", test_channel_limits},
        {"point-to-point channels per peer", test_p2p_channels},
        {"LL128's enable rule", test_ll128_rule},
        {"tuning model, one DGX A100", test_tuning_one_node},
        {"tuning model, two DGX A100", test_tuning_two_nodes},
        {"Hopper tree patterns", test_hopper_tree},
        {"channels, threads, messages and masks of a choice", test_choice_details},
        {"point-to-point cuts per release", test_p2p},
        {"a net plugin's reported latency", test_net_plugin_latency},
        {"errors", test_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"nccl", suite_init, suite_clean, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
