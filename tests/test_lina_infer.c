/* Tests of lina_infer: the replicate-and-pack placement (smallest load bound, first-fit
 * decreasing, at most max_pack per GPU) in closed form, weight movements, the two phases as plan
 * configuration, and every error. */
#include "plan_fixture.h"
#include "sim/policy/lina_infer.h"
#include "traces/trace_gen.h"

#include <math.h>

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
    /* At most 2 unpopular experts per GPU: below a bound of 5 the three 4s (two halves of
     * expert 0 and expert 1) take three GPUs that cannot take a 1 as well, and the four 1s need
     * two more. At 5 each 4 takes a 1: {0, 2}, {0, 3}, {1, 4}, {5}; expert 0 keeps its home
     * GPU 0 and, GPU 0 taken, goes where expert 3 lives (2); {1, 4} gets the lowest free GPU. */
    g_autoptr(MsPlacement) two = ms_lina_place(load, 6, 4, 2, home);
    expect_on(two, 0, (const guint[]){0, 2}, 2);
    expect_on(two, 1, (const guint[]){1}, 1);
    expect_on(two, 2, (const guint[]){0}, 1);
    expect_on(two, 3, (const guint[]){2}, 1);
    expect_on(two, 4, (const guint[]){1}, 1);
    expect_on(two, 5, (const guint[]){3}, 1);
    CU_ASSERT_DOUBLE_EQUAL(ms_lina_busiest(two, load), 5, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(ms_lina_busiest(home, load), 12, 1e-9);
    /* 10 of 12 over 8 GPUs: below a bound of 2 the two 1s need a GPU each, so expert 0 gets 6
     * GPUs (bound 10 / 6); at 2 it would get 5 and the 1s one together. Expert 3, without load,
     * stays home (GPU 6). */
    static const double hot[] = {10, 1, 1, 0};
    g_autoptr(MsPlacement) home4 = ms_placement_new_static(8, 4);
    g_autoptr(MsPlacement) h = ms_lina_place(hot, 4, 8, 4, home4);
    guint n = 0;
    ms_placement_replicas(h, 0, 0, &n);
    CU_ASSERT_EQUAL(n, 6);
    CU_ASSERT_TRUE(ms_placement_complete(h));
    expect_on(h, 3, (const guint[]){6}, 1);
    CU_ASSERT_DOUBLE_EQUAL(ms_lina_busiest(h, hot), 10.0 / 6, 1e-9);
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
    /* Three unpopular experts a GPU: the bound search (first-fit, then least loaded first)
     * ends at 18 where home's halves carry 17 each: home's layout is kept. */
    static const double even[] = {8, 6, 3, 7, 1, 9};
    g_autoptr(MsPlacement) home2 = ms_placement_new_static(2, 6);
    g_autoptr(MsPlacement) kept = ms_lina_place(even, 6, 2, 3, home2);
    CU_ASSERT_TRUE(ms_placement_equal(kept, home2));
    CU_ASSERT_DOUBLE_EQUAL(ms_lina_busiest(kept, even), 17, 1e-9);
    /* Nothing routed: home's layout. */
    static const double none[6] = {0};
    g_autoptr(MsPlacement) z = ms_lina_place(none, 6, 4, 4, home);
    CU_ASSERT_TRUE(ms_placement_equal(z, home));
}

/* Experts without load take no place: four loaded experts, all at home on GPU 0, and twelve
 * without load, one unpopular expert a GPU. Each loaded expert gets a GPU (its home, then the
 * lowest free ones); the others stay home, so nothing moves for them. */
