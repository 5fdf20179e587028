/* Tests of deepspeed: DeepSpeed's capacity (ceil(T / E x k x factor), at least min_capacity) with
 * every pair padded to it and the overflow dropped, drop_tokens=false padding to the largest
 * count, the inference factor, the hierarchical all-to-all by default, the two streams, expert
 * gradients among the replicas of an expert, and the parameter conflicts. */
#include "plan_fixture.h"
#include "sim/net/collective.h"

/* 16 experts, top-2, 32 tokens per rank: expert 0 gets 34 choices from every rank, the others 2. */
static const char model_text[] = "[model]\nformat = 1\nname = ds\nlayers = 2\nd_model = 64\n"
                                 "d_ffn = 128\nexperts = 16\ntop_k = 2\ntop_k_infer = 2\n"
                                 "heads = 4\nseq_len = 32\ntokens_per_gpu = 32\n"
                                 "grad_bucket = 1MiB\n";

static guint32
skewed(guint layer, guint src, guint e)
{
    return e == 0 ? 34 : 2;
}

static MsSchedule *
plan(const char *model, const char *spec, MsPlanMode mode, GError **error)
{
    g_autoptr(MsModel) m = fx_model(model);
    g_autoptr(MsTopology) t = fx_topo("lina-testbed");
    g_autoptr(MsRouting) r = fx_routing(2, 16, 16, 2, skewed);
    g_autoptr(MsPolicy) p = ms_policy_parse(spec, error);
    if (p == NULL) {
        return NULL;
    }
    MsPolicyInput in = {m, r, t, mode, NULL};
    return ms_policy_plan(p, &in, error);
}

static MsSchedule *
plan_ok(const char *spec, MsPlanMode mode)
{
    GError *error = NULL;
    MsSchedule *s = plan(model_text, spec, mode, &error);
    g_assert_no_error(error);
    return s;
}

/* The token slots rank src sends rank dst in the first forward dispatch. */
static guint64
dispatch_slots(const MsSchedule *s, guint src, guint dst, guint8 *algo)
{
    g_autoptr(GArray) c = fx_colls(s, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0);
    MsCollInfo ci;
    ms_schedule_coll(s, g_array_index(c, guint32, 0), &ci);
    *algo = ci.algo;
    return ci.matrix[(gsize)src * ci.n_ranks + dst] / (64 * 2);
}

static void
test_capacity(void)
{
    guint8 algo = 0;
    /* C = ceil(32 / 16 x 2 x 1.0) = 4: every pair carries 4 slots, expert 0 drops 30 per rank
     * in each of the 2 layers. */
    g_autoptr(MsSchedule) s = plan_ok("deepspeed", MS_PLAN_TRAIN);
    CU_ASSERT_EQUAL(dispatch_slots(s, 1, 0, &algo), 4);
    CU_ASSERT_EQUAL(dispatch_slots(s, 1, 5, &algo), 4);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "dropped_tokens"), "960");
    CU_ASSERT_EQUAL(algo, MS_COLL_ALGO_2DH);
    /* min_capacity raises C to 8. */
    g_autoptr(MsSchedule) m = plan_ok("deepspeed:min_capacity=8", MS_PLAN_TRAIN);
    CU_ASSERT_EQUAL(dispatch_slots(m, 3, 2, &algo), 8);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(m, "dropped_tokens"), "832");
    /* Factor 2.5: C = ceil(2 x 2 x 2.5) = 10. */
    g_autoptr(MsSchedule) f = plan_ok("deepspeed:capacity_factor=2.5", MS_PLAN_TRAIN);
    CU_ASSERT_EQUAL(dispatch_slots(f, 3, 2, &algo), 10);
    /* drop_tokens=false: C is the largest count over all ranks, 34, nothing dropped. */
    g_autoptr(MsSchedule) d = plan_ok("deepspeed:drop_tokens=false", MS_PLAN_TRAIN);
    CU_ASSERT_EQUAL(dispatch_slots(d, 7, 9, &algo), 34);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(d, "dropped_tokens"), "0");
    /* Inference takes eval_capacity_factor. */
    g_autoptr(MsSchedule) i = plan_ok("deepspeed:eval_capacity_factor=3", MS_PLAN_INFER);
    CU_ASSERT_EQUAL(dispatch_slots(i, 7, 9, &algo), 12);
    /* hierarchical=false and a2a=pipe choose the other all-to-alls. */
    g_autoptr(MsSchedule) flat = plan_ok("deepspeed:hierarchical=false", MS_PLAN_TRAIN);
    dispatch_slots(flat, 0, 1, &algo);
    CU_ASSERT_EQUAL(algo, MS_COLL_ALGO_DIRECT);
    g_autoptr(MsSchedule) pipe = plan_ok("deepspeed:a2a=pipe", MS_PLAN_TRAIN);
    dispatch_slots(pipe, 0, 1, &algo);
    CU_ASSERT_EQUAL(algo, MS_COLL_ALGO_PIPE);
}

static void
test_streams_and_replicas(void)
{
    g_autoptr(MsSchedule) s = plan_ok("deepspeed", MS_PLAN_TRAIN);
    CU_ASSERT_EQUAL(ms_schedule_n_streams(s), 3);
    CU_ASSERT_STRING_EQUAL(ms_schedule_stream_name(s, 2), "allreduce");
    /* ep 4: four replicas of every expert, whose gradients are allreduced among themselves. */
    g_autofree char *ep4 = g_strconcat(model_text, "ep = 4\n", NULL);
    GError *error = NULL;
    g_autoptr(MsSchedule) r = plan(ep4, "deepspeed", MS_PLAN_TRAIN, &error);
    g_assert_no_error(error);
    guint expert = 0, dense = 0;
    for (guint32 c = 0; c < ms_schedule_n_colls(r); c++) {
        MsCollInfo ci;
        ms_schedule_coll(r, c, &ci);
        if (ci.kind != MS_COLL_KIND_ALLREDUCE) {
            continue;
        }
        if (g_str_has_prefix(ci.label, "expert_grads")) {
            expert++;
            CU_ASSERT_EQUAL(ci.n_ranks, 4);
            /* The replicas of rank g's experts: g, g + 4, g + 8, g + 12. */
            CU_ASSERT_EQUAL(ci.ranks[1] - ci.ranks[0], 4);
            CU_ASSERT_EQUAL(fx_op(r, ci.ops[0]).stream, 2);
        } else {
            dense++;
            CU_ASSERT_EQUAL(ci.n_ranks, 16);
        }
    }
    CU_ASSERT_EQUAL(expert, 4); /* one bucket per group of ranks */
    CU_ASSERT(dense > 0);
}

static void
test_errors(void)
{
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(
        plan(model_text, "deepspeed:a2a=direct,hierarchical=true", MS_PLAN_TRAIN, &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE,
                    "policy deepspeed: give either a2a or hierarchical, not both");
    CU_ASSERT_PTR_NULL(plan(model_text, "deepspeed:capacity_factor=0", MS_PLAN_TRAIN, &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE, "capacity_factor=0");
    CU_ASSERT_PTR_NULL(plan(model_text, "deepspeed:drop=yes", MS_PLAN_TRAIN, &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_PARAM, "unknown parameter 'drop'");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"capacity, padding and dropping", test_capacity},
        {"streams and expert replicas", test_streams_and_replicas},
        {"parameter errors", test_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"deepspeed", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
