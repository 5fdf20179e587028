/* Tests of the generator's counts mode (records=counts): up to MS_TRACE_GEN_POOL_TOKENS tokens it
 * gives exactly the counts of path mode; beyond, tokens drawn from the pool keep path mode's
 * load shares, per-rank spread and node limit, deterministically; the limits of both modes. */
#include <math.h>

#include "ms_test.h"
#include "traces/trace_gen.h"

static MsTraceGen *
gen_of(const char *spec)
{
    MsTraceGenParams p;
    GError *error = NULL;
    g_assert(ms_trace_gen_params_parse(spec, &p, &error));
    MsTraceGen *g = ms_trace_gen_new(&p, &error);
    CU_ASSERT_PTR_NULL(error);
    g_assert(g != NULL);
    return g;
}

static MsRouting *
next_of(MsTraceGen *g)
{
    MsRouting *r = NULL;
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_trace_gen_next(g, &r, &error));
    CU_ASSERT_PTR_NULL(error);
    g_assert(r != NULL);
    return r;
}

/* Up to the pool size counts mode draws what path mode draws: the same counts, iteration by
 * iteration (drift included), with and without a node limit. */
static void
test_small_equals_paths(void)
{
    static const char *const shapes[] = {
        "ranks=8,experts=16,layers=4,top_k=2,tokens=300,iterations=3,hot=0.15,corr=0.5,"
        "drift=0.2,seed=3",
        "ranks=16,experts=32,layers=3,top_k=4,tokens=1024,iterations=2,zipf=1.2,corr=0.5,"
        "drift=0.1,seed=5,expert_nodes=4,max_nodes=2",
    };
    for (guint s = 0; s < G_N_ELEMENTS(shapes); s++) {
        g_autofree char *counts = g_strconcat(shapes[s], ",records=counts", NULL);
        g_autoptr(MsTraceGen) gp = gen_of(shapes[s]);
        g_autoptr(MsTraceGen) gc = gen_of(counts);
        for (int it = 0; it < 3 - (int)s; it++) {
            g_autoptr(MsRouting) rp = next_of(gp);
            g_autoptr(MsRouting) rc = next_of(gc);
            CU_ASSERT_TRUE(ms_routing_has_paths(rp));
            CU_ASSERT_FALSE(ms_routing_has_paths(rc));
            ms_routing_drop_paths(rp);
            CU_ASSERT_TRUE(ms_routing_equal(rp, rc));
        }
    }
}

/* 32 ranks x 2048 tokens, four times the pool, under a node limit. */
#define POOL_SHAPE                                                                                 \
    "ranks=32,experts=32,layers=3,top_k=4,tokens=2048,zipf=1.2,corr=0.5,expert_nodes=4,"           \
    "max_nodes=2"

/* Beyond the pool, each expert's share of a layer's tokens (its inclusion probability) agrees
 * with path mode's within 5 standard errors of the two estimates (binomial: path mode's from its
 * R x T tokens, the pool's from its MS_TRACE_GEN_POOL_TOKENS paths); and a rank's count of an
 * expert spreads over the ranks as Binomial(T, share) does, as independent tokens would (the
 * mean ratio of observed to binomial variance, whose standard error is about 0.03 here, within
 * 0.15 of 1). */
static void
test_pool_statistics(void)
{
    g_autoptr(MsTraceGen) gp = gen_of(POOL_SHAPE);
    g_autoptr(MsTraceGen) gc = gen_of(POOL_SHAPE ",records=counts");
    g_autoptr(MsRouting) rp = next_of(gp);
    g_autoptr(MsRouting) rc = next_of(gc);
    const guint ranks = 32, experts = 32, layers = 3, tokens = 2048;
    const double all = (double)ranks * tokens, pool = MS_TRACE_GEN_POOL_TOKENS;
    CU_ASSERT_EQUAL(ms_routing_total_tokens(rc), (guint64)all);
    double ratio_sum = 0, worst = 0;
    guint cells = 0;
    for (guint l = 0; l < layers; l++) {
        for (guint e = 0; e < experts; e++) {
            double sp = ms_routing_expert_load(rp, l, e) / all;
            double sc = ms_routing_expert_load(rc, l, e) / all;
            double se = sqrt(sp * (1 - sp) * (1 / pool + 1 / all));
            worst = MAX(worst, fabs(sp - sc) / MAX(se, 1e-12));
            double mean = sc * tokens, var = 0;
            for (guint r = 0; r < ranks; r++) {
                double d = ms_routing_count(rc, l, r, e) - mean;
                var += d * d / (ranks - 1);
            }
            if (sc > 0.01 && sc < 0.99) {
                ratio_sum += var / (tokens * sc * (1 - sc));
                cells++;
            }
        }
    }
    CU_ASSERT_TRUE(worst < 5);
    CU_ASSERT_TRUE(cells > 50);
    CU_ASSERT_DOUBLE_EQUAL(ratio_sum / cells, 1.0, 0.15);
}

