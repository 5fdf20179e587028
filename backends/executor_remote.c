/* executor_remote: the coordinator (gathering ranks, handing out the job, acting as the driver
 * loop's backend by forwarding launches and completions) and the launch modes. The worker side
 * is in executor_worker.c. Payload layouts are in remote_private.h. */
#include "remote_private.h"

#include <string.h>

#include "backends/executor_launch.h"

G_DEFINE_QUARK(ms_remote_error_quark, ms_remote_error)

/* How long a best-effort FAIL to a worker may take when the run is already lost. */
#define FAIL_SEND_US G_USEC_PER_SEC

gboolean
ms_remote_is_primary(void)
{
    MsLaunchEnv env;
    if (!ms_launch_env_read(NULL, &env, NULL)) {
        return TRUE;
    }
    gboolean primary = !env.worker && (env.mode == MS_LAUNCH_LOCAL || env.rank == 0);
    ms_launch_env_clear(&env);
    return primary;
}

gboolean
remote_rank_failed(guint rank, GBytes *payload, GError **error)
{
    MsWireReader r;
    g_autofree char *msg = NULL;
    ms_wire_reader_init(&r, payload, "FAIL");
    if (!ms_wire_get_string(&r, &msg, error)) {
        return FALSE;
    }
    g_set_error(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_RANK, "rank %u: %s", rank, msg);
    return FALSE;
}

gboolean
remote_unexpected(const char *who, guint32 type, const char *when, GError **error)
{
    g_set_error(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_PEER, "%s sent %s %s", who,
                ms_wire_type_name(type), when);
    return FALSE;
}

void
remote_send_fail(MsWire *w, const char *message)
{
    g_autoptr(GByteArray) p = g_byte_array_new();
    ms_wire_put_string(p, message);
    ms_wire_send(w, MS_WIRE_FAIL, p, g_get_monotonic_time() + FAIL_SEND_US, NULL);
}

/* --- the coordinator --- */

typedef struct {
    const MsExecBackend *b;
    MsExecOptions o;
    guint world;
    gint64 deadline;
    MsWire **wires; /* by rank */
    char **hosts;   /* by rank, NULL-terminated */
    const MsSchedule *s;
    GArray **launch; /* by rank: ops to send with the next wait */
} Coord;

static void
coord_clear(Coord *c)
{
    for (guint r = 0; r < c->world; r++) {
        ms_wire_free(c->wires ? c->wires[r] : NULL);
        if (c->launch && c->launch[r]) {
            g_array_unref(c->launch[r]);
        }
    }
    g_free(c->wires);
    g_free(c->launch);
    g_strfreev(c->hosts);
}

static void
coord_fail_all(Coord *c, const GError *why)
{
    for (guint r = 0; r < c->world; r++) {
        if (c->wires[r]) {
            remote_send_fail(c->wires[r], why ? why->message : "the coordinator stopped");
        }
    }
}

static gboolean
check_hello(Coord *c, const RemoteHello *h, GError **error)
{
    if (h->version != MS_REMOTE_PROTOCOL) {
        g_set_error(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_PEER,
                    "a worker on %s speaks protocol %u, this coordinator %u (mixed moesim "
                    "versions?)",
                    h->host, h->version, MS_REMOTE_PROTOCOL);
        return FALSE;
    }
    if (h->world != c->world || h->rank >= c->world) {
        g_set_error(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_JOB,
                    "a worker on %s says it is rank %u of %u, but this run has %u ranks", h->host,
                    h->rank, h->world, c->world);
        return FALSE;
    }
    if (c->wires[h->rank]) {
        g_set_error(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_JOB,
                    "two workers say they are rank %u (on %s and %s)", h->rank, c->hosts[h->rank],
                    h->host);
        return FALSE;
    }
    return TRUE;
}

