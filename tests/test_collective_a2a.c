/* Tests of the all-to-all algorithms on dgx-a100, dgx-a100-2node and lina-testbed: direct
 * (NIC-bound closed forms), 2DH (phases, layout copies, byte conservation), DeepEP (one RDMA send
 * per node, NVLink forwarding), windows of rounds and Pipe-A2A against direct. */
#include "coll_harness.h"

/* Uniform all-to-all across 2 nodes: each GPU sends S/16 to each of the 8 GPUs of the other node
 * through its own 25 GB/s NIC; its 7 intra-node sends (7S/16 at 300 GB/s) and its local copy
 * (S/16 read and written at 2039 GB/s) finish long before. */
static void
test_alltoall_nic_bound(void)
{
    double a = coll_lat(two_node, 0, 8);
    MS_ASSERT_REL(a, 2 * 0.6e-6 + 0.13e-6, 1e-12);
    for (guint64 S = 64 << 20; S <= 4 * GIB; S *= 8) {
        MsCollSpec spec = {.op = MS_COLL_ALLTOALL, .n_ranks = 16, .bytes = S};
        Outcome o;
        coll_run(two_node, &spec, &o);
        MS_ASSERT_REL(ms_time_to_s(o.last), S / 2.0 / NIC + a, 1e-3);
        CU_ASSERT_EQUAL(o.flows, 16 * 15);
        for (guint i = 0; i < 16; i++) {
            CU_ASSERT_EQUAL(o.sent[i], 15 * (S / 16));
        }
    }
    /* One node: 7 sends share the GPU's 300 GB/s. */
    MsCollSpec spec = {.op = MS_COLL_ALLTOALL, .n_ranks = 8, .bytes = GIB};
    MS_ASSERT_REL(coll_run_s(one_node, &spec), 7.0 / 8 * GIB / NVS + coll_lat(one_node, 0, 1),
                  1e-3);
    /* One NIC per node (lina-testbed, 4 x 4, 100 Gb/s): the 4 GPUs of a node push 4 x 12/16 S
     * through it. */
    g_autoptr(MsTopology) lina = ms_topology_load("lina-testbed", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(lina);
    spec.n_ranks = 16;
    MS_ASSERT_REL(coll_run_s(lina, &spec), 3.0 * GIB / 12.5e9 + coll_lat(lina, 0, 4), 1e-3);
}

/* 2DH on 2 x 8 (GPU (a,j) is rank 8a + j). Step 1 sends (a,j) -> (a,k) everything (a,j) has for
 * local k of any node; step 2 sends (a,k) -> (b,k) what all of node a has for (b,k); layout
 * copies between them. */
static void
test_2dh(void)
{
    guint64 S = GIB;
    MsCollSpec spec = {.op = MS_COLL_ALLTOALL, .algo = MS_COLL_ALGO_2DH, .n_ranks = 16, .bytes = S};
    Outcome o;
    coll_run(two_node, &spec, &o);
    /* Uniform: step 1 is 7 sends of S/8 sharing 300 GB/s, each copy moves S, step 2 one send of
     * S/2 through the NIC. */
    double want = 7.0 * S / 8 / NVS + coll_lat(two_node, 0, 1) + 2 * (2.0 * S / HBM) +
                  S / 2.0 / NIC + coll_lat(two_node, 0, 8);
    MS_ASSERT_REL(ms_time_to_s(o.last), want, 1e-3);
    CU_ASSERT_EQUAL(o.flows, 2 * 8 * 7 + 8 * 2);

    /* Skewed: bytes per rank and phase are sums of the matrix; copies do not count as sent. */
    guint64 m[16 * 16];
    coll_skewed(m, 16);
    spec.matrix = m;
    coll_run(two_node, &spec, &o);
    guint64 phase1 = 0, phase2 = 0;
    for (guint a = 0; a < 2; a++) {
        for (guint j = 0; j < 8; j++) {
            guint64 want1 = 0, want2 = 0;
            for (guint b = 0; b < 2; b++) {
                for (guint k = 0; k < 8; k++) {
                    want1 += k != j ? m[(8 * a + j) * 16 + 8 * b + k] : 0;
                    want2 += b != a ? m[(8 * a + k) * 16 + 8 * b + j] : 0;
                }
            }
            CU_ASSERT_EQUAL(o.sent[8 * a + j], want1 + want2);
            phase1 += want1;
            phase2 += want2;
        }
    }
    /* Conservation: step 1 moves every byte whose local index changes, step 2 every byte that
     * changes node. */
    guint64 change_local = 0, change_node = 0;
    for (guint s = 0; s < 16; s++) {
        for (guint d = 0; d < 16; d++) {
            change_local += s % 8 != d % 8 ? m[s * 16 + d] : 0;
            change_node += s / 8 != d / 8 ? m[s * 16 + d] : 0;
        }
    }
    CU_ASSERT_EQUAL(phase1, change_local);
    CU_ASSERT_EQUAL(phase2, change_node);
    CU_ASSERT_TRUE(phase1 > 0 && phase2 > 0);

    /* On one node there is no hierarchy: 2DH is the direct all-to-all, no layout copies. */
    MsCollSpec one = {.op = MS_COLL_ALLTOALL, .algo = MS_COLL_ALGO_2DH, .n_ranks = 8, .bytes = S};
    MsCollSpec direct = one;
    direct.algo = MS_COLL_ALGO_DIRECT;
    Outcome a, b;
    coll_run(two_node, &one, &a);
    coll_run(two_node, &direct, &b);
    CU_ASSERT_EQUAL(a.last, b.last);
    CU_ASSERT_EQUAL(a.flows, b.flows);
    CU_ASSERT_EQUAL(a.flows, 8 * 7);
}

/* DeepEP on 2 x 8: rank 0 (node 0, local 0) holds a token for every GPU of node 1, S bytes
 * each. NCCL's direct all-to-all sends it 8 times through rank 0's NIC; DeepEP sends it once
 * over RDMA to rank 8 (local index 0 of node 1), which forwards it over NVLink to ranks 9..15
 * and keeps its own copy, both legs at once: T = max(S/NIC, 7 S/NVS) = S/NIC, 8 times less. The
 * way back (returning) is the transpose: 9..15 gather to 8 over NVLink, 8 sends S to 0. */
static void
test_deepep(void)
{
    const guint64 S = GIB / 4;
    guint64 m[16 * 16] = {0}, r[16 * 16] = {0}, mt[16 * 16] = {0}, rt[16 * 16] = {0};
    for (guint d = 8; d < 16; d++) {
        m[0 * 16 + d] = S;
        mt[d * 16 + 0] = S;
    }
    r[0 * 16 + 8] = S;
    rt[8 * 16 + 0] = S;
    MsCollSpec direct = {
        .op = MS_COLL_ALLTOALL, .algo = MS_COLL_ALGO_DIRECT, .n_ranks = 16, .matrix = m};
    MsCollSpec dep = {
        .op = MS_COLL_ALLTOALL, .algo = MS_COLL_ALGO_DEEPEP, .n_ranks = 16, .matrix = m, .rdma = r};
    Outcome o;
    coll_run(two_node, &dep, &o);
    MS_ASSERT_REL(ms_time_to_s(o.last), (double)S / NIC + coll_lat(two_node, 0, 8), 1e-3);
    /* Bytes per link: rank 0 sends S once (RDMA), rank 8 forwards 7 S over NVLink. */
    CU_ASSERT_EQUAL(o.sent[0], S);
    CU_ASSERT_EQUAL(o.sent[8], 7 * S);
    for (guint i = 1; i < 16; i++) {
        CU_ASSERT_EQUAL(o.sent[i], i == 8 ? 7 * S : 0);
    }
    /* The NVLink leg alone: rank 8 forwards 7 x S at 300 GB/s, done well before the RDMA leg. */
    MS_ASSERT_REL(ms_time_to_s(o.end[9]), 7.0 * S / NVS + coll_lat(two_node, 8, 9), 1e-3);
    Outcome od;
    coll_run(two_node, &direct, &od);
    MS_ASSERT_REL(ms_time_to_s(od.last), 8.0 * S / NIC + coll_lat(two_node, 0, 8), 1e-3);
    CU_ASSERT_EQUAL(od.sent[0], 8 * S);

    /* Returning: the gather at rank 8 then one RDMA send to rank 0. */
    dep.matrix = mt;
    dep.rdma = rt;
    dep.returning = TRUE;
    coll_run(two_node, &dep, &o);
    MS_ASSERT_REL(ms_time_to_s(o.last), (double)S / NIC + coll_lat(two_node, 8, 0), 1e-3);
    CU_ASSERT_EQUAL(o.sent[8], S);
    for (guint i = 9; i < 16; i++) {
        CU_ASSERT_EQUAL(o.sent[i], S);
    }
    CU_ASSERT_EQUAL(o.sent[0], 0);

    /* Uniform traffic with nothing to deduplicate (every pair S/16, each token for one GPU):
     * the RDMA leg carries what crosses the node from each local index, 8 x S/16 to the other
     * node's same index, the NIC-bound time of the direct all-to-all. */
    guint64 u[16 * 16], ur[16 * 16] = {0};
    for (guint i = 0; i < 16; i++) {
        for (guint j = 0; j < 16; j++) {
            u[i * 16 + j] = S / 16;
        }
        ur[i * 16 + (i + 8) % 16] = 8 * (S / 16);
    }
    MsCollSpec uni = {.op = MS_COLL_ALLTOALL,
                      .algo = MS_COLL_ALGO_DEEPEP,
                      .n_ranks = 16,
                      .matrix = u,
                      .rdma = ur};
    MsCollSpec uni_direct = {.op = MS_COLL_ALLTOALL, .n_ranks = 16, .matrix = u};
    MS_ASSERT_REL(coll_run_s(two_node, &uni), coll_run_s(two_node, &uni_direct), 1e-3);

    /* RDMA bytes between GPUs that are not the same local index of two nodes, or none. */
    GError *error = NULL;
    g_autoptr(MsSim) sim = ms_sim_new(two_node);
    r[0 * 16 + 9] = 1;
    dep.matrix = m;
    dep.rdma = r;
    CU_ASSERT_PTR_NULL(ms_coll_new(sim, &dep, NULL, NULL, &error));
    MS_ASSERT_ERROR(error, MS_COLL_ERROR, MS_COLL_ERROR_INVALID,
                    "deepep: 1 RDMA bytes from participant 0 to 9, which are not GPUs of the same "
                    "local index on two nodes");
    dep.rdma = NULL;
    CU_ASSERT_PTR_NULL(ms_coll_new(sim, &dep, NULL, NULL, &error));
    MS_ASSERT_ERROR(error, MS_COLL_ERROR, MS_COLL_ERROR_INVALID,
                    "deepep needs the per-pair matrix and the deduplicated RDMA bytes");
}

/* Direct all-to-all with a window of W rounds on one node: each round moves S/8 per GPU at the
 * full 300 GB/s when alone, so T = 7 S/8/B + ceil(7/W) a. */
static void
test_window(void)
{
    double a = coll_lat(one_node, 0, 1);
    for (guint w = 0; w <= 8; w++) {
        MsCollSpec spec = {.op = MS_COLL_ALLTOALL, .n_ranks = 8, .bytes = GIB, .window = w};
        guint latencies = w == 0 ? 1 : (7 + w - 1) / w;
        MS_ASSERT_REL(coll_run_s(one_node, &spec), 7.0 * GIB / 8 / NVS + latencies * a, 1e-3);
    }
}

/* Pipe-A2A runs the intra-node and the inter-node pairs as two concurrent calls (ScheMoE issues
 * them on two communicators in one group). Without a window it is as fast as direct, both bound
 * by the NICs. With a window of W rounds, the inter-node call follows NCCL's round order over all
 * ranks (round r: i -> i+r) and its intra-node rounds are empty, so in every busy round all 8
 * GPUs of a node send to the same GPU of the other node: ceil(8/W) rounds of 8 x S/16 through one
 * NIC each. */
static void
test_pipe(void)
{
    guint64 S = 256 << 20;
    double a = coll_lat(two_node, 0, 8);
    MsCollSpec spec = {
        .op = MS_COLL_ALLTOALL, .algo = MS_COLL_ALGO_PIPE, .n_ranks = 16, .bytes = S};
    Outcome pipe, direct;
    coll_run(two_node, &spec, &pipe);
    MS_ASSERT_REL(ms_time_to_s(pipe.last), S / 2.0 / NIC + a, 1e-3);
    CU_ASSERT_EQUAL(pipe.flows, 16 * 15);
    for (guint i = 0; i < 16; i++) {
        CU_ASSERT_EQUAL(pipe.sent[i], 15 * (S / 16));
    }
    spec.algo = MS_COLL_ALGO_DIRECT;
    coll_run(two_node, &spec, &direct);
    CU_ASSERT_EQUAL(pipe.last, direct.last);
    for (guint w = 1; w <= 8; w *= 2) {
        spec.window = w;
        spec.algo = MS_COLL_ALGO_PIPE;
        coll_run(two_node, &spec, &pipe);
        MS_ASSERT_REL(ms_time_to_s(pipe.last), ((8 + w - 1) / w) * (S / 2.0 / NIC + a), 1e-3);
        spec.algo = MS_COLL_ALGO_DIRECT;
        coll_run(two_node, &spec, &direct);
        /* Direct queues the intra-node rounds behind the inter-node ones of the same rank, Pipe
         * overlaps them: once the window spreads the inter-node rounds, Pipe is faster. */
        if (w >= 4) {
            CU_ASSERT_TRUE(pipe.last < direct.last);
        }
        CU_ASSERT_TRUE(ms_time_to_s(direct.last) > S / 2.0 / NIC);
    }
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"2-node all-to-all is bound by the NICs", test_alltoall_nic_bound},
        {"2DH phases, copies and byte conservation", test_2dh},
        {"DeepEP: RDMA once per node, NVLink forwarding, against direct", test_deepep},
        {"all-to-all window", test_window},
        {"Pipe-A2A versus direct", test_pipe},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {
        {"collective_a2a", coll_suite_init, coll_suite_clean, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
