/* executor_worker: one rank's side of a remote run: join the coordinator, open the per-rank
 * backend on the job it sends, start the ops it launches, report completions (times in ps on the
 * backend's clock) until BYE. Also the message payload codecs both sides use. */
#include "remote_private.h"

#include <string.h>

#include "backends/executor_launch.h"
#include "sim/base/json_input.h"

/* While ops run, the worker alternates between the socket and the backend this often: a launch
 * for another stream waits at most this long while an op runs. */
#define DEVICE_POLL_US 20
/* Once it has a job, a worker waits this much longer than the run's timeout, so that the
 * coordinator, which knows which ops are late, is the one to report it. */
#define WORKER_GRACE_US (30 * G_USEC_PER_SEC)

/* --- payloads --- */

void
remote_hello_write(GByteArray *p, const RemoteHello *h)
{
    ms_wire_put_u32(p, h->version);
    ms_wire_put_u32(p, h->rank);
    ms_wire_put_u32(p, h->world);
    ms_wire_put_u32(p, h->local_rank);
    ms_wire_put_string(p, h->host);
}

gboolean
remote_hello_read(GBytes *payload, RemoteHello *h, GError **error)
{
    MsWireReader r;
    ms_wire_reader_init(&r, payload, "HELLO");
    if (!ms_wire_get_u32(&r, &h->version, error) || !ms_wire_get_u32(&r, &h->rank, error) ||
        !ms_wire_get_u32(&r, &h->world, error) || !ms_wire_get_u32(&r, &h->local_rank, error) ||
        !ms_wire_get_string(&r, &h->host, error)) {
        return FALSE;
    }
    if (!ms_wire_reader_end(&r, error)) {
        g_clear_pointer(&h->host, g_free);
        return FALSE;
    }
    return TRUE;
}

void
remote_job_write(GByteArray *p, const char *kind, GBytes *payload, const MsExecOptions *o,
                 gsize options_size, GBytes *session)
{
    ms_wire_put_string(p, kind);
    ms_wire_put_bytes(p, payload);
    ms_wire_put_double(p, o->timeout_s);
    g_autoptr(GBytes) options =
        o->backend && options_size ? g_bytes_new(o->backend, options_size) : NULL;
    ms_wire_put_bytes(p, options);
    ms_wire_put_bytes(p, session);
}

typedef struct {
    char *kind;
    GBytes *payload, *options, *session;
    double timeout_s;
} RemoteJob;

static void
job_clear(RemoteJob *j)
{
    g_free(j->kind);
    if (j->options) {
        g_bytes_unref(j->options);
    }
    if (j->payload) {
        g_bytes_unref(j->payload);
    }
    if (j->session) {
        g_bytes_unref(j->session);
    }
}

static gboolean
job_read(GBytes *payload, RemoteJob *j, GError **error)
{
    MsWireReader r;
    ms_wire_reader_init(&r, payload, "JOB");
    return ms_wire_get_string(&r, &j->kind, error) && ms_wire_get_bytes(&r, &j->payload, error) &&
           ms_wire_get_double(&r, &j->timeout_s, error) &&
           ms_wire_get_bytes(&r, &j->options, error) && ms_wire_get_bytes(&r, &j->session, error) &&
           ms_wire_reader_end(&r, error);
}

gboolean
remote_done_read(GBytes *payload, const MsSchedule *s, guint rank, GArray *done, GError **error)
{
    MsWireReader r;
    g_autofree char *what = g_strdup_printf("DONE from rank %u", rank);
    ms_wire_reader_init(&r, payload, what);
    guint32 n;
    if (!ms_wire_get_u32(&r, &n, error)) {
        return FALSE;
    }
    for (guint k = 0; k < n; k++) {
        MsExecDone d;
        if (!ms_wire_get_u32(&r, &d.op, error) || !ms_wire_get_u64(&r, &d.start, error) ||
            !ms_wire_get_u64(&r, &d.end, error)) {
            return FALSE;
        }
        MsOpInfo i = {.rank = rank};
        if (d.op < ms_schedule_n_ops(s)) {
            ms_schedule_op(s, d.op, &i);
        }
        if (i.rank != rank) {
            g_set_error(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_PEER,
                        "rank %u reported op %u, which belongs to rank %u", rank, d.op, i.rank);
            return FALSE;
        }
        g_array_append_val(done, d);
    }
    return ms_wire_reader_end(&r, error);
}

static void
stats_write(GByteArray *p, const MsRecords *rec)
{
    const char *const *keys = ms_records_stat_keys(rec);
    ms_wire_put_u32(p, g_strv_length((char **)keys));
    for (guint k = 0; keys[k]; k++) {
        double v = 0;
        ms_records_get_stat(rec, keys[k], &v);
        ms_wire_put_string(p, keys[k]);
        ms_wire_put_double(p, v);
    }
}

