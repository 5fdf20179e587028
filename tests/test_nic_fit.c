/* Tests of the NIC arbitration fit: the message exponent recovered from rows the simulator made at
 * a known exponent (written as a measurement CSV and read back through the normal reader), its
 * error under noise, the per-configuration residuals, predictions, and every refusal. */
#include "ms_test.h"

#include <json-glib/json-glib.h>

#include "validate/calibrate.h"
#include "validate/moesim_csv.h"
#include "validate/nic_fit.h"

#define BACKGROUND (G_GUINT64_CONSTANT(25) << 20) /* PyTorch DDP's default bucket, 25 MiB */

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

static void
add(MsMeasurementSet *set, MsMeasurement *m, double seconds)
{
    m->seconds = m->mean_s = seconds;
    m->min_s = m->median_s = NAN;
    m->label = "";
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_measurement_set_add(set, m, &error));
}

/* What the concurrency benchmark writes on 16 GPUs of lina-testbed, timed by the model under
 * truth: per channel setting (NCCL's, 2) and all-to-all size, the all-to-all alone and under the
 * 25 MiB allreduce, and the allreduce alone; each together time times (1 + noise x a fixed
 * pseudo-random number in [-1, 1]). The set goes through the CSV writer and the normal reader. */
static MsMeasurementSet *
synthetic(const MsTopology *topo, const MsNetSpec *truth, double noise, guint32 qps)
{
    g_autoptr(MsMeasurementSet) made = ms_measurement_set_new();
    static const guint32 channels[] = {0, 2};
    static const guint64 sizes[] = {256u << 10, 1u << 20, 4u << 20, 16u << 20};
    g_autoptr(GRand) rand = g_rand_new_with_seed(10);
    for (guint c = 0; c < G_N_ELEMENTS(channels); c++) {
        for (guint k = 0; k < G_N_ELEMENTS(sizes); k++) {
            MsMeasurement under = {.kind = MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE,
                                   .bytes = sizes[k],
                                   .ranks = 16,
                                   .ranks_per_node = 4,
                                   .background_bytes = BACKGROUND,
                                   .channels = channels[c],
                                   .qps = qps};
            double alone = 0, together = 0;
            GError *error = NULL;
            CU_ASSERT_TRUE_FATAL(
                ms_nic_fit_predict(topo, truth, &under, &alone, &together, &error));
            MsMeasurement a2a = under;
            a2a.kind = MS_MEASUREMENT_ALLTOALL;
            a2a.background_bytes = 0;
            add(made, &a2a, alone);
            add(made, &under, together * (1 + noise * g_rand_double_range(rand, -1, 1)));
        }
        MsMeasurement ar = {.kind = MS_MEASUREMENT_ALLREDUCE,
                            .bytes = BACKGROUND,
                            .ranks = 16,
                            .ranks_per_node = 4,
                            .dtype = "bf16",
                            .channels = channels[c],
                            .qps = qps};
        g_autoptr(MsNetModel) net = ms_net_model_new(truth, topo, NULL);
        double t = 0;
        CU_ASSERT_TRUE_FATAL(ms_calibrate_predict_net(topo, NULL, net, &ar, &t, NULL));
        add(made, &ar, t);
    }
    gsize len = 0;
    g_autofree char *text = ms_moesim_csv_write(made, &len);
    CU_ASSERT_TRUE(g_str_has_prefix(text, "# moesim-measurements 2\n"));
    MsMeasurementSet *set = ms_measurement_set_new();
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_measurement_set_read_data(set, text, len, "bench.csv", &error));
    CU_ASSERT_EQUAL_FATAL(ms_measurement_set_size(set), ms_measurement_set_size(made));
    return set;
}

