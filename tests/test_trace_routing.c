/* Tests of trace_routing: building iterations from counts and from token paths, the getters, and
 * every build and seal error. */
#include "ms_test.h"
#include "traces/trace_routing.h"

static MsTraceHeader
shape(guint32 experts, guint32 layers, guint32 ranks, guint32 top_k)
{
    MsTraceHeader h;
    ms_trace_header_init_shape(&h, experts, layers, ranks, top_k);
    return h;
}

/* 2 layers, 2 ranks, 4 experts, top-2: rank 0 has tokens {0,1}->{2,3} and {0,2}->{2,1}; rank 1
 * has {3,1}->{0,2}. */
static MsRouting *
small_paths(void)
{
    MsTraceHeader h = shape(4, 2, 2, 2);
    GError *error = NULL;
    MsRouting *r = ms_routing_new(&h, 5, &error);
    const guint32 t0[] = {0, 1, 2, 3}, t1[] = {0, 2, 2, 1}, t2[] = {3, 1, 0, 2};
    CU_ASSERT_TRUE(ms_routing_add_token(r, 100, 1, t2, &error));
    CU_ASSERT_TRUE(ms_routing_add_token(r, 10, 0, t0, &error));
    CU_ASSERT_TRUE(ms_routing_add_token(r, 11, 0, t1, &error));
    CU_ASSERT_TRUE(ms_routing_seal(r, &error));
    CU_ASSERT_PTR_NULL(error);
    return r;
}

static void
test_token_paths(void)
{
    g_autoptr(MsRouting) r = small_paths();
    CU_ASSERT_EQUAL(ms_routing_iteration(r), 5);
    CU_ASSERT_TRUE(ms_routing_has_paths(r));
    CU_ASSERT_EQUAL(ms_routing_rank_tokens(r, 0), 2);
    CU_ASSERT_EQUAL(ms_routing_rank_tokens(r, 1), 1);
    CU_ASSERT_EQUAL(ms_routing_total_tokens(r), 3);
    CU_ASSERT_EQUAL(ms_routing_n_tokens(r, 0), 2);
    /* Rank 0's tokens keep their record order; rank 1's token comes after although read first. */
    CU_ASSERT_EQUAL(ms_routing_token_id(r, 0, 0), 10);
    CU_ASSERT_EQUAL(ms_routing_token_id(r, 0, 1), 11);
    CU_ASSERT_EQUAL(ms_routing_token_id(r, 1, 0), 100);
    const guint16 *e = ms_routing_token_experts(r, 0, 1, 1);
    CU_ASSERT_EQUAL(e[0], 2);
    CU_ASSERT_EQUAL(e[1], 1);
    e = ms_routing_token_experts(r, 1, 0, 0);
    CU_ASSERT_EQUAL(e[0], 3);
    CU_ASSERT_EQUAL(e[1], 1);
    /* Counts follow from the paths. */
    CU_ASSERT_EQUAL(ms_routing_count(r, 0, 0, 0), 2);
    CU_ASSERT_EQUAL(ms_routing_count(r, 0, 0, 1), 1);
    CU_ASSERT_EQUAL(ms_routing_count(r, 0, 0, 3), 0);
    CU_ASSERT_EQUAL(ms_routing_count(r, 1, 0, 2), 2);
    const guint32 *row = ms_routing_counts(r, 1, 1);
    CU_ASSERT_EQUAL(row[0], 1);
    CU_ASSERT_EQUAL(row[1], 0);
    CU_ASSERT_EQUAL(row[2], 1);
    CU_ASSERT_EQUAL(ms_routing_expert_load(r, 0, 1), 2);
    CU_ASSERT_EQUAL(ms_routing_expert_load(r, 1, 2), 3);
    g_autoptr(MsRouting) same = small_paths();
    CU_ASSERT_TRUE(ms_routing_equal(r, same));
    ms_routing_drop_paths(same);
    CU_ASSERT_FALSE(ms_routing_has_paths(same));
    CU_ASSERT_EQUAL(ms_routing_n_tokens(same, 0), 0);
    CU_ASSERT_EQUAL(ms_routing_rank_tokens(same, 0), 2);
    CU_ASSERT_EQUAL(ms_routing_count(same, 1, 0, 2), 2);
    CU_ASSERT_FALSE(ms_routing_equal(r, same));
}

