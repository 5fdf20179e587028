/* cuda_plan: op kernels, stream buffers, offsets, priorities, subset communicators and the session
 * blob of the cuda backend, and the types a run uses for the schedule's datatype. */
#include "cuda_plan.h"

#include <math.h>
#include <string.h>

G_DEFINE_QUARK(ms_cuda_plan_error_quark, ms_cuda_plan_error)

#define SESSION_MAGIC "MSCUDA1"

static gboolean
shape_error(GError **error, const MsOpInfo *op, const char *what, guint64 value, guint64 max)
{
    g_set_error(error, MS_CUDA_PLAN_ERROR, MS_CUDA_PLAN_ERROR_SHAPE,
                "op %u (%s) on rank %u: %s %" G_GUINT64_FORMAT " is beyond what the cuda backend "
                "runs (at most %" G_GUINT64_FORMAT ")",
                op->id, op->label, op->rank, what, value, max);
    return FALSE;
}

/* x * y, or G_MAXUINT64 when it overflows. */
static guint64
mul(guint64 x, guint64 y)
{
    return y && x > G_MAXUINT64 / y ? G_MAXUINT64 : x * y;
}

/* A single GEMM with the op's flops: m = tokens (or a cube), n = k = sqrt(flops / 2m). */
static gboolean
derive_gemm(const MsOpInfo *op, MsCudaWork *w, GError **error)
{
    double m = op->tokens ? op->tokens : cbrt(op->flops / 2);
    double nk = sqrt(op->flops / (2 * MAX(m, 1)));
    double side = MAX(m, nk);
    if (!(side <= MS_CUDA_MAX_DIM)) {
        return shape_error(error, op, "derived GEMM dimension", (guint64)MIN(side, 1e19),
                           MS_CUDA_MAX_DIM);
    }
    w->m = MAX((guint32)llround(m), 1);
    w->n = w->k = MAX((guint32)llround(nk), 1);
    w->count = w->calls = w->sets = 1;
    w->derived = TRUE;
    return TRUE;
}

gboolean
ms_cuda_plan_work(const MsOpInfo *op, guint elem, MsCudaWork *out, GError **error)
{
    MsCudaWork w = {.kind = MS_CUDA_WORK_GEMM, .sets = 1};
    gboolean shaped = op->gemm_m && op->gemm_n && op->gemm_k && op->gemm_count;
    if (shaped && op->compute != MS_COMPUTE_ELEMENTWISE) {
        w.m = op->gemm_m;
        w.n = op->gemm_n;
        w.k = op->gemm_k;
        w.count = op->gemm_count;
        if (op->compute == MS_COMPUTE_EXPERT) {
            guint64 busy = op->tokens ? (op->tokens + w.m - 1) / w.m : G_MAXUINT32;
            w.sets = (guint32)MIN(MAX(op->experts, 1), busy);
        }
        double calls = round(op->flops / (2.0 * w.m * w.n * w.k * w.sets));
        if (!(calls <= MS_CUDA_MAX_CALLS)) {
            return shape_error(error, op, "GEMM calls (flops over the shape's)",
                               (guint64)MIN(calls, 1e19), MS_CUDA_MAX_CALLS);
        }
        w.calls = MAX(w.count, (guint32)calls);
    } else if (op->flops > 0 && op->compute != MS_COMPUTE_ELEMENTWISE) {
        if (!derive_gemm(op, &w, error)) {
            return FALSE;
        }
    } else if (op->bytes >= 2 * elem) {
        w.kind = MS_CUDA_WORK_ELEMENTWISE;
        w.elements = (guint64)(op->bytes / (2 * elem));
        if (op->bytes / 2 > MS_CUDA_MAX_BUFFER) {
            return shape_error(error, op, "elementwise bytes", (guint64)op->bytes,
                               2 * MS_CUDA_MAX_BUFFER);
        }
    } else {
        w.kind = MS_CUDA_WORK_EMPTY;
    }
    if (w.kind == MS_CUDA_WORK_GEMM) {
        guint64 a, b, c;
        ms_cuda_work_elements(&w, &a, &b, &c);
        guint64 most = MAX(MAX(a, b), c);
        if (mul(most, elem) > MS_CUDA_MAX_BUFFER) {
            return shape_error(error, op, "GEMM buffer bytes", mul(most, elem), MS_CUDA_MAX_BUFFER);
        }
    }
    *out = w;
    return TRUE;
}

