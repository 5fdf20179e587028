/* Tests of scenario: the run-level figures summed over iterations, warm-up, the cancel flag, how
 * many iterations a run takes from a trace file of a given length, that every iteration goes
 * through the scenario's runner (details asked for the first only), that iterations repeating
 * the work of the one before take its records, that worker threads change nothing in the
 * result, and the errors of a run (on shipped models with
 * generated or written routing). */
#include <json-glib/json-glib.h>

#include "ms_test.h"
#include "sim/engine.h"
#include "sim/inputs.h"
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

/* Runs the scenario of the named inputs on runner (NULL: the engine with invariant checks). */
static MsResult *
run_names(const MsInputNames *names, MsScenario sc, const MsRunner *runner, GError **error)
{
    g_autoptr(MsInputs) in = ms_inputs_load(names, error);
    g_autoptr(MsRunner) engine = ms_engine_runner_new(&(MsEngineOptions){.check_invariants = TRUE});
    if (in == NULL) {
        return NULL;
    }
    ms_inputs_fill(in, &sc);
    sc.runner = runner ? runner : engine;
    return ms_scenario_run(&sc, error);
}

static MsResult *
run(const char *trace, guint iterations, guint warmup, const gint *cancel, GError **error)
{
    MsInputNames names = {.model = MODEL, .policy = "concurrent", .trace = trace};
    MsScenario sc = {
        .mode = MS_PLAN_INFER, .iterations = iterations, .warmup = warmup, .cancel = cancel};
    return run_names(&names, sc, NULL, error);
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
    /* Per kind of collective, summed alike: the 12 all-to-alls of a batch are the only kind,
     * and their flows are all of the run's. */
    CU_ASSERT_EQUAL(stat_of(three, "calls.alltoall.16.direct"), 3 * 6 * 2);
    CU_ASSERT_EQUAL(stat_of(three, "flows.alltoall.16.direct"), stat_of(three, "flows"));
    CU_ASSERT_EQUAL(stat_of(three, "bytes.alltoall.16.direct"), -1);
    CU_ASSERT_TRUE(stat_of(three, "bandwidth_solves") >= 3 * 6 * 2);
    /* Regression: the summary held the run's wall time, so identical inputs gave different
     * files; wall-clock figures go to standard error. */
    CU_ASSERT_EQUAL(stat_of(three, "wall_s"), -1);
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

    /* A read error is reported as it is. */
    g_autofree char *bad = ms_test_write_tmp("bad.trace", "moe-trace 1\nexperts 16\nlayers 6\n"
                                                          "ranks 16\ntop_k 1\nc 0 9 0 0 1\n");
    CU_ASSERT_PTR_NULL(run(bad, 0, 0, NULL, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE, "bad.trace:6");
}

/* A trace of n iterations shaped for the inputs' model and topology (the generator's parameters
 * for them, written to a file); returns its path. */
static char *
trace_file(const MsInputNames *names, guint n)
{
    GError *error = NULL;
    g_autoptr(MsInputs) in = ms_inputs_load(names, &error);
    g_assert(in != NULL);
    MsRoutingShape shape = {ms_inputs_model(in), ms_inputs_topology(in), MS_PLAN_TRAIN, 1, 1};
    MsTraceGenParams p;
    g_assert(ms_routing_source_gen_params(ms_inputs_routing(in), &shape, &p, &error));
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

/* Iterations measured by a run of the named inputs, or -1 with *error set. */
static gint
measured(const MsInputNames *names, guint warmup, guint iterations, GError **error)
{
    MsScenario sc = {.warmup = warmup, .iterations = iterations};
    g_autoptr(MsResult) res = run_names(names, sc, NULL, error);
    return res ? (gint)ms_result_n_iterations(res) : -1;
}

/* Regression: reaching the end of a trace file was taken for a failure without an error (the
 * command then crashed reporting it), and "the whole trace" after warm-up iterations wrapped
 * around to a handful of iterations. A count asked for is a count run, or an error. */
static void
test_whole_trace(void)
{
    MsInputNames names = {.topology = "dgx-a100", .model = "switch-base-8"};
    g_autofree char *path = trace_file(&names, 3);
    names.trace = path;
    GError *error = NULL;
    CU_ASSERT_EQUAL(measured(&names, 0, 0, &error), 3);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_EQUAL(measured(&names, 1, 0, &error), 2);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_EQUAL(measured(&names, 0, 2, &error), 2);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_EQUAL(measured(&names, 3, 0, &error), -1);
    MS_ASSERT_ERROR(error, MS_SCENARIO_ERROR, MS_SCENARIO_ERROR_INVALID,
                    "the trace has no iteration after 3 warm-up iterations");
    /* Regression: asking for more iterations than the trace has ran what there was, exit 0. */
    CU_ASSERT_EQUAL(measured(&names, 1, 5, &error), -1);
    MS_ASSERT_ERROR(error, MS_SCENARIO_ERROR, MS_SCENARIO_ERROR_INVALID,
                    "the trace has 2 iterations after 1 warm-up iteration, fewer than the 5 asked "
                    "for");
    CU_ASSERT_EQUAL(measured(&names, 0, 4, &error), -1);
    MS_ASSERT_ERROR(error, MS_SCENARIO_ERROR, MS_SCENARIO_ERROR_INVALID,
                    "the trace has 3 iterations after 0 warm-up iterations, fewer than the 4");
}

/* A runner that counts its executions and the detailed ones, and runs the engine; one that
 * fails. */
typedef struct {
    MsRunner *engine;
    gint calls, detailed;
    gint paced; /* executions asked to run at a pace */
} Counting;

static MsRecords *
counting_execute(gpointer data, const MsSchedule *s, const MsTopology *topo, gboolean detail,
                 const MsRunWhatIf *what_if, GError **error)
{
    Counting *c = data;
    g_atomic_int_inc(&c->calls);
    if (detail) {
        g_atomic_int_inc(&c->detailed);
    }
    if (what_if && what_if->pace) {
        g_atomic_int_inc(&c->paced);
    }
    return ms_runner_execute(c->engine, s, topo, detail, what_if, error);
}

static MsRecords *
failing_execute(gpointer data, const MsSchedule *s, const MsTopology *topo, gboolean detail,
                const MsRunWhatIf *what_if, GError **error)
{
    g_set_error(error, MS_SCENARIO_ERROR, MS_SCENARIO_ERROR_INVALID, "no machine today");
    return NULL;
}

static void
test_runner(void)
{
    GError *error = NULL;
    Counting c = {ms_engine_runner_new(NULL), 0, 0, 0};
    g_autoptr(MsRunner) counting = ms_runner_new("counted", counting_execute, &c, NULL);
    MsInputNames names = {.model = MODEL};
    MsScenario sc = {.mode = MS_PLAN_INFER, .iterations = 3, .warmup = 2};
    g_autoptr(MsResult) res = run_names(&names, sc, counting, &error);
    g_assert_no_error(error);
    /* Warm-up batches are read, never executed; only the first measured one asks for details. */
    CU_ASSERT_EQUAL(c.calls, 3);
    CU_ASSERT_EQUAL(c.detailed, 1);
    CU_ASSERT_EQUAL(c.paced, 0);
    g_autoptr(JsonNode) json = ms_result_to_json(res);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(json_node_get_object(json), "backend"),
                           "counted");
    /* A scenario's pace (a sweep point's straggler) goes to every execution, and the engine runs
     * it as a runner made with that pace would. */
    static const double pace[] = {1, 2.5};
    MsScenario paced = sc;
    paced.pace = pace;
    paced.n_pace = G_N_ELEMENTS(pace);
    g_autoptr(MsResult) slow = run_names(&names, paced, counting, &error);
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(c.paced, 3);
    MsEngineOptions opts = {.pace = pace, .n_pace = G_N_ELEMENTS(pace)};
    g_autoptr(MsRunner) own = ms_engine_runner_new(&opts);
    g_autoptr(MsResult) same = run_names(&names, sc, own, &error);
    g_assert_no_error(error);
    CU_ASSERT_TRUE(ms_result_iteration(slow, 0)->step_us > ms_result_iteration(res, 0)->step_us);
    CU_ASSERT_EQUAL(ms_result_iteration(slow, 0)->step_us, ms_result_iteration(same, 0)->step_us);
    ms_runner_free(c.engine);
    g_autoptr(MsRunner) failing = ms_runner_new("broken", failing_execute, NULL, NULL);
    CU_ASSERT_PTR_NULL(run_names(&names, sc, failing, &error));
    MS_ASSERT_ERROR(error, MS_SCENARIO_ERROR, MS_SCENARIO_ERROR_INVALID, "no machine today");
}

static gboolean
every_iteration(gpointer data, guint iteration)
{
    return TRUE;
}

static gboolean
count_each(gpointer data, guint iteration, const MsSchedule *s, const MsRecords *r, GError **error)
{
    (*(guint *)data)++;
    return TRUE;
}

/* switch-base-8 pads its all-to-alls to capacity: every batch does the same work whatever its
 * routing. Through a pure runner, the first batch runs with details, the second without, and
 * the other three repeat the second's work and take its records (counted as reused, not in the
 * engine's counters); every batch's figures are those of a runner that runs them all, each its
 * own dropped tokens. A runner not marked pure (a real GPU) runs every batch; so does one whose
 * batches a sink takes, and dropless batches differ in their work. */
static void
test_repeated_work(void)
{
    GError *error = NULL;
    Counting pure = {ms_engine_runner_new(NULL), 0, 0, 0};
    Counting impure = {ms_engine_runner_new(NULL), 0, 0, 0};
    g_autoptr(MsRunner) pure_runner = ms_runner_new("sim", counting_execute, &pure, NULL);
    g_autoptr(MsRunner) impure_runner = ms_runner_new("sim", counting_execute, &impure, NULL);
    ms_runner_set_pure(pure_runner, TRUE);
    CU_ASSERT_FALSE(ms_runner_pure(impure_runner));
    MsInputNames names = {.model = "switch-base-8", .policy = "concurrent"};
    MsScenario sc = {.mode = MS_PLAN_INFER, .iterations = 5};
    g_autoptr(MsResult) once = run_names(&names, sc, pure_runner, &error);
    g_assert_no_error(error);
    g_autoptr(MsResult) all = run_names(&names, sc, impure_runner, &error);
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(pure.calls, 2);
    CU_ASSERT_EQUAL(impure.calls, 5);
    CU_ASSERT_EQUAL(stat_of(once, "reused_iterations"), 3);
    CU_ASSERT_EQUAL(stat_of(all, "reused_iterations"), -1);
    CU_ASSERT_EQUAL(stat_of(once, "flows") * 5, stat_of(all, "flows") * 2);
    gboolean drops_differ = FALSE;
    for (guint i = 0; i < 5; i++) {
        const MsMetrics *a = ms_result_iteration(once, i), *b = ms_result_iteration(all, i);
        CU_ASSERT_EQUAL(a->step_us, b->step_us);
        CU_ASSERT_EQUAL(a->a2a_us, b->a2a_us);
        CU_ASSERT_EQUAL(a->dropped_tokens, b->dropped_tokens);
        drops_differ |= a->dropped_tokens != ms_result_iteration(once, 0)->dropped_tokens;
    }
    CU_ASSERT_TRUE(drops_differ);
    guint taken = 0;
    MsIterationSink sink = {every_iteration, count_each, &taken};
    MsScenario sunk = sc;
    sunk.sink = &sink;
    g_autoptr(MsResult) each = run_names(&names, sunk, pure_runner, &error);
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(pure.calls, 2 + 5);
    CU_ASSERT_EQUAL(taken, 5);
    MsInputNames dropless = {.model = MODEL, .policy = "concurrent"};
    g_autoptr(MsResult) varied = run_names(&dropless, sc, pure_runner, &error);
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(pure.calls, 2 + 5 + 5);
    CU_ASSERT_EQUAL(stat_of(varied, "reused_iterations"), -1);
    ms_runner_free(pure.engine);
    ms_runner_free(impure.engine);
}

static gboolean
record_order(gpointer data, guint iteration, const MsSchedule *s, const MsRecords *r,
             GError **error)
{
    g_array_append_val((GArray *)data, iteration);
    return TRUE;
}

static gboolean
odd_iterations(gpointer data, guint iteration)
{
    return iteration % 2 == 1;
}

static char *
result_text(const MsResult *res)
{
    g_autoptr(JsonNode) json = ms_result_to_json(res);
    return json_to_string(json, FALSE);
}

/* Worker threads execute iterations at once, planned and added in order: the same result, byte
 * for byte, as one at a time, under Lina (which learns every batch before the next is planned),
 * with repeated work and with a sink taking every other batch (in order). A failing runner's
 * first error in iteration order comes back. A runner not marked pure gets no workers. */
static void
test_workers(void)
{
    GError *error = NULL;
    MsInputNames lina = {.model = MODEL, .policy = "lina"};
    MsInputNames padded = {.model = "switch-base-8", .policy = "concurrent"};
    const MsInputNames *inputs[] = {&lina, &padded};
    g_autoptr(MsRunner) engine = ms_engine_runner_new(NULL);
    for (guint k = 0; k < G_N_ELEMENTS(inputs); k++) {
        char *texts[2] = {NULL, NULL};
        GArray *orders[2] = {g_array_new(FALSE, FALSE, sizeof(guint)),
                             g_array_new(FALSE, FALSE, sizeof(guint))};
        for (guint w = 0; w < 2; w++) {
            MsIterationSink sink = {odd_iterations, record_order, orders[w]};
            MsScenario sc = {
                .mode = MS_PLAN_INFER, .iterations = 9, .warmup = 1, .workers = w ? 3 : 0};
            sc.sink = &sink;
            g_autoptr(MsResult) res = run_names(inputs[k], sc, engine, &error);
            g_assert_no_error(error);
            texts[w] = result_text(res);
        }
        CU_ASSERT_STRING_EQUAL(texts[0], texts[1]);
        g_free(texts[0]);
        g_free(texts[1]);
        CU_ASSERT_EQUAL(orders[1]->len, 4);
        for (guint i = 0; i < orders[1]->len; i++) {
            CU_ASSERT_EQUAL(g_array_index(orders[1], guint, i), 2 * i + 1);
        }
        g_array_unref(orders[0]);
        g_array_unref(orders[1]);
    }
    g_autoptr(MsRunner) failing = ms_runner_new("broken", failing_execute, NULL, NULL);
    ms_runner_set_pure(failing, TRUE);
    MsScenario sc = {.mode = MS_PLAN_INFER, .iterations = 6, .workers = 2};
    CU_ASSERT_PTR_NULL(run_names(&lina, sc, failing, &error));
    MS_ASSERT_ERROR(error, MS_SCENARIO_ERROR, MS_SCENARIO_ERROR_INVALID, "no machine today");
    Counting c = {ms_engine_runner_new(NULL), 0, 0, 0};
    g_autoptr(MsRunner) counting = ms_runner_new("counted", counting_execute, &c, NULL);
    g_autoptr(MsResult) res = run_names(&lina, sc, counting, &error);
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(c.calls, 6);
    ms_runner_free(c.engine);
}

static void
test_command(void)
{
    MsInputNames names = {.topology = "dgx-a100", .model = "switch-base-8"};
    g_autofree char *path = trace_file(&names, 2);
    g_autofree char *out = NULL, *err = NULL;
    g_autofree char *json = g_build_filename(ms_test_tmpdir(), "run.json", NULL);
    int rc = ms_test_run_moesim((const char *[]){"run", "--topology", "dgx-a100", "--model",
                                                 "switch-base-8", "-T", path, "--json", json, NULL},
                                &out, &err);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "policy fifo, 2 iterations"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "s of wall time"));
    g_autofree char *text = NULL;
    g_assert(g_file_get_contents(json, &text, NULL, NULL));
    CU_ASSERT_PTR_NULL(strstr(text, "wall"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"events\""));
}

