/* Tests of trace_stats: Gini and entropy closed forms, per-layer figures and path consistency on
 * hand-made iterations whose values are worked out in the comments. */
#include "ms_test.h"
#include "traces/trace_stats.h"

static void
test_gini_entropy(void)
{
    const guint64 uniform[] = {5, 5, 5, 5}, one[] = {0, 0, 0, 8}, ramp[] = {4, 1, 3, 2};
    const guint64 zeros[] = {0, 0, 0}, mixed[] = {1, 1, 2};
    CU_ASSERT_DOUBLE_EQUAL(ms_trace_gini(uniform, 4), 0.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(ms_trace_gini(one, 4), 0.75, 1e-12); /* (n-1)/n */
    /* sum |xi - xj| = 20 over ordered pairs; 20 / (2 * 16 * 2.5) = 0.25. */
    CU_ASSERT_DOUBLE_EQUAL(ms_trace_gini(ramp, 4), 0.25, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(ms_trace_gini(zeros, 3), 0.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(ms_trace_gini(NULL, 0), 0.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(ms_trace_entropy_bits(uniform, 4), 2.0, 1e-12); /* log2(4) */
    CU_ASSERT_DOUBLE_EQUAL(ms_trace_entropy_bits(one, 4), 0.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(ms_trace_entropy_bits(zeros, 3), 0.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(ms_trace_entropy_bits(mixed, 3), 1.5, 1e-12);
    guint64 many[256];
    for (guint i = 0; i < 256; i++) {
        many[i] = 1000;
    }
    CU_ASSERT_DOUBLE_EQUAL(ms_trace_entropy_bits(many, 256), 8.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(ms_trace_gini(many, 256), 0.0, 1e-12);
}

static MsTraceHeader
shape(guint32 experts, guint32 layers, guint32 ranks, guint32 top_k)
{
    MsTraceHeader h;
    ms_trace_header_init_shape(&h, experts, layers, ranks, top_k);
    return h;
}

/* Top-1 over 4 experts, 2 layers, one rank. Paths 0->1, 0->1, 0->2, 1->3, 1->3, 2->3. */
static MsRouting *
top1_routing(guint64 iteration)
{
    MsTraceHeader h = shape(4, 2, 1, 1);
    MsRouting *r = ms_routing_new(&h, iteration, NULL);
    static const guint32 paths[6][2] = {{0, 1}, {0, 1}, {0, 2}, {1, 3}, {1, 3}, {2, 3}};
    for (guint t = 0; t < 6; t++) {
        g_assert(ms_routing_add_token(r, t, 0, paths[t], NULL));
    }
    g_assert(ms_routing_seal(r, NULL));
    return r;
}

static void
test_layer_figures(void)
{
    MsTraceHeader h = shape(4, 2, 1, 1);
    g_autoptr(MsTraceStats) s = ms_trace_stats_new(&h);
    g_autoptr(MsRouting) r = top1_routing(0);
    ms_trace_stats_add(s, r);
    CU_ASSERT_EQUAL(ms_trace_stats_iterations(s), 1);
    CU_ASSERT_EQUAL(ms_trace_stats_tokens(s), 6);
    CU_ASSERT_EQUAL(ms_trace_stats_path_iterations(s), 1);
    MsTraceLayerStats l0, l1;
    ms_trace_stats_layer(s, 0, &l0);
    /* Layer 0 loads (3, 2, 1, 0). */
    CU_ASSERT_DOUBLE_EQUAL(l0.hot_share, 0.5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(l0.hot_share_max, 0.5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(l0.max_mean, 2.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(l0.gini, 5.0 / 12.0, 1e-12);
    double h0 = -(0.5 * log2(0.5) + log2(1.0 / 3) / 3 + log2(1.0 / 6) / 6);
    CU_ASSERT_DOUBLE_EQUAL(l0.entropy_bits, h0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(l0.entropy_norm, h0 / 2, 1e-12);
    /* Groups: expert 0 -> {1,1,2} keeps 2 on its top-1; expert 1 -> {3,3} keeps 2; expert 2 ->
     * {3} keeps 1: 5 of 6. Independent baseline: layer 1 loads (0,2,1,3), top-1 3 of 6. */
    CU_ASSERT_TRUE(l0.has_paths);
    CU_ASSERT_DOUBLE_EQUAL(l0.path_consistency, 5.0 / 6.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(l0.path_top2, 1.0, 1e-12); /* every group on its two best */
    CU_ASSERT_DOUBLE_EQUAL(l0.path_baseline, 0.5, 1e-12);
    CU_ASSERT_TRUE(isinf(l0.max_min)); /* expert 3 got nothing */
    ms_trace_stats_layer(s, 1, &l1);
    CU_ASSERT_FALSE(l1.has_paths); /* no layer after the last */
    CU_ASSERT_DOUBLE_EQUAL(l1.hot_share, 0.5, 1e-12);
    MsTraceLayerStats all;
    ms_trace_stats_summary(s, &all);
    CU_ASSERT_DOUBLE_EQUAL(all.gini, (l0.gini + l1.gini) / 2, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(all.path_consistency, 5.0 / 6.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(all.path_baseline, 0.5, 1e-12);
}

static void
test_top2_groups(void)
{
    /* 3 experts, top-2: tokens {0,1}->{0,1} and {0,2}->{1,2}. Group 0 sees next choices
     * (0,1,1,2): top-2 keep 3; group 1 sees (0,1): 2; group 2 sees (1,2): 2. 7 of 8. */
    MsTraceHeader h = shape(3, 2, 2, 2);
    g_autoptr(MsRouting) r = ms_routing_new(&h, 0, NULL);
    const guint32 a[] = {0, 1, 0, 1}, b[] = {0, 2, 1, 2};
    CU_ASSERT_TRUE(ms_routing_add_token(r, 0, 0, a, NULL));
    CU_ASSERT_TRUE(ms_routing_add_token(r, 0, 1, b, NULL));
    CU_ASSERT_TRUE(ms_routing_seal(r, NULL));
    g_autoptr(MsTraceStats) s = ms_trace_stats_new(&h);
    ms_trace_stats_add(s, r);
    MsTraceLayerStats l0;
    ms_trace_stats_layer(s, 0, &l0);
    CU_ASSERT_DOUBLE_EQUAL(l0.path_consistency, 7.0 / 8.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(l0.path_top2, 1.0, 1e-12); /* 2 x top_k covers all three */
    CU_ASSERT_DOUBLE_EQUAL(l0.path_baseline, 3.0 / 4.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(l0.max_min, 2.0, 1e-12); /* loads (2, 1, 1) */
}

static void
test_iterations(void)
{
    MsTraceHeader h = shape(4, 2, 1, 1);
    g_autoptr(MsTraceStats) s = ms_trace_stats_new(&h);
    g_autoptr(MsRouting) a = top1_routing(0);
    ms_trace_stats_add(s, a);
    /* A count-level iteration with all tokens on expert 3: hot share 1 at both layers. */
    g_autoptr(MsRouting) b = ms_routing_new(&h, 1, NULL);
    CU_ASSERT_TRUE(ms_routing_add_count(b, 0, 0, 3, 2, NULL));
    CU_ASSERT_TRUE(ms_routing_add_count(b, 1, 0, 3, 2, NULL));
    CU_ASSERT_TRUE(ms_routing_seal(b, NULL));
    ms_trace_stats_add(s, b);
    /* An empty iteration counts as an iteration but not in the averages. */
    g_autoptr(MsRouting) c = ms_routing_new(&h, 2, NULL);
    CU_ASSERT_TRUE(ms_routing_seal(c, NULL));
    ms_trace_stats_add(s, c);
    CU_ASSERT_EQUAL(ms_trace_stats_iterations(s), 3);
    CU_ASSERT_EQUAL(ms_trace_stats_tokens(s), 8);
    CU_ASSERT_EQUAL(ms_trace_stats_path_iterations(s), 1);
    MsTraceLayerStats l0;
    ms_trace_stats_layer(s, 0, &l0);
    CU_ASSERT_DOUBLE_EQUAL(l0.hot_share, (0.5 + 1.0) / 2, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(l0.hot_share_max, 1.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(l0.max_mean, (2.0 + 4.0) / 2, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(l0.gini, (5.0 / 12.0 + 0.75) / 2, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(l0.path_consistency, 5.0 / 6.0, 1e-12); /* paths only from a */
    /* Without any path iteration, no path figures. */
    g_autoptr(MsTraceStats) counts_only = ms_trace_stats_new(&h);
    ms_trace_stats_add(counts_only, b);
    MsTraceLayerStats all;
    ms_trace_stats_summary(counts_only, &all);
    CU_ASSERT_FALSE(all.has_paths);
    CU_ASSERT_DOUBLE_EQUAL(all.hot_share, 1.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(all.entropy_bits, 0.0, 1e-12);
}

static void
test_single_expert(void)
{
    MsTraceHeader h = shape(1, 1, 1, 1);
    g_autoptr(MsRouting) r = ms_routing_new(&h, 0, NULL);
    const guint32 p[] = {0};
    CU_ASSERT_TRUE(ms_routing_add_token(r, 0, 0, p, NULL));
    CU_ASSERT_TRUE(ms_routing_seal(r, NULL));
    g_autoptr(MsTraceStats) s = ms_trace_stats_new(&h);
    ms_trace_stats_add(s, r);
    MsTraceLayerStats l;
    ms_trace_stats_layer(s, 0, &l);
    CU_ASSERT_DOUBLE_EQUAL(l.entropy_norm, 1.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(l.hot_share, 1.0, 1e-12);
    CU_ASSERT_FALSE(l.has_paths); /* one layer: no step to the next */
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"Gini and entropy closed forms", test_gini_entropy},
        {"layer figures and top-1 paths", test_layer_figures},
        {"top-2 path groups", test_top2_groups},
        {"averages over iterations", test_iterations},
        {"single expert", test_single_expert},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"trace_stats", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
