/* figures: run and comparison plots. Times are shown in milliseconds. */
#include "figures.h"

#include <math.h>
#include <string.h>

#include "sim/out/peer_wait.h"
#include "sim/out/plot.h"

/* One colour per role, stable across figures. */
static const char *const role_colour[MS_ROLE_N] = {
    "#1f77b4", /* attention */
    "#aec7e8", /* dense_ffn */
    "#7f7f7f", /* gate */
    "#d62728", /* dispatch */
    "#2ca02c", /* expert */
    "#ff7f0e", /* combine */
    "#9467bd", /* compress */
    "#c5b0d5", /* decompress */
    "#8c564b", /* allreduce */
    "#e377c2", /* weights */
    "#bcbd22", /* replan */
    "#17becf", /* other */
    "#393b79", /* host */
};

/* What an op's label names once its layer, phase, chunk and group are taken away:
 * "L3.fwd.expert.c1" -> "expert", "bwd.head" -> "head" (sim/moe/plan.c writes labels so). */
static char *
label_kind(const char *label)
{
    g_auto(GStrv) parts = g_strsplit(label, ".", -1);
    GString *o = g_string_new(NULL);
    for (guint i = 0; parts[i]; i++) {
        const char *x = parts[i];
        gboolean numbered = (x[0] == 'L' || x[0] == 'c' || x[0] == 'g') && x[1] &&
                            strspn(x + 1, "0123456789") == strlen(x + 1);
        if (numbered || !strcmp(x, "fwd") || !strcmp(x, "bwd") || !x[0]) {
            continue;
        }
        g_string_append_printf(o, "%s%s", o->len ? "." : "", x);
    }
    return g_string_free(o, FALSE);
}

/* The kinds of the "other" ops of the first ranks (the output head, ...), so the legend says what
 * "other" is: at most three, then "...". Empty when there is none. */
static char *
other_kinds(const MsSchedule *s, guint ranks)
{
    g_autoptr(GPtrArray) kinds = g_ptr_array_new_with_free_func(g_free);
    gboolean more = FALSE;
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        MsOpInfo i;
        ms_schedule_op(s, op, &i);
        if (i.role != MS_ROLE_OTHER || i.rank >= ranks) {
            continue;
        }
        g_autofree char *k = label_kind(i.label);
        gboolean seen = !k[0];
        for (guint j = 0; j < kinds->len && !seen; j++) {
            seen = !strcmp(kinds->pdata[j], k);
        }
        if (!seen && kinds->len == 3) {
            more = TRUE;
        } else if (!seen) {
            g_ptr_array_add(kinds, g_steal_pointer(&k));
        }
    }
    GString *o = g_string_new(NULL);
    for (guint j = 0; j < kinds->len; j++) {
        g_string_append_printf(o, "%s%s", j ? ", " : "", (const char *)kinds->pdata[j]);
    }
    if (more) {
        g_string_append(o, ", ...");
    }
    return g_string_free(o, FALSE);
}