gboolean
remote_stats_read(GBytes *payload, MsRecords *records, GError **error)
{
    MsWireReader r;
    ms_wire_reader_init(&r, payload, "STATS from rank 0");
    guint32 n;
    if (!ms_wire_get_u32(&r, &n, error)) {
        return FALSE;
    }
    for (guint k = 0; k < n; k++) {
        g_autofree char *key = NULL;
        double v;
        if (!ms_wire_get_string(&r, &key, error) || !ms_wire_get_double(&r, &v, error)) {
            return FALSE;
        }
        ms_records_set_stat(records, key, v);
    }
    return ms_wire_reader_end(&r, error);
}

gboolean
remote_result_read(GBytes *payload, GBytes **result, GError **error)
{
    MsWireReader r;
    ms_wire_reader_init(&r, payload, "RESULT from rank 0");
    return ms_wire_get_bytes(&r, result, error) && ms_wire_reader_end(&r, error);
}

GBytes *
remote_schedule_bytes(const MsSchedule *s)
{
    g_autoptr(JsonNode) root = ms_schedule_to_json(s);
    char *text = json_to_string(root, FALSE);
    return g_bytes_new_take(text, strlen(text));
}

guint
remote_n_comm_streams(const MsSchedule *s)
{
    guint n = 0;
    for (guint st = 0; st < ms_schedule_n_streams(s); st++) {
        n += ms_schedule_stream_kind(s, st) == MS_STREAM_COMM;
    }
    return n;
}

/* --- the worker --- */

typedef struct {
    const MsExecBackend *b;
    MsExecOptions o;
    MsLaunchEnv env;
    MsWire *wire;
    gint64 deadline;
    RemoteJob job;
    MsSchedule *s;
    gpointer state;
    MsRecords *own;
    guint in_flight;
    GArray *done;
    gboolean bye, heard_fail;
    MsTime t0;
} Worker;

static gboolean
worker_send(Worker *w, guint32 type, const GByteArray *p, GError **error)
{
    return ms_wire_send(w->wire, type, p, w->deadline, error);
}

static gboolean
coordinator_failed(Worker *w, GBytes *payload, GError **error)
{
    MsWireReader r;
    g_autofree char *msg = NULL;
    ms_wire_reader_init(&r, payload, "FAIL from the coordinator");
    w->heard_fail = TRUE;
    if (ms_wire_get_string(&r, &msg, error)) {
        g_set_error(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_ABORTED,
                    "the coordinator ended the run: %s", msg);
    }
    return FALSE;
}

/* The coordinator's options record replaces this worker's own: empty means the defaults; any
 * other size than the backend's is a worker of another build. */
static gboolean
job_options(Worker *w, GError **error)
{
    gsize n = 0;
    gconstpointer data = g_bytes_get_data(w->job.options, &n);
    if (n != 0 && n != w->b->options_size) {
        g_set_error(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_PEER,
                    "the coordinator sent %" G_GSIZE_FORMAT " bytes of options for backend '%s', "
                    "which takes %" G_GSIZE_FORMAT " (mixed moesim builds?)",
                    n, w->b->name, w->b->options_size);
        return FALSE;
    }
    w->o.backend = n ? data : NULL;
    return TRUE;
}

static gboolean
join(Worker *w, GError **error)
{
    g_autoptr(GSocket) sock =
        ms_wire_connect(w->env.master_addr, w->env.master_port, w->deadline, error);
    if (sock == NULL) {
        return FALSE;
    }
    w->wire = ms_wire_new(sock, "the coordinator");
    RemoteHello h = {MS_REMOTE_PROTOCOL, w->env.rank, w->env.world, w->env.local_rank,
                     (char *)g_get_host_name()};
    g_autoptr(GByteArray) p = g_byte_array_new();
    remote_hello_write(p, &h);
    guint32 type;
    g_autoptr(GBytes) payload = NULL;
    if (!worker_send(w, MS_WIRE_HELLO, p, error) ||
        !ms_wire_recv(w->wire, w->deadline, &type, &payload, error)) {
        return FALSE;
    }
    if (type == MS_WIRE_FAIL) {
        return coordinator_failed(w, payload, error);
    }
    if (type != MS_WIRE_JOB) {
        return remote_unexpected("the coordinator", type, "instead of JOB", error);
    }
    if (!job_read(payload, &w->job, error)) {
        return FALSE;
    }
    w->o.timeout_s = w->job.timeout_s;
    if (!job_options(w, error) || !ms_exec_options_resolve(&w->o, &w->o, error)) {
        return FALSE;
    }
    w->deadline =
        g_get_monotonic_time() + (gint64)(w->o.timeout_s * G_USEC_PER_SEC) + WORKER_GRACE_US;
    return TRUE;
}

