/* Tests of the nccl model's calibration: factors recovered from times the model itself made with
 * known factors, their errors, and what the fit refuses. */
#include "ms_test.h"
#include "validate/calibrate.h"
#include "validate/holdout.h"
#include "validate/nccl_fit.h"

static MsTopology *
load(const char *name)
{
    MsTopology *t = ms_topology_load(name, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    return t;
}

static MsNetSpec
spec(const char *text)
{
    MsNetSpec s;
    CU_ASSERT_TRUE_FATAL(ms_net_spec_parse(text, &s, NULL));
    return s;
}

/* Allreduce rows from 8 B to 256 MiB on `ranks` GPUs, per_node on each node, one thread driving
 * gpus_per_thread of them (0: a process per GPU), timed by the model under truth, appended to
 * set. */
static void
add_shaped(MsMeasurementSet *set, const MsTopology *topo, const MsNetSpec *truth,
           guint gpus_per_thread, guint ranks, guint per_node)
{
    g_autoptr(MsNetModel) net = ms_net_model_new(truth, topo, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(net);
    for (guint64 b = 8; b <= (256u << 20); b *= 4) {
        MsMeasurement m = {.kind = MS_MEASUREMENT_ALLREDUCE,
                           .bytes = b,
                           .ranks = ranks,
                           .ranks_per_node = per_node,
                           .threads = gpus_per_thread ? 1 : 0,
                           .gpus_per_thread = gpus_per_thread};
        GError *error = NULL;
        CU_ASSERT_TRUE_FATAL(ms_calibrate_predict_net(topo, NULL, net, &m, &m.seconds, &error));
        m.median_s = m.seconds;
        m.min_s = m.mean_s = NAN;
        CU_ASSERT_TRUE_FATAL(ms_measurement_set_add(set, &m, NULL));
    }
}

static void
add_rows(MsMeasurementSet *set, const MsTopology *topo, const MsNetSpec *truth,
         guint gpus_per_thread, guint ranks)
{
    add_shaped(set, topo, truth, gpus_per_thread, ranks, ranks);
}

static void
add_synthetic(MsMeasurementSet *set, const MsTopology *topo, const MsNetSpec *truth,
              guint gpus_per_thread)
{
    add_rows(set, topo, truth, gpus_per_thread, 8);
}

static MsMeasurementSet *
synthetic(const MsTopology *topo, const MsNetSpec *truth)
{
    MsMeasurementSet *set = ms_measurement_set_new();
    add_synthetic(set, topo, truth, 0);
    return set;
}

static void
test_recovers_factors(void)
{
    g_autoptr(MsTopology) topo = load("dgx-a100");
    MsNetSpec truth =
        spec("nccl:latency_scale=1.7,ll_efficiency=0.4,ll128_efficiency=0.6,simple_efficiency=0.8");
    g_autoptr(MsMeasurementSet) set = synthetic(topo, &truth);
    MsNetSpec base = spec("nccl");
    MsNcclFit fit;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_nccl_fit(topo, set, &base, &fit, &error));
    CU_ASSERT_EQUAL(fit.rows, ms_measurement_set_size(set));
    MS_ASSERT_REL(fit.spec.latency_scale, 1.7, 0.02);
    for (guint p = 0; p < MS_NCCL_N_PROTOS; p++) {
        CU_ASSERT(fit.proto_rows[p] > 0);
        MS_ASSERT_REL(fit.spec.proto_efficiency[p], truth.proto_efficiency[p], 0.02);
        CU_ASSERT(isfinite(fit.efficiency_se[p]));
    }
    CU_ASSERT(fit.median_after < 0.01);
    CU_ASSERT(fit.median_before > 0.2);
    g_autofree char *text = ms_nccl_fit_describe(&fit);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "latency_scale 1.70"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "ll_efficiency 0.40"));
}

/* Rows of one thread driving the 8 GPUs at 7.5 us per call beside rows of a process per GPU:
 * the host cost is found again, with the other factors, from the rows its 60 us bound; without
 * such rows it is not fitted (NAN error, the base's nominal cost kept). */
