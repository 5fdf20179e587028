/* cuda_bench: the calibration microbenchmarks on one rank, in step with the others. Communication
 * is timed as nccl-tests times it (warm-up calls, then iters back-to-back calls between two
 * events, the mean per call) and the slowest rank's time is kept (ncclMax over the ranks);
 * kernels on rank 0 are timed one by one (min, median, mean). Rank 0 returns the rows as a
 * moesim measurement CSV (sim/calib/meas_csv.h), which the command validates as it reads it. */
#include "cuda_private.h"

#include <math.h>
#include <string.h>

#include "backends/executor_bench.h"
#include "cuda_kernels.h"
#include "sim/calib/meas_csv.h"

/* Empty kernels timed back to back for the launch overhead. */
#define LAUNCHES 1000u
#define SOURCE "moesim bench --backend cuda"

typedef struct {
    const MsBenchSpec *spec;
    MsExecPlace place;
    gint64 deadline;
    gboolean bf16;
    cudaDataType dt;
    ncclComm_t comm;
    cudaStream_t stream;
    cublasHandle_t blas;
    cudaEvent_t *ev; /* iters + 1 */
    guint8 *send, *recv, *a, *b, *c;
    float *scalar;
    GString *csv; /* rank 0: the rows written so far */
    guint csv_version;
} Bench;

static void
bench_clear(Bench *b)
{
    nccl_drop(b->comm);
    if (b->blas) {
        cublasDestroy(b->blas);
    }
    for (guint k = 0; b->ev && k <= b->spec->iters; k++) {
        if (b->ev[k]) {
            cudaEventDestroy(b->ev[k]);
        }
    }
    g_free(b->ev);
    guint8 *bufs[] = {b->send, b->recv, b->a, b->b, b->c, (guint8 *)b->scalar};
    for (guint k = 0; k < G_N_ELEMENTS(bufs); k++) {
        cudaFree(bufs[k]);
    }
    if (b->stream) {
        cudaStreamDestroy(b->stream);
    }
    if (b->csv) {
        g_string_free(b->csv, TRUE);
    }
}

/* Elements of the largest A, B and C of the expert kernels. */
static void
gemm_sizes(const MsBenchSpec *spec, guint64 *a, guint64 *bw, guint64 *c)
{
    *a = *bw = *c = 0;
    for (guint k = 0; k < spec->tokens->len; k++) {
        MsBenchKernel kern[3];
        ms_bench_expert_kernels(spec, g_array_index(spec->tokens, guint32, k), kern);
        for (guint j = 0; j < 3; j++) {
            guint64 in = kern[j].kind == MS_MEASUREMENT_GEMM ? kern[j].m * kern[j].k
                                                             : 2 * kern[j].m * kern[j].n;
            *a = MAX(*a, in);
            *bw = MAX(*bw, kern[j].k * kern[j].n);
            *c = MAX(*c, kern[j].m * kern[j].n);
        }
    }
}

static gboolean
alloc(guint64 bytes, guint8 **out, Bench *b, GError **error)
{
    return bytes == 0 || (cuda_ok(cudaMalloc((void **)out, bytes), "cudaMalloc", error) &&
                          cuda_ok(ms_cuda_fill(*out, bytes / 2, (guint)bytes, b->bf16, b->stream),
                                  "filling a buffer", error));
}

static gboolean
bench_setup(Bench *b, GError **error)
{
    const MsBenchSpec *s = b->spec;
    int sm = 0, least = 0, greatest = 0;
    guint64 memory = 0;
    const guint8 *ids = NULL;
    guint n_ids = 0;
    if (!cuda_select(&b->place, &sm, &memory, error) ||
        !ms_cuda_session_unpack(b->place.session, 1, &ids, &n_ids, error) ||
        !nccl_init(&b->comm, &b->place, ids, b->deadline, error) ||
        !cuda_ok(cudaDeviceGetStreamPriorityRange(&least, &greatest), "priority range", error) ||
        !cuda_ok(cudaStreamCreateWithPriority(&b->stream, cudaStreamNonBlocking, greatest),
                 "cudaStreamCreateWithPriority", error) ||
        !cublas_ok(cublasCreate(&b->blas), "cublasCreate", error) ||
        !cublas_ok(cublasSetStream(b->blas, b->stream), "cublasSetStream", error)) {
        return FALSE;
    }
    b->ev = g_new0(cudaEvent_t, s->iters + 1);
    for (guint k = 0; k <= s->iters; k++) {
        if (!cuda_ok(cudaEventCreate(&b->ev[k]), "cudaEventCreate", error)) {
            return FALSE;
        }
    }
    guint64 comm =
        (s->what & (MS_BENCH_P2P | MS_BENCH_ALLTOALL | MS_BENCH_ALLREDUCE)) ? s->max_bytes + 2 : 0;
    guint64 ga = 0, gb = 0, gc = 0;
    if ((s->what & MS_BENCH_GEMM) && b->place.rank == 0) {
        gemm_sizes(s, &ga, &gb, &gc);
    }
    return cuda_ok(cudaMalloc((void **)&b->scalar, sizeof(float)), "cudaMalloc", error) &&
           alloc(comm, &b->send, b, error) && alloc(comm, &b->recv, b, error) &&
           alloc(ga * 2, &b->a, b, error) && alloc(gb * 2, &b->b, b, error) &&
           alloc(gc * 2, &b->c, b, error);
}

