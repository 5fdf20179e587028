/* Tests of the cuda backend's plan, which needs no GPU: each op's kernels (shaped, one set per
 * busy expert, derived, elementwise, empty) and the refusals of what cannot run, per-stream buffer
 * needs, all-to-all offsets, stream priorities, subset communicators, warm-up peers, the session
 * blob, and the cuBLAS, NCCL and kernel types of each datatype with the buffers they size. */
#include "backends/cuda/cuda_plan.h"
#include "ms_test.h"

static MsOpInfo
compute_op(MsComputeKind kind, double flops, double bytes, guint32 tokens)
{
    MsOpInfo i = {.id = 7,
                  .rank = 1,
                  .label = "L0.expert",
                  .kind = MS_OP_COMPUTE,
                  .compute = kind,
                  .flops = flops,
                  .bytes = bytes,
                  .tokens = tokens};
    return i;
}

/* The plan's expert op of a Mixtral expert: 1024 tokens per expert, three matrices. */
static MsOpInfo
expert_op(double flops, guint32 tokens, guint32 experts)
{
    MsOpInfo i = compute_op(MS_COMPUTE_EXPERT, flops, 0, tokens);
    i.gemm_m = 1024;
    i.gemm_n = 14336;
    i.gemm_k = 4096;
    i.gemm_count = 3;
    i.experts = experts;
    return i;
}

static void
test_work(void)
{
    GError *error = NULL;
    MsCudaWork w;
    /* 8 local experts, 8192 tokens in all */
    MsOpInfo i = expert_op(0, 8192, 8);
    CU_ASSERT_TRUE_FATAL(ms_cuda_plan_work(&i, 2, &w, &error));
    CU_ASSERT_EQUAL(w.kind, MS_CUDA_WORK_GEMM);
    CU_ASSERT_EQUAL(w.sets, 8);
    CU_ASSERT_EQUAL(w.count, 3);
    CU_ASSERT_FALSE(w.derived);
    guint64 a, b, c;
    ms_cuda_work_elements(&w, &a, &b, &c);
    CU_ASSERT_EQUAL(a, 8ull * 1024 * 4096);
    CU_ASSERT_EQUAL(b, 3ull * 8 * 4096 * 14336);
    CU_ASSERT_EQUAL(c, 8ull * 1024 * 14336);
    /* 3000 tokens at 1024 per expert: three experts have work */
    i.tokens = 3000;
    CU_ASSERT_TRUE(ms_cuda_plan_work(&i, 2, &w, &error));
    CU_ASSERT_EQUAL(w.sets, 3);
    /* no token count: every local expert */
    i.tokens = 0;
    CU_ASSERT_TRUE(ms_cuda_plan_work(&i, 2, &w, &error));
    CU_ASSERT_EQUAL(w.sets, 8);
    /* a dense GEMM ignores the experts field */
    i.compute = MS_COMPUTE_GEMM;
    CU_ASSERT_TRUE(ms_cuda_plan_work(&i, 2, &w, &error));
    CU_ASSERT_EQUAL(w.sets, 1);
    CU_ASSERT_EQUAL(w.calls, 3);
}

