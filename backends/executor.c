/* executor: the generic driver loop shared by every backend, the common option checks, and the
 * one call that finds a backend in the registry and runs a schedule on it. Times are whatever
 * clock the backend reports, in picoseconds; the loop only orders events and enforces the
 * wall-clock limit. */
#include "executor.h"

#include <math.h>

#include "backends/executor_remote.h"
#include "backends/registry.h"
#include "sim/schedule/dispatcher.h"

G_DEFINE_QUARK(ms_executor_error_quark, ms_executor_error)

/* The loop wakes at least this often to check the deadline even when a backend waits longer. */
#define WAIT_SLICE_US (100 * 1000)

enum { IDLE, LAUNCHED, FINISHED };

gboolean
ms_exec_options_resolve(const MsExecOptions *in, MsExecOptions *out, GError **error)
{
    static const MsExecOptions zero = {0};
    *out = in ? *in : zero;
    if (out->timeout_s == 0) {
        out->timeout_s = MS_EXEC_DEFAULT_TIMEOUT_S;
    }
    if (!isfinite(out->timeout_s) || out->timeout_s < 0 || out->timeout_s > MS_EXEC_MAX_TIMEOUT_S) {
        g_set_error(error, MS_EXECUTOR_ERROR, MS_EXECUTOR_ERROR_OPTIONS,
                    "timeout: %g s is not in (0, %g] s", out->timeout_s, MS_EXEC_MAX_TIMEOUT_S);
        return FALSE;
    }
    return TRUE;
}

typedef struct {
    const MsExecBackend *b;
    const MsSchedule *s;
    gpointer state;
    MsDispatcher *d;
    MsRecords *rec;
    guint8 *op_state;
    GArray *launch, *done;
} Run;