static void
test_zero_load(void)
{
    double load[16] = {5, 5, 5, 5};
    g_autoptr(MsPlacement) home = ms_placement_new_static(4, 16);
    g_autoptr(MsPlacement) p = ms_lina_place(load, 16, 4, 1, home);
    for (guint e = 0; e < 4; e++) {
        expect_on(p, e, (const guint[]){e}, 1);
    }
    for (guint e = 4; e < 16; e++) {
        expect_on(p, e, (const guint[]){e / 4}, 1);
    }
    CU_ASSERT_DOUBLE_EQUAL(ms_lina_busiest(p, load), 5, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(ms_lina_busiest(home, load), 20, 1e-9);
}

/* The unpopular experts with load on rank r (one replica each). */
static guint
unpopular_on(const MsPlacement *p, const double *load, guint r)
{
    guint n = 0;
    for (guint e = 0; e < ms_placement_n_experts(p); e++) {
        guint k = 0;
        ms_placement_replicas(p, 0, e, &k);
        n += load[e] > 0 && k == 1 && ms_placement_hosts(p, r, e);
    }
    return n;
}

/* The shape the placement failed on: 128 experts on 8 GPUs (16 a GPU, 4 times max_pack), top-1,
 * Zipf 1, from the generator (deterministic). Every layer's busiest GPU is below the static
 * placement's and within 2% of the mean (measured: 0.4% to 0.7%; before, first-fit with a
 * limit of exactly 16 experts a GPU stacked the heaviest: 2.3x the static placement's), and
 * no GPU holds more than twice the mean count of unpopular experts. */
static void
test_many_experts(void)
{
    GError *error = NULL;
    MsTraceGenParams gp;
    ms_trace_gen_params_init(&gp);
    CU_ASSERT_TRUE_FATAL(ms_trace_gen_params_parse(
        "experts=128,ranks=8,top_k=1,tokens=4096,layers=4,zipf=1", &gp, &error));
    g_autoptr(MsTraceGen) gen = ms_trace_gen_new(&gp, &error);
    g_autoptr(MsRouting) r = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_gen_next(gen, &r, &error));
    g_autoptr(MsPlacement) home = ms_placement_new_static(8, 128);
    double load[128];
    for (guint l = 0; l < 4; l++) {
        double total = 0;
        for (guint e = 0; e < 128; e++) {
            load[e] = (double)ms_routing_expert_load(r, l, e);
            total += load[e];
        }
        g_autoptr(MsPlacement) p = ms_lina_place(load, 128, 8, 4, home);
        CU_ASSERT_TRUE(ms_placement_complete(p));
        double busiest = ms_lina_busiest(p, load);
        CU_ASSERT_TRUE(busiest < ms_lina_busiest(home, load));
        CU_ASSERT_TRUE(busiest <= 1.02 * total / 8);
        for (guint g = 0; g < 8; g++) {
            CU_ASSERT_TRUE(unpopular_on(p, load, g) <= 32);
        }
    }
}

/* Random loads (a fixed seed: the same cases every run): the placement is complete, never
 * busier than home's, no GPU holds more unpopular experts than the limit, and it is
 * deterministic. */
static void
test_place_invariants(void)
{
    g_autoptr(GRand) rng = g_rand_new_with_seed(12);
    for (guint trial = 0; trial < 300; trial++) {
        guint E = (guint)g_rand_int_range(rng, 1, 161), n = (guint)g_rand_int_range(rng, 1, 25);
        guint max_pack = (guint)g_rand_int_range(rng, 1, 7);
        double skew = g_rand_double_range(rng, 0, 2), zeros = g_rand_double_range(rng, 0, 0.6);
        g_autofree double *load = g_new(double, E);
        guint loaded = 0;
        for (guint e = 0; e < E; e++) {
            gboolean zero = g_rand_double(rng) < zeros;
            load[e] =
                zero ? 0
                     : floor(1000.0 * pow(e + 1, -skew) * g_rand_double_range(rng, 0.5, 1.5)) + 1;
            loaded += load[e] > 0;
        }
        g_autoptr(MsPlacement) home = ms_placement_new_static(n, E);
        g_autoptr(MsPlacement) p = ms_lina_place(load, E, n, max_pack, home);
        g_autoptr(MsPlacement) again = ms_lina_place(load, E, n, max_pack, home);
        CU_ASSERT_TRUE(ms_placement_complete(p));
        CU_ASSERT_TRUE(ms_placement_equal(p, again));
        CU_ASSERT_TRUE(ms_lina_busiest(p, load) <= ms_lina_busiest(home, load) * (1 + 1e-9));
        guint limit = loaded <= n * max_pack ? max_pack : 2 * ((loaded + n - 1) / n);
        gboolean kept = ms_placement_equal(p, home);
        for (guint g = 0; g < n && !kept; g++) {
            CU_ASSERT_TRUE(unpopular_on(p, load, g) <= limit);
        }
    }
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
        {"experts without load take no place", test_zero_load},
        {"128 experts on 8 GPUs: below static, near the mean", test_many_experts},
        {"random loads: complete, never busier than home", test_place_invariants},
        {"weight movements", test_moves},
        {"two phases as plan configuration", test_phases},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"lina_infer", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
