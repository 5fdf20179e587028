/* Tests of routing_source: a trace spec kept as given, the generator's defaults for a model and
 * a topology (shape, the documented skew, no skew when every token picks every expert), keys
 * that override them (the last one winning), sources derived with one more key, and every
 * refused item. */
#include "ms_test.h"
#include "sim/routing_source.h"

static MsModel *
model(const char *text)
{
    MsModel *m = ms_model_load_data(text, strlen(text), "m.ini", NULL);
    g_assert(m != NULL);
    return m;
}

/* 4 MoE layers of 8 experts, top-2 in training, top-1 in inference. */
static const char eight[] = "[model]\nformat = 1\nname = eight\nlayers = 4\nd_model = 64\n"
                            "d_ffn = 64\nexperts = 8\ntop_k = 2\ntop_k_infer = 1\nheads = 1\n"
                            "seq_len = 8\ntokens_per_gpu = 96\ntokens_per_gpu_infer = 24\n";
/* 2 experts, both picked by every token. */
static const char pair[] = "[model]\nformat = 1\nname = pair\nlayers = 2\nd_model = 64\n"
                           "d_ffn = 64\nexperts = 2\ntop_k = 2\nheads = 1\nseq_len = 8\n"
                           "tokens_per_gpu = 8\n";

static void
test_trace(void)
{
    GError *error = NULL;
    g_autoptr(MsRoutingSource) src = ms_routing_source_new("runs/a.trace", &error);
    g_assert_no_error(error);
    CU_ASSERT_FALSE(ms_routing_source_generated(src));
    CU_ASSERT_STRING_EQUAL(ms_routing_source_spec(src), "runs/a.trace");
    g_autofree char *d = ms_routing_source_describe(src, NULL, &error);
    CU_ASSERT_STRING_EQUAL(d, "runs/a.trace");
    g_autoptr(MsRoutingSource) sample = ms_routing_source_new("sample:default", &error);
    CU_ASSERT_FALSE(ms_routing_source_generated(sample));
}

