/* Tests of the route cache: a stored route comes back equal and at the same address across the
 * table's growth and the link blocks' turnover, an empty route is remembered as one, and keys
 * that differ only in their high bits (the model's PXN flag) or share their low bits stay
 * apart. */
#include "ms_test.h"
#include "sim/net/route_cache.h"

/* A route of key-dependent length and links, so that each key's route is recognisable. */
static guint
route_of(guint64 key, guint32 *out)
{
    guint n = (guint)(key % 7);
    for (guint i = 0; i < n; i++) {
        out[i] = (guint32)(key * 31 + i);
    }
    return n;
}

static void
test_many_routes_stay_put(void)
{
    g_autoptr(MsRouteCache) c = ms_route_cache_new();
    /* 40,000 pairs of 200 x 200 devices, each also with bit 63 set: 80,000 routes, past several
     * growths of the table (first 1024 slots) and several 65,536-link blocks. */
    enum { DEV = 200 };
    g_autofree const guint32 **where = g_new0(const guint32 *, 2 * DEV * DEV);
    guint32 links[8];
    for (guint k = 0; k < 2 * DEV * DEV; k++) {
        guint64 key = ((guint64)(k / DEV % DEV) << 32) | (k % DEV);
        key |= k >= DEV * DEV ? G_GUINT64_CONSTANT(1) << 63 : 0;
        const guint32 *got = NULL;
        guint n = 99;
        CU_ASSERT_FALSE(ms_route_cache_lookup(c, key, &got, &n));
        guint m = route_of(key, links);
        where[k] = ms_route_cache_insert(c, key, links, m);
        CU_ASSERT_EQUAL(where[k] == NULL, m == 0);
    }
    CU_ASSERT_EQUAL(ms_route_cache_size(c), 2 * DEV * DEV);
    guint bad = 0;
    for (guint k = 0; k < 2 * DEV * DEV; k++) {
        guint64 key = ((guint64)(k / DEV % DEV) << 32) | (k % DEV);
        key |= k >= DEV * DEV ? G_GUINT64_CONSTANT(1) << 63 : 0;
        const guint32 *got = NULL;
        guint n = 99;
        guint m = route_of(key, links);
        if (!ms_route_cache_lookup(c, key, &got, &n) || n != m || got != where[k] ||
            (m && memcmp(got, links, m * sizeof *links) != 0)) {
            bad++;
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* A route longer than a block gets a block of its own; the routes around it are intact. */
static void
test_long_route(void)
{
    g_autoptr(MsRouteCache) c = ms_route_cache_new();
    guint32 small[3] = {7, 8, 9};
    guint n_long = 70000;
    g_autofree guint32 *big = g_new(guint32, n_long);
    for (guint i = 0; i < n_long; i++) {
        big[i] = i;
    }
    const guint32 *a = ms_route_cache_insert(c, 1, small, 3);
    const guint32 *b = ms_route_cache_insert(c, 2, big, n_long);
    const guint32 *d = ms_route_cache_insert(c, 3, small, 2);
    const guint32 *got = NULL;
    guint n = 0;
    CU_ASSERT_TRUE(ms_route_cache_lookup(c, 2, &got, &n));
    CU_ASSERT_EQUAL(n, n_long);
    CU_ASSERT_PTR_EQUAL(got, b);
    CU_ASSERT_EQUAL(got[n_long - 1], n_long - 1);
    CU_ASSERT_TRUE(ms_route_cache_lookup(c, 1, &got, &n));
    CU_ASSERT_TRUE(got == a && n == 3 && got[2] == 9);
    CU_ASSERT_TRUE(ms_route_cache_lookup(c, 3, &got, &n));
    CU_ASSERT_TRUE(got == d && n == 2 && got[0] == 7 && got[1] == 8);
    /* an empty route is stored as such, and key 0 is a key like any other */
    CU_ASSERT_PTR_NULL(ms_route_cache_insert(c, 0, NULL, 0));
    CU_ASSERT_TRUE(ms_route_cache_lookup(c, 0, &got, &n));
    CU_ASSERT_TRUE(got == NULL && n == 0);
    CU_ASSERT_FALSE(ms_route_cache_lookup(c, 4, &got, &n));
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"routes keep their address and links as the cache grows", test_many_routes_stay_put},
        {"a route longer than a block, empty routes, key 0", test_long_route},
        {NULL},
    };
    static const MsTestSuite suites[] = {{"route_cache", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
