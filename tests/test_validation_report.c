/* Tests of validation_report: runs compared op by op (errors in closed form, step times, the
 * ranking of the pairs, ops below the bound left out), measurement tables grouped by kind and
 * configuration in the order they appear and predicted as ms_calibrate_predict does, the
 * overall statistics, the JSON, and the errors (nothing to compare among them). */
#include "ms_test.h"
#include "validate/calibrate.h"
#include "validate/measurement.h"
#include "validate/validation.h"
#include "validate/validation_report.h"

/* A result file with ops of the given durations (microseconds, back to back). */
static char *
result(const char *name, const char *policy, double step_us, const double *us, guint n)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s,
                           "{\"format\": \"moesim-result\", \"version\": 1, \"policy\": \"%s\",\n"
                           " \"summary\": {\"step_time_us\": %g}, \"ops\": [",
                           policy, step_us);
    double t = 0;
    for (guint i = 0; i < n; i++) {
        g_string_append_printf(s,
                               "%s{\"id\": %u, \"label\": \"op%u\", \"start_us\": %g, "
                               "\"end_us\": %g}",
                               i ? "," : "", i, i, t, t + us[i]);
        t += us[i];
    }
    g_string_append(s, "]}\n");
    char *path = ms_test_write_tmp(name, s->str);
    g_string_free(s, TRUE);
    return path;
}

static void
test_runs(void)
{
    /* Pair 1: errors 10%, 20%, 30% (and an op of 1 us left out); pair 2: 50%. */
    const double s1[] = {110, 240, 130, 5}, m1[] = {100, 200, 100, 1};
    const double s2[] = {150}, m2[] = {100};
    g_autofree char *a = result("a.json", "fifo", 1000, s1, 4);
    g_autofree char *b = result("b.json", "fifo", 800, m1, 4);
    g_autofree char *c = result("c.json", "lina", 500, s2, 1);
    g_autofree char *d = result("d.json", "lina", 600, m2, 1);
    const char *sims[] = {a, c, NULL}, *meas[] = {b, d, NULL};
    GError *error = NULL;
    g_autoptr(MsValidationReport) r = ms_validation_report_runs(sims, meas, 2.0, &error);
    g_assert_no_error(error);
    CU_ASSERT_TRUE(ms_validation_report_is_runs(r));
    CU_ASSERT_EQUAL_FATAL(ms_validation_report_n_rows(r), 2);
    const MsReportRow *r0 = ms_validation_report_row(r, 0), *r1 = ms_validation_report_row(r, 1);
    CU_ASSERT_STRING_EQUAL(r0->name, "fifo");
    CU_ASSERT_EQUAL(r0->stats.n, 3);
    MS_ASSERT_REL(r0->stats.median, 0.2, 1e-12);
    MS_ASSERT_REL(r0->stats.max, 0.3, 1e-12);
    CU_ASSERT_EQUAL(r0->step_simulated_us, 1000);
    CU_ASSERT_EQUAL(r0->step_measured_us, 800);
    MS_ASSERT_REL(r1->stats.max, 0.5, 1e-12);
    /* Simulated 1000 > 500 but measured 800 > 600: the same order. */
    CU_ASSERT_EQUAL(ms_validation_report_tau(r), 1.0);
    const MsErrorStats *all = ms_validation_report_all(r);
    CU_ASSERT_EQUAL(all->n, 4);
    MS_ASSERT_REL(all->max, 0.5, 1e-12);
    MS_ASSERT_REL(all->median, 0.25, 1e-12);
    double v = 0;
    CU_ASSERT_TRUE(ms_validation_report_stat(r, "max", &v));
    MS_ASSERT_REL(v, 0.5, 1e-12);
    CU_ASSERT_TRUE(ms_validation_report_stat(r, "p90", &v));
    CU_ASSERT_FALSE(ms_validation_report_stat(r, "mean", &v));
    guint n = 0;
    const double *p = ms_validation_report_predicted(r, &n);
    CU_ASSERT_EQUAL(n, 4);
    CU_ASSERT_EQUAL(p[3], 150);
    /* Ops have no size: no bus bandwidth. */
    CU_ASSERT_EQUAL(ms_validation_report_bus_factors(r, &n)[3], 0);
    CU_ASSERT_EQUAL(ms_validation_report_sizes(r, &n)[0], 0);
    CU_ASSERT_EQUAL(ms_validation_report_measured(r, &n)[1], 200);
    g_autoptr(JsonNode) json = ms_validation_report_to_json(r);
    JsonObject *o = json_node_get_object(json);
    JsonArray *runs = json_object_get_array_member(o, "runs");
    CU_ASSERT_EQUAL(json_array_get_length(runs), 2);
    JsonObject *first = json_array_get_object_element(runs, 0);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(first, "policy"), "fifo");
    CU_ASSERT_EQUAL(
        json_object_get_int_member(json_object_get_object_member(first, "ops"), "points"), 3);
    CU_ASSERT_EQUAL(json_object_get_double_member(o, "kendall_tau"), 1.0);
    CU_ASSERT_EQUAL(json_object_get_int_member(json_object_get_object_member(o, "all"), "points"),
                    4);
    /* One pair: no ranking. */
    const char *one_s[] = {a, NULL}, *one_m[] = {b, NULL};
    g_autoptr(MsValidationReport) single = ms_validation_report_runs(one_s, one_m, 2.0, &error);
    CU_ASSERT_TRUE(isnan(ms_validation_report_tau(single)));
    g_autoptr(JsonNode) sj = ms_validation_report_to_json(single);
    CU_ASSERT_FALSE(json_object_has_member(json_node_get_object(sj), "kendall_tau"));
}

