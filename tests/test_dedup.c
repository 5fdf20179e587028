/* Tests of dedup and of the plan's a2a=deepep: tokens counted once per GPU and once per node in
 * closed form on 2 nodes x 8, the dispatch and combine collectives it plans (bytes, direction),
 * their JSON round trip, and every refusal (no token paths, capacity, missing RDMA bytes). */
#include "plan_fixture.h"
#include "sim/moe/dedup.h"
#include "sim/net/collective.h"

/* One MoE layer, 32 experts (2 per GPU on 16 GPUs, expert e on GPU e / 2), top-3, d_model 64
 * in bf16: 128-byte tokens. */
static const char model_text[] = "[model]\nformat = 1\nname = d1\nlayers = 1\nd_model = 64\n"
                                 "d_ffn = 128\nexperts = 32\ntop_k = 3\nheads = 4\nseq_len = 16\n"
                                 "tokens_per_gpu = 2\n";
#define TOKEN_BYTES 128

/* Four tokens: rank 0's go to GPUs {8, 8, 1} (two experts on one GPU of node 1) and {8, 9, 3};
 * rank 5's to {12, 13, 14}; rank 9's to {0, 1, 9}. */
static MsRouting *
paths(void)
{
    MsTraceHeader h;
    ms_trace_header_init(&h);
    h.experts = 32;
    h.layers = 1;
    h.ranks = 16;
    h.top_k = 3;
    GError *error = NULL;
    MsRouting *r = ms_routing_new(&h, 0, &error);
    g_assert_no_error(error);
    static const guint32 src[] = {0, 0, 5, 9};
    static const guint32 ex[][3] = {{16, 17, 2}, {16, 18, 6}, {24, 26, 28}, {0, 2, 18}};
    for (guint t = 0; t < G_N_ELEMENTS(src); t++) {
        ms_routing_add_token(r, t, src[t], ex[t], &error);
        g_assert_no_error(error);
    }
    ms_routing_seal(r, &error);
    g_assert_no_error(error);
    return r;
}

static void
expect_cells(const guint64 *m, const guint (*cells)[3], guint n_cells, guint64 unit)
{
    guint64 want[16 * 16] = {0};
    for (guint k = 0; k < n_cells; k++) {
        want[cells[k][0] * 16 + cells[k][1]] = cells[k][2] * unit;
    }
    for (guint i = 0; i < 16 * 16; i++) {
        if (m[i] != want[i]) {
            fprintf(stderr, "\n  cell %u -> %u: %" G_GUINT64_FORMAT " (want %" G_GUINT64_FORMAT ")",
                    i / 16, i % 16, m[i], want[i]);
        }
        CU_ASSERT_EQUAL(m[i], want[i]);
    }
}

/* Once per GPU: rank 0 -> 8 twice (two tokens), -> 1, 9, 3 once. Once per node, to the GPU of
 * the sender's local index: rank 0 -> 8 twice, rank 5 -> 13 once, rank 9 -> 1 once. */
static const guint pair_cells[][3] = {{0, 8, 2},  {0, 1, 1},  {0, 9, 1}, {0, 3, 1}, {5, 12, 1},
                                      {5, 13, 1}, {5, 14, 1}, {9, 0, 1}, {9, 1, 1}, {9, 9, 1}};
static const guint rdma_cells[][3] = {{0, 8, 2}, {5, 13, 1}, {9, 1, 1}};

static void
test_matrices(void)
{
    g_autoptr(MsRouting) r = paths();
    g_autoptr(MsPlacement) p = ms_placement_new_ep(16, 32, 16);
    guint node_of[16];
    for (guint i = 0; i < 16; i++) {
        node_of[i] = i / 8;
    }
    guint64 pair[16 * 16], rdma[16 * 16];
    ms_dedup_matrices(r, 0, p, 0, node_of, pair, rdma);
    expect_cells(pair, pair_cells, G_N_ELEMENTS(pair_cells), 1);
    expect_cells(rdma, rdma_cells, G_N_ELEMENTS(rdma_cells), 1);
    /* The direct all-to-all's matrix counts rank 0's first token twice for GPU 8. */
    g_autoptr(MsTraffic) t = ms_traffic_new(r, 0, p, NULL);
    CU_ASSERT_EQUAL(ms_traffic_tokens(t, 0, 8), 3);
}

static MsSchedule *
plan(const char *extra, guint8 algo, const MsRouting *r, GError **error)
{
    g_autofree char *text = g_strconcat(model_text, extra, NULL);
    g_autoptr(MsModel) m = fx_model(text);
    g_autoptr(MsTopology) t = fx_topo("dgx-a100-2node");
    MsPlanConfig cfg;
    ms_plan_config_init(&cfg);
    cfg.a2a_algo = algo;
    return ms_plan_build(m, r, t, MS_PLAN_TRAIN, &cfg, error);
}