/* --- timing --- */

typedef gboolean (*IssueFn)(Bench *b, gconstpointer arg, GError **error);

static gboolean
elapsed(Bench *b, guint from, guint to, double *seconds, GError **error)
{
    float ms = 0;
    if (!cuda_event_wait(b->ev[to], b->deadline, "a benchmark", error) ||
        !cuda_ok(cudaEventElapsedTime(&ms, b->ev[from], b->ev[to]), "cudaEventElapsedTime",
                 error)) {
        return FALSE;
    }
    *seconds = ms * 1e-3;
    return TRUE;
}

/* The largest of every rank's value (ranks that took no part give 0). */
static gboolean
slowest(Bench *b, double mine, double *out, GError **error)
{
    float v = (float)mine;
    if (!cuda_ok(cudaMemcpyAsync(b->scalar, &v, sizeof v, cudaMemcpyHostToDevice, b->stream),
                 "cudaMemcpyAsync", error) ||
        !nccl_ok(ncclAllReduce(b->scalar, b->scalar, 1, ncclFloat, ncclMax, b->comm, b->stream),
                 b->comm, "ncclAllReduce", error) ||
        !nccl_settle(b->comm, b->deadline, "ncclAllReduce", error) ||
        !cuda_ok(cudaMemcpyAsync(&v, b->scalar, sizeof v, cudaMemcpyDeviceToHost, b->stream),
                 "cudaMemcpyAsync", error) ||
        !cuda_ok(cudaEventRecord(b->ev[0], b->stream), "cudaEventRecord", error) ||
        !cuda_event_wait(b->ev[0], b->deadline, "ncclAllReduce", error)) {
        return FALSE;
    }
    *out = v;
    return TRUE;
}

/* nccl-tests' way: warm-up calls, then iters calls between two events; the mean per call. */
static gboolean
time_comm(Bench *b, IssueFn issue, gconstpointer arg, double *seconds, GError **error)
{
    const MsBenchSpec *s = b->spec;
    for (guint k = 0; k < s->warmup; k++) {
        if (!issue(b, arg, error)) {
            return FALSE;
        }
    }
    if (!cuda_ok(cudaEventRecord(b->ev[0], b->stream), "cudaEventRecord", error)) {
        return FALSE;
    }
    for (guint k = 0; k < s->iters; k++) {
        if (!issue(b, arg, error)) {
            return FALSE;
        }
    }
    double total = 0;
    return cuda_ok(cudaEventRecord(b->ev[1], b->stream), "cudaEventRecord", error) &&
           elapsed(b, 0, 1, &total, error) && slowest(b, total / s->iters, seconds, error);
}

static int
cmp_double(gconstpointer x, gconstpointer y)
{
    double a = *(const double *)x, c = *(const double *)y;
    return a < c ? -1 : a > c;
}

/* Kernels: each call between its own events; min, median and mean. */
static gboolean
time_kernel(Bench *b, IssueFn issue, gconstpointer arg, double stats[3], GError **error)
{
    const MsBenchSpec *s = b->spec;
    for (guint k = 0; k < s->warmup; k++) {
        if (!issue(b, arg, error)) {
            return FALSE;
        }
    }
    for (guint k = 0; k < s->iters; k++) {
        if ((k == 0 && !cuda_ok(cudaEventRecord(b->ev[0], b->stream), "cudaEventRecord", error)) ||
            !issue(b, arg, error) ||
            !cuda_ok(cudaEventRecord(b->ev[k + 1], b->stream), "cudaEventRecord", error)) {
            return FALSE;
        }
    }
    g_autofree double *t = g_new(double, s->iters);
    double sum = 0;
    for (guint k = 0; k < s->iters; k++) {
        if (!elapsed(b, k, k + 1, &t[k], error)) {
            return FALSE;
        }
        sum += t[k];
    }
    qsort(t, s->iters, sizeof(double), cmp_double);
    stats[0] = t[0];
    stats[1] = s->iters % 2 ? t[s->iters / 2] : (t[s->iters / 2 - 1] + t[s->iters / 2]) / 2;
    stats[2] = sum / s->iters;
    return TRUE;
}