void
ms_cuda_work_elements(const MsCudaWork *w, guint64 *a, guint64 *b, guint64 *c)
{
    *a = mul(mul(w->sets, w->m), w->k);
    *b = mul(mul(mul(w->count, w->sets), w->k), w->n);
    *c = mul(mul(w->sets, w->m), w->n);
}

/* x + y, or G_MAXUINT64 when it overflows. */
static guint64
add(guint64 x, guint64 y)
{
    return x > G_MAXUINT64 - y ? G_MAXUINT64 : x + y;
}

/* --- per stream needs --- */

static void
coll_needs(const MsCollInfo *c, guint p, MsCudaNeeds *n)
{
    /* An allreduce works in place on the send buffer, as training frameworks reduce their
     * gradient buckets. */
    guint64 send = c->bytes, recv = 0;
    if (c->kind == MS_COLL_KIND_ALLTOALL) {
        send = recv = 0;
        for (guint q = 0; q < c->n_ranks; q++) {
            send = add(send, c->matrix[(gsize)p * c->n_ranks + q]);
            recv = add(recv, c->matrix[(gsize)q * c->n_ranks + p]);
        }
    }
    n->send = MAX(n->send, send);
    n->recv = MAX(n->recv, recv);
}

static void
compute_needs(const MsCudaWork *w, guint elem, MsCudaNeeds *n)
{
    if (w->kind == MS_CUDA_WORK_GEMM) {
        guint64 a, b, c;
        ms_cuda_work_elements(w, &a, &b, &c);
        n->a = MAX(n->a, a * elem);
        n->b = MAX(n->b, b * elem);
        n->c = MAX(n->c, c * elem);
    } else if (w->kind == MS_CUDA_WORK_ELEMENTWISE) {
        n->in = MAX(n->in, w->elements * elem);
        n->out = MAX(n->out, w->elements * elem);
    }
}

gboolean
ms_cuda_plan_needs(const MsSchedule *s, guint rank, guint elem, MsCudaNeeds *needs, GError **error)
{
    guint n_streams = ms_schedule_n_streams(s), n_ops = 0;
    memset(needs, 0, n_streams * sizeof *needs);
    const guint32 *ops = ms_schedule_rank_ops(s, rank, &n_ops);
    for (guint k = 0; k < n_ops; k++) {
        MsOpInfo i;
        ms_schedule_op(s, ops[k], &i);
        MsCudaNeeds *n = &needs[i.stream];
        if (i.kind == MS_OP_COMM) {
            MsCollInfo c;
            ms_schedule_coll(s, i.coll, &c);
            guint p = 0;
            while (c.ops[p] != ops[k]) {
                p++;
            }
            coll_needs(&c, p, n);
            if (MAX(n->send, n->recv) > MS_CUDA_MAX_BUFFER) {
                return shape_error(error, &i, "collective buffer bytes", MAX(n->send, n->recv),
                                   MS_CUDA_MAX_BUFFER);
            }
            continue;
        }
        MsCudaWork w;
        if (!ms_cuda_plan_work(&i, elem, &w, error)) {
            return FALSE;
        }
        compute_needs(&w, elem, n);
    }
    return TRUE;
}

guint64
ms_cuda_needs_total(const MsCudaNeeds *needs, guint n_streams)
{
    guint64 total = 0;
    for (guint st = 0; st < n_streams; st++) {
        const MsCudaNeeds *n = &needs[st];
        guint64 parts[] = {n->a, n->b, n->c, n->in, n->out, n->send, n->recv};
        for (guint k = 0; k < G_N_ELEMENTS(parts); k++) {
            total = add(total, parts[k]);
        }
    }
    return total;
}

void
ms_cuda_a2a_offsets(const MsCollInfo *c, guint p, guint64 *send_off, guint64 *recv_off)
{
    guint n = c->n_ranks;
    guint64 s = 0, r = 0;
    for (guint q = 0; q < n; q++) {
        send_off[q] = s;
        recv_off[q] = r;
        s += c->matrix[(gsize)p * n + q];
        r += c->matrix[(gsize)q * n + p];
    }
}

int
ms_cuda_stream_priority(const MsSchedule *s, guint stream, int least, int greatest)
{
    if (ms_schedule_stream_kind(s, stream) == MS_STREAM_COMPUTE) {
        return least;
    }
    int urgency = 0;
    for (guint st = 0; st < stream; st++) {
        urgency += ms_schedule_stream_kind(s, st) == MS_STREAM_COMM;
    }
    return MIN(greatest + urgency, least);
}

/* --- subset communicators --- */

static void
group_free(gpointer data)
{
    MsCudaGroup *g = data;
    g_free(g->ranks);
    g_free(g);
}

