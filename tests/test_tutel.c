/* Tests of tutel: r chunks per MoE layer with every dispatch issued before the first expert
 * (Tutel's a2a_ffn_overlap_forward), the adaptive degree (the same the metadata reports, 1 where
 * the all-to-all is nothing beside the experts, more where they balance), Tutel's capacity (the
 * model's rule, or every buffer padded to the largest count when the model is dropless), the 2DH
 * all-to-all and the conflicts. */
#include "plan_fixture.h"
#include "sim/net/collective.h"

static const char dropless[] = "[model]\nformat = 1\nname = tu\nlayers = 2\nd_model = 1024\n"
                               "d_ffn = 4096\nexperts = 16\ntop_k = 2\ntop_k_infer = 2\n"
                               "heads = 8\nseq_len = 512\ntokens_per_gpu = 4096\n"
                               "grad_bucket = 25MiB\n";

/* 512 tokens per rank, top-2: expert 0 gets 184 choices from every rank, the others 56. */
static guint32
skewed(guint layer, guint src, guint e)
{
    return e == 0 ? 184 : 56;
}

static guint32
two(guint layer, guint src, guint e)
{
    return 2;
}

static guint32
even(guint layer, guint src, guint e)
{
    return 512;
}

static MsSchedule *
plan(const char *model, const char *topo, FxCountFn counts, const char *spec, GError **error)
{
    g_autoptr(MsModel) m = fx_model(model);
    g_autoptr(MsTopology) t = fx_topo(topo);
    guint n = ms_topology_n_gpus(t);
    g_autoptr(MsRouting) r = fx_routing(2, n, 16, 2, counts);
    g_autoptr(MsPolicy) p = ms_policy_parse(spec, error);
    if (p == NULL) {
        return NULL;
    }
    MsPolicyInput in = {m, r, t, MS_PLAN_TRAIN, NULL};
    return ms_policy_plan(p, &in, error);
}

static MsSchedule *
plan_ok(const char *model, const char *topo, FxCountFn counts, const char *spec)
{
    GError *error = NULL;
    MsSchedule *s = plan(model, topo, counts, spec, &error);
    g_assert_no_error(error);
    return s;
}

/* Chunks of layer's forward dispatch. */
static guint
dispatch_chunks(const MsSchedule *s, gint layer)
{
    g_autoptr(GArray) c = fx_colls(s, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, layer);
    return c->len;
}

static void
test_degree_and_order(void)
{
    g_autoptr(MsSchedule) s = plan_ok(dropless, "lina-testbed", even, "tutel:r=4");
    CU_ASSERT_EQUAL(dispatch_chunks(s, 0), 4);
    CU_ASSERT_EQUAL(dispatch_chunks(s, 1), 4);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "tutel.r"), "4,4");
    /* Rank 0's program (ops in creation order): all four dispatch chunks of a layer, then the
     * experts and combines. */
    guint n = 0, seen_expert = 0, dispatch_after = 0;
    const guint32 *ops = ms_schedule_rank_ops(s, 0, &n);
    for (guint k = 0; k < n; k++) {
        MsOpInfo i = fx_op(s, ops[k]);
        if (i.layer != 0 || i.phase != MS_PHASE_FORWARD) {
            continue;
        }
        if (i.role == MS_ROLE_EXPERT) {
            seen_expert++;
        } else if (i.role == MS_ROLE_DISPATCH && seen_expert > 0) {
            dispatch_after++;
        }
    }
    CU_ASSERT_EQUAL(seen_expert, 4);
    CU_ASSERT_EQUAL(dispatch_after, 0);
}

static void
test_adaptive(void)
{
    /* Where a chunk's transfer takes less than a kernel launch (one NVSwitch node, 2 tokens per
     * pair of 128 bytes), every further chunk costs a launch more than it hides: r = 1. */
    static const char tiny[] = "[model]\nformat = 1\nname = tiny\nlayers = 2\nd_model = 64\n"
                               "d_ffn = 256\nexperts = 16\ntop_k = 2\ntop_k_infer = 2\n"
                               "heads = 4\nseq_len = 16\ntokens_per_gpu = 16\n";
    g_autoptr(MsSchedule) h = plan_ok(tiny, "dgx-a100", two, "tutel");
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(h, "tutel.r"), "1,1");
    /* Across lina-testbed's NICs the all-to-all and the experts are comparable: it pipelines,
     * and the chunks used are those the metadata reports. */
    g_autoptr(MsSchedule) s = plan_ok(dropless, "lina-testbed", even, "tutel");
    const char *r = ms_schedule_get_meta(s, "tutel.r");
    g_auto(GStrv) parts = g_strsplit(r, ",", -1);
    CU_ASSERT_EQUAL_FATAL(g_strv_length(parts), 2);
    for (guint l = 0; l < 2; l++) {
        guint deg = (guint)g_ascii_strtoull(parts[l], NULL, 10);
        CU_ASSERT(deg > 1);
        CU_ASSERT_EQUAL(dispatch_chunks(s, (gint)l), deg);
    }
}

static void
test_capacity_and_2dh(void)
{
    /* Dropless model: every pair padded to the largest count, expert 0's 184. */
    g_autoptr(MsSchedule) s = plan_ok(dropless, "lina-testbed", skewed, "tutel:r=1");
    g_autoptr(GArray) c = fx_colls(s, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0);
    MsCollInfo ci;
    ms_schedule_coll(s, g_array_index(c, guint32, 0), &ci);
    CU_ASSERT_EQUAL(ci.algo, MS_COLL_ALGO_2DH);
    guint64 slots = skewed(0, 0, 0);
    CU_ASSERT_EQUAL(ci.matrix[1 * 16 + 0], slots * 1024 * 2);
    CU_ASSERT_EQUAL(ci.matrix[1 * 16 + 7], slots * 1024 * 2);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "dropped_tokens"), "0");
    /* The model's capacity 1.0: top_k x floor(1.0 x ceil(512 / 16)) = 64 slots per pair. */
    g_autofree char *capped = g_strconcat(dropless, "capacity_factor = 1.0\n", NULL);
    g_autoptr(MsSchedule) k = plan_ok(capped, "lina-testbed", skewed, "tutel:r=1,use_2dh=false");
    g_autoptr(GArray) kc = fx_colls(k, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0);
    ms_schedule_coll(k, g_array_index(kc, guint32, 0), &ci);
    CU_ASSERT_EQUAL(ci.algo, MS_COLL_ALGO_DIRECT);
    CU_ASSERT_EQUAL(ci.matrix[1 * 16 + 0], 64 * 1024 * 2);
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(
        plan(dropless, "lina-testbed", even, "tutel:a2a=direct,use_2dh=true", &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE,
                    "policy tutel: give either a2a or use_2dh, not both");
    CU_ASSERT_PTR_NULL(plan(dropless, "lina-testbed", even, "tutel:r=65", &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE, "r=65");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"degree and order", test_degree_and_order},
        {"adaptive degree", test_adaptive},
        {"capacity, 2DH and errors", test_capacity_and_2dh},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"tutel", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
