/* Tests of planner and `moesim plan`: the generated trace's spec, iterating and seeking, Lina's
 * statistics learned from earlier batches, planning on objects that cannot be loaded by name,
 * the schedule file, and every error with exit 2. */
#include "plan_fixture.h"
#include "sim/inputs.h"
#include "sim/policy/planner.h"
#include "traces/trace_gen.h"

/* A planner and the inputs it borrows. */
typedef struct {
    MsInputs *in;
    MsPlanner *planner;
} Planned;

static void
planned_clear(Planned *p)
{
    ms_planner_free(p->planner);
    ms_inputs_free(p->in);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Planned, planned_clear)

static gboolean
plan_on(Planned *p, const char *model, const char *trace, const char *policy, MsPlanMode mode,
        guint iterations, GError **error)
{
    MsInputNames names = {"lina-testbed", model, NULL, policy, trace};
    p->in = ms_inputs_load(&names, error);
    if (p->in == NULL) {
        return FALSE;
    }
    MsPlannerInputs pin = {ms_inputs_topology(p->in),
                           ms_inputs_model(p->in),
                           ms_inputs_policy(p->in),
                           ms_inputs_routing(p->in),
                           mode,
                           iterations,
                           1};
    p->planner = ms_planner_new(&pin, error);
    return p->planner != NULL;
}

static void
test_generated_spec(void)
{
    GError *error = NULL;
    g_auto(Planned) p = {0};
    CU_ASSERT_TRUE_FATAL(plan_on(&p, "lina-gpt2-4e", NULL, "fifo", MS_PLAN_TRAIN, 2, &error));
    /* The trace the routing source describes for the same inputs, as `moesim run` generates. */
    MsRoutingShape shape = {ms_inputs_model(p.in), ms_inputs_topology(p.in), MS_PLAN_TRAIN, 2, 1};
    g_autofree char *want = ms_routing_source_describe(ms_inputs_routing(p.in), &shape, &error);
    CU_ASSERT_STRING_EQUAL(ms_planner_trace(p.planner), want);
    CU_ASSERT_TRUE(g_str_has_prefix(ms_planner_trace(p.planner),
                                    "gen:ranks=16,experts=4,layers=6,top_k=2,tokens=8192,"
                                    "iterations=2,hot="));
    g_auto(Planned) q = {0};
    CU_ASSERT_TRUE_FATAL(
        plan_on(&q, "lina-gpt2-4e", "gen:zipf=2,seed=5", "fifo", MS_PLAN_INFER, 1, &error));
    CU_ASSERT_STRING_EQUAL(ms_planner_trace(q.planner),
                           "gen:ranks=16,experts=4,layers=6,top_k=1,tokens=1024,iterations=1,"
                           "zipf=2,corr=0.5,drift=0.02,seed=5,records=tokens");
}

