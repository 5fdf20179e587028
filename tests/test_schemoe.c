/* Tests of schemoe: the compute order of an MoE layer equals ScheMoE's Theorem 1 order
 * (computed here independently, and checked optimal by brute force over every order for r = 2),
 * r chunks, compression tasks and their cost, Pipe-A2A, first-come first-served communication,
 * and the parameter conflicts. */
#include "plan_fixture.h"
#include "sim/net/collective.h"

typedef struct {
    MsRole role;
    gint chunk;
    gboolean second; /* the compression or decompression after the expert */
} Task;

/* Theorem 1 (OptSche) for r chunks: C1_1..C1_r, then D1_i, E_i, C2_i for i = 1..r, then
 * D2_1..D2_r; without compression only the experts, in chunk order. */
static GArray *
theorem1(guint r, gboolean compress)
{
    GArray *t = g_array_new(FALSE, FALSE, sizeof(Task));
    for (guint i = 0; compress && i < r; i++) {
        Task x = {MS_ROLE_COMPRESS, (gint)i, FALSE};
        g_array_append_val(t, x);
    }
    for (guint i = 0; i < r; i++) {
        Task d = {MS_ROLE_DECOMPRESS, (gint)i, FALSE}, e = {MS_ROLE_EXPERT, (gint)i, FALSE};
        Task c = {MS_ROLE_COMPRESS, (gint)i, TRUE};
        if (compress) {
            g_array_append_val(t, d);
        }
        g_array_append_val(t, e);
        if (compress) {
            g_array_append_val(t, c);
        }
    }
    for (guint i = 0; compress && i < r; i++) {
        Task x = {MS_ROLE_DECOMPRESS, (gint)i, TRUE};
        g_array_append_val(t, x);
    }
    return t;
}

/* The compute ops of one MoE section of rank 0 in priority order (between its gate and the next
 * layer), as tasks; first/second told apart by position around the expert of their chunk. */
static GArray *
section_order(const MsSchedule *s, gint layer, MsPhase phase)
{
    guint n = 0;
    const guint32 *ops = ms_schedule_rank_ops(s, 0, &n);
    GArray *t = g_array_new(FALSE, FALSE, sizeof(Task));
    g_autoptr(GArray) prio = g_array_new(FALSE, FALSE, sizeof(gint64));
    for (guint k = 0; k < n; k++) {
        MsOpInfo i = fx_op(s, ops[k]);
        if (i.kind == MS_OP_COMPUTE && i.layer == layer && i.phase == phase &&
            (i.role == MS_ROLE_COMPRESS || i.role == MS_ROLE_DECOMPRESS ||
             i.role == MS_ROLE_EXPERT)) {
            Task x = {i.role, i.chunk < 0 ? 0 : i.chunk, FALSE};
            g_array_append_val(t, x);
            g_array_append_val(prio, i.priority);
        }
    }
    /* Ops come in id order; sort by priority (insertion sort, small). */
    for (guint a = 1; a < t->len; a++) {
        for (guint b = a;
             b > 0 && g_array_index(prio, gint64, b) < g_array_index(prio, gint64, b - 1); b--) {
            Task tt = g_array_index(t, Task, b);
            g_array_index(t, Task, b) = g_array_index(t, Task, b - 1);
            g_array_index(t, Task, b - 1) = tt;
            gint64 pp = g_array_index(prio, gint64, b);
            g_array_index(prio, gint64, b) = g_array_index(prio, gint64, b - 1);
            g_array_index(prio, gint64, b - 1) = pp;
        }
    }
    /* A (de)compression after its chunk's expert is the second one. */
    for (guint a = 0; a < t->len; a++) {
        Task *x = &g_array_index(t, Task, a);
        for (guint b = 0; b < a; b++) {
            const Task *y = &g_array_index(t, Task, b);
            x->second |= y->role == MS_ROLE_EXPERT && y->chunk == x->chunk;
        }
    }
    return t;
}

static const char model_text[] = "[model]\nformat = 1\nname = sm\nlayers = 2\nd_model = 256\n"
                                 "d_ffn = 512\nexperts = 8\ntop_k = 2\nheads = 4\nseq_len = 64\n"
                                 "tokens_per_gpu = 64\ncapacity_factor = 1.2\n";

static guint32
counts(guint layer, guint src, guint e)
{
    return e == (src + layer) % 8 ? 44 : 12;
}

static MsSchedule *
plan(const char *spec, GError **error)
{
    g_autoptr(MsModel) m = fx_model(model_text);
    g_autoptr(MsTopology) t = fx_topo("dgx-a100");
    g_autoptr(MsRouting) r = fx_routing(2, 8, 8, 2, counts);
    g_autoptr(MsPolicy) p = ms_policy_parse(spec, error);
    MsPolicyInput in = {m, r, t, MS_PLAN_TRAIN, NULL};
    return p ? ms_policy_plan(p, &in, error) : NULL;
}