/* Flops beyond the shape's run as more calls over the same matrices. */
static void
test_calls_from_flops(void)
{
    GError *error = NULL;
    MsCudaWork w;
    double shape = 2.0 * 1024 * 14336 * 4096 * 3 * 4;
    /* the forward op over 4 experts: its flops are its shape's */
    MsOpInfo i = expert_op(shape, 4096, 4);
    CU_ASSERT_TRUE_FATAL(ms_cuda_plan_work(&i, 2, &w, &error));
    CU_ASSERT_EQUAL(w.count, 3);
    CU_ASSERT_EQUAL(w.calls, 3);
    /* the backward op: twice the flops, the gradients of inputs and weights */
    i.flops = 2 * shape;
    CU_ASSERT_TRUE(ms_cuda_plan_work(&i, 2, &w, &error));
    CU_ASSERT_EQUAL(w.count, 3);
    CU_ASSERT_EQUAL(w.calls, 6);
    guint64 a, b, c;
    ms_cuda_work_elements(&w, &a, &b, &c);
    CU_ASSERT_EQUAL(b, 3ull * 4 * 4096 * 14336); /* no more weights */
    /* 1.5 times a four-matrix shape (attention with its score products): 6 calls */
    i.compute = MS_COMPUTE_ATTENTION;
    i.gemm_count = 4;
    i.experts = 0;
    i.flops = 1.5 * 2.0 * 1024 * 14336 * 4096 * 4;
    CU_ASSERT_TRUE(ms_cuda_plan_work(&i, 2, &w, &error));
    CU_ASSERT_EQUAL(w.calls, 6);
    /* fewer flops than the shape (its m rounded up): the shape */
    i.flops = 0.9 * 2.0 * 1024 * 14336 * 4096 * 4;
    CU_ASSERT_TRUE(ms_cuda_plan_work(&i, 2, &w, &error));
    CU_ASSERT_EQUAL(w.calls, 4);
    /* flops a tiny shape cannot carry in MS_CUDA_MAX_CALLS calls */
    i.gemm_m = i.gemm_n = i.gemm_k = 1;
    i.flops = 1e12;
    CU_ASSERT_FALSE(ms_cuda_plan_work(&i, 2, &w, &error));
    CU_ASSERT_TRUE(g_error_matches(error, MS_CUDA_PLAN_ERROR, MS_CUDA_PLAN_ERROR_SHAPE));
    CU_ASSERT_PTR_NOT_NULL(strstr(error->message, "GEMM calls"));
    g_clear_error(&error);
}

static void
test_derived_elementwise_empty(void)
{
    GError *error = NULL;
    MsCudaWork w;
    /* 2e12 flops over 1000 tokens: n = k = sqrt(2e12 / 2000) = 31623 */
    MsOpInfo i = compute_op(MS_COMPUTE_ATTENTION, 2e12, 0, 1000);
    CU_ASSERT_TRUE_FATAL(ms_cuda_plan_work(&i, 2, &w, &error));
    CU_ASSERT_TRUE(w.derived);
    CU_ASSERT_EQUAL(w.m, 1000);
    CU_ASSERT_EQUAL(w.n, 31623);
    CU_ASSERT_EQUAL(w.k, 31623);
    CU_ASSERT_EQUAL(w.count, 1);
    CU_ASSERT_EQUAL(w.calls, 1);
    /* Without tokens: a cube of the same flops, 10000^3 x 2 = 2e12. */
    i.tokens = 0;
    CU_ASSERT_TRUE(ms_cuda_plan_work(&i, 2, &w, &error));
    CU_ASSERT_EQUAL(w.m, 10000);
    CU_ASSERT_EQUAL(w.n, 10000);
    /* Elementwise: half the bytes read, half written, 2 bytes an element (a shape is ignored). */
    i = compute_op(MS_COMPUTE_ELEMENTWISE, 5e6, 4000, 100);
    i.gemm_m = i.gemm_n = i.gemm_k = i.gemm_count = 10;
    CU_ASSERT_TRUE(ms_cuda_plan_work(&i, 2, &w, &error));
    CU_ASSERT_EQUAL(w.kind, MS_CUDA_WORK_ELEMENTWISE);
    CU_ASSERT_EQUAL(w.elements, 1000);
    /* Nothing to compute or move: the launch alone. */
    i = compute_op(MS_COMPUTE_GEMM, 0, 3, 0);
    CU_ASSERT_TRUE(ms_cuda_plan_work(&i, 2, &w, &error));
    CU_ASSERT_EQUAL(w.kind, MS_CUDA_WORK_EMPTY);
    CU_ASSERT_PTR_NULL(error);
}

static void
test_refusals(void)
{
    GError *error = NULL;
    MsCudaWork w;
    MsOpInfo i = compute_op(MS_COMPUTE_GEMM, 0, 0, 0);
    i.gemm_m = i.gemm_n = i.gemm_k = G_MAXINT32;
    i.gemm_count = 1;
    CU_ASSERT_FALSE(ms_cuda_plan_work(&i, 2, &w, &error));
    MS_ASSERT_ERROR(error, MS_CUDA_PLAN_ERROR, MS_CUDA_PLAN_ERROR_SHAPE,
                    "op 7 (L0.expert) on rank 1: GEMM buffer bytes 9223372028264841218 is beyond "
                    "what the cuda backend runs (at most 1099511627776)");
    i = compute_op(MS_COMPUTE_GEMM, 1e40, 0, 0);
    CU_ASSERT_FALSE(ms_cuda_plan_work(&i, 2, &w, &error));
    MS_ASSERT_ERROR(error, MS_CUDA_PLAN_ERROR, MS_CUDA_PLAN_ERROR_SHAPE, "derived GEMM dimension");
    i = compute_op(MS_COMPUTE_ELEMENTWISE, 0, 1e13, 0);
    CU_ASSERT_FALSE(ms_cuda_plan_work(&i, 2, &w, &error));
    MS_ASSERT_ERROR(error, MS_CUDA_PLAN_ERROR, MS_CUDA_PLAN_ERROR_SHAPE, "elementwise bytes");
}

