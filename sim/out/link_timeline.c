/* link_timeline: per-flow rate steps on one link, kept as a step list and the flows' labels;
 * written as CSV and as a stacked step chart (one filled band per flow, stacked by op). */
#include "link_timeline.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/base/output_file.h"
#include "sim/out/plot.h"

G_DEFINE_QUARK(ms_link_timeline_error_quark, ms_link_timeline_error)

#define NONE G_MAXUINT32

typedef struct {
    char *op, *kind, *conn;
    guint32 id;     /* the network's flow id while live */
    guint64 cookie; /* with active_at: tells a reused id apart */
    MsTime active_at;
    double rate;  /* its last step's */
    guint32 last; /* index of its last step, NONE before its first */
    guint32 seen; /* observation that last listed it */
    gboolean live;
} Series;

typedef struct {
    MsTime t;
    guint32 series;
    double rate;
} Step;

struct _MsLinkTimeline {
    guint link;
    char *name;
    double capacity;
    GArray *series;    /* Series */
    GArray *steps;     /* Step, in time order */
    GHashTable *of_id; /* live flow id -> series index + 1 */
    GArray *live;      /* live series indices, in order of appearance */
    guint32 epoch;
};

MsLinkTimeline *
ms_link_timeline_new(guint link, const char *name, double capacity)
{
    MsLinkTimeline *tl = g_new0(MsLinkTimeline, 1);
    tl->link = link;
    tl->name = g_strdup(name);
    tl->capacity = capacity;
    tl->series = g_array_new(FALSE, FALSE, sizeof(Series));
    tl->steps = g_array_new(FALSE, FALSE, sizeof(Step));
    tl->of_id = g_hash_table_new(g_direct_hash, g_direct_equal);
    tl->live = g_array_new(FALSE, FALSE, sizeof(guint32));
    return tl;
}

void
ms_link_timeline_free(MsLinkTimeline *tl)
{
    if (tl == NULL) {
        return;
    }
    for (guint i = 0; i < tl->series->len; i++) {
        Series *s = &g_array_index(tl->series, Series, i);
        g_free(s->op);
        g_free(s->kind);
        g_free(s->conn);
    }
    g_array_unref(tl->series);
    g_array_unref(tl->steps);
    g_hash_table_unref(tl->of_id);
    g_array_unref(tl->live);
    g_free(tl->name);
    g_free(tl);
}

guint
ms_link_timeline_link(const MsLinkTimeline *tl)
{
    return tl->link;
}

/* A step of series i at now; a second step at the same instant replaces the first. */
static void
add_step(MsLinkTimeline *tl, guint32 i, MsTime now, double rate)
{
    Series *s = &g_array_index(tl->series, Series, i);
    s->rate = rate;
    if (s->last != NONE && g_array_index(tl->steps, Step, s->last).t == now) {
        g_array_index(tl->steps, Step, s->last).rate = rate;
        return;
    }
    Step st = {now, i, rate};
    s->last = tl->steps->len;
    g_array_append_val(tl->steps, st);
}

static guint32
open_series(MsLinkTimeline *tl, const MsLinkFlow *f, MsLinkLabelFn label, gpointer ctx)
{
    Series s = {.id = f->id, .cookie = f->cookie, .active_at = f->active_at, .last = NONE};
    if (label) {
        label(ctx, f->cookie, &s.op, &s.kind, &s.conn);
    }
    s.op = s.op ? s.op : g_strdup("?");
    s.kind = s.kind ? s.kind : g_strdup("?");
    s.conn = s.conn ? s.conn : g_strdup("?");
    s.live = TRUE;
    guint32 i = tl->series->len;
    g_array_append_val(tl->series, s);
    g_array_append_val(tl->live, i);
    g_hash_table_insert(tl->of_id, GUINT_TO_POINTER(f->id), GUINT_TO_POINTER(i + 1));
    return i;
}

static void
close_series(MsLinkTimeline *tl, guint32 i, MsTime now)
{
    Series *s = &g_array_index(tl->series, Series, i);
    if (s->rate != 0) {
        add_step(tl, i, now, 0);
    }
    s->live = FALSE;
    g_hash_table_remove(tl->of_id, GUINT_TO_POINTER(s->id));
}

