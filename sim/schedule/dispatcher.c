/* dispatcher: event-driven launch decisions (see dispatcher.h for the rules). Work per event is
 * proportional to what the event touches: an op's successors, its stream, and the head of the
 * launch order of the communication streams. */
#include "dispatcher.h"

#include <string.h>

#include "sim/base/graph.h"

G_DEFINE_QUARK(ms_dispatcher_error_quark, ms_dispatcher_error)

enum { WAITING, READY, LAUNCHED, DONE };

/* A launchable collective's place on its stream: by priority then readiness (seq), or by the
 * poll round in which it became launchable, then priority (the plan's program order: what became
 * launchable between the same two polls has no readiness order of its own), then readiness. */
typedef struct {
    gint64 first, second;
    guint64 seq;
    guint32 coll;
} Key;

struct _MsDispatcher {
    const MsSchedule *s;
    MsDispatchRules rules;
    guint n_ops, n_ranks, n_streams, n_colls;
    guint8 *state;
    guint32 *deps_left;
    guint64 *ready_seq, *launch_seq;
    guint64 seq, launches;
    gint64 round;   /* polls so far */
    MsGraph *graph; /* successors of every op */
    /* compute streams: ops in (priority, id) order, and the next to launch */
    guint32 **queue;
    guint *queue_len, *queue_next;
    guint8 *busy; /* rank * n_streams + stream */
    /* collectives */
    guint *coll_ready;
    guint64 *coll_seq;
    GArray **heap;     /* per stream: launchable collectives, sorted by Key */
    guint32 *reserved; /* per rank: epoch at which a waiting collective claimed it */
    guint32 epoch;
    /* per rank, for the all-to-all gate */
    guint *a2a_waiting, *a2a_running;
    guint8 *imminent;
    /* dirty work */
    GArray *dirty_compute; /* rank * n_streams + stream */
    guint8 *compute_marked;
    gboolean comm_dirty;
    guint running, done;
};

static gboolean
key_less(const Key *a, const Key *b)
{
    if (a->first != b->first) {
        return a->first < b->first;
    }
    if (a->second != b->second) {
        return a->second < b->second;
    }
    if (a->seq != b->seq) {
        return a->seq < b->seq;
    }
    return a->coll < b->coll;
}