static void
assert_order(const char *spec, guint r, gboolean compress)
{
    GError *error = NULL;
    g_autoptr(MsSchedule) s = plan(spec, &error);
    g_assert_no_error(error);
    g_autoptr(GArray) want = theorem1(r, compress);
    for (MsPhase ph = MS_PHASE_FORWARD; ph <= MS_PHASE_BACKWARD; ph++) {
        g_autoptr(GArray) got = section_order(s, 1, ph);
        CU_ASSERT_EQUAL_FATAL(got->len, want->len);
        for (guint k = 0; k < want->len; k++) {
            const Task *a = &g_array_index(got, Task, k), *b = &g_array_index(want, Task, k);
            CU_ASSERT_EQUAL(a->role, b->role);
            CU_ASSERT_EQUAL(a->chunk, b->chunk);
            CU_ASSERT_EQUAL(a->second, b->second);
        }
    }
}

static void
test_theorem1_order(void)
{
    assert_order("schemoe:r=1,compress=0.5", 1, TRUE);
    assert_order("schemoe:r=2,compress=0.5", 2, TRUE);
    assert_order("schemoe:r=3,compress=0.5", 3, TRUE);
    assert_order("schemoe:r=4", 4, FALSE);
}

/* --- brute force: every compute order of r = 2 chunks --- */

enum { C1, D1, E, C2, D2, N_STEPS };

typedef struct {
    double c, d, e, a; /* compress, decompress, expert, all-to-all */
} Costs;

/* Makespan of a compute order (an interleaving of the two chunks' chains, as chunk ids in
 * order), with the two all-to-alls of each chunk on one first-come first-served link. */
static double
makespan(const guint *order, guint n, const Costs *k)
{
    double dur[N_STEPS] = {k->c, k->d, k->e, k->c, k->d};
    guint next[2] = {0, 0};
    double a1_done[2] = {0}, a2_done[2] = {0}, comp = 0, link = 0;
    /* All-to-all requests: (ready time, chunk, which); served in ready order, ties by issue. */
    for (guint i = 0; i < n; i++) {
        guint c = order[i], step = next[c]++;
        double ready = comp;
        if (step == D1) {
            ready = MAX(ready, a1_done[c]);
        } else if (step == D2) {
            ready = MAX(ready, a2_done[c]);
        }
        comp = ready + dur[step];
        if (step == C1 || step == C2) {
            /* The all-to-all this compression feeds: FIFO on the link. Requests are issued in
             * compute order, which is their readiness order. */
            link = MAX(link, comp) + k->a;
            (step == C1 ? a1_done : a2_done)[c] = link;
        }
    }
    return comp;
}

static gboolean
next_order(guint *order, guint n)
{
    /* Next lexicographic permutation of a multiset (0s and 1s). */
    gint i = (gint)n - 2;
    while (i >= 0 && order[i] >= order[i + 1]) {
        i--;
    }
    if (i < 0) {
        return FALSE;
    }
    gint j = (gint)n - 1;
    while (order[j] <= order[i]) {
        j--;
    }
    guint t = order[i];
    order[i] = order[j];
    order[j] = t;
    for (guint a = i + 1, b = n - 1; a < b; a++, b--) {
        t = order[a];
        order[a] = order[b];
        order[b] = t;
    }
    return TRUE;
}

static void
test_theorem1_optimal(void)
{
    /* OptSche for r = 2 as chunk ids: C1_0 C1_1 D1_0 E_0 C2_0 D1_1 E_1 C2_1 D2_0 D2_1. */
    static const guint opt[10] = {0, 1, 0, 0, 0, 1, 1, 1, 0, 1};
    /* Chunk by chunk (each chunk's first compression just before its decompression). */
    static const guint chunked[10] = {0, 0, 0, 0, 1, 1, 1, 1, 0, 1};
    guint worse = 0;
    g_autoptr(GRand) rand = g_rand_new_with_seed(42);
    for (guint trial = 0; trial < 200; trial++) {
        Costs k = {g_rand_double_range(rand, 0.05, 1), g_rand_double_range(rand, 0.05, 1),
                   g_rand_double_range(rand, 0.1, 4), g_rand_double_range(rand, 0.1, 4)};
        guint order[10] = {0, 0, 0, 0, 0, 1, 1, 1, 1, 1};
        double best = G_MAXDOUBLE;
        do {
            best = MIN(best, makespan(order, 10, &k));
        } while (next_order(order, 10));
        double got = makespan(opt, 10, &k);
        if (got > best * (1 + 1e-12)) {
            fprintf(stderr, "\n  c %g d %g e %g a %g: OptSche %g, best %g\n", k.c, k.d, k.e, k.a,
                    got, best);
        }
        CU_ASSERT_TRUE(got <= best * (1 + 1e-12));
        worse += makespan(chunked, 10, &k) > best * (1 + 1e-12);
    }
    /* The search does tell orders apart: chunk by chunk loses in many cases. */
    CU_ASSERT_TRUE(worse > 20);
}

