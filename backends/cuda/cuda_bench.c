/* cuda_bench: the calibration microbenchmarks on one rank, in step with the others. Communication
 * is timed as nccl-tests times it (warm-up calls, then iters back-to-back calls between two
 * events, the mean per call) and the slowest rank's time is kept (ncclMax over the ranks);
 * kernels on rank 0 are timed one by one (min, median, mean). The concurrency benchmark times
 * all-to-alls the same way while an allreduce loops on a second communicator and stream; the
 * overlap benchmark times each kernel on rank 0 alone and then while that allreduce loops over
 * every rank (the others only loop it). Rank 0
 * returns the rows as a moesim measurement CSV (sim/calib/meas_csv.h), which the command
 * validates as it reads it. */
#include "cuda_private.h"

#include <math.h>
#include <string.h>

#include "backends/executor_bench.h"
#include "backends/bench_options.h"
#include "cuda_kernels.h"
#include "sim/calib/meas_csv.h"

/* Empty kernels timed back to back for the launch overhead. */
#define LAUNCHES 1000u
#define SOURCE "moesim bench --backend cuda"
/* The looping allreduce is sized to outlast the all-to-alls at this many times their time alone
 * (Lina, USENIX ATC'23, measured up to 4.14x; twice that), and run again twice as long, up to
 * ATTEMPTS times, should it end first on some rank. LEAD of its calls are queued before the
 * all-to-alls, so that its stream is busy while the host queues them. */
#define MARGIN 8.0
#define ATTEMPTS 3u
#define LEAD 32u

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
    /* The concurrency benchmark: the allreduce's communicator, stream and buffers (send, then
     * receive: out of place, as the sweeps), and the events at the end of its warm-up calls and
     * of its loop. */
    ncclComm_t comm2;
    cudaStream_t stream2;
    guint8 *bg;
    cudaEvent_t mark[2];
    double bg_alone; /* the looping allreduce alone, the slowest rank's time per call; 0: not yet */
    GString *csv;    /* rank 0: the rows written so far */
    guint csv_version;
} Bench;

/* The kernels' element type of the benchmark's 16-bit buffers. */
static int
bench_elem(const Bench *b)
{
    return b->bf16 ? MS_CUDA_ELEM_BF16 : MS_CUDA_ELEM_FP16;
}

static gboolean
concurrent(const Bench *b)
{
    return (b->spec->what & MS_BENCH_CONCURRENCY) && b->spec->world > 1;
}

/* Kernels timed under the looping allreduce: it needs a second rank to be NCCL's traffic (on
 * one rank NCCL only copies). */
static gboolean
overlapping(const Bench *b)
{
    return (b->spec->what & MS_BENCH_OVERLAP) && b->spec->world > 1;
}

static gboolean
kernels(const Bench *b)
{
    return (b->spec->what & (MS_BENCH_GEMM | MS_BENCH_OVERLAP)) != 0;
}

static void
bench_clear(Bench *b)
{
    nccl_drop(b->comm2);
    nccl_drop(b->comm);
    for (guint k = 0; k < G_N_ELEMENTS(b->mark); k++) {
        if (b->mark[k]) {
            cudaEventDestroy(b->mark[k]);
        }
    }
    cudaFree(b->bg);
    if (b->stream2) {
        cudaStreamDestroy(b->stream2);
    }
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
    return bytes == 0 ||
           (cuda_ok(cudaMalloc((void **)out, bytes), "cudaMalloc", error) &&
            cuda_ok(ms_cuda_fill(*out, bytes / 2, (guint)bytes, bench_elem(b), b->stream),
                    "filling a buffer", error));
}

/* Both collectives' kernels must be resident at once, one block per channel: forced channels on
 * two communicators must fit the GPU's SMs, or the kernels would wait for each other. */
static gboolean
check_sms(const Bench *b, GError **error)
{
    int device = 0, sms = 0;
    if (!cuda_ok(cudaGetDevice(&device), "cudaGetDevice", error) ||
        !cuda_ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                 "cudaDeviceGetAttribute", error)) {
        return FALSE;
    }
    if (concurrent(b) && b->spec->channels && 2 * b->spec->channels > (guint)sms) {
        g_set_error(error, MS_CUDA_ERROR, MS_CUDA_ERROR_DEVICE,
                    "the concurrency benchmark at %u channels runs two communicators' kernels of "
                    "%u blocks at once, and this GPU has %d SMs: give at most %d channels",
                    b->spec->channels, b->spec->channels, sms, sms / 2);
        return FALSE;
    }
    return TRUE;
}

