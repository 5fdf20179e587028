/* Tests of nic_sim: back-to-back calls alone against one call, the all-to-all's slowdown under a
 * looping allreduce in a closed form (two GPUs sharing their NICs equally under the flow model),
 * the slowdown monotonic in the NIC arbitration's exponent, the number of timed calls, and a
 * collective the simulation refuses. */
#include "ms_test.h"
#include "validate/calibrate.h"
#include "validate/nic_sim.h"

/* Two nodes of one GPU, a 100 Gb/s NIC each (12.5 GB/s a direction). */
static const char pair_text[] = "[topology]\n"
                                "format = 1\n"
                                "name = pair\n"
                                "[gpu]\n"
                                "model = A100-SXM4-80GB\n"
                                "peak = 312TFLOPS\n"
                                "hbm = 2039GBps\n"
                                "memory = 80GiB\n"
                                "launch_overhead = 4us\n"
                                "[preset]\n"
                                "nodes = 2\n"
                                "gpus_per_node = 1\n"
                                "intra = none\n"
                                "nics = per_gpu\n"
                                "nic_bandwidth = 100Gbps\n"
                                "nic_latency = 1us\n"
                                "fabric = switch\n"
                                "fabric_latency = 0.5us\n";

static MsTopology *
load(const char *name)
{
    MsTopology *t = ms_topology_load(name, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    return t;
}

/* One call from a simultaneous launch, as calibration predicts a row. */
static double
one_call(const MsTopology *topo, MsNetModel *net, MsMeasurementKind kind, guint64 bytes,
         guint ranks, guint per_node)
{
    MsMeasurement row = {.kind = kind, .bytes = bytes, .ranks = ranks, .ranks_per_node = per_node};
    double s = 0;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_calibrate_predict_net(topo, NULL, net, &row, &s, &error));
    return s;
}

/* Calls back to back take what one call takes, per call (the chain adds no gap of its own). */
static void
test_alone(void)
{
    g_autoptr(MsTopology) topo = load("lina-testbed");
    guint ranks[16];
    CU_ASSERT_TRUE_FATAL(ms_calibrate_place(topo, 16, 4, ranks, NULL));
    MsNetSpec spec;
    CU_ASSERT_TRUE_FATAL(ms_net_spec_parse("nccl", &spec, NULL));
    g_autoptr(MsNetModel) net = ms_net_model_new(&spec, topo, NULL);
    MsNicCase c = {16, ranks, 4u << 20, 25u << 20, net};
    double a2a = 0, ar = 0;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_nic_sim_alone(topo, &c, 4, &a2a, &error));
    CU_ASSERT_TRUE_FATAL(ms_nic_sim_background(topo, &c, 4, &ar, &error));
    MS_ASSERT_REL(a2a, one_call(topo, net, MS_MEASUREMENT_ALLTOALL, 4u << 20, 16, 4), 0.02);
    MS_ASSERT_REL(ar, one_call(topo, net, MS_MEASUREMENT_ALLREDUCE, 25u << 20, 16, 4), 0.02);
}

/* Under the flow model every flow has an equal share: the all-to-all's one flow a direction
 * shares each NIC with the ring's one, so it takes twice as long, less the ring's gaps between
 * steps (a few microseconds of latency in 10 ms steps). */
static void
test_closed_form(void)
{
    g_autoptr(MsTopology) topo = ms_topology_load_data(pair_text, strlen(pair_text), "pair", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(topo);
    guint ranks[2] = {0, 1};
    MsNicCase c = {2, ranks, 64u << 20, 256u << 20, NULL};
    double alone = 0, together = 0;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_nic_sim_alone(topo, &c, 3, &alone, &error));
    CU_ASSERT_TRUE_FATAL(ms_nic_sim_together(topo, &c, 3, &together, &error));
    /* Alone: 32 MiB to the other GPU at 12.5 GB/s. */
    MS_ASSERT_REL(alone, (32u << 20) / 12.5e9, 0.001);
    MS_ASSERT_REL(together / alone, 2.0, 0.01);
    CU_ASSERT(together / alone <= 2.0);
}

