/* Tests of lina_infer: the replicate-and-pack placement (smallest load bound, first-fit
 * decreasing, at most max_pack per GPU) in closed form, weight movements, the two phases as plan
 * configuration, and every error. */
#include "plan_fixture.h"
#include "sim/policy/lina_infer.h"

static void
expect_on(const MsPlacement *p, guint expert, const guint *ranks, guint n)
{
    guint got = 0;
    const guint *r = ms_placement_replicas(p, 0, expert, &got);
    CU_ASSERT_EQUAL_FATAL(got, n);
    for (guint k = 0; k < n; k++) {
        CU_ASSERT_EQUAL(r[k], ranks[k]);
    }
}

static void
test_place(void)
{
    /* total 16 over 4 GPUs. Below a bound of 4 nothing fits (expert 0 would need 3 GPUs and
     * expert 1 two); at 4, expert 0 (8) takes 2 GPUs and the rest pack first-fit decreasing
     * into {1} (4) and {2, 3, 4, 5} (4). Home (static): experts 0, 1 on GPU 0, 2 on 1, 3 and 4
     * on 2, 5 on 3: expert 0 keeps GPU 0 and takes 1; {1} gets 2; {2..5} gets 3, home of 5. */
    static const double load[] = {8, 4, 1, 1, 1, 1};
    g_autoptr(MsPlacement) home = ms_placement_new_static(4, 6);
    g_autoptr(MsPlacement) p = ms_lina_place(load, 6, 4, 4, home);
    expect_on(p, 0, (const guint[]){0, 1}, 2);
    expect_on(p, 1, (const guint[]){2}, 1);
    for (guint e = 2; e < 6; e++) {
        expect_on(p, e, (const guint[]){3}, 1);
    }
    /* At most 2 per GPU: with expert 0 on two GPUs the rest need 3 more ({1, 2}, {3, 4}, {5})
     * up to a bound of 8, where expert 0 fits one GPU: {0}, {1, 2}, {3, 4}, {5}. */
    g_autoptr(MsPlacement) two = ms_lina_place(load, 6, 4, 2, home);
    expect_on(two, 0, (const guint[]){0}, 1);
    CU_ASSERT_EQUAL(ms_placement_n_local(two, 1) + ms_placement_n_local(two, 2) +
                        ms_placement_n_local(two, 3),
                    5);
    CU_ASSERT_TRUE(ms_placement_complete(two));
    /* 10 of 12 over 8 GPUs: below a bound of 2 the others need two bins ({1, 0} and {1}), so
     * expert 0 gets 6 GPUs (bound 10 / 6); at 2 it would get 5 and the others one. */
    static const double hot[] = {10, 1, 1, 0};
    g_autoptr(MsPlacement) home4 = ms_placement_new_static(8, 4);
    g_autoptr(MsPlacement) h = ms_lina_place(hot, 4, 8, 4, home4);
    guint n = 0;
    ms_placement_replicas(h, 0, 0, &n);
    CU_ASSERT_EQUAL(n, 6);
    CU_ASSERT_TRUE(ms_placement_complete(h));
    /* Uniform loads of 8 experts on 16 GPUs: every expert popular, two GPUs each. */
    static const double flat[] = {1, 1, 1, 1, 1, 1, 1, 1};
    g_autoptr(MsPlacement) home8 = ms_placement_new_static(16, 8);
    g_autoptr(MsPlacement) f = ms_lina_place(flat, 8, 16, 4, home8);
    for (guint e = 0; e < 8; e++) {
        ms_placement_replicas(f, 0, e, &n);
        CU_ASSERT_EQUAL(n, 2);
    }
    /* More cold experts than GPUs x max_pack: 12 equal experts on 2 GPUs pack 6 each. */
    static const double many[12] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    g_autoptr(MsPlacement) home12 = ms_placement_new_static(2, 12);
    g_autoptr(MsPlacement) m = ms_lina_place(many, 12, 2, 4, home12);
    CU_ASSERT_EQUAL(ms_placement_n_local(m, 0), 6);
    CU_ASSERT_EQUAL(ms_placement_n_local(m, 1), 6);
    /* Loads 4, 4, 4, 20 on 4 GPUs: at a bound of 10 expert 3 takes 2 GPUs, {0, 1} and {2} the
     * others; below 10 expert 3 needs 3. */
    static const double big[] = {4, 4, 4, 20};
    g_autoptr(MsPlacement) home44 = ms_placement_new_static(4, 4);
    g_autoptr(MsPlacement) b = ms_lina_place(big, 4, 4, 4, home44);
    expect_on(b, 3, (const guint[]){3, 0}, 2);
    expect_on(b, 0, (const guint[]){1}, 1);
    expect_on(b, 1, (const guint[]){1}, 1);
    expect_on(b, 2, (const guint[]){2}, 1);
    /* Nothing routed: home's layout. */
    static const double none[6] = {0};
    g_autoptr(MsPlacement) z = ms_lina_place(none, 6, 4, 4, home);
    CU_ASSERT_TRUE(ms_placement_equal(z, home));
}