static void
recover(double x, const char *truth_text)
{
    g_autoptr(MsTopology) topo = load("lina-testbed");
    MsNetSpec truth = spec(truth_text);
    g_autoptr(MsMeasurementSet) set = synthetic(topo, &truth, 0, 0);
    CU_ASSERT_EQUAL(ms_nic_fit_count(set), 8);
    /* The base is NCCL's own model: exponent 1. */
    MsNetSpec base = spec("nccl");
    MsNicFit fit;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_nic_fit(topo, set, &base, &fit, &error));
    CU_ASSERT_EQUAL(fit.rows, 8);
    CU_ASSERT_DOUBLE_EQUAL(fit.spec.message_exponent, x, 0.005);
    CU_ASSERT(fit.exponent_se < 0.005);
    CU_ASSERT(fit.median_after < 0.002);
    /* Every other key stays the base's. */
    CU_ASSERT_EQUAL(fit.spec.kind, MS_NET_NCCL);
    CU_ASSERT_EQUAL(fit.spec.latency_scale, 1.0);
    CU_ASSERT_EQUAL(fit.groups->len, 2);
    for (guint k = 0; k < fit.groups->len; k++) {
        const MsNicFitGroup *g = &g_array_index(fit.groups, MsNicFitGroup, k);
        CU_ASSERT_EQUAL(g->rows, 4);
        CU_ASSERT_EQUAL(g->channels, k == 0 ? 0 : 2);
        CU_ASSERT(fabs(g->mean_log_error) < 0.002);
    }
    g_autofree char *text = ms_nic_fit_describe(&fit);
    g_autofree char *head = g_strdup_printf("message_exponent %.3f +- ", x);
    CU_ASSERT_TRUE(g_str_has_prefix(text, head));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "(8 rows; slowdown error median"));
    CU_ASSERT_PTR_NOT_NULL(strstr(
        text, "  NCCL's channels, NCCL's QPs per connection: 4 rows, mean slowdown error +0.0%"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "  channels 2, NCCL's QPs per connection: 4 rows"));
    if (x < 1) {
        CU_ASSERT(fit.median_before > 0.05);
    } else {
        CU_ASSERT(fit.median_before < 0.002);
    }
    ms_nic_fit_clear(&fit);
    CU_ASSERT_PTR_NULL(fit.groups);
}

static void
test_recovers_0_3(void)
{
    recover(0.3, "nccl:message_exponent=0.3");
}

static void
test_recovers_1(void)
{
    recover(1.0, "nccl");
}

/* With 3% noise on every together time the fit stays within three standard errors of the truth,
 * and the error is no longer nil. Queue pairs per connection change nothing in the model. */
static void
test_noise(void)
{
    g_autoptr(MsTopology) topo = load("lina-testbed");
    MsNetSpec truth = spec("nccl:message_exponent=0.5");
    g_autoptr(MsMeasurementSet) set = synthetic(topo, &truth, 0.03, 4);
    MsNetSpec base = spec("nccl");
    MsNicFit fit;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_nic_fit(topo, set, &base, &fit, &error));
    CU_ASSERT(fit.exponent_se > 0.005);
    CU_ASSERT(fit.exponent_se < 0.2);
    CU_ASSERT(fabs(fit.spec.message_exponent - 0.5) < 3 * fit.exponent_se);
    CU_ASSERT(fit.median_after < 0.03);
    g_autofree char *text = ms_nic_fit_describe(&fit);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(text, "channels 2, 4 QPs per connection: 4 rows, mean slowdown error"));
    ms_nic_fit_clear(&fit);
}

/* validate's prediction of such a row: its together time under the spec, longer than alone. */
static void
test_predict(void)
{
    g_autoptr(MsTopology) topo = load("lina-testbed");
    MsMeasurement row = {.kind = MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE,
                         .bytes = 1u << 20,
                         .ranks = 16,
                         .ranks_per_node = 4,
                         .background_bytes = BACKGROUND,
                         .source = "b.csv",
                         .line = 7};
    MsNetSpec at0 = spec("nccl:message_exponent=0"), at1 = spec("nccl");
    double a0 = 0, t0 = 0, a1 = 0, t1 = 0, af = 0, tf = 0;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_nic_fit_predict(topo, &at0, &row, &a0, &t0, &error));
    CU_ASSERT_TRUE_FATAL(ms_nic_fit_predict(topo, &at1, &row, &a1, &t1, &error));
    CU_ASSERT_TRUE_FATAL(ms_nic_fit_predict(topo, NULL, &row, &af, &tf, &error));
    /* Alone, the exponent changes nothing; together, message arbitration favours the ring's
     * larger messages. */
    MS_ASSERT_REL(a1, a0, 1e-9);
    CU_ASSERT(t0 > a0);
    CU_ASSERT(t1 > 1.3 * t0);
    CU_ASSERT(tf > af);
    /* More ranks than the topology has: the row's place named. */
    row.ranks = 32;
    CU_ASSERT_FALSE(ms_nic_fit_predict(topo, &at1, &row, NULL, &t1, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_PLACEMENT,
                    "b.csv:7: alltoall_under_allreduce: 32 ranks with 4 per node do not fit");
}

