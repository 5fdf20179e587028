/* Tests of NVLS (NVLink SHARP) under the nccl network model: when NCCL enables it (release,
 * architecture, the topology's intra_multicast, GPU and node counts), its tuning model (latency,
 * bandwidth, Simple only; allreduce, and reducescatter and allgather from 2.19), NCCL's choice per
 * size on a DGX H100 pinned by hand from that model, and its flows (sim/net/coll_nvls.c): the bytes
 * on each GPU's NVSwitch link in closed form, the time alone against NCCL's prediction, both
 * engines alike. */
#include "nccl_fixture.h"
#include "sim/net/collective.h"
#include "sim/net/nccl.h"
#include "sim/net/net_model.h"
#include "sim/sim.h"
#include "topologies/topology.h"

#define MIB (G_GUINT64_CONSTANT(1) << 20)
#define V MS_NCCL_VERSION

static MsTopology *h100, *h100x2, *a100, *b200;

/* A DGX H100 whose NVSwitch is not declared multicast-capable. */
static const char plain_ini[] = "[topology]\nformat = 1\nname = plain\ndescription = plain\n"
                                "[gpu]\nmodel = H100-SXM5-80GB\npeak = 989TFLOPS\n"
                                "hbm = 3350GBps\nmemory = 80GiB\nlaunch_overhead = 4us\n"
                                "[preset]\nnodes = 1\ngpus_per_node = 8\nintra = nvswitch\n"
                                "intra_bandwidth = 450GBps\nintra_links = 18\n"
                                "intra_latency = 0.7us\n";

static int
suite_init(void)
{
    h100 = nccl_fx_load("dgx-h100");
    h100x2 = nccl_fx_load_src("validate/data/corpus/dgx-h100/topology.ini");
    a100 = nccl_fx_load("dgx-a100");
    b200 = nccl_fx_load_src("validate/data/corpus/mit-b200/topology.ini");
    return h100 && h100x2 && a100 && b200 ? 0 : 1;
}

static int
suite_clean(void)
{
    MsTopology **all[] = {&h100, &h100x2, &a100, &b200};
    nccl_fx_clear(all, G_N_ELEMENTS(all));
    return 0;
}

/* NCCL enables NVLS on one node behind a multicast NVSwitch from 2.18.1 on SM90 (from 2.25.1 on
 * SM100), with more than two GPUs (at least two from 2.29.2); the graph has a channel per GPU at
 * the first speed whose n + 1 shares fit each GPU's NVSwitch link, and from 2.19.3 pass 2 raises
 * its inter-node speed up the list while below twice that. DGX H100: 18 x 20 = 360 GB/s (370.8 from
 * 2.20.3) over 9 takes 40; inter 60 from SM90's {60, 50, 40 ...}. B200 at 2.29.2: 18 x 40.1 =
 * 721.8 over 9 takes 80 of {90, 80 ...}, inter 90. */
