/* result: metrics from records, and the summary JSON / Chrome trace / CSV outputs. */
#include "result.h"
#include "sim/base/json_output.h"

#include "sim/base/output_file.h"
#include "sim/out/chrome_trace.h"
#include "sim/out/peer_wait.h"
#include "sim/out/spans.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct _MsResult {
    char *backend;
    GArray *iterations; /* MsMetrics */
    MsSchedule *schedule;
    MsRecords *records;
    GPtrArray *stat_keys;
    GArray *stat_values;
    GPtrArray *notes;
    MsLayerTable *layers; /* NULL unless kept */
};

/* Time covered by a (merged) and not by b (merged). */
static MsTime
uncovered(const GArray *a, const GArray *b)
{
    MsTime total = 0;
    guint j = 0;
    const MsSpan *sa = (const MsSpan *)a->data, *sb = (const MsSpan *)b->data;
    for (guint i = 0; i < a->len; i++) {
        MsTime t = sa[i].a;
        while (j < b->len && sb[j].b <= t) {
            j++;
        }
        for (guint k = j; k < b->len && sb[k].a < sa[i].b && t < sa[i].b; k++) {
            if (sb[k].a > t) {
                total += sb[k].a - t;
            }
            t = MAX(t, sb[k].b);
        }
        if (t < sa[i].b) {
            total += sa[i].b - t;
        }
    }
    return total;
}

static guint
op_rank(const MsSchedule *s, guint32 op)
{
    MsOpInfo i;
    ms_schedule_op(s, op, &i);
    return i.rank;
}

enum { CAT_COMPUTE, CAT_A2A_FWD, CAT_A2A_BWD, CAT_ALLREDUCE, CAT_COMM, CAT_WAIT, N_CAT };

void
ms_metrics_compute(const MsSchedule *s, const MsRecords *r, MsMetrics *out)
{
    memset(out, 0, sizeof *out);
    guint n_ranks = ms_schedule_n_ranks(s);
    MsTime t0 = MS_TIME_NEVER, t1 = 0;
    GArray *spans[N_CAT];
    for (guint c = 0; c < N_CAT; c++) {
        spans[c] = g_array_new(FALSE, FALSE, sizeof(MsSpan));
    }
    double sums[N_CAT + 1] = {0};
    g_autoptr(GArray) waits = ms_peer_wait_spans(s, r);
    guint next_wait = 0; /* the spans come rank by rank */
    for (guint rank = 0; rank < n_ranks; rank++) {
        guint n;
        const guint32 *ops = ms_schedule_rank_ops(s, rank, &n);
        for (guint c = 0; c < N_CAT; c++) {
            g_array_set_size(spans[c], 0);
        }
        for (guint k = 0; k < n; k++) {
            MsOpInfo i;
            ms_schedule_op(s, ops[k], &i);
            MsSpan sp = {ms_records_start(r, ops[k]), ms_records_end(r, ops[k])};
            if (sp.a == MS_TIME_NEVER) {
                continue;
            }
            t0 = MIN(t0, sp.a);
            t1 = MAX(t1, sp.b);
            if (i.kind == MS_OP_COMPUTE) {
                g_array_append_val(spans[CAT_COMPUTE], sp);
                continue;
            }
            g_array_append_val(spans[CAT_COMM], sp);
            MsCollInfo c;
            ms_schedule_coll(s, i.coll, &c);
            if (c.kind == MS_COLL_KIND_ALLREDUCE) {
                g_array_append_val(spans[CAT_ALLREDUCE], sp);
                continue;
            }
            g_array_append_val(spans[i.phase == MS_PHASE_BACKWARD ? CAT_A2A_BWD : CAT_A2A_FWD], sp);
            guint p = 0;
            while (c.ranks[p] != rank) {
                p++;
            }
            for (guint d = 0; d < c.n_ranks; d++) {
                out->a2a_bytes += d == p ? 0 : c.matrix[(gsize)p * c.n_ranks + d];
            }
        }
        for (; next_wait < waits->len; next_wait++) {
            const MsWaitSpan *w = &g_array_index(waits, MsWaitSpan, next_wait);
            if (op_rank(s, w->op) != rank) {
                break;
            }
            MsSpan sp = {w->a, w->b};
            g_array_append_val(spans[CAT_WAIT], sp);
        }
        for (guint c = 0; c < N_CAT; c++) {
            sums[c] += ms_time_to_us(ms_spans_merge(spans[c]));
        }
        sums[N_CAT] += ms_time_to_us(uncovered(spans[CAT_COMM], spans[CAT_COMPUTE]));
    }
    for (guint c = 0; c < N_CAT; c++) {
        g_array_unref(spans[c]);
    }
    out->step_us = t0 == MS_TIME_NEVER ? 0 : ms_time_to_us(t1 - t0);
    out->compute_us = sums[CAT_COMPUTE] / n_ranks;
    out->a2a_fwd_us = sums[CAT_A2A_FWD] / n_ranks;
    out->a2a_bwd_us = sums[CAT_A2A_BWD] / n_ranks;
    out->a2a_us = out->a2a_fwd_us + out->a2a_bwd_us;
    out->allreduce_us = sums[CAT_ALLREDUCE] / n_ranks;
    out->exposed_comm_us = sums[N_CAT] / n_ranks;
    out->comm_wait_us = sums[CAT_WAIT] / n_ranks;
    const char *dropped = ms_schedule_get_meta(s, "dropped_tokens");
    out->dropped_tokens = dropped ? g_ascii_strtoull(dropped, NULL, 10) : 0;
}

