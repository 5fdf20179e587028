/* chrome_trace: Chrome trace events, each built and escaped by json-glib, streamed into the
 * traceEvents array (see chrome_trace.h). */
#include "chrome_trace.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/base/json_output.h"
#include "sim/base/output_file.h"
#include "sim/out/peer_wait.h"
#include "sim/out/result.h"

G_DEFINE_QUARK(ms_chrome_trace_error_quark, ms_chrome_trace_error)

struct _MsChromeTrace {
    MsOutputFile *f;
    JsonBuilder *b;
    JsonGenerator *gen;
    GString *buf;
    guint64 events;
    guint64 flow_id; /* the next flow's id: unique over the file */
    guint iterations;
    double offset_us; /* where the next iteration starts */
    guint named_ranks, named_streams;
    gboolean run_named;
    JsonNode *about; /* otherData: the first schedule's meta */
};

/* Flush the buffer to the file past this many bytes. */
#define FLUSH_BYTES (1u << 20)

MsChromeTrace *
ms_chrome_trace_open(const char *path, GError **error)
{
    g_autoptr(GError) local = NULL;
    MsOutputFile *f = ms_output_file_open(path, MS_OUTPUT_REPLACE, &local);
    if (f == NULL) {
        g_set_error_literal(error, MS_CHROME_TRACE_ERROR, MS_CHROME_TRACE_ERROR_IO, local->message);
        return NULL;
    }
    MsChromeTrace *t = g_new0(MsChromeTrace, 1);
    t->f = f;
    t->b = json_builder_new();
    t->gen = json_generator_new();
    /* The object format's array: its brackets are the only text not written by json-glib. */
    t->buf = g_string_new("{\"traceEvents\": [\n");
    return t;
}

static gboolean
flush(MsChromeTrace *t, GError **error)
{
    ms_output_file_write(t->f, t->buf->str, t->buf->len);
    g_string_truncate(t->buf, 0);
    g_autoptr(GError) local = NULL;
    if (!ms_output_file_flush(t->f, &local)) {
        g_set_error_literal(error, MS_CHROME_TRACE_ERROR, MS_CHROME_TRACE_ERROR_IO, local->message);
        return FALSE;
    }
    return TRUE;
}

/* Starts an event object with its phase, name, category, pid and tid (tid < 0: none). */
static void
begin_event(MsChromeTrace *t, const char *ph, const char *name, const char *cat, guint pid,
            gint tid)
{
    json_builder_reset(t->b);
    json_builder_begin_object(t->b);
    ms_json_member_string(t->b, "ph", ph);
    ms_json_member_string(t->b, "name", name);
    if (cat) {
        ms_json_member_string(t->b, "cat", cat);
    }
    ms_json_member_int(t->b, "pid", pid);
    if (tid >= 0) {
        ms_json_member_int(t->b, "tid", tid);
    }
}

/* Ends the event begun and appends it to the array. */
static void
end_event(MsChromeTrace *t)
{
    json_builder_end_object(t->b);
    g_autoptr(JsonNode) node = json_builder_get_root(t->b);
    json_generator_set_root(t->gen, node);
    if (t->events) {
        g_string_append(t->buf, ",\n");
    }
    json_generator_to_gstring(t->gen, t->buf);
    t->events++;
}

/* A metadata event: kind (process_name, thread_name, ..._sort_index) of pid (and tid >= 0). */
static void
meta(MsChromeTrace *t, const char *kind, guint pid, gint tid, const char *name, gint64 index)
{
    begin_event(t, "M", kind, NULL, pid, tid);
    json_builder_set_member_name(t->b, "args");
    json_builder_begin_object(t->b);
    if (name) {
        /* Names come from schedule files: json-glib escapes them, but only valid UTF-8 makes
         * valid JSON. */
        g_autofree char *valid = g_utf8_make_valid(name, -1);
        ms_json_member_string(t->b, "name", valid);
    } else {
        ms_json_member_int(t->b, "sort_index", index);
    }
    json_builder_end_object(t->b);
    end_event(t);
}