static void
test_runs_errors(void)
{
    const double s1[] = {1, 1}, m1[] = {1, 1};
    g_autofree char *a = result("short-a.json", "fifo", 2, s1, 2);
    g_autofree char *b = result("short-b.json", "fifo", 2, m1, 2);
    g_autofree char *c = result("one.json", "fifo", 2, s1, 1);
    const char *sims[] = {a, NULL}, *meas[] = {b, NULL};
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_validation_report_runs(sims, meas, 2.0, &error));
    MS_ASSERT_ERROR(error, MS_VALIDATION_ERROR, MS_VALIDATION_ERROR_MISMATCH,
                    "no op measured longer than --min-op (2 us): nothing to compare");
    const char *other[] = {c, NULL};
    CU_ASSERT_PTR_NULL(ms_validation_report_runs(sims, other, 0.5, &error));
    MS_ASSERT_ERROR(error, MS_VALIDATION_ERROR, MS_VALIDATION_ERROR_MISMATCH, "against");
    const char *missing[] = {"no/such.json", NULL};
    CU_ASSERT_PTR_NULL(ms_validation_report_runs(missing, meas, 0.5, &error));
    CU_ASSERT_PTR_NOT_NULL(error);
    g_clear_error(&error);
}

#define MCSV "# moesim-measurements 1\nkind,bytes,ranks,ranks_per_node,time_us\n"