static guint32 all4[4] = {0, 1, 2, 3};

/* Four ranks; streams compute, a2a, ar, compute2. */
static MsSchedule *
sample(void)
{
    MsSchedule *s = ms_schedule_new(4);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_add_stream(s, "a2a", MS_STREAM_COMM);
    ms_schedule_add_stream(s, "ar", MS_STREAM_COMM);
    ms_schedule_add_stream(s, "compute2", MS_STREAM_COMPUTE);
    ms_schedule_set_policy(s, "fifo");
    guint32 g = ms_schedule_add_compute(s, 0, 0, MS_ROLE_EXPERT, MS_PHASE_FORWARD, 0, -1, "g");
    ms_schedule_set_cost(s, g, MS_COMPUTE_EXPERT, 1, 0, 128);
    ms_schedule_set_shape(s, g, 64, 256, 128, 2, 2);
    guint32 e = ms_schedule_add_compute(s, 0, 3, MS_ROLE_GATE, MS_PHASE_FORWARD, 0, -1, "e");
    ms_schedule_set_cost(s, e, MS_COMPUTE_ELEMENTWISE, 0, 8000, 0);
    /* rank 1 exchanges nothing with rank 3 */
    guint64 m[16] = {10, 20, 30, 40, 50, 60, 70, 0, 90, 100, 110, 120, 130, 0, 150, 160};
    ms_schedule_add_alltoall(s, 1, all4, 4, m, 1, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0, -1, "x",
                             NULL);
    ms_schedule_add_allreduce(s, 2, all4, 4, 4096, 0, MS_PHASE_BACKWARD, 0, -1, "all", NULL);
    guint32 pair[2] = {3, 1}, pair2[2] = {1, 3}, other[2] = {2, 0};
    ms_schedule_add_allreduce(s, 2, pair, 2, 100000, 0, MS_PHASE_BACKWARD, 0, -1, "p", NULL);
    ms_schedule_add_allreduce(s, 2, pair2, 2, 100, 0, MS_PHASE_BACKWARD, 0, -1, "p2", NULL);
    ms_schedule_add_allreduce(s, 2, other, 2, 100, 0, MS_PHASE_BACKWARD, 0, -1, "o", NULL);
    ms_schedule_add_allreduce(s, 1, pair, 2, 100, 0, MS_PHASE_BACKWARD, 0, -1, "q", NULL);
    g_assert(ms_schedule_validate(s, NULL));
    return s;
}

static void
test_needs_and_offsets(void)
{
    g_autoptr(MsSchedule) s = sample();
    MsCudaNeeds n[4];
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_cuda_plan_needs(s, 0, 2, n, &error));
    /* the expert op, 2 experts of 64 tokens: A 2 x 64 x 128, B 2 matrices x 2 x 128 x 256,
     * C 2 x 64 x 256; 2 bytes each */
    CU_ASSERT_EQUAL(n[0].a, 2 * 64 * 128 * 2);
    CU_ASSERT_EQUAL(n[0].b, 2 * 2 * 128 * 256 * 2);
    CU_ASSERT_EQUAL(n[0].c, 2 * 64 * 256 * 2);
    CU_ASSERT_EQUAL(n[3].in, 4000);
    CU_ASSERT_EQUAL(n[3].out, 4000);
    /* rank 0's row sends 100 bytes, its column receives 10 + 50 + 90 + 130 */
    CU_ASSERT_EQUAL(n[1].send, 100);
    CU_ASSERT_EQUAL(n[1].recv, 280);
    CU_ASSERT_EQUAL(n[2].send, 4096);
    CU_ASSERT_EQUAL(n[2].recv, 0); /* allreduces work in place */
    CU_ASSERT_EQUAL(ms_cuda_needs_total(n, 4), 32768 + 262144 + 65536 + 8000 + 380 + 4096);
    CU_ASSERT_TRUE(ms_cuda_plan_needs(s, 3, 2, n, &error));
    CU_ASSERT_EQUAL(n[2].send, 100000);
    CU_ASSERT_EQUAL(n[1].send, 130 + 150 + 160); /* the 2-rank collective q is smaller */
    MsCollInfo c;
    ms_schedule_coll(s, 0, &c);
    guint64 so[4], ro[4];
    ms_cuda_a2a_offsets(&c, 2, so, ro);
    CU_ASSERT_EQUAL(so[0], 0);
    CU_ASSERT_EQUAL(so[3], 90 + 100 + 110);
    CU_ASSERT_EQUAL(ro[0], 0);
    CU_ASSERT_EQUAL(ro[1], 30);
    CU_ASSERT_EQUAL(ro[3], 30 + 70 + 110);
}

