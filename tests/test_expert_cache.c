/* Tests of expert_cache: least-recently-used order, eviction at capacity, a cache of nothing,
 * copies that keep the order, and ranks and layers kept apart. */
#include "ms_test.h"
#include "sim/policy/expert_cache.h"

static void
test_lru(void)
{
    g_autoptr(MsExpertCache) c = ms_expert_cache_new(2, 3, 4, 3);
    CU_ASSERT_EQUAL(ms_expert_cache_capacity(c), 3);
    CU_ASSERT_EQUAL(ms_expert_cache_n_ranks(c), 2);
    /* Misses fill it: (0,0) (0,1) (1,0), most recent last. */
    CU_ASSERT_FALSE(ms_expert_cache_use(c, 0, 0, 0));
    CU_ASSERT_FALSE(ms_expert_cache_use(c, 0, 0, 1));
    CU_ASSERT_FALSE(ms_expert_cache_use(c, 0, 1, 0));
    CU_ASSERT_EQUAL(ms_expert_cache_size(c, 0), 3);
    /* A hit makes (0,0) the most recent; the next miss evicts (0,1), the least recent. */
    CU_ASSERT_TRUE(ms_expert_cache_use(c, 0, 0, 0));
    CU_ASSERT_FALSE(ms_expert_cache_use(c, 0, 2, 3));
    CU_ASSERT_EQUAL(ms_expert_cache_size(c, 0), 3);
    CU_ASSERT_TRUE(ms_expert_cache_holds(c, 0, 0, 0));
    CU_ASSERT_FALSE(ms_expert_cache_holds(c, 0, 0, 1));
    CU_ASSERT_TRUE(ms_expert_cache_holds(c, 0, 1, 0));
    CU_ASSERT_TRUE(ms_expert_cache_holds(c, 0, 2, 3));
    /* Ranks are apart: rank 1 holds nothing. */
    CU_ASSERT_EQUAL(ms_expert_cache_size(c, 1), 0);
    CU_ASSERT_FALSE(ms_expert_cache_holds(c, 1, 0, 0));
    /* A copy keeps the order: the next miss evicts (1,0) in both. */
    g_autoptr(MsExpertCache) d = ms_expert_cache_copy(c);
    CU_ASSERT_FALSE(ms_expert_cache_use(c, 0, 1, 1));
    CU_ASSERT_FALSE(ms_expert_cache_use(d, 0, 1, 1));
    for (guint l = 0; l < 3; l++) {
        for (guint e = 0; e < 4; e++) {
            CU_ASSERT_EQUAL(ms_expert_cache_holds(c, 0, l, e), ms_expert_cache_holds(d, 0, l, e));
        }
    }
    CU_ASSERT_FALSE(ms_expert_cache_holds(d, 0, 1, 0));
    CU_ASSERT_TRUE(ms_expert_cache_holds(d, 0, 0, 0));
}

static void
test_empty(void)
{
    g_autoptr(MsExpertCache) c = ms_expert_cache_new(1, 1, 2, 0);
    CU_ASSERT_FALSE(ms_expert_cache_use(c, 0, 0, 1));
    CU_ASSERT_FALSE(ms_expert_cache_use(c, 0, 0, 1));
    CU_ASSERT_EQUAL(ms_expert_cache_size(c, 0), 0);
    /* A long run of distinct uses never grows it past capacity. */
    g_autoptr(MsExpertCache) big = ms_expert_cache_new(1, 64, 64, 100);
    for (guint i = 0; i < 64 * 64; i++) {
        ms_expert_cache_use(big, 0, i / 64, i % 64);
        CU_ASSERT_TRUE(ms_expert_cache_size(big, 0) <= 100);
    }
    CU_ASSERT_TRUE(ms_expert_cache_holds(big, 0, 63, 63));
    CU_ASSERT_FALSE(ms_expert_cache_holds(big, 0, 62, 27)); /* the 101st most recent */
    CU_ASSERT_TRUE(ms_expert_cache_holds(big, 0, 62, 28));  /* the 100th */
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"least recently used first out", test_lru},
        {"no room, and never past capacity", test_empty},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"expert_cache", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