static void
test_counts(void)
{
    MsTraceHeader h = shape(3, 2, 2, 2);
    h.tokens_per_rank = 5;
    GError *error = NULL;
    g_autoptr(MsRouting) r = ms_routing_new(&h, 0, &error);
    /* rank 0: 5 tokens (10 assignments per layer), rank 1 likewise. */
    static const guint32 c[2][2][3] = {{{4, 3, 3}, {10, 0, 0}}, {{5, 5, 0}, {1, 2, 7}}};
    for (guint32 l = 0; l < 2; l++) {
        for (guint32 rank = 0; rank < 2; rank++) {
            for (guint32 e = 0; e < 3; e++) {
                CU_ASSERT_TRUE(ms_routing_add_count(r, l, rank, e, c[l][rank][e], &error));
            }
        }
    }
    CU_ASSERT_TRUE(ms_routing_seal(r, &error));
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_FALSE(ms_routing_has_paths(r));
    CU_ASSERT_EQUAL(ms_routing_n_tokens(r, 1), 0);
    CU_ASSERT_EQUAL(ms_routing_rank_tokens(r, 0), 5);
    CU_ASSERT_EQUAL(ms_routing_rank_tokens(r, 1), 5);
    CU_ASSERT_EQUAL(ms_routing_count(r, 1, 1, 2), 7);
    CU_ASSERT_EQUAL(ms_routing_expert_load(r, 1, 0), 6);
    /* An iteration without records is valid and empty. */
    h.tokens_per_rank = 0;
    g_autoptr(MsRouting) empty = ms_routing_new(&h, 3, &error);
    CU_ASSERT_TRUE(ms_routing_seal(empty, &error));
    CU_ASSERT_EQUAL(ms_routing_total_tokens(empty), 0);
    CU_ASSERT_FALSE(ms_routing_has_paths(empty));
}