void
ms_link_timeline_observe(MsLinkTimeline *tl, MsTime now, const MsLinkFlow *flows, guint n,
                         MsLinkLabelFn label, gpointer ctx)
{
    tl->epoch++;
    for (guint k = 0; k < n; k++) {
        const MsLinkFlow *f = &flows[k];
        guint32 i = GPOINTER_TO_UINT(g_hash_table_lookup(tl->of_id, GUINT_TO_POINTER(f->id)));
        if (i != 0) {
            const Series *s = &g_array_index(tl->series, Series, i - 1);
            if (s->cookie != f->cookie || s->active_at != f->active_at) {
                close_series(tl, i - 1, now); /* the id was reused by a new flow */
                i = 0;
            }
        }
        gboolean fresh = i == 0;
        guint32 idx = fresh ? open_series(tl, f, label, ctx) : i - 1;
        Series *s = &g_array_index(tl->series, Series, idx);
        if (s->seen == tl->epoch) {
            continue; /* a route crossing the link twice */
        }
        s->seen = tl->epoch;
        if (fresh || fabs(f->rate - s->rate) > 1e-9 * MAX(fabs(f->rate), fabs(s->rate))) {
            add_step(tl, idx, now, f->rate);
        }
    }
    /* Flows no longer listed have left the link (finished). */
    guint kept = 0;
    for (guint k = 0; k < tl->live->len; k++) {
        guint32 i = g_array_index(tl->live, guint32, k);
        Series *s = &g_array_index(tl->series, Series, i);
        if (s->live && s->seen != tl->epoch) {
            close_series(tl, i, now);
        }
        if (s->live) {
            g_array_index(tl->live, guint32, kept++) = i;
        }
    }
    g_array_set_size(tl->live, kept);
}

guint
ms_link_timeline_n_series(const MsLinkTimeline *tl)
{
    return tl->series->len;
}

guint
ms_link_timeline_n_steps(const MsLinkTimeline *tl)
{
    return tl->steps->len;
}

void
ms_link_timeline_step(const MsLinkTimeline *tl, guint i, MsTime *t, guint *series, double *rate)
{
    g_return_if_fail(i < tl->steps->len);
    const Step *s = &g_array_index(tl->steps, Step, i);
    *t = s->t;
    *series = s->series;
    *rate = s->rate;
}

static const Series *
series_at(const MsLinkTimeline *tl, guint i)
{
    return &g_array_index(tl->series, Series, i);
}

const char *
ms_link_timeline_op(const MsLinkTimeline *tl, guint series)
{
    g_return_val_if_fail(series < tl->series->len, NULL);
    return series_at(tl, series)->op;
}

const char *
ms_link_timeline_kind(const MsLinkTimeline *tl, guint series)
{
    g_return_val_if_fail(series < tl->series->len, NULL);
    return series_at(tl, series)->kind;
}

const char *
ms_link_timeline_conn(const MsLinkTimeline *tl, guint series)
{
    g_return_val_if_fail(series < tl->series->len, NULL);
    return series_at(tl, series)->conn;
}

double
ms_link_timeline_rate_at(const MsLinkTimeline *tl, guint series, MsTime t)
{
    double r = 0;
    for (guint i = 0; i < tl->steps->len; i++) {
        const Step *s = &g_array_index(tl->steps, Step, i);
        if (s->t > t) {
            break;
        }
        if (s->series == series) {
            r = s->rate;
        }
    }
    return r;
}

gboolean
ms_link_timeline_overlap(const MsLinkTimeline *tl, const char *kind, const char *other,
                         MsTime *from, MsTime *to, const char **op)
{
    /* Walk the steps keeping how many flows of each side move; the first step at which a flow of
     * kind moves while one of other does names the op. */
    g_autofree double *rate = g_new0(double, MAX(tl->series->len, 1));
    guint moving_other = 0;
    const char *found = NULL;
    for (guint i = 0; i < tl->steps->len && found == NULL; i++) {
        const Step *s = &g_array_index(tl->steps, Step, i);
        const Series *x = series_at(tl, s->series);
        if (!strcmp(x->kind, other)) {
            moving_other += (s->rate > 0) - (rate[s->series] > 0);
        }
        rate[s->series] = s->rate;
        /* Decide at the end of an instant, once all its steps are in. */
        gboolean last = i + 1 == tl->steps->len || g_array_index(tl->steps, Step, i + 1).t > s->t;
        for (guint k = 0; last && moving_other && k < tl->series->len && !found; k++) {
            if (rate[k] > 0 && !strcmp(series_at(tl, k)->kind, kind)) {
                found = series_at(tl, k)->op;
            }
        }
    }
    if (found == NULL) {
        return FALSE;
    }
    *from = MS_TIME_NEVER;
    *to = 0;
    for (guint i = 0; i < tl->steps->len; i++) {
        const Step *s = &g_array_index(tl->steps, Step, i);
        if (!strcmp(series_at(tl, s->series)->op, found)) {
            *from = MIN(*from, s->t);
            *to = MAX(*to, s->t);
        }
    }
    *op = found;
    return TRUE;
}