/* Names the GPUs and streams of s not named yet, and the run's own process once. */
static void
name_tracks(MsChromeTrace *t, const MsSchedule *s)
{
    guint ranks = ms_schedule_n_ranks(s), streams = ms_schedule_n_streams(s);
    if (!t->run_named) {
        meta(t, "process_name", MS_CHROME_TRACE_RUN_PID, -1, "moesim: iterations, all GPUs", 0);
        meta(t, "process_sort_index", MS_CHROME_TRACE_RUN_PID, -1, NULL, -1);
        meta(t, "thread_name", MS_CHROME_TRACE_RUN_PID, 0, "iterations", 0);
        t->run_named = TRUE;
    }
    for (guint rank = 0; rank < ranks; rank++) {
        if (rank >= t->named_ranks) {
            g_autofree char *gpu = g_strdup_printf("GPU %u", rank);
            meta(t, "process_name", rank, -1, gpu, 0);
            meta(t, "process_sort_index", rank, -1, NULL, rank);
        }
        for (guint st = rank >= t->named_ranks ? 0 : t->named_streams; st < streams; st++) {
            meta(t, "thread_name", rank, st, ms_schedule_stream_name(s, st), 0);
            meta(t, "thread_sort_index", rank, st, NULL, st);
        }
    }
    t->named_ranks = MAX(t->named_ranks, ranks);
    t->named_streams = MAX(t->named_streams, streams);
}

static void
member_time(MsChromeTrace *t, const char *name, MsTime time)
{
    ms_json_member_double(t->b, name, t->offset_us + ms_time_to_us(time));
}

/* The bytes an all-to-all op sends to each other GPU ("GPU d": bytes, non-zero only). */
static void
sends(MsChromeTrace *t, const MsCollInfo *c, guint rank)
{
    guint p = 0;
    while (c->ranks[p] != rank) {
        p++;
    }
    json_builder_set_member_name(t->b, "to");
    json_builder_begin_object(t->b);
    for (guint d = 0; d < c->n_ranks; d++) {
        guint64 bytes = c->matrix[(gsize)p * c->n_ranks + d];
        if (d != p && bytes) {
            g_autofree char *gpu = g_strdup_printf("GPU %u", c->ranks[d]);
            ms_json_member_int(t->b, gpu, (gint64)bytes);
        }
    }
    json_builder_end_object(t->b);
}

/* One op as a slice; a comm op's args say how long it waited for its collective's last
 * participants (wait: ms_peer_wait_per_op). */
static void
op_event(MsChromeTrace *t, guint iteration, const MsSchedule *s, const MsRecords *r,
         const MsTime *wait, guint32 op)
{
    MsOpInfo i;
    ms_schedule_op(s, op, &i);
    MsTime a = ms_records_start(r, op), z = ms_records_end(r, op);
    g_autofree char *label = g_utf8_make_valid(i.label, -1);
    /* One category for every op and flow: Chrome DevTools binds a flow to the slice of its
     * category, pid, tid and ts, and a flow's ends must share their category. */
    begin_event(t, "X", label, "op", i.rank, i.stream);
    member_time(t, "ts", a);
    ms_json_member_double(t->b, "dur", ms_time_to_us(z - a));
    json_builder_set_member_name(t->b, "args");
    json_builder_begin_object(t->b);
    ms_json_member_int(t->b, "op", op);
    ms_json_member_int(t->b, "iteration", iteration);
    ms_json_member_string(t->b, "role", ms_role_name(i.role));
    ms_json_member_string(t->b, "kind", ms_op_kind_name(i.kind));
    ms_json_member_string(t->b, "phase", ms_phase_name(i.phase));
    ms_json_member_int(t->b, "layer", i.layer);
    ms_json_member_int(t->b, "chunk", i.chunk);
    ms_json_member_int(t->b, "bytes", (gint64)ms_result_op_bytes(s, &i));
    ms_json_member_double(t->b, "flops", i.flops);
    if (i.kind == MS_OP_COMM) {
        MsCollInfo c;
        ms_schedule_coll(s, i.coll, &c);
        g_autofree char *coll = g_utf8_make_valid(c.label, -1);
        ms_json_member_string(t->b, "collective", coll);
        ms_json_member_int(t->b, "gpus", c.n_ranks);
        ms_json_member_double(t->b, "wait_us", ms_time_to_us(wait[op]));
        if (c.kind == MS_COLL_KIND_ALLTOALL && c.n_ranks <= MS_CHROME_TRACE_MAX_TO) {
            sends(t, &c, i.rank);
        }
    }
    json_builder_end_object(t->b);
    end_event(t);
}