static gboolean
load_schedule(Worker *w, GError **error)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    gsize len = 0;
    const char *text = g_bytes_get_data(w->job.payload, &len);
    if (!ms_json_input_load_data(parser, text ? text : "", len, "the coordinator's schedule",
                                 error)) {
        return FALSE;
    }
    w->s = ms_schedule_from_json(json_parser_get_root(parser), "the coordinator's schedule", error);
    if (w->s == NULL) {
        return FALSE;
    }
    if (ms_schedule_n_ranks(w->s) != w->env.world) {
        g_set_error(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_JOB,
                    "the schedule has %u ranks but the job %u", ms_schedule_n_ranks(w->s),
                    w->env.world);
        return FALSE;
    }
    w->own = ms_records_new(ms_schedule_n_ops(w->s), w->b->name);
    return TRUE;
}

static gboolean
on_launch(Worker *w, GBytes *payload, GError **error)
{
    MsWireReader r;
    ms_wire_reader_init(&r, payload, "LAUNCH from the coordinator");
    guint32 n;
    if (!ms_wire_get_u32(&r, &n, error)) {
        return FALSE;
    }
    for (guint k = 0; k < n; k++) {
        guint32 op;
        if (!ms_wire_get_u32(&r, &op, error)) {
            return FALSE;
        }
        MsOpInfo i = {.rank = G_MAXUINT32};
        if (op < ms_schedule_n_ops(w->s)) {
            ms_schedule_op(w->s, op, &i);
        }
        if (i.rank != w->env.rank) {
            g_set_error(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_PEER,
                        "the coordinator launched op %u, which is not an op of rank %u", op,
                        w->env.rank);
            return FALSE;
        }
        if (!w->b->launch(w->state, op, error)) {
            return FALSE;
        }
        w->in_flight++;
    }
    return ms_wire_reader_end(&r, error);
}

static gboolean
on_finish(Worker *w, GError **error)
{
    g_autoptr(MsRecords) stats = ms_records_new(0, w->b->name);
    if (!w->b->finish(w->state, stats, error)) {
        return FALSE;
    }
    g_autoptr(GByteArray) p = g_byte_array_new();
    stats_write(p, stats);
    return worker_send(w, MS_WIRE_STATS, p, error);
}

static gboolean
on_bye(Worker *w, GBytes *payload, GError **error)
{
    MsWireReader r;
    ms_wire_reader_init(&r, payload, "BYE from the coordinator");
    w->bye = TRUE;
    return ms_wire_get_u64(&r, &w->t0, error) && ms_wire_reader_end(&r, error);
}

static gboolean
on_message(Worker *w, GError **error)
{
    guint32 type;
    g_autoptr(GBytes) payload = NULL;
    if (!ms_wire_recv(w->wire, w->deadline, &type, &payload, error)) {
        return FALSE;
    }
    switch (type) {
    case MS_WIRE_LAUNCH:
        return on_launch(w, payload, error);
    case MS_WIRE_FINISH:
        return on_finish(w, error);
    case MS_WIRE_BYE:
        return on_bye(w, payload, error);
    case MS_WIRE_FAIL:
        return coordinator_failed(w, payload, error);
    default:
        return remote_unexpected("the coordinator", type, "during the run", error);
    }
}

static gboolean
report_done(Worker *w, GError **error)
{
    g_array_set_size(w->done, 0);
    if (!w->b->wait(w->state, DEVICE_POLL_US, w->done, error)) {
        return FALSE;
    }
    if (w->done->len == 0) {
        return TRUE;
    }
    g_autoptr(GByteArray) p = g_byte_array_new();
    ms_wire_put_u32(p, w->done->len);
    for (guint k = 0; k < w->done->len; k++) {
        const MsExecDone *d = &g_array_index(w->done, MsExecDone, k);
        ms_wire_put_u32(p, d->op);
        ms_wire_put_u64(p, d->start);
        ms_wire_put_u64(p, d->end);
        if (d->op < ms_records_n_ops(w->own) && d->end >= d->start) {
            ms_records_set(w->own, d->op, d->start, d->end);
        }
    }
    w->in_flight -= MIN(w->in_flight, w->done->len);
    return worker_send(w, MS_WIRE_DONE, p, error);
}

