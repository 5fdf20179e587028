/* cuda_backend: one rank's streams, buffers, cuBLAS handles and NCCL communicators, the kernels of
 * each op as cuda_plan.h decides, and completion by polling CUDA events (never a blocking
 * synchronise, so a dead peer ends in a timeout rather than a hang). Times in picoseconds. */
#include "config.h"

#include "backends/executor_launch.h"
#include "cuda_private.h"

#include <gmodule.h>
#include <string.h>

#include "backends/backend_module.h"
#include "cuda_kernels.h"

#define SCRATCH_BYTES 256u
#define POLL_US 20

/* --- shared helpers (cuda_private.h) --- */

gboolean
cuda_ok(cudaError_t e, const char *what, GError **error)
{
    if (e == cudaSuccess) {
        return TRUE;
    }
    g_set_error(error, MS_CUDA_ERROR, MS_CUDA_ERROR_RUNTIME, "%s: %s (%s)", what,
                cudaGetErrorString(e), cudaGetErrorName(e));
    return FALSE;
}

gboolean
cublas_ok(cublasStatus_t st, const char *what, GError **error)
{
    if (st == CUBLAS_STATUS_SUCCESS) {
        return TRUE;
    }
    g_set_error(error, MS_CUDA_ERROR, MS_CUDA_ERROR_CUBLAS, "%s: %s", what,
                cublasGetStatusString(st));
    return FALSE;
}

gboolean
nccl_ok(ncclResult_t r, ncclComm_t comm, const char *what, GError **error)
{
    if (r == ncclSuccess || r == ncclInProgress) {
        return TRUE;
    }
    const char *last = comm ? ncclGetLastError(comm) : NULL;
    g_set_error(error, MS_CUDA_ERROR, MS_CUDA_ERROR_NCCL, "%s: %s%s%s", what, ncclGetErrorString(r),
                last && *last ? ": " : "", last ? last : "");
    return FALSE;
}

gboolean
nccl_settle(ncclComm_t comm, gint64 deadline, const char *what, GError **error)
{
    for (;;) {
        ncclResult_t state = ncclSuccess;
        ncclResult_t r = ncclCommGetAsyncError(comm, &state);
        if (r != ncclSuccess) {
            return nccl_ok(r, comm, what, error);
        }
        if (state != ncclInProgress) {
            return nccl_ok(state, comm, what, error);
        }
        if (g_get_monotonic_time() >= deadline) {
            g_set_error(error, MS_CUDA_ERROR, MS_CUDA_ERROR_TIMEOUT,
                        "%s: not done within the run's timeout (a peer missing?)", what);
            return FALSE;
        }
        g_usleep(POLL_US);
    }
}

gboolean
nccl_init(ncclComm_t *comm, const MsExecPlace *place, const guint8 *id, gint64 deadline,
          GError **error)
{
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclUniqueId uid;
    memcpy(&uid, id, sizeof uid);
    *comm = NULL;
    ncclResult_t r =
        ncclCommInitRankConfig(comm, (int)place->world, uid, (int)place->rank, &config);
    return nccl_ok(r, *comm, "ncclCommInitRankConfig", error) &&
           nccl_settle(*comm, deadline, "ncclCommInitRankConfig", error);
}

void
nccl_drop(ncclComm_t comm)
{
    if (comm) {
        ncclCommAbort(comm);
    }
}

gboolean
cuda_select(const MsExecPlace *place, int *sm, guint64 *memory, GError **error)
{
    GError *local = NULL;
    guint count = ms_cuda_device_count(&local);
    if (count == 0) {
        g_propagate_error(error, local);
        return FALSE;
    }
    guint device = 0;
    if (!ms_launch_device(place->local_rank, count, &device, error)) {
        g_prefix_error(error, "%s: ", g_get_host_name());
        return FALSE;
    }
    struct cudaDeviceProp prop;
    if (!cuda_ok(cudaSetDevice((int)device), "cudaSetDevice", error) ||
        !cuda_ok(cudaGetDeviceProperties(&prop, (int)device), "cudaGetDeviceProperties", error) ||
        !cuda_ok(cudaFree(NULL), "creating the CUDA context", error)) {
        return FALSE;
    }
    *sm = prop.major * 10 + prop.minor;
    *memory = prop.totalGlobalMem;
    return TRUE;
}