/* CSV text field: quoted when it holds a comma or a quote (doubled). */
static void
csv_field(MsOutputFile *f, const char *text)
{
    if (strpbrk(text, ",\"\n") == NULL) {
        ms_output_file_printf(f, "%s", text);
        return;
    }
    ms_output_file_printf(f, "\"");
    for (const char *c = text; *c; c++) {
        ms_output_file_printf(f, *c == '"' ? "\"\"" : "%c", *c);
    }
    ms_output_file_printf(f, "\"");
}

gboolean
ms_link_timeline_write_csv(const MsLinkTimeline *tl, const char *path, GError **error)
{
    g_autoptr(GError) local = NULL;
    MsOutputFile *f = ms_output_file_open(path, MS_OUTPUT_REPLACE, &local);
    if (f == NULL) {
        g_set_error(error, MS_LINK_TIMELINE_ERROR, MS_LINK_TIMELINE_ERROR_IO, "%s", local->message);
        return FALSE;
    }
    ms_output_file_printf(f, "# moesim-link-timeline %d link %s capacity_GBps %.6f\n",
                          MS_LINK_TIMELINE_FORMAT, tl->name, tl->capacity / 1e9);
    ms_output_file_printf(f, "time_us,flow,rate_GBps,op,kind,connection\n");
    for (guint i = 0; i < tl->steps->len; i++) {
        const Step *s = &g_array_index(tl->steps, Step, i);
        const Series *x = series_at(tl, s->series);
        ms_output_file_printf(f, "%.6f,%u,%.9f,", ms_time_to_us(s->t), s->series, s->rate / 1e9);
        csv_field(f, x->op);
        ms_output_file_printf(f, ",");
        csv_field(f, x->kind);
        ms_output_file_printf(f, ",");
        csv_field(f, x->conn);
        ms_output_file_printf(f, "\n");
    }
    if (!ms_output_file_close(f, &local)) {
        g_set_error(error, MS_LINK_TIMELINE_ERROR, MS_LINK_TIMELINE_ERROR_IO, "%s", local->message);
        return FALSE;
    }
    return TRUE;
}

/* Colours for ops, cycled: distinct at a glance, none pale. */
static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#17becf"};