static void
test_iterate(void)
{
    GError *error = NULL;
    g_auto(Planned) p = {0};
    CU_ASSERT_TRUE_FATAL(
        plan_on(&p, "lina-gpt2-4e", "gen:tokens=64", "priority", MS_PLAN_TRAIN, 3, &error));
    for (guint i = 0; i < 3; i++) {
        MsSchedule *s = NULL;
        CU_ASSERT_TRUE(ms_planner_next(p.planner, &s, &error));
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        g_autofree char *it = g_strdup_printf("%u", i);
        CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "iteration"), it);
        ms_schedule_free(s);
    }
    MsSchedule *end = NULL;
    CU_ASSERT_FALSE(ms_planner_next(p.planner, &end, &error));
    CU_ASSERT_PTR_NULL(end);
    CU_ASSERT_PTR_NULL(error);
    g_auto(Planned) q = {0};
    CU_ASSERT_TRUE_FATAL(
        plan_on(&q, "lina-gpt2-4e", "gen:tokens=64", "fifo", MS_PLAN_TRAIN, 3, &error));
    g_autoptr(MsSchedule) two = ms_planner_plan_iteration(q.planner, 2, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(two);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(two, "iteration"), "2");
    CU_ASSERT_PTR_NULL(ms_planner_plan_iteration(q.planner, 7, &error));
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
    g_auto(Planned) first = {0};
    CU_ASSERT_TRUE_FATAL(plan_on(&first, path, "sample:default", "lina", MS_PLAN_INFER, 1, &error));
    g_autoptr(MsSchedule) s0 = ms_planner_plan_iteration(first.planner, 0, &error);
    g_assert_no_error(error);
    g_auto(Planned) later = {0};
    CU_ASSERT_TRUE_FATAL(plan_on(&later, path, "sample:default", "lina", MS_PLAN_INFER, 1, &error));
    g_autoptr(MsSchedule) s3 = ms_planner_plan_iteration(later.planner, 3, &error);
    g_assert_no_error(error);
    /* Without history the estimate is uniform; after three batches it follows the paths. */
    double e0 = g_ascii_strtod(ms_schedule_get_meta(s0, "lina.estimate_error"), NULL);
    double e3 = g_ascii_strtod(ms_schedule_get_meta(s3, "lina.estimate_error"), NULL);
    CU_ASSERT_TRUE(e3 < e0 / 2);
    /* The steps one at a time: a driver that reads without planning still teaches Lina. */
    g_auto(Planned) steps = {0};
    CU_ASSERT_TRUE_FATAL(plan_on(&steps, path, "sample:default", "lina", MS_PLAN_INFER, 1, &error));
    for (guint i = 0; i < 3; i++) {
        g_autoptr(MsRouting) r = NULL;
        CU_ASSERT_TRUE_FATAL(ms_planner_read(steps.planner, &r, &error));
        CU_ASSERT_TRUE(ms_planner_learn(steps.planner, r, &error));
    }
    g_autoptr(MsRouting) r3 = NULL;
    CU_ASSERT_TRUE_FATAL(ms_planner_read(steps.planner, &r3, &error));
    g_autoptr(MsSchedule) again = ms_planner_plan(steps.planner, r3, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(again);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(again, "lina.estimate_error"),
                           ms_schedule_get_meta(s3, "lina.estimate_error"));
}

/* The planner plans on the objects it is given: a topology and a model made in memory, whose
 * names are neither files nor shipped, plan all the same. */
static void
test_loaded_objects(void)
{
    static const char topo_text[] =
        "[topology]\nformat = 1\nname = nowhere-4\n[gpu]\nmodel = A100\npeak = 312TFLOPS\n"
        "hbm = 2039GBps\nmemory = 80GiB\nlaunch_overhead = 4us\n[preset]\nnodes = 2\n"
        "gpus_per_node = 2\nintra = nvswitch\nintra_bandwidth = 300GBps\nintra_latency = 0.7us\n"
        "nics = per_gpu\nnic_bandwidth = 200Gbps\nnic_latency = 0.6us\nfabric = switch\n"
        "fabric_latency = 0.13us\n";
    GError *error = NULL;
    g_autoptr(MsTopology) t = ms_topology_load_data(topo_text, strlen(topo_text), "memory", &error);
    g_autoptr(MsModel) m = ms_model_load_data(sample_model, strlen(sample_model), "m", &error);
    g_autoptr(MsPolicy) pol = ms_policy_parse("fifo", &error);
    g_autoptr(MsRoutingSource) src = ms_routing_source_new("gen:tokens=16", &error);
    g_assert_no_error(error);
    MsPlannerInputs pin = {t, m, pol, src, MS_PLAN_TRAIN, 1, 3};
    g_autoptr(MsPlanner) p = ms_planner_new(&pin, &error);
    g_assert_no_error(error);
    g_autoptr(MsSchedule) s = ms_planner_plan_iteration(p, 0, &error);
    g_assert_no_error(error);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "topology"), "nowhere-4");
    CU_ASSERT_EQUAL(ms_schedule_n_ranks(s), 4);
    CU_ASSERT_TRUE(g_str_has_prefix(ms_planner_trace(p), "gen:ranks=4,experts=16,layers=12"));
    /* A schedule beyond the op limit whatever the routing is refused before any is generated. */
    static const char big_text[] =
        "[model]\nformat = 1\nname = big\nlayers = 4096\nd_model = 64\nd_ffn = 64\n"
        "experts = 8\ntop_k = 2\nheads = 1\nseq_len = 8\ntokens_per_gpu = 8\n"
        "grad_bucket = 1B\n";
    g_autoptr(MsModel) big = ms_model_load_data(big_text, strlen(big_text), "big", &error);
    g_assert_no_error(error);
    pin.model = big;
    CU_ASSERT_PTR_NULL(ms_planner_new(&pin, &error));
    MS_ASSERT_ERROR(error, MS_PLAN_ERROR, MS_PLAN_ERROR_LIMIT,
                    "a train schedule of big on 4 ranks would hold at least");
}