/* On lina-testbed the ring's network messages are larger than the all-to-all's, so the more the
 * NIC arbitrates by message bytes, the slower the all-to-all: the slowdown grows with the
 * exponent at every size the concurrency benchmark runs by default. */
static void
test_monotonic(void)
{
    g_autoptr(MsTopology) topo = load("lina-testbed");
    guint ranks[16];
    CU_ASSERT_TRUE_FATAL(ms_calibrate_place(topo, 16, 4, ranks, NULL));
    static const guint64 sizes[] = {1u << 20, 4u << 20, 16u << 20, 64u << 20};
    static const char *const versions[] = {"2.10", "2.18"};
    for (guint v = 0; v < G_N_ELEMENTS(versions); v++) {
        for (guint k = 0; k < G_N_ELEMENTS(sizes); k++) {
            double last = 0;
            for (guint step = 0; step <= 4; step++) {
                g_autofree char *text =
                    g_strdup_printf("nccl:version=%s,message_exponent=%g", versions[v], step / 4.0);
                MsNetSpec spec;
                CU_ASSERT_TRUE_FATAL(ms_net_spec_parse(text, &spec, NULL));
                g_autoptr(MsNetModel) net = ms_net_model_new(&spec, topo, NULL);
                MsNicCase c = {16, ranks, sizes[k], 25u << 20, net};
                double alone = 0, together = 0;
                CU_ASSERT_TRUE_FATAL(ms_nic_sim_alone(topo, &c, 3, &alone, NULL));
                CU_ASSERT_TRUE_FATAL(ms_nic_sim_together(topo, &c, 3, &together, NULL));
                double slowdown = together / alone;
                CU_ASSERT(slowdown >= 1.0);
                CU_ASSERT(slowdown > last);
                last = slowdown;
            }
            /* Connection-equal shares cost little; message-weighted ones much more. */
            CU_ASSERT(last > 1.2);
        }
    }
}

static void
test_calls(void)
{
    CU_ASSERT_EQUAL(ms_nic_sim_calls(1e-3, 1e-4), MS_NIC_SIM_MIN_CALLS);
    CU_ASSERT_EQUAL(ms_nic_sim_calls(1e-3, 2.5e-3), 5);
    CU_ASSERT_EQUAL(ms_nic_sim_calls(1e-6, 1.0), MS_NIC_SIM_MAX_CALLS);
    CU_ASSERT_EQUAL(ms_nic_sim_calls(0, 1.0), MS_NIC_SIM_MIN_CALLS);
}

/* A collective the model refuses ends the run with its error: an allreduce over a repeated rank
 * at once; an all-to-all above 1 PiB when the first allreduce ends, which also stops the looping
 * allreduce (no hang). */
static void
test_refused(void)
{
    g_autoptr(MsTopology) topo = load("lina-testbed");
    guint twice[2] = {0, 0}, pair[2] = {0, 4};
    MsNicCase c = {2, twice, 1u << 20, 1u << 20, NULL};
    double t = 0;
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_nic_sim_together(topo, &c, 3, &t, &error));
    MS_ASSERT_ERROR(error, MS_COLL_ERROR, MS_COLL_ERROR_INVALID, "rank 0 is listed twice");
    CU_ASSERT_FALSE(ms_nic_sim_alone(topo, &c, 3, &t, &error));
    MS_ASSERT_ERROR(error, MS_COLL_ERROR, MS_COLL_ERROR_INVALID, "rank 0 is listed twice");
    MsNicCase huge = {2, pair, MS_BYTES_MAX + 2, 1u << 20, NULL};
    CU_ASSERT_FALSE(ms_nic_sim_together(topo, &huge, 3, &t, &error));
    MS_ASSERT_ERROR(error, MS_COLL_ERROR, MS_COLL_ERROR_INVALID, "is larger than 1 PiB");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"calls back to back take one call's time each", test_alone},
        {"two GPUs sharing their NICs: twice as long", test_closed_form},
        {"the slowdown grows with the message exponent", test_monotonic},
        {"timed calls", test_calls},
        {"a refused collective ends the run with its error", test_refused},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"nic_sim", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