MsResult *
ms_result_new(const char *backend)
{
    MsResult *res = g_new0(MsResult, 1);
    res->backend = g_strdup(backend);
    res->iterations = g_array_new(FALSE, FALSE, sizeof(MsMetrics));
    res->stat_keys = g_ptr_array_new_with_free_func(g_free);
    res->stat_values = g_array_new(FALSE, FALSE, sizeof(double));
    res->notes = g_ptr_array_new_with_free_func(g_free);
    return res;
}

void
ms_result_free(MsResult *res)
{
    if (res == NULL) {
        return;
    }
    g_free(res->backend);
    g_array_unref(res->iterations);
    ms_schedule_free(res->schedule);
    ms_records_free(res->records);
    g_ptr_array_unref(res->stat_keys);
    g_array_unref(res->stat_values);
    g_ptr_array_unref(res->notes);
    ms_layer_table_free(res->layers);
    g_free(res);
}

void
ms_result_keep_layers(MsResult *res)
{
    if (res->layers == NULL) {
        res->layers = ms_layer_table_new();
        ms_layer_table_set_meta(res->layers, "backend", res->backend);
    }
}

const MsLayerTable *
ms_result_layers(const MsResult *res)
{
    return res->layers;
}

void
ms_result_add(MsResult *res, const MsSchedule *s, const MsRecords *r)
{
    MsMetrics m;
    ms_metrics_compute(s, r, &m);
    if (res->layers) {
        const char *it = ms_schedule_get_meta(s, "iteration");
        guint n = it ? (guint)g_ascii_strtoull(it, NULL, 10) : res->iterations->len;
        ms_layer_table_add(res->layers, n, s, r);
    }
    g_array_append_val(res->iterations, m);
}

void
ms_result_set_detail(MsResult *res, MsSchedule *s, MsRecords *r)
{
    ms_schedule_free(res->schedule);
    ms_records_free(res->records);
    res->schedule = s;
    res->records = r;
}

void
ms_result_set_stat(MsResult *res, const char *key, double value)
{
    for (guint i = 0; i < res->stat_keys->len; i++) {
        if (strcmp(res->stat_keys->pdata[i], key) == 0) {
            g_array_index(res->stat_values, double, i) = value;
            return;
        }
    }
    g_ptr_array_add(res->stat_keys, g_strdup(key));
    g_array_append_val(res->stat_values, value);
}