static void
test_recovers_host_cost(void)
{
    g_autoptr(MsTopology) topo = load("dgx-a100");
    MsNetSpec truth = spec("nccl:latency_scale=1.3,simple_efficiency=0.8,host_us=7.5");
    g_autoptr(MsMeasurementSet) set = synthetic(topo, &truth);
    add_synthetic(set, topo, &truth, 8);
    MsNetSpec base = spec("nccl");
    MsNcclFit fit;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_nccl_fit(topo, set, &base, &fit, &error));
    CU_ASSERT(fit.host_rows > 0 && fit.host_rows < fit.rows / 2);
    MS_ASSERT_REL(fit.spec.host_us, 7.5, 1e-3);
    CU_ASSERT(isfinite(fit.host_us_se) && fit.host_us_se < 0.01);
    MS_ASSERT_REL(fit.spec.latency_scale, 1.3, 0.02);
    MS_ASSERT_REL(fit.spec.proto_efficiency[MS_NCCL_PROTO_SIMPLE], 0.8, 0.02);
    CU_ASSERT(fit.median_after < 0.01);
    g_autofree char *text = ms_nccl_fit_describe(&fit);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "host_us 7.500"));
    g_autofree char *net = ms_net_spec_to_string(&fit.spec);
    CU_ASSERT_PTR_NOT_NULL(strstr(net, ",host_us=7.5"));

    /* A process per GPU only: nothing constrains the host cost. */
    g_autoptr(MsMeasurementSet) one = synthetic(topo, &truth);
    CU_ASSERT_TRUE_FATAL(ms_nccl_fit(topo, one, &base, &fit, &error));
    CU_ASSERT_EQUAL(fit.host_rows, 0);
    CU_ASSERT(isnan(fit.host_us_se));
    CU_ASSERT(fit.spec.host_us < 0);
    g_autofree char *plain = ms_nccl_fit_describe(&fit);
    CU_ASSERT_PTR_NULL(strstr(plain, "host_us"));
}

/* Rows inside a node and across two, made with the network at 40% of NCCL's figure: the search
 * finds it again with the other factors; with rows across nodes only it stays the base's (it and
 * the protocols' efficiencies would scale the same bytes). */
static void
test_recovers_network(void)
{
    g_autoptr(MsTopology) topo = load("dgx-a100-2node");
    MsNetSpec truth = spec("nccl:latency_scale=1.2,ll_efficiency=0.6,ll128_efficiency=0.8,"
                           "simple_efficiency=0.9,net_efficiency=0.4");
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    add_shaped(set, topo, &truth, 0, 8, 8);
    guint inside = ms_measurement_set_size(set);
    add_shaped(set, topo, &truth, 0, 16, 8);
    add_shaped(set, topo, &truth, 0, 2, 1);
    MsNetSpec base = spec("nccl");
    MsNcclFit fit;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_nccl_fit(topo, set, &base, &fit, &error));
    CU_ASSERT_EQUAL(fit.net_rows, ms_measurement_set_size(set) - inside);
    MS_ASSERT_REL(fit.spec.net_efficiency, 0.4, 0.01);
    CU_ASSERT(isfinite(fit.net_efficiency_se) && fit.net_efficiency_se < 0.01);
    MS_ASSERT_REL(fit.spec.latency_scale, 1.2, 0.02);
    MS_ASSERT_REL(fit.spec.proto_efficiency[MS_NCCL_PROTO_SIMPLE], 0.9, 0.02);
    CU_ASSERT(fit.median_after < 1e-3);
    CU_ASSERT(fit.median_before > 0.1);
    g_autofree char *text_of_truth = ms_nccl_fit_describe(&fit);
    CU_ASSERT_PTR_NOT_NULL(strstr(text_of_truth, "net_efficiency 0.40"));
    g_autofree char *net = ms_net_spec_to_string(&fit.spec);
    CU_ASSERT_PTR_NOT_NULL(strstr(net, ",net_efficiency=0.4"));

    /* Rows of a network 200 times slower than the topology says: the search ends at its range's
     * lower end and the report says the least residual may lie beyond it. */
    GBytes *text = g_resources_lookup_data("/moesim/topologies/dgx-a100-2node.ini", 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    g_autofree char *ini = g_strndup(g_bytes_get_data(text, NULL), g_bytes_get_size(text));
    g_bytes_unref(text);
    g_auto(GStrv) parts = g_strsplit(ini, "nic_bandwidth = 200Gbps", 2);
    CU_ASSERT_EQUAL_FATAL(g_strv_length(parts), 2);
    g_autofree char *slow_ini = g_strjoinv("nic_bandwidth = 1Gbps", parts);
    g_autoptr(MsTopology) slow = ms_topology_load_data(slow_ini, strlen(slow_ini), "slow", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(slow);
    g_autoptr(MsMeasurementSet) beyond = ms_measurement_set_new();
    add_shaped(beyond, topo, &base, 0, 8, 8);
    add_shaped(beyond, slow, &base, 0, 2, 1);
    CU_ASSERT_TRUE_FATAL(ms_nccl_fit(topo, beyond, &base, &fit, &error));
    MS_ASSERT_REL(fit.spec.net_efficiency, 0.01, 0.01);
    g_autofree char *edge = ms_nccl_fit_describe(&fit);
    CU_ASSERT_PTR_NOT_NULL(strstr(edge, "at an end of its range, 0.01 to 1.5"));
    CU_ASSERT_PTR_NULL(strstr(text_of_truth, "at an end"));

    g_autoptr(MsMeasurementSet) across = ms_measurement_set_new();
    add_shaped(across, topo, &truth, 0, 16, 8);
    CU_ASSERT_TRUE_FATAL(ms_nccl_fit(topo, across, &base, &fit, &error));
    CU_ASSERT_EQUAL(fit.spec.net_efficiency, 1.0);
    CU_ASSERT(isnan(fit.net_efficiency_se));
    g_autofree char *plain = ms_nccl_fit_describe(&fit);
    CU_ASSERT_PTR_NULL(strstr(plain, "net_efficiency"));
}

/* Factors fitted without the 4-GPU rows predict them: the model made them with the same factors,
 * so the held-out error is the fit's own (the 8-GPU rows use every protocol). Nothing held out is
 * refused. */
static void
test_holdout(void)
{
    g_autoptr(MsTopology) topo = load("dgx-a100");
    MsNetSpec truth =
        spec("nccl:latency_scale=1.4,ll_efficiency=0.5,ll128_efficiency=0.7,simple_efficiency=0.9");
    g_autoptr(MsMeasurementSet) set = synthetic(topo, &truth);
    guint eight = ms_measurement_set_size(set);
    add_rows(set, topo, &truth, 0, 4);
    guint n = ms_measurement_set_size(set);
    g_autofree gboolean *held = g_new0(gboolean, n);
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_holdout_configs(set, "4x4", held, &error));
    MsNetSpec base = spec("nccl");
    MsNcclFit fit;
    g_autoptr(GArray) groups = g_array_new(FALSE, FALSE, sizeof(MsHoldoutGroup));
    MsErrorStats all;
    CU_ASSERT_TRUE_FATAL(ms_nccl_fit_holdout(topo, set, held, &base, &fit, groups, &all, &error));
    CU_ASSERT_EQUAL(fit.rows, eight);
    MS_ASSERT_REL(fit.spec.latency_scale, 1.4, 0.02);
    CU_ASSERT_EQUAL_FATAL(groups->len, 1);
    const MsHoldoutGroup *g = &g_array_index(groups, MsHoldoutGroup, 0);
    CU_ASSERT(g->kind == MS_MEASUREMENT_ALLREDUCE && g->ranks == 4 && g->per_node == 4);
    CU_ASSERT_EQUAL(g->stats.n, n - eight);
    CU_ASSERT_EQUAL(all.n, n - eight);
    CU_ASSERT(all.max < 0.02);
    /* Under the nominal factors the held-out rows are far off, so the bound above tells. */
    g_autoptr(MsNetModel) nominal = ms_net_model_new(&base, topo, &error);
    const MsMeasurement *big = ms_measurement_set_get(set, n - 1);
    double t = 0;
    CU_ASSERT_TRUE_FATAL(ms_calibrate_predict_net(topo, NULL, nominal, big, &t, &error));
    CU_ASSERT(fabs(t / big->seconds - 1) > 0.05);
    g_autofree gboolean *none = g_new0(gboolean, n);
    g_array_set_size(groups, 0);
    CU_ASSERT_FALSE(ms_nccl_fit_holdout(topo, set, none, &base, &fit, groups, &all, &error));
    MS_ASSERT_ERROR(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT, "no communication measurement");
}