static void
test_enable(void)
{
    guint on[] = {V(2, 18, 1), V(2, 18, 3), V(2, 19, 3), V(2, 22, 3), V(2, 27, 99), V(2, 30, 7)};
    for (guint v = 0; v < G_N_ELEMENTS(on); v++) {
        MsNcclComm c = nccl_fx_comm(h100, on[v], 8);
        CU_ASSERT_EQUAL(c.nvls_channels, 16);
        CU_ASSERT_EQUAL(c.nvls_graph_channels, 8);
        MS_ASSERT_REL(c.nvls_bw, 40.0, 1e-12);
        MS_ASSERT_REL(c.nvls_bw_inter, on[v] >= V(2, 19, 3) ? 60.0 : 40.0, 1e-12);
    }
    MsNcclComm b = nccl_fx_comm(b200, V(2, 29, 2), 8);
    CU_ASSERT_EQUAL(b.nvls_channels, 24);
    CU_ASSERT_EQUAL(b.nvls_graph_channels, 8);
    MS_ASSERT_REL(b.nvls_bw, 80.0, 1e-12);
    MS_ASSERT_REL(b.nvls_bw_inter, 90.0, 1e-12);
    CU_ASSERT_EQUAL(nccl_fx_comm(b200, V(2, 25, 1), 8).nvls_channels, 32);
    MsNcclComm three = nccl_fx_comm(h100, V(2, 18, 3), 3);
    CU_ASSERT_EQUAL(three.nvls_graph_channels, 3);
    /* Three GPUs in 2.18.3: the start is 60 (3 x 60 within totalBw x 3/2 = 540), and 4 x 60 =
     * 240 fits the 360 GB/s link. */
    MS_ASSERT_REL(three.nvls_bw, 60.0, 1e-12);
    /* Two GPUs: off through 2.28, on from 2.29.2. */
    CU_ASSERT_EQUAL(nccl_fx_comm(h100, V(2, 28, 3), 2).nvls_channels, 0);
    CU_ASSERT_EQUAL(nccl_fx_comm(h100, V(2, 29, 2), 2).nvls_channels, 16);
    /* Off: 2.17, two nodes, SM80, SM100 before 2.25, and a switch without multicast. */
    CU_ASSERT_EQUAL(nccl_fx_comm(h100, V(2, 17, 1), 8).nvls_channels, 0);
    MsNcclComm two = nccl_fx_comm(h100x2, V(2, 18, 3), 16);
    MsNcclCost across;
    ms_nccl_cost(&two, MS_COLL_ALLREDUCE, MS_NCCL_ALGO_NVLS, MS_NCCL_PROTO_SIMPLE, MIB, &across);
    CU_ASSERT_FALSE(across.enabled); /* NVLS_TREE there (test_coll_nvls_tree.c) */
    CU_ASSERT_EQUAL(nccl_fx_comm(a100, V(2, 18, 3), 8).nvls_channels, 0);
    CU_ASSERT_EQUAL(nccl_fx_comm(b200, V(2, 24, 3), 8).nvls_channels, 0);
    g_autoptr(GError) err = NULL;
    g_autoptr(MsTopology) plain =
        ms_topology_load_data(plain_ini, strlen(plain_ini), "plain", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plain);
    CU_ASSERT_FALSE(ms_topology_multicast(plain));
    CU_ASSERT_TRUE(ms_topology_multicast(h100));
    CU_ASSERT_EQUAL(nccl_fx_comm(plain, V(2, 18, 3), 8).nvls_channels, 0);
}