/* With max_nodes=1 each token puts its top_k experts on one node, so beyond the pool too every
 * node's count at every rank and layer is a multiple of top_k (a token never split). */
static void
test_pool_node_limit(void)
{
    g_autoptr(MsTraceGen) g = gen_of("ranks=64,experts=16,layers=2,top_k=4,tokens=512,corr=0.5,"
                                     "expert_nodes=4,max_nodes=1,records=counts");
    g_autoptr(MsRouting) r = next_of(g);
    gboolean whole = TRUE;
    for (guint l = 0; l < 2; l++) {
        for (guint rank = 0; rank < 64; rank++) {
            const guint32 *row = ms_routing_counts(r, l, rank);
            for (guint node = 0; node < 4; node++) {
                guint32 sum =
                    row[node * 4] + row[node * 4 + 1] + row[node * 4 + 2] + row[node * 4 + 3];
                whole &= sum % 4 == 0;
            }
        }
    }
    CU_ASSERT_TRUE(whole);
    /* Without the limit tokens do split over nodes (so the check above can fail). */
    g_autoptr(MsTraceGen) free_gen =
        gen_of("ranks=64,experts=16,layers=2,top_k=4,tokens=512,corr=0.5,records=counts");
    g_autoptr(MsRouting) f = next_of(free_gen);
    gboolean split = FALSE;
    for (guint rank = 0; rank < 64; rank++) {
        const guint32 *row = ms_routing_counts(f, 0, rank);
        split |= (row[0] + row[1] + row[2] + row[3]) % 4 != 0;
    }
    CU_ASSERT_TRUE(split);
}

/* The same seed gives the same counts beyond the pool, over drifting iterations; another seed
 * other counts. */
static void
test_pool_determinism(void)
{
    const char *a = POOL_SHAPE ",iterations=2,drift=0.3,seed=7,records=counts";
    const char *b = POOL_SHAPE ",iterations=2,drift=0.3,seed=8,records=counts";
    g_autoptr(MsTraceGen) x = gen_of(a);
    g_autoptr(MsTraceGen) y = gen_of(a);
    g_autoptr(MsTraceGen) z = gen_of(b);
    for (int it = 0; it < 2; it++) {
        g_autoptr(MsRouting) rx = next_of(x);
        g_autoptr(MsRouting) ry = next_of(y);
        g_autoptr(MsRouting) rz = next_of(z);
        CU_ASSERT_TRUE(ms_routing_equal(rx, ry));
        CU_ASSERT_FALSE(ms_routing_equal(rx, rz));
    }
    MsRouting *none = NULL;
    CU_ASSERT_FALSE(ms_trace_gen_next(x, &none, NULL));
    CU_ASSERT_PTR_NULL(none);
}

/* Path mode keeps its limit and names the way around it; counts mode takes that shape, and
 * refuses a pool that would itself be too large. */
static void
test_limits(void)
{
    MsTraceGenParams p;
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_trace_gen_params_parse("tokens=67108864", &p, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_LIMIT,
                    "exceeds the limit of 268435456 for token paths; keep counts only "
                    "(records=counts)");
    CU_ASSERT_TRUE(ms_trace_gen_params_parse("tokens=67108864,records=counts", &p, &error));
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_FALSE(ms_trace_gen_params_parse(
        "ranks=1,experts=64,layers=4096,top_k=64,tokens=16385,records=counts", &p, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_LIMIT,
                    "records=counts draws tokens from a pool of 16384 paths, and 16384 x layers "
                    "x top_k = 4294967296 expert choices exceeds the limit of 268435456");
    /* At the pool size no pool is needed: one path at a time. */
    CU_ASSERT_TRUE(ms_trace_gen_params_parse(
        "ranks=1,experts=64,layers=4096,top_k=64,tokens=16384,records=counts", &p, &error));
    CU_ASSERT_PTR_NULL(error);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"small: the counts of path mode", test_small_equals_paths},
        {"pool: shares and per-rank spread", test_pool_statistics},
        {"pool: node limit", test_pool_node_limit},
        {"pool: determinism", test_pool_determinism},
        {"limits of both modes", test_limits},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"trace_gen_counts", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