/* Launchable collectives of a stream are kept sorted by key (few at a time). */
static void
sorted_insert(GArray *a, Key k)
{
    guint lo = 0, hi = a->len;
    while (lo < hi) {
        guint mid = (lo + hi) / 2;
        if (key_less(&g_array_index(a, Key, mid), &k)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    g_array_insert_val(a, lo, k);
}

static MsOpInfo
info(const MsDispatcher *d, guint32 op)
{
    MsOpInfo i;
    ms_schedule_op(d->s, op, &i);
    return i;
}

static void
mark_compute(MsDispatcher *d, guint rank, guint stream)
{
    guint slot = rank * d->n_streams + stream;
    if (!d->compute_marked[slot]) {
        d->compute_marked[slot] = 1;
        g_array_append_val(d->dirty_compute, slot);
    }
}

static gboolean
is_a2a(const MsDispatcher *d, guint32 coll)
{
    MsCollInfo c;
    ms_schedule_coll(d->s, coll, &c);
    return c.kind == MS_COLL_KIND_ALLTOALL;
}

static void
make_ready(MsDispatcher *d, guint32 op)
{
    d->state[op] = READY;
    d->ready_seq[op] = ++d->seq;
    MsOpInfo i = info(d, op);
    if (i.kind == MS_OP_COMPUTE) {
        mark_compute(d, i.rank, i.stream);
        return;
    }
    if (is_a2a(d, i.coll)) {
        d->a2a_waiting[i.rank]++;
    }
    MsCollInfo c;
    ms_schedule_coll(d->s, i.coll, &c);
    if (++d->coll_ready[i.coll] == c.n_ranks) {
        d->coll_seq[i.coll] = d->seq;
        gboolean by_priority = d->rules.order == MS_DISPATCH_ORDER_PRIORITY;
        Key k = {by_priority ? i.priority : d->round, by_priority ? 0 : i.priority, d->seq, i.coll};
        sorted_insert(d->heap[i.stream], k);
    }
    d->comm_dirty = TRUE;
}

static const guint32 *
op_deps(gconstpointer s, guint32 op, guint *n)
{
    return ms_schedule_op_deps(s, op, n);
}

static int
cmp_priority(gconstpointer a, gconstpointer b, gpointer data)
{
    const MsSchedule *s = data;
    MsOpInfo x, y;
    ms_schedule_op(s, *(const guint32 *)a, &x);
    ms_schedule_op(s, *(const guint32 *)b, &y);
    if (x.priority != y.priority) {
        return x.priority < y.priority ? -1 : 1;
    }
    return x.id < y.id ? -1 : x.id > y.id;
}

/* The rules are data: only values the dispatcher does not implement are refused. */
static gboolean
known_rules(const MsDispatchRules *r, GError **error)
{
    if (r->order >= MS_DISPATCH_ORDER_N) {
        g_autofree char *list = g_strjoinv(", ", (char **)ms_dispatch_order_names());
        g_set_error(error, MS_DISPATCHER_ERROR, MS_DISPATCHER_ERROR_RULES,
                    "the schedule's dispatch order %u is unknown (known: %s)", (guint)r->order,
                    list);
        return FALSE;
    }
    if (r->allreduce_gate >= MS_ALLREDUCE_GATE_N) {
        g_autofree char *list = g_strjoinv(", ", (char **)ms_allreduce_gate_names());
        g_set_error(error, MS_DISPATCHER_ERROR, MS_DISPATCHER_ERROR_RULES,
                    "the schedule's allreduce gate %u is unknown (known: %s)",
                    (guint)r->allreduce_gate, list);
        return FALSE;
    }
    return TRUE;
}

MsDispatcher *
ms_dispatcher_new(const MsSchedule *s, GError **error)
{
    MsDispatchRules r = ms_schedule_rules(s);
    if (!known_rules(&r, error)) {
        return NULL;
    }
    MsDispatcher *d = g_new0(MsDispatcher, 1);
    d->s = s;
    d->rules = r;
    d->n_ops = ms_schedule_n_ops(s);
    d->n_ranks = ms_schedule_n_ranks(s);
    d->n_streams = ms_schedule_n_streams(s);
    d->n_colls = ms_schedule_n_colls(s);
    guint n = d->n_ops, slots = d->n_ranks * d->n_streams;
    d->state = g_new0(guint8, MAX(n, 1));
    d->deps_left = g_new0(guint32, MAX(n, 1));
    d->ready_seq = g_new0(guint64, MAX(n, 1));
    d->launch_seq = g_new0(guint64, MAX(n, 1));
    d->graph = ms_graph_new(n, op_deps, s);
    for (guint32 op = 0; op < n; op++) {
        guint k = 0;
        ms_schedule_op_deps(s, op, &k);
        d->deps_left[op] = k;
    }
    d->queue = g_new0(guint32 *, slots);
    d->queue_len = g_new0(guint, slots);
    d->queue_next = g_new0(guint, slots);
    d->busy = g_new0(guint8, slots);
    d->compute_marked = g_new0(guint8, slots);
    for (guint rank = 0; rank < d->n_ranks; rank++) {
        guint n_rank;
        const guint32 *ops = ms_schedule_rank_ops(s, rank, &n_rank);
        for (guint st = 0; st < d->n_streams; st++) {
            if (ms_schedule_stream_kind(s, st) != MS_STREAM_COMPUTE) {
                continue;
            }
            GArray *q = g_array_new(FALSE, FALSE, sizeof(guint32));
            for (guint k = 0; k < n_rank; k++) {
                if (info(d, ops[k]).stream == st) {
                    g_array_append_val(q, ops[k]);
                }
            }
            g_array_sort_with_data(q, cmp_priority, (gpointer)s);
            guint slot = rank * d->n_streams + st;
            d->queue_len[slot] = q->len;
            d->queue[slot] = (guint32 *)g_array_free(q, FALSE);
        }
    }
    d->coll_ready = g_new0(guint, MAX(d->n_colls, 1));
    d->coll_seq = g_new0(guint64, MAX(d->n_colls, 1));
    d->heap = g_new0(GArray *, d->n_streams);
    for (guint st = 0; st < d->n_streams; st++) {
        d->heap[st] = g_array_new(FALSE, FALSE, sizeof(Key));
    }
    d->reserved = g_new0(guint32, d->n_ranks);
    d->a2a_waiting = g_new0(guint, d->n_ranks);
    d->a2a_running = g_new0(guint, d->n_ranks);
    d->imminent = g_new0(guint8, d->n_ranks);
    d->dirty_compute = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint32 op = 0; op < n; op++) {
        if (d->deps_left[op] == 0) {
            make_ready(d, op);
        }
    }
    d->comm_dirty = TRUE;
    return d;
}

void
ms_dispatcher_free(MsDispatcher *d)
{
    if (d == NULL) {
        return;
    }
    guint slots = d->n_ranks * d->n_streams;
    for (guint i = 0; i < slots; i++) {
        g_free(d->queue[i]);
    }
    for (guint st = 0; st < d->n_streams; st++) {
        g_array_unref(d->heap[st]);
    }
    g_free(d->queue);
    g_free(d->queue_len);
    g_free(d->queue_next);
    g_free(d->busy);
    g_free(d->compute_marked);
    g_free(d->state);
    g_free(d->deps_left);
    g_free(d->ready_seq);
    g_free(d->launch_seq);
    ms_graph_free(d->graph);
    g_free(d->coll_ready);
    g_free(d->coll_seq);
    g_free(d->heap);
    g_free(d->reserved);
    g_free(d->a2a_waiting);
    g_free(d->a2a_running);
    g_free(d->imminent);
    g_array_unref(d->dirty_compute);
    g_free(d);
}

static void
launch_op(MsDispatcher *d, guint32 op, const MsOpInfo *i, GArray *launch)
{
    d->state[op] = LAUNCHED;
    d->launch_seq[op] = ++d->launches;
    d->busy[i->rank * d->n_streams + i->stream] = 1;
    d->running++;
    g_array_append_val(launch, op);
}

/* Lina's gate (MS_ALLREDUCE_GATE_A2A): an allreduce may not start where an all-to-all waits,
 * runs or is imminent. */
static gboolean
gated(const MsDispatcher *d, const MsCollInfo *c)
{
    if (d->rules.allreduce_gate != MS_ALLREDUCE_GATE_A2A || c->kind != MS_COLL_KIND_ALLREDUCE) {
        return FALSE;
    }
    for (guint p = 0; p < c->n_ranks; p++) {
        guint r = c->ranks[p];
        if (d->a2a_waiting[r] || d->a2a_running[r] || d->imminent[r]) {
            return TRUE;
        }
    }
    return FALSE;
}

/* Whether every participant's stream is free and not claimed this round by a collective earlier
 * in the order. */
static gboolean
ranks_free(const MsDispatcher *d, const MsCollInfo *c, guint stream)
{
    for (guint p = 0; p < c->n_ranks; p++) {
        guint r = c->ranks[p];
        if (d->busy[r * d->n_streams + stream] || d->reserved[r] == d->epoch) {
            return FALSE;
        }
    }
    return TRUE;
}

/* Launches, in the stream's order, every launchable collective whose ranks are free. One that must
 * wait for a busy rank claims all its ranks, so nothing later in the order overtakes it there
 * (every rank then sees the same order of collectives on the stream and none can deadlock);
 * collectives on other ranks go ahead. A gated collective claims nothing: it waits by choice. */
static gboolean
poll_comm(MsDispatcher *d, GArray *launch)
{
    gboolean any = FALSE;
    for (guint st = 0; st < d->n_streams; st++) {
        GArray *ready = d->heap[st];
        if (ready->len == 0) {
            continue;
        }
        if (++d->epoch == 0) {
            memset(d->reserved, 0, d->n_ranks * sizeof(guint32));
            d->epoch = 1;
        }
        guint keep = 0;
        for (guint k = 0; k < ready->len; k++) {
            Key key = g_array_index(ready, Key, k);
            MsCollInfo c;
            ms_schedule_coll(d->s, key.coll, &c);
            if (gated(d, &c)) {
                g_array_index(ready, Key, keep++) = key;
                continue;
            }
            if (!ranks_free(d, &c, st)) {
                for (guint p = 0; p < c.n_ranks; p++) {
                    d->reserved[c.ranks[p]] = d->epoch;
                }
                g_array_index(ready, Key, keep++) = key;
                continue;
            }
            gboolean a2a = c.kind == MS_COLL_KIND_ALLTOALL;
            for (guint p = 0; p < c.n_ranks; p++) {
                MsOpInfo i = info(d, c.ops[p]);
                if (a2a) {
                    d->a2a_waiting[i.rank]--;
                    d->a2a_running[i.rank]++;
                    d->imminent[i.rank] = 0;
                }
                launch_op(d, c.ops[p], &i, launch);
            }
            any = TRUE;
        }
        g_array_set_size(ready, keep);
    }
    return any;
}

static gboolean
poll_compute(MsDispatcher *d, GArray *launch)
{
    gboolean any = FALSE;
    for (guint k = 0; k < d->dirty_compute->len; k++) {
        guint slot = g_array_index(d->dirty_compute, guint, k);
        d->compute_marked[slot] = 0;
        if (d->busy[slot] || d->queue_next[slot] >= d->queue_len[slot]) {
            continue;
        }
        guint32 op = d->queue[slot][d->queue_next[slot]];
        if (d->state[op] != READY) {
            continue;
        }
        d->queue_next[slot]++;
        MsOpInfo i = info(d, op);
        if (i.flags & MS_OP_FLAG_A2A_IMMINENT) {
            d->imminent[i.rank] = 1;
            d->comm_dirty = TRUE;
        }
        launch_op(d, op, &i, launch);
        any = TRUE;
    }
    g_array_set_size(d->dirty_compute, 0);
    return any;
}

void
ms_dispatcher_poll(MsDispatcher *d, GArray *launch)
{
    gboolean progress = TRUE;
    d->round++;
    while (progress) {
        progress = poll_compute(d, launch);
        if (d->comm_dirty) {
            d->comm_dirty = FALSE;
            progress |= poll_comm(d, launch);
        }
    }
}

void
ms_dispatcher_finished(MsDispatcher *d, guint32 op)
{
    g_return_if_fail(op < d->n_ops && d->state[op] == LAUNCHED);
    d->state[op] = DONE;
    d->running--;
    d->done++;
    MsOpInfo i = info(d, op);
    d->busy[i.rank * d->n_streams + i.stream] = 0;
    if (i.kind == MS_OP_COMPUTE) {
        mark_compute(d, i.rank, i.stream);
    } else {
        if (is_a2a(d, i.coll)) {
            d->a2a_running[i.rank]--;
        }
        d->comm_dirty = TRUE;
    }
    guint n_succ = 0;
    const guint32 *succ = ms_graph_successors(d->graph, op, &n_succ);
    for (guint e = 0; e < n_succ; e++) {
        guint32 s = succ[e];
        if (--d->deps_left[s] == 0) {
            make_ready(d, s);
        }
    }
}

gboolean
ms_dispatcher_done(const MsDispatcher *d)
{
    return d->done == d->n_ops;
}

guint
ms_dispatcher_n_running(const MsDispatcher *d)
{
    return d->running;
}

gboolean
ms_dispatcher_check_progress(const MsDispatcher *d, GError **error)
{
    if (d->running || d->done == d->n_ops) {
        return TRUE;
    }
    for (guint32 op = 0; op < d->n_ops; op++) {
        if (d->state[op] == DONE) {
            continue;
        }
        MsOpInfo i = info(d, op);
        const char *why = d->state[op] == WAITING ? "its dependencies never finish"
                          : i.kind == MS_OP_COMM  ? "its collective never becomes launchable"
                                                  : "an op before it on its stream never runs";
        g_set_error(error, MS_DISPATCHER_ERROR, MS_DISPATCHER_ERROR_STUCK,
                    "schedule cannot progress: op %u (%s) on rank %u cannot start: %s", op, i.label,
                    i.rank, why);
        return FALSE;
    }
    return TRUE;
}

guint64
ms_dispatcher_ready_seq(const MsDispatcher *d, guint32 op)
{
    g_return_val_if_fail(op < d->n_ops, 0);
    return d->ready_seq[op];
}

guint64
ms_dispatcher_launch_seq(const MsDispatcher *d, guint32 op)
{
    g_return_val_if_fail(op < d->n_ops, 0);
    return d->launch_seq[op];
}