/* Rank 0 writes the row; the others only took part in timing it. */
static void
add_row(Bench *b, MsMeasurement *row)
{
    row->source = SOURCE;
    row->ranks_per_node = MAX(row->ranks_per_node, 1);
    row->ranks = MAX(row->ranks, 1);
    if (b->place.rank == 0) {
        ms_meas_csv_write_row(b->csv, row, b->csv_version);
    }
}

/* --- communication --- */

typedef struct {
    const MsBenchPair *pair;
    guint64 bytes;
} Transfer;

static gboolean
issue_p2p(Bench *b, gconstpointer arg, GError **error)
{
    const Transfer *t = arg;
    int me = (int)b->place.rank;
    ncclResult_t r = ncclSuccess;
    if (me == (int)t->pair->a) {
        r = ncclSend(b->send, t->bytes, ncclInt8, (int)t->pair->b, b->comm, b->stream);
    } else if (me == (int)t->pair->b) {
        r = ncclRecv(b->recv, t->bytes, ncclInt8, (int)t->pair->a, b->comm, b->stream);
    } else {
        return TRUE;
    }
    return nccl_ok(r, b->comm, "ncclSend/ncclRecv", error) &&
           nccl_settle(b->comm, b->deadline, "ncclSend/ncclRecv", error);
}

static gboolean
issue_alltoall(Bench *b, gconstpointer arg, GError **error)
{
    const Transfer *t = arg;
    guint n = b->spec->world;
    guint64 per = t->bytes / n;
    gboolean ok = nccl_ok(ncclGroupStart(), b->comm, "ncclGroupStart", error);
    for (guint q = 0; ok && q < n; q++) {
        ok = nccl_ok(ncclSend(b->send + q * per, per, ncclInt8, (int)q, b->comm, b->stream),
                     b->comm, "ncclSend", error) &&
             nccl_ok(ncclRecv(b->recv + q * per, per, ncclInt8, (int)q, b->comm, b->stream),
                     b->comm, "ncclRecv", error);
    }
    return ok && nccl_ok(ncclGroupEnd(), b->comm, "ncclGroupEnd", error) &&
           nccl_settle(b->comm, b->deadline, "an all-to-all", error);
}

static gboolean
issue_allreduce(Bench *b, gconstpointer arg, GError **error)
{
    const Transfer *t = arg;
    ncclDataType_t dt = b->bf16 ? ncclBfloat16 : ncclFloat16;
    return nccl_ok(ncclAllReduce(b->send, b->recv, t->bytes / 2, dt, ncclSum, b->comm, b->stream),
                   b->comm, "ncclAllReduce", error) &&
           nccl_settle(b->comm, b->deadline, "an allreduce", error);
}

static gboolean
sweep(Bench *b, MsMeasurementKind kind, IssueFn issue, const MsBenchPair *pair, GError **error)
{
    const MsBenchSpec *s = b->spec;
    g_autoptr(GArray) sizes = ms_bench_sizes(s);
    for (guint k = 0; k < sizes->len; k++) {
        guint64 size = g_array_index(sizes, guint64, k);
        Transfer t = {pair, size};
        if (kind == MS_MEASUREMENT_ALLTOALL) {
            t.bytes = size / s->world * s->world; /* whole bytes to every rank */
        } else if (kind == MS_MEASUREMENT_ALLREDUCE) {
            t.bytes = size / 2 * 2; /* whole elements */
        }
        double sec = 0;
        if (t.bytes == 0) {
            continue;
        }
        if (!time_comm(b, issue, &t, &sec, error)) {
            return FALSE;
        }
        MsMeasurement row = {.kind = kind,
                             .bytes = t.bytes,
                             .seconds = sec,
                             .min_s = NAN,
                             .median_s = NAN,
                             .mean_s = sec,
                             .label = ""};
        row.ranks = pair ? 2 : s->world;
        row.ranks_per_node = pair ? pair->ranks_per_node : s->ranks_per_node;
        row.dtype = kind == MS_MEASUREMENT_ALLREDUCE ? s->dtype : NULL;
        row.label = pair ? pair->label : "";
        add_row(b, &row);
    }
    return TRUE;
}

