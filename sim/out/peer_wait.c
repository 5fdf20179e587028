/* peer_wait: when comm ops were ready and how long they waited for their collective's last
 * participant. */
#include "peer_wait.h"

#include "sim/out/spans.h"

MsTime
ms_peer_wait_ready(const MsSchedule *s, const MsRecords *r, guint32 op)
{
    guint n;
    const guint32 *deps = ms_schedule_op_deps(s, op, &n);
    MsTime t = 0;
    for (guint k = 0; k < n; k++) {
        MsTime z = ms_records_end(r, deps[k]);
        if (ms_records_start(r, deps[k]) == MS_TIME_NEVER) {
            return MS_TIME_NEVER;
        }
        t = MAX(t, z);
    }
    return t;
}

/* The first of the sorted, disjoint spans that ends after t. */
static guint
first_after(const GArray *spans, MsTime t)
{
    guint lo = 0, hi = spans->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        if (g_array_index(spans, MsSpan, mid).b <= t) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* Appends to waits the intervals in which rank's comm ops were ready (their dependencies done)
 * and their stream idle there, yet not launched. busy: scratch, one span array per stream. */
static void
idle_ready(const MsSchedule *s, const MsRecords *r, guint rank, GArray **busy, GArray *waits)
{
    guint n, n_streams = ms_schedule_n_streams(s);
    const guint32 *ops = ms_schedule_rank_ops(s, rank, &n);
    for (guint st = 0; st < n_streams; st++) {
        g_array_set_size(busy[st], 0);
    }
    for (guint k = 0; k < n; k++) {
        MsOpInfo i;
        ms_schedule_op(s, ops[k], &i);
        MsSpan sp = {ms_records_start(r, ops[k]), ms_records_end(r, ops[k])};
        if (sp.a != MS_TIME_NEVER) {
            g_array_append_val(busy[i.stream], sp);
        }
    }
    for (guint st = 0; st < n_streams; st++) {
        ms_spans_merge(busy[st]);
    }
    for (guint k = 0; k < n; k++) {
        MsOpInfo i;
        ms_schedule_op(s, ops[k], &i);
        MsTime start = ms_records_start(r, ops[k]);
        if (i.kind != MS_OP_COMM || start == MS_TIME_NEVER) {
            continue;
        }
        MsTime t = ms_peer_wait_ready(s, r, ops[k]);
        if (t == MS_TIME_NEVER) {
            continue;
        }
        /* [t, start) less the stream's busy spans, earliest piece first. */
        const GArray *b = busy[i.stream];
        for (guint j = first_after(b, t); j < b->len && t < start; j++) {
            const MsSpan *sp = &g_array_index(b, MsSpan, j);
            MsWaitSpan w = {t, MIN(sp->a, start), ops[k]};
            if (w.b > w.a) {
                g_array_append_val(waits, w);
            }
            t = MAX(t, sp->b);
        }
        if (t < start) {
            MsWaitSpan w = {t, start, ops[k]};
            g_array_append_val(waits, w);
        }
    }
}

GArray *
ms_peer_wait_spans(const MsSchedule *s, const MsRecords *r)
{
    guint n_ranks = ms_schedule_n_ranks(s), n_ops = ms_schedule_n_ops(s);
    GArray *waits = g_array_new(FALSE, FALSE, sizeof(MsWaitSpan));
    guint n_streams = ms_schedule_n_streams(s);
    g_autofree GArray **busy = g_new(GArray *, MAX(n_streams, 1));
    for (guint st = 0; st < n_streams; st++) {
        busy[st] = g_array_new(FALSE, FALSE, sizeof(MsSpan));
    }
    for (guint rank = 0; rank < n_ranks; rank++) {
        idle_ready(s, r, rank, busy, waits);
    }
    for (guint st = 0; st < n_streams; st++) {
        g_array_unref(busy[st]);
    }
    g_autofree MsTime *arrival = g_new(MsTime, MAX(n_ops, 1));
    for (guint32 op = 0; op < n_ops; op++) {
        arrival[op] = ms_records_start(r, op);
    }
    for (guint k = waits->len; k-- > 0;) { /* an op's earliest piece is its first */
        const MsWaitSpan *w = &g_array_index(waits, MsWaitSpan, k);
        arrival[w->op] = w->a;
    }
    guint n_colls = ms_schedule_n_colls(s);
    g_autofree MsTime *last = g_new(MsTime, MAX(n_colls, 1));
    for (guint32 c = 0; c < n_colls; c++) {
        MsCollInfo ci;
        ms_schedule_coll(s, c, &ci);
        last[c] = 0;
        for (guint p = 0; p < ci.n_ranks && last[c] != MS_TIME_NEVER; p++) {
            MsTime t = arrival[ci.ops[p]];
            last[c] = t == MS_TIME_NEVER ? t : MAX(last[c], t);
        }
    }
    guint kept = 0;
    for (guint k = 0; k < waits->len; k++) {
        MsWaitSpan w = g_array_index(waits, MsWaitSpan, k);
        MsOpInfo i;
        ms_schedule_op(s, w.op, &i);
        w.b = last[i.coll] == MS_TIME_NEVER ? w.a : MIN(w.b, last[i.coll]);
        if (w.b > w.a) {
            g_array_index(waits, MsWaitSpan, kept++) = w;
        }
    }
    g_array_set_size(waits, kept);
    return waits;
}

MsTime *
ms_peer_wait_per_op(const MsSchedule *s, const GArray *waits)
{
    MsTime *wait = g_new0(MsTime, MAX(ms_schedule_n_ops(s), 1));
    for (guint k = 0; k < waits->len; k++) {
        const MsWaitSpan *w = &g_array_index(waits, MsWaitSpan, k);
        wait[w->op] += w->b - w->a;
    }
    return wait;
}