static void
test_chunks_and_compression(void)
{
    GError *error = NULL;
    g_autoptr(MsSchedule) s = plan("schemoe:r=3,compress=0.25,compress_cost=2ps,pipe=true", &error);
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(ms_schedule_n_streams(s), 3);
    g_autoptr(GArray) d = fx_colls(s, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0);
    CU_ASSERT_EQUAL_FATAL(d->len, 3);
    MsCollInfo c;
    ms_schedule_coll(s, g_array_index(d, guint32, 0), &c);
    CU_ASSERT_EQUAL(c.algo, MS_COLL_ALGO_PIPE);
    /* Capacity 1.2 over 64 tokens: C = 2 x floor(1.2 x 8) = 18 slots per pair, cut in 3: 6
     * slots of 512 B at a quarter of the size. */
    CU_ASSERT_EQUAL(c.matrix[1], 6 * 512 / 4);
    /* A compression of chunk 0 on rank 0: 8 pairs x 6 slots x 512 B at 2 ps per byte, written
     * as the memory traffic that takes that long at the GPU's 2039 GB/s. */
    guint n = 0;
    const guint32 *ops = ms_schedule_rank_ops(s, 0, &n);
    for (guint k = 0; k < n; k++) {
        MsOpInfo i = fx_op(s, ops[k]);
        if (i.role == MS_ROLE_COMPRESS && i.layer == 0 && i.chunk == 0 &&
            i.phase == MS_PHASE_FORWARD) {
            MS_ASSERT_REL(i.bytes, 8 * 6 * 512 * 2e-12 * 2039e9, 1e-9);
            break;
        }
    }
    CU_ASSERT_STRING_EQUAL(ms_schedule_get_meta(s, "dropped_tokens"), "416");
    /* Communication first come first served, on the all-to-all stream and the allreduce one. */
    FxRun run;
    CU_ASSERT_TRUE_FATAL(fx_execute(s, &run));
    g_autoptr(GArray) colls = fx_coll_order(s, &run, NULL, NULL, FX_BY_SEQ);
    CU_ASSERT_EQUAL(fx_inversions(colls, 1), 0);
    CU_ASSERT_EQUAL(fx_inversions(colls, 2), 0);
    fx_run_clear(&run);
}

static void
test_errors(void)
{
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(plan("schemoe:pipe=true,a2a=2dh", &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE,
                    "policy schemoe: pipe=true conflicts with a2a=2dh");
    CU_ASSERT_PTR_NULL(plan("schemoe:compress_cost=1ps", &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE,
                    "policy schemoe: compress_cost needs compress below 1");
    g_autoptr(MsSchedule) ok = plan("schemoe:pipe=true,a2a=pipe", &error);
    g_assert_no_error(error);
    CU_ASSERT_PTR_NOT_NULL(ok);
    CU_ASSERT_PTR_NULL(plan("schemoe:zfp=true,compress=0.5", &error));
    MS_ASSERT_ERROR(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE,
                    "policy schemoe: give either zfp or compress, not both");
}

/* zfp=true: ZFP's 8 bits per value against the model's bf16, half the bytes on the wire. */
static void
test_zfp(void)
{
    GError *error = NULL;
    g_autoptr(MsSchedule) s = plan("schemoe:r=3,zfp=true", &error);
    g_assert_no_error(error);
    g_autoptr(GArray) d = fx_colls(s, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0);
    MsCollInfo c;
    ms_schedule_coll(s, g_array_index(d, guint32, 0), &c);
    CU_ASSERT_EQUAL(c.matrix[1], 6 * 512 / 2);
    CU_ASSERT(fx_count_ops(s, 0, 0, MS_ROLE_COMPRESS, MS_PHASE_FORWARD) > 0);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"compute order is Theorem 1's (OptSche)", test_theorem1_order},
        {"Theorem 1's order is optimal for r = 2 (brute force)", test_theorem1_optimal},
        {"chunks, compression, Pipe-A2A, FIFO communication", test_chunks_and_compression},
        {"parameter conflicts", test_errors},
        {"ZFP's rate", test_zfp},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"schemoe", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
