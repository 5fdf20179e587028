/* Tests of inputs: names to objects with their defaults, a calibration applied to the topology
 * (the route it calibrates takes its figures), the texts variants are made from, and the first
 * error of each kind of input, in loading order. */
#include "ms_test.h"
#include "sim/inputs.h"

static void
test_defaults(void)
{
    GError *error = NULL;
    MsInputNames none = {0};
    g_autoptr(MsInputs) in = ms_inputs_load(&none, &error);
    g_assert_no_error(error);
    const MsInputNames *n = ms_inputs_names(in);
    CU_ASSERT_STRING_EQUAL(n->topology, MS_SCENARIO_TOPOLOGY);
    CU_ASSERT_STRING_EQUAL(n->model, MS_SCENARIO_MODEL);
    CU_ASSERT_STRING_EQUAL(n->policy, MS_SCENARIO_POLICY);
    CU_ASSERT_PTR_NULL(n->calibration);
    CU_ASSERT_PTR_NULL(n->trace);
    CU_ASSERT_STRING_EQUAL(ms_topology_name(ms_inputs_topology(in)), "lina-testbed");
    CU_ASSERT_STRING_EQUAL(ms_model_spec(ms_inputs_model(in))->name, "lina-gpt2-16e");
    CU_ASSERT_STRING_EQUAL(ms_policy_name(ms_inputs_policy(in)), "fifo");
    CU_ASSERT_TRUE(ms_routing_source_generated(ms_inputs_routing(in)));
    CU_ASSERT_PTR_NULL(ms_inputs_calibration(in));
    MsScenario sc = {.warmup = 7};
    ms_inputs_fill(in, &sc);
    CU_ASSERT_PTR_EQUAL(sc.topology, ms_inputs_topology(in));
    CU_ASSERT_PTR_EQUAL(sc.model, ms_inputs_model(in));
    CU_ASSERT_PTR_EQUAL(sc.policy, ms_inputs_policy(in));
    CU_ASSERT_PTR_EQUAL(sc.routing, ms_inputs_routing(in));
    CU_ASSERT_PTR_NULL(sc.calibration);
    CU_ASSERT_EQUAL(sc.warmup, 7);
}

static const char cal_text[] = "[calibration]\nformat = 1\n[link nvswitch]\nbandwidth = 100GBps\n"
                               "latency = 3us\n";

/* The bandwidth of the route between GPUs 0 and 1 (one node: the NVSwitch class). */
static double
route_bw(const MsTopology *t)
{
    guint n = 0;
    const guint32 *route = ms_topology_gpu_route(t, 0, 1, &n, NULL);
    return ms_topology_route_bandwidth(t, route, n);
}

static void
test_calibration(void)
{
    GError *error = NULL;
    g_autofree char *cal = ms_test_write_tmp("c.ini", cal_text);
    MsInputNames names = {.topology = "dgx-a100",
                          .calibration = cal,
                          .model = "switch-base-8",
                          .policy = "lina:chunk=8MB",
                          .trace = "sample:default"};
    g_autoptr(MsInputs) in = ms_inputs_load(&names, &error);
    g_assert_no_error(error);
    CU_ASSERT_PTR_NOT_NULL(ms_inputs_calibration(in));
    MS_ASSERT_REL(route_bw(ms_inputs_topology(in)), 100e9, 1e-9);
    CU_ASSERT_STRING_EQUAL(ms_policy_spec(ms_inputs_policy(in)), "lina:chunk=8MB");
    CU_ASSERT_FALSE(ms_routing_source_generated(ms_inputs_routing(in)));
    /* A topology loaded on its own, with and without the calibration. */
    g_autoptr(MsTopology) nominal = ms_inputs_load_topology("dgx-a100", NULL, &error);
    g_autoptr(MsTopology) fitted =
        ms_inputs_load_topology("dgx-a100", ms_inputs_calibration(in), &error);
    g_assert_no_error(error);
    CU_ASSERT_TRUE(route_bw(nominal) > 200e9);
    MS_ASSERT_REL(route_bw(fitted), 100e9, 1e-9);
}

static void
test_texts(void)
{
    GError *error = NULL;
    g_autoptr(GBytes) shipped = ms_inputs_topology_text("dgx-a100", &error);
    g_autoptr(GBytes) want = ms_topology_shipped_data("dgx-a100");
    g_assert_no_error(error);
    CU_ASSERT_TRUE(g_bytes_equal(shipped, want));
    g_autofree char *path = ms_test_write_tmp("m.ini", "[model]\nname = x\n");
    g_autoptr(GBytes) file = ms_inputs_model_text(path, &error);
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(g_bytes_get_size(file), strlen("[model]\nname = x\n"));
    g_autoptr(GBytes) model = ms_inputs_model_text("switch-base-8", &error);
    CU_ASSERT_PTR_NOT_NULL(model);
    CU_ASSERT_PTR_NULL(ms_inputs_topology_text("dgx-z9", &error));
    MS_ASSERT_ERROR(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_UNKNOWN, "dgx-z9");
    CU_ASSERT_PTR_NULL(ms_inputs_model_text("gpt-9", &error));
    MS_ASSERT_ERROR(error, MS_MODEL_ERROR, MS_MODEL_ERROR_UNKNOWN, "gpt-9");
}

static void
test_errors(void)
{
    GError *error = NULL;
    g_autofree char *bad_cal = ms_test_write_tmp("bad.ini", "[calibration]\nformat = 2\n");
    /* Everything wrong at once: the topology is reported, as it is loaded first. */
    MsInputNames names = {"nowhere-cluster", "gpt-9", bad_cal, "linaa", "gen:zipf=-1"};
    CU_ASSERT_PTR_NULL(ms_inputs_load(&names, &error));
    MS_ASSERT_ERROR(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_UNKNOWN, "nowhere-cluster");
    names.topology = "lina-testbed";
    CU_ASSERT_PTR_NULL(ms_inputs_load(&names, &error));
    CU_ASSERT_PTR_NOT_NULL_FATAL(error);
    CU_ASSERT_PTR_NOT_NULL(strstr(error->message, "bad.ini"));
    g_clear_error(&error);
    names.calibration = NULL;
    CU_ASSERT_PTR_NULL(ms_inputs_load(&names, &error));
    MS_ASSERT_ERROR(error, MS_MODEL_ERROR, MS_MODEL_ERROR_UNKNOWN, "unknown model 'gpt-9'");
    names.model = "lina-gpt2-4e";
    CU_ASSERT_PTR_NULL(ms_inputs_load(&names, &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_UNKNOWN, "linaa");
    names.policy = "lina:chunk=3";
    CU_ASSERT_PTR_NULL(ms_inputs_load(&names, &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE, "policy lina: chunk=3:");
    names.policy = NULL;
    CU_ASSERT_PTR_NULL(ms_inputs_load(&names, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE, "zipf");
    CU_ASSERT_PTR_NULL(ms_inputs_load_topology("no/such.ini", NULL, &error));
    MS_ASSERT_ERROR(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_UNKNOWN, "no/such.ini");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"defaults", test_defaults},
        {"a calibration applied to the topology", test_calibration},
        {"the texts of named inputs", test_texts},
        {"the first error, in loading order", test_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"inputs", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