static void
test_errors(void)
{
    GError *error = NULL;
    g_auto(Planned) a = {0};
    CU_ASSERT_FALSE(plan_on(&a, "lina-gpt2-4e", "gen:zipf=-1", "fifo", MS_PLAN_TRAIN, 1, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE, "zipf");
    /* A key the generator takes, with a value this model cannot have: found when opened. */
    g_auto(Planned) b = {0};
    CU_ASSERT_FALSE(plan_on(&b, "lina-gpt2-4e", "gen:top_k=9", "fifo", MS_PLAN_TRAIN, 1, &error));
    CU_ASSERT_PTR_NOT_NULL(b.in);
    CU_ASSERT_PTR_NOT_NULL_FATAL(error);
    CU_ASSERT_EQUAL(error->domain, MS_TRACE_GEN_ERROR);
    g_clear_error(&error);
    g_auto(Planned) c = {0};
    CU_ASSERT_TRUE_FATAL(
        plan_on(&c, "lina-gpt2-4e", "sample:tiny", "fifo", MS_PLAN_TRAIN, 1, &error));
    CU_ASSERT_PTR_NULL(ms_planner_plan_iteration(c.planner, 0, &error));
    MS_ASSERT_ERROR(error, MS_PLAN_ERROR, MS_PLAN_ERROR_MISMATCH,
                    "sample:tiny: the trace has 2 MoE layers but model lina-gpt2-4e has 6");
    g_auto(Planned) d = {0};
    CU_ASSERT_FALSE(plan_on(&d, "lina-gpt2-4e", "no/such.trace", "fifo", MS_PLAN_TRAIN, 1, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_IO, "no/such.trace");
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
    g_autofree char *bad_text = g_strconcat(sample_model, "dtype = int4\n", NULL);
    g_autofree char *bad = ms_test_write_tmp("bad.ini", bad_text);
    g_autofree char *want =
        g_strdup_printf("moesim: %s:12: [model] dtype: 'int4' is not one of: fp32, fp16, bf16, "
                        "tf32, fp8",
                        bad);
    const char *bad_model[] = {"plan", "--model", bad, "--out", "-", NULL};
    fx_expect_run(bad_model, 2, NULL, want);
    /* An fp8 model on A100s (no FP8 tensor cores) is refused, never priced at the fp16 peak. */
    g_autofree char *fp8_text = g_strconcat(sample_model, "dtype = fp8\n", NULL);
    g_autofree char *fp8 = ms_test_write_tmp("fp8.ini", fp8_text);
    const char *fp8_model[] = {"plan",         "--model", fp8, "--topology",
                               "lina-testbed", "--out",   "-", NULL};
    fx_expect_run(fp8_model, 2, NULL,
                  "computes in fp8 but topology lina-testbed's GPU A100-SXM4-40GB has no fp8 "
                  "peak: add peak_fp8 to its [gpu] group");
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
        {"planning on objects made in memory", test_loaded_objects},
        {"errors", test_errors},
        {"moesim plan", test_cli},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"planner", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