static void
test_priorities(void)
{
    g_autoptr(MsSchedule) s = sample();
    /* a device with priorities 0 (least) to -5 (greatest) */
    CU_ASSERT_EQUAL(ms_cuda_stream_priority(s, 0, 0, -5), 0);
    CU_ASSERT_EQUAL(ms_cuda_stream_priority(s, 1, 0, -5), -5);
    CU_ASSERT_EQUAL(ms_cuda_stream_priority(s, 2, 0, -5), -4);
    CU_ASSERT_EQUAL(ms_cuda_stream_priority(s, 3, 0, -5), 0);
    /* only two levels: the second comm stream shares the compute streams' */
    CU_ASSERT_EQUAL(ms_cuda_stream_priority(s, 1, 0, -1), -1);
    CU_ASSERT_EQUAL(ms_cuda_stream_priority(s, 2, 0, -1), 0);
}

static void
test_groups_and_peers(void)
{
    g_autoptr(MsSchedule) s = sample();
    GError *error = NULL;
    g_autoptr(GPtrArray) groups = ms_cuda_plan_groups(s, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(groups);
    /* stream 1: {1, 3} (collective q); stream 2: {1, 3} (p and p2), {0, 2} (o) */
    CU_ASSERT_EQUAL_FATAL(groups->len, 3);
    const MsCudaGroup *g0 = groups->pdata[0], *g1 = groups->pdata[1], *g2 = groups->pdata[2];
    CU_ASSERT_EQUAL(g0->stream, 1);
    CU_ASSERT_EQUAL(g1->stream, 2);
    CU_ASSERT_EQUAL(g1->ranks[0], 1);
    CU_ASSERT_EQUAL(g1->ranks[1], 3);
    CU_ASSERT_EQUAL(g2->ranks[0], 0);
    CU_ASSERT_EQUAL(g2->ranks[1], 2);
    CU_ASSERT_EQUAL(ms_cuda_group_of(groups, s, 1), -1); /* all four ranks */
    CU_ASSERT_EQUAL(ms_cuda_group_of(groups, s, 2), 1);
    CU_ASSERT_EQUAL(ms_cuda_group_of(groups, s, 3), 1);
    CU_ASSERT_EQUAL(ms_cuda_group_of(groups, s, 4), 2);
    CU_ASSERT_EQUAL(ms_cuda_group_of(groups, s, 5), 0);
    g_autoptr(GArray) p1 = ms_cuda_plan_peers(s, 1, 1);
    CU_ASSERT_EQUAL_FATAL(p1->len, 2); /* 0 and 2; nothing either way with 3 */
    CU_ASSERT_EQUAL(g_array_index(p1, guint32, 0), 0);
    CU_ASSERT_EQUAL(g_array_index(p1, guint32, 1), 2);
    g_autoptr(GArray) none = ms_cuda_plan_peers(s, 1, 2);
    CU_ASSERT_EQUAL(none->len, 0);
}

static void
test_too_many_groups(void)
{
    const guint n = 24;
    g_autoptr(MsSchedule) s = ms_schedule_new(n);
    ms_schedule_add_stream(s, "ar", MS_STREAM_COMM);
    ms_schedule_set_policy(s, "fifo");
    guint made = 0;
    for (guint32 a = 0; a < n && made <= MS_CUDA_MAX_GROUPS; a++) {
        for (guint32 b = a + 1; b < n && made <= MS_CUDA_MAX_GROUPS; b++, made++) {
            guint32 r[2] = {a, b};
            ms_schedule_add_allreduce(s, 0, r, 2, 64, 0, MS_PHASE_BACKWARD, 0, -1, "pair", NULL);
        }
    }
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_cuda_plan_groups(s, &error));
    MS_ASSERT_ERROR(error, MS_CUDA_PLAN_ERROR, MS_CUDA_PLAN_ERROR_GROUPS,
                    "more than 256 distinct sets of ranks (collective 256 'pair' adds one)");
}