/* The second communicator: split from the first over the same ranks, sharing none of its
 * resources (NCCL's default, splitShare 0), so that it has channels and connections of its own
 * as a second framework's communicator does; its stream has the first one's priority, so that
 * neither collective is favoured. */
static gboolean
concurrency_setup(Bench *b, int priority, GError **error)
{
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    config.splitShare = 0;
    guint64 bytes = b->spec->background_bytes / 2 * 2;
    for (guint k = 0; k < G_N_ELEMENTS(b->mark); k++) {
        if (!cuda_ok(cudaEventCreate(&b->mark[k]), "cudaEventCreate", error)) {
            return FALSE;
        }
    }
    /* The buffers are filled on the first stream: the second waits for that. */
    return check_sms(b, error) &&
           nccl_ok(ncclCommSplit(b->comm, 0, (int)b->place.rank, &b->comm2, &config), b->comm,
                   "ncclCommSplit", error) &&
           nccl_settle(b->comm, b->deadline, "ncclCommSplit", error) &&
           nccl_settle(b->comm2, b->deadline, "ncclCommSplit", error) &&
           cuda_ok(cudaStreamCreateWithPriority(&b->stream2, cudaStreamNonBlocking, priority),
                   "cudaStreamCreateWithPriority", error) &&
           alloc(2 * bytes, &b->bg, b, error) &&
           cuda_ok(cudaEventRecord(b->mark[0], b->stream), "cudaEventRecord", error) &&
           cuda_ok(cudaStreamWaitEvent(b->stream2, b->mark[0], 0), "cudaStreamWaitEvent", error);
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
    GArray *conc = s->concurrency_sizes;
    if (concurrent(b) && conc->len) {
        comm = MAX(comm, g_array_index(conc, guint64, conc->len - 1));
    }
    guint64 ga = 0, gb = 0, gc = 0;
    if (kernels(b) && b->place.rank == 0) {
        gemm_sizes(s, &ga, &gb, &gc);
    }
    return cuda_ok(cudaMalloc((void **)&b->scalar, sizeof(float)), "cudaMalloc", error) &&
           alloc(comm, &b->send, b, error) && alloc(comm, &b->recv, b, error) &&
           alloc(ga * 2, &b->a, b, error) && alloc(gb * 2, &b->b, b, error) &&
           alloc(gc * 2, &b->c, b, error) &&
           (!(concurrent(b) || overlapping(b)) || concurrency_setup(b, greatest, error));
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

/* Issues count calls. */
static gboolean
repeat(Bench *b, IssueFn issue, gconstpointer arg, guint64 count, GError **error)
{
    for (guint64 k = 0; k < count; k++) {
        if (!issue(b, arg, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

/* nccl-tests' way: warm-up calls, then iters calls between events 0 and 1 on the stream the calls
 * run on; queued, not waited for. */
static gboolean
queue_timed(Bench *b, cudaStream_t stream, IssueFn issue, gconstpointer arg, GError **error)
{
    const MsBenchSpec *s = b->spec;
    return repeat(b, issue, arg, s->warmup, error) &&
           cuda_ok(cudaEventRecord(b->ev[0], stream), "cudaEventRecord", error) &&
           repeat(b, issue, arg, s->iters, error) &&
           cuda_ok(cudaEventRecord(b->ev[1], stream), "cudaEventRecord", error);
}

/* The mean per call on this rank of what queue_timed queued. */
static gboolean
timed_mean(Bench *b, double *mine, GError **error)
{
    double total = 0;
    if (!elapsed(b, 0, 1, &total, error)) {
        return FALSE;
    }
    *mine = total / b->spec->iters;
    return TRUE;
}

/* The same, the slowest rank's. */
static gboolean
time_comm(Bench *b, cudaStream_t stream, IssueFn issue, gconstpointer arg, double *seconds,
          GError **error)
{
    double mine = 0;
    return queue_timed(b, stream, issue, arg, error) && timed_mean(b, &mine, error) &&
           slowest(b, mine, seconds, error);
}

static int
cmp_double(gconstpointer x, gconstpointer y)
{
    double a = *(const double *)x, c = *(const double *)y;
    return a < c ? -1 : a > c;
}

/* Kernels: warm-up calls, then each call between its own events (0 .. iters); queued, not waited
 * for. */
static gboolean
queue_kernel(Bench *b, IssueFn issue, gconstpointer arg, GError **error)
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
    return TRUE;
}

/* The min, median and mean of what queue_kernel queued. */
static gboolean
kernel_stats(Bench *b, double stats[3], GError **error)
{
    const MsBenchSpec *s = b->spec;
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

static gboolean
time_kernel(Bench *b, IssueFn issue, gconstpointer arg, double stats[3], GError **error)
{
    return queue_kernel(b, issue, arg, error) && kernel_stats(b, stats, error);
}

/* Rank 0 writes the row; the others only took part in timing it. Communication rows carry the
 * NCCL settings the run is made under. */
static void
add_row(Bench *b, MsMeasurement *row)
{
    row->source = SOURCE;
    if (ms_measurement_kind_is_network(row->kind)) {
        row->channels = b->spec->channels;
        row->qps = b->spec->qps;
    }
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
        if (!time_comm(b, b->stream, issue, &t, &sec, error)) {
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

/* --- concurrency --- */

/* The looping allreduce, on the second communicator and stream. */
static gboolean
issue_background(Bench *b, gconstpointer arg, GError **error)
{
    const Transfer *t = arg;
    ncclDataType_t dt = b->bf16 ? ncclBfloat16 : ncclFloat16;
    return nccl_ok(ncclAllReduce(b->bg, b->bg + t->bytes, t->bytes / 2, dt, ncclSum, b->comm2,
                                 b->stream2),
                   b->comm2, "ncclAllReduce", error) &&
           nccl_settle(b->comm2, b->deadline, "the looping allreduce", error);
}

/* What runs under the looping allreduce: an all-to-all timed as time_comm times it, or (kernel)
 * a kernel timed call by call as time_kernel does. mine: this rank times it (a kernel runs on
 * rank 0 only; the other ranks only loop the allreduce). */
typedef struct {
    IssueFn issue;
    gconstpointer arg;
    gboolean kernel, mine;
    const char *what; /* for the loop's limit: "the all-to-all of 1048576 B" */
} Timed;

/* One run: the allreduce's warm-up calls; then what t times, on its stream after those warm-ups
 * (a stream wait on an event), while the allreduce's loop calls run on the other stream.
 * Everything is queued before anything is waited for, and every rank queues the same calls of
 * each communicator in the same order, so that neither waits on a rank busy with the other.
 * out: the mean per call (an all-to-all) or the min, median and mean (a kernel); outlasted: the
 * loop ended after t's last call on this rank (always, on a rank that times nothing). */
static gboolean
run_under(Bench *b, const Timed *t, const Transfer *bg, guint64 loop, double out[3],
          gboolean *outlasted, GError **error)
{
    guint64 lead = MIN(loop, LEAD);
    guint last = t->kernel ? b->spec->iters : 1;
    float ms = 1;
    if (!repeat(b, issue_background, bg, b->spec->warmup, error) ||
        !cuda_ok(cudaEventRecord(b->mark[0], b->stream2), "cudaEventRecord", error) ||
        !repeat(b, issue_background, bg, lead, error)) {
        return FALSE;
    }
    if (t->mine &&
        (!cuda_ok(cudaStreamWaitEvent(b->stream, b->mark[0], 0), "cudaStreamWaitEvent", error) ||
         !(t->kernel ? queue_kernel(b, t->issue, t->arg, error)
                     : queue_timed(b, b->stream, t->issue, t->arg, error)))) {
        return FALSE;
    }
    if (!repeat(b, issue_background, bg, loop - lead, error) ||
        !cuda_ok(cudaEventRecord(b->mark[1], b->stream2), "cudaEventRecord", error)) {
        return FALSE;
    }
    out[0] = out[1] = out[2] = 0;
    if (t->mine && !(t->kernel ? kernel_stats(b, out, error) : timed_mean(b, &out[0], error))) {
        return FALSE;
    }
    if (!cuda_event_wait(b->mark[1], b->deadline, "the looping allreduce", error) ||
        (t->mine && !cuda_ok(cudaEventElapsedTime(&ms, b->ev[last], b->mark[1]),
                             "cudaEventElapsedTime", error))) {
        return FALSE;
    }
    *outlasted = ms > 0;
    return TRUE;
}

/* What t times under the looping allreduce bg, as run_under gives it. The loop is sized from
 * alone, t's time alone, and ar, the allreduce's, both the same on every rank (the slowest
 * rank's, or rank 0's kernel), so every rank makes the same calls. */
static gboolean
time_under(Bench *b, const Timed *t, const Transfer *bg, double alone, double ar, double out[3],
           GError **error)
{
    const MsBenchSpec *s = b->spec;
    double window = MARGIN * (s->warmup + s->iters) * alone;
    double loop = ceil(window / MAX(ar, 1e-9)) + 1;
    for (guint attempt = 0; attempt < ATTEMPTS; attempt++, loop *= 2) {
        if (!ms_bench_loop_check(loop, t->what, bg->bytes, error)) {
            return FALSE;
        }
        double short_anywhere = 0;
        gboolean outlasted = FALSE;
        if (!run_under(b, t, bg, (guint64)loop, out, &outlasted, error) ||
            !slowest(b, outlasted ? 0 : 1, &short_anywhere, error)) {
            return FALSE;
        }
        if (short_anywhere == 0) {
            return TRUE;
        }
    }
    g_set_error(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC,
                "%s outlasted %u runs of the looping allreduce, the last of %.0f calls", t->what,
                ATTEMPTS, loop / 2);
    return FALSE;
}

static MsMeasurement
comm_row(const MsBenchSpec *s, MsMeasurementKind kind, guint64 bytes, double seconds)
{
    return (MsMeasurement){.kind = kind,
                           .bytes = bytes,
                           .ranks = s->world,
                           .ranks_per_node = s->ranks_per_node,
                           .dtype = kind == MS_MEASUREMENT_ALLREDUCE ? s->dtype : NULL,
                           .label = "",
                           .seconds = seconds,
                           .min_s = NAN,
                           .median_s = NAN,
                           .mean_s = seconds};
}

/* The looping allreduce (whole elements), timed alone the first time it is needed, its row
 * written then. */
static gboolean
background_alone(Bench *b, Transfer *bg, GError **error)
{
    const MsBenchSpec *s = b->spec;
    *bg = (Transfer){NULL, s->background_bytes / 2 * 2};
    if (b->bg_alone > 0) {
        return TRUE;
    }
    if (!time_comm(b, b->stream2, issue_background, bg, &b->bg_alone, error)) {
        return FALSE;
    }
    MsMeasurement row = comm_row(s, MS_MEASUREMENT_ALLREDUCE, bg->bytes, b->bg_alone);
    add_row(b, &row);
    return TRUE;
}

/* The allreduce alone, then per size the all-to-all alone and under the allreduce. */
static gboolean
bench_concurrency(Bench *b, GError **error)
{
    const MsBenchSpec *s = b->spec;
    Transfer bg;
    if (!concurrent(b)) {
        return TRUE;
    }
    if (!background_alone(b, &bg, error)) {
        return FALSE;
    }
    for (guint k = 0; k < s->concurrency_sizes->len; k++) {
        guint64 size = g_array_index(s->concurrency_sizes, guint64, k);
        Transfer t = {NULL, size / s->world * s->world}; /* whole bytes to every rank */
        double alone = 0, mine[3], under = 0;
        if (t.bytes == 0) {
            continue;
        }
        g_autofree char *what =
            g_strdup_printf("the all-to-all of %" G_GUINT64_FORMAT " B", t.bytes);
        Timed timed = {issue_alltoall, &t, FALSE, TRUE, what};
        if (!time_comm(b, b->stream, issue_alltoall, &t, &alone, error) ||
            !time_under(b, &timed, &bg, alone, b->bg_alone, mine, error) ||
            !slowest(b, mine[0], &under, error)) {
            return FALSE;
        }
        MsMeasurement row = comm_row(s, MS_MEASUREMENT_ALLTOALL, t.bytes, alone);
        add_row(b, &row);
        row = comm_row(s, MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE, t.bytes, under);
        row.background_bytes = bg.bytes;
        add_row(b, &row);
    }
    return TRUE;
}

/* --- kernels (rank 0) --- */

static gboolean
issue_kernel(Bench *b, gconstpointer arg, GError **error)
{
    const MsBenchKernel *k = arg;
    if (k->kind == MS_MEASUREMENT_ELEMENTWISE) {
        size_t n = k->m * k->n;
        int e = b->spec->gated ? ms_cuda_swiglu(b->a, b->c, n, bench_elem(b), b->stream)
                               : ms_cuda_silu(b->a, b->c, n, bench_elem(b), b->stream);
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

static MsMeasurement
kernel_row(const MsBenchSpec *s, const MsBenchKernel *k, const double st[3])
{
    return (MsMeasurement){.kind = k->kind,
                           .bytes = k->bytes,
                           .m = k->m,
                           .n = k->n,
                           .k = k->k,
                           .dtype = s->dtype,
                           .label = k->label,
                           .seconds = st[1],
                           .min_s = st[0],
                           .median_s = st[1],
                           .mean_s = st[2]};
}

/* Kernel k on rank 0 while the allreduce bg loops on every rank: the other ranks take rank 0's
 * time alone (its median) to size the same loop. */
static gboolean
kernel_under(Bench *b, const MsBenchKernel *k, const Transfer *bg, const double alone[3],
             GError **error)
{
    gboolean mine = b->place.rank == 0;
    double median = 0, st[3];
    g_autofree char *what =
        g_strdup_printf("the kernel %s at %" G_GUINT64_FORMAT " tokens", k->label, k->m);
    Timed t = {issue_kernel, k, TRUE, mine, what};
    if (!slowest(b, mine ? alone[1] : 0, &median, error) ||
        !time_under(b, &t, bg, median, b->bg_alone, st, error)) {
        return FALSE;
    }
    MsMeasurement row = kernel_row(b->spec, k, st);
    row.background_bytes = bg->bytes;
    add_row(b, &row);
    return TRUE;
}

/* The expert kernels on rank 0, each alone and (overlap) then under the looping allreduce, in
 * which every rank takes part; the launch overhead. */
static gboolean
bench_kernels(Bench *b, GError **error)
{
    const MsBenchSpec *s = b->spec;
    gboolean mine = b->place.rank == 0;
    Transfer bg;
    if (overlapping(b) && !background_alone(b, &bg, error)) {
        return FALSE;
    }
    for (guint t = 0; kernels(b) && t < s->tokens->len; t++) {
        MsBenchKernel kern[3];
        ms_bench_expert_kernels(s, g_array_index(s->tokens, guint32, t), kern);
        for (guint j = 0; j < 3; j++) {
            double st[3] = {0, 0, 0};
            if (mine && !time_kernel(b, issue_kernel, &kern[j], st, error)) {
                return FALSE;
            }
            MsMeasurement row = kernel_row(s, &kern[j], st);
            add_row(b, &row); /* rank 0's */
            if (overlapping(b) && !kernel_under(b, &kern[j], &bg, st, error)) {
                return FALSE;
            }
        }
    }
    if (mine && (s->what & MS_BENCH_LAUNCH)) {
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
    b.csv_version = ms_bench_csv_version(spec);
    if (place->rank == 0) {
        b.csv = g_string_new(NULL);
        ms_meas_csv_write_header(b.csv, b.csv_version);
    }
    /* NCCL takes its settings from this process's environment when the first communicator is
     * made: they must be the ones the rows will say. */
    gboolean ok = ms_bench_nccl_env_check(spec, NULL, error) && bench_setup(&b, error) &&
                  bench_comm(&b, error) && bench_concurrency(&b, error) && bench_kernels(&b, error);
    GBytes *result = NULL;
    if (ok) {
        result = place->rank == 0 ? g_bytes_new(b.csv->str, b.csv->len) : g_bytes_new(NULL, 0);
    }
    bench_clear(&b);
    return result;
}
