/* Tests of fastermoe: the shadowing decision against the latency model of shadow_policy.py
 * (closed form: shadow the hottest expert exactly when its excess load costs more than moving its
 * parameters), shadowed experts' tokens staying on their source, their weights broadcast along a
 * ring and their gradients reduced back, the group-wise exchange (chunk c = the group c further
 * on, the chunks adding up to the whole), one coalesced dense allreduce after backward, and the
 * inputs it refuses. */
#include "plan_fixture.h"
#include "sim/net/collective.h"

/* d_model 64, d_ffn 256, bf16: per token 3 x comp + 4 x feature = 3 x 4 x 64 x 256 / gemm + 4 x
 * 64 x 2 / net; an expert's parameters 2 x 64 x 256 x 2 bytes cost that over net. */
static const char model_text[] = "[model]\nformat = 1\nname = fm\nlayers = 2\nd_model = 64\n"
                                 "d_ffn = 256\nexperts = 16\ntop_k = 2\ntop_k_infer = 2\n"
                                 "heads = 4\nseq_len = 32\ntokens_per_gpu = 32\n"
                                 "grad_bucket = 64KiB\n";

static guint32 hot_x = 20;

/* Every rank: hot_x choices for expert 0, 2 for the others (hot_x + 30 is even). */
static guint32
hot(guint layer, guint src, guint e)
{
    return e == 0 ? hot_x : 2;
}

static MsSchedule *
plan(const char *spec, MsPlanMode mode, guint experts, GError **error)
{
    g_autofree char *text = g_strdup(model_text);
    if (experts != 16) {
        g_free(text);
        text = g_strdup_printf("[model]\nformat = 1\nname = fm\nlayers = 2\nd_model = 64\n"
                               "d_ffn = 256\nexperts = %u\ntop_k = 2\nheads = 4\nseq_len = 32\n"
                               "tokens_per_gpu = 32\n",
                               experts);
    }
    g_autoptr(MsModel) m = fx_model(text);
    g_autoptr(MsTopology) t = fx_topo("lina-testbed");
    g_autoptr(MsRouting) r = fx_routing(2, 16, experts, 2, hot);
    g_autoptr(MsPolicy) p = ms_policy_parse(spec, error);
    if (p == NULL) {
        return NULL;
    }
    MsPolicyInput in = {m, r, t, mode, NULL};
    return ms_policy_plan(p, &in, error);
}

static MsSchedule *
plan_ok(const char *spec)
{
    GError *error = NULL;
    MsSchedule *s = plan(spec, MS_PLAN_TRAIN, 16, &error);
    g_assert_no_error(error);
    return s;
}

static void
test_shadow_decision(void)
{
    /* With net 1 GB/s and 1 TFLOPS: a token costs 3 x 65536e-12 + 4 x 128e-9 = 7.09e-7 s and an
     * expert's parameters 65536 / 1e9 = 6.55e-5 s: expert 0 is shadowed when its load exceeds
     * the next one's by more than 92.4 tokens, 5.77 per rank. */
    const char *spec = "fastermoe:net_bw=1,gemm_tflops=1";
    hot_x = 20; /* 16 x (20 - 2) = 288 more tokens: shadowed, then nothing (all others equal) */
    g_autoptr(MsSchedule) a = plan_ok(spec);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(a, "fastermoe.shadowed"), "1,1");
    hot_x = 6; /* 16 x 4 = 64: not worth it */
    g_autoptr(MsSchedule) b = plan_ok(spec);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(b, "fastermoe.shadowed"), "0,0");
    hot_x = 8; /* 16 x 6 = 96: just worth it */
    g_autoptr(MsSchedule) c = plan_ok(spec);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(c, "fastermoe.shadowed"), "1,1");
    hot_x = 20;
    g_autoptr(MsSchedule) off = plan_ok("fastermoe:shadow=false");
    CU_ASSERT_PTR_NULL(ms_schedule_get_meta(off, "fastermoe.shadowed"));
}

