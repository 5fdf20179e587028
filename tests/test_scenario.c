/* Tests of the scenario driver on trace files: how many iterations a run takes from a trace of a
 * given length with and without warm-up, and the errors when the trace runs out. */
#include "ms_test.h"
#include "sim/scenario.h"
#include "traces/trace_gen.h"
#include "traces/trace_writer.h"

/* A trace of n iterations shaped for the scenario's model and topology (the generator's spec for
 * them, written to a file); returns its path. */
static char *
trace_file(const MsScenario *sc, guint n)
{
    GError *error = NULL;
    g_autofree char *spec = ms_scenario_gen_spec(sc, &error);
    g_assert(spec != NULL);
    MsTraceGenParams p;
    g_assert(ms_trace_gen_params_parse(spec + 4, &p, &error));
    p.iterations = n;
    p.tokens = 64;
    g_autoptr(MsTraceGen) gen = ms_trace_gen_new(&p, &error);
    g_assert(gen != NULL);
    g_autofree char *name = g_strdup_printf("s%u.trace", n);
    char *path = g_build_filename(ms_test_tmpdir(), name, NULL);
    g_autoptr(MsTraceWriter) w =
        ms_trace_writer_new(path, MS_TRACE_FORMAT_BINARY, ms_trace_gen_header(gen), &error);
    g_assert(w != NULL);
    MsRouting *it = NULL;
    while (ms_trace_gen_next(gen, &it, &error)) {
        g_assert(ms_trace_writer_write_routing(w, it, &error));
        ms_routing_free(it);
    }
    g_assert(error == NULL && ms_trace_writer_close(w, &error));
    return path;
}

/* Iterations measured by a run of sc, or -1 with *error set. */
static gint
measured(MsScenario sc, guint warmup, guint iterations, GError **error)
{
    sc.warmup = warmup;
    sc.iterations = iterations;
    g_autoptr(MsResult) res = ms_scenario_run(&sc, error);
    return res ? (gint)ms_result_n_iterations(res) : -1;
}

/* Regression: reaching the end of a trace file was taken for a failure without an error (the
 * command then crashed reporting it), and "the whole trace" after warm-up iterations wrapped
 * around to a handful of iterations. */
static void
test_whole_trace(void)
{
    MsScenario sc = {.topology = "dgx-a100", .model = "switch-base-8", .check_invariants = TRUE};
    g_autofree char *path = trace_file(&sc, 3);
    sc.trace = path;
    GError *error = NULL;
    CU_ASSERT_EQUAL(measured(sc, 0, 0, &error), 3);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_EQUAL(measured(sc, 1, 0, &error), 2);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_EQUAL(measured(sc, 0, 2, &error), 2);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_EQUAL(measured(sc, 1, 5, &error), 2);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_EQUAL(measured(sc, 3, 0, &error), -1);
    MS_ASSERT_ERROR(error, MS_SCENARIO_ERROR, MS_SCENARIO_ERROR_INVALID,
                    "the trace has no iteration after 3 warm-up iterations");
}

static void
test_command(void)
{
    MsScenario sc = {.topology = "dgx-a100", .model = "switch-base-8"};
    g_autofree char *path = trace_file(&sc, 2);
    g_autofree char *out = NULL, *err = NULL;
    int rc = ms_test_run_moesim((const char *[]){"run", "--topology", "dgx-a100", "--model",
                                                 "switch-base-8", "-T", path, NULL},
                                &out, &err);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "policy fifo, 2 iterations"));
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"a run takes the whole trace, after its warm-up", test_whole_trace},
        {"moesim run on a trace file", test_command},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"scenario", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