/* The key is a boolean, and only with an NVSwitch. */
static void
test_topology_key(void)
{
    static const char *const bad[][2] = {
        {"intra = nvswitch\nintra_multicast = maybe\n", "intra_multicast"},
        {"intra = nvlink_mesh\nintra_multicast = true\n", "intra is not nvswitch"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *ini = g_strdup_printf(
            "[topology]\nformat = 1\nname = k\ndescription = k\n[gpu]\nmodel = H100-SXM5-80GB\n"
            "peak = 989TFLOPS\nhbm = 3350GBps\nmemory = 80GiB\nlaunch_overhead = 4us\n"
            "[preset]\nnodes = 1\ngpus_per_node = 8\n%sintra_bandwidth = 450GBps\n"
            "intra_latency = 0.7us\n",
            bad[i][0]);
        g_autoptr(GError) err = NULL;
        g_autoptr(MsTopology) t = ms_topology_load_data(ini, strlen(ini), "k", &err);
        CU_ASSERT_PTR_NULL(t);
        CU_ASSERT_TRUE(err && strstr(err->message, bad[i][1]) != NULL);
        if (err && strstr(err->message, bad[i][1]) == NULL) {
            fprintf(stderr, "\n  %s\n", err->message);
        }
    }
}

static MsNcclCost
nvls_cost(const MsNcclComm *c, MsCollOp op, MsNcclProto p, guint64 bytes)
{
    MsNcclCost k;
    ms_nccl_cost(c, op, MS_NCCL_ALGO_NVLS, p, bytes, &k);
    return k;
}

/* Through 2.27: busBw = 8 channels x 40 = 320 GB/s, algBw x 5/6. From 2.28: per channel
 * min(40 x 0.85 x 7/8 x 2, 60) = 59.5 on the H100, min(80 x 0.74 x 7/8 x 2, 90) = 90 on the
 * B200, x 8 channels, algBw x 8/14. Latency 23 us in 2.18 (baseLat), 23 in 2.19 and 25 from 2.21
 * (NVLink hwLat); Simple only, allreduce (and from 2.19 the two below), and the algorithm mask. */
static void
test_tuning(void)
{
    struct {
        gboolean b200;
        guint version;
        double base, intra, bus, alg;
    } rows[] = {
        {FALSE, V(2, 18, 3), 23, 0, 320, 320.0 * 5 / 6},
        {FALSE, V(2, 19, 3), 0, 23, 320, 320.0 * 5 / 6},
        {FALSE, V(2, 22, 3), 0, 25, 320, 320.0 * 5 / 6},
        {FALSE, V(2, 30, 7), 0, 25, 8 * 59.5, 8 * 59.5 * 8 / 14},
        {TRUE, V(2, 29, 2), 0, 25, 8 * 90.0, 8 * 90.0 * 8 / 14},
    };
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
        MsNcclComm c = nccl_fx_comm(rows[i].b200 ? b200 : h100, rows[i].version, 8);
        MsNcclCost k = nvls_cost(&c, MS_COLL_ALLREDUCE, MS_NCCL_PROTO_SIMPLE, 1024 * MIB);
        CU_ASSERT_TRUE(k.enabled);
        MS_ASSERT_REL(k.bus_bw, rows[i].bus, 1e-6);
        MS_ASSERT_REL(k.alg_bw, rows[i].alg, 1e-6);
        MS_ASSERT_REL(k.latency_us, rows[i].base + rows[i].intra, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(k.base_us, rows[i].base, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(k.intra_us, rows[i].intra, 1e-12);
        MS_ASSERT_REL(k.time_us, k.latency_us + 1024.0 * MIB / (1000 * rows[i].alg), 1e-6);
        CU_ASSERT_FALSE(nvls_cost(&c, MS_COLL_ALLREDUCE, MS_NCCL_PROTO_LL, MIB).enabled);
        CU_ASSERT_FALSE(nvls_cost(&c, MS_COLL_ALLREDUCE, MS_NCCL_PROTO_LL128, MIB).enabled);
        CU_ASSERT_EQUAL(nvls_cost(&c, MS_COLL_ALLGATHER, MS_NCCL_PROTO_SIMPLE, MIB).enabled,
                        rows[i].version >= V(2, 19, 0));
        CU_ASSERT_FALSE(nvls_cost(&c, MS_COLL_ALLTOALL, MS_NCCL_PROTO_SIMPLE, MIB).enabled);
        c.algo_mask = (1u << MS_NCCL_ALGO_RING) | (1u << MS_NCCL_ALGO_TREE);
        CU_ASSERT_FALSE(nvls_cost(&c, MS_COLL_ALLREDUCE, MS_NCCL_PROTO_SIMPLE, MIB).enabled);
    }
}

/* NCCL's choice on a DGX H100, by hand: NVLS takes L + S / 266.67 GB/s against the ring's LL,
 * 15 us + S / (min(llMaxBw, 12 x 30 x f) x 8/14): in 2.18 llMaxBw 87.7, f 1/4 (50.1 GB/s) and
 * L 23, so NVLS from S = 8 / (1/50.1 - 1/266.7) kB = 494 kB; in 2.22 141 and 1/2 (80.6 GB/s)
 * and L 25, from 1.155 MB; in 2.30 NVLS at 272 GB/s, from 1.145 MB. B200 at 2.29.2: NVLS at
 * 411.4 GB/s against LL at min(282, 16 x 45 / 2) x 8/14 = 161.1, from 2.65 MB (2.30.7 alike).
 * Nothing else comes closer there. 2.17 has no NVLS modelled. */
static void
test_choice(void)
{
    struct {
        gboolean b200;
        guint version;
        guint64 bytes;
        MsNcclAlgo algo;
        MsNcclProto proto;
        guint channels;
    } rows[] = {
        {FALSE, V(2, 18, 3), 256 * 1024, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL, 0},
        {FALSE, V(2, 18, 3), 512 * 1024, MS_NCCL_ALGO_NVLS, MS_NCCL_PROTO_SIMPLE, 16},
        {FALSE, V(2, 18, 3), 1024 * MIB, MS_NCCL_ALGO_NVLS, MS_NCCL_PROTO_SIMPLE, 16},
        {FALSE, V(2, 22, 3), MIB, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL, 0},
        {FALSE, V(2, 22, 3), 2 * MIB, MS_NCCL_ALGO_NVLS, MS_NCCL_PROTO_SIMPLE, 16},
        {FALSE, V(2, 22, 3), 1024 * MIB, MS_NCCL_ALGO_NVLS, MS_NCCL_PROTO_SIMPLE, 16},
        {FALSE, V(2, 30, 7), MIB, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL, 0},
        {FALSE, V(2, 30, 7), 2 * MIB, MS_NCCL_ALGO_NVLS, MS_NCCL_PROTO_SIMPLE, 16},
        {TRUE, V(2, 29, 2), 2 * MIB, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL, 0},
        {TRUE, V(2, 29, 2), 4 * MIB, MS_NCCL_ALGO_NVLS, MS_NCCL_PROTO_SIMPLE, 24},
        {TRUE, V(2, 29, 2), 1024 * MIB, MS_NCCL_ALGO_NVLS, MS_NCCL_PROTO_SIMPLE, 24},
        {TRUE, V(2, 30, 7), 2 * MIB, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL, 0},
        {TRUE, V(2, 30, 7), 4 * MIB, MS_NCCL_ALGO_NVLS, MS_NCCL_PROTO_SIMPLE, 24},
    };
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
        MsNcclComm c = nccl_fx_comm(rows[i].b200 ? b200 : h100, rows[i].version, 8);
        MsNcclChoice ch;
        CU_ASSERT_TRUE_FATAL(ms_nccl_choose(&c, MS_COLL_ALLREDUCE, rows[i].bytes, &ch));
        CU_ASSERT_EQUAL(ch.algo, rows[i].algo);
        CU_ASSERT_EQUAL(ch.proto, rows[i].proto);
        if (ch.algo == MS_NCCL_ALGO_NVLS) {
            CU_ASSERT_EQUAL(ch.channels, rows[i].channels);
            CU_ASSERT_EQUAL(ch.threads, 640);
        }
    }
    MsNcclComm old = nccl_fx_comm(h100, V(2, 17, 1), 8);
    MsNcclChoice ch;
    CU_ASSERT_TRUE_FATAL(ms_nccl_choose(&old, MS_COLL_ALLREDUCE, 1024 * MIB, &ch));
    CU_ASSERT_NOT_EQUAL(ch.algo, MS_NCCL_ALGO_NVLS);
}

/* Reducescatter and allgather, from 2.19.1: through 2.22 busBw 8 x 40 = 320 GB/s and algBw x
 * 5/6; from 2.23.4 algBw = busBw; from 2.28 per channel min(40 x 0.85 x 7/8 x 7/8, 60) =
 * 26.03 GB/s on the H100 and min(80 x 0.74 x 7/8 x 7/8, 90) = 45.33 on the B200, x 8 channels,
 * algBw = busBw. The latency is allreduce's. Not in 2.18, nor from 2.25.1 over more than 32 GPUs.
 */
static void
test_tuning_rs_ag(void)
{
    struct {
        gboolean b200;
        guint version;
        double lat, bus, alg;
    } rows[] = {
        {FALSE, V(2, 19, 3), 23, 320, 320.0 * 5 / 6},
        {FALSE, V(2, 22, 3), 25, 320, 320.0 * 5 / 6},
        {FALSE, V(2, 23, 4), 25, 320, 320},
        {FALSE, V(2, 27, 3), 25, 320, 320},
        {FALSE, V(2, 30, 7), 25, 8 * 40 * 0.85 * 49 / 64, 8 * 40 * 0.85 * 49 / 64},
        {TRUE, V(2, 29, 2), 25, 8 * 80 * 0.74 * 49 / 64, 8 * 80 * 0.74 * 49 / 64},
    };
    MsCollOp ops[] = {MS_COLL_REDUCESCATTER, MS_COLL_ALLGATHER};
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
        MsNcclComm c = nccl_fx_comm(rows[i].b200 ? b200 : h100, rows[i].version, 8);
        for (guint o = 0; o < G_N_ELEMENTS(ops); o++) {
            MsNcclCost k = nvls_cost(&c, ops[o], MS_NCCL_PROTO_SIMPLE, 1024 * MIB);
            CU_ASSERT_TRUE(k.enabled);
            MS_ASSERT_REL(k.bus_bw, rows[i].bus, 1e-6);
            MS_ASSERT_REL(k.alg_bw, rows[i].alg, 1e-6);
            MS_ASSERT_REL(k.latency_us, rows[i].lat, 1e-12);
            MS_ASSERT_REL(k.time_us, k.latency_us + 1024.0 * MIB / (1000 * rows[i].alg), 1e-6);
            CU_ASSERT_FALSE(nvls_cost(&c, ops[o], MS_NCCL_PROTO_LL128, MIB).enabled);
        }
    }
    MsNcclComm old = nccl_fx_comm(h100, V(2, 18, 3), 8);
    CU_ASSERT_FALSE(nvls_cost(&old, MS_COLL_REDUCESCATTER, MS_NCCL_PROTO_SIMPLE, MIB).enabled);
    CU_ASSERT_FALSE(nvls_cost(&old, MS_COLL_ALLGATHER, MS_NCCL_PROTO_SIMPLE, MIB).enabled);
    /* NCCL_MAX_NVLS_ARITY: on one GB200 NVL72 domain, 32 GPUs run NVLS for all three, 33 for
     * allreduce only. */
    g_autoptr(MsTopology) nvl = nccl_fx_load("gb200-nvl72");
    CU_ASSERT_PTR_NOT_NULL_FATAL(nvl);
    for (guint n = 32; n <= 33; n++) {
        MsNcclComm c = nccl_fx_comm(nvl, V(2, 29, 2), n);
        CU_ASSERT_TRUE(nvls_cost(&c, MS_COLL_ALLREDUCE, MS_NCCL_PROTO_SIMPLE, MIB).enabled);
        CU_ASSERT_EQUAL(nvls_cost(&c, MS_COLL_ALLGATHER, MS_NCCL_PROTO_SIMPLE, MIB).enabled,
                        n == 32);
        CU_ASSERT_EQUAL(nvls_cost(&c, MS_COLL_REDUCESCATTER, MS_NCCL_PROTO_SIMPLE, MIB).enabled,
                        n == 32);
    }
}

