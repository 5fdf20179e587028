/* Tests of Lina's inference with the experts in host memory (lina_host, weights=host): where the
 * host link's figure comes from, the cache's size, one layer's loads through the caches in
 * closed form, the loads as ops the engine times at bytes / host_bw, and a cache that stays warm
 * from one batch to the next through the planner. */
#include "plan_fixture.h"
#include "sim/inputs.h"
#include "sim/policy/lina_host.h"
#include "sim/policy/lina_infer.h"
#include "sim/scenario.h"

static void
expect_link(const char *topo, double given, double bw, const char *source)
{
    g_autoptr(MsTopology) t = fx_topo(topo);
    MsHostLink link;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_lina_host_link(t, 0, given, &link, &error));
    CU_ASSERT_DOUBLE_EQUAL(link.bandwidth, bw, bw * 1e-12);
    CU_ASSERT_STRING_EQUAL(link.source, source);
}

/* 4 GPUs of model X1 on one NVSwitch, no NIC: nothing says how they reach host memory. */
static const char bare[] =
    "[topology]\nformat = 1\nname = bare\n[gpu]\nmodel = X1\npeak = 100TFLOPS\nhbm = 1TBps\n"
    "memory = 16GiB\nlaunch_overhead = 4us\n[preset]\nnodes = 1\ngpus_per_node = 4\n"
    "intra = nvswitch\nintra_bandwidth = 100GBps\nintra_latency = 1us\nnics = none\n";

