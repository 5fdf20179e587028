/* Tests of pace_fit: per-GPU compute pace of a measured run against its simulation, in closed
 * form (the median GPU as the reference, comm ops and short or unranked ops left out, too few
 * ops or GPUs), and end to end: `moesim validate` on a run with --straggler against the same
 * run without finds the straggler and proposes its factor. */
#include "ms_test.h"

#include <json-glib/json-glib.h>

#include "validate/pace_fit.h"

/* A result of 4 GPUs with `ops` compute ops of 100 us each (GPU g's taking scale[g] times that)
 * and one all-to-all per GPU of 50 us x comm_scale; comm_wait_us as given. */
static char *
result(const char *name, const double *scale, guint ops, double comm_scale, double wait_us)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s,
                           "{\"format\": \"moesim-result\", \"policy\": \"fifo\", \"summary\": "
                           "{\"step_time_us\": 1000, \"comm_wait_us\": %g}, \"ops\": [",
                           wait_us);
    guint id = 0;
    for (guint g = 0; g < 4; g++) {
        for (guint k = 0; k < ops; k++) {
            g_string_append_printf(s,
                                   "%s{\"id\": %u, \"label\": \"e%u\", \"rank\": %u, \"kind\": "
                                   "\"compute\", \"start_us\": 0, \"end_us\": %g}",
                                   id ? "," : "", id, k, g, 100 * scale[g] * (1 + 0.01 * k));
            id++;
        }
        g_string_append_printf(s,
                               ",{\"id\": %u, \"label\": \"a2a\", \"rank\": %u, \"kind\": "
                               "\"comm\", \"start_us\": 0, \"end_us\": %g}",
                               id, g, 50 * comm_scale);
        id++;
    }
    g_string_append(s, "]}");
    char *path = ms_test_write_tmp(name, s->str);
    g_string_free(s, TRUE);
    return path;
}

static GArray *
fit(const char *sim, const char *meas, MsRunComparison *cmp)
{
    GError *error = NULL;
    g_autoptr(JsonNode) a = ms_result_file_load(sim, &error);
    g_autoptr(JsonNode) b = ms_result_file_load(meas, &error);
    g_assert_no_error(error);
    CU_ASSERT_TRUE_FATAL(ms_compare_runs(a, b, 2, cmp, &error));
    return ms_pace_fit(cmp);
}

static void
test_closed_form(void)
{
    const double ones[4] = {1, 1, 1, 1}, slow[4] = {1.2, 1.2, 1.5, 1.2};
    g_autofree char *sim = result("sim.json", ones, 6, 1, 100);
    /* Every GPU 1.2x (the model's own error) and GPU 2 1.5x; the comm ops 3x: not compute. */
    g_autofree char *meas = result("meas.json", slow, 6, 3, 250);
    MsRunComparison cmp;
    g_autoptr(GArray) p = fit(sim, meas, &cmp);
    CU_ASSERT_EQUAL_FATAL(p->len, 4);
    for (guint g = 0; g < 4; g++) {
        const MsGpuPace *x = &g_array_index(p, MsGpuPace, g);
        CU_ASSERT_EQUAL(x->gpu, g);
        CU_ASSERT_EQUAL(x->ops, 6);
        MS_ASSERT_REL(x->pace, g == 2 ? 1.25 : 1.0, 1e-12);
    }
    MS_ASSERT_REL(cmp.wait_predicted_us, 100, 1e-12);
    MS_ASSERT_REL(cmp.wait_measured_us, 250, 1e-12);
    ms_run_comparison_clear(&cmp);
    /* Fewer than MS_PACE_MIN_OPS ops a GPU: no pace. */
    g_autofree char *sim4 = result("sim4.json", ones, MS_PACE_MIN_OPS - 1, 1, 0);
    g_autofree char *meas4 = result("meas4.json", slow, MS_PACE_MIN_OPS - 1, 1, 0);
    g_autoptr(GArray) none = fit(sim4, meas4, &cmp);
    CU_ASSERT_EQUAL(none->len, 0);
    ms_run_comparison_clear(&cmp);
}

/* Ops without a kind or a rank (results written before they were recorded) give no pace, and
 * one GPU has no peer. */
static void
test_unknown_ops(void)
{
    GString *s = g_string_new("{\"format\": \"moesim-result\", \"ops\": [");
    for (guint k = 0; k < 8; k++) {
        g_string_append_printf(s,
                               "%s{\"id\": %u, \"label\": \"e\", \"role\": \"expert\", "
                               "\"start_us\": 0, \"end_us\": 100}",
                               k ? "," : "", k);
    }
    g_string_append(s, "]}");
    g_autofree char *old = ms_test_write_tmp("old.json", s->str);
    g_string_free(s, TRUE);
    MsRunComparison cmp;
    g_autoptr(GArray) p = fit(old, old, &cmp);
    CU_ASSERT_EQUAL(p->len, 0);
    CU_ASSERT_TRUE(isnan(cmp.wait_predicted_us));
    ms_run_comparison_clear(&cmp);
}

static void
test_cli_finds_the_straggler(void)
{
    g_autofree char *sim = g_build_filename(ms_test_tmpdir(), "run-sim.json", NULL);
    g_autofree char *meas = g_build_filename(ms_test_tmpdir(), "run-meas.json", NULL);
    g_auto(MsTestRun) a = ms_test_moesim_run("run", "--json", sim, NULL);
    g_auto(MsTestRun) b = ms_test_moesim_run("run", "--straggler", "4=1.3", "--json", meas, NULL);
    CU_ASSERT_EQUAL_FATAL(a.rc + b.rc, 0);
    g_auto(MsTestRun) v =
        ms_test_moesim_run("validate", "--simulated", sim, "--measured", meas, NULL);
    CU_ASSERT_EQUAL(v.rc, 0);
    /* GPU 4's ops take 1.3x their bodies and the same 4 us launches: just under 1.3. */
    CU_ASSERT_PTR_NOT_NULL(strstr(v.out, "slowest GPU 4 1.29"));
    CU_ASSERT_PTR_NOT_NULL(strstr(v.out, "fastest GPU 0 1.000"));
    CU_ASSERT_PTR_NOT_NULL(strstr(v.out, "2% or more slower than the median: --straggler 4=1.29"));
    CU_ASSERT_PTR_NOT_NULL(strstr(v.out, "fifo: waiting for peers 9.485 ms per GPU simulated"));
    g_auto(MsTestRun) j =
        ms_test_moesim_run("validate", "--simulated", sim, "--measured", meas, "--json", "-", NULL);
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_data(p, j.out, -1, NULL));
    JsonObject *run = json_array_get_object_element(
        json_object_get_array_member(json_node_get_object(json_parser_get_root(p)), "runs"), 0);
    JsonArray *paces = json_object_get_array_member(run, "gpu_pace");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(paces), 16);
    JsonObject *g4 = json_array_get_object_element(paces, 4);
    CU_ASSERT_EQUAL(json_object_get_int_member(g4, "gpu"), 4);
    CU_ASSERT_TRUE(json_object_get_double_member(g4, "pace") > 1.28);
    CU_ASSERT_TRUE(json_object_get_double_member(g4, "pace") < 1.3);
    CU_ASSERT_TRUE(json_object_get_double_member(run, "wait_measured_us") >
                   json_object_get_double_member(run, "wait_simulated_us"));
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"paces against the median GPU, in closed form", test_closed_form},
        {"no pace without kinds and ranks", test_unknown_ops},
        {"validate finds a straggler and proposes its factor", test_cli_finds_the_straggler},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"pace_fit", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