/* --json - puts the JSON alone on standard output (the text report goes to standard error), for
 * run and for compare. */
static void
test_json_stdout(void)
{
    g_autofree char *out = NULL, *err = NULL;
    int rc = ms_test_run_moesim(
        (const char *[]){"run", "-t", "dgx-a100", "-m", "switch-base-8", "--json", "-", NULL}, &out,
        &err);
    CU_ASSERT_EQUAL(rc, 0);
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_TRUE(json_parser_load_from_data(p, out, -1, NULL));
    CU_ASSERT_PTR_NOT_NULL(json_parser_get_root(p));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "moesim run: switch-base-8 on dgx-a100"));
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "cmp", NULL);
    g_free(out);
    g_free(err);
    rc = ms_test_run_moesim((const char *[]){"compare", "-t", "dgx-a100", "-m", "switch-base-8",
                                             "--policies", "fifo,lina", "--out", dir, "--json", "-",
                                             NULL},
                            &out, &err);
    CU_ASSERT_EQUAL(rc, 0);
    g_autoptr(JsonParser) q = json_parser_new();
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_data(q, out, -1, NULL));
    CU_ASSERT_PTR_NOT_NULL_FATAL(json_parser_get_root(q));
    JsonObject *o = json_node_get_object(json_parser_get_root(q));
    CU_ASSERT_EQUAL(json_array_get_length(json_object_get_array_member(o, "policies")), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "speedup"));
    /* The same JSON as the compare.json it writes. */
    g_autofree char *file = g_build_filename(dir, "compare.json", NULL);
    g_autofree char *text = NULL;
    g_assert(g_file_get_contents(file, &text, NULL, NULL));
    CU_ASSERT_STRING_EQUAL(out, text);
}

