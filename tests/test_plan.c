/* Tests of plan: op counts per layer and rank, all-to-all bytes equal to the routing's matrix,
 * capacity padding and drop counts in closed form, gradient buckets, backward = 2 x forward
 * flops, chunking, expert-parallel groups, inference, and every error. */
#include "ms_test.h"
#include "sim/moe/plan.h"
#include "sim/net/collective.h"

/* 3 layers, the middle one MoE; 8 experts, top-2; d_model 64 in bf16 = 128-byte tokens. */
static const char model_text[] = "[model]\n"
                                 "format = 1\n"
                                 "name = t3\n"
                                 "layers = 3\n"
                                 "moe_layers = 1\n"
                                 "d_model = 64\n"
                                 "d_ffn = 128\n"
                                 "experts = 8\n"
                                 "top_k = 2\n"
                                 "top_k_infer = 1\n"
                                 "heads = 4\n"
                                 "seq_len = 16\n"
                                 "tokens_per_gpu = 16\n"
                                 "grad_bucket = 40000B\n";
#define TOKEN_BYTES 128

static MsModel *
model_with(const char *extra)
{
    g_autofree char *text = g_strconcat(model_text, extra ? extra : "", NULL);
    GError *error = NULL;
    MsModel *m = ms_model_load_data(text, strlen(text), "t3.ini", &error);
    g_assert_no_error(error);
    return m;
}

static MsTopology *
topo8(void)
{
    GError *error = NULL;
    MsTopology *t = ms_topology_load("dgx-a100", &error);
    g_assert_no_error(error);
    return t;
}

/* Tokens rank src routes to expert e: 2 x ((src + 2e) % 4 + 1), so even ranks route 16 tokens
 * (32 choices) and odd ranks 24 (48). */
static guint32
count_of(guint src, guint e, guint layer)
{
    return 2 * ((src + 2 * e + 2 * layer) % 4 + 1);
}

static MsRouting *
routing(guint layers, guint ranks, guint top_k)
{
    MsTraceHeader h;
    ms_trace_header_init(&h);
    h.experts = 8;
    h.layers = layers;
    h.ranks = ranks;
    h.top_k = top_k;
    GError *error = NULL;
    MsRouting *r = ms_routing_new(&h, 0, &error);
    g_assert_no_error(error);
    for (guint l = 0; l < layers; l++) {
        for (guint src = 0; src < ranks; src++) {
            for (guint e = 0; e < 8; e++) {
                ms_routing_add_count(r, l, src, e, count_of(src, e, 0) * top_k / 2, &error);
            }
        }
    }
    ms_routing_seal(r, &error);
    g_assert_no_error(error);
    return r;
}

static MsSchedule *
build(const MsModel *m, const MsRouting *r, MsPlanMode mode, const MsPlanConfig *cfg)
{
    g_autoptr(MsTopology) t = topo8();
    GError *error = NULL;
    MsSchedule *s = ms_plan_build(m, r, t, mode, cfg, &error);
    if (error) {
        fprintf(stderr, "\n  plan: %s\n", error->message);
        g_clear_error(&error);
    }
    return s;
}

static guint
count_ops(const MsSchedule *s, guint rank, gint layer, MsRole role, MsPhase phase)
{
    guint n = 0, k = 0;
    const guint32 *ops = ms_schedule_rank_ops(s, rank, &n);
    guint hits = 0;
    for (k = 0; k < n; k++) {
        MsOpInfo i;
        ms_schedule_op(s, ops[k], &i);
        hits += i.layer == layer && i.role == role && i.phase == phase;
    }
    return hits;
}

static void
test_op_counts(void)
{
    g_autoptr(MsModel) m = model_with(NULL);
    g_autoptr(MsRouting) r = routing(1, 8, 2);
    MsPlanConfig cfg;
    ms_plan_config_init(&cfg);
    g_autoptr(MsSchedule) s = build(m, r, MS_PLAN_TRAIN, &cfg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(ms_schedule_n_streams(s), 2);
    CU_ASSERT_STRING_EQUAL(ms_schedule_policy(s), "fifo");
    for (guint rank = 0; rank < 8; rank++) {
        for (MsPhase ph = MS_PHASE_FORWARD; ph <= MS_PHASE_BACKWARD; ph++) {
            CU_ASSERT_EQUAL(count_ops(s, rank, 0, MS_ROLE_ATTENTION, ph), 1);
            CU_ASSERT_EQUAL(count_ops(s, rank, 0, MS_ROLE_DENSE_FFN, ph), 1);
            CU_ASSERT_EQUAL(count_ops(s, rank, 1, MS_ROLE_ATTENTION, ph), 1);
            CU_ASSERT_EQUAL(count_ops(s, rank, 1, MS_ROLE_GATE, ph), 1);
            CU_ASSERT_EQUAL(count_ops(s, rank, 1, MS_ROLE_DISPATCH, ph), 1);
            CU_ASSERT_EQUAL(count_ops(s, rank, 1, MS_ROLE_EXPERT, ph), 1);
            CU_ASSERT_EQUAL(count_ops(s, rank, 1, MS_ROLE_COMBINE, ph), 1);
            CU_ASSERT_EQUAL(count_ops(s, rank, 1, MS_ROLE_DENSE_FFN, ph), 0);
            CU_ASSERT_EQUAL(count_ops(s, rank, 2, MS_ROLE_DENSE_FFN, ph), 1);
        }
    }
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "ep"), "8");
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "mode"), "train");
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "dropped_tokens"), "0");
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "model"), "t3");
    ms_plan_config_clear(&cfg);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"op counts per layer and rank", test_op_counts},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"plan", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