static int
cmp_u32(gconstpointer a, gconstpointer b)
{
    guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
    return x < y ? -1 : x > y;
}

static gboolean
same_group(const MsCudaGroup *g, guint stream, const guint32 *ranks, guint n)
{
    return g->stream == stream && g->n_ranks == n && memcmp(g->ranks, ranks, n * 4) == 0;
}

/* The allreduce's ranks, ascending, in sorted (of c->n_ranks entries). */
static void
sorted_ranks(const MsCollInfo *c, guint32 *sorted)
{
    memcpy(sorted, c->ranks, c->n_ranks * sizeof(guint32));
    qsort(sorted, c->n_ranks, sizeof(guint32), cmp_u32);
}

static guint
coll_stream(const MsSchedule *s, const MsCollInfo *c)
{
    MsOpInfo i;
    ms_schedule_op(s, c->ops[0], &i);
    return i.stream;
}

GPtrArray *
ms_cuda_plan_groups(const MsSchedule *s, GError **error)
{
    GPtrArray *groups = g_ptr_array_new_with_free_func(group_free);
    guint world = ms_schedule_n_ranks(s);
    g_autofree guint32 *sorted = g_new(guint32, world);
    for (guint st = 0; st < ms_schedule_n_streams(s); st++) {
        for (guint32 id = 0; id < ms_schedule_n_colls(s); id++) {
            MsCollInfo c;
            ms_schedule_coll(s, id, &c);
            if (c.kind != MS_COLL_KIND_ALLREDUCE || c.n_ranks == world ||
                coll_stream(s, &c) != st) {
                continue;
            }
            sorted_ranks(&c, sorted);
            gboolean known = FALSE;
            for (guint g = 0; g < groups->len && !known; g++) {
                known = same_group(groups->pdata[g], st, sorted, c.n_ranks);
            }
            if (known) {
                continue;
            }
            if (groups->len == MS_CUDA_MAX_GROUPS) {
                g_set_error(error, MS_CUDA_PLAN_ERROR, MS_CUDA_PLAN_ERROR_GROUPS,
                            "the schedule's allreduces span more than %u distinct sets of "
                            "ranks (collective %u '%s' adds one): one NCCL communicator each",
                            MS_CUDA_MAX_GROUPS, id, c.label);
                g_ptr_array_unref(groups);
                return NULL;
            }
            MsCudaGroup *g = g_new0(MsCudaGroup, 1);
            g->stream = st;
            g->n_ranks = c.n_ranks;
            g->ranks = g_memdup2(sorted, c.n_ranks * sizeof(guint32));
            g_ptr_array_add(groups, g);
        }
    }
    return groups;
}

gint
ms_cuda_group_of(GPtrArray *groups, const MsSchedule *s, guint32 coll)
{
    MsCollInfo c;
    ms_schedule_coll(s, coll, &c);
    if (c.n_ranks == ms_schedule_n_ranks(s)) {
        return -1;
    }
    g_autofree guint32 *sorted = g_new(guint32, c.n_ranks);
    sorted_ranks(&c, sorted);
    guint st = coll_stream(s, &c);
    for (guint g = 0; g < groups->len; g++) {
        if (same_group(groups->pdata[g], st, sorted, c.n_ranks)) {
            return (gint)g;
        }
    }
    return -1;
}

GArray *
ms_cuda_plan_peers(const MsSchedule *s, guint rank, guint stream)
{
    guint world = ms_schedule_n_ranks(s);
    g_autofree guint8 *peer = g_new0(guint8, world);
    for (guint32 id = 0; id < ms_schedule_n_colls(s); id++) {
        MsCollInfo c;
        ms_schedule_coll(s, id, &c);
        if (c.kind != MS_COLL_KIND_ALLTOALL || coll_stream(s, &c) != stream) {
            continue;
        }
        for (guint p = 0; p < c.n_ranks; p++) {
            if (c.ranks[p] != rank) {
                continue;
            }
            for (guint q = 0; q < c.n_ranks; q++) {
                guint64 out = c.matrix[(gsize)p * c.n_ranks + q];
                guint64 in = c.matrix[(gsize)q * c.n_ranks + p];
                peer[c.ranks[q]] |= (out || in) && c.ranks[q] != rank;
            }
        }
    }
    GArray *peers = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (guint32 r = 0; r < world; r++) {
        if (peer[r]) {
            g_array_append_val(peers, r);
        }
    }
    return peers;
}

/* --- session --- */

