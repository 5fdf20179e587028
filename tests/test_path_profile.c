/* Tests of path_profile: the path-based popularity estimate on hand-made token paths in closed
 * form, with its back-offs, in dense and in hashed tables, and its errors. */
#include "plan_fixture.h"
#include "sim/policy/path_profile.h"

/* Profile batch: after expert 0 at layer 0 tokens go to expert 2, after expert 1 to expert 3;
 * at layer 2, path (0, 2) goes to 1 and path (1, 3) to 0. */
static const guint32 learned[] = {
    0, 2, 1, /**/ 0, 2, 1, /**/ 1, 3, 0, /**/ 1, 3, 0,
};

static void
test_estimate(void)
{
    g_autoptr(MsPathProfile) prof = ms_path_profile_new(4, 3, MS_PATH_MAX_DEPTH);
    g_autoptr(MsRouting) a = fx_paths_routing(0, 4, 3, 2, 2, learned);
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_path_profile_add(prof, a, &error));
    CU_ASSERT_EQUAL(ms_path_profile_n_batches(prof), 1);
    /* The batch: three tokens chose expert 0 at layer 0 and one chose 1; at layer 1 one token
     * took an unseen expert 1 (so layer 2 backs off to its one-layer path (1), also unseen:
     * the layer's popularity, half 1 and half 0). */
    static const guint32 batch_paths[] = {
        0, 2, 1, /**/ 0, 2, 1, /**/ 0, 1, 3, /**/ 1, 3, 0,
    };
    g_autoptr(MsRouting) b = fx_paths_routing(1, 4, 3, 2, 2, batch_paths);
    double load[4];
    ms_path_profile_estimate(prof, b, 1, 3, load);
    CU_ASSERT_EQUAL(load[0], 0);
    CU_ASSERT_EQUAL(load[1], 0);
    CU_ASSERT_EQUAL(load[2], 3);
    CU_ASSERT_EQUAL(load[3], 1);
    ms_path_profile_estimate(prof, b, 2, 3, load);
    CU_ASSERT_EQUAL(load[0], 1 + 0.5);
    CU_ASSERT_EQUAL(load[1], 2 + 0.5);
    CU_ASSERT_EQUAL(load[2], 0);
    CU_ASSERT_EQUAL(load[3], 0);
    /* Depth 1 at layer 2 uses the layer-1 expert alone: (2) -> 1, (1) unseen, (3) -> 0. */
    ms_path_profile_estimate(prof, b, 2, 1, load);
    CU_ASSERT_EQUAL(load[1], 2 + 0.5);
    /* Layer 0 has no path: the layer's popularity (expert 0 half, expert 1 half). */
    ms_path_profile_estimate(prof, b, 0, 3, load);
    CU_ASSERT_EQUAL(load[0], 2);
    CU_ASSERT_EQUAL(load[1], 2);
    /* Without statistics: uniform. */
    ms_path_profile_estimate(NULL, b, 2, 3, load);
    for (guint e = 0; e < 4; e++) {
        CU_ASSERT_EQUAL(load[e], 1);
    }
}

/* Top-2 tokens (training's gate, or a top-2 inference model): the path is the first choice of
 * each earlier layer, and both choices of a layer are counted after it. Two tokens on one rank:
 * {0,1} then {2,3}, and {0,2} then {2,1}; after path (0) the choices at layer 1 are 2, 3, 2, 1. */
static void
test_top2(void)
{
    MsTraceHeader h;
    ms_trace_header_init_shape(&h, 4, 2, 1, 2);
    GError *error = NULL;
    g_autoptr(MsRouting) r = ms_routing_new(&h, 0, &error);
    static const guint32 paths[] = {0, 1, 2, 3, /**/ 0, 2, 2, 1};
    CU_ASSERT_TRUE(ms_routing_add_tokens(r, 0, 0, 2, paths, &error));
    CU_ASSERT_TRUE(ms_routing_seal(r, &error));
    g_autoptr(MsPathProfile) prof = ms_path_profile_new(4, 2, 2);
    CU_ASSERT_TRUE(ms_path_profile_add(prof, r, &error));
    CU_ASSERT_PTR_NULL(error);
    double load[4];
    ms_path_profile_estimate(prof, r, 1, 2, load);
    CU_ASSERT_EQUAL(load[0], 0);
    CU_ASSERT_EQUAL(load[1], 1);
    CU_ASSERT_EQUAL(load[2], 2);
    CU_ASSERT_EQUAL(load[3], 1);
    /* Layer 0: its popularity, 0 twice, 1 and 2 once, over 4 assignments. */
    ms_path_profile_estimate(prof, r, 0, 2, load);
    CU_ASSERT_EQUAL(load[0], 2);
    CU_ASSERT_EQUAL(load[1], 1);
    CU_ASSERT_EQUAL(load[2], 1);
    CU_ASSERT_EQUAL(load[3], 0);
}