/* Accepts every rank's connection and reads its HELLO. */
static gboolean
coord_gather(Coord *c, GSocket *listener, GError **error)
{
    for (guint k = 0; k < c->world; k++) {
        g_autoptr(GSocket) sock = ms_wire_accept(listener, c->deadline, error);
        if (sock == NULL) {
            g_prefix_error(error, "%u of %u ranks joined: ", k, c->world);
            return FALSE;
        }
        g_autoptr(MsWire) w = ms_wire_new(sock, "a joining worker");
        guint32 type;
        g_autoptr(GBytes) payload = NULL;
        RemoteHello h = {0};
        if (!ms_wire_recv(w, c->deadline, &type, &payload, error)) {
            return FALSE;
        }
        if (type != MS_WIRE_HELLO) {
            return remote_unexpected("a joining worker", type, "instead of HELLO", error);
        }
        if (!remote_hello_read(payload, &h, error)) {
            return FALSE;
        }
        if (!check_hello(c, &h, error)) {
            g_free(h.host);
            return FALSE;
        }
        g_autofree char *name = g_strdup_printf("rank %u", h.rank);
        ms_wire_set_name(w, name);
        c->hosts[h.rank] = h.host;
        c->wires[h.rank] = g_steal_pointer(&w);
    }
    return TRUE;
}

