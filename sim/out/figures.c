/* figures: run and comparison plots. Times are shown in milliseconds. */
#include "figures.h"

#include <math.h>
#include <string.h>

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
};

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
    for (guint role = 0; role < MS_ROLE_N; role++) {
        if (used[role]) {
            g_autofree char *style = g_strdup_printf("boxxyerror lc rgb '%s'", role_colour[role]);
            series[role] = ms_plot_series(p, ms_role_name(role), "1:2:3:4", style);
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
    return ms_plot_render(p, error);
}

gboolean
ms_figure_links(const char *path, const char *title, const MsRecords *r, GError **error)
{
    g_autoptr(MsPlot) p = ms_plot_new(path, title, 1200, 500);
    ms_plot_set(p, "set xlabel 'time (ms)'");
    ms_plot_set(p, "set ylabel 'utilisation of the link class (%%)'");
    ms_plot_set(p, "set yrange [0:105]");
    ms_plot_set(p, "set key outside right top");
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

gboolean
ms_figure_latency_cdf(const char *path, const char *title, const char *const *names,
                      MsResult *const *results, guint n, GError **error)
{
    g_autoptr(MsPlot) p = ms_plot_new(path, title, 1000, 600);
    ms_plot_set(p, "set xlabel 'batch latency (ms)'");
    ms_plot_set(p, "set ylabel 'fraction of batches'");
    ms_plot_set(p, "set yrange [0:1.02]");
    ms_plot_set(p, "set key outside right top");
    for (guint k = 0; k < n; k++) {
        guint m = ms_result_n_iterations(results[k]);
        g_autofree double *v = g_new(double, MAX(m, 1));
        for (guint i = 0; i < m; i++) {
            v[i] = ms_result_iteration(results[k], i)->step_us / 1e3;
        }
        qsort(v, m, sizeof(double), cmp_double);
        guint s = ms_plot_series(p, names[k], "1:2", "steps lw 2");
        for (guint i = 0; i < m; i++) {
            double row[2] = {v[i], (i + 1.0) / m};
            ms_plot_row(p, s, row, 2, NULL);
        }
    }
    return ms_plot_render(p, error);
}

gboolean
ms_figure_compare(const char *path, const char *title, const char *const *names,
                  MsResult *const *results, guint n, GError **error)
{
    g_autoptr(MsPlot) p = ms_plot_new(path, title, 1000, 600);
    ms_plot_set(p, "set ylabel 'time per iteration (ms)'");
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
    static const char *const metric[] = {"step time", "all-to-all", "exposed communication",
                                         "allreduce"};
    static const char *const colour[] = {"#1f77b4", "#d62728", "#ff7f0e", "#8c564b"};
    for (guint m = 0; m < G_N_ELEMENTS(metric); m++) {
        g_autofree char *style = g_strdup_printf("histograms lc rgb '%s'", colour[m]);
        guint s = ms_plot_series(p, metric[m], m == 0 ? "2:xtic(3)" : "2", style);
        for (guint k = 0; k < n; k++) {
            MsMetrics mean;
            ms_result_mean(results[k], &mean);
            double v[] = {mean.step_us, mean.a2a_us, mean.exposed_comm_us, mean.allreduce_us};
            double row[2] = {k, v[m] / 1e3};
            ms_plot_row(p, s, row, 2, names[k]);
        }
    }
    return ms_plot_render(p, error);
}