/* Each wait for peers as a slice of its own, category `wait`, on the stream that waits, just
 * before the op it waits to launch (it never overlaps that stream's ops). */
static void
wait_events(MsChromeTrace *t, const MsSchedule *s, const GArray *waits)
{
    for (guint k = 0; k < waits->len; k++) {
        const MsWaitSpan *w = &g_array_index(waits, MsWaitSpan, k);
        MsOpInfo i;
        ms_schedule_op(s, w->op, &i);
        begin_event(t, "X", "waiting for peers", "wait", i.rank, i.stream);
        member_time(t, "ts", w->a);
        ms_json_member_double(t->b, "dur", ms_time_to_us(w->b - w->a));
        json_builder_set_member_name(t->b, "args");
        json_builder_begin_object(t->b);
        ms_json_member_int(t->b, "op", w->op);
        g_autofree char *label = g_utf8_make_valid(i.label, -1);
        ms_json_member_string(t->b, "for", label);
        json_builder_end_object(t->b);
        end_event(t);
    }
}

/* A flow event bound to op's slice (it starts at the op's start: that is where viewers look for
 * the slice a flow event belongs to). */
static void
flow_event(MsChromeTrace *t, const char *ph, const char *name, guint64 id, const MsSchedule *s,
           const MsRecords *r, guint32 op)
{
    MsOpInfo i;
    ms_schedule_op(s, op, &i);
    begin_event(t, ph, name, "op", i.rank, i.stream);
    member_time(t, "ts", ms_records_start(r, op));
    ms_json_member_int(t->b, "id", (gint64)id);
    if (!strcmp(ph, "f")) {
        /* Bound to the slice that encloses it, not to the next one to start. */
        ms_json_member_string(t->b, "bp", "e");
    }
    end_event(t);
}

static gboolean
ran(const MsRecords *r, guint32 op)
{
    return ms_records_start(r, op) != MS_TIME_NEVER;
}

/* A flow from each dependency on another stream or GPU to the op that waits for it (a
 * dependency on the same stream is the stream's own order). */
static void
dependency_flows(MsChromeTrace *t, const MsSchedule *s, const MsRecords *r)
{
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        MsOpInfo i;
        ms_schedule_op(s, op, &i);
        for (guint k = 0; k < i.n_deps && ran(r, op); k++) {
            MsOpInfo d;
            ms_schedule_op(s, i.deps[k], &d);
            if ((d.rank == i.rank && d.stream == i.stream) || !ran(r, i.deps[k])) {
                continue;
            }
            guint64 id = t->flow_id++;
            flow_event(t, "s", "dependency", id, s, r, i.deps[k]);
            flow_event(t, "f", "dependency", id, s, r, op);
        }
    }
}

typedef struct {
    MsTime start;
    guint32 rank, op;
} Member;