GBytes *
ms_cuda_session_pack(const guint8 *ids, guint count)
{
    GByteArray *b = g_byte_array_new();
    g_byte_array_append(b, (const guint8 *)SESSION_MAGIC, sizeof SESSION_MAGIC);
    guint32 le = GUINT32_TO_LE(count);
    g_byte_array_append(b, (const guint8 *)&le, 4);
    g_byte_array_append(b, ids, count * MS_CUDA_ID_BYTES);
    return g_byte_array_free_to_bytes(b);
}

gboolean
ms_cuda_session_unpack(GBytes *session, guint need, const guint8 **ids, guint *count,
                       GError **error)
{
    gsize len = 0;
    const guint8 *data = session ? g_bytes_get_data(session, &len) : NULL;
    guint32 n = 0;
    gsize head = sizeof SESSION_MAGIC + 4;
    if (len >= head) {
        memcpy(&n, data + sizeof SESSION_MAGIC, 4);
        n = GUINT32_FROM_LE(n);
    }
    if (len < head || memcmp(data, SESSION_MAGIC, sizeof SESSION_MAGIC) != 0 ||
        len != head + (guint64)n * MS_CUDA_ID_BYTES) {
        g_set_error(
            error, MS_CUDA_PLAN_ERROR, MS_CUDA_PLAN_ERROR_SESSION,
            "the session from the coordinator is not a list of NCCL unique ids (%" G_GSIZE_FORMAT
            " bytes)",
            len);
        return FALSE;
    }
    if (n < need) {
        g_set_error(error, MS_CUDA_PLAN_ERROR, MS_CUDA_PLAN_ERROR_SESSION,
                    "the session holds %u NCCL unique ids, the job needs %u", n, need);
        return FALSE;
    }
    *ids = data + head;
    *count = n;
    return TRUE;
}

/* --- datatypes --- */

gboolean
ms_cuda_plan_types(const MsSchedule *s, MsDtype override, MsCudaTypes *out, GError **error)
{
    MsDtype dtype = override;
    if (override >= MS_DTYPE_N) {
        const char *name = ms_schedule_get_meta(s, "dtype");
        dtype = MS_DTYPE_BF16;
        if (name && !ms_dtype_from_name(name, &dtype)) {
            g_set_error(error, MS_CUDA_PLAN_ERROR, MS_CUDA_PLAN_ERROR_DTYPE,
                        "the schedule's dtype '%s' is none of %s", name, ms_dtype_names_text());
            return FALSE;
        }
    }
    MsCudaTypes t = {.dtype = dtype, .elem = ms_dtype_bytes(dtype)};
    switch (dtype) {
    case MS_DTYPE_FP32:
    case MS_DTYPE_TF32:
        /* tf32 is fp32 storage whose products tensor cores round to 10 mantissa bits (cuBLAS
         * documentation, cublasComputeType_t): the same buffers and collectives as fp32. */
        t.cuda_type = MS_CUDA_R_32F;
        t.compute_type = dtype == MS_DTYPE_TF32 ? MS_CUBLAS_COMPUTE_TF32 : MS_CUBLAS_COMPUTE_32F;
        t.nccl_type = MS_NCCL_FLOAT32;
        t.kernel = MS_CUDA_ELEM_FP32;
        break;
    case MS_DTYPE_FP16:
    case MS_DTYPE_BF16:
        /* fp32 accumulation, as frameworks run their 16-bit linear layers. */
        t.cuda_type = dtype == MS_DTYPE_BF16 ? MS_CUDA_R_16BF : MS_CUDA_R_16F;
        t.compute_type = MS_CUBLAS_COMPUTE_32F;
        t.nccl_type = dtype == MS_DTYPE_BF16 ? MS_NCCL_BFLOAT16 : MS_NCCL_FLOAT16;
        t.kernel = dtype == MS_DTYPE_BF16 ? MS_CUDA_ELEM_BF16 : MS_CUDA_ELEM_FP16;
        break;
    default:
        /* An fp8 GEMM is a cublasLt matmul with per-tensor scale factors, the TN layout only,
         * an fp16/bf16/fp32 output and a GPU of compute capability 8.9 or later (cuBLAS
         * documentation, cublasLtMatmul); the backend runs none, rather than time another
         * datatype's GEMMs under fp8's name. */
        g_set_error(error, MS_CUDA_PLAN_ERROR, MS_CUDA_PLAN_ERROR_DTYPE,
                    "dtype %s: the cuda backend runs no fp8 GEMMs; run the schedule with "
                    "--dtype bf16 to time it at bf16 (its collectives keep the schedule's bytes)",
                    ms_dtype_name(dtype));
        return FALSE;
    }
    *out = t;
    return TRUE;
}
