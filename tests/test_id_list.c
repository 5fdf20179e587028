/* Tests of the id lists behind the solver's and the network's scratch lists (sim/net/id_list.h):
 * appends keep their order across growth, emptying keeps the storage, reserving grows to a power
 * of two that holds the request, and clearing frees it. */
#include "ms_test.h"
#include "sim/net/id_list.h"

static void
test_push_order_and_growth(void)
{
    MsIdList l = {0};
    for (guint32 i = 0; i < 1000; i++) {
        ms_id_list_push(&l, 3 * i + 1);
        /* Doubling from 16: the capacity is the smallest 16 * 2^k holding every id. */
        guint want = 16;
        while (want < i + 1) {
            want *= 2;
        }
        CU_ASSERT_EQUAL(l.cap, want);
    }
    CU_ASSERT_EQUAL(l.len, 1000);
    for (guint32 i = 0; i < 1000; i++) {
        CU_ASSERT_EQUAL(l.v[i], 3 * i + 1);
    }
    CU_ASSERT_EQUAL(ms_id_list_pop(&l), 2998);
    CU_ASSERT_EQUAL(l.len, 999);
    CU_ASSERT_EQUAL(ms_id_list_memory(&l), 1024 * sizeof(guint32));
    ms_id_list_clear(&l);
    CU_ASSERT_PTR_NULL(l.v);
    CU_ASSERT_EQUAL(l.len, 0);
    CU_ASSERT_EQUAL(l.cap, 0);
}

static void
test_reuse_keeps_storage(void)
{
    MsIdList l = {0};
    ms_id_list_reserve(&l, 100);
    CU_ASSERT_EQUAL(l.cap, 128);
    guint32 *storage = l.v;
    for (guint round = 0; round < 3; round++) {
        l.len = 0; /* emptied between solves */
        for (guint32 i = 0; i < 128; i++) {
            ms_id_list_push(&l, i ^ round);
        }
        CU_ASSERT_PTR_EQUAL(l.v, storage);
        CU_ASSERT_EQUAL(l.v[127], 127 ^ round);
    }
    ms_id_list_reserve(&l, 10); /* never shrinks */
    CU_ASSERT_EQUAL(l.cap, 128);
    ms_id_list_reserve(&l, 129); /* keeps the contents */
    CU_ASSERT_EQUAL(l.cap, 256);
    CU_ASSERT_EQUAL(l.v[0], 2);
    CU_ASSERT_EQUAL(l.len, 128);
    ms_id_list_clear(&l);
    ms_id_list_clear(&l); /* twice is harmless */
    CU_ASSERT_EQUAL(l.cap, 0);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"appends keep their order across growth; capacity doubles from 16",
         test_push_order_and_growth},
        {"emptying keeps the storage; reserve grows, never shrinks, keeps contents",
         test_reuse_keeps_storage},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"id_list", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
