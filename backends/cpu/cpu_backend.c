/* cpu_backend: one worker thread per (rank, stream) holding ops, fed by the executor's launches;
 * checks at launch (stream free, compute program order) and at start (first run, dependencies
 * finished); collectives in cpu_transfer.c. Times are CLOCK_MONOTONIC in picoseconds. */
#include "cpu_private.h"

#include <time.h>

G_DEFINE_QUARK(ms_cpu_backend_error_quark, ms_cpu_backend_error)

/* The queue item that ends a worker, and the completion that wakes the driver after a failure. */
#define STOP GUINT_TO_POINTER(G_MAXUINT)
static MsExecDone wake;

static MsTime
now_ps(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (MsTime)ts.tv_sec * MS_PS_PER_S + (MsTime)ts.tv_nsec * MS_PS_PER_NS;
}

gboolean
cpu_aborted(CpuState *st)
{
    return atomic_load(&st->aborted) != 0;
}

void
cpu_fail(CpuState *st, GError *error)
{
    g_mutex_lock(&st->error_lock);
    if (st->error == NULL) {
        st->error = error;
        error = NULL;
    }
    g_mutex_unlock(&st->error_lock);
    g_clear_error(&error);
    atomic_store(&st->aborted, 1);
    g_async_queue_push(st->done, &wake);
}

static gboolean op_violation(CpuState *st, GError **error, guint32 op, const char *format, ...)
    G_GNUC_PRINTF(4, 5);

static gboolean
op_violation(CpuState *st, GError **error, guint32 op, const char *format, ...)
{
    MsOpInfo i;
    ms_schedule_op(st->s, op, &i);
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_VIOLATION,
                "op %u (%s) on rank %u, stream %s: %s", op, i.label, i.rank,
                ms_schedule_stream_name(st->s, i.stream), msg);
    return FALSE;
}

/* --- running one op --- */

/* Real floating-point work until the deadline (or an abort). */
static void
busy(CpuWorker *w, MsTime duration)
{
    MsTime until = now_ps() + duration;
    while (now_ps() < until && !cpu_aborted(w->st)) {
        for (guint k = 0; k < G_N_ELEMENTS(w->scratch); k++) {
            w->scratch[k] = w->scratch[k] * 0.999 + 0.001;
        }
    }
}

static MsTime
compute_time(CpuState *st, const MsOpInfo *i)
{
    MsTime t = ms_compute_op_time(st->models[i->rank], i, FALSE);
    return (MsTime)((double)t * st->cpu.time_scale);
}

/* Checks made when op starts: it never ran before, and everything it depends on finished. */
static gboolean
check_start(CpuState *st, guint32 op, GError **error)
{
    if (atomic_fetch_add(&st->runs[op], 1) != 0) {
        return op_violation(st, error, op, "started a second time");
    }
    MsOpInfo i;
    ms_schedule_op(st->s, op, &i);
    for (guint k = 0; k < i.n_deps; k++) {
        if (!atomic_load(&st->finished[i.deps[k]])) {
            MsOpInfo d;
            ms_schedule_op(st->s, i.deps[k], &d);
            return op_violation(st, error, op,
                                "started before its dependency op %u (%s) on rank %u finished",
                                d.id, d.label, d.rank);
        }
    }
    return TRUE;
}

static gboolean
run_op(CpuWorker *w, guint32 op, MsExecDone *done, GError **error)
{
    CpuState *st = w->st;
    done->op = op;
    done->start = now_ps();
    if (!check_start(st, op, error)) {
        return FALSE;
    }
    MsOpInfo i;
    ms_schedule_op(st->s, op, &i);
    if (i.kind == MS_OP_COMPUTE) {
        busy(w, compute_time(st, &i));
    } else if (!cpu_collective_run(w, op, error)) {
        return FALSE;
    }
    done->end = now_ps();
    return !cpu_aborted(st);
}

static gpointer
worker_main(gpointer data)
{
    CpuWorker *w = data;
    CpuState *st = w->st;
    for (;;) {
        gpointer item = g_async_queue_pop(w->queue);
        if (item == STOP) {
            return NULL;
        }
        guint32 op = GPOINTER_TO_UINT(item) - 1;
        MsExecDone *done = g_new(MsExecDone, 1);
        GError *error = NULL;
        if (!run_op(w, op, done, &error)) {
            g_free(done);
            if (error) {
                cpu_fail(st, error);
            }
            continue;
        }
        atomic_store(&st->finished[op], 1);
        /* The stream is free before the driver can hear of the completion. */
        atomic_store(&w->busy, 0);
        g_async_queue_push(st->done, done);
    }
}

/* --- open and close --- */