static gboolean
coord_broadcast(Coord *c, guint32 type, const GByteArray *payload, GError **error)
{
    for (guint r = 0; r < c->world; r++) {
        if (!ms_wire_send(c->wires[r], type, payload, c->deadline, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

/* Waits for one message of type from every rank; out[rank] (when not NULL) gets the payloads. */
static gboolean
coord_expect_all(Coord *c, guint32 type, GBytes **out, GError **error)
{
    g_autofree gboolean *got = g_new0(gboolean, c->world);
    for (guint left = c->world; left > 0;) {
        gint r = ms_wire_wait_any(c->wires, c->world, c->deadline);
        if (r < 0) {
            g_set_error(error, MS_WIRE_ERROR, MS_WIRE_ERROR_TIMEOUT,
                        "timed out waiting for %s from %u of %u ranks", ms_wire_type_name(type),
                        left, c->world);
            return FALSE;
        }
        guint32 t;
        g_autoptr(GBytes) payload = NULL;
        if (!ms_wire_recv(c->wires[r], c->deadline, &t, &payload, error)) {
            return FALSE;
        }
        if (t == MS_WIRE_FAIL) {
            return remote_rank_failed((guint)r, payload, error);
        }
        if (t != type || got[r]) {
            g_autofree char *who = g_strdup_printf("rank %d", r);
            g_autofree char *when =
                g_strdup_printf("while %s was awaited", ms_wire_type_name(type));
            return remote_unexpected(who, t, when, error);
        }
        got[r] = TRUE;
        left--;
        if (out) {
            out[r] = g_steal_pointer(&payload);
        }
    }
    return TRUE;
}

static gboolean
coord_job(Coord *c, const char *kind, GBytes *payload, GBytes *session, GError **error)
{
    g_autoptr(GByteArray) p = g_byte_array_new();
    remote_job_write(p, kind, payload, &c->o, c->b->options_size, session);
    return coord_broadcast(c, MS_WIRE_JOB, p, error);
}

static gboolean
coord_bye(Coord *c, MsTime t0, GError **error)
{
    g_autoptr(GByteArray) p = g_byte_array_new();
    ms_wire_put_u64(p, t0);
    return coord_broadcast(c, MS_WIRE_BYE, p, error);
}

/* --- the coordinator as the driver loop's backend --- */

static gboolean
coord_launch(gpointer state, guint32 op, GError **error)
{
    Coord *c = state;
    MsOpInfo i;
    ms_schedule_op(c->s, op, &i);
    g_array_append_val(c->launch[i.rank], op);
    return TRUE;
}

static gboolean
flush_launches(Coord *c, GError **error)
{
    for (guint r = 0; r < c->world; r++) {
        GArray *ops = c->launch[r];
        if (ops->len == 0) {
            continue;
        }
        g_autoptr(GByteArray) p = g_byte_array_new();
        ms_wire_put_u32(p, ops->len);
        for (guint k = 0; k < ops->len; k++) {
            ms_wire_put_u32(p, g_array_index(ops, guint32, k));
        }
        g_array_set_size(ops, 0);
        if (!ms_wire_send(c->wires[r], MS_WIRE_LAUNCH, p, c->deadline, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
take_message(Coord *c, guint rank, GArray *done, GError **error)
{
    guint32 type;
    g_autoptr(GBytes) payload = NULL;
    if (!ms_wire_recv(c->wires[rank], c->deadline, &type, &payload, error)) {
        return FALSE;
    }
    if (type == MS_WIRE_FAIL) {
        return remote_rank_failed(rank, payload, error);
    }
    if (type != MS_WIRE_DONE) {
        g_autofree char *who = g_strdup_printf("rank %u", rank);
        return remote_unexpected(who, type, "during the run", error);
    }
    return remote_done_read(payload, c->s, rank, done, error);
}

static gboolean
coord_wait(gpointer state, gint64 timeout_us, GArray *done, GError **error)
{
    Coord *c = state;
    if (!flush_launches(c, error)) {
        return FALSE;
    }
    gint64 until = MIN(g_get_monotonic_time() + timeout_us, c->deadline);
    gint r = c->b->busy_poll ? ms_wire_spin_any(c->wires, c->world, until)
                             : ms_wire_wait_any(c->wires, c->world, until);
    if (r < 0) {
        return TRUE;
    }
    if (!take_message(c, (guint)r, done, error)) {
        return FALSE;
    }
    /* Whatever else already arrived joins this batch. */
    for (guint k = 0; k < c->world; k++) {
        while (ms_wire_has_message(c->wires[k])) {
            if (!take_message(c, k, done, error)) {
                return FALSE;
            }
        }
    }
    return TRUE;
}

static gboolean
coord_finish(gpointer state, MsRecords *records, GError **error)
{
    Coord *c = state;
    g_autofree GBytes **stats = g_new0(GBytes *, c->world);
    gboolean ok = coord_broadcast(c, MS_WIRE_FINISH, NULL, error) &&
                  coord_expect_all(c, MS_WIRE_STATS, stats, error) &&
                  remote_stats_read(stats[0], records, error);
    for (guint r = 0; r < c->world; r++) {
        if (stats[r]) {
            g_bytes_unref(stats[r]);
        }
    }
    MsTime t0 = MS_TIME_NEVER;
    for (guint32 op = 0; op < ms_schedule_n_ops(c->s); op++) {
        t0 = MIN(t0, ms_records_start(records, op));
    }
    ms_records_set_stat(records, "ranks", c->world);
    return ok && coord_bye(c, t0 == MS_TIME_NEVER ? 0 : t0, error);
}

static const MsExecBackend coord_backend = {
    .per_rank = FALSE,
    .launch = coord_launch,
    .wait = coord_wait,
    .finish = coord_finish,
};

/* --- running a job --- */

typedef struct {
    const char *kind; /* "schedule" or "bench" */
    const MsSchedule *s;
    GBytes *payload; /* the schedule's JSON; for bench built by make_spec */
    MsRemoteSpecFunc make_spec;
    gpointer data;
    GBytes *session;
    GBytes *result; /* bench: rank 0's */
    MsRecords *records;
} Job;

static gboolean
coord_schedule(Coord *c, Job *job, GError **error)
{
    if (!coord_job(c, job->kind, job->payload, job->session, error) ||
        !coord_expect_all(c, MS_WIRE_READY, NULL, error)) {
        return FALSE;
    }
    MsExecBackend hooks = coord_backend;
    hooks.name = c->b->name;
    /* The driver loop enforces the run's timeout from here; the wires get a second more. */
    c->deadline = g_get_monotonic_time() + (gint64)((c->o.timeout_s + 1) * G_USEC_PER_SEC);
    c->launch = g_new0(GArray *, c->world);
    for (guint r = 0; r < c->world; r++) {
        c->launch[r] = g_array_new(FALSE, FALSE, sizeof(guint32));
    }
    job->records = ms_executor_drive(&hooks, c, job->s, &c->o, error);
    return job->records != NULL;
}

static gboolean
coord_bench(Coord *c, Job *job, GError **error)
{
    job->payload = job->make_spec((const char *const *)c->hosts, c->world, job->data, error);
    if (job->payload == NULL) {
        return FALSE;
    }
    g_autofree GBytes **results = g_new0(GBytes *, c->world);
    gboolean ok = coord_job(c, job->kind, job->payload, job->session, error) &&
                  coord_expect_all(c, MS_WIRE_RESULT, results, error);
    for (guint r = 0; r < c->world; r++) {
        if (r == 0 && ok) {
            ok = remote_result_read(results[0], &job->result, error);
        }
        if (results[r]) {
            g_bytes_unref(results[r]);
        }
    }
    return ok && coord_bye(c, 0, error);
}

/* Gathers the ranks on listener and runs the job; on failure tells every worker why. */
static gboolean
coordinate(const MsExecBackend *b, const MsExecOptions *o, guint world, GSocket *listener, Job *job,
           GError **error)
{
    Coord c = {.b = b, .o = *o, .world = world};
    c.deadline = g_get_monotonic_time() + (gint64)(o->timeout_s * G_USEC_PER_SEC);
    c.wires = g_new0(MsWire *, world);
    c.hosts = g_new0(char *, world + 1);
    c.s = job->s;
    GError *local = NULL;
    gboolean ok = coord_gather(&c, listener, &local) &&
                  (job->s ? coord_schedule(&c, job, &local) : coord_bench(&c, job, &local));
    if (!ok) {
        coord_fail_all(&c, local);
        g_propagate_error(error, local);
    }
    coord_clear(&c);
    return ok;
}

/* The command line of a local worker. */
static GStrv
worker_argv(const MsExecBackend *b, const MsExecOptions *o)
{
    g_autofree char *self =
        o->worker_command ? g_strdup(o->worker_command) : g_file_read_link("/proc/self/exe", NULL);
    char timeout[G_ASCII_DTOSTR_BUF_SIZE + 1];
    g_ascii_formatd(timeout, sizeof timeout - 1, "%.6f", o->timeout_s);
    strcat(timeout, "s");
    GStrvBuilder *v = g_strv_builder_new();
    g_strv_builder_add_many(v, self ? self : "moesim", "exec", "--worker", "--backend", b->name,
                            "--timeout", timeout, NULL);
    GStrv argv = g_strv_builder_end(v);
    g_strv_builder_unref(v);
    return argv;
}

static gboolean
run_local(const MsExecBackend *b, const MsExecOptions *o, guint world, Job *job, GError **error)
{
    guint16 port = 0;
    g_autoptr(GSocket) listener = ms_wire_listen("127.0.0.1", 0, &port, error);
    if (listener == NULL) {
        return FALSE;
    }
    g_auto(GStrv) argv = worker_argv(b, o);
    g_autoptr(MsLaunchGroup) group =
        ms_launch_group_spawn((const char *const *)argv, world, port, error);
    if (group == NULL) {
        return FALSE;
    }
    if (!coordinate(b, o, world, listener, job, error)) {
        return FALSE;
    }
    gint64 deadline = g_get_monotonic_time() + (gint64)(o->timeout_s * G_USEC_PER_SEC);
    return ms_launch_group_wait(group, deadline, error);
}

typedef struct {
    const MsExecBackend *b;
    const MsExecOptions *o;
    guint world;
    GSocket *listener;
    Job *job;
    GError *error;
} CoordThread;

static gpointer
coord_thread(gpointer data)
{
    CoordThread *t = data;
    return GINT_TO_POINTER(coordinate(t->b, t->o, t->world, t->listener, t->job, &t->error));
}

/* In a Slurm or torchrun job: rank 0 coordinates in a thread and works; every rank works. */
static gboolean
run_job(const MsExecBackend *b, const MsExecOptions *o, const MsLaunchEnv *env, Job *job,
        GError **error)
{
    if (env->rank != 0) {
        g_autoptr(MsRecords) own = ms_remote_worker_main(b, o, error);
        job->records = g_steal_pointer(&own);
        return job->records != NULL || job->s == NULL;
    }
    guint16 port = 0;
    g_autoptr(GSocket) listener = ms_wire_listen(NULL, env->master_port, &port, error);
    if (listener == NULL) {
        return FALSE;
    }
    CoordThread t = {b, o, env->world, listener, job, NULL};
    GThread *thread = g_thread_new("coordinator", coord_thread, &t);
    g_autoptr(GError) worker_error = NULL;
    g_autoptr(MsRecords) own = ms_remote_worker_main(b, o, &worker_error);
    gboolean ok = GPOINTER_TO_INT(g_thread_join(thread));
    if (!ok) {
        g_propagate_error(error, t.error);
        return FALSE;
    }
    if (own == NULL && worker_error) {
        g_propagate_error(error, g_steal_pointer(&worker_error));
        return FALSE;
    }
    return TRUE;
}

static gboolean
run(const MsExecBackend *b, const MsExecOptions *opts, guint world, Job *job, GError **error)
{
    MsExecOptions o;
    MsLaunchEnv env;
    if (!ms_exec_options_resolve(opts, &o, error) || !ms_launch_env_read(NULL, &env, error)) {
        return FALSE;
    }
    gboolean ok = FALSE;
    if (env.worker) {
        g_set_error(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_JOB,
                    "this process is a worker (MOESIM_WORKER=1): it cannot start a run");
    } else if (env.mode != MS_LAUNCH_LOCAL && env.world != world) {
        g_set_error(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_JOB,
                    "the %s job has %u ranks but the run needs %u (one process per rank)",
                    ms_launch_mode_name(env.mode), env.world, world);
    } else {
        guint n_comms = job->s ? MAX(1, remote_n_comm_streams(job->s)) : 1;
        gboolean coordinator = env.mode == MS_LAUNCH_LOCAL || env.rank == 0;
        job->session = coordinator && b->session
                           ? b->session(&o, n_comms, env.mode == MS_LAUNCH_LOCAL ? world : 0, error)
                           : g_bytes_new(NULL, 0);
        ok = job->session != NULL &&
             (env.mode == MS_LAUNCH_LOCAL ? run_local(b, &o, world, job, error)
                                          : run_job(b, &o, &env, job, error));
    }
    ms_launch_env_clear(&env);
    return ok;
}

MsRecords *
ms_remote_execute(const MsExecBackend *backend, const MsSchedule *s, const MsExecOptions *opts,
                  GError **error)
{
    g_return_val_if_fail(backend && backend->per_rank, NULL);
    if (!ms_schedule_validate(s, error)) {
        return NULL;
    }
    Job job = {.kind = "schedule", .s = s};
    job.payload = remote_schedule_bytes(s);
    gboolean ok = run(backend, opts, ms_schedule_n_ranks(s), &job, error);
    g_bytes_unref(job.payload);
    if (job.session) {
        g_bytes_unref(job.session);
    }
    if (!ok) {
        g_clear_pointer(&job.records, ms_records_free);
    }
    return job.records;
}

GBytes *
ms_remote_bench(const MsExecBackend *backend, guint world, MsRemoteSpecFunc make_spec,
                gpointer data, const MsExecOptions *opts, GError **error)
{
    g_return_val_if_fail(backend && backend->per_rank && make_spec, NULL);
    if (backend->bench == NULL) {
        g_set_error(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_JOB,
                    "backend '%s' has no microbenchmarks", backend->name);
        return NULL;
    }
    if (world == 0 || world > MS_LAUNCH_MAX_WORLD) {
        g_set_error(error, MS_REMOTE_ERROR, MS_REMOTE_ERROR_JOB,
                    "a benchmark needs 1 to %u ranks, not %u", MS_LAUNCH_MAX_WORLD, world);
        return NULL;
    }
    Job job = {.kind = "bench", .make_spec = make_spec, .data = data};
    gboolean ok = run(backend, opts, world, &job, error);
    if (job.payload) {
        g_bytes_unref(job.payload);
    }
    if (job.session) {
        g_bytes_unref(job.session);
    }
    g_clear_pointer(&job.records, ms_records_free);
    if (!ok) {
        g_clear_pointer(&job.result, g_bytes_unref);
        return NULL;
    }
    return job.result ? job.result : g_bytes_new(NULL, 0);
}