static void
test_profile_errors(void)
{
    g_autoptr(MsPathProfile) prof = ms_path_profile_new(4, 3, MS_PATH_MAX_DEPTH);
    GError *error = NULL;
    g_autoptr(MsRouting) wrong = fx_paths_routing(0, 4, 2, 2, 2, learned);
    CU_ASSERT_FALSE(ms_path_profile_add(prof, wrong, &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_INPUT,
                    "batch 0 has 4 experts and 2 MoE layers, the path statistics 4 and 3");
    g_autoptr(MsRouting) counts = fx_paths_routing(7, 4, 3, 2, 2, learned);
    ms_routing_drop_paths(counts);
    CU_ASSERT_FALSE(ms_path_profile_add(prof, counts, &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_INPUT,
                    "batch 7 has count records only");
}

/* 1024 experts: tables of depth 2 and more are hashed (1024^3 counters would not fit), depth 1
 * is dense. Paths: after (1000, 700) tokens chose 5; after (3, 700) they chose 9. */
static void
test_hashed(void)
{
    static const guint32 learned_big[] = {
        1000, 700, 5, /**/ 3, 700, 9, /**/ 1000, 700, 5, /**/ 3, 700, 9,
    };
    g_autoptr(MsPathProfile) prof = ms_path_profile_new(1024, 3, MS_PATH_MAX_DEPTH);
    g_autoptr(MsRouting) a = fx_paths_routing(0, 1024, 3, 2, 2, learned_big);
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_path_profile_add(prof, a, &error));
    static const guint32 batch_big[] = {
        1000, 700, 1, /**/ 3, 700, 1, /**/ 3, 700, 1, /**/ 8, 700, 1,
    };
    g_autoptr(MsRouting) b = fx_paths_routing(1, 1024, 3, 2, 2, batch_big);
    g_autofree double *load = g_new(double, 1024);
    /* Depth 2: (1000, 700) -> 5 once, (3, 700) -> 9 twice; (8, 700) is unseen and backs off to
     * depth 1, (700): half 5, half 9. */
    ms_path_profile_estimate(prof, b, 2, 2, load);
    CU_ASSERT_EQUAL(load[5], 1.5);
    CU_ASSERT_EQUAL(load[9], 2.5);
    double total = 0;
    for (guint e = 0; e < 1024; e++) {
        total += load[e];
    }
    CU_ASSERT_EQUAL(total, 4);
}

/* A profile kept to depth 1 answers deeper requests with one-layer paths. Learned: after (0, 2)
 * tokens chose 1, after (1, 2) they chose 0, so the one-layer path (2) is half and half. */
static void
test_depth_limit(void)
{
    static const guint32 shared[] = {
        0, 2, 1, /**/ 0, 2, 1, /**/ 1, 2, 0, /**/ 1, 2, 0,
    };
    static const guint32 batch_paths[] = {
        0, 2, 3, /**/ 0, 2, 3, /**/ 0, 2, 3, /**/ 0, 2, 3,
    };
    g_autoptr(MsPathProfile) shallow = ms_path_profile_new(4, 3, 1);
    g_autoptr(MsPathProfile) deep = ms_path_profile_new(4, 3, MS_PATH_MAX_DEPTH);
    g_autoptr(MsRouting) a = fx_paths_routing(0, 4, 3, 2, 2, shared);
    g_autoptr(MsRouting) b = fx_paths_routing(1, 4, 3, 2, 2, batch_paths);
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_path_profile_add(shallow, a, &error));
    CU_ASSERT_TRUE(ms_path_profile_add(deep, a, &error));
    double load[4];
    ms_path_profile_estimate(deep, b, 2, 2, load);
    CU_ASSERT_EQUAL(load[0], 0);
    CU_ASSERT_EQUAL(load[1], 4);
    ms_path_profile_estimate(shallow, b, 2, 2, load);
    CU_ASSERT_EQUAL(load[0], 2);
    CU_ASSERT_EQUAL(load[1], 2);
    ms_path_profile_estimate(deep, b, 2, 1, load);
    CU_ASSERT_EQUAL(load[0], 2);
    CU_ASSERT_EQUAL(load[1], 2);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"estimate and its back-offs", test_estimate},
        {"hashed tables for many experts", test_hashed},
        {"top-2 paths", test_top2},
        {"errors", test_profile_errors},
        {"a shallow profile backs off to its depth", test_depth_limit},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"path_profile", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