static void
test_session(void)
{
    guint8 ids[3 * MS_CUDA_ID_BYTES];
    for (guint k = 0; k < sizeof ids; k++) {
        ids[k] = (guint8)(k * 13);
    }
    g_autoptr(GBytes) blob = ms_cuda_session_pack(ids, 3);
    const guint8 *got = NULL;
    guint count = 0;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_cuda_session_unpack(blob, 2, &got, &count, &error));
    CU_ASSERT_EQUAL(count, 3);
    CU_ASSERT_EQUAL(memcmp(got, ids, sizeof ids), 0);
    CU_ASSERT_FALSE(ms_cuda_session_unpack(blob, 4, &got, &count, &error));
    MS_ASSERT_ERROR(error, MS_CUDA_PLAN_ERROR, MS_CUDA_PLAN_ERROR_SESSION,
                    "the session holds 3 NCCL unique ids, the job needs 4");
    g_autoptr(GBytes) cut = g_bytes_new_from_bytes(blob, 0, g_bytes_get_size(blob) - 1);
    CU_ASSERT_FALSE(ms_cuda_session_unpack(cut, 1, &got, &count, &error));
    MS_ASSERT_ERROR(error, MS_CUDA_PLAN_ERROR, MS_CUDA_PLAN_ERROR_SESSION,
                    "not a list of NCCL unique ids (395 bytes)");
    g_autoptr(GBytes) fake = g_bytes_new("fake-session/1/1", 16);
    CU_ASSERT_FALSE(ms_cuda_session_unpack(fake, 1, &got, &count, &error));
    MS_ASSERT_ERROR(error, MS_CUDA_PLAN_ERROR, MS_CUDA_PLAN_ERROR_SESSION, "(16 bytes)");
    CU_ASSERT_FALSE(ms_cuda_session_unpack(NULL, 1, &got, &count, &error));
    MS_ASSERT_ERROR(error, MS_CUDA_PLAN_ERROR, MS_CUDA_PLAN_ERROR_SESSION, "(0 bytes)");
}

/* The types of each datatype, from the schedule's metadata or the override. */
static void
test_types(void)
{
    static const struct {
        const char *name;
        MsDtype dtype;
        guint elem;
        int cuda_type, compute_type, nccl_type, kernel;
    } want[] = {
        {"fp32", MS_DTYPE_FP32, 4, 0 /* CUDA_R_32F */, 68 /* CUBLAS_COMPUTE_32F */,
         7 /* ncclFloat32 */, MS_CUDA_ELEM_FP32},
        {"tf32", MS_DTYPE_TF32, 4, 0, 77 /* CUBLAS_COMPUTE_32F_FAST_TF32 */, 7, MS_CUDA_ELEM_FP32},
        {"fp16", MS_DTYPE_FP16, 2, 2 /* CUDA_R_16F */, 68, 6 /* ncclFloat16 */, MS_CUDA_ELEM_FP16},
        {"bf16", MS_DTYPE_BF16, 2, 14 /* CUDA_R_16BF */, 68, 9 /* ncclBfloat16 */,
         MS_CUDA_ELEM_BF16},
    };
    GError *error = NULL;
    MsCudaTypes t;
    for (guint d = 0; d < G_N_ELEMENTS(want); d++) {
        g_autoptr(MsSchedule) s = ms_schedule_new(1);
        ms_schedule_set_meta(s, "dtype", want[d].name);
        CU_ASSERT_TRUE_FATAL(ms_cuda_plan_types(s, MS_DTYPE_N, &t, &error));
        CU_ASSERT_EQUAL(t.dtype, want[d].dtype);
        CU_ASSERT_EQUAL(t.elem, want[d].elem);
        CU_ASSERT_EQUAL(t.cuda_type, want[d].cuda_type);
        CU_ASSERT_EQUAL(t.compute_type, want[d].compute_type);
        CU_ASSERT_EQUAL(t.nccl_type, want[d].nccl_type);
        CU_ASSERT_EQUAL(t.kernel, want[d].kernel);
    }
    /* no dtype in the schedule: bf16; an override wins over the schedule's */
    g_autoptr(MsSchedule) s = ms_schedule_new(1);
    CU_ASSERT_TRUE(ms_cuda_plan_types(s, MS_DTYPE_N, &t, &error));
    CU_ASSERT_EQUAL(t.dtype, MS_DTYPE_BF16);
    ms_schedule_set_meta(s, "dtype", "fp32");
    CU_ASSERT_TRUE(ms_cuda_plan_types(s, MS_DTYPE_FP16, &t, &error));
    CU_ASSERT_EQUAL(t.dtype, MS_DTYPE_FP16);
    CU_ASSERT_EQUAL(t.cuda_type, 2);
    /* fp8 is refused, named, whether the schedule's or the override; so is an unknown name */
    ms_schedule_set_meta(s, "dtype", "fp8");
    CU_ASSERT_FALSE(ms_cuda_plan_types(s, MS_DTYPE_N, &t, &error));
    MS_ASSERT_ERROR(error, MS_CUDA_PLAN_ERROR, MS_CUDA_PLAN_ERROR_DTYPE,
                    "dtype fp8: the cuda backend runs no fp8 GEMMs");
    CU_ASSERT_TRUE(ms_cuda_plan_types(s, MS_DTYPE_BF16, &t, &error));
    CU_ASSERT_FALSE(ms_cuda_plan_types(s, MS_DTYPE_FP8, &t, &error));
    MS_ASSERT_ERROR(error, MS_CUDA_PLAN_ERROR, MS_CUDA_PLAN_ERROR_DTYPE, "dtype fp8");
    ms_schedule_set_meta(s, "dtype", "fp64");
    CU_ASSERT_FALSE(ms_cuda_plan_types(s, MS_DTYPE_N, &t, &error));
    MS_ASSERT_ERROR(error, MS_CUDA_PLAN_ERROR, MS_CUDA_PLAN_ERROR_DTYPE,
                    "the schedule's dtype 'fp64' is none of fp32, fp16, bf16, tf32 or fp8");
}