static void
test_defaults(void)
{
    GError *error = NULL;
    g_autoptr(MsModel) m = model(eight);
    g_autoptr(MsTopology) t = ms_topology_load("dgx-a100-2node", NULL);
    g_autoptr(MsRoutingSource) src = ms_routing_source_new(NULL, &error);
    g_assert_no_error(error);
    CU_ASSERT_TRUE(ms_routing_source_generated(src));
    CU_ASSERT_PTR_NULL(ms_routing_source_spec(src));
    MsRoutingShape shape = {m, t, MS_PLAN_TRAIN, 3, 0};
    MsTraceGenParams p;
    CU_ASSERT_TRUE_FATAL(ms_routing_source_gen_params(src, &shape, &p, &error));
    CU_ASSERT_EQUAL(p.ranks, 16);
    CU_ASSERT_EQUAL(p.experts, 8);
    CU_ASSERT_EQUAL(p.layers, 4);
    CU_ASSERT_EQUAL(p.top_k, 2);
    CU_ASSERT_EQUAL(p.tokens, 96);
    CU_ASSERT_EQUAL(p.iterations, 3);
    CU_ASSERT_EQUAL(p.seed, 1); /* seed 0 is seed 1 */
    /* The hottest expert at 1.5x the mean load: 1.5 / 8 of a layer's choices. */
    CU_ASSERT_EQUAL(p.skew, MS_TRACE_GEN_SKEW_HOT);
    CU_ASSERT_DOUBLE_EQUAL(p.hot, 1.5 / 8, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(p.corr, 0.5, 0);
    CU_ASSERT_DOUBLE_EQUAL(p.drift, 0.02, 0);
    /* Inference takes top_k_infer and the batch's tokens; the share is capped below 1 / top_k. */
    shape.mode = MS_PLAN_INFER;
    shape.seed = 9;
    CU_ASSERT_TRUE_FATAL(ms_routing_source_gen_params(src, &shape, &p, &error));
    CU_ASSERT_EQUAL(p.top_k, 1);
    CU_ASSERT_EQUAL(p.tokens, 24);
    CU_ASSERT_EQUAL(p.seed, 9);
    g_autofree char *spec = ms_routing_source_describe(src, &shape, &error);
    CU_ASSERT_STRING_EQUAL(spec, "gen:ranks=16,experts=8,layers=4,top_k=1,tokens=24,iterations=3,"
                                 "hot=0.1875,corr=0.5,drift=0.02,seed=9,records=tokens");
    /* Every token picks both experts: no skew is possible, so none is asked for. */
    g_autoptr(MsModel) two = model(pair);
    MsRoutingShape flat = {two, t, MS_PLAN_TRAIN, 1, 1};
    CU_ASSERT_TRUE_FATAL(ms_routing_source_gen_params(src, &flat, &p, &error));
    CU_ASSERT_EQUAL(p.skew, MS_TRACE_GEN_SKEW_ZIPF);
    CU_ASSERT_DOUBLE_EQUAL(p.zipf, 0, 0);
}

static void
test_overrides(void)
{
    GError *error = NULL;
    g_autoptr(MsModel) m = model(eight);
    g_autoptr(MsTopology) t = ms_topology_load("dgx-a100", NULL);
    MsRoutingShape shape = {m, t, MS_PLAN_TRAIN, 1, 1};
    g_autoptr(MsRoutingSource) src =
        ms_routing_source_new("gen: zipf = 2 ,tokens=10,tokens=12", &error);
    g_assert_no_error(error);
    CU_ASSERT_STRING_EQUAL(ms_routing_source_spec(src), "gen: zipf = 2 ,tokens=10,tokens=12");
    MsTraceGenParams p;
    CU_ASSERT_TRUE_FATAL(ms_routing_source_gen_params(src, &shape, &p, &error));
    CU_ASSERT_EQUAL(p.skew, MS_TRACE_GEN_SKEW_ZIPF);
    CU_ASSERT_DOUBLE_EQUAL(p.zipf, 2, 0);
    CU_ASSERT_EQUAL(p.tokens, 12);
    CU_ASSERT_EQUAL(p.ranks, 8);
    /* A derived source adds a key after the others; the original is unchanged. */
    g_autoptr(MsRoutingSource) hot = ms_routing_source_with(src, "hot", "0.3", &error);
    g_assert_no_error(error);
    CU_ASSERT_STRING_EQUAL(ms_routing_source_spec(hot),
                           "gen: zipf = 2 ,tokens=10,tokens=12,hot=0.3");
    CU_ASSERT_TRUE_FATAL(ms_routing_source_gen_params(hot, &shape, &p, &error));
    CU_ASSERT_EQUAL(p.skew, MS_TRACE_GEN_SKEW_HOT);
    CU_ASSERT_DOUBLE_EQUAL(p.hot, 0.3, 0);
    CU_ASSERT_TRUE_FATAL(ms_routing_source_gen_params(src, &shape, &p, &error));
    CU_ASSERT_EQUAL(p.skew, MS_TRACE_GEN_SKEW_ZIPF);
    g_autoptr(MsRoutingSource) dflt = ms_routing_source_new("gen:", &error);
    g_autoptr(MsRoutingSource) one = ms_routing_source_with(dflt, "corr", "0.9", &error);
    CU_ASSERT_STRING_EQUAL(ms_routing_source_spec(one), "gen:corr=0.9");
}

/* A model's node-limited routing: 16 experts in one group over 16 GPUs on two nodes (experts
 * 0-7 on node 0, 8-15 on node 1), each token's experts on one of them in training; nothing when
 * the group's nodes are within the limit, or in inference. */
static void
test_node_limit(void)
{
    static const char text[] = "[model]\nformat = 1\nname = nl\nlayers = 2\nd_model = 64\n"
                               "d_ffn = 64\nexperts = 16\ntop_k = 4\nheads = 1\nseq_len = 8\n"
                               "tokens_per_gpu = 8\nmax_nodes = ";
    GError *error = NULL;
    g_autoptr(MsTopology) t = ms_topology_load("dgx-a100-2node", NULL);
    g_autoptr(MsRoutingSource) src = ms_routing_source_new(NULL, &error);
    g_assert_no_error(error);
    static const struct {
        const char *max;
        MsPlanMode mode;
        guint expert_nodes, max_nodes;
    } cases[] = {{"1\n", MS_PLAN_TRAIN, 2, 1},
                 {"2\n", MS_PLAN_TRAIN, 0, 0},
                 {"1\n", MS_PLAN_INFER, 0, 0},
                 {"1\nep = 8\n", MS_PLAN_TRAIN, 0, 0}};
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *full = g_strconcat(text, cases[i].max, NULL);
        g_autoptr(MsModel) m = model(full);
        MsRoutingShape shape = {m, t, cases[i].mode, 1, 1};
        MsTraceGenParams p;
        CU_ASSERT_TRUE_FATAL(ms_routing_source_gen_params(src, &shape, &p, &error));
        CU_ASSERT_EQUAL(p.expert_nodes, cases[i].expert_nodes);
        CU_ASSERT_EQUAL(p.max_nodes, cases[i].max_nodes);
    }
}

static void
test_errors(void)
{
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_routing_source_new("gen:hot=0.2,zipf", &error));
    MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_KEY, "'zipf' is not KEY=VALUE");
    CU_ASSERT_PTR_NULL(ms_routing_source_new("gen:hott=0.2", &error));
    MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_KEY, "hott");
    CU_ASSERT_PTR_NULL(ms_routing_source_new("gen:corr=2", &error));
    MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE, "corr");
    g_autoptr(MsRoutingSource) src = ms_routing_source_new(NULL, &error);
    CU_ASSERT_PTR_NULL(ms_routing_source_with(src, "drift", "x", &error));
    MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE, "drift");
    /* Keys that parse alone but not with this model: found with the shape. */
    g_autoptr(MsModel) m = model(eight);
    g_autoptr(MsTopology) t = ms_topology_load("dgx-a100", NULL);
    MsRoutingShape shape = {m, t, MS_PLAN_TRAIN, 1, 1};
    g_autoptr(MsRoutingSource) wide = ms_routing_source_new("gen:top_k=9", &error);
    g_assert_no_error(error);
    MsTraceGenParams p;
    CU_ASSERT_FALSE(ms_routing_source_gen_params(wide, &shape, &p, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_CONFLICT, "top_k");
    CU_ASSERT_PTR_NULL(ms_routing_source_describe(wide, &shape, &error));
    CU_ASSERT_PTR_NOT_NULL(error);
    g_clear_error(&error);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"trace files and samples", test_trace},
        {"the generator's defaults for a model and a topology", test_defaults},
        {"keys given override them", test_overrides},
        {"the model's node-limited routing", test_node_limit},
        {"refused items", test_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"routing_source", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