static void
test_moves(void)
{
    static const double load[] = {8, 4, 1, 1, 1, 1};
    g_autoptr(MsPlacement) home = ms_placement_new_static(4, 6);
    g_autoptr(MsPlacement) p = ms_lina_place(load, 6, 4, 4, home);
    guint64 total = 0;
    g_autofree guint64 *m = ms_lina_moves(p, home, NULL, 100, &total);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    /* Expert 0 to GPU 1 and expert 1 to GPU 2 from GPU 0; experts 2, 3, 4 to GPU 3 from their
     * homes 1, 2, 2. */
    CU_ASSERT_EQUAL(total, 500);
    CU_ASSERT_EQUAL(m[0 * 4 + 1], 100);
    CU_ASSERT_EQUAL(m[0 * 4 + 2], 100);
    CU_ASSERT_EQUAL(m[1 * 4 + 3], 100);
    CU_ASSERT_EQUAL(m[2 * 4 + 3], 200);
    /* What phase 1 brought need not move again. */
    CU_ASSERT_PTR_NULL(ms_lina_moves(p, home, p, 100, &total));
    CU_ASSERT_EQUAL(total, 0);
    /* Popular: above total / GPUs. {8, 4, ...} over 4 GPUs: expert 0 only (4 is not above 4). */
    static const double other[] = {4, 8, 1, 1, 1, 1};
    static const double scaled[] = {80, 40, 10, 10, 10, 10};
    CU_ASSERT_FALSE(ms_lina_same_popular(load, other, 6, 4));
    CU_ASSERT_TRUE(ms_lina_same_popular(load, scaled, 6, 4));
    /* Over 8 GPUs (tau 2) experts 0 and 1 are popular; {8, 4, 3, 1, 0, 0} adds expert 2. */
    static const double third[] = {8, 4, 3, 1, 0, 0};
    CU_ASSERT_TRUE(ms_lina_same_popular(load, scaled, 6, 8));
    CU_ASSERT_FALSE(ms_lina_same_popular(load, third, 6, 8));
}

/* 4 GPUs, 4 experts, 2 MoE layers, top-1; 8 tokens per GPU. */
static const char model_text[] = "[model]\nformat = 1\nname = li\nlayers = 2\nd_model = 64\n"
                                 "d_ffn = 128\nexperts = 4\ntop_k = 2\ntop_k_infer = 1\n"
                                 "heads = 4\nseq_len = 8\ntokens_per_gpu = 8\n";

/* 32 tokens: layer 0 expert k % 2; at layer 1, of the 16 even tokens 4 choose expert 0, 4
 * expert 1 and 8 the big one; of the 16 odd ones 4 choose the small one and 12 the big one. The
 * big expert is 3 (the small 2), or with swap 2 (the small 3): loads 4, 4, 4, 20 or 4, 4, 20, 4. */
static MsRouting *
infer_batch(guint64 iteration, gboolean swap)
{
    guint32 big = swap ? 2 : 3, small = swap ? 3 : 2, paths[32 * 2];
    for (guint k = 0; k < 32; k++) {
        guint j = k / 2;
        paths[2 * k] = k % 2;
        if (k % 2 == 0) {
            paths[2 * k + 1] = j < 4 ? 0 : j < 8 ? 1 : big;
        } else {
            paths[2 * k + 1] = j < 4 ? small : big;
        }
    }
    return fx_paths_routing(iteration, 4, 2, 4, 8, paths);
}