gboolean
ms_result_get_stat(const MsResult *res, const char *key, double *value)
{
    for (guint i = 0; i < res->stat_keys->len; i++) {
        if (strcmp(res->stat_keys->pdata[i], key) == 0) {
            *value = g_array_index(res->stat_values, double, i);
            return TRUE;
        }
    }
    return FALSE;
}

void
ms_result_add_note(MsResult *res, const char *note)
{
    g_ptr_array_add(res->notes, g_strdup(note));
}

guint
ms_result_n_iterations(const MsResult *res)
{
    return res->iterations->len;
}

const MsMetrics *
ms_result_iteration(const MsResult *res, guint i)
{
    g_return_val_if_fail(i < res->iterations->len, NULL);
    return &g_array_index(res->iterations, MsMetrics, i);
}

const MsSchedule *
ms_result_schedule(const MsResult *res)
{
    return res->schedule;
}

const MsRecords *
ms_result_records(const MsResult *res)
{
    return res->records;
}

void
ms_result_mean(const MsResult *res, MsMetrics *out)
{
    memset(out, 0, sizeof *out);
    guint n = res->iterations->len;
    for (guint i = 0; i < n; i++) {
        const MsMetrics *m = ms_result_iteration(res, i);
        out->step_us += m->step_us / n;
        out->compute_us += m->compute_us / n;
        out->a2a_us += m->a2a_us / n;
        out->a2a_fwd_us += m->a2a_fwd_us / n;
        out->a2a_bwd_us += m->a2a_bwd_us / n;
        out->allreduce_us += m->allreduce_us / n;
        out->exposed_comm_us += m->exposed_comm_us / n;
        out->comm_wait_us += m->comm_wait_us / n;
        out->a2a_bytes += m->a2a_bytes / n;
        out->dropped_tokens += m->dropped_tokens;
    }
}