static void
test_shadow_traffic(void)
{
    hot_x = 20;
    g_autoptr(MsSchedule) s = plan_ok("fastermoe:net_bw=1,gemm_tflops=1,smart=false");
    /* Expert 0 lives on rank 0: shadowed, nobody sends it anything (every rank keeps its 20
     * tokens); the other experts get theirs as routed. */
    g_autoptr(GArray) d = fx_colls(s, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0);
    CU_ASSERT_EQUAL_FATAL(d->len, 1);
    MsCollInfo ci;
    ms_schedule_coll(s, g_array_index(d, guint32, 0), &ci);
    CU_ASSERT_EQUAL(ci.algo, MS_COLL_ALGO_DIRECT);
    for (guint src = 1; src < 16; src++) {
        CU_ASSERT_EQUAL(ci.matrix[(gsize)src * 16 + 0], 0);
        CU_ASSERT_EQUAL(ci.matrix[(gsize)src * 16 + src % 15 + 1], 2 * 64 * 2);
    }
    /* Its weights go round the ring 0 -> 1 -> ... -> 15 before layer 0's experts, and its
     * gradients come back 15 -> 14 -> ... -> 0 after them. */
    guint64 bytes = 2 * 64 * 256 * 2;
    g_autoptr(GArray) w = fx_colls(s, MS_ROLE_WEIGHTS, MS_PHASE_FORWARD, 0);
    g_autoptr(GArray) g = fx_colls(s, MS_ROLE_WEIGHTS, MS_PHASE_BACKWARD, 0);
    CU_ASSERT_EQUAL_FATAL(w->len, 1);
    CU_ASSERT_EQUAL_FATAL(g->len, 1);
    MsCollInfo wi, gi;
    ms_schedule_coll(s, g_array_index(w, guint32, 0), &wi);
    ms_schedule_coll(s, g_array_index(g, guint32, 0), &gi);
    guint64 sent = 0;
    for (guint i = 0; i < 16 * 16; i++) {
        sent += wi.matrix[i];
    }
    CU_ASSERT_EQUAL(sent, 15 * bytes);
    for (guint r = 0; r < 15; r++) {
        CU_ASSERT_EQUAL(wi.matrix[(gsize)r * 16 + r + 1], bytes);
        CU_ASSERT_EQUAL(gi.matrix[(gsize)(r + 1) * 16 + r], bytes);
    }
    CU_ASSERT_STRING_EQUAL(ms_schedule_stream_name(s, fx_op(s, wi.ops[0]).stream), "weights");
    /* Rank 3's first forward expert op of layer 0 waits for the broadcast. */
    gboolean waits = FALSE;
    guint n = 0;
    const guint32 *ops = ms_schedule_rank_ops(s, 3, &n);
    for (guint k = 0; k < n; k++) {
        MsOpInfo i = fx_op(s, ops[k]);
        if (i.role == MS_ROLE_EXPERT && i.layer == 0 && i.phase == MS_PHASE_FORWARD) {
            guint nd = 0;
            const guint32 *deps = ms_schedule_op_deps(s, ops[k], &nd);
            for (guint x = 0; x < nd; x++) {
                waits = waits || deps[x] == wi.ops[3];
            }
        }
    }
    CU_ASSERT_TRUE(waits);
}

static void
test_smart_schedule(void)
{
    hot_x = 20;
    g_autoptr(MsSchedule) s = plan_ok("fastermoe:shadow=false");
    g_autoptr(GArray) d = fx_colls(s, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0);
    CU_ASSERT_EQUAL_FATAL(d->len, 4); /* 16 workers in groups of 4 */
    g_autofree guint64 *sum = g_new0(guint64, 16 * 16);
    for (guint c = 0; c < 4; c++) {
        MsCollInfo ci;
        ms_schedule_coll(s, g_array_index(d, guint32, c), &ci);
        for (guint src = 0; src < 16; src++) {
            for (guint dst = 0; dst < 16; dst++) {
                guint64 x = ci.matrix[(gsize)src * 16 + dst];
                sum[src * 16 + dst] += x;
                if (x) {
                    CU_ASSERT_EQUAL((dst / 4 + 4 - src / 4) % 4, c);
                }
            }
        }
    }
    for (guint src = 0; src < 16; src++) {
        CU_ASSERT_EQUAL(sum[src * 16 + 0], 20 * 64 * 2);
        CU_ASSERT_EQUAL(sum[src * 16 + 9], 2 * 64 * 2);
    }
    /* One coalesced dense allreduce, once backward is done. */
    guint dense = 0;
    for (guint32 c = 0; c < ms_schedule_n_colls(s); c++) {
        MsCollInfo ci;
        ms_schedule_coll(s, c, &ci);
        dense += ci.kind == MS_COLL_KIND_ALLREDUCE;
    }
    CU_ASSERT_EQUAL(dense, 1);
    /* group=16 leaves one group: no pipelining. */
    g_autoptr(MsSchedule) one = plan_ok("fastermoe:shadow=false,group=16");
    g_autoptr(GArray) d1 = fx_colls(one, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0);
    CU_ASSERT_EQUAL(d1->len, 1);
}

static void
test_errors(void)
{
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(plan("fastermoe", MS_PLAN_TRAIN, 24, &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_INPUT,
                    "policy fastermoe puts the same number of experts on every GPU: the model's "
                    "24 experts do not divide over 16 GPUs");
    g_autoptr(MsSchedule) two = plan("fastermoe", MS_PLAN_TRAIN, 32, &error);
    g_assert_no_error(error);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(two, "ep"), "16");
    CU_ASSERT_PTR_NULL(plan("fastermoe", MS_PLAN_INFER, 16, &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_INPUT,
                    "policy fastermoe does not plan inference");
    CU_ASSERT_PTR_NULL(plan("fastermoe:group=0", MS_PLAN_TRAIN, 16, &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE, "group=0");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"shadowing decision", test_shadow_decision},
        {"shadowed traffic, weights and gradients", test_shadow_traffic},
        {"smart scheduling and the dense allreduce", test_smart_schedule},
        {"inputs refused", test_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"fastermoe", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
