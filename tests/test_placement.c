/* Tests of placement: training and static layouts, replicas, and traffic in closed form
 * (dropless counts, capacity padding and drops, exact chunk cuts, receive counts). */
#include "plan_fixture.h"
#include "sim/moe/placement.h"

/* Rank src routes (src + e) % 3 + 1 tokens to expert e at every layer (top-1: any counts make
 * whole tokens). */
static guint32
small_counts(guint layer, guint src, guint e)
{
    return (src + e) % 3 + 1;
}

static void
test_layouts(void)
{
    g_autoptr(MsPlacement) ep = ms_placement_new_ep(8, 16, 4);
    CU_ASSERT_EQUAL(ms_placement_n_groups(ep), 2);
    CU_ASSERT_EQUAL(ms_placement_group_size(ep), 4);
    for (guint g = 0; g < 2; g++) {
        for (guint e = 0; e < 16; e++) {
            guint n = 0;
            const guint *r = ms_placement_replicas(ep, g, e, &n);
            CU_ASSERT_EQUAL(n, 1);
            CU_ASSERT_EQUAL(r[0], g * 4 + e / 4);
        }
    }
    CU_ASSERT_EQUAL(ms_placement_n_local(ep, 5), 4);
    CU_ASSERT_TRUE(ms_placement_hosts(ep, 5, 7));
    CU_ASSERT_FALSE(ms_placement_hosts(ep, 5, 8));
    CU_ASSERT_TRUE(ms_placement_complete(ep));

    g_autoptr(MsPlacement) few = ms_placement_new_static(16, 4);
    for (guint e = 0; e < 4; e++) {
        guint n = 0;
        CU_ASSERT_EQUAL(ms_placement_replicas(few, 0, e, &n)[0], e * 4);
    }
    CU_ASSERT_EQUAL(ms_placement_n_local(few, 1), 0);
    g_autoptr(MsPlacement) many = ms_placement_new_static(4, 16);
    for (guint e = 0; e < 16; e++) {
        guint n = 0;
        CU_ASSERT_EQUAL(ms_placement_replicas(many, 0, e, &n)[0], e / 4);
    }
    g_autoptr(MsPlacement) copy = ms_placement_copy(many);
    CU_ASSERT_TRUE(ms_placement_equal(copy, many));
    CU_ASSERT_FALSE(ms_placement_equal(copy, few));
    g_autoptr(MsPlacement) partial = ms_placement_new(4, 2, 4);
    ms_placement_add(partial, 0, 0, 3);
    CU_ASSERT_FALSE(ms_placement_complete(partial));
    ms_placement_add(partial, 0, 1, 3);
    CU_ASSERT_TRUE(ms_placement_complete(partial));
    CU_ASSERT_EQUAL(ms_placement_n_local(partial, 3), 2);
}

static void
test_dropless_traffic(void)
{
    g_autoptr(MsRouting) r = fx_routing(2, 4, 4, 1, small_counts);
    g_autoptr(MsPlacement) pl = ms_placement_new_ep(4, 4, 4);
    g_autoptr(MsTraffic) t = ms_traffic_new(r, 1, pl, NULL);
    CU_ASSERT_EQUAL(ms_traffic_dropped(t), 0);
    for (guint src = 0; src < 4; src++) {
        guint64 off = 0;
        for (guint dst = 0; dst < 4; dst++) {
            CU_ASSERT_EQUAL(ms_traffic_tokens(t, src, dst), small_counts(1, src, dst));
            off += dst == src ? 0 : small_counts(1, src, dst);
        }
        CU_ASSERT_EQUAL(ms_traffic_sent_off_rank(t, src), off);
    }
    /* Chunks: 3 cuts of each share x: x/3 with the remainder in the first ones; they add up. */
    guint64 whole[16] = {0}, part[16];
    guint64 per[4];
    for (guint c = 0; c < 3; c++) {
        ms_traffic_chunk_matrix(t, 0, c, 3, part);
        for (guint i = 0; i < 16; i++) {
            guint64 x = small_counts(1, i / 4, i % 4);
            CU_ASSERT_EQUAL(part[i], x / 3 + (c < x % 3));
            whole[i] += part[i];
        }
        guint64 recv = ms_traffic_chunk_received(t, 2, c, 3, per);
        guint64 want = 0;
        for (guint src = 0; src < 4; src++) {
            guint64 x = small_counts(1, src, 2);
            want += x / 3 + (c < x % 3);
        }
        CU_ASSERT_EQUAL(recv, want);
        CU_ASSERT_EQUAL(per[2], want);
        CU_ASSERT_EQUAL(per[0] + per[1] + per[3], 0);
    }
    for (guint i = 0; i < 16; i++) {
        CU_ASSERT_EQUAL(whole[i], small_counts(1, i / 4, i % 4));
    }
}