static gboolean
launch_ready(Run *r, GError **error)
{
    g_array_set_size(r->launch, 0);
    ms_dispatcher_poll(r->d, r->launch);
    for (guint k = 0; k < r->launch->len; k++) {
        guint32 op = g_array_index(r->launch, guint32, k);
        r->op_state[op] = LAUNCHED;
        if (!r->b->launch(r->state, op, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
protocol_error(const Run *r, guint32 op, const char *what, GError **error)
{
    MsOpInfo i;
    ms_schedule_op(r->s, op, &i);
    g_set_error(error, MS_EXECUTOR_ERROR, MS_EXECUTOR_ERROR_PROTOCOL,
                "backend '%s' reported op %u (%s) on rank %u %s", r->b->name, op, i.label, i.rank,
                what);
    return FALSE;
}

static gboolean
take_done(Run *r, GError **error)
{
    guint n_ops = ms_schedule_n_ops(r->s);
    for (guint k = 0; k < r->done->len; k++) {
        const MsExecDone *x = &g_array_index(r->done, MsExecDone, k);
        if (x->op >= n_ops) {
            g_set_error(error, MS_EXECUTOR_ERROR, MS_EXECUTOR_ERROR_PROTOCOL,
                        "backend '%s' reported op %u, but the schedule has %u ops", r->b->name,
                        x->op, n_ops);
            return FALSE;
        }
        if (r->op_state[x->op] != LAUNCHED) {
            return protocol_error(r, x->op,
                                  r->op_state[x->op] == FINISHED ? "finished a second time"
                                                                 : "finished, but it was never "
                                                                   "launched",
                                  error);
        }
        if (x->end < x->start || x->end == MS_TIME_NEVER) {
            return protocol_error(r, x->op, "with an end before its start", error);
        }
        r->op_state[x->op] = FINISHED;
        ms_records_set(r->rec, x->op, x->start, x->end);
        ms_dispatcher_finished(r->d, x->op);
    }
    return TRUE;
}

static void
timeout_error(const Run *r, double timeout_s, GError **error)
{
    guint n_ops = ms_schedule_n_ops(r->s), running = 0;
    guint32 first = 0;
    for (guint32 op = n_ops; op-- > 0;) {
        if (r->op_state[op] == LAUNCHED) {
            running++;
            first = op;
        }
    }
    MsOpInfo i;
    ms_schedule_op(r->s, first, &i);
    g_set_error(error, MS_EXECUTOR_ERROR, MS_EXECUTOR_ERROR_TIMEOUT,
                "backend '%s': execution did not finish within the %g s timeout: %u op%s still "
                "running, the first op %u (%s) on rank %u, stream %s",
                r->b->name, timeout_s, running, running == 1 ? "" : "s", first, i.label, i.rank,
                ms_schedule_stream_name(r->s, i.stream));
}

static gboolean
drive(Run *r, const MsExecOptions *o, GError **error)
{
    gint64 deadline = g_get_monotonic_time() + (gint64)(o->timeout_s * 1e6);
    for (;;) {
        if (!launch_ready(r, error)) {
            return FALSE;
        }
        if (ms_dispatcher_done(r->d)) {
            return TRUE;
        }
        if (ms_dispatcher_n_running(r->d) == 0) {
            return ms_dispatcher_check_progress(r->d, error);
        }
        gint64 left = deadline - g_get_monotonic_time();
        if (left <= 0) {
            timeout_error(r, o->timeout_s, error);
            return FALSE;
        }
        g_array_set_size(r->done, 0);
        if (!r->b->wait(r->state, MIN(left, WAIT_SLICE_US), r->done, error) ||
            !take_done(r, error)) {
            return FALSE;
        }
    }
}

MsRecords *
ms_executor_drive(const MsExecBackend *backend, gpointer state, const MsSchedule *s,
                  const MsExecOptions *opts, GError **error)
{
    g_return_val_if_fail(backend != NULL && s != NULL, NULL);
    MsExecOptions o;
    if (!ms_exec_options_resolve(opts, &o, error)) {
        return NULL;
    }
    gint64 t0 = g_get_monotonic_time();
    g_autoptr(MsDispatcher) d = ms_dispatcher_new(s, error);
    if (d == NULL) {
        return NULL;
    }
    g_autoptr(MsRecords) rec = ms_records_new(ms_schedule_n_ops(s), backend->name);
    g_autofree guint8 *op_state = g_new0(guint8, MAX(ms_schedule_n_ops(s), 1));
    Run r = {
        .b = backend,
        .s = s,
        .state = state,
        .d = d,
        .rec = rec,
        .op_state = op_state,
        .launch = g_array_new(FALSE, FALSE, sizeof(guint32)),
        .done = g_array_new(FALSE, FALSE, sizeof(MsExecDone)),
    };
    gboolean ok = drive(&r, &o, error) && backend->finish(state, rec, error);
    g_array_unref(r.launch);
    g_array_unref(r.done);
    if (!ok) {
        return NULL;
    }
    ms_records_normalise(rec);
    ms_records_set_stat(rec, "wall_s", (g_get_monotonic_time() - t0) * 1e-6);
    return g_steal_pointer(&rec);
}

MsRecords *
ms_executor_run(const MsExecBackend *backend, const MsSchedule *s, const MsExecOptions *opts,
                GError **error)
{
    g_return_val_if_fail(backend != NULL && s != NULL, NULL);
    MsExecOptions o;
    if (!ms_exec_options_resolve(opts, &o, error) || !ms_schedule_validate(s, error)) {
        return NULL;
    }
    /* Unknown dispatcher rules are refused before the backend starts anything. */
    g_autoptr(MsDispatcher) probe = ms_dispatcher_new(s, error);
    if (probe == NULL) {
        return NULL;
    }
    gpointer state = backend->open(s, &o, NULL, error);
    if (state == NULL) {
        return NULL;
    }
    MsRecords *rec = ms_executor_drive(backend, state, s, &o, error);
    backend->close(state);
    return rec;
}

MsRecords *
ms_backend_execute(const char *name, const MsSchedule *s, const MsTopology *topology,
                   const MsExecOptions *opts, GError **error)
{
    const MsBackendInfo *info = ms_backend_find(name, error);
    const MsExecBackend *b = info ? ms_backend_hooks(info, error) : NULL;
    if (b == NULL) {
        return NULL;
    }
    MsExecOptions o = {0};
    if (opts) {
        o = *opts;
    }
    if (topology) {
        o.topology = topology;
    }
    return b->per_rank ? ms_remote_execute(b, s, &o, error) : ms_executor_run(b, s, &o, error);
}