static gboolean
serve(Worker *w, GError **error)
{
    while (!w->bye) {
        if (g_get_monotonic_time() >= w->deadline) {
            g_set_error(error, MS_WIRE_ERROR, MS_WIRE_ERROR_TIMEOUT,
                        "the coordinator did not end the run within the %g s timeout",
                        w->o.timeout_s);
            return FALSE;
        }
        if (w->in_flight == 0) {
            /* A message waiting in the buffer makes on_message's receive return at once. */
            if (w->b->busy_poll) {
                ms_wire_spin_any(&w->wire, 1, w->deadline);
            }
            if (!on_message(w, error)) {
                return FALSE;
            }
            continue;
        }
        while (!w->bye && ms_wire_wait_any(&w->wire, 1, g_get_monotonic_time()) == 0) {
            if (!on_message(w, error)) {
                return FALSE;
            }
        }
        if (!report_done(w, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

/* The time origin the coordinator chose, applied to this rank's own records. */
static void
shift_own(Worker *w)
{
    for (guint32 op = 0; op < ms_records_n_ops(w->own); op++) {
        MsTime a = ms_records_start(w->own, op), z = ms_records_end(w->own, op);
        if (a != MS_TIME_NEVER && a >= w->t0) {
            ms_records_set(w->own, op, a - w->t0, z - w->t0);
        }
    }
}

static gboolean
run_schedule(Worker *w, GError **error)
{
    if (!load_schedule(w, error)) {
        return FALSE;
    }
    MsExecPlace place = {w->env.rank, w->env.world, w->env.local_rank, w->job.session};
    w->state = w->b->open(w->s, &w->o, &place, error);
    if (w->state == NULL || !worker_send(w, MS_WIRE_READY, NULL, error) || !serve(w, error)) {
        return FALSE;
    }
    shift_own(w);
    return TRUE;
}

static gboolean
run_bench(Worker *w, GError **error)
{
    if (w->b->bench == NULL) {
        g_set_error(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_JOB,
                    "backend '%s' has no microbenchmarks", w->b->name);
        return FALSE;
    }
    MsExecPlace place = {w->env.rank, w->env.world, w->env.local_rank, w->job.session};
    g_autoptr(GBytes) result = w->b->bench(w->job.payload, &w->o, &place, error);
    if (result == NULL) {
        return FALSE;
    }
    g_autoptr(GByteArray) p = g_byte_array_new();
    ms_wire_put_bytes(p, w->env.rank == 0 ? result : NULL);
    w->own = ms_records_new(0, w->b->name);
    return worker_send(w, MS_WIRE_RESULT, p, error) && serve(w, error);
}

static gboolean
run_job(Worker *w, GError **error)
{
    if (!join(w, error)) {
        return FALSE;
    }
    if (strcmp(w->job.kind, "schedule") == 0) {
        return run_schedule(w, error);
    }
    if (strcmp(w->job.kind, "bench") == 0) {
        return run_bench(w, error);
    }
    g_set_error(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_PEER,
                "the coordinator sent a job of unknown kind '%s'", w->job.kind);
    return FALSE;
}

static gboolean
read_env(Worker *w, GError **error)
{
    if (!ms_launch_env_read(NULL, &w->env, error)) {
        return FALSE;
    }
    if (w->env.mode == MS_LAUNCH_LOCAL) {
        g_set_error(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_ENV,
                    "a worker needs its rank from the environment (RANK, WORLD_SIZE, MASTER_ADDR "
                    "and MASTER_PORT, or Slurm's SLURM_PROCID and SLURM_NTASKS)");
        return FALSE;
    }
    return TRUE;
}

MsRecords *
ms_remote_worker_main(const MsExecBackend *backend, const MsExecOptions *opts, GError **error)
{
    g_return_val_if_fail(backend && backend->per_rank, NULL);
    Worker w = {.b = backend};
    GError *local = NULL;
    gboolean ok = ms_exec_options_resolve(opts, &w.o, &local) && read_env(&w, &local);
    if (ok) {
        w.deadline = g_get_monotonic_time() + (gint64)(w.o.timeout_s * G_USEC_PER_SEC);
        w.done = g_array_new(FALSE, FALSE, sizeof(MsExecDone));
        ok = run_job(&w, &local);
    }
    if (!ok && w.wire && !w.heard_fail) {
        remote_send_fail(w.wire, local->message);
    }
    if (w.state) {
        backend->close(w.state);
    }
    ms_wire_free(w.wire);
    job_clear(&w.job);
    ms_schedule_free(w.s);
    if (w.done) {
        g_array_unref(w.done);
    }
    guint rank = w.env.rank;
    ms_launch_env_clear(&w.env);
    if (!ok) {
        g_clear_pointer(&w.own, ms_records_free);
        g_prefix_error(&local, "rank %u: ", rank);
        g_propagate_error(error, local);
    }
    return w.own;
}