static void
test_refusals(void)
{
    g_autoptr(MsTopology) topo = load("lina-testbed");
    MsNetSpec truth = spec("nccl");
    g_autoptr(MsMeasurementSet) set = synthetic(topo, &truth, 0, 0);
    MsNicFit fit;
    GError *error = NULL;
    MsNetSpec flow = spec("flow");
    CU_ASSERT_FALSE(ms_nic_fit(topo, set, &flow, &fit, &error));
    MS_ASSERT_ERROR(error, MS_NIC_FIT_ERROR, MS_NIC_FIT_ERROR_SPEC, "only the nccl");
    /* One row is not enough; a row without its all-to-all alone is named. */
    g_autoptr(MsMeasurementSet) few = ms_measurement_set_new();
    g_autoptr(MsMeasurementSet) orphan = ms_measurement_set_new();
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        const MsMeasurement *m = ms_measurement_set_get(set, i);
        if (m->kind == MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE) {
            CU_ASSERT_TRUE(ms_measurement_set_add(orphan, m, NULL));
        }
        if (i < 2) {
            CU_ASSERT_TRUE(ms_measurement_set_add(few, m, NULL));
        }
    }
    CU_ASSERT_FALSE(ms_nic_fit(topo, few, &truth, &fit, &error));
    MS_ASSERT_ERROR(error, MS_NIC_FIT_ERROR, MS_NIC_FIT_ERROR_NO_DATA,
                    "1 alltoall_under_allreduce rows: the message exponent needs at least 2");
    CU_ASSERT_FALSE(ms_nic_fit(topo, orphan, &truth, &fit, &error));
    MS_ASSERT_ERROR(error, MS_NIC_FIT_ERROR, MS_NIC_FIT_ERROR_ALONE,
                    "bench.csv:4: alltoall_under_allreduce of 262144 B over 16x4 (channels 0, "
                    "qps 0): no alltoall row of the same size, ranks and NCCL configuration");
    /* Four GPUs of one node: no NIC, nothing to tell the exponent by. */
    g_autoptr(MsMeasurementSet) node = ms_measurement_set_new();
    for (guint k = 0; k < 2; k++) {
        MsMeasurement a2a = {.kind = MS_MEASUREMENT_ALLTOALL,
                             .bytes = (1u << 20) << (2 * k),
                             .ranks = 4,
                             .ranks_per_node = 4};
        MsMeasurement under = a2a;
        under.kind = MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE;
        under.background_bytes = BACKGROUND;
        add(node, &a2a, 1e-4);
        add(node, &under, 2e-4);
    }
    CU_ASSERT_FALSE(ms_nic_fit(topo, node, &truth, &fit, &error));
    MS_ASSERT_ERROR(error, MS_NIC_FIT_ERROR, MS_NIC_FIT_ERROR_FLAT,
                    "the simulated slowdowns of the 2 alltoall_under_allreduce rows do not depend "
                    "on the message exponent");
}

/* The commands: calibrate --net nccl finds the exponent, prints it with its error and puts it in
 * the fitted spec and the JSON; validate --net with that spec predicts the rows, with NCCL's own
 * exponent it does not. */
static void
test_commands(void)
{
    g_autoptr(MsTopology) topo = load("lina-testbed");
    MsNetSpec truth = spec("nccl:message_exponent=0.3");
    g_autoptr(MsMeasurementSet) set = synthetic(topo, &truth, 0, 0);
    g_autofree char *text = ms_moesim_csv_write(set, NULL);
    g_autofree char *path = ms_test_write_tmp("bench.csv", text);
    const char *cal[] = {"calibrate", "--topology", "lina-testbed", path, "--net", "nccl", "--json",
                         "-",         NULL};
    g_autofree char *out = NULL, *err = NULL;
    CU_ASSERT_EQUAL_FATAL(ms_test_run_moesim(cal, &out, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "nccl network model fitted on 10 collective rows and the "
                                       "all-to-alls under an allreduce:\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "  message_exponent 0.30"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(err, "9 rows under forced NCCL channels or queue pairs left out"));
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_data(p, out, -1, NULL));
    JsonObject *netj =
        json_object_get_object_member(json_node_get_object(json_parser_get_root(p)), "net");
    CU_ASSERT_PTR_NOT_NULL_FATAL(netj);
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double_member(netj, "message_exponent"), 0.3, 0.01);
    CU_ASSERT(json_object_get_double_member(netj, "message_exponent_se") < 0.01);
    CU_ASSERT_EQUAL(json_object_get_int_member(netj, "concurrency_rows"), 8);
    CU_ASSERT_EQUAL(json_array_get_length(json_object_get_array_member(netj, "concurrency_groups")),
                    2);
    const char *fitted = json_object_get_string_member(netj, "spec");
    CU_ASSERT_PTR_NOT_NULL_FATAL(strstr(fitted, "message_exponent=0.3"));
    /* The fitted spec predicts the rows under the allreduce; NCCL's own exponent does not. */
    const char *good[] = {"validate",     "--measured", path,   "--topology",
                          "lina-testbed", "--net",      fitted, NULL};
    g_autofree char *gout = NULL, *gerr = NULL;
    CU_ASSERT_EQUAL(ms_test_run_moesim(good, &gout, &gerr), 0);
    const char *line = strstr(gout, "alltoall_under_allreduce 16x4");
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    double median = 0;
    CU_ASSERT_EQUAL(sscanf(line, "alltoall_under_allreduce 16x4 %*u %lf", &median), 1);
    CU_ASSERT(median < 3);
    const char *own[] = {"validate",     "--measured", path,   "--topology",
                         "lina-testbed", "--net",      "nccl", NULL};
    g_autofree char *oout = NULL, *oerr = NULL;
    CU_ASSERT_EQUAL(ms_test_run_moesim(own, &oout, &oerr), 0);
    line = strstr(oout, "alltoall_under_allreduce 16x4");
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    CU_ASSERT_EQUAL(sscanf(line, "alltoall_under_allreduce 16x4 %*u %lf", &median), 1);
    CU_ASSERT(median > 20);
}