static gboolean
bench_comm(Bench *b, GError **error)
{
    const MsBenchSpec *s = b->spec;
    for (guint k = 0; (s->what & MS_BENCH_P2P) && k < s->pairs->len; k++) {
        if (!sweep(b, MS_MEASUREMENT_SENDRECV, issue_p2p, &g_array_index(s->pairs, MsBenchPair, k),
                   error)) {
            return FALSE;
        }
    }
    return (!(s->what & MS_BENCH_ALLTOALL) ||
            sweep(b, MS_MEASUREMENT_ALLTOALL, issue_alltoall, NULL, error)) &&
           (!(s->what & MS_BENCH_ALLREDUCE) ||
            sweep(b, MS_MEASUREMENT_ALLREDUCE, issue_allreduce, NULL, error));
}

/* --- kernels (rank 0) --- */

static gboolean
issue_kernel(Bench *b, gconstpointer arg, GError **error)
{
    const MsBenchKernel *k = arg;
    if (k->kind == MS_MEASUREMENT_ELEMENTWISE) {
        size_t n = k->m * k->n;
        int e = b->spec->gated ? ms_cuda_swiglu(b->a, b->c, n, b->bf16, b->stream)
                               : ms_cuda_silu(b->a, b->c, n, b->bf16, b->stream);
        return cuda_ok(e, "the activation kernel", error);
    }
    /* The layout of the cuda backend's GEMMs (run_gemm): weights stored output by input. */
    const float alpha = 1.0f, beta = 0.0f;
    return cublas_ok(cublasGemmEx(b->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)k->n, (int)k->m,
                                  (int)k->k, &alpha, b->b, b->dt, (int)k->k, b->a, b->dt, (int)k->k,
                                  &beta, b->c, b->dt, (int)k->n, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT),
                     "cublasGemmEx", error);
}

static gboolean
issue_empty(Bench *b, gconstpointer arg, GError **error)
{
    for (guint k = 0; k < LAUNCHES; k++) {
        if (!cuda_ok(ms_cuda_empty(b->stream), "the empty kernel", error)) {
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
bench_kernels(Bench *b, GError **error)
{
    const MsBenchSpec *s = b->spec;
    for (guint t = 0; (s->what & MS_BENCH_GEMM) && t < s->tokens->len; t++) {
        MsBenchKernel kern[3];
        ms_bench_expert_kernels(s, g_array_index(s->tokens, guint32, t), kern);
        for (guint j = 0; j < 3; j++) {
            double st[3];
            if (!time_kernel(b, issue_kernel, &kern[j], st, error)) {
                return FALSE;
            }
            MsMeasurement row = {.kind = kern[j].kind,
                                 .bytes = kern[j].bytes,
                                 .m = kern[j].m,
                                 .n = kern[j].n,
                                 .k = kern[j].k,
                                 .dtype = s->dtype,
                                 .label = kern[j].label,
                                 .seconds = st[1],
                                 .min_s = st[0],
                                 .median_s = st[1],
                                 .mean_s = st[2]};
            add_row(b, &row);
        }
    }
    if (s->what & MS_BENCH_LAUNCH) {
        double st[3];
        if (!time_kernel(b, issue_empty, NULL, st, error)) {
            return FALSE;
        }
        MsMeasurement row = {.kind = MS_MEASUREMENT_LAUNCH,
                             .label = "empty_kernel",
                             .seconds = st[1] / LAUNCHES,
                             .min_s = st[0] / LAUNCHES,
                             .median_s = st[1] / LAUNCHES,
                             .mean_s = st[2] / LAUNCHES};
        add_row(b, &row);
    }
    return TRUE;
}

GBytes *
cuda_bench_run(GBytes *spec_bytes, const MsExecOptions *opts, const MsExecPlace *place,
               GError **error)
{
    g_autoptr(MsBenchSpec) spec = ms_bench_spec_from_bytes(spec_bytes, error);
    if (spec == NULL) {
        return NULL;
    }
    Bench b = {.spec = spec, .place = *place};
    b.deadline = g_get_monotonic_time() + (gint64)(opts->timeout_s * G_USEC_PER_SEC);
    b.bf16 = strcmp(spec->dtype, "fp16") != 0;
    b.dt = b.bf16 ? CUDA_R_16BF : CUDA_R_16F;
    b.csv_version = MS_MOESIM_CSV_OLDEST;
    if (place->rank == 0) {
        b.csv = g_string_new(NULL);
        ms_meas_csv_write_header(b.csv, b.csv_version);
    }
    gboolean ok = bench_setup(&b, error) && bench_comm(&b, error) &&
                  (place->rank != 0 || bench_kernels(&b, error));
    GBytes *result = NULL;
    if (ok) {
        result = place->rank == 0 ? g_bytes_new(b.csv->str, b.csv->len) : g_bytes_new(NULL, 0);
    }
    bench_clear(&b);
    return result;
}