static int
cmp_program(gconstpointer a, gconstpointer b, gpointer data)
{
    MsOpInfo x, y;
    ms_schedule_op(data, *(const guint32 *)a, &x);
    ms_schedule_op(data, *(const guint32 *)b, &y);
    if (x.priority != y.priority) {
        return x.priority < y.priority ? -1 : 1;
    }
    return x.id < y.id ? -1 : x.id > y.id;
}

/* Groups every rank's ops by stream into workers; compute workers keep program order. */
static void
make_workers(CpuState *st)
{
    GArray **lists = g_new0(GArray *, st->n_ranks * st->n_streams);
    for (guint r = 0; r < st->n_ranks; r++) {
        guint n;
        const guint32 *ops = ms_schedule_rank_ops(st->s, r, &n);
        for (guint k = 0; k < n; k++) {
            MsOpInfo i;
            ms_schedule_op(st->s, ops[k], &i);
            guint slot = r * st->n_streams + i.stream;
            if (lists[slot] == NULL) {
                lists[slot] = g_array_new(FALSE, FALSE, sizeof(guint32));
            }
            g_array_append_val(lists[slot], ops[k]);
        }
    }
    for (guint slot = 0; slot < st->n_ranks * st->n_streams; slot++) {
        if (lists[slot] == NULL) {
            continue;
        }
        CpuWorker *w = g_new0(CpuWorker, 1);
        w->st = st;
        w->rank = slot / st->n_streams;
        w->stream = slot % st->n_streams;
        w->queue = g_async_queue_new();
        for (guint k = 0; k < G_N_ELEMENTS(w->scratch); k++) {
            w->scratch[k] = k;
        }
        if (ms_schedule_stream_kind(st->s, w->stream) == MS_STREAM_COMPUTE) {
            g_array_sort_with_data(lists[slot], cmp_program, (gpointer)st->s);
            w->program_len = lists[slot]->len;
            w->program = (guint32 *)g_array_free(lists[slot], FALSE);
        } else {
            g_array_unref(lists[slot]);
        }
        st->workers[slot] = w;
        st->n_workers++;
    }
    g_free(lists);
}

static guint
count_slots(const MsSchedule *s)
{
    guint n_streams = ms_schedule_n_streams(s), used = 0;
    g_autofree guint8 *seen = g_new0(guint8, (gsize)ms_schedule_n_ranks(s) * n_streams);
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        MsOpInfo i;
        ms_schedule_op(s, op, &i);
        guint slot = i.rank * n_streams + i.stream;
        used += !seen[slot];
        seen[slot] = 1;
    }
    return used;
}

