/* Tests of scenario: the run-level figures summed over iterations, warm-up, the cancel flag and
 * the errors of a run (on shipped models with generated or written routing). */
#include <json-glib/json-glib.h>

#include "ms_test.h"
#include "sim/scenario.h"
#include "traces/trace.h"
#include "traces/trace_gen.h"
#include "traces/trace_writer.h"

/* lina-bert2gpt2-16e in inference on lina-testbed: 16 ranks, 6 MoE layers, 16 experts, top-1,
 * 512 tokens per rank. */
#define MODEL "lina-bert2gpt2-16e"

static double
stat_of(const MsResult *res, const char *key)
{
    g_autoptr(JsonNode) json = ms_result_to_json(res);
    JsonObject *stats = json_object_get_object_member(json_node_get_object(json), "stats");
    return json_object_has_member(stats, key) ? json_object_get_double_member(stats, key) : -1;
}

static MsResult *
run(const char *trace, guint iterations, guint warmup, const gint *cancel, GError **error)
{
    MsScenario sc = {.model = MODEL, .policy = "concurrent", .mode = MS_PLAN_INFER,
                     .trace = trace, .iterations = iterations, .warmup = warmup,
                     .cancel = cancel};
    return ms_scenario_run(&sc, error);
}

static void
test_stats_sum_iterations(void)
{
    GError *error = NULL;
    g_autoptr(MsResult) one = run(NULL, 1, 0, NULL, &error);
    g_autoptr(MsResult) three = run(NULL, 3, 0, NULL, &error);
    CU_ASSERT_PTR_NULL_FATAL(error);
    CU_ASSERT_EQUAL(ms_result_n_iterations(three), 3);
    /* Static placement, every source sends to every expert's GPU in each of the 6 layers'
     * dispatch and combine: 16 x 15 flows each, the same in every batch. */
    CU_ASSERT_EQUAL(stat_of(one, "flows"), 6 * 2 * 16 * 15);
    CU_ASSERT_EQUAL(stat_of(three, "flows"), 3 * stat_of(one, "flows"));
    CU_ASSERT_TRUE(stat_of(three, "events") > stat_of(three, "flows"));
    CU_ASSERT_TRUE(stat_of(three, "wall_s") >= 0);
    /* Warm-up batches are read, not run. */
    g_autoptr(MsResult) warm = run(NULL, 1, 2, NULL, &error);
    CU_ASSERT_PTR_NULL_FATAL(error);
    CU_ASSERT_EQUAL(ms_result_n_iterations(warm), 1);
    CU_ASSERT_EQUAL(stat_of(warm, "flows"), stat_of(one, "flows"));
}

static void
test_errors(void)
{
    GError *error = NULL;
    gint stop = 1;
    CU_ASSERT_PTR_NULL(run(NULL, 2, 0, &stop, &error));
    MS_ASSERT_ERROR(error, MS_SCENARIO_ERROR, MS_SCENARIO_ERROR_CANCELLED, "cancelled");

    /* A trace of one batch read entirely as warm-up. */
    MsTraceGenParams p;
    CU_ASSERT_TRUE_FATAL(ms_trace_gen_params_parse(
        "ranks=16,experts=16,layers=6,top_k=1,tokens=512,iterations=1", &p, &error));
    g_autoptr(MsTraceGen) gen = ms_trace_gen_new(&p, &error);
    g_autofree char *path = g_build_filename(ms_test_tmpdir(), "one.trace", NULL);
    g_autoptr(MsTraceWriter) w =
        ms_trace_writer_new(path, MS_TRACE_FORMAT_TEXT, ms_trace_gen_header(gen), &error);
    MsRouting *r = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_gen_next(gen, &r, &error));
    CU_ASSERT_TRUE(ms_trace_writer_write_routing(w, r, &error));
    ms_routing_free(r);
    CU_ASSERT_TRUE_FATAL(ms_trace_writer_close(w, &error));
    CU_ASSERT_PTR_NULL(run(path, 0, 1, NULL, &error));
    MS_ASSERT_ERROR(error, MS_SCENARIO_ERROR, MS_SCENARIO_ERROR_INVALID,
                    "the trace has no iteration after 1 warm-up iteration");
    /* The whole trace (no count), or more than it holds: what it holds. */
    g_autoptr(MsResult) all = run(path, 0, 0, NULL, &error);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(all);
    CU_ASSERT_EQUAL(ms_result_n_iterations(all), 1);
    g_autoptr(MsResult) more = run(path, 5, 0, NULL, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(more);
    CU_ASSERT_EQUAL(ms_result_n_iterations(more), 1);
    /* A read error is reported as it is. */
    g_autofree char *bad = ms_test_write_tmp("bad.trace", "moe-trace 1\nexperts 16\nlayers 6\n"
                                                          "ranks 16\ntop_k 1\nc 0 9 0 0 1\n");
    CU_ASSERT_PTR_NULL(run(bad, 0, 0, NULL, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE, "bad.trace:6");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"figures summed over iterations, warm-up read only", test_stats_sum_iterations},
        {"cancel flag and a trace used up by warm-up", test_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"scenario", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