static void
test_refusals(void)
{
    g_autoptr(MsTopology) topo = load("dgx-a100");
    MsNetSpec truth = spec("nccl");
    g_autoptr(MsMeasurementSet) set = synthetic(topo, &truth);
    MsNcclFit fit;
    GError *error = NULL;
    MsNetSpec flow = spec("flow");
    CU_ASSERT_FALSE(ms_nccl_fit(topo, set, &flow, &fit, &error));
    MS_ASSERT_ERROR(error, MS_NCCL_FIT_ERROR, MS_NCCL_FIT_ERROR_SPEC, "only the nccl");
    g_autoptr(MsMeasurementSet) two = ms_measurement_set_new();
    for (guint i = 0; i < 2; i++) {
        CU_ASSERT_TRUE(ms_measurement_set_add(two, ms_measurement_set_get(set, i), NULL));
    }
    CU_ASSERT_FALSE(ms_nccl_fit(topo, two, &truth, &fit, &error));
    MS_ASSERT_ERROR(error, MS_NCCL_FIT_ERROR, MS_NCCL_FIT_ERROR_NO_DATA,
                    "2 collective rows to fit 2 factors: at least 3 are needed");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"factors made by the model are found again", test_recovers_factors},
        {"the host cost of one thread driving 8 GPUs", test_recovers_host_cost},
        {"the network's efficiency, searched", test_recovers_network},
        {"fitted without held-out rows, predicting them", test_holdout},
        {"a flow spec, too few rows", test_refusals},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"nccl_fit", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