static guint32
skewed(guint layer, guint src, guint e)
{
    /* 12 choices per rank: expert 0 gets 6, the others 2 each. */
    return e == 0 ? 6 : 2;
}

static void
test_capacity(void)
{
    g_autoptr(MsRouting) r = fx_routing(1, 4, 4, 1, skewed);
    g_autoptr(MsPlacement) pl = ms_placement_new_ep(4, 4, 2);
    guint64 caps[4] = {3, 3, 3, 3};
    g_autoptr(MsTraffic) t = ms_traffic_new(r, 0, pl, caps);
    /* Every (source, expert) pair carries exactly 3 slots; expert 0 drops 6 - 3 per source. */
    CU_ASSERT_EQUAL(ms_traffic_dropped(t), 4 * 3);
    /* ep 2: ranks 0-1 form a group hosting experts 0-1 on rank 0 and 2-3 on rank 1. */
    CU_ASSERT_EQUAL(ms_traffic_tokens(t, 0, 0), 6);
    CU_ASSERT_EQUAL(ms_traffic_tokens(t, 0, 1), 6);
    CU_ASSERT_EQUAL(ms_traffic_tokens(t, 2, 3), 6);
    CU_ASSERT_EQUAL(ms_traffic_tokens(t, 0, 2), 0);
    guint64 per[4];
    CU_ASSERT_EQUAL(ms_traffic_chunk_received(t, 1, 0, 1, per), 12);
    CU_ASSERT_EQUAL(per[2], 6);
    CU_ASSERT_EQUAL(per[3], 6);
    guint64 mat[4];
    ms_traffic_chunk_matrix(t, 1, 0, 1, mat);
    CU_ASSERT_EQUAL(mat[0], 6); /* rank 2 to itself */
    CU_ASSERT_EQUAL(mat[1], 6);
}

static void
test_replicas(void)
{
    g_autoptr(MsRouting) r = fx_routing(1, 4, 4, 1, skewed);
    g_autoptr(MsPlacement) pl = ms_placement_new(4, 4, 4);
    ms_placement_add(pl, 0, 0, 0);
    ms_placement_add(pl, 0, 0, 1);
    ms_placement_add(pl, 0, 0, 2);
    ms_placement_add(pl, 0, 1, 3);
    ms_placement_add(pl, 0, 2, 3);
    ms_placement_add(pl, 0, 3, 3);
    g_autoptr(MsTraffic) t = ms_traffic_new(r, 0, pl, NULL);
    /* 6 tokens of expert 0 over 3 replicas: 2 each, from every source. */
    for (guint src = 0; src < 4; src++) {
        for (guint d = 0; d < 3; d++) {
            CU_ASSERT_EQUAL(ms_traffic_tokens(t, src, d), 2);
        }
        CU_ASSERT_EQUAL(ms_traffic_tokens(t, src, 3), 6);
    }
    /* 7 tokens over 3 replicas: 3, 2, 2, the extra one rotating with the source. */
    static const guint32 seven[4] = {7, 1, 1, 1};
    MsTraceHeader h;
    ms_trace_header_init(&h);
    h.experts = 4;
    h.layers = 1;
    h.ranks = 4;
    h.top_k = 1;
    GError *error = NULL;
    g_autoptr(MsRouting) r7 = ms_routing_new(&h, 0, &error);
    for (guint src = 0; src < 4; src++) {
        for (guint e = 0; e < 4; e++) {
            ms_routing_add_count(r7, 0, src, e, seven[e], &error);
        }
    }
    CU_ASSERT_TRUE(ms_routing_seal(r7, &error));
    g_autoptr(MsTraffic) t7 = ms_traffic_new(r7, 0, pl, NULL);
    for (guint src = 0; src < 4; src++) {
        guint64 sum = 0;
        for (guint d = 0; d < 3; d++) {
            guint64 x = ms_traffic_tokens(t7, src, d);
            CU_ASSERT_TRUE(x == 2 || x == 3);
            CU_ASSERT_EQUAL(x == 3, d == src % 3);
            sum += x;
        }
        CU_ASSERT_EQUAL(sum, 7);
    }
}