static int
cmp_double(gconstpointer a, gconstpointer b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double
ms_result_step_percentile(const MsResult *res, double p)
{
    guint n = res->iterations->len;
    if (n == 0) {
        return 0;
    }
    g_autofree double *v = g_new(double, n);
    for (guint i = 0; i < n; i++) {
        v[i] = ms_result_iteration(res, i)->step_us;
    }
    qsort(v, n, sizeof(double), cmp_double);
    double pos = CLAMP(p, 0, 100) / 100.0 * (n - 1);
    guint lo = (guint)floor(pos), hi = MIN(lo + 1, n - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

static void
metrics_members(JsonBuilder *b, const MsMetrics *m)
{
    const struct {
        const char *key;
        double v;
    } f[] = {
        {"step_time_us", m->step_us},
        {"compute_us", m->compute_us},
        {"a2a_us", m->a2a_us},
        {"a2a_forward_us", m->a2a_fwd_us},
        {"a2a_backward_us", m->a2a_bwd_us},
        {"allreduce_us", m->allreduce_us},
        {"exposed_comm_us", m->exposed_comm_us},
        {"comm_wait_us", m->comm_wait_us},
    };
    for (guint i = 0; i < G_N_ELEMENTS(f); i++) {
        json_builder_set_member_name(b, f[i].key);
        json_builder_add_double_value(b, f[i].v);
    }
    json_builder_set_member_name(b, "a2a_bytes");
    json_builder_add_int_value(b, (gint64)m->a2a_bytes);
    json_builder_set_member_name(b, "dropped_tokens");
    json_builder_add_int_value(b, (gint64)m->dropped_tokens);
}

guint64
ms_result_op_bytes(const MsSchedule *s, const MsOpInfo *i)
{
    if (i->kind == MS_OP_COMPUTE) {
        return (guint64)i->bytes;
    }
    MsCollInfo c;
    ms_schedule_coll(s, i->coll, &c);
    if (c.kind == MS_COLL_KIND_ALLREDUCE) {
        return c.bytes;
    }
    guint p = 0;
    while (c.ranks[p] != i->rank) {
        p++;
    }
    guint64 sum = 0;
    for (guint d = 0; d < c.n_ranks; d++) {
        sum += d == p ? 0 : c.matrix[(gsize)p * c.n_ranks + d];
    }
    return sum;
}

static void
ops_array(JsonBuilder *b, const MsSchedule *s, const MsRecords *r)
{
    g_autoptr(GArray) waits = ms_peer_wait_spans(s, r);
    g_autofree MsTime *wait = ms_peer_wait_per_op(s, waits);
    json_builder_begin_array(b);
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        MsOpInfo i;
        ms_schedule_op(s, op, &i);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "id");
        json_builder_add_int_value(b, op);
        json_builder_set_member_name(b, "label");
        json_builder_add_string_value(b, i.label);
        json_builder_set_member_name(b, "rank");
        json_builder_add_int_value(b, i.rank);
        json_builder_set_member_name(b, "stream");
        json_builder_add_string_value(b, ms_schedule_stream_name(s, i.stream));
        json_builder_set_member_name(b, "role");
        json_builder_add_string_value(b, ms_role_name(i.role));
        ms_json_member_string(b, "kind", ms_op_kind_name(i.kind));
        json_builder_set_member_name(b, "phase");
        json_builder_add_string_value(b, ms_phase_name(i.phase));
        json_builder_set_member_name(b, "layer");
        json_builder_add_int_value(b, i.layer);
        json_builder_set_member_name(b, "chunk");
        json_builder_add_int_value(b, i.chunk);
        json_builder_set_member_name(b, "bytes");
        json_builder_add_int_value(b, (gint64)ms_result_op_bytes(s, &i));
        json_builder_set_member_name(b, "flops");
        json_builder_add_double_value(b, i.flops);
        json_builder_set_member_name(b, "start_us");
        json_builder_add_double_value(b, ms_time_to_us(ms_records_start(r, op)));
        json_builder_set_member_name(b, "end_us");
        json_builder_add_double_value(b, ms_time_to_us(ms_records_end(r, op)));
        MsTime ready = ms_peer_wait_ready(s, r, op);
        if (ready != MS_TIME_NEVER) {
            ms_json_member_double(b, "ready_us", ms_time_to_us(ready));
        }
        if (i.kind == MS_OP_COMM) {
            ms_json_member_double(b, "wait_us", ms_time_to_us(wait[op]));
        }
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}

JsonNode *
ms_result_to_json(const MsResult *res)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    ms_json_member_string(b, "schema", "moesim.result/1"); /* docs/outputs.md */
    json_builder_set_member_name(b, "format");
    json_builder_add_string_value(b, "moesim-result");
    json_builder_set_member_name(b, "version");
    json_builder_add_int_value(b, 1);
    json_builder_set_member_name(b, "backend");
    json_builder_add_string_value(b, res->backend);
    const MsSchedule *s = res->schedule;
    if (s) {
        json_builder_set_member_name(b, "policy");
        json_builder_add_string_value(b, ms_schedule_policy(s));
        json_builder_set_member_name(b, "ranks");
        json_builder_add_int_value(b, ms_schedule_n_ranks(s));
        JsonNode *sj = ms_schedule_to_json(s);
        JsonObject *so = json_node_get_object(sj);
        json_builder_set_member_name(b, "meta");
        json_builder_add_value(b, json_node_copy(json_object_get_member(so, "meta")));
        json_node_unref(sj);
    }
    json_builder_set_member_name(b, "notes");
    json_builder_begin_array(b);
    for (guint i = 0; i < res->notes->len; i++) {
        json_builder_add_string_value(b, res->notes->pdata[i]);
    }
    json_builder_end_array(b);
    MsMetrics mean;
    ms_result_mean(res, &mean);
    json_builder_set_member_name(b, "summary");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "iterations");
    json_builder_add_int_value(b, res->iterations->len);
    metrics_members(b, &mean);
    const struct {
        const char *key;
        double p;
    } pct[] = {{"step_time_p50_us", 50}, {"step_time_p95_us", 95}, {"step_time_p99_us", 99}};
    for (guint i = 0; i < G_N_ELEMENTS(pct); i++) {
        json_builder_set_member_name(b, pct[i].key);
        json_builder_add_double_value(b, ms_result_step_percentile(res, pct[i].p));
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "stats");
    json_builder_begin_object(b);
    for (guint i = 0; i < res->stat_keys->len; i++) {
        json_builder_set_member_name(b, res->stat_keys->pdata[i]);
        json_builder_add_double_value(b, g_array_index(res->stat_values, double, i));
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "iterations");
    json_builder_begin_array(b);
    for (guint i = 0; i < res->iterations->len; i++) {
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "iteration");
        json_builder_add_int_value(b, i);
        metrics_members(b, ms_result_iteration(res, i));
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    if (s && res->records) {
        json_builder_set_member_name(b, "ops");
        ops_array(b, s, res->records);
    }
    json_builder_end_object(b);
    return json_builder_get_root(b);
}

