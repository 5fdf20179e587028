/* Tests of host_loop: one thread driving G GPUs, closed forms of max(device, G x cost), where the
 * per-call cost comes from, the replay of measured rows with it and `moesim collective
 * --gpus-per-thread` with its refusals. */
#include "ms_test.h"
#include "sim/net/host_loop.h"
#include "validate/calibrate.h"

static MsTopology *
load(const char *name)
{
    MsTopology *t = ms_topology_load(name, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    return t;
}

static void
test_closed_forms(void)
{
    /* A process per GPU: the device time, whatever the cost. */
    CU_ASSERT_EQUAL(ms_host_loop_iteration(3e-6, 0, 1e-3), 3e-6);
    CU_ASSERT_EQUAL(ms_host_loop_iteration(3e-6, 1, 1e-3), 3e-6);
    /* Host-bound: G x cost; device-bound: the device time. */
    CU_ASSERT_DOUBLE_EQUAL(ms_host_loop_iteration(10e-6, 8, 4e-6), 32e-6, 1e-18);
    CU_ASSERT_EQUAL(ms_host_loop_iteration(1e-3, 8, 4e-6), 1e-3);
}

static void
test_call_cost(void)
{
    g_autoptr(MsTopology) topo = load("dgx-a100");
    /* dgx-a100's [gpu] launch_overhead = 4us, under the flow model and an nccl spec without
     * host_us; host_us when given. */
    CU_ASSERT_DOUBLE_EQUAL(ms_host_loop_call_cost(NULL, topo), 4e-6, 1e-18);
    MsNetSpec s;
    CU_ASSERT_TRUE_FATAL(ms_net_spec_parse("nccl", &s, NULL));
    CU_ASSERT_DOUBLE_EQUAL(ms_host_loop_call_cost(&s, topo), 4e-6, 1e-18);
    CU_ASSERT_TRUE_FATAL(ms_net_spec_parse("nccl:host_us=7.25", &s, NULL));
    CU_ASSERT_DOUBLE_EQUAL(ms_host_loop_call_cost(&s, topo), 7.25e-6, 1e-18);
    g_autofree char *text = ms_net_spec_to_string(&s);
    CU_ASSERT_STRING_EQUAL(text, "nccl:host_us=7.25");
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_net_spec_parse("nccl:host_us=-1", &s, &error));
    MS_ASSERT_ERROR(error, MS_NET_MODEL_ERROR, MS_NET_MODEL_ERROR_SPEC, "host_us");
    CU_ASSERT_FALSE(ms_net_spec_parse("nccl:host_us=fast", &s, &error));
    MS_ASSERT_ERROR(error, MS_NET_MODEL_ERROR, MS_NET_MODEL_ERROR_SPEC, "host_us");
}

/* An 8-GPU allreduce row replayed under the nccl model: at 8 B one thread's 8 calls (32 us) are
 * the iteration; at 1 GiB the device time is, the same as a process per GPU. */
static void
test_replay(void)
{
    g_autoptr(MsTopology) topo = load("dgx-a100");
    MsNetSpec s;
    CU_ASSERT_TRUE_FATAL(ms_net_spec_parse("nccl", &s, NULL));
    g_autoptr(MsNetModel) net = ms_net_model_new(&s, topo, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(net);
    guint64 sizes[] = {8, G_GUINT64_CONSTANT(1) << 30};
    for (guint i = 0; i < G_N_ELEMENTS(sizes); i++) {
        MsMeasurement row = {.kind = MS_MEASUREMENT_ALLREDUCE,
                             .bytes = sizes[i],
                             .ranks = 8,
                             .ranks_per_node = 8,
                             .seconds = 1};
        double own = 0, one_thread = 0;
        GError *error = NULL;
        CU_ASSERT_TRUE_FATAL(ms_calibrate_predict_net(topo, NULL, net, &row, &own, &error));
        row.threads = 1;
        row.gpus_per_thread = 8;
        CU_ASSERT_TRUE_FATAL(ms_calibrate_predict_net(topo, NULL, net, &row, &one_thread, &error));
        if (i == 0) {
            CU_ASSERT(own < 32e-6);
            CU_ASSERT_DOUBLE_EQUAL(one_thread, 32e-6, 1e-15);
        } else {
            CU_ASSERT(own > 1e-3);
            CU_ASSERT_EQUAL(one_thread, own);
        }
    }
}

static void
test_collective_cli(void)
{
    MsTestRun r = ms_test_moesim_run("collective", "--topology", "dgx-a100", "--op", "allreduce",
                                     "--net", "nccl", "-b", "8", "-e", "8", "--gpus-per-thread",
                                     "8", "--json", "-", NULL);
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"gpus_per_thread\" : 8"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"time_us\" : 32"));
    ms_test_run_clear(&r);
    r = ms_test_moesim_run("collective", "--topology", "dgx-a100", "--op", "allreduce", "--net",
                           "nccl:host_us=5", "-b", "8", "-e", "8", "--gpus-per-thread", "4", "-g",
                           "4", NULL);
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(r.out, "on dgx-a100, 4 ranks, 4 GPUs per thread at 5.00 us per call, nccl:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, ",host_us=5, NCCL's link figures"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "  20.00  "));
    static const char *const bad[][2] = {
        {"0", "--gpus-per-thread must be between 1 and 1024 (got 0)"},
        {"-2", "--gpus-per-thread must be between 1 and 1024 (got -2)"},
        {"eight", "eight"},
        {"3", "--gpus-per-thread 3 does not divide the 8 ranks"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        ms_test_run_clear(&r);
        r = ms_test_moesim_run("collective", "--topology", "dgx-a100", "--op", "allreduce",
                               "--gpus-per-thread", bad[i][0], NULL);
        CU_ASSERT_EQUAL(r.rc, 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, bad[i][1]));
    }
    /* A log whose nGpus does not parse: its file and line, exit 2. */
    ms_test_run_clear(&r);
    g_autofree char *log =
        ms_test_write_tmp("all_reduce_bad.log", "# nThread 1 nGpus eight minBytes 8 maxBytes 8\n");
    r = ms_test_moesim_run("calibrate", "--topology", "dgx-a100", log, NULL);
    CU_ASSERT_EQUAL(r.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "all_reduce_bad.log:1: nGpus: 'eight'"));
    ms_test_run_clear(&r);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"max(device, G x cost)", test_closed_forms},
        {"the per-call cost: launch overhead or host_us", test_call_cost},
        {"replayed rows of one thread driving 8 GPUs", test_replay},
        {"collective --gpus-per-thread", test_collective_cli},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"host_loop", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