static void
test_plan(void)
{
    g_autoptr(MsRouting) r = paths();
    GError *error = NULL;
    g_autoptr(MsSchedule) s = plan("", MS_COLL_ALGO_DEEPEP, r, &error);
    g_assert_no_error(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    static const struct {
        MsRole role;
        MsPhase phase;
        gboolean returning;
    } want[] = {{MS_ROLE_DISPATCH, MS_PHASE_FORWARD, FALSE},
                {MS_ROLE_COMBINE, MS_PHASE_FORWARD, TRUE},
                {MS_ROLE_COMBINE, MS_PHASE_BACKWARD, FALSE},
                {MS_ROLE_DISPATCH, MS_PHASE_BACKWARD, TRUE}};
    guint64 tr[16 * 16];
    for (guint k = 0; k < G_N_ELEMENTS(want); k++) {
        g_autoptr(GArray) cs = fx_colls(s, want[k].role, want[k].phase, 0);
        CU_ASSERT_EQUAL_FATAL(cs->len, 1);
        MsCollInfo c;
        ms_schedule_coll(s, g_array_index(cs, guint32, 0), &c);
        CU_ASSERT_EQUAL(c.algo, MS_COLL_ALGO_DEEPEP);
        CU_ASSERT_EQUAL(c.returning, want[k].returning);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c.rdma);
        /* Leaving the home GPUs: the matrices as counted; returning: transposed. */
        const guint64 *pm = c.matrix, *rm = c.rdma;
        guint64 pt[16 * 16];
        if (want[k].returning) {
            for (guint i = 0; i < 16; i++) {
                for (guint j = 0; j < 16; j++) {
                    pt[i * 16 + j] = c.matrix[j * 16 + i];
                    tr[i * 16 + j] = c.rdma[j * 16 + i];
                }
            }
            pm = pt;
            rm = tr;
        }
        expect_cells(pm, pair_cells, G_N_ELEMENTS(pair_cells), TOKEN_BYTES);
        expect_cells(rm, rdma_cells, G_N_ELEMENTS(rdma_cells), TOKEN_BYTES);
    }
    /* Through JSON and back: the RDMA bytes and the direction stay. */
    g_autoptr(JsonNode) json = ms_schedule_to_json(s);
    g_autoptr(MsSchedule) back = ms_schedule_from_json(json, "s.json", &error);
    g_assert_no_error(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    for (guint32 c = 0; c < ms_schedule_n_colls(s); c++) {
        MsCollInfo a, b;
        ms_schedule_coll(s, c, &a);
        ms_schedule_coll(back, c, &b);
        CU_ASSERT_EQUAL(a.algo, b.algo);
        CU_ASSERT_EQUAL(a.returning, b.returning);
        CU_ASSERT_EQUAL((a.rdma == NULL), (b.rdma == NULL));
        if (a.rdma && b.rdma) {
            CU_ASSERT_EQUAL(memcmp(a.rdma, b.rdma, sizeof(guint64) * a.n_ranks * a.n_ranks), 0);
        }
    }
    /* A deepep all-to-all without its RDMA bytes, or without its direction, is refused. */
    JsonObject *coll0 = json_array_get_object_element(
        json_object_get_array_member(json_node_get_object(json), "collectives"), 0);
    json_object_remove_member(coll0, "returning");
    CU_ASSERT_PTR_NULL(ms_schedule_from_json(json, "s.json", &error));
    CU_ASSERT_PTR_NOT_NULL(error);
    if (error) {
        CU_ASSERT_PTR_NOT_NULL(strstr(error->message, "returning"));
        g_clear_error(&error);
    }
    json_object_set_boolean_member(coll0, "returning", TRUE);
    json_object_remove_member(coll0, "rdma");
    CU_ASSERT_PTR_NULL(ms_schedule_from_json(json, "s.json", &error));
    CU_ASSERT_PTR_NOT_NULL(error);
    if (error) {
        CU_ASSERT_PTR_NOT_NULL(strstr(error->message, "rdma"));
        g_clear_error(&error);
    }
}

static guint32
count_fn(guint layer, guint src, guint e)
{
    return e < 3 ? 1 : 0;
}

static void
test_refusals(void)
{
    GError *error = NULL;
    g_autoptr(MsRouting) counts = fx_routing(1, 16, 32, 3, count_fn);
    CU_ASSERT_PTR_NULL(plan("", MS_COLL_ALGO_DEEPEP, counts, &error));
    MS_ASSERT_ERROR(error, MS_PLAN_ERROR, MS_PLAN_ERROR_INVALID,
                    "a2a=deepep needs token paths (a trace of token records");
    /* The direct all-to-all plans the same counts. */
    g_autoptr(MsSchedule) direct = plan("", MS_COLL_ALGO_DIRECT, counts, &error);
    g_assert_no_error(error);
    CU_ASSERT_PTR_NOT_NULL(direct);
    g_autoptr(MsRouting) r = paths();
    CU_ASSERT_PTR_NULL(plan("capacity_factor = 1.25\n", MS_COLL_ALGO_DEEPEP, r, &error));
    MS_ASSERT_ERROR(error, MS_PLAN_ERROR, MS_PLAN_ERROR_INVALID,
                    "a2a=deepep sends the routed tokens (dropless), but the model pads");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"tokens once per GPU and once per node", test_matrices},
        {"a2a=deepep plans both directions and survives JSON", test_plan},
        {"a2a=deepep refuses what it cannot count", test_refusals},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"dedup", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