static gboolean
need_detail(const MsResult *res, GError **error)
{
    if (res->schedule == NULL || res->records == NULL) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "no per-op records to write");
        return FALSE;
    }
    return TRUE;
}

gboolean
ms_result_write_chrome(const MsResult *res, const char *path, GError **error)
{
    if (!need_detail(res, error)) {
        return FALSE;
    }
    g_autoptr(MsChromeTrace) t = ms_chrome_trace_open(path, error);
    return t && ms_chrome_trace_add(t, 0, res->schedule, res->records, error) &&
           ms_chrome_trace_close(t, error);
}

gboolean
ms_result_write_csv(const MsResult *res, const char *path, GError **error)
{
    if (!need_detail(res, error)) {
        return FALSE;
    }
    const MsSchedule *s = res->schedule;
    MsOutputFile *f = ms_output_file_open(path, MS_OUTPUT_REPLACE, error);
    if (f == NULL) {
        return FALSE;
    }
    ms_output_file_printf(
        f, "op,rank,stream,kind,role,phase,layer,chunk,label,bytes,flops,start_us,end_us,"
           "duration_us,ready_us,wait_us\n");
    g_autoptr(GArray) waits = ms_peer_wait_spans(s, res->records);
    g_autofree MsTime *wait = ms_peer_wait_per_op(s, waits);
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        MsOpInfo i;
        ms_schedule_op(s, op, &i);
        MsTime a = ms_records_start(res->records, op), z = ms_records_end(res->records, op);
        if (a == MS_TIME_NEVER) {
            continue;
        }
        /* ready_us: when its dependencies had finished; wait_us: a comm op's wait for peers
         * (empty for compute). */
        MsTime ready = ms_peer_wait_ready(s, res->records, op);
        char at[32] = "", waited[32] = "";
        if (ready != MS_TIME_NEVER) {
            g_snprintf(at, sizeof at, "%.6f", ms_time_to_us(ready));
        }
        if (i.kind == MS_OP_COMM) {
            g_snprintf(waited, sizeof waited, "%.6f", ms_time_to_us(wait[op]));
        }
        ms_output_file_printf(
            f, "%u,%u,%s,%s,%s,%s,%d,%d,%s,%" G_GUINT64_FORMAT ",%.17g,%.6f,%.6f,%.6f,%s,%s\n", op,
            i.rank, ms_schedule_stream_name(s, i.stream), i.kind == MS_OP_COMM ? "comm" : "compute",
            ms_role_name(i.role), ms_phase_name(i.phase), i.layer, i.chunk, i.label,
            ms_result_op_bytes(s, &i), i.flops, ms_time_to_us(a), ms_time_to_us(z),
            ms_time_to_us(z - a), at, waited);
    }
    return ms_output_file_close(f, error);
}