/* NCCL's choice for reducescatter and allgather on a DGX H100, by hand. The ring graph has 12
 * channels of 30 GB/s (bus 360); over 7 steps LL takes 6.6 + 7 x 0.6 = 10.8 us, LL128 14 + 7 x
 * 1.9 = 27.3 us at min(0.92 x 360, 12 x 36.7) x 8/7 = 378.5 GB/s, Simple 8.4 + 7 x 3.4 = 32.2 us
 * at 411.4 GB/s. 2.19.3: LL at min(87.7, 360 / 3) x 8/7 = 100.2 GB/s, NVLS 23 us at 266.7 GB/s:
 * NVLS beats LL from 12.2 / (1/100.2 - 1/266.7) = 1.96 MB and LL128 up to 4.3 / (1/266.7 -
 * 1/378.5) = 3.88 MB, so it runs 2 and 3 MiB. 2.22.3: LL at min(141, 360 / 2) x 8/7 = 161.1,
 * NVLS 25 us at 266.7: NVLS beats LL only from 5.78 MB, where LL128 is faster: never. 2.23.4:
 * NVLS at 320 GB/s beats LL from 14.2 / (1/161.1 - 1/320) = 4.61 MB and LL128 up to 2.3 /
 * (1/320 - 1/378.5) = 4.76 MB: it runs 4.7 MB (4.5 MB LL, 4.9 MB LL128). 2.30.7:
 * NVLS at 208.3 GB/s is below every ring protocol past 10 us: never. B200 at 2.29.2 (ring of 16
 * channels of 45 GB/s): NVLS at 362.6 GB/s after 25 us against LL at min(282, 360) x 8/7 =
 * 322.3 after 10.8 us (LL's lead closes only at 41 MB) and LL128 at min(0.92 x 720, 16 x 34.5) x
 * 8/7 = 630.9 after 27.3 us: never (the corpus' mit-b200 1x8 logs unchanged). */