static void
test_link(void)
{
    /* DGX-1: the route from the socket through its PCIe 3.0 switch. */
    expect_link("dgx1-v100", 0, 15.75e9, "route cpu0->gpu0");
    /* A preset with a finite PCIe path to the GPU's NIC. */
    expect_link("lina-testbed", 0, 31.5e9, "link n0.nic0->gpu0");
    /* Unlimited PCIe in the file: the GPU model's generation. */
    expect_link("dgx-a100", 0, 31.5e9, "PCIe 4.0 x16 (A100)");
    expect_link("dgx-h100", 0, 63e9, "PCIe 5.0 x16 (H100)");
    expect_link("dgx-a100", 25e9, 25e9, "host_bw");
    g_autoptr(MsTopology) t = ms_topology_load_data(bare, strlen(bare), "bare", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    MsHostLink link;
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_lina_host_link(t, 0, 0, &link, &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_INPUT,
                    "topology bare describes none (no cpu device, no pcie link into gpu0, GPU "
                    "model 'X1' unknown): give lina:host_bw=BANDWIDTH");
}

/* 2 layers, both MoE, 4 experts of d_model x d_ffn x 2 matrices, fp16. */
static const char model_text[] = "[model]\nformat = 1\nname = h\nlayers = 2\nmoe_every = 1\n"
                                 "d_model = 1024\nd_ffn = 4096\nexperts = 4\ntop_k = 1\n"
                                 "heads = 8\nseq_len = 8\ntokens_per_gpu = 8\ndtype = fp16\n"
                                 "vocab = 1000\n";

static void
test_capacity(void)
{
    g_autoptr(MsModel) m = fx_model(model_text);
    g_autoptr(MsTopology) t = ms_topology_load_data(bare, strlen(bare), "bare", NULL);
    GError *error = NULL;
    double eb = (double)ms_model_expert_params(m) * 2, dense = ms_lina_dense_bytes(m);
    CU_ASSERT_DOUBLE_EQUAL(eb, 2.0 * 1024 * 4096 * 2, 0);
    guint n = 0;
    guint64 bytes = 0;
    CU_ASSERT_TRUE(ms_lina_host_capacity(m, t, 0, &n, &bytes, &error));
    double room = 0.5 * 16 * 1073741824.0 - dense;
    CU_ASSERT_EQUAL(n, (guint)floor(room / eb));
    CU_ASSERT_EQUAL(bytes, (guint64)room);
    CU_ASSERT_TRUE(ms_lina_host_capacity(m, t, (guint64)(2.5 * eb), &n, &bytes, &error));
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_TRUE(ms_lina_host_capacity(m, t, 1, &n, &bytes, &error)); /* below one expert */
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_FALSE(ms_lina_host_capacity(m, t, 16ull << 30, &n, &bytes, &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE,
                    "policy lina: cache=17179869184B and the");
    /* A GPU whose half memory the dense part fills. */
    static const char tiny[] =
        "[topology]\nformat = 1\nname = tiny\n[gpu]\nmodel = X1\npeak = 100TFLOPS\nhbm = 1TBps\n"
        "memory = 1MiB\nlaunch_overhead = 4us\n[preset]\nnodes = 1\ngpus_per_node = 4\n"
        "intra = nvswitch\nintra_bandwidth = 100GBps\nintra_latency = 1us\nnics = none\n";
    g_autoptr(MsTopology) small = ms_topology_load_data(tiny, strlen(tiny), "tiny", NULL);
    CU_ASSERT_FALSE(ms_lina_host_capacity(m, small, 0, &n, &bytes, &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_INPUT,
                    "leaves no room for one expert (16777216 B): give lina:cache=SIZE");
}

/* One layer on 4 GPUs, caches of 2 experts. Phase 1 (static, expert e on GPU e) with estimated
 * loads 1, 1, 0, 1: GPUs 0, 1 and 3 load their expert ahead; GPU 2's gets no tokens. The final
 * placement adds expert 0 to GPU 2 beside expert 2, and the real loads are 2, 1, 1, 0: GPU 2
 * loads both after the gate, GPU 3's expert gets no token. The same layer again: all held. */
static void
test_layer(void)
{
    g_autoptr(MsExpertCache) c = ms_expert_cache_new(4, 1, 4, 2);
    g_autoptr(MsPlacement) p1 = ms_placement_new_static(4, 4);
    g_autoptr(MsPlacement) fin = ms_placement_new(4, 4, 4);
    ms_placement_add(fin, 0, 0, 0);
    ms_placement_add(fin, 0, 1, 1);
    ms_placement_add(fin, 0, 0, 2);
    ms_placement_add(fin, 0, 2, 2);
    ms_placement_add(fin, 0, 3, 3);
    static const double est[] = {1, 1, 0, 1}, real[] = {2, 1, 1, 0};
    guint64 b1[4], b2[4];
    ms_lina_host_layer(c, 0, p1, est, fin, real, 100, b1, b2);
    static const guint64 ahead[] = {100, 100, 0, 100}, late[] = {0, 0, 200, 0};
    for (guint r = 0; r < 4; r++) {
        CU_ASSERT_EQUAL(b1[r], ahead[r]);
        CU_ASSERT_EQUAL(b2[r], late[r]);
    }
    ms_lina_host_layer(c, 0, p1, est, fin, real, 100, b1, b2);
    for (guint r = 0; r < 4; r++) {
        CU_ASSERT_EQUAL(b1[r] + b2[r], 0);
    }
    /* Nothing known ahead (static placement): everything loads after the gate. */
    g_autoptr(MsExpertCache) cold = ms_expert_cache_new(4, 1, 4, 2);
    ms_lina_host_layer(cold, 0, NULL, est, p1, real, 100, b1, b2);
    static const guint64 demand[] = {100, 100, 100, 0};
    for (guint r = 0; r < 4; r++) {
        CU_ASSERT_EQUAL(b1[r], 0);
        CU_ASSERT_EQUAL(b2[r], demand[r]);
    }
}

/* 4 GPUs, 4 experts, top-1, 2 MoE layers, 8 tokens a GPU: token k of a GPU takes expert k % 4
 * at both layers, so every expert has tokens on every layer. */
static MsRouting *
batch(guint64 iteration)
{
    guint32 paths[32 * 2];
    for (guint k = 0; k < 32; k++) {
        paths[2 * k] = paths[2 * k + 1] = k % 4;
    }
    return fx_paths_routing(iteration, 4, 2, 4, 8, paths);
}

static MsTopology *
host_topo(void)
{
    MsTopology *t = ms_topology_load_data(bare, strlen(bare), "bare", NULL);
    g_assert(t != NULL);
    return t;
}

static MsTime
makespan(const MsSchedule *s, const MsRecords *r)
{
    MsTime last = 0;
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        last = MAX(last, ms_records_end(r, op));
    }
    return last;
}

/* Static placement in host memory: each GPU computes its one expert at both layers, loaded after
 * each gate; the engine takes launch + bytes / host_bw for a load. A cache warmed by the batch
 * holds them all the next time: nothing loads and the batch is shorter by the loads. */
static void
test_plan_loads(void)
{
    g_autoptr(MsModel) m = fx_model(model_text);
    g_autoptr(MsTopology) t = host_topo();
    GError *error = NULL;
    g_autoptr(MsPolicy) p =
        ms_policy_parse("lina:placement=static,weights=host,host_bw=10GBps", &error);
    g_assert_no_error(error);
    g_autoptr(MsRouting) b = batch(0);
    MsPolicyInput in = {m, b, t, MS_PLAN_INFER, NULL, NULL};
    g_autoptr(MsSchedule) s = ms_policy_plan(p, &in, &error);
    g_assert_no_error(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    guint64 eb = ms_model_expert_params(m) * 2;
    g_autofree char *want = g_strdup_printf("%" G_GUINT64_FORMAT, 2 * 4 * eb);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "lina.host_bytes"), want);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "lina.host_late_bytes"), want);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "lina.weights"), "host");
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "lina.host_link"), "1e+10 B/s, host_bw");
    guint host = G_MAXUINT;
    for (guint k = 0; k < ms_schedule_n_streams(s); k++) {
        host = strcmp(ms_schedule_stream_name(s, k), "host") == 0 ? k : host;
    }
    CU_ASSERT_NOT_EQUAL_FATAL(host, G_MAXUINT);
    g_autoptr(MsRecords) rec = NULL;
    MsEngineOptions opts = {.check_invariants = TRUE};
    rec = ms_engine_run(s, t, &opts, &error);
    g_assert_no_error(error);
    guint loads = 0;
    MsTime expect = ms_time_from_us(4) + ms_time_from_s((double)eb / 10e9);
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        MsOpInfo i = fx_op(s, op);
        if (i.stream != host) {
            continue;
        }
        loads++;
        CU_ASSERT_EQUAL(i.role, MS_ROLE_WEIGHTS);
        MsTime took = ms_records_end(rec, op) - ms_records_start(rec, op);
        CU_ASSERT_TRUE(took >= expect - 2 && took <= expect + 2);
    }
    CU_ASSERT_EQUAL(loads, 8); /* 4 GPUs x 2 layers */
    MsTime cold = makespan(s, rec);
    /* Warm: the batch's uses put into a cache, then planned again. */
    g_autoptr(MsExpertCache) cache = ms_lina_infer_cache_new(p, &in, 4, &error);
    g_assert_no_error(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cache);
    CU_ASSERT_TRUE(ms_lina_infer_learn(p, &in, cache, &error));
    in.cache = cache;
    g_autoptr(MsSchedule) warm = ms_policy_plan(p, &in, &error);
    g_assert_no_error(error);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(warm, "lina.host_bytes"), "0");
    g_autoptr(MsRecords) wrec = ms_engine_run(warm, t, &opts, &error);
    g_assert_no_error(error);
    CU_ASSERT_TRUE(makespan(warm, wrec) + 2 * expect <= cold + 4);
    /* Caches of no expert: every use loads, batch after batch. */
    g_autoptr(MsPolicy) none =
        ms_policy_parse("lina:placement=static,weights=host,host_bw=10GBps,cache=1B", &error);
    g_autoptr(MsExpertCache) empty = ms_lina_infer_cache_new(none, &in, 4, &error);
    CU_ASSERT_TRUE(ms_lina_infer_learn(none, &in, empty, &error));
    in.cache = empty;
    g_autoptr(MsSchedule) again = ms_policy_plan(none, &in, &error);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(again, "lina.host_bytes"), want);
    /* Other modes keep no cache. */
    g_autoptr(MsPolicy) res = ms_policy_parse("lina:weights=resident", &error);
    CU_ASSERT_PTR_NULL(ms_lina_infer_cache_new(res, &in, 4, &error));
    g_assert_no_error(error);
}