static void
test_build_errors(void)
{
    MsTraceHeader h = shape(4, 2, 2, 2);
    GError *error = NULL;
    g_autoptr(MsRouting) r = ms_routing_new(&h, 7, &error);
    CU_ASSERT_FALSE(ms_routing_add_count(r, 2, 0, 0, 1, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE, "layer 2 out of range");
    CU_ASSERT_FALSE(ms_routing_add_count(r, 0, 2, 0, 1, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE, "rank 2 out of range");
    CU_ASSERT_FALSE(ms_routing_add_count(r, 0, 0, 4, 1, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE, "expert 4 out of range");
    CU_ASSERT_TRUE(ms_routing_add_count(r, 1, 1, 3, 0, &error));
    CU_ASSERT_FALSE(ms_routing_add_count(r, 1, 1, 3, 9, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_DUPLICATE,
                    "duplicate count record for iteration 7 layer 1 rank 1 expert 3");
    const guint32 path[] = {0, 1, 2, 3};
    CU_ASSERT_FALSE(ms_routing_add_token(r, 1, 0, path, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_MIXED,
                    "iteration 7 mixes count and token records");

    g_autoptr(MsRouting) t = ms_routing_new(&h, 8, &error);
    CU_ASSERT_TRUE(ms_routing_add_token(t, 42, 0, path, &error));
    CU_ASSERT_TRUE(ms_routing_add_token(t, 42, 1, path, &error)); /* same id, other rank */
    CU_ASSERT_FALSE(ms_routing_add_token(t, 42, 0, path, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_DUPLICATE,
                    "token 42 of rank 0 appears twice in iteration 8");
    const guint32 twice[] = {1, 1, 2, 3}, wide[] = {0, 1, 2, 4};
    CU_ASSERT_FALSE(ms_routing_add_token(t, 43, 0, twice, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_PATH, "layer 0: expert 1 chosen twice");
    CU_ASSERT_FALSE(ms_routing_add_token(t, 44, 0, wide, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE, "layer 1: expert 4 out of range");
    CU_ASSERT_FALSE(ms_routing_add_token(t, 45, 2, path, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE, "rank 2 out of range");
    CU_ASSERT_FALSE(ms_routing_add_count(t, 0, 0, 0, 1, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_MIXED, "mixes count and token records");
    /* Many tokens: the id set grows and still finds the duplicate. */
    for (guint64 id = 1000; id < 5000; id++) {
        CU_ASSERT_TRUE_FATAL(ms_routing_add_token(t, id, 1, path, &error));
    }
    CU_ASSERT_FALSE(ms_routing_add_token(t, 4321, 1, path, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_DUPLICATE, "token 4321 of rank 1");

    /* Increasing ids need no set; a smaller new id is accepted and from then on every id is
     * checked against all earlier ones, of every rank. */
    g_autoptr(MsRouting) u = ms_routing_new(&h, 9, &error);
    for (guint64 id = 10; id < 3000; id += 2) {
        CU_ASSERT_TRUE_FATAL(ms_routing_add_token(u, id, (guint32)(id % 4 == 0), path, &error));
    }
    CU_ASSERT_TRUE(ms_routing_add_token(u, 11, 0, path, &error));
    CU_ASSERT_TRUE(ms_routing_add_token(u, 3001, 1, path, &error));
    CU_ASSERT_FALSE(ms_routing_add_token(u, 2996, 1, path, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_DUPLICATE,
                    "token 2996 of rank 1 appears twice in iteration 9");
    CU_ASSERT_FALSE(ms_routing_add_token(u, 3001, 1, path, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_DUPLICATE, "token 3001 of rank 1");
    CU_ASSERT_FALSE(ms_routing_add_token(u, 10, 0, path, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_DUPLICATE, "token 10 of rank 0");
    CU_ASSERT_TRUE(ms_routing_add_token(u, 10, 1, path, &error));
    CU_ASSERT_TRUE(ms_routing_seal(u, &error));
    CU_ASSERT_EQUAL(ms_routing_total_tokens(u), 1495 + 3);
}

static void
test_new_errors(void)
{
    GError *error = NULL;
    MsTraceHeader h = shape(1000000000, 2, 2, 2);
    CU_ASSERT_PTR_NULL(ms_routing_new(&h, 0, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT, "experts = 1000000000");
    h = shape(4, 2, 2, 2);
    CU_ASSERT_PTR_NULL(ms_routing_new(&h, G_GUINT64_CONSTANT(1) << 32, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_OVERFLOW,
                    "iteration 4294967296 exceeds the limit of 4294967295");
}

static MsRouting *
counts_routing(const guint32 *rows, guint32 tokens_per_rank, GError **error)
{
    /* 2 layers, 1 rank, 2 experts, top-1; rows = {l0e0, l0e1, l1e0, l1e1}. */
    MsTraceHeader h = shape(2, 2, 1, 1);
    h.tokens_per_rank = tokens_per_rank;
    MsRouting *r = ms_routing_new(&h, 4, error);
    for (guint i = 0; i < 4; i++) {
        CU_ASSERT_TRUE(ms_routing_add_count(r, i / 2, 0, i % 2, rows[i], error));
    }
    return r;
}

static void
test_seal_errors(void)
{
    GError *error = NULL;
    const guint32 uneven[] = {3, 4, 2, 4};
    g_autoptr(MsRouting) a = counts_routing(uneven, 0, &error);
    CU_ASSERT_FALSE(ms_routing_seal(a, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_INCONSISTENT,
                    "iteration 4 rank 0: 6 token-expert assignments at layer 1 but 7 at layer 0");
    const guint32 even[] = {3, 4, 5, 2};
    g_autoptr(MsRouting) b = counts_routing(even, 8, &error);
    CU_ASSERT_FALSE(ms_routing_seal(b, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_INCONSISTENT,
                    "iteration 4 rank 0 routes 7 tokens but the header says tokens_per_rank 8");
    g_autoptr(MsRouting) ok = counts_routing(even, 7, &error);
    CU_ASSERT_TRUE(ms_routing_seal(ok, &error));

    MsTraceHeader h = shape(2, 1, 1, 2);
    g_autoptr(MsRouting) odd = ms_routing_new(&h, 0, &error);
    CU_ASSERT_TRUE(ms_routing_add_count(odd, 0, 0, 0, 3, &error));
    CU_ASSERT_TRUE(ms_routing_add_count(odd, 0, 0, 1, 2, &error));
    CU_ASSERT_FALSE(ms_routing_seal(odd, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_INCONSISTENT,
                    "5 token-expert assignments per layer is not a multiple of top_k = 2");

    h = shape(1, 1, 1, 1);
    g_autoptr(MsRouting) huge = ms_routing_new(&h, 0, &error);
    CU_ASSERT_TRUE(ms_routing_add_count(huge, 0, 0, 0, G_MAXUINT32, &error));
    CU_ASSERT_FALSE(ms_routing_seal(huge, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT,
                    "rank 0 routes 4294967295 tokens, above the limit of 67108864");

    h = shape(2, 1, 2, 1);
    h.tokens_per_rank = 1;
    g_autoptr(MsRouting) short_rank = ms_routing_new(&h, 2, &error);
    const guint32 path[] = {1};
    CU_ASSERT_TRUE(ms_routing_add_token(short_rank, 0, 0, path, &error));
    CU_ASSERT_FALSE(ms_routing_seal(short_rank, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_INCONSISTENT,
                    "iteration 2 rank 1 routes 0 tokens but the header says tokens_per_rank 1");
}

/* Blocks of tokens add what one call per token adds, shuffled ranks included; a bad path, a
 * repeated id or an id below the rank's last fail as the single call fails, naming the token. */
static void
test_add_tokens(void)
{
    MsTraceHeader h = shape(4, 2, 3, 2);
    /* Five paths of 2 layers x top-2. */
    const guint32 paths[] = {0, 1, 2, 3, 1, 2, 3, 0, 3, 2, 1, 0, 2, 0, 0, 1, 1, 3, 2, 0};
    const guint len = 4;
    GError *error = NULL;
    g_autoptr(MsRouting) one = ms_routing_new(&h, 0, &error);
    g_autoptr(MsRouting) block = ms_routing_new(&h, 0, &error);
    const struct {
        guint64 first;
        guint32 rank, n, from;
    } adds[] = {{7, 2, 2, 0}, {0, 0, 3, 2}, {9, 2, 1, 4}, {3, 0, 0, 0}, {20, 1, 5, 0}};
    for (gsize a = 0; a < G_N_ELEMENTS(adds); a++) {
        for (guint32 t = 0; t < adds[a].n; t++) {
            CU_ASSERT_TRUE(ms_routing_add_token(one, adds[a].first + t, adds[a].rank,
                                                paths + (adds[a].from + t) * len, &error));
        }
        CU_ASSERT_TRUE(ms_routing_add_tokens(block, adds[a].first, adds[a].rank, adds[a].n,
                                             paths + adds[a].from * len, &error));
    }
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_TRUE(ms_routing_seal(one, &error));
    CU_ASSERT_TRUE(ms_routing_seal(block, &error));
    CU_ASSERT_TRUE(ms_routing_equal(one, block));
    CU_ASSERT_EQUAL(ms_routing_rank_tokens(block, 0), 3);
    CU_ASSERT_EQUAL(ms_routing_rank_tokens(block, 1), 5);
    CU_ASSERT_EQUAL(ms_routing_token_id(block, 2, 2), 9);
    CU_ASSERT_EQUAL(ms_routing_count(block, 1, 1, 0), 4);

    const guint32 bad[] = {0, 1, 2, 3, 1, 1, 3, 0}; /* the second token picks expert 1 twice */
    const struct {
        guint64 first;
        guint32 n;
        const guint32 *paths;
        int code;
        const char *message;
    } errors[] = {
        {0, 2, bad, MS_TRACE_ERROR_PATH, "layer 0: expert 1 chosen twice"},
        {4, 2, paths, MS_TRACE_ERROR_DUPLICATE, "token 4 of rank 0 appears twice"},
    };
    for (gsize e = 0; e < G_N_ELEMENTS(errors); e++) {
        g_autoptr(MsRouting) r = ms_routing_new(&h, 0, NULL);
        /* Rank 0 holds ids 4 and 5, then a block starts at errors[e].first. */
        CU_ASSERT_TRUE(ms_routing_add_tokens(r, 4, 0, 2, paths, NULL));
        g_autoptr(GError) err = NULL;
        CU_ASSERT_FALSE(ms_routing_add_tokens(r, errors[e].first + (e == 0 ? 6 : 0), 0, errors[e].n,
                                              errors[e].paths, &err));
        CU_ASSERT_TRUE(g_error_matches(err, MS_TRACE_ERROR, errors[e].code));
        CU_ASSERT_PTR_NOT_NULL(err ? strstr(err->message, errors[e].message) : NULL);
    }
    g_autoptr(MsRouting) r = ms_routing_new(&h, 0, NULL);
    g_autoptr(GError) err = NULL;
    CU_ASSERT_FALSE(ms_routing_add_tokens(r, 0, 3, 1, paths, &err));
    CU_ASSERT_TRUE(g_error_matches(err, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE));
}

static void
test_equal(void)
{
    g_autoptr(MsRouting) a = small_paths();
    MsTraceHeader h = shape(4, 2, 2, 2);
    GError *error = NULL;
    /* Same counts, other token ids. */
    g_autoptr(MsRouting) b = ms_routing_new(&h, 5, &error);
    const guint32 t0[] = {0, 1, 2, 3}, t1[] = {0, 2, 2, 1}, t2[] = {3, 1, 0, 2};
    CU_ASSERT_TRUE(ms_routing_add_token(b, 10, 0, t0, &error));
    CU_ASSERT_TRUE(ms_routing_add_token(b, 12, 0, t1, &error));
    CU_ASSERT_TRUE(ms_routing_add_token(b, 100, 1, t2, &error));
    CU_ASSERT_TRUE(ms_routing_seal(b, &error));
    CU_ASSERT_FALSE(ms_routing_equal(a, b));
    /* Other iteration number. */
    g_autoptr(MsRouting) c = ms_routing_new(&h, 6, &error);
    CU_ASSERT_TRUE(ms_routing_seal(c, &error));
    g_autoptr(MsRouting) d = ms_routing_new(&h, 5, &error);
    CU_ASSERT_TRUE(ms_routing_seal(d, &error));
    CU_ASSERT_FALSE(ms_routing_equal(c, d));
    CU_ASSERT_FALSE(ms_routing_equal(a, d));
    CU_ASSERT_EQUAL(ms_routing_header(a)->experts, 4);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"token paths and derived counts", test_token_paths},
        {"count records", test_counts},
        {"build errors", test_build_errors},
        {"new errors", test_new_errors},
        {"seal errors", test_seal_errors},
        {"equality", test_equal},
        {"blocks of tokens", test_add_tokens},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"trace_routing", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