gboolean
ms_figure_timeline(const char *path, const char *title, const MsSchedule *s, const MsRecords *r,
                   guint max_ranks, GError **error)
{
    guint ranks = ms_schedule_n_ranks(s), streams = ms_schedule_n_streams(s);
    if (max_ranks && max_ranks < ranks) {
        ranks = max_ranks;
    }
    guint rows = ranks * streams;
    g_autoptr(MsPlot) p = ms_plot_new(path, title, 1400, MAX(300, 60 + rows * 26));
    ms_plot_set(p, "set xlabel 'time (ms)'");
    ms_plot_set(p, "set yrange [-0.6:%u.6] reverse", rows - 1);
    ms_plot_set(p, "set key outside right top");
    ms_plot_set(p, "set style fill solid 0.9 noborder");
    GString *tics = g_string_new("set ytics (");
    for (guint rank = 0; rank < ranks; rank++) {
        for (guint st = 0; st < streams; st++) {
            g_string_append_printf(tics, "%s'GPU %u %s' %u", rank || st ? ", " : "", rank,
                                   ms_schedule_stream_name(s, st), rank * streams + st);
        }
    }
    g_string_append(tics, ")");
    ms_plot_set(p, "%s", tics->str);
    g_string_free(tics, TRUE);
    guint series[MS_ROLE_N];
    gboolean used[MS_ROLE_N] = {FALSE};
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        MsOpInfo i;
        ms_schedule_op(s, op, &i);
        if (i.rank < ranks) {
            used[i.role] = TRUE;
        }
    }
    g_autofree char *other = other_kinds(s, ranks);
    for (guint role = 0; role < MS_ROLE_N; role++) {
        if (used[role]) {
            g_autofree char *style = g_strdup_printf("boxxyerror lc rgb '%s'", role_colour[role]);
            g_autofree char *name = role == MS_ROLE_OTHER && other[0]
                                        ? g_strdup_printf("other: %s", other)
                                        : g_strdup(ms_role_name(role));
            series[role] = ms_plot_series(p, name, "1:2:3:4", style);
        }
    }
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        MsOpInfo i;
        ms_schedule_op(s, op, &i);
        MsTime a = ms_records_start(r, op), z = ms_records_end(r, op);
        if (i.rank >= ranks || a == MS_TIME_NEVER) {
            continue;
        }
        double a_ms = ms_time_to_s(a) * 1e3, z_ms = ms_time_to_s(z) * 1e3;
        double row[4] = {(a_ms + z_ms) / 2, i.rank * streams + i.stream, (z_ms - a_ms) / 2, 0.38};
        ms_plot_row(p, series[i.role], row, 4, NULL);
    }
    /* Waits for peers (rank skew) as thin grey bars on the stream that waits. */
    g_autoptr(GArray) waits = ms_peer_wait_spans(s, r);
    guint wait_series = G_MAXUINT;
    for (guint k = 0; k < waits->len; k++) {
        const MsWaitSpan *w = &g_array_index(waits, MsWaitSpan, k);
        MsOpInfo i;
        ms_schedule_op(s, w->op, &i);
        if (i.rank >= ranks) {
            break; /* rank by rank */
        }
        if (wait_series == G_MAXUINT) {
            wait_series =
                ms_plot_series(p, "waiting for peers", "1:2:3:4", "boxxyerror lc rgb '#b0b0b0'");
        }
        double a_ms = ms_time_to_s(w->a) * 1e3, z_ms = ms_time_to_s(w->b) * 1e3;
        double row[4] = {(a_ms + z_ms) / 2, i.rank * streams + i.stream, (z_ms - a_ms) / 2, 0.12};
        ms_plot_row(p, wait_series, row, 4, NULL);
    }
    return ms_plot_render(p, error);
}

gboolean
ms_figure_links(const char *path, const char *title, const MsRecords *r, GError **error)
{
    /* A class's line is its links' total rate over their total capacity (sim/engine.c samples
     * it so): a class at 50% may have one link full and another idle. */
    g_autofree char *full = g_strdup_printf(
        "%s\neach line: all links of the class together (their total rate over their total "
        "capacity), not the busiest link",
        title);
    g_autoptr(MsPlot) p = ms_plot_new(path, full, 1200, 500);
    ms_plot_set(p, "set xlabel 'time (ms)'");
    ms_plot_set(p, "set ylabel 'in use (%% of the class capacity)'");
    ms_plot_set(p, "set yrange [0:105]");
    ms_plot_set(p, "set key outside right top title 'link class' noenhanced");
    const char *const *names = ms_records_series_names(r);
    for (guint k = 0; names[k]; k++) {
        if (!g_str_has_prefix(names[k], "util.")) {
            continue;
        }
        const MsTime *t;
        const double *v;
        guint n;
        ms_records_series(r, names[k], &t, &v, &n);
        guint s = ms_plot_series(p, names[k] + 5, "1:2", "steps lw 2");
        for (guint i = 0; i < n; i++) {
            double row[2] = {ms_time_to_s(t[i]) * 1e3, 100 * v[i]};
            ms_plot_row(p, s, row, 2, NULL);
        }
    }
    return ms_plot_render(p, error);
}