gboolean
ms_link_timeline_plot(const MsLinkTimeline *tl, const char *path, const char *title, MsTime from,
                      MsTime to, GError **error)
{
    guint n = tl->series->len;
    if (to == MS_TIME_NEVER) {
        to = tl->steps->len ? g_array_index(tl->steps, Step, tl->steps->len - 1).t : from;
    }
    /* Ops in order of first appearance; series stacked op by op. */
    g_autoptr(GPtrArray) ops = g_ptr_array_new();
    g_autofree guint *op_of = g_new0(guint, MAX(n, 1));
    g_autofree guint *conns = g_new0(guint, MAX(n, 1));
    g_autofree guint8 *shown = g_new0(guint8, MAX(n, 1));
    g_autofree double *rate = g_new0(double, MAX(n, 1));
    /* A flow is shown when it moves somewhere in the window: at its start, or from a step in it. */
    for (guint k = 0; k < tl->steps->len; k++) {
        const Step *s = &g_array_index(tl->steps, Step, k);
        if (s->t > from && rate[s->series] > 0) {
            shown[s->series] = 1; /* it moved from `from` up to here */
        }
        if (s->t >= to) {
            break;
        }
        rate[s->series] = s->rate;
        if (s->t >= from && s->rate > 0) {
            shown[s->series] = 1;
        }
    }
    for (guint i = 0; i < n; i++) {
        shown[i] |= rate[i] > 0; /* still moving at the window's end */
        rate[i] = 0;
    }
    for (guint i = 0; i < n; i++) {
        guint o = 0;
        while (o < ops->len && strcmp(ops->pdata[o], series_at(tl, i)->op) != 0) {
            o++;
        }
        if (o == ops->len) {
            g_ptr_array_add(ops, series_at(tl, i)->op);
        }
        op_of[i] = o;
    }
    /* The stack: shown series, grouped by op. */
    g_autoptr(GArray) order = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint o = 0; o < ops->len; o++) {
        for (guint i = 0; i < n; i++) {
            if (shown[i] && op_of[i] == o) {
                g_array_append_val(order, i);
            }
        }
    }
    /* Per op the most flows moving at once in the window (conns): a ring's steps follow one
     * another on a connection, so this counts connections where the flow count would not. */
    g_autofree guint *moving = g_new0(guint, MAX(ops->len, 1));
    for (guint k = 0; k < tl->steps->len; k++) {
        const Step *s = &g_array_index(tl->steps, Step, k);
        if (s->t >= to) {
            break;
        }
        guint o = op_of[s->series];
        moving[o] = moving[o] + (s->rate > 0) - (rate[s->series] > 0);
        rate[s->series] = s->rate;
        gboolean last = k + 1 == tl->steps->len || g_array_index(tl->steps, Step, k + 1).t > s->t;
        if (last && s->t >= from) {
            for (guint j = 0; j < ops->len; j++) {
                conns[j] = MAX(conns[j], moving[j]);
            }
        } else if (last && k + 1 < tl->steps->len &&
                   g_array_index(tl->steps, Step, k + 1).t > from) {
            for (guint j = 0; j < ops->len; j++) {
                conns[j] = MAX(conns[j], moving[j]); /* what moves at the window's start */
            }
        }
    }
    memset(rate, 0, MAX(n, 1) * sizeof(double));
    g_autoptr(MsPlot) p = ms_plot_new(path, title, 1100, 600);
    ms_plot_set(p, "set xlabel 'time since the window''s start (us)'");
    ms_plot_set(p, "set ylabel 'rate on %s (GB/s, stacked per flow)'", tl->name);
    ms_plot_set(p, "set yrange [0:%.6g]", tl->capacity / 1e9 * 1.15);
    ms_plot_set(p, "set xrange [0:%.6g]", ms_time_to_us(to - MIN(from, to)));
    ms_plot_set(p, "set key outside bottom center horizontal");
    ms_plot_set(p, "set style fill solid 0.75 border lc rgb 'white'");
    ms_plot_set(p,
                "set arrow from graph 0, first %.6g to graph 1, first %.6g nohead dt 2 lw 2 "
                "lc rgb 'black'",
                tl->capacity / 1e9, tl->capacity / 1e9);
    ms_plot_set(p, "set label 'capacity %.2f GB/s' at graph 0.01, first %.6g offset 0,0.7",
                tl->capacity / 1e9, tl->capacity / 1e9);
    /* Colours by the ops shown, the same in every chart for the first all-to-all (blue) and
     * the first allreduce (red); the others take the next ones in order. */
    g_autofree guint *colour = g_new0(guint, MAX(ops->len, 1));
    guint next_colour = 2;
    gboolean a2a_seen = FALSE, ar_seen = FALSE;
    for (guint k = 0; k < order->len; k++) {
        guint i = g_array_index(order, guint, k), o = op_of[i];
        if (k > 0 && op_of[g_array_index(order, guint, k - 1)] == o) {
            continue;
        }
        const char *kind = series_at(tl, i)->kind;
        if (!a2a_seen && !strcmp(kind, "alltoall")) {
            colour[o] = 0;
            a2a_seen = TRUE;
        } else if (!ar_seen && !strcmp(kind, "allreduce")) {
            colour[o] = 1;
            ar_seen = TRUE;
        } else {
            colour[o] = next_colour++;
        }
    }
    guint *band = g_new0(guint, MAX(order->len, 1));
    g_autofree guint *bands = band;
    for (guint k = 0; k < order->len; k++) {
        guint i = g_array_index(order, guint, k);
        guint o = op_of[i];
        gboolean first = k == 0 || op_of[g_array_index(order, guint, k - 1)] != o;
        g_autofree char *name =
            first ? g_strdup_printf("%s: %s (up to %u flows at once)", series_at(tl, i)->kind,
                                    (const char *)ops->pdata[o], conns[o])
                  : g_strdup("");
        g_autofree char *style =
            g_strdup_printf("filledcurves lc rgb '%s'", palette[colour[o] % G_N_ELEMENTS(palette)]);
        band[k] = ms_plot_series(p, name, "1:2:3", style);
    }
    /* Walk the steps; at each instant inside the window every band gets the edges of the
     * interval that ends there and of the one that starts there (a step chart). */
    MsTime prev = from;
    for (guint k = 0; k <= tl->steps->len; k++) {
        MsTime t = k < tl->steps->len ? g_array_index(tl->steps, Step, k).t : to;
        if (t > prev && prev < to) {
            MsTime end = MIN(t, to);
            double lo = 0;
            for (guint j = 0; j < order->len; j++) {
                double hi = lo + rate[g_array_index(order, guint, j)] / 1e9;
                double a[3] = {ms_time_to_us(prev - from), lo, hi};
                double b[3] = {ms_time_to_us(end - from), lo, hi};
                ms_plot_row(p, band[j], a, 3, NULL);
                ms_plot_row(p, band[j], b, 3, NULL);
                lo = hi;
            }
            prev = end;
        }
        if (k < tl->steps->len) {
            const Step *s = &g_array_index(tl->steps, Step, k);
            rate[s->series] = s->rate;
            prev = MAX(prev, MIN(MAX(s->t, from), to));
        }
    }
    return ms_plot_render(p, error);
}