gboolean
cuda_event_wait(cudaEvent_t ev, gint64 deadline, const char *what, GError **error)
{
    for (;;) {
        cudaError_t e = cudaEventQuery(ev);
        if (e == cudaSuccess) {
            return TRUE;
        }
        if (e != cudaErrorNotReady) {
            return cuda_ok(e, what, error);
        }
        if (g_get_monotonic_time() >= deadline) {
            g_set_error(error, MS_CUDA_ERROR, MS_CUDA_ERROR_TIMEOUT,
                        "%s: the GPU did not finish within the run's timeout", what);
            return FALSE;
        }
        g_usleep(POLL_US);
    }
}

guint
ms_cuda_device_count(GError **error)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count <= 0) {
        g_set_error(error, MS_CUDA_ERROR, MS_CUDA_ERROR_DEVICE,
                    "no CUDA device is visible on %s (%s)", g_get_host_name(),
                    e != cudaSuccess ? cudaGetErrorString(e) : "the driver reports 0 devices");
        return 0;
    }
    return (guint)count;
}

/* --- state --- */

typedef struct {
    cudaStream_t stream;
    cudaEvent_t start, end;
    gboolean busy;
    guint32 op;
    cublasHandle_t blas;
    guint8 *a, *b, *c, *in, *out, *send, *recv;
    ncclComm_t comm;
} Stream;

typedef struct {
    const MsSchedule *s;
    MsExecOptions o;
    MsExecPlace place;
    gint64 deadline;
    MsCudaTypes types; /* the datatype the run computes and moves in */
    int sm;
    guint64 memory;
    guint n_streams;
    Stream *st;
    MsCudaNeeds *needs;
    GPtrArray *groups;
    ncclComm_t *group_comms; /* NULL where this rank is not in the group */
    ncclComm_t own_sync;     /* the time base's communicator when no stream has one */
    guint8 *scratch;
    cudaEvent_t base;
    guint64 *send_off, *recv_off;
    guint64 gemm_calls, derived, elementwise, empty, nccl_calls;
} Cuda;

static void
cuda_close(gpointer state)
{
    Cuda *c = state;
    for (guint g = 0; c->group_comms && g < c->groups->len; g++) {
        nccl_drop(c->group_comms[g]);
    }
    nccl_drop(c->own_sync);
    for (guint k = 0; c->st && k < c->n_streams; k++) {
        Stream *s = &c->st[k];
        nccl_drop(s->comm);
        if (s->blas) {
            cublasDestroy(s->blas);
        }
        guint8 *bufs[] = {s->a, s->b, s->c, s->in, s->out, s->send, s->recv};
        for (guint i = 0; i < G_N_ELEMENTS(bufs); i++) {
            cudaFree(bufs[i]);
        }
        if (s->start) {
            cudaEventDestroy(s->start);
            cudaEventDestroy(s->end);
        }
        if (s->stream) {
            cudaStreamDestroy(s->stream);
        }
    }
    cudaFree(c->scratch);
    if (c->base) {
        cudaEventDestroy(c->base);
    }
    g_free(c->st);
    g_free(c->needs);
    g_free(c->group_comms);
    if (c->groups) {
        g_ptr_array_unref(c->groups);
    }
    g_free(c->send_off);
    g_free(c->recv_off);
    g_free(c);
}

/* --- open --- */