static int
cmp_member(gconstpointer x, gconstpointer y)
{
    const Member *a = x, *b = y;
    if (a->start != b->start) {
        return a->start < b->start ? -1 : 1;
    }
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* One flow per collective through its participants' ops in the order they started (viewers
 * read a flow's steps in time order). */
static void
collective_flows(MsChromeTrace *t, const MsSchedule *s, const MsRecords *r)
{
    g_autoptr(GArray) m = g_array_new(FALSE, FALSE, sizeof(Member));
    for (guint32 k = 0; k < ms_schedule_n_colls(s); k++) {
        MsCollInfo c;
        ms_schedule_coll(s, k, &c);
        g_array_set_size(m, 0);
        for (guint p = 0; p < c.n_ranks; p++) {
            if (ran(r, c.ops[p])) {
                Member x = {ms_records_start(r, c.ops[p]), c.ranks[p], c.ops[p]};
                g_array_append_val(m, x);
            }
        }
        if (m->len < 2) {
            continue;
        }
        g_array_sort(m, cmp_member);
        const char *name = c.kind == MS_COLL_KIND_ALLREDUCE ? "allreduce" : "all-to-all";
        guint64 id = t->flow_id++;
        for (guint p = 0; p < m->len; p++) {
            const char *ph = p == 0 ? "s" : p + 1 == m->len ? "f" : "t";
            flow_event(t, ph, name, id, s, r, g_array_index(m, Member, p).op);
        }
    }
}

typedef struct {
    MsTime t;
    gint64 delta;
} Step;

static int
cmp_step(gconstpointer x, gconstpointer y)
{
    const Step *a = x, *b = y;
    return a->t < b->t ? -1 : a->t > b->t;
}

static void
counter(MsChromeTrace *t, const char *name, guint pid, MsTime time, const char *key, double v)
{
    begin_event(t, "C", name, NULL, pid, -1);
    member_time(t, "ts", time);
    json_builder_set_member_name(t->b, "args");
    json_builder_begin_object(t->b);
    ms_json_member_double(t->b, key, v);
    json_builder_end_object(t->b);
    end_event(t);
}

/* The running sum of steps as a counter: one value per distinct time. */
static void
counter_steps(MsChromeTrace *t, const char *name, guint pid, GArray *steps)
{
    g_array_sort(steps, cmp_step);
    gint64 level = 0;
    for (guint k = 0; k < steps->len; k++) {
        const Step *x = &g_array_index(steps, Step, k);
        level += x->delta;
        if (k + 1 == steps->len || g_array_index(steps, Step, k + 1).t != x->t) {
            counter(t, name, pid, x->t, "bytes", (double)level);
        }
    }
}

/* Bytes in flight: on each GPU the bytes of its comm ops running, and over all GPUs. */
static void
bytes_in_flight(MsChromeTrace *t, const MsSchedule *s, const MsRecords *r)
{
    g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(Step));
    g_autoptr(GArray) mine = g_array_new(FALSE, FALSE, sizeof(Step));
    for (guint rank = 0; rank < ms_schedule_n_ranks(s); rank++) {
        guint n;
        const guint32 *ops = ms_schedule_rank_ops(s, rank, &n);
        g_array_set_size(mine, 0);
        for (guint k = 0; k < n; k++) {
            MsOpInfo i;
            ms_schedule_op(s, ops[k], &i);
            if (i.kind != MS_OP_COMM || !ran(r, ops[k])) {
                continue;
            }
            gint64 b = (gint64)ms_result_op_bytes(s, &i);
            Step on = {ms_records_start(r, ops[k]), b}, off = {ms_records_end(r, ops[k]), -b};
            g_array_append_val(mine, on);
            g_array_append_val(mine, off);
        }
        if (mine->len) {
            g_array_append_vals(all, mine->data, mine->len);
            counter_steps(t, "bytes in flight", rank, mine);
        }
    }
    if (all->len) {
        counter_steps(t, "bytes in flight, all GPUs", MS_CHROME_TRACE_RUN_PID, all);
    }
}

/* A link class's counter moves only by this much (percentage points), or to 0: the engine
 * samples a class at every rate change, thousands of times per step, mostly by a hair; this keeps
 * a third of the samples of an inference batch on lina-testbed. */
#define LINK_RESOLUTION 0.1

/* Each link class's utilisation (util.CLASS: total rate over total capacity), in percent. */
static void
link_counters(MsChromeTrace *t, const MsRecords *r)
{
    const char *const *names = ms_records_series_names(r);
    for (guint k = 0; names[k]; k++) {
        if (!g_str_has_prefix(names[k], "util.")) {
            continue;
        }
        const MsTime *time;
        const double *v;
        guint n;
        ms_records_series(r, names[k], &time, &v, &n);
        g_autofree char *name = g_strdup_printf("%s links in use", names[k] + 5);
        double shown = -1;
        for (guint i = 0; i < n; i++) {
            double pct = 100 * v[i];
            if (fabs(pct - shown) >= LINK_RESOLUTION || (pct == 0 && shown != 0) || i + 1 == n) {
                counter(t, name, MS_CHROME_TRACE_RUN_PID, time[i], "% of capacity", pct);
                shown = pct;
            }
        }
    }
}