/* What calibrate says when the rows cannot tell the exponent (one node: no NIC), and when every
 * row ran under forced NCCL settings (nothing for the flow model: no file to write). */
static void
test_command_notes(void)
{
    g_autofree char *node = ms_test_write_tmp(
        "node.csv", "# moesim-measurements 2\n"
                    "kind,bytes,ranks,ranks_per_node,time_us,background_bytes,channels\n"
                    "allreduce,26214400,4,4,300,,2\n"
                    "alltoall,1048576,4,4,20,,2\n"
                    "alltoall_under_allreduce,1048576,4,4,30,26214400,2\n"
                    "alltoall,4194304,4,4,60,,2\n"
                    "alltoall_under_allreduce,4194304,4,4,90,26214400,2\n");
    const char *args[] = {"calibrate", "--topology", "lina-testbed", node, "--net", "nccl", NULL};
    g_autofree char *out = NULL, *err = NULL;
    CU_ASSERT_EQUAL(ms_test_run_moesim(args, &out, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "no flow model figures: no point-to-point, collective or "
                                       "expert GEMM measurements to fit"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "message_exponent not fitted: the simulated slowdowns of "
                                       "the 2 alltoall_under_allreduce rows do not depend"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "  --net 'nccl:latency_scale="));
    CU_ASSERT_PTR_NULL(strstr(out, "message_exponent="));
    g_autofree char *cal = g_build_filename(ms_test_tmpdir(), "node.ini", NULL);
    const char *write[] = {
        "calibrate", "--topology", "lina-testbed", node, "--net", "nccl", "--out", cal, NULL};
    g_autofree char *wout = NULL, *werr = NULL;
    CU_ASSERT_EQUAL(ms_test_run_moesim(write, &wout, &werr), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(werr, "no point-to-point, collective or expert GEMM"));
    /* A row under an allreduce without its all-to-all alone: named, exit 2. */
    g_autofree char *orphan =
        ms_test_write_tmp("orphan.csv", "# moesim-measurements 2\n"
                                        "kind,bytes,ranks,ranks_per_node,time_us,background_bytes\n"
                                        "allreduce,26214400,16,4,4000,\n"
                                        "alltoall,1048576,16,4,300,\n"
                                        "alltoall,2097152,16,4,500,\n"
                                        "alltoall_under_allreduce,1048576,16,4,500,26214400\n"
                                        "alltoall_under_allreduce,4194304,16,4,900,26214400\n");
    const char *bad[] = {"calibrate", "--topology", "lina-testbed", orphan, "--net", "nccl", NULL};
    g_autofree char *bout = NULL, *berr = NULL;
    CU_ASSERT_EQUAL(ms_test_run_moesim(bad, &bout, &berr), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(berr, "orphan.csv:7: alltoall_under_allreduce of 4194304 B "
                                        "over 16x4 (channels 0, qps 0): no alltoall row"));
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"an exponent of 0.3 made by the model is found again", test_recovers_0_3},
        {"an exponent of 1 made by the model is found again", test_recovers_1},
        {"noise: within three standard errors", test_noise},
        {"predictions of a row", test_predict},
        {"calibrate --net nccl and validate --net", test_commands},
        {"calibrate's notes and refusals", test_command_notes},
        {"a flow spec, too few rows, a row alone, a topology without NICs", test_refusals},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"nic_fit", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