/* Buffers follow the element size: fp32 doubles every compute buffer of the sample, and an
 * elementwise op's bytes hold half the elements; collectives keep the schedule's bytes. */
static void
test_needs_fp32(void)
{
    g_autoptr(MsSchedule) s = sample();
    MsCudaNeeds n[4];
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_cuda_plan_needs(s, 0, 4, n, &error));
    CU_ASSERT_EQUAL(n[0].a, 2 * 64 * 128 * 4);
    CU_ASSERT_EQUAL(n[0].b, 2 * 2 * 128 * 256 * 4);
    CU_ASSERT_EQUAL(n[0].c, 2 * 64 * 256 * 4);
    CU_ASSERT_EQUAL(n[3].in, 4000); /* 8000 bytes: 1000 fp32 elements read, 1000 written */
    CU_ASSERT_EQUAL(n[1].send, 100);
    CU_ASSERT_EQUAL(n[2].send, 4096);
    MsOpInfo i = compute_op(MS_COMPUTE_ELEMENTWISE, 0, 8000, 0);
    MsCudaWork w;
    CU_ASSERT_TRUE(ms_cuda_plan_work(&i, 4, &w, &error));
    CU_ASSERT_EQUAL(w.elements, 1000);
    CU_ASSERT_TRUE(ms_cuda_plan_work(&i, 2, &w, &error));
    CU_ASSERT_EQUAL(w.elements, 2000);
    /* 6 bytes: one fp16 element each way, too few for an fp32 one */
    i.bytes = 6;
    CU_ASSERT_TRUE(ms_cuda_plan_work(&i, 4, &w, &error));
    CU_ASSERT_EQUAL(w.kind, MS_CUDA_WORK_EMPTY);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"shaped and expert GEMMs", test_work},
        {"calls from the flops (backward, attention)", test_calls_from_flops},
        {"derived GEMMs, elementwise and empty kernels", test_derived_elementwise_empty},
        {"shapes that cannot run are refused", test_refusals},
        {"per-stream buffers and all-to-all offsets", test_needs_and_offsets},
        {"stream priorities", test_priorities},
        {"subset communicators and warm-up peers", test_groups_and_peers},
        {"too many subset communicators", test_too_many_groups},
        {"session blob", test_session},
        {"types of each datatype", test_types},
        {"buffers at fp32", test_needs_fp32},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"cuda plan", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