static void
test_choice_rs_ag(void)
{
    struct {
        gboolean b200;
        guint version;
        guint64 bytes;
        MsNcclAlgo algo;
        MsNcclProto proto;
    } rows[] = {
        {FALSE, V(2, 19, 3), MIB, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL},
        {FALSE, V(2, 19, 3), 2 * MIB, MS_NCCL_ALGO_NVLS, MS_NCCL_PROTO_SIMPLE},
        {FALSE, V(2, 19, 3), 3 * MIB, MS_NCCL_ALGO_NVLS, MS_NCCL_PROTO_SIMPLE},
        {FALSE, V(2, 19, 3), 4 * MIB, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL128},
        {FALSE, V(2, 22, 3), 2 * MIB, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL},
        {FALSE, V(2, 22, 3), 6 * MIB, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL128},
        {FALSE, V(2, 23, 4), 4500000, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL},
        {FALSE, V(2, 23, 4), 4700000, MS_NCCL_ALGO_NVLS, MS_NCCL_PROTO_SIMPLE},
        {FALSE, V(2, 23, 4), 4900000, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL128},
        {FALSE, V(2, 30, 7), 3 * MIB, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL},
        {FALSE, V(2, 30, 7), 1024 * MIB, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_SIMPLE},
        {TRUE, V(2, 29, 2), 4 * MIB, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_LL},
        {TRUE, V(2, 29, 2), 64 * MIB, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_SIMPLE},
        {TRUE, V(2, 29, 2), 1024 * MIB, MS_NCCL_ALGO_RING, MS_NCCL_PROTO_SIMPLE},
    };
    MsCollOp ops[] = {MS_COLL_REDUCESCATTER, MS_COLL_ALLGATHER};
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
        MsNcclComm c = nccl_fx_comm(rows[i].b200 ? b200 : h100, rows[i].version, 8);
        for (guint o = 0; o < G_N_ELEMENTS(ops); o++) {
            MsNcclChoice ch;
            CU_ASSERT_TRUE_FATAL(ms_nccl_choose(&c, ops[o], rows[i].bytes, &ch));
            CU_ASSERT_EQUAL(ch.algo, rows[i].algo);
            CU_ASSERT_EQUAL(ch.proto, rows[i].proto);
            if (ch.algo != rows[i].algo || ch.proto != rows[i].proto) {
                fprintf(stderr, "\n  row %u op %u: %s/%s\n", i, o, ms_nccl_algo_name(ch.algo),
                        ms_nccl_proto_name(ch.proto));
            }
            if (ch.algo == MS_NCCL_ALGO_NVLS) {
                CU_ASSERT_EQUAL(ch.channels, 16);
                CU_ASSERT_EQUAL(ch.threads, 640);
            }
        }
    }
}