/* Through a scenario on the same inputs: the planner's cache carries over, so only the first
 * of three identical batches loads, and a warm-up batch warms it. Dynamic placement works alike
 * (its loads come ahead of the layer). */
static void
test_scenario(void)
{
    g_autofree char *model = ms_test_write_tmp("h.ini", model_text);
    g_autofree char *topo = ms_test_write_tmp("bare.ini", bare);
    g_autofree char *trace = ms_test_write_tmp("t.trace", "");
    {
        /* Three copies of the batch. */
        GString *text = g_string_new("moe-trace 1\nexperts 4\nlayers 2\nranks 4\ntop_k 1\n");
        for (guint it = 0; it < 3; it++) {
            for (guint k = 0; k < 32; k++) {
                g_string_append_printf(text, "t %u %u %u %u %u\n", it, k, k / 8, k % 4, k % 4);
            }
        }
        g_file_set_contents(trace, text->str, -1, NULL);
        g_string_free(text, TRUE);
    }
    static const char *const policies[] = {
        "lina:placement=static,weights=host,host_bw=10GBps",
        "lina:weights=host,host_bw=10GBps",
    };
    for (guint i = 0; i < G_N_ELEMENTS(policies); i++) {
        MsInputNames names = {
            .topology = topo, .model = model, .policy = policies[i], .trace = trace};
        GError *error = NULL;
        g_autoptr(MsInputs) in = ms_inputs_load(&names, &error);
        g_assert_no_error(error);
        g_autoptr(MsRunner) engine = ms_engine_runner_new(&(MsEngineOptions){0});
        MsScenario sc = {.mode = MS_PLAN_INFER};
        ms_inputs_fill(in, &sc);
        sc.runner = engine;
        g_autoptr(MsResult) all = ms_scenario_run(&sc, &error);
        g_assert_no_error(error);
        CU_ASSERT_EQUAL_FATAL(ms_result_n_iterations(all), 3);
        double t0 = ms_result_iteration(all, 0)->step_us, t1 = ms_result_iteration(all, 1)->step_us,
               t2 = ms_result_iteration(all, 2)->step_us;
        CU_ASSERT_TRUE(t1 < t0);
        CU_ASSERT_DOUBLE_EQUAL(t2, t1, 1e-9);
        sc.warmup = 1;
        sc.iterations = 2;
        g_autoptr(MsResult) warm = ms_scenario_run(&sc, &error);
        g_assert_no_error(error);
        CU_ASSERT_DOUBLE_EQUAL(ms_result_iteration(warm, 0)->step_us, t1, 1e-9);
    }
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"the host link: given, topology route, PCIe link, GPU model", test_link},
        {"the cache's size", test_capacity},
        {"one layer's loads ahead and after the gate", test_layer},
        {"loads as ops timed at bytes / host_bw; a warm cache loads nothing", test_plan_loads},
        {"the cache carries over batches and warm-up", test_scenario},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"lina_host", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