static gboolean
setup_models(CpuState *st, GError **error)
{
    const MsTopology *topo = st->opts.topology;
    if (topo == NULL) {
        g_set_error(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_SETUP,
                    "the cpu backend needs a topology to size its compute busy work (--topology, "
                    "or a schedule whose meta names one)");
        return FALSE;
    }
    if (ms_topology_n_gpus(topo) < st->n_ranks) {
        g_set_error(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_SETUP,
                    "the schedule has %u ranks but topology '%s' has %u GPUs", st->n_ranks,
                    ms_topology_name(topo), ms_topology_n_gpus(topo));
        return FALSE;
    }
    st->models = g_new0(MsComputeModel *, st->n_ranks);
    for (guint r = 0; r < st->n_ranks; r++) {
        st->models[r] = ms_compute_model_new(ms_topology_gpu_spec(topo, r), error);
        if (st->models[r] == NULL ||
            !ms_compute_model_apply_schedule(st->models[r], st->s, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

static void
cpu_close(gpointer state)
{
    CpuState *st = state;
    atomic_store(&st->aborted, 1);
    for (guint k = 0; st->workers && k < st->n_ranks * st->n_streams; k++) {
        CpuWorker *w = st->workers[k];
        if (w == NULL) {
            continue;
        }
        if (w->thread) {
            g_async_queue_push(w->queue, STOP);
            g_thread_join(w->thread);
        }
        g_async_queue_unref(w->queue);
        g_free(w->program);
        g_free(w);
    }
    g_free(st->workers);
    for (guint r = 0; st->models && r < st->n_ranks; r++) {
        ms_compute_model_free(st->models[r]);
    }
    g_free(st->models);
    cpu_buffers_free(st);
    for (guint32 c = 0; st->meetings && c < ms_schedule_n_colls(st->s); c++) {
        g_free(st->meetings[c]);
    }
    g_free(st->meetings);
    gpointer item;
    while ((item = g_async_queue_try_pop(st->done)) != NULL) {
        if (item != &wake) {
            g_free(item);
        }
    }
    g_async_queue_unref(st->done);
    g_free(st->runs);
    g_free(st->finished);
    g_mutex_clear(&st->meet_lock);
    g_mutex_clear(&st->error_lock);
    g_clear_error(&st->error);
    g_free(st);
}

static gpointer
cpu_open(const MsSchedule *s, const MsExecOptions *opts, const MsExecPlace *place, GError **error)
{
    MsCpuOptions cpu;
    if (!ms_cpu_options_resolve(opts->backend, &cpu, error)) {
        return NULL;
    }
    guint used = count_slots(s);
    if (used > MS_CPU_MAX_WORKERS) {
        g_set_error(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_SETUP,
                    "the schedule needs %u worker threads (ranks x streams holding ops), the cpu "
                    "backend runs at most %u",
                    used, MS_CPU_MAX_WORKERS);
        return NULL;
    }
    CpuState *st = g_new0(CpuState, 1);
    st->s = s;
    st->opts = *opts;
    st->opts.backend = NULL; /* the caller's record: st->cpu is this run's copy */
    st->cpu = cpu;
    st->n_ranks = ms_schedule_n_ranks(s);
    st->n_streams = ms_schedule_n_streams(s);
    g_mutex_init(&st->meet_lock);
    g_mutex_init(&st->error_lock);
    st->done = g_async_queue_new();
    st->runs = g_new0(atomic_int, MAX(ms_schedule_n_ops(s), 1));
    st->finished = g_new0(atomic_int, MAX(ms_schedule_n_ops(s), 1));
    st->meetings = g_new0(CpuMeeting *, MAX(ms_schedule_n_colls(s), 1));
    st->workers = g_new0(CpuWorker *, st->n_ranks * st->n_streams);
    if (!setup_models(st, error) || !cpu_buffers_alloc(st, error)) {
        cpu_close(st);
        return NULL;
    }
    make_workers(st);
    for (guint k = 0; k < st->n_ranks * st->n_streams; k++) {
        CpuWorker *w = st->workers[k];
        if (w == NULL) {
            continue;
        }
        g_autofree char *name = g_strdup_printf("rank%u.%u", w->rank, w->stream);
        w->thread = g_thread_try_new(name, worker_main, w, error);
        if (w->thread == NULL) {
            cpu_close(st);
            return NULL;
        }
    }
    return st;
}

/* --- hooks --- */

static gboolean
cpu_launch(gpointer state, guint32 op, GError **error)
{
    CpuState *st = state;
    MsOpInfo i;
    ms_schedule_op(st->s, op, &i);
    CpuWorker *w = st->workers[i.rank * st->n_streams + i.stream];
    if (atomic_exchange(&w->busy, 1)) {
        return op_violation(st, error, op, "launched while op %u still runs on the stream",
                            w->current);
    }
    if (w->program) {
        guint32 expect = w->next < w->program_len ? w->program[w->next] : G_MAXUINT32;
        if (op != expect) {
            return op_violation(st, error, op,
                                "launched out of program order: the compute stream's next op "
                                "is op %u",
                                expect);
        }
        w->next++;
    }
    w->current = op;
    g_async_queue_push(w->queue, GUINT_TO_POINTER(op + 1));
    return TRUE;
}

static gboolean
take_failure(CpuState *st, GError **error)
{
    g_mutex_lock(&st->error_lock);
    g_propagate_error(error, g_error_copy(st->error));
    g_mutex_unlock(&st->error_lock);
    return FALSE;
}

static gboolean
cpu_wait(gpointer state, gint64 timeout_us, GArray *done, GError **error)
{
    CpuState *st = state;
    gpointer item = g_async_queue_timeout_pop(st->done, MAX(timeout_us, 0));
    while (item != NULL) {
        if (item == &wake) {
            return take_failure(st, error);
        }
        g_array_append_val(done, *(MsExecDone *)item);
        g_free(item);
        item = g_async_queue_try_pop(st->done);
    }
    return TRUE;
}

static gboolean
cpu_finish(gpointer state, MsRecords *records, GError **error)
{
    CpuState *st = state;
    for (guint32 op = 0; op < ms_schedule_n_ops(st->s); op++) {
        if (atomic_load(&st->runs[op]) != 1) {
            return op_violation(st, error, op, "ran %d times, not once",
                                atomic_load(&st->runs[op]));
        }
    }
    ms_records_set_stat(records, "transfer_bytes", (double)atomic_load(&st->transfer_bytes));
    ms_records_set_stat(records, "checked_bytes", (double)atomic_load(&st->checked_bytes));
    ms_records_set_stat(records, "checked_elements", (double)atomic_load(&st->checked_elements));
    ms_records_set_stat(records, "workers", st->n_workers);
    return TRUE;
}

const MsExecBackend ms_cpu_backend = {
    .name = "cpu",
    .per_rank = FALSE,
    .session = NULL,
    .open = cpu_open,
    .launch = cpu_launch,
    .wait = cpu_wait,
    .finish = cpu_finish,
    .close = cpu_close,
    .options_size = sizeof(MsCpuOptions),
};