/* The algorithm mask: from 2.19 algo=nvls leaves reducescatter and allgather NVLS, and the ring
 * comes back only where NVLS is not there (a mask without either); through 2.18 the ring stays. */
static void
test_mask_rs_ag(void)
{
    guint ring = 1u << MS_NCCL_ALGO_RING, nvls = 1u << MS_NCCL_ALGO_NVLS;
    struct {
        guint version, mask;
        MsNcclAlgo algo;
    } rows[] = {
        {V(2, 19, 3), nvls, MS_NCCL_ALGO_NVLS},
        {V(2, 22, 3), nvls, MS_NCCL_ALGO_NVLS},
        {V(2, 30, 7), nvls, MS_NCCL_ALGO_NVLS},
        {V(2, 30, 7), ring, MS_NCCL_ALGO_RING},
        {V(2, 30, 7), 1u << MS_NCCL_ALGO_TREE, MS_NCCL_ALGO_RING},
        {V(2, 18, 3), nvls, MS_NCCL_ALGO_RING},
    };
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
        MsNcclComm c = nccl_fx_comm(h100, rows[i].version, 8);
        c.algo_mask = rows[i].mask;
        MsNcclChoice ch;
        CU_ASSERT_TRUE_FATAL(ms_nccl_choose(&c, MS_COLL_ALLGATHER, 1024 * MIB, &ch));
        CU_ASSERT_EQUAL(ch.algo, rows[i].algo);
    }
}

/* One run alone on the node's 8 GPUs. */
static NcclFxRun
run(const MsTopology *topo, MsNetModel *net, MsCollOp op, guint64 bytes, gboolean symmetric)
{
    return nccl_fx_run(topo, net, op, 8, bytes, symmetric);
}

/* Each GPU sends S + S/n on its NVSwitch link (every share for the reductions, its own reduced
 * share stored) in n(n-1) flows; alone the call takes NCCL's prediction within 3%; the
 * symmetric-classes engine refuses NVLS, so both engines give the same time. */