/* Local-first (FasterMoE's shadows): a source hosting a replica keeps its tokens for it. Peer
 * chunks: in groups of 2 ranks, chunk 0 is the exchange inside a source's pair, chunk 1 with the
 * other pair; they add up to the whole. */
static void
test_local_first_and_peers(void)
{
    g_autoptr(MsRouting) r = fx_routing(1, 4, 4, 1, small_counts);
    g_autoptr(MsPlacement) pl = ms_placement_new_ep(4, 4, 4);
    for (guint rank = 1; rank < 4; rank++) {
        ms_placement_add(pl, 0, 0, rank); /* expert 0 shadowed everywhere */
    }
    ms_placement_set_local_first(pl, TRUE);
    g_autoptr(MsPlacement) copy = ms_placement_copy(pl);
    CU_ASSERT_TRUE(ms_placement_local_first(copy));
    g_autoptr(MsTraffic) t = ms_traffic_new(r, 0, pl, NULL);
    for (guint src = 0; src < 4; src++) {
        /* Expert 0's tokens stay: rank src keeps small_counts(0, src, 0) for it, plus its own
         * expert's. */
        guint64 own = small_counts(0, src, 0) + (src ? small_counts(0, src, src) : 0);
        CU_ASSERT_EQUAL(ms_traffic_tokens(t, src, src), own);
        for (guint dst = 1; dst < 4; dst++) {
            if (dst != src) {
                CU_ASSERT_EQUAL(ms_traffic_tokens(t, src, dst), small_counts(0, src, dst));
            }
        }
        CU_ASSERT_EQUAL(ms_traffic_tokens(t, src, 0), src == 0 ? own : 0);
    }
    guint64 c0[16], c1[16], whole[16], per[4];
    ms_traffic_peer_matrix(t, 0, 0, 2, c0);
    ms_traffic_peer_matrix(t, 0, 1, 2, c1);
    ms_traffic_chunk_matrix(t, 0, 0, 1, whole);
    for (guint i = 0; i < 4; i++) {
        for (guint j = 0; j < 4; j++) {
            gboolean same_pair = i / 2 == j / 2;
            CU_ASSERT_EQUAL(c0[i * 4 + j], same_pair ? whole[i * 4 + j] : 0);
            CU_ASSERT_EQUAL(c1[i * 4 + j], same_pair ? 0 : whole[i * 4 + j]);
        }
    }
    /* Rank 3 receives from its pair (ranks 2 and 3) in chunk 0, its own shadowed expert 0's
     * tokens included, and from ranks 0 and 1 in chunk 1. */
    guint64 a = ms_traffic_peer_received(t, 3, 0, 2, per);
    guint64 b = ms_traffic_peer_received(t, 3, 1, 2, per);
    CU_ASSERT_EQUAL(a, small_counts(0, 2, 3) + small_counts(0, 3, 3) + small_counts(0, 3, 0));
    CU_ASSERT_EQUAL(b, small_counts(0, 0, 3) + small_counts(0, 1, 3));
    CU_ASSERT_EQUAL(per[3], b);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"training and static layouts", test_layouts},
        {"dropless traffic and exact chunk cuts", test_dropless_traffic},
        {"capacity padding and drops", test_capacity},
        {"tokens split over replicas", test_replicas},
        {"local-first routing and peer chunks", test_local_first_and_peers},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"placement", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