/* run and compare --jobs: the same JSON for 1 and 3 workers (0 asks for one per processor); a
 * count out of range is refused. */
static void
test_jobs_option(void)
{
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "jobs", NULL);
    const char *cmds[] = {"run", "compare"};
    for (guint k = 0; k < G_N_ELEMENTS(cmds); k++) {
        char *outs[3] = {NULL, NULL, NULL};
        const char *jobs[] = {"1", "3", "0"};
        for (guint j = 0; j < 3; j++) {
            g_autofree char *err = NULL;
            const char *args[] = {cmds[k], "--mode", "infer",  "-n", "7",     "-w", "2",
                                  "-j",    jobs[j],  "--json", "-",  "--out", dir,  NULL};
            if (k == 0) {
                args[11] = NULL; /* run has no --out */
            }
            CU_ASSERT_EQUAL(ms_test_run_moesim(args, &outs[j], &err), 0);
        }
        CU_ASSERT_STRING_EQUAL(outs[0], outs[1]);
        CU_ASSERT_STRING_EQUAL(outs[0], outs[2]);
        for (guint j = 0; j < 3; j++) {
            g_free(outs[j]);
        }
        g_autofree char *out = NULL, *err = NULL;
        const char *bad[] = {cmds[k], "-j", "1025", NULL};
        CU_ASSERT_EQUAL(ms_test_run_moesim(bad, &out, &err), 2);
        g_autofree char *want = g_strdup_printf("%s: --jobs: 1025 is not 0 to 1024", cmds[k]);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
    }
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"figures summed over iterations, warm-up read only", test_stats_sum_iterations},
        {"cancel flag and a trace that fails to read", test_errors},
        {"a run takes the whole trace, after its warm-up", test_whole_trace},
        {"every iteration through the runner", test_runner},
        {"an iteration repeating the last one's work is not run again", test_repeated_work},
        {"iterations on worker threads, the same result", test_workers},
        {"moesim run on a trace file", test_command},
        {"JSON alone on standard output", test_json_stdout},
        {"run and compare --jobs", test_jobs_option},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"scenario", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
