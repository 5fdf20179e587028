/* Tests of planner and `moesim plan`: the generated trace's spec, iterating and seeking, Lina's
 * statistics learned from earlier batches, the schedule file, and every error with exit 2. */
#include "plan_fixture.h"
#include "sim/policy/planner.h"
#include "sim/scenario.h"
#include "traces/trace_gen.h"

static MsPlanner *
planner(const char *trace, const char *policy, MsPlanMode mode, guint iterations, GError **error)
{
    MsPlannerOptions o = {"lina-testbed", "lina-gpt2-4e", trace, policy, mode, iterations, 1};
    return ms_planner_new(&o, error);
}

static void
test_generated_spec(void)
{
    GError *error = NULL;
    g_autoptr(MsPlanner) p = planner(NULL, "fifo", MS_PLAN_TRAIN, 2, &error);
    g_assert_no_error(error);
    /* The trace `moesim run` generates for the same inputs. */
    MsScenario sc = {.topology = "lina-testbed",
                     .model = "lina-gpt2-4e",
                     .mode = MS_PLAN_TRAIN,
                     .iterations = 2,
                     .seed = 1};
    g_autofree char *want = ms_scenario_gen_spec(&sc, &error);
    CU_ASSERT_STRING_EQUAL(ms_planner_trace(p), want);
    CU_ASSERT_TRUE(g_str_has_prefix(ms_planner_trace(p),
                                    "gen:ranks=16,experts=4,layers=6,top_k=2,tokens=8192,"
                                    "iterations=2,hot="));
    CU_ASSERT_STRING_EQUAL(ms_model_spec(ms_planner_model(p))->name, "lina-gpt2-4e");
    CU_ASSERT_STRING_EQUAL(ms_topology_name(ms_planner_topology(p)), "lina-testbed");
    CU_ASSERT_STRING_EQUAL(ms_policy_name(ms_planner_policy(p)), "fifo");
    g_autoptr(MsPlanner) q = planner("gen:zipf=2,seed=5", "fifo", MS_PLAN_INFER, 1, &error);
    g_assert_no_error(error);
    CU_ASSERT_STRING_EQUAL(ms_planner_trace(q),
                           "gen:ranks=16,experts=4,layers=6,top_k=1,tokens=1024,iterations=1,"
                           "zipf=2,corr=0.5,drift=0.02,seed=5,records=tokens");
}

static void
test_iterate(void)
{
    GError *error = NULL;
    g_autoptr(MsPlanner) p = planner("gen:tokens=64", "priority", MS_PLAN_TRAIN, 3, &error);
    g_assert_no_error(error);
    for (guint i = 0; i < 3; i++) {
        MsSchedule *s = NULL;
        CU_ASSERT_TRUE(ms_planner_next(p, &s, &error));
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        g_autofree char *it = g_strdup_printf("%u", i);
        CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "iteration"), it);
        ms_schedule_free(s);
    }
    MsSchedule *end = NULL;
    CU_ASSERT_FALSE(ms_planner_next(p, &end, &error));
    CU_ASSERT_PTR_NULL(end);
    CU_ASSERT_PTR_NULL(error);
    g_autoptr(MsPlanner) q = planner("gen:tokens=64", "fifo", MS_PLAN_TRAIN, 3, &error);
    g_autoptr(MsSchedule) two = ms_planner_plan_iteration(q, 2, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(two);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(two, "iteration"), "2");
    CU_ASSERT_PTR_NULL(ms_planner_plan_iteration(q, 7, &error));
    MS_ASSERT_ERROR(error, MS_PLAN_ERROR, MS_PLAN_ERROR_MISMATCH, "the trace has no iteration 7");
}

/* The shipped sample "default": 16 ranks, 16 experts, 12 MoE layers, top-2, 256 tokens. */
static const char sample_model[] = "[model]\nformat = 1\nname = s12\nlayers = 12\nd_model = 256\n"
                                   "d_ffn = 512\nexperts = 16\ntop_k = 2\nheads = 4\n"
                                   "seq_len = 256\ntokens_per_gpu = 256\n";

static void
test_learning(void)
{
    g_autofree char *path = ms_test_write_tmp("s12.ini", sample_model);
    GError *error = NULL;
    MsPlannerOptions o = {"lina-testbed", path, "sample:default", "lina", MS_PLAN_INFER, 1, 1};
    g_autoptr(MsPlanner) first = ms_planner_new(&o, &error);
    g_assert_no_error(error);
    g_autoptr(MsSchedule) s0 = ms_planner_plan_iteration(first, 0, &error);
    g_assert_no_error(error);
    g_autoptr(MsPlanner) later = ms_planner_new(&o, &error);
    g_autoptr(MsSchedule) s3 = ms_planner_plan_iteration(later, 3, &error);
    g_assert_no_error(error);
    /* Without history the estimate is uniform; after three batches it follows the paths. */
    double e0 = g_ascii_strtod(ms_schedule_get_meta(s0, "lina.estimate_error"), NULL);
    double e3 = g_ascii_strtod(ms_schedule_get_meta(s3, "lina.estimate_error"), NULL);
    CU_ASSERT_TRUE(e3 < e0 / 2);
}

