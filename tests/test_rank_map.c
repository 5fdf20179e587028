/* Tests of rank_map and its use by the scenario: --gpus and --ranks parsed, routings tiled (counts
 * and token paths), every misfit with the option that would fit, the mapping in a result's
 * metadata, and the closed form: a trace run on the first 4 GPUs of an 8-GPU node takes exactly
 * the time it takes on the same node built with 4 GPUs. */
#include <json-glib/json-glib.h>

#include "ms_test.h"
#include "sim/engine.h"
#include "sim/inputs.h"
#include "sim/rank_map.h"
#include "sim/scenario.h"
#include "traces/trace_gen.h"

static void
test_parse(void)
{
    GError *error = NULL;
    guint v = 0;
    CU_ASSERT_TRUE(ms_rank_map_parse_gpus("6", &v, &error));
    CU_ASSERT_EQUAL(v, 6);
    CU_ASSERT_TRUE(ms_rank_map_parse_gpus("0-5", &v, &error));
    CU_ASSERT_EQUAL(v, 6);
    CU_ASSERT_TRUE(ms_rank_map_parse_gpus("0-0", &v, &error));
    CU_ASSERT_EQUAL(v, 1);
    CU_ASSERT_TRUE(ms_rank_map_parse_ranks("2x", &v, &error));
    CU_ASSERT_EQUAL(v, 2);
    CU_ASSERT_TRUE(ms_rank_map_parse_ranks("4096X", &v, &error));
    CU_ASSERT_EQUAL(v, 4096);
    static const struct {
        const char *text;
        gboolean gpus;
        const char *needle;
    } bad[] = {
        {"0", TRUE, "--gpus: 0 out of range"},
        {"65537", TRUE, "--gpus: 65537 out of range"},
        {"2-7", TRUE,
         "--gpus '2-7': the GPUs used are the first ones (0-5 or 6): a schedule's rank r is GPU r"},
        {"5-2", TRUE, "--gpus '5-2': expected N (the first N GPUs) or 0-M"},
        {"0-x", TRUE, "--gpus '0-x': expected N"},
        {"six", TRUE, "--gpus: 'six' is not a non-negative integer"},
        {"2", FALSE, "--ranks '2': expected Nx, the trace's ranks repeated N times (1x .. 4096x)"},
        {"0x", FALSE, "--ranks '0x': expected Nx"},
        {"4097x", FALSE, "--ranks '4097x': expected Nx"},
        {"x", FALSE, "--ranks 'x': expected Nx"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        gboolean ok = bad[i].gpus ? ms_rank_map_parse_gpus(bad[i].text, &v, &error)
                                  : ms_rank_map_parse_ranks(bad[i].text, &v, &error);
        CU_ASSERT_FALSE(ok);
        MS_ASSERT_ERROR(error, MS_RANK_MAP_ERROR, MS_RANK_MAP_ERROR_SYNTAX, bad[i].needle);
    }
}

static MsRouting *
generated(const char *spec)
{
    MsTraceGenParams p;
    ms_trace_gen_params_init(&p);
    g_assert(ms_trace_gen_params_parse(spec, &p, NULL));
    g_autoptr(MsTraceGen) gen = ms_trace_gen_new(&p, NULL);
    MsRouting *r = NULL;
    g_assert(ms_trace_gen_next(gen, &r, NULL));
    return r;
}

/* Tiled ranks route what their originals routed: the same counts, token ids and paths. */
static void
test_tile(void)
{
    GError *error = NULL;
    MsRankMap map = {.tile = 3};
    for (guint counts = 0; counts < 2; counts++) {
        g_autoptr(MsRouting) r =
            generated(counts ? "ranks=2,experts=8,layers=3,top_k=2,tokens=16,records=counts"
                             : "ranks=2,experts=8,layers=3,top_k=2,tokens=16");
        g_autoptr(MsRouting) t = NULL;
        CU_ASSERT_TRUE_FATAL(ms_rank_map_apply(&map, r, 6, "t", &t, &error));
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_EQUAL(ms_routing_header(t)->ranks, 6);
        CU_ASSERT_EQUAL(ms_routing_has_paths(t), !counts);
        CU_ASSERT_EQUAL(ms_routing_total_tokens(t), 3 * ms_routing_total_tokens(r));
        for (guint p = 0; p < 6; p++) {
            for (guint l = 0; l < 3; l++) {
                for (guint e = 0; e < 8; e++) {
                    CU_ASSERT_EQUAL(ms_routing_count(t, l, p, e), ms_routing_count(r, l, p % 2, e));
                }
            }
            for (guint k = 0; k < ms_routing_n_tokens(t, p); k++) {
                CU_ASSERT_EQUAL(ms_routing_token_id(t, p, k), ms_routing_token_id(r, p % 2, k));
                CU_ASSERT_EQUAL(ms_routing_token_experts(t, p, k, 2)[1],
                                ms_routing_token_experts(r, p % 2, k, 2)[1]);
            }
        }
    }
    /* One to one: nothing made. */
    g_autoptr(MsRouting) r = generated("ranks=4,experts=8,layers=1,top_k=1,tokens=4");
    MsRouting *same = NULL;
    CU_ASSERT_TRUE(ms_rank_map_apply(NULL, r, 4, "t", &same, &error));
    CU_ASSERT_PTR_NULL(same);
    MsRankMap first = {.gpus = 4};
    CU_ASSERT_TRUE(ms_rank_map_apply(&first, r, 4, "t", &same, &error));
    CU_ASSERT_PTR_NULL(same);
}

static void
test_misfit(void)
{
    GError *error = NULL;
    g_autoptr(MsRouting) r = generated("ranks=4,experts=8,layers=1,top_k=1,tokens=4");
    MsRouting *t = NULL;
    static const struct {
        MsRankMap map;
        guint gpus;
        const char *needle;
    } cases[] = {
        {{0},
         8,
         "the trace has 4 ranks but 8 GPUs of topology t are used: run it on 4 of them with "
         "--gpus 4, or repeat its ranks over all of them with --ranks 2x"},
        {{0},
         6,
         "the trace has 4 ranks but 6 GPUs of topology t are used: run it on 4 of them "
         "with --gpus 4 (docs/running.md, \"Ranks and GPUs\")"},
        {{0},
         2,
         "the trace has 4 ranks but 2 GPUs of topology t are used: it needs a topology "
         "with as many GPUs"},
        {{.tile = 4},
         8,
         "the trace has 16 ranks (4 tiled 4x) but 8 GPUs of topology t are used: run it on 4 of "
         "them with --gpus 4, or repeat its ranks over all of them with --ranks 2x"},
        {{.tile = 2},
         4,
         "the trace has 8 ranks (4 tiled 2x) but 4 GPUs of topology t are used: leave out "
         "--ranks"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        CU_ASSERT_FALSE(ms_rank_map_apply(&cases[i].map, r, cases[i].gpus, "t", &t, &error));
        CU_ASSERT_PTR_NULL(t);
        MS_ASSERT_ERROR(error, MS_RANK_MAP_ERROR, MS_RANK_MAP_ERROR_FIT, cases[i].needle);
    }
    guint used = 0;
    MsRankMap many = {.gpus = 9};
    CU_ASSERT_FALSE(ms_rank_map_gpus_used(&many, 8, "t", &used, &error));
    MS_ASSERT_ERROR(error, MS_RANK_MAP_ERROR, MS_RANK_MAP_ERROR_FIT,
                    "--gpus 9 but topology t has 8 GPUs");
    CU_ASSERT_TRUE(ms_rank_map_gpus_used(NULL, 8, "t", &used, &error));
    CU_ASSERT_EQUAL(used, 8);
    g_autofree char *d1 = ms_rank_map_describe(6, 1, 6, 8);
    CU_ASSERT_STRING_EQUAL(d1, "trace ranks 0-5 on GPUs 0-5 of 8");
    g_autofree char *d2 = ms_rank_map_describe(4, 2, 8, 8);
    CU_ASSERT_STRING_EQUAL(d2, "trace ranks 0-3 tiled 2x on GPUs 0-7 of 8 (GPU g runs rank g "
                               "mod 4)");
    g_autofree char *d3 = ms_rank_map_describe(1, 1, 1, 8);
    CU_ASSERT_STRING_EQUAL(d3, "trace ranks 0 on GPUs 0 of 8");
}

static MsResult *
run(const char *topology, const char *trace, const char *policy, MsRankMap map, GError **error)
{
    MsInputNames names = {
        .topology = topology, .model = "mixtral-8x7b", .policy = policy, .trace = trace};
    g_autoptr(MsInputs) in = ms_inputs_load(&names, error);
    g_autoptr(MsRunner) engine = ms_engine_runner_new(&(MsEngineOptions){.check_invariants = TRUE});
    if (in == NULL) {
        return NULL;
    }
    MsScenario sc = {.mode = MS_PLAN_TRAIN, .iterations = 1, .ranks = map};
    ms_inputs_fill(in, &sc);
    sc.runner = engine;
    return ms_scenario_run(&sc, error);
}

static const char *
meta(const MsResult *res, const char *key)
{
    return ms_schedule_get_meta(ms_result_schedule(res), key);
}

/* dgx-a100 as a node of 4 GPUs: nothing else differs. */
static const char four[] =
    "[topology]\nformat = 1\nname = dgx-a100-4\n[gpu]\nmodel = A100-SXM4-80GB\npeak = 312TFLOPS\n"
    "hbm = 2039GBps\nmemory = 80GiB\nlaunch_overhead = 4us\n[preset]\nnodes = 1\n"
    "gpus_per_node = 4\nintra = nvswitch\nintra_bandwidth = 300GBps\nintra_links = 12\n"
    "intra_latency = 0.7us\nnics = per_gpu\nnic_bandwidth = 200Gbps\nnic_latency = 0.6us\n"
    "fabric = switch\nfabric_latency = 0.13us\n";

static void
test_scenario(void)
{
    GError *error = NULL;
    g_autofree char *topo4 = ms_test_write_tmp("dgx-a100-4.ini", four);
    static const char *const policies[] = {"fifo", "lina"};
    for (guint i = 0; i < G_N_ELEMENTS(policies); i++) {
        g_autoptr(MsResult) on8 =
            run("dgx-a100", "gen:ranks=4", policies[i], (MsRankMap){.gpus = 4}, &error);
        g_assert_no_error(error);
        g_autoptr(MsResult) own = run(topo4, NULL, policies[i], (MsRankMap){0}, &error);
        g_assert_no_error(error);
        MsMetrics a, b;
        ms_result_mean(on8, &a);
        ms_result_mean(own, &b);
        /* NVSwitch inside one node: the idle GPUs carry nothing, so every time is the same. */
        CU_ASSERT_EQUAL(a.step_us, b.step_us);
        CU_ASSERT_EQUAL(a.a2a_bytes, b.a2a_bytes);
        CU_ASSERT_EQUAL(ms_schedule_n_ranks(ms_result_schedule(on8)), 4);
        CU_ASSERT_STRING_EQUAL(meta(on8, "rank_map"), "trace ranks 0-3 on GPUs 0-3 of 8");
        CU_ASSERT_STRING_EQUAL(meta(on8, "gpus_used"), "4");
        CU_ASSERT_PTR_NULL(meta(own, "rank_map"));
    }
    /* Tiled: 8 ranks, each pair routing the same tokens; the mapping is in the result's JSON. */
    g_autoptr(MsResult) tiled =
        run("dgx-a100", "gen:ranks=4", "fifo", (MsRankMap){.tile = 2}, &error);
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(ms_schedule_n_ranks(ms_result_schedule(tiled)), 8);
    g_autoptr(JsonNode) json = ms_result_to_json(tiled);
    JsonObject *m = json_object_get_object_member(json_node_get_object(json), "meta");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(m, "rank_map"),
                           "trace ranks 0-3 tiled 2x on GPUs 0-7 of 8 (GPU g runs rank g mod 4)");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(m, "trace_ranks"), "4");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(m, "rank_tile"), "2");
    /* Generated routing follows the map: 4 ranks tiled 2x. */
    g_autoptr(MsResult) gen = run("dgx-a100", NULL, "fifo", (MsRankMap){.tile = 2}, &error);
    g_assert_no_error(error);
    CU_ASSERT_STRING_EQUAL(meta(gen, "trace_ranks"), "4");
    /* Errors. */
    CU_ASSERT_PTR_NULL(run("dgx-a100", "gen:ranks=4", "fifo", (MsRankMap){0}, &error));
    MS_ASSERT_ERROR(error, MS_RANK_MAP_ERROR, MS_RANK_MAP_ERROR_FIT,
                    "the trace has 4 ranks but 8 GPUs of topology dgx-a100 are used");
    CU_ASSERT_PTR_NULL(run("dgx-a100", NULL, "fifo", (MsRankMap){.tile = 3}, &error));
    MS_ASSERT_ERROR(error, MS_RANK_MAP_ERROR, MS_RANK_MAP_ERROR_FIT,
                    "--ranks 3x does not divide the 8 GPUs used");
    CU_ASSERT_PTR_NULL(run("dgx-a100", NULL, "fifo", (MsRankMap){.gpus = 9}, &error));
    MS_ASSERT_ERROR(error, MS_RANK_MAP_ERROR, MS_RANK_MAP_ERROR_FIT,
                    "--gpus 9 but topology dgx-a100 has 8 GPUs");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"--gpus and --ranks", test_parse},
        {"tiled ranks route what their originals routed", test_tile},
        {"misfits name the option that fits", test_misfit},
        {"first GPUs of a node = a node of that many GPUs; mapping in results", test_scenario},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"rank_map", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