static gboolean
check_memory(Cuda *c, GError **error)
{
    size_t free_bytes = 0, total = 0;
    if (!cuda_ok(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo", error)) {
        return FALSE;
    }
    guint64 need = ms_cuda_needs_total(c->needs, c->n_streams) + SCRATCH_BYTES;
    /* Leave room for cuBLAS workspaces and NCCL's own buffers. */
    if (need > free_bytes / 10 * 9) {
        g_set_error(error, MS_CUDA_ERROR, MS_CUDA_ERROR_MEMORY,
                    "the schedule needs %" G_GUINT64_FORMAT " bytes of buffers on this rank, "
                    "the GPU has %" G_GUINT64_FORMAT " free of %" G_GUINT64_FORMAT,
                    need, (guint64)free_bytes, (guint64)total);
        return FALSE;
    }
    return TRUE;
}

/* Allocates size bytes and fills them with small values (16-bit types stay finite in every sum). */
static gboolean
alloc_filled(Cuda *c, Stream *s, guint64 size, guint seed, guint8 **out, GError **error)
{
    if (size == 0) {
        return TRUE;
    }
    return cuda_ok(cudaMalloc((void **)out, size), "cudaMalloc", error) &&
           cuda_ok(ms_cuda_fill(*out, size / c->types.elem, seed, c->types.kernel, s->stream),
                   "filling a buffer", error);
}

static gboolean
open_stream(Cuda *c, guint k, int least, int greatest, GError **error)
{
    Stream *s = &c->st[k];
    const MsCudaNeeds *n = &c->needs[k];
    int prio = ms_cuda_stream_priority(c->s, k, least, greatest);
    if (!cuda_ok(cudaStreamCreateWithPriority(&s->stream, cudaStreamNonBlocking, prio),
                 "cudaStreamCreateWithPriority", error) ||
        !cuda_ok(cudaEventCreate(&s->start), "cudaEventCreate", error) ||
        !cuda_ok(cudaEventCreate(&s->end), "cudaEventCreate", error)) {
        return FALSE;
    }
    guint seed = c->place.rank * 64 + k * 8;
    if (!alloc_filled(c, s, n->a, seed, &s->a, error) ||
        !alloc_filled(c, s, n->b, seed + 1, &s->b, error) ||
        !alloc_filled(c, s, n->c, seed + 2, &s->c, error) ||
        !alloc_filled(c, s, n->in, seed + 3, &s->in, error) ||
        !alloc_filled(c, s, n->out, seed + 4, &s->out, error) ||
        !alloc_filled(c, s, n->send, seed + 5, &s->send, error) ||
        !alloc_filled(c, s, n->recv, seed + 6, &s->recv, error)) {
        return FALSE;
    }
    if (ms_schedule_stream_kind(c->s, k) == MS_STREAM_COMPUTE) {
        return cublas_ok(cublasCreate(&s->blas), "cublasCreate", error) &&
               cublas_ok(cublasSetStream(s->blas, s->stream), "cublasSetStream", error);
    }
    return TRUE;
}

static gboolean
open_comms(Cuda *c, GError **error)
{
    guint n_comm = 0;
    for (guint k = 0; k < c->n_streams; k++) {
        n_comm += ms_schedule_stream_kind(c->s, k) == MS_STREAM_COMM;
    }
    const guint8 *ids = NULL;
    guint n_ids = 0;
    if (!ms_cuda_session_unpack(c->place.session, MAX(n_comm, 1), &ids, &n_ids, error)) {
        return FALSE;
    }
    if (n_comm == 0) {
        return nccl_init(&c->own_sync, &c->place, ids, c->deadline, error);
    }
    for (guint k = 0, used = 0; k < c->n_streams; k++) {
        if (ms_schedule_stream_kind(c->s, k) == MS_STREAM_COMM &&
            !nccl_init(&c->st[k].comm, &c->place, ids + MS_CUDA_ID_BYTES * used++, c->deadline,
                       error)) {
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
is_member(const MsCudaGroup *g, guint rank)
{
    for (guint k = 0; k < g->n_ranks; k++) {
        if (g->ranks[k] == rank) {
            return TRUE;
        }
    }
    return FALSE;
}

/* Every rank splits, in the same order, one communicator per subset allreduce group. */
static gboolean
split_groups(Cuda *c, GError **error)
{
    c->group_comms = g_new0(ncclComm_t, MAX(c->groups->len, 1));
    for (guint g = 0; g < c->groups->len; g++) {
        const MsCudaGroup *grp = c->groups->pdata[g];
        ncclComm_t parent = c->st[grp->stream].comm;
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 0;
        gboolean member = is_member(grp, c->place.rank);
        ncclResult_t r = ncclCommSplit(parent, member ? (int)g : NCCL_SPLIT_NOCOLOR,
                                       (int)c->place.rank, &c->group_comms[g], &config);
        if (!nccl_ok(r, parent, "ncclCommSplit", error) ||
            !nccl_settle(parent, c->deadline, "ncclCommSplit", error) ||
            (member && !nccl_settle(c->group_comms[g], c->deadline, "ncclCommSplit", error))) {
            return FALSE;
        }
    }
    return TRUE;
}

/* Opens every connection the run will use, so that no op pays for connection set-up. */
static gboolean
warm_up(Cuda *c, GError **error)
{
    for (guint k = 0; k < c->n_streams; k++) {
        Stream *s = &c->st[k];
        if (s->comm == NULL) {
            continue;
        }
        g_autoptr(GArray) peers = ms_cuda_plan_peers(c->s, c->place.rank, k);
        if (peers->len) {
            gboolean ok = nccl_ok(ncclGroupStart(), s->comm, "ncclGroupStart", error);
            for (guint p = 0; ok && p < peers->len; p++) {
                int peer = (int)g_array_index(peers, guint32, p);
                ok = nccl_ok(ncclSend(c->scratch, 1, ncclInt8, peer, s->comm, s->stream), s->comm,
                             "ncclSend", error) &&
                     nccl_ok(ncclRecv(c->scratch + 128, 1, ncclInt8, peer, s->comm, s->stream),
                             s->comm, "ncclRecv", error);
            }
            if (!ok || !nccl_ok(ncclGroupEnd(), s->comm, "ncclGroupEnd", error) ||
                !nccl_settle(s->comm, c->deadline, "warming up all-to-all connections", error)) {
                return FALSE;
            }
        }
        if (!nccl_ok(
                ncclAllReduce(c->scratch, c->scratch, 1, ncclFloat, ncclSum, s->comm, s->stream),
                s->comm, "ncclAllReduce", error) ||
            !nccl_settle(s->comm, c->deadline, "warming up allreduce connections", error)) {
            return FALSE;
        }
    }
    for (guint g = 0; g < c->groups->len; g++) {
        const MsCudaGroup *grp = c->groups->pdata[g];
        ncclComm_t comm = c->group_comms[g];
        if (comm && (!nccl_ok(ncclAllReduce(c->scratch, c->scratch, 1, ncclFloat, ncclSum, comm,
                                            c->st[grp->stream].stream),
                              comm, "ncclAllReduce", error) ||
                     !nccl_settle(comm, c->deadline, "warming up a group", error))) {
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean run_compute(Cuda *c, Stream *s, const MsOpInfo *i, GError **error);

/* Runs each distinct kernel of this rank's compute ops once (a GEMM shape per stream, since
 * every stream has its own cuBLAS handle), so that no op pays for a first call: loading the
 * kernel's module and cuBLAS's choice of algorithm made the first 8192^3 bf16 GEMM on an H200
 * take 127 ms instead of 1.6. The warm-up calls are not counted in the run's statistics. */
static gboolean
warm_up_compute(Cuda *c, GError **error)
{
    guint64 counts[] = {c->gemm_calls, c->derived, c->elementwise, c->empty};
    /* What a first call depends on: the kernel, a GEMM's shape, the stream's cuBLAS handle.
     * Six 32-bit fields: no padding, so memcmp compares them. */
    typedef struct {
        guint32 kind, stream, m, n, k, sets;
    } Key;
    g_autoptr(GArray) seen = g_array_new(FALSE, FALSE, sizeof(Key));
    gboolean ok = TRUE;
    for (guint32 op = 0; ok && op < ms_schedule_n_ops(c->s); op++) {
        MsOpInfo i;
        MsCudaWork w;
        ms_schedule_op(c->s, op, &i);
        if (i.rank != c->place.rank || i.kind != MS_OP_COMPUTE ||
            !(ok = ms_cuda_plan_work(&i, c->types.elem, &w, error))) {
            continue;
        }
        gboolean gemm = w.kind == MS_CUDA_WORK_GEMM;
        Key key = {w.kind,         i.stream,       gemm ? w.m : 0,
                   gemm ? w.n : 0, gemm ? w.k : 0, gemm ? w.sets : 0};
        guint j = 0;
        while (j < seen->len && memcmp(&g_array_index(seen, Key, j), &key, sizeof key) != 0) {
            j++;
        }
        if (j == seen->len) {
            g_array_append_val(seen, key);
            ok = run_compute(c, &c->st[i.stream], &i, error);
        }
    }
    c->gemm_calls = counts[0], c->derived = counts[1], c->elementwise = counts[2];
    c->empty = counts[3];
    return ok;
}

/* The common time origin: the end of one allreduce over all ranks, recorded on every GPU. */
static gboolean
record_base(Cuda *c, GError **error)
{
    Stream *sync = &c->st[0];
    ncclComm_t comm = c->own_sync;
    for (guint k = 0; k < c->n_streams && comm == NULL; k++) {
        if (c->st[k].comm) {
            sync = &c->st[k];
            comm = c->st[k].comm;
        }
    }
    for (guint k = 0; k < c->n_streams; k++) {
        if (!cuda_ok(cudaEventRecord(c->st[k].end, c->st[k].stream), "cudaEventRecord", error) ||
            !cuda_event_wait(c->st[k].end, c->deadline, "setting up", error)) {
            return FALSE;
        }
    }
    return cuda_ok(cudaEventCreate(&c->base), "cudaEventCreate", error) &&
           nccl_ok(ncclAllReduce(c->scratch, c->scratch, 1, ncclFloat, ncclSum, comm, sync->stream),
                   comm, "ncclAllReduce", error) &&
           nccl_settle(comm, c->deadline, "aligning the clocks", error) &&
           cuda_ok(cudaEventRecord(c->base, sync->stream), "cudaEventRecord", error) &&
           cuda_event_wait(c->base, c->deadline, "aligning the clocks", error);
}

static gboolean
setup(Cuda *c, GError **error)
{
    guint world = ms_schedule_n_ranks(c->s);
    c->needs = g_new0(MsCudaNeeds, c->n_streams);
    c->send_off = g_new0(guint64, world);
    c->recv_off = g_new0(guint64, world);
    c->groups = ms_cuda_plan_groups(c->s, error);
    if (c->groups == NULL ||
        !ms_cuda_plan_needs(c->s, c->place.rank, c->types.elem, c->needs, error) ||
        !cuda_select(&c->place, &c->sm, &c->memory, error) || !check_memory(c, error)) {
        return FALSE;
    }
    int least = 0, greatest = 0;
    if (!cuda_ok(cudaDeviceGetStreamPriorityRange(&least, &greatest),
                 "cudaDeviceGetStreamPriorityRange", error) ||
        !cuda_ok(cudaMalloc((void **)&c->scratch, SCRATCH_BYTES), "cudaMalloc", error) ||
        !cuda_ok(cudaMemset(c->scratch, 0, SCRATCH_BYTES), "cudaMemset", error)) {
        return FALSE;
    }
    c->st = g_new0(Stream, c->n_streams);
    for (guint k = 0; k < c->n_streams; k++) {
        if (!open_stream(c, k, least, greatest, error)) {
            return FALSE;
        }
    }
    return open_comms(c, error) && split_groups(c, error) && warm_up(c, error) &&
           warm_up_compute(c, error) && record_base(c, error);
}

static gpointer
cuda_open(const MsSchedule *s, const MsExecOptions *opts, const MsExecPlace *place, GError **error)
{
    g_return_val_if_fail(place != NULL, NULL);
    MsCudaOptions co;
    if (!ms_cuda_options_resolve(opts->backend, &co, error)) {
        return NULL;
    }
    Cuda *c = g_new0(Cuda, 1);
    c->s = s;
    c->o = *opts;
    c->o.backend = NULL; /* the caller's record: read here, not kept */
    c->place = *place;
    c->n_streams = ms_schedule_n_streams(s);
    if (!ms_cuda_plan_types(s, ms_cuda_options_dtype(&co), &c->types, error)) {
        g_free(c);
        return NULL;
    }
    c->deadline = g_get_monotonic_time() + (gint64)(opts->timeout_s * G_USEC_PER_SEC);
    if (!setup(c, error)) {
        cuda_close(c);
        return NULL;
    }
    return c;
}

/* --- running ops --- */

static gboolean
run_gemm(Cuda *c, Stream *s, const MsCudaWork *w, GError **error)
{
    cudaDataType dt = (cudaDataType)c->types.cuda_type;
    cublasComputeType_t math = (cublasComputeType_t)c->types.compute_type;
    guint64 elem = c->types.elem;
    const float alpha = 1.0f, beta = 0.0f;
    /* The layout of a framework's linear layer (PyTorch's forward): row-major C (m x n) =
     * A (m x k) . W^T with the weight W stored (n x k), output by input; column-major that is
     * C^T = op_T(W) A^T. cuBLAS picks other kernels than for W stored (k x n): on an H200 a
     * Mixtral expert's up projection took a third less time at 128 tokens, 14% more at 4096.
     * Each call does every set (local expert) at once. */
    for (guint32 call = 0; call < w->calls; call++) {
        const guint8 *W = s->b + (guint64)(call % w->count) * w->sets * w->k * w->n * elem;
        cublasStatus_t st = cublasGemmStridedBatchedEx(
            s->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)w->n, (int)w->m, (int)w->k, &alpha, W, dt,
            (int)w->k, (long long)w->k * w->n, s->a, dt, (int)w->k, (long long)w->m * w->k, &beta,
            s->c, dt, (int)w->n, (long long)w->m * w->n, (int)w->sets, math, CUBLAS_GEMM_DEFAULT);
        if (!cublas_ok(st, "cublasGemmStridedBatchedEx", error)) {
            return FALSE;
        }
        c->gemm_calls++;
    }
    c->derived += w->derived;
    return TRUE;
}

static gboolean
run_compute(Cuda *c, Stream *s, const MsOpInfo *i, GError **error)
{
    MsCudaWork w;
    if (!ms_cuda_plan_work(i, c->types.elem, &w, error)) {
        return FALSE;
    }
    switch (w.kind) {
    case MS_CUDA_WORK_GEMM:
        return run_gemm(c, s, &w, error);
    case MS_CUDA_WORK_ELEMENTWISE:
        c->elementwise++;
        return cuda_ok(ms_cuda_silu(s->in, s->out, w.elements, c->types.kernel, s->stream),
                       "the SiLU kernel", error);
    default:
        c->empty++;
        return cuda_ok(ms_cuda_empty(s->stream), "the empty kernel", error);
    }
}

static gboolean
run_alltoall(Cuda *c, Stream *s, const MsCollInfo *coll, guint p, GError **error)
{
    guint n = coll->n_ranks;
    ms_cuda_a2a_offsets(coll, p, c->send_off, c->recv_off);
    /* The part to itself first: the GPU copies while the host sets up NCCL's group. */
    guint64 self = coll->matrix[(gsize)p * n + p];
    if (self > 0 && !cuda_ok(cudaMemcpyAsync(s->recv + c->recv_off[p], s->send + c->send_off[p],
                                             self, cudaMemcpyDeviceToDevice, s->stream),
                             "the all-to-all's copy to itself", error)) {
        return FALSE;
    }
    guint64 remote = 0;
    for (guint q = 0; q < n; q++) {
        remote += q == p ? 0 : coll->matrix[(gsize)p * n + q] + coll->matrix[(gsize)q * n + p];
    }
    if (remote == 0) {
        return TRUE;
    }
    gboolean ok = nccl_ok(ncclGroupStart(), s->comm, "ncclGroupStart", error);
    for (guint q = 0; ok && q < n; q++) {
        guint64 out = coll->matrix[(gsize)p * n + q], in = coll->matrix[(gsize)q * n + p];
        int peer = (int)coll->ranks[q];
        if (q == p) {
            continue;
        }
        ok = (out == 0 ||
              nccl_ok(ncclSend(s->send + c->send_off[q], out, ncclInt8, peer, s->comm, s->stream),
                      s->comm, "ncclSend", error)) &&
             (in == 0 ||
              nccl_ok(ncclRecv(s->recv + c->recv_off[q], in, ncclInt8, peer, s->comm, s->stream),
                      s->comm, "ncclRecv", error));
    }
    if (!ok || !nccl_ok(ncclGroupEnd(), s->comm, "ncclGroupEnd", error) ||
        !nccl_settle(s->comm, c->deadline, "an all-to-all", error)) {
        return FALSE;
    }
    c->nccl_calls++;
    return TRUE;
}

static gboolean
run_allreduce(Cuda *c, Stream *s, const MsCollInfo *coll, GError **error)
{
    gint g = ms_cuda_group_of(c->groups, c->s, coll->id);
    ncclComm_t comm = g < 0 ? s->comm : c->group_comms[g];
    /* The payload's datatype; a buffer of part elements (no planner writes one) is summed as
     * bytes. */
    gboolean whole = coll->bytes % c->types.elem == 0;
    ncclDataType_t dt = whole ? (ncclDataType_t)c->types.nccl_type : ncclUint8;
    size_t count = whole ? coll->bytes / c->types.elem : coll->bytes;
    c->nccl_calls++;
    /* In place, as frameworks reduce gradient buckets: on one rank NCCL then has nothing to do,
     * where out of place it would copy the bucket. */
    return nccl_ok(ncclAllReduce(s->send, s->send, count, dt, ncclSum, comm, s->stream), comm,
                   "ncclAllReduce", error) &&
           nccl_settle(comm, c->deadline, "an allreduce", error);
}

static gboolean
run_comm(Cuda *c, Stream *s, const MsOpInfo *i, GError **error)
{
    MsCollInfo coll;
    ms_schedule_coll(c->s, i->coll, &coll);
    if (coll.kind == MS_COLL_KIND_ALLREDUCE) {
        return run_allreduce(c, s, &coll, error);
    }
    guint p = 0;
    while (coll.ops[p] != i->id) {
        p++;
    }
    return run_alltoall(c, s, &coll, p, error);
}

static gboolean
cuda_launch(gpointer state, guint32 op, GError **error)
{
    Cuda *c = state;
    MsOpInfo i;
    ms_schedule_op(c->s, op, &i);
    Stream *s = &c->st[i.stream];
    if (s->busy) {
        g_set_error(error, MS_CUDA_ERROR, MS_CUDA_ERROR_RUNTIME,
                    "op %u (%s) launched while op %u still runs on stream %s", op, i.label, s->op,
                    ms_schedule_stream_name(c->s, i.stream));
        return FALSE;
    }
    if (!cuda_ok(cudaEventRecord(s->start, s->stream), "cudaEventRecord", error) ||
        !(i.kind == MS_OP_COMPUTE ? run_compute(c, s, &i, error) : run_comm(c, s, &i, error)) ||
        !cuda_ok(cudaEventRecord(s->end, s->stream), "cudaEventRecord", error)) {
        g_prefix_error(error, "op %u (%s): ", op, i.label);
        return FALSE;
    }
    s->busy = TRUE;
    s->op = op;
    return TRUE;
}

/* The op's times: its start from the base event, its length between its own events. */
static gboolean
op_times(Cuda *c, Stream *s, MsExecDone *d, GError **error)
{
    float from_base = 0, length = 0;
    if (!cuda_ok(cudaEventElapsedTime(&from_base, c->base, s->start), "cudaEventElapsedTime",
                 error) ||
        !cuda_ok(cudaEventElapsedTime(&length, s->start, s->end), "cudaEventElapsedTime", error)) {
        return FALSE;
    }
    d->op = s->op;
    d->start = ms_time_from_s(MAX(from_base, 0) * 1e-3);
    d->end = d->start + ms_time_from_s(MAX(length, 0) * 1e-3);
    return TRUE;
}

static gboolean
poll_streams(Cuda *c, GArray *done, GError **error)
{
    for (guint k = 0; k < c->n_streams; k++) {
        Stream *s = &c->st[k];
        if (!s->busy) {
            continue;
        }
        cudaError_t e = cudaEventQuery(s->end);
        if (e == cudaErrorNotReady) {
            continue;
        }
        MsExecDone d;
        if (!cuda_ok(e, "waiting for an op", error) || !op_times(c, s, &d, error)) {
            return FALSE;
        }
        s->busy = FALSE;
        g_array_append_val(done, d);
    }
    return TRUE;
}

/* A failure elsewhere (a peer's abort, a network error) shows as a communicator error. */
static gboolean
check_comms(Cuda *c, GError **error)
{
    for (guint k = 0; k < c->n_streams; k++) {
        ncclResult_t state = ncclSuccess;
        if (c->st[k].comm && ncclCommGetAsyncError(c->st[k].comm, &state) == ncclSuccess &&
            state != ncclSuccess && state != ncclInProgress) {
            return nccl_ok(state, c->st[k].comm, "communicator error", error);
        }
    }
    return TRUE;
}

/* Polls without sleeping: a stream's next op is launched only once its last is seen done, and
 * a sleep of POLL_US lasts 60 us or more with the kernel's timer slack. On an H200 the gaps
 * between the ops of a training step fell from 40 to 29 ms (of 530) with it; the rest is the
 * round trip to the coordinator. A rank's host thread has a core of its own; it yields it to
 * anything else that needs it. */
static gboolean
cuda_wait(gpointer state, gint64 timeout_us, GArray *done, GError **error)
{
    Cuda *c = state;
    gint64 until = g_get_monotonic_time() + timeout_us;
    for (;;) {
        guint before = done->len;
        if (!poll_streams(c, done, error) || !check_comms(c, error)) {
            return FALSE;
        }
        if (done->len > before || g_get_monotonic_time() >= until) {
            return TRUE;
        }
        g_thread_yield();
    }
}

static gboolean
cuda_finish(gpointer state, MsRecords *records, GError **error)
{
    Cuda *c = state;
    ms_records_set_stat(records, "gemm_calls", (double)c->gemm_calls);
    ms_records_set_stat(records, "derived_gemms", (double)c->derived);
    ms_records_set_stat(records, "elementwise_kernels", (double)c->elementwise);
    ms_records_set_stat(records, "empty_kernels", (double)c->empty);
    ms_records_set_stat(records, "nccl_calls", (double)c->nccl_calls);
    ms_records_set_stat(records, "device_sm", c->sm);
    ms_records_set_stat(records, "device_memory_bytes", (double)c->memory);
    return TRUE;
}

static GBytes *
cuda_session(const MsExecOptions *opts, guint n_comms, guint local_ranks, GError **error)
{
    if (local_ranks) {
        guint count = ms_cuda_device_count(error);
        if (count == 0) {
            return NULL;
        }
        if (count < local_ranks) {
            g_set_error(error, MS_CUDA_ERROR, MS_CUDA_ERROR_DEVICE,
                        "the run has %u ranks but %s has %u CUDA device%s (one process per GPU; "
                        "across nodes run under srun or torchrun)",
                        local_ranks, g_get_host_name(), count, count == 1 ? "" : "s");
            return NULL;
        }
    }
    n_comms = MAX(n_comms, 1);
    g_autofree guint8 *ids = g_new0(guint8, (gsize)n_comms * MS_CUDA_ID_BYTES);
    for (guint k = 0; k < n_comms; k++) {
        ncclUniqueId id;
        if (!nccl_ok(ncclGetUniqueId(&id), NULL, "ncclGetUniqueId", error)) {
            return NULL;
        }
        memcpy(ids + (gsize)k * MS_CUDA_ID_BYTES, &id, sizeof id);
    }
    return ms_cuda_session_pack(ids, n_comms);
}

const MsExecBackend ms_cuda_backend = {
    .name = "cuda",
    .per_rank = TRUE,
    .busy_poll = TRUE,
    .session = cuda_session,
    .open = cuda_open,
    .launch = cuda_launch,
    .wait = cuda_wait,
    .finish = cuda_finish,
    .close = cuda_close,
    .bench = cuda_bench_run,
    .devices = ms_cuda_device_count,
    .options_size = sizeof(MsCudaOptions),
};

/* What moesim finds when it loads this module (backend_module.h). */
G_MODULE_EXPORT const MsBackendModule moesim_backend_module = {
    .abi = MS_BACKEND_MODULE_ABI,
    .version = MOESIM_VERSION,
    .hooks_size = sizeof(MsExecBackend),
    .hooks = &ms_cuda_backend,
};