static void
test_errors(void)
{
    GError *error = NULL;
    MsPlannerOptions o = {"nowhere-cluster", "lina-gpt2-4e", NULL, "fifo", MS_PLAN_TRAIN, 1, 1};
    CU_ASSERT_PTR_NULL(ms_planner_new(&o, &error));
    MS_ASSERT_ERROR(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_UNKNOWN, "nowhere-cluster");
    o.topology = "lina-testbed";
    o.model = "gpt-9";
    CU_ASSERT_PTR_NULL(ms_planner_new(&o, &error));
    MS_ASSERT_ERROR(error, MS_MODEL_ERROR, MS_MODEL_ERROR_UNKNOWN, "unknown model 'gpt-9'");
    o.model = "lina-gpt2-4e";
    o.policy = "lina:chunk=3";
    CU_ASSERT_PTR_NULL(ms_planner_new(&o, &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE, "policy lina: chunk=3:");
    o.policy = "fifo";
    o.trace = "gen:zipf=-1";
    CU_ASSERT_PTR_NULL(ms_planner_new(&o, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE, "zipf");
    o.trace = "sample:tiny";
    g_autoptr(MsPlanner) p = ms_planner_new(&o, &error);
    g_assert_no_error(error);
    CU_ASSERT_PTR_NULL(ms_planner_plan_iteration(p, 0, &error));
    MS_ASSERT_ERROR(error, MS_PLAN_ERROR, MS_PLAN_ERROR_MISMATCH,
                    "sample:tiny: the trace has 2 MoE layers but model lina-gpt2-4e has 6");
}

static void
test_cli(void)
{
    g_autofree char *out = g_build_filename(ms_test_tmpdir(), "step.json", NULL);
    const char *ok[] = {"plan",     "--model",     "lina-gpt2-4e", "--trace", "gen:tokens=256",
                        "--policy", "lina:pack=1", "--out",        out,       NULL};
    fx_expect_run(ok, 0, "ranks       16, ep 4, streams compute comm", NULL);
    GError *error = NULL;
    g_autoptr(MsSchedule) s = ms_schedule_load(out, &error);
    g_assert_no_error(error);
    CU_ASSERT_STRING_EQUAL(ms_schedule_policy(s), "lina");
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "policy"), "lina:pack=1");
    const char *infer[] = {
        "plan",    "--mode",       "infer",   "--policy",      "lina",  "--iteration", "1",
        "--model", "lina-gpt2-4e", "--trace", "gen:tokens=64", "--out", "-",           NULL};
    fx_expect_run(infer, 0, "\"lina.placement\"", NULL);
    g_autofree char *bad_text = g_strconcat(sample_model, "dtype = fp8\n", NULL);
    g_autofree char *bad = ms_test_write_tmp("bad.ini", bad_text);
    g_autofree char *want =
        g_strdup_printf("moesim: %s:12: [model] dtype: unknown dtype 'fp8'", bad);
    const char *bad_model[] = {"plan", "--model", bad, "--out", "-", NULL};
    fx_expect_run(bad_model, 2, NULL, want);
    const char *no_out[] = {"plan", NULL};
    fx_expect_run(no_out, 2, NULL, "plan: --out FILE is required");
    const char *mode[] = {"plan", "--mode", "serve", "--out", "-", NULL};
    fx_expect_run(mode, 2, NULL, "plan: --mode must be train or infer, not 'serve'");
    const char *it[] = {"plan", "--iteration", "-1", "--out", "-", NULL};
    fx_expect_run(it, 2, NULL, "plan: --iteration -1 is out of range");
    const char *seed[] = {"plan", "--seed", "-4", "--out", "-", NULL};
    fx_expect_run(seed, 2, NULL, "plan: --seed -4 is negative");
    const char *extra[] = {"plan", "extra", "--out", "-", NULL};
    fx_expect_run(extra, 2, NULL, "plan: unexpected argument 'extra'");
    const char *policy[] = {"plan", "--policy", "lina:chunk=1MB,chunk=2MB", "--out", "-", NULL};
    fx_expect_run(policy, 2, NULL, "moesim: policy lina: parameter 'chunk' given twice");
    const char *trace[] = {"plan", "--trace", "sample:tiny", "--out", "-", NULL};
    fx_expect_run(trace, 2, NULL, "moesim: sample:tiny: the trace has 2 MoE layers");
    const char *missing[] = {"plan", "--trace", "no/such.trace", "--out", "-", NULL};
    fx_expect_run(missing, 2, NULL, "no/such.trace");
    const char *help[] = {"plan", "--help", NULL};
    fx_expect_run(help, 0, "--policy", NULL);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"generated trace spec", test_generated_spec},
        {"iterate and seek", test_iterate},
        {"Lina learns from earlier batches", test_learning},
        {"errors", test_errors},
        {"moesim plan", test_cli},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"planner", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