static MsSchedule *
plan_infer(const char *spec, const MsRouting *batch, const MsPathProfile *prof, GError **error)
{
    g_autoptr(MsModel) m = fx_model(model_text);
    static const char four[] =
        "[topology]\nformat = 1\nname = four\n[gpu]\nmodel = G\npeak = 100TFLOPS\nhbm = 1TBps\n"
        "memory = 16GiB\nlaunch_overhead = 4us\n[preset]\nnodes = 2\ngpus_per_node = 2\n"
        "intra = nvswitch\nintra_bandwidth = 100GBps\nintra_latency = 1us\nnics = per_gpu\n"
        "nic_bandwidth = 100Gbps\nnic_latency = 1us\nfabric = switch\nfabric_latency = 1us\n";
    g_autoptr(MsTopology) t4 = ms_topology_load_data(four, strlen(four), "four", NULL);
    g_assert(t4 != NULL);
    g_autoptr(MsPolicy) p = ms_policy_parse(spec, error);
    MsPolicyInput in = {m, batch, t4, MS_PLAN_INFER, prof};
    return p ? ms_policy_plan(p, &in, error) : NULL;
}

static void
test_phases(void)
{
    GError *error = NULL;
    g_autoptr(MsPathProfile) prof = ms_path_profile_new(4, 2, MS_PATH_MAX_DEPTH);
    g_autoptr(MsRouting) past = infer_batch(0, FALSE);
    CU_ASSERT_TRUE(ms_path_profile_add(prof, past, &error));
    /* Same routing as learned: the estimate is exact at layer 1, no re-plan there. */
    g_autoptr(MsRouting) same = infer_batch(1, FALSE);
    g_autoptr(MsSchedule) s = plan_infer("lina:weights=move", same, prof, &error);
    g_assert_no_error(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "lina.placement"), "dynamic");
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "lina.replans"), "0");
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "lina.estimate_error"), "0.0000");
    /* Expert 3 takes 20 of 32 tokens at layer 1: the smallest bound on a GPU's load, 10, gives
     * it two GPUs and packs {0, 1} and {2}, so weights move. */
    CU_ASSERT_TRUE(g_ascii_strtoull(ms_schedule_get_meta(s, "lina.weight_bytes"), NULL, 10) > 0);
    for (guint r = 0; r < 4; r++) {
        /* Per MoE layer: phase 1 planning (planner stream) and phase 2 check. */
        CU_ASSERT_EQUAL(fx_count_ops(s, r, 1, MS_ROLE_REPLAN, MS_PHASE_OTHER), 2);
    }
    /* The big expert changed (3 -> 2): phase 2 re-plans layer 1 and moves weights again. */
    g_autoptr(MsRouting) shifted = infer_batch(2, TRUE);
    g_autoptr(MsSchedule) s2 = plan_infer("lina:weights=move", shifted, prof, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s2);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s2, "lina.replans"), "1");
    g_autoptr(GArray) w = fx_colls(s2, MS_ROLE_WEIGHTS, MS_PHASE_OTHER, 1);
    CU_ASSERT_EQUAL(w->len, 2);
    /* Weights already on every GPU: nothing moves; auto finds this small model fits. */
    g_autoptr(MsSchedule) r = plan_infer("lina:weights=resident", shifted, prof, &error);
    g_autoptr(MsSchedule) a = plan_infer("lina", shifted, prof, &error);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(a, "lina.weight_bytes"), "0");
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(r, "lina.weight_bytes"), "0");
    g_autoptr(GArray) none = fx_colls(r, MS_ROLE_WEIGHTS, MS_PHASE_OTHER, -2);
    CU_ASSERT_EQUAL(none->len, 0);
    /* Static placement: no placement ops. */
    g_autoptr(MsSchedule) st = plan_infer("lina:placement=static", shifted, prof, &error);
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(st, "lina.placement"), "static");
    CU_ASSERT_EQUAL(fx_count_ops(st, 0, 1, MS_ROLE_REPLAN, MS_PHASE_OTHER), 0);
    /* The dynamic schedules run to the end under the dispatcher. */
    FxRun run;
    CU_ASSERT_TRUE(fx_execute(s2, &run));
    fx_run_clear(&run);
    /* A count-level batch cannot be estimated from paths. */
    g_autoptr(MsRouting) counts = infer_batch(3, FALSE);
    ms_routing_drop_paths(counts);
    CU_ASSERT_PTR_NULL(plan_infer("lina", counts, prof, &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_INPUT,
                    "policy lina: batch 3 has count records only, but Lina's inference estimate "
                    "follows token paths");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"replicate popular, pack the rest first-fit decreasing", test_place},
        {"weight movements", test_moves},
        {"two phases as plan configuration", test_phases},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"lina_infer", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