static void
test_tables(void)
{
    g_autofree char *t1 =
        ms_test_write_tmp("t1.csv", MCSV "allreduce,1048576,8,8,40\nallreduce,1048576,16,8,90\n"
                                         "allreduce,4194304,8,8,80\n");
    g_autofree char *t2 = ms_test_write_tmp("t2.csv", MCSV "allreduce,1048576,8,8,41\n");
    GError *error = NULL;
    g_autoptr(MsTopology) topo = ms_topology_load("dgx-a100-2node", &error);
    const char *files[] = {t1, t2, NULL};
    g_autoptr(MsValidationReport) r =
        ms_validation_report_tables(files, NULL, topo, NULL, NULL, &error);
    g_assert_no_error(error);
    CU_ASSERT_FALSE(ms_validation_report_is_runs(r));
    CU_ASSERT_TRUE(isnan(ms_validation_report_tau(r)));
    /* Groups of one file, in the order they appear; a second file makes groups of its own. */
    CU_ASSERT_EQUAL_FATAL(ms_validation_report_n_rows(r), 3);
    CU_ASSERT_STRING_EQUAL(ms_validation_report_row(r, 0)->name, "allreduce 8x8");
    CU_ASSERT_EQUAL(ms_validation_report_row(r, 0)->stats.n, 2);
    CU_ASSERT_STRING_EQUAL(ms_validation_report_row(r, 1)->name, "allreduce 16x8");
    CU_ASSERT_STRING_EQUAL(ms_validation_report_row(r, 2)->name, "allreduce 8x8");
    CU_ASSERT_TRUE(isnan(ms_validation_report_row(r, 0)->step_simulated_us));
    /* Predictions are the calibration module's, in microseconds, in group order. */
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_load(t1, &error);
    guint n = 0;
    const double *p = ms_validation_report_predicted(r, &n);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    const guint order[] = {0, 2, 1};
    for (guint i = 0; i < 3; i++) {
        double s = 0;
        g_assert(ms_calibrate_predict(topo, NULL, ms_measurement_set_get(set, order[i]), &s, NULL));
        MS_ASSERT_REL(p[i], s * 1e6, 1e-12);
    }
    CU_ASSERT_EQUAL(ms_validation_report_measured(r, &n)[1], 80);
    /* Sizes and nccl-tests' bus-bandwidth factors, item by item: 2(n-1)/n of an allreduce. */
    const double *size = ms_validation_report_sizes(r, &n);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    CU_ASSERT_EQUAL(size[0], 1048576);
    CU_ASSERT_EQUAL(size[1], 4194304);
    const double *factor = ms_validation_report_bus_factors(r, &n);
    MS_ASSERT_REL(factor[0], 1.75, 1e-15);
    MS_ASSERT_REL(factor[2], 30.0 / 16, 1e-15);
    g_autoptr(JsonNode) json = ms_validation_report_to_json(r);
    JsonObject *groups = json_object_get_object_member(json_node_get_object(json), "groups");
    CU_ASSERT_TRUE(json_object_has_member(groups, "allreduce 16x8"));
    /* Nothing to compare is an error: a bound must never pass on nothing. */
    g_autofree char *empty = ms_test_write_tmp("empty.csv", MCSV);
    const char *none[] = {empty, NULL};
    CU_ASSERT_PTR_NULL(ms_validation_report_tables(none, NULL, topo, NULL, NULL, &error));
    MS_ASSERT_ERROR(error, MS_VALIDATION_ERROR, MS_VALIDATION_ERROR_EMPTY,
                    "the measurements hold nothing to compare");
}

/* Regression: --max-error took a bare number as a fraction (0.1 = 10%) while check's users read
 * theirs as percent; both commands now take percentages only. */
static void
test_command_bound(void)
{
    const double s1[] = {110, 240}, m1[] = {100, 200};
    g_autofree char *a = result("cli-a.json", "fifo", 1000, s1, 2);
    g_autofree char *b = result("cli-b.json", "fifo", 800, m1, 2);
    g_autofree char *out = NULL, *err = NULL;
    const char *bare[] = {"validate", "-s", a, "-M", b, "--max-error", "0.5", NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(bare, &out, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "moesim: validate: --max-error '0.5': no '%'"));
    /* Errors 10% and 20%: the median, 15%, is past 12% and within 16%. */
    const char *past[] = {"validate", "-s", a, "-M", b, "--max-error", "12%", NULL};
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(ms_test_run_moesim(past, &out, &err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "median error 15.00% exceeds --max-error 12.00%"));
    const char *within[] = {"validate", "-s", a, "-M", b, "--max-error", "16%", NULL};
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(ms_test_run_moesim(within, &out, &err), 0);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"runs compared op by op", test_runs},
        {"runs that cannot be compared", test_runs_errors},
        {"measurement tables predicted", test_tables},
        {"moesim validate --max-error", test_command_bound},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"validation_report", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