static int
cmp_double(gconstpointer a, gconstpointer b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Whether results are inference batches: the mode their plans record. */
static gboolean
inference(MsResult *const *results, guint n)
{
    const MsSchedule *s = n ? ms_result_schedule(results[0]) : NULL;
    return s && !g_strcmp0(ms_schedule_get_meta(s, "mode"), "infer");
}

/* A result's step (batch) times in ms, sorted; *n of them. */
static double *
sorted_steps_ms(MsResult *res, guint *n)
{
    *n = ms_result_n_iterations(res);
    double *v = g_new(double, MAX(*n, 1));
    for (guint i = 0; i < *n; i++) {
        v[i] = ms_result_iteration(res, i)->step_us / 1e3;
    }
    qsort(v, *n, sizeof(double), cmp_double);
    return v;
}

gboolean
ms_figure_latency_cdf(const char *path, const char *title, const char *const *names,
                      MsResult *const *results, guint n, GError **error)
{
    g_autoptr(MsPlot) p = ms_plot_new(path, title, 1000, 600);
    gboolean inf = inference(results, n) || n == 0;
    ms_plot_set(p, inf ? "set xlabel 'batch latency (ms)'" : "set xlabel 'step time (ms)'");
    ms_plot_set(p, inf ? "set ylabel 'fraction of batches'" : "set ylabel 'fraction of steps'");
    ms_plot_set(p, "set yrange [0:1.02]");
    /* Below the plot: inside, the legend sat on the slowest curve; on the right, names of
     * identical curves joined together squeezed the plot. */
    ms_plot_set(p, "set key below");
    g_autofree guint *len = g_new0(guint, MAX(n, 1));
    g_autofree double **v = g_new0(double *, MAX(n, 1));
    double lo = G_MAXDOUBLE, hi = -G_MAXDOUBLE;
    for (guint k = 0; k < n; k++) {
        v[k] = sorted_steps_ms(results[k], &len[k]);
        if (len[k]) {
            lo = MIN(lo, v[k][0]);
            hi = MAX(hi, v[k][len[k] - 1]);
        }
    }
    /* gnuplot's autoscale ends the axis at a tic, which can be the slowest batch itself: the
     * range holds every curve with 5% of the span to spare on each side. */
    if (lo <= hi) {
        double pad = hi > lo ? 0.05 * (hi - lo) : 0.01 * MAX(fabs(hi), 1e-9);
        ms_plot_set(p, "set xrange [%.6g:%.6g]", lo - pad, hi + pad);
    }
    /* Policies that give the very same batch times draw the very same curve, which hides the
     * ones drawn first: they share one curve and one legend entry. */
    g_autofree gboolean *drawn = g_new0(gboolean, MAX(n, 1));
    guint curves = 0;
    for (guint k = 0; k < n; k++) {
        if (drawn[k] || len[k] == 0) {
            continue;
        }
        GString *name = g_string_new(names[k]);
        guint same = 0;
        for (guint j = k + 1; j < n; j++) {
            if (!drawn[j] && len[j] == len[k] && memcmp(v[j], v[k], len[k] * sizeof(double)) == 0) {
                drawn[j] = TRUE;
                g_string_append_printf(name, " = %s", names[j]);
                same++;
            }
        }
        if (same) {
            g_string_append(name, " (identical)");
        }
        /* Curves that come close still tell apart by their dash type. */
        /* gnuplot's dash types 1 solid, 2 dashed, 4 dash-dot, 5 dash-dot-dot, 3 dotted (the
         * faintest, last). */
        static const guint dash[] = {1, 2, 4, 5, 3};
        g_autofree char *style =
            g_strdup_printf("steps lw 2 dt %u", dash[curves % G_N_ELEMENTS(dash)]);
        guint s = ms_plot_series(p, name->str, "1:2", style);
        g_string_free(name, TRUE);
        curves++;
        double start[2] = {v[k][0], 0};
        ms_plot_row(p, s, start, 2, NULL);
        for (guint i = 0; i < len[k]; i++) {
            double row[2] = {v[k][i], (i + 1.0) / len[k]};
            ms_plot_row(p, s, row, 2, NULL);
        }
    }
    for (guint k = 0; k < n; k++) {
        g_free(v[k]);
    }
    return ms_plot_render(p, error);
}

/* A bar of the comparison: its legend entry and its figure of a result in microseconds. */
typedef struct {
    const char *name;
    const char *colour;
    double (*of)(MsResult *res, const MsMetrics *mean);
} Bar;

static double
bar_step(MsResult *res, const MsMetrics *m)
{
    return m->step_us;
}
static double
bar_a2a(MsResult *res, const MsMetrics *m)
{
    return m->a2a_us;
}
static double
bar_exposed(MsResult *res, const MsMetrics *m)
{
    return m->exposed_comm_us;
}
static double
bar_allreduce(MsResult *res, const MsMetrics *m)
{
    return m->allreduce_us;
}
static double
bar_p50(MsResult *res, const MsMetrics *m)
{
    return ms_result_step_percentile(res, 50);
}
static double
bar_p95(MsResult *res, const MsMetrics *m)
{
    return ms_result_step_percentile(res, 95);
}
static double
bar_p99(MsResult *res, const MsMetrics *m)
{
    return ms_result_step_percentile(res, 99);
}

gboolean
ms_figure_compare(const char *path, const char *title, const char *const *names,
                  MsResult *const *results, guint n, GError **error)
{
    static const Bar train[] = {
        {"step time", "#1f77b4", bar_step},
        {"all-to-all", "#d62728", bar_a2a},
        {"exposed communication", "#ff7f0e", bar_exposed},
        {"allreduce", "#8c564b", bar_allreduce},
    };
    /* A batch's latency is what inference is judged by, and its tail above all (Lina's inference
     * results are p95 and p99); an inference batch has no allreduce. */
    static const Bar infer[] = {
        {"p50 batch latency", "#aec7e8", bar_p50},
        {"p95 batch latency", "#1f77b4", bar_p95},
        {"p99 batch latency", "#17becf", bar_p99},
        {"all-to-all (mean)", "#d62728", bar_a2a},
        {"exposed communication (mean)", "#ff7f0e", bar_exposed},
    };
    gboolean inf = inference(results, n);
    const Bar *bars = inf ? infer : train;
    guint n_bars = inf ? G_N_ELEMENTS(infer) : G_N_ELEMENTS(train);
    g_autoptr(MsPlot) p = ms_plot_new(path, title, 1000, 600);
    ms_plot_set(p, inf ? "set ylabel 'time per batch (ms)'"
                       : "set ylabel 'time per iteration (ms), means over iterations'");
    ms_plot_set(p, "set style data histograms");
    ms_plot_set(p, "set style histogram clustered gap 1");
    ms_plot_set(p, "set style fill solid 0.85 border -1");
    ms_plot_set(p, "set boxwidth 0.9");
    ms_plot_set(p, "set key inside top right");
    ms_plot_set(p, "set yrange [0:*]");
    ms_plot_set(p, "set offsets 0, 0, graph 0.25, 0");
    ms_plot_set(p, "set xtics nomirror");
    /* Policies with parameters have long names: tilt them where they would run into each other
     * (about 7 px per character against 850 px of plot shared by n groups). */
    gsize longest = 0;
    for (guint k = 0; k < n; k++) {
        longest = MAX(longest, strlen(names[k]));
    }
    if (longest * 7 > 850 / MAX(n, 1)) {
        ms_plot_set(p, "set xtics rotate by 20 right");
    }
    /* A policy whose all-to-alls span other GPUs than the first's (Lina's packing) says so
     * under its bars, as compare's table does. */
    g_autoptr(GPtrArray) tic = g_ptr_array_new_with_free_func(g_free);
    for (guint k = 0; k < n; k++) {
        const MsSchedule *s = ms_result_schedule(results[k]);
        const char *ep = s ? ms_schedule_get_meta(s, "ep") : NULL;
        const MsSchedule *s0 = ms_result_schedule(results[0]);
        const char *ep0 = s0 ? ms_schedule_get_meta(s0, "ep") : NULL;
        g_ptr_array_add(tic, ep && ep0 && strcmp(ep, ep0)
                                 ? g_strdup_printf("%s (ep %s)", names[k], ep)
                                 : g_strdup(names[k]));
    }
    g_autofree double *value = g_new0(double, MAX(n, 1) * n_bars);
    for (guint k = 0; k < n; k++) {
        MsMetrics mean;
        ms_result_mean(results[k], &mean);
        for (guint b = 0; b < n_bars; b++) {
            value[k * n_bars + b] = bars[b].of(results[k], &mean);
        }
    }
    /* A figure that is 0 in every run would be an empty legend entry: it is left out, and a note
     * says so. */
    g_autoptr(GPtrArray) absent = g_ptr_array_new();
    gboolean first = TRUE;
    for (guint b = 0; b < n_bars; b++) {
        gboolean any = FALSE;
        for (guint k = 0; k < n; k++) {
            any = any || value[k * n_bars + b] > 0;
        }
        if (!any && n && b > 0) {
            g_ptr_array_add(absent, (gpointer)bars[b].name);
            continue;
        }
        g_autofree char *style = g_strdup_printf("histograms lc rgb '%s'", bars[b].colour);
        guint s = ms_plot_series(p, bars[b].name, first ? "2:xtic(3)" : "2", style);
        first = FALSE;
        for (guint k = 0; k < n; k++) {
            double row[2] = {k, value[k * n_bars + b] / 1e3};
            ms_plot_row(p, s, row, 2, tic->pdata[k]);
        }
    }
    if (absent->len) {
        GString *what = g_string_new(NULL);
        for (guint i = 0; i < absent->len; i++) {
            g_string_append_printf(what, "%s%s",
                                   i == 0                ? ""
                                   : i + 1 < absent->len ? ", "
                                                         : " or ",
                                   (const char *)absent->pdata[i]);
        }
        ms_plot_set(p, "set label 1 'no %s in these runs' at graph 0.02, graph 0.95 left",
                    what->str);
        g_string_free(what, TRUE);
    }
    return ms_plot_render(p, error);
}