static void
test_flows(void)
{
    static const char *const specs[] = {"nccl:version=2.18", "nccl:version=2.22",
                                        "nccl:version=2.30", "nccl:version=2.29.2"};
    static const guint64 sizes[] = {56 * MIB, 224 * MIB, 1024 * MIB};
    for (guint v = 0; v < G_N_ELEMENTS(specs); v++) {
        const MsTopology *topo = v == 3 ? b200 : h100;
        g_autoptr(MsNetModel) net = nccl_fx_model(specs[v], topo);
        for (guint s = 0; s < G_N_ELEMENTS(sizes); s++) {
            NcclFxRun flows = run(topo, net, MS_COLL_ALLREDUCE, sizes[s], FALSE),
                      classes = run(topo, net, MS_COLL_ALLREDUCE, sizes[s], TRUE);
            CU_ASSERT_EQUAL_FATAL(flows.ch.algo, MS_NCCL_ALGO_NVLS);
            CU_ASSERT_EQUAL(flows.flows, 8 * 7);
            for (guint i = 0; i < 8; i++) {
                CU_ASSERT_EQUAL(flows.sent[i], sizes[s] + sizes[s] / 8);
            }
            MS_ASSERT_REL(flows.end_us, flows.ch.cost.time_us, 0.03);
            CU_ASSERT_EQUAL(classes.end_us, flows.end_us);
        }
    }
}

/* Reducescatter and allgather under algo=nvls: each GPU sends S on its NVSwitch link (the
 * busier direction: every share read for the reductions, every share multicast to it) in
 * n(n-1) flows of S/7 (the remainder on the first rounds); alone within 3% of NCCL's
 * prediction; both engines alike. */
static void
test_flows_rs_ag(void)
{
    static const char *const specs[] = {
        "nccl:version=2.19.3,algo=nvls", "nccl:version=2.23.4,algo=nvls",
        "nccl:version=2.30,algo=nvls", "nccl:version=2.29.2,algo=nvls"};
    static const guint64 sizes[] = {56 * MIB, 1024 * MIB + 3};
    MsCollOp ops[] = {MS_COLL_REDUCESCATTER, MS_COLL_ALLGATHER};
    for (guint v = 0; v < G_N_ELEMENTS(specs); v++) {
        const MsTopology *topo = v == 3 ? b200 : h100;
        g_autoptr(MsNetModel) net = nccl_fx_model(specs[v], topo);
        for (guint o = 0; o < G_N_ELEMENTS(ops); o++) {
            for (guint s = 0; s < G_N_ELEMENTS(sizes); s++) {
                NcclFxRun flows = run(topo, net, ops[o], sizes[s], FALSE);
                NcclFxRun classes = run(topo, net, ops[o], sizes[s], TRUE);
                CU_ASSERT_EQUAL_FATAL(flows.ch.algo, MS_NCCL_ALGO_NVLS);
                CU_ASSERT_EQUAL(flows.flows, 8 * 7);
                for (guint i = 0; i < 8; i++) {
                    CU_ASSERT_EQUAL(flows.sent[i], sizes[s]);
                }
                MS_ASSERT_REL(flows.end_us, flows.ch.cost.time_us, 0.03);
                CU_ASSERT_EQUAL(classes.end_us, flows.end_us);
            }
        }
    }
}

/* algo=ring keeps NCCL to rings where NVLS would win; algo=nvls is accepted. */
static void
test_algo_mask(void)
{
    g_autoptr(MsNetModel) ring = nccl_fx_model("nccl:version=2.18,algo=ring", h100);
    NcclFxRun r = run(h100, ring, MS_COLL_ALLREDUCE, 1024 * MIB, FALSE);
    CU_ASSERT_EQUAL(r.ch.algo, MS_NCCL_ALGO_RING);
    CU_ASSERT_EQUAL(r.flows, (guint64)r.ch.channels * 14 * 8);
    g_autoptr(MsNetModel) nvls = nccl_fx_model("nccl:version=2.18,algo=nvls", h100);
    CU_ASSERT_EQUAL(run(h100, nvls, MS_COLL_ALLREDUCE, 1024 * MIB, FALSE).ch.algo,
                    MS_NCCL_ALGO_NVLS);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"when NCCL enables NVLS", test_enable},
        {"the intra_multicast key", test_topology_key},
        {"NVLS in the tuning model", test_tuning},
        {"NCCL's choice per size on a DGX H100", test_choice},
        {"NVLS flows: link bytes, time alone, both engines", test_flows},
        {"algo masks", test_algo_mask},
        {"reducescatter and allgather in the tuning model", test_tuning_rs_ag},
        {"NCCL's choice for reducescatter and allgather", test_choice_rs_ag},
        {"the algorithm mask for reducescatter and allgather", test_mask_rs_ag},
        {"reducescatter and allgather flows", test_flows_rs_ag},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"coll_nvls", suite_init, suite_clean, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