gboolean
ms_chrome_trace_add(MsChromeTrace *t, guint iteration, const MsSchedule *s, const MsRecords *r,
                    GError **error)
{
    if (t->about == NULL) {
        g_autoptr(JsonNode) sj = ms_schedule_to_json(s);
        t->about = json_node_copy(json_object_get_member(json_node_get_object(sj), "meta"));
    }
    name_tracks(t, s);
    MsTime end = 0;
    g_autoptr(GArray) waits = ms_peer_wait_spans(s, r);
    g_autofree MsTime *wait = ms_peer_wait_per_op(s, waits);
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        if (ran(r, op)) {
            op_event(t, iteration, s, r, wait, op);
            end = MAX(end, ms_records_end(r, op));
        }
        if (t->buf->len > FLUSH_BYTES && !flush(t, error)) {
            return FALSE;
        }
    }
    g_autofree char *name = g_strdup_printf("iteration %u", iteration);
    begin_event(t, "X", name, "iteration", MS_CHROME_TRACE_RUN_PID, 0);
    member_time(t, "ts", 0);
    ms_json_member_double(t->b, "dur", ms_time_to_us(end));
    json_builder_set_member_name(t->b, "args");
    json_builder_begin_object(t->b);
    ms_json_member_int(t->b, "iteration", iteration);
    ms_json_member_double(t->b, "step_time_us", ms_time_to_us(end));
    json_builder_end_object(t->b);
    end_event(t);
    wait_events(t, s, waits);
    dependency_flows(t, s, r);
    collective_flows(t, s, r);
    bytes_in_flight(t, s, r);
    link_counters(t, r);
    t->offset_us += ms_time_to_us(end);
    t->iterations++;
    return flush(t, error);
}

gboolean
ms_chrome_trace_close(MsChromeTrace *t, GError **error)
{
    g_string_append(t->buf, "\n],\n\"displayTimeUnit\": \"ns\",\n\"otherData\": ");
    json_builder_reset(t->b);
    json_builder_begin_object(t->b);
    ms_json_member_string(t->b, "format", "moesim chrome trace");
    ms_json_member_int(t->b, "iterations", t->iterations);
    if (t->about) {
        json_builder_set_member_name(t->b, "meta");
        json_builder_add_value(t->b, json_node_copy(t->about));
    }
    json_builder_end_object(t->b);
    g_autoptr(JsonNode) other = json_builder_get_root(t->b);
    json_generator_set_root(t->gen, other);
    json_generator_to_gstring(t->gen, t->buf);
    g_string_append(t->buf, "}\n");
    ms_output_file_write(t->f, t->buf->str, t->buf->len);
    g_string_truncate(t->buf, 0);
    g_autoptr(GError) local = NULL;
    if (!ms_output_file_close(g_steal_pointer(&t->f), &local)) {
        g_set_error_literal(error, MS_CHROME_TRACE_ERROR, MS_CHROME_TRACE_ERROR_IO, local->message);
        return FALSE;
    }
    return TRUE;
}

void
ms_chrome_trace_free(MsChromeTrace *t)
{
    if (t == NULL) {
        return;
    }
    ms_output_file_free(t->f);
    g_object_unref(t->b);
    g_object_unref(t->gen);
    g_string_free(t->buf, TRUE);
    if (t->about) {
        json_node_unref(t->about);
    }
    g_free(t);
}

guint
ms_chrome_trace_n_iterations(const MsChromeTrace *t)
{
    return t->iterations;
}

guint64
ms_chrome_trace_n_events(const MsChromeTrace *t)
{
    return t->events;
}

static gboolean
parse_index(const char *text, guint *out)
{
    char *end = NULL;
    guint64 v = g_ascii_strtoull(text, &end, 10);
    if (!g_ascii_isdigit(text[0]) || *end || v >= G_MAXUINT) {
        return FALSE;
    }
    *out = (guint)v;
    return TRUE;
}

gboolean
ms_chrome_trace_parse_iterations(const char *text, guint *first, guint *count, GError **error)
{
    if (!strcmp(text, "all")) {
        *first = 0;
        *count = G_MAXUINT;
        return TRUE;
    }
    const char *dash = strchr(text, '-');
    g_autofree char *a = dash ? g_strndup(text, dash - text) : g_strdup(text);
    guint lo = 0, hi = 0;
    if (!parse_index(a, &lo) || (dash && !parse_index(dash + 1, &hi)) || (dash && hi < lo)) {
        g_set_error(error, MS_CHROME_TRACE_ERROR, MS_CHROME_TRACE_ERROR_ITERATIONS,
                    "'%s' is not all, an iteration N or a range A-B (A <= B; iterations count "
                    "from 0)",
                    text);
        return FALSE;
    }
    *first = lo;
    *count = dash ? hi - lo + 1 : 1;
    return TRUE;
}
