/* repro_out: an experiment's result as Markdown (setup, a table of its rows with the papers'
 * figures beside moesim's, summary) and as files: NAME.md, NAME.json and bar charts of chosen
 * figures (grouped by model, one bar per policy and network model). */
#include "repro_private.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "sim/out/plot.h"

/* Every figure key an experiment may report, in table order: each moesim figure is followed by
 * its paper_ counterpart. */
static const char *const all_keys[] = {
    "step_ms",
    "speedup",
    "a2a_backward_speedup",
    "moe_forward_speedup",
    "moe_backward_speedup",
    "a2a_ms",
    "paper_a2a_ms",
    "a2a_share",
    "paper_a2a_share",
    "moe_a2a_share",
    "paper_moe_a2a_share",
    "a2a_backward_slowdown_p50",
    "a2a_backward_slowdown_max",
    "paper_a2a_backward_slowdown_p50",
    "paper_a2a_backward_slowdown_max",
    "p50_ms",
    "p95_ms",
    "p50_speedup",
    "p95_speedup",
    "gain",
    "speedup_over_fastermoe",
    "params_m",
    "paper_params_m",
    "memory_gib",
    NULL,
};

/* The keys of all_keys that some row reports. */
static GPtrArray *
used_keys(const MsReproResult *res)
{
    GPtrArray *keys = g_ptr_array_new();
    for (const char *const *k = all_keys; *k; k++) {
        gboolean any = FALSE;
        for (guint r = 0; r < res->rows->len && !any; r++) {
            any = isfinite(ms_repro_result_figure(res, r, *k));
        }
        if (any) {
            g_ptr_array_add(keys, (gpointer)*k);
        }
    }
    return keys;
}

static void
format_value(GString *out, const char *key, double v)
{
    const char *k = g_str_has_prefix(key, "paper_") ? key + 6 : key;
    if (!isfinite(v)) {
        g_string_append(out, "-");
    } else if (strstr(k, "speedup") || strstr(k, "gain") || strstr(k, "slowdown")) {
        g_string_append_printf(out, "%.2fx", v);
    } else if (g_str_has_suffix(k, "share")) {
        g_string_append_printf(out, "%.1f%%", 100 * v);
    } else if (g_str_has_suffix(k, "_ms")) {
        g_string_append_printf(out, v < 10 ? "%.2f" : "%.1f", v);
    } else if (g_str_has_suffix(k, "_m")) {
        g_string_append_printf(out, "%.0f", v);
    } else {
        g_string_append_printf(out, "%.2f", v);
    }
}

static void
append_count(GString *md, guint n)
{
    if (n) {
        g_string_append_printf(md, " %u |", n);
    } else {
        g_string_append(md, " - |");
    }
}

static guint index_of(GPtrArray *names, const char *name);

static char *
row_model(const ReproRow *row)
{
    return row->experts ? g_strdup_printf("%s, %u experts", row->model, row->experts)
                        : g_strdup(row->model);
}

static char *
row_column(const ReproRow *row)
{
    return row->column ? g_strdup_printf("%s (%s)", row->column, row->net)
                       : g_strdup_printf("`%s` (%s)", row->policy, row->net);
}

static gboolean
in_pivot(const MsReproResult *res, guint r, const char *key)
{
    const ReproRow *row = res->rows->pdata[r];
    return isfinite(ms_repro_result_figure(res, r, key)) &&
           g_strcmp0(row->policy, row->baseline) != 0;
}

/* The figure key as a table: a row per model, a column per policy and network model. */
static void
pivot(GString *md, const MsReproResult *res, const char *key, const char *title)
{
    g_autoptr(GPtrArray) models = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) columns = g_ptr_array_new_with_free_func(g_free);
    for (guint r = 0; r < res->rows->len; r++) {
        if (in_pivot(res, r, key)) {
            g_autofree char *m = row_model(res->rows->pdata[r]);
            g_autofree char *c = row_column(res->rows->pdata[r]);
            index_of(models, m);
            index_of(columns, c);
        }
    }
    g_autofree double *cells = g_new(double, MAX(models->len * columns->len, 1));
    for (guint i = 0; i < models->len * columns->len; i++) {
        cells[i] = NAN;
    }
    for (guint r = 0; r < res->rows->len; r++) {
        double v = ms_repro_result_figure(res, r, key);
        if (in_pivot(res, r, key)) {
            g_autofree char *m = row_model(res->rows->pdata[r]);
            g_autofree char *c = row_column(res->rows->pdata[r]);
            cells[index_of(models, m) * columns->len + index_of(columns, c)] = v;
        }
    }
    g_string_append_printf(md, "\n%s:\n\n| model |", title);
    for (guint c = 0; c < columns->len; c++) {
        g_string_append_printf(md, " %s |", (const char *)columns->pdata[c]);
    }
    g_string_append(md, "\n|---|");
    for (guint c = 0; c < columns->len; c++) {
        g_string_append(md, "---|");
    }
    g_string_append(md, "\n");
    for (guint m = 0; m < models->len; m++) {
        g_string_append_printf(md, "| %s |", (const char *)models->pdata[m]);
        for (guint c = 0; c < columns->len; c++) {
            g_string_append(md, " ");
            format_value(md, key, cells[m * columns->len + c]);
            g_string_append(md, " |");
        }
        g_string_append(md, "\n");
    }
}

char *
ms_repro_result_markdown(const MsReproResult *res)
{
    GString *md = g_string_new(NULL);
    g_string_append_printf(md, "`moesim repro %s`:\n\n", res->name);
    for (guint i = 0; i < res->setup->len; i++) {
        g_string_append_printf(md, "- %s\n", (const char *)res->setup->pdata[i]);
    }
    for (guint i = 0; i + 1 < res->pivots->len; i += 2) {
        pivot(md, res, res->pivots->pdata[i], res->pivots->pdata[i + 1]);
    }
    if (res->summary->len) {
        g_string_append(md, "\n");
    }
    for (guint i = 0; i < res->summary->len; i++) {
        g_string_append_printf(md, "- %s\n", (const char *)res->summary->pdata[i]);
    }
    g_autoptr(GPtrArray) keys = used_keys(res);
    if (res->pivots->len) {
        g_string_append(md, "\n<details><summary>every row</summary>\n");
    }
    g_string_append(md, "\n| model | experts | GPUs | policy | baseline | network |");
    for (guint k = 0; k < keys->len; k++) {
        g_string_append_printf(md, " %s |", (const char *)keys->pdata[k]);
    }
    g_string_append(md, "\n|---|---|---|---|---|---|");
    for (guint k = 0; k < keys->len; k++) {
        g_string_append(md, "---|");
    }
    g_string_append(md, "\n");
    for (guint r = 0; r < res->rows->len; r++) {
        const ReproRow *row = res->rows->pdata[r];
        g_string_append_printf(md, "| %s |", row->model);
        append_count(md, row->experts);
        append_count(md, row->gpus);
        g_string_append_printf(md, " `%s` | `%s` | %s |", row->policy, row->baseline, row->net);
        for (guint k = 0; k < keys->len; k++) {
            g_string_append(md, " ");
            format_value(md, keys->pdata[k], ms_repro_result_figure(res, r, keys->pdata[k]));
            g_string_append(md, " |");
        }
        g_string_append(md, "\n");
    }
    if (res->pivots->len) {
        g_string_append(md, "\n</details>\n");
    }
    return g_string_free(md, FALSE);
}

static guint
index_of(GPtrArray *names, const char *name)
{
    for (guint i = 0; i < names->len; i++) {
        if (strcmp(names->pdata[i], name) == 0) {
            return i;
        }
    }
    g_ptr_array_add(names, g_strdup(name));
    return names->len - 1;
}

/* A chart's bar colours: one per policy (Tableau's ten, distinct in print and for the common
 * colour-vision deficiencies), the paper's figures in grey. */
static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                      "#8c564b", "#e377c2", "#bcbd22", "#17becf", "#7f7f7f"};
#define PAPER_COLOUR "#404040"

/* Whether row r's bar is left out of the chart of key: a baseline's speedup or gain over itself is
 * 1 under every model and says nothing. */
static gboolean
chart_skips(const MsReproResult *res, guint r, const char *key)
{
    const ReproRow *row = res->rows->pdata[r];
    gboolean relative = g_str_has_suffix(key, "speedup") || strcmp(key, "gain") == 0;
    return !isfinite(ms_repro_result_figure(res, r, key)) ||
           (relative && strcmp(row->policy, row->baseline) == 0);
}

/* One bar per (policy, network) within each model's group: the policy's colour, solid under the
 * first network model and hatched under the others; the paper's figure, where rows carry
 * paper_KEY, as a grey bar of its own. */
static gboolean
write_chart(const MsReproResult *res, const ReproChart *c, const char *dir, GError **error)
{
    g_autoptr(GPtrArray) models = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) policies = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) nets = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) series = g_ptr_array_new_with_free_func(g_free);
    g_autofree char *paper_key = g_strdup_printf("paper_%s", c->key);
    gboolean paper = FALSE;
    for (guint r = 0; r < res->rows->len; r++) {
        const ReproRow *row = res->rows->pdata[r];
        if (chart_skips(res, r, c->key)) {
            continue;
        }
        g_autofree char *model = g_strdup_printf("%s %ue", row->model, row->experts);
        const char *policy = row->column ? row->column : row->policy;
        g_autofree char *name = g_strdup_printf("%s (%s)", policy, row->net);
        index_of(models, row->experts ? model : row->model);
        index_of(policies, policy);
        index_of(nets, row->net);
        index_of(series, name);
        paper = paper || isfinite(ms_repro_result_figure(res, r, paper_key));
    }
    if (series->len == 0) {
        return TRUE;
    }
    guint bars = series->len + (paper ? 1 : 0);
    g_autofree char *file = g_strdup_printf("%s-%s.png", res->name, c->suffix);
    g_autofree char *path = g_build_filename(dir, file, NULL);
    g_autofree char *title = g_strdup_printf("moesim repro %s: %s", res->name, c->ylabel);
    /* Wide enough for every bar, tall enough for the key below the plot (a line per series at
     * worst) to leave the plot most of the height. */
    g_autoptr(MsPlot) p =
        ms_plot_new(path, title, MAX(900, 18 * bars * models->len), 400 + 26 * bars);
    ms_plot_set(p, "set ylabel '%s'", c->ylabel);
    ms_plot_set(p, "set key outside below");
    ms_plot_set(p, "set xrange [-0.6:%u.6]", models->len - 1);
    ms_plot_set(p, "set yrange [0:*]");
    ms_plot_set(p, "set grid ytics");
    ms_plot_set(p, "set xtics rotate by -30");
    GString *tics = g_string_new("set xtics (");
    for (guint m = 0; m < models->len; m++) {
        g_string_append_printf(tics, "%s'%s' %u", m ? ", " : "", (const char *)models->pdata[m], m);
    }
    g_string_append(tics, ")");
    ms_plot_set(p, "%s", tics->str);
    g_string_free(tics, TRUE);
    double width = 0.8 / bars;
    g_autofree guint *ids = g_new(guint, bars);
    for (guint s = 0; s < series->len; s++) {
        guint pol = 0, net = 0;
        for (guint r = 0; r < res->rows->len; r++) {
            const ReproRow *row = res->rows->pdata[r];
            const char *policy = row->column ? row->column : row->policy;
            g_autofree char *name = g_strdup_printf("%s (%s)", policy, row->net);
            if (strcmp(name, series->pdata[s]) == 0) {
                pol = index_of(policies, policy);
                net = index_of(nets, row->net);
                break;
            }
        }
        g_autofree char *style =
            net == 0 ? g_strdup_printf("boxes lc rgb '%s' fs solid 0.85 noborder",
                                       palette[pol % G_N_ELEMENTS(palette)])
                     : g_strdup_printf("boxes lc rgb '%s' fs pattern %u border",
                                       palette[pol % G_N_ELEMENTS(palette)], 1 + (net - 1) % 6);
        ids[s] = ms_plot_series(p, series->pdata[s], "1:2:3", style);
    }
    if (paper) {
        ids[series->len] = ms_plot_series(p, "the paper", "1:2:3",
                                          "boxes lc rgb '" PAPER_COLOUR "' fs solid 0.85 noborder");
    }
    ms_plot_set(p, "set boxwidth %g absolute", width);
    g_autofree gboolean *paper_done = g_new0(gboolean, models->len);
    for (guint r = 0; r < res->rows->len; r++) {
        const ReproRow *row = res->rows->pdata[r];
        if (chart_skips(res, r, c->key)) {
            continue;
        }
        g_autofree char *model = g_strdup_printf("%s %ue", row->model, row->experts);
        const char *policy = row->column ? row->column : row->policy;
        g_autofree char *name = g_strdup_printf("%s (%s)", policy, row->net);
        guint m = index_of(models, row->experts ? model : row->model);
        guint s = index_of(series, name);
        double xy[3] = {m + (s - (bars - 1) / 2.0) * width, ms_repro_result_figure(res, r, c->key),
                        width};
        ms_plot_row(p, ids[s], xy, 3, NULL);
        double pv = ms_repro_result_figure(res, r, paper_key);
        if (isfinite(pv) && !paper_done[m]) {
            double pxy[3] = {m + (series->len - (bars - 1) / 2.0) * width, pv, width};
            ms_plot_row(p, ids[series->len], pxy, 3, NULL);
            paper_done[m] = TRUE;
        }
    }
    return ms_plot_render(p, error);
}

gboolean
ms_repro_result_write(const MsReproResult *res, const char *dir, GError **error)
{
    if (g_mkdir_with_parents(dir, 0755) != 0) {
        int e = errno;
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "cannot create %s: %s", dir,
                    g_strerror(e));
        return FALSE;
    }
    g_autofree char *md_name = g_strdup_printf("%s.md", res->name);
    g_autofree char *json_name = g_strdup_printf("%s.json", res->name);
    g_autofree char *md_path = g_build_filename(dir, md_name, NULL);
    g_autofree char *json_path = g_build_filename(dir, json_name, NULL);
    g_autofree char *md = ms_repro_result_markdown(res);
    g_autoptr(JsonNode) root = ms_repro_result_to_json(res);
    g_autoptr(JsonGenerator) gen = json_generator_new();
    json_generator_set_pretty(gen, TRUE);
    json_generator_set_root(gen, root);
    if (!g_file_set_contents(md_path, md, -1, error) ||
        !json_generator_to_file(gen, json_path, error)) {
        return FALSE;
    }
    if (res->files->len) {
        g_autofree char *setup = g_build_filename(dir, "setup", NULL);
        if (g_mkdir_with_parents(setup, 0755) != 0) {
            int e = errno;
            g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "cannot create %s: %s",
                        setup, g_strerror(e));
            return FALSE;
        }
        for (guint i = 0; i + 1 < res->files->len; i += 2) {
            g_autofree char *path = g_build_filename(setup, res->files->pdata[i], NULL);
            if (!g_file_set_contents(path, res->files->pdata[i + 1], -1, error)) {
                return FALSE;
            }
        }
    }
    /* Every chart is written; the first error (gnuplot missing) is reported after them. */
    GError *first = NULL;
    for (guint i = 0; i < res->charts->len; i++) {
        GError *local = NULL;
        if (!write_chart(res, res->charts->pdata[i], dir, &local)) {
            if (first == NULL) {
                first = local;
            } else {
                g_error_free(local);
            }
        }
    }
    if (res->timeline) {
        g_autofree char *csv_name = g_strdup_printf("%s-link-timeline.csv", res->name);
        g_autofree char *png_name = g_strdup_printf("%s-link-timeline.png", res->name);
        g_autofree char *csv = g_build_filename(dir, csv_name, NULL);
        g_autofree char *png = g_build_filename(dir, png_name, NULL);
        if (!ms_link_timeline_write_csv(res->timeline, csv, error)) {
            g_clear_error(&first);
            return FALSE;
        }
        MsTime from = 0, to = MS_TIME_NEVER;
        const char *op = NULL;
        ms_link_timeline_overlap(res->timeline, "alltoall", "allreduce", &from, &to, &op);
        g_autofree char *title =
            g_strdup_printf("%s\n%s", res->timeline_title, op ? op : "the first iteration");
        GError *local = NULL;
        if (!ms_link_timeline_plot(res->timeline, png, title, from, to, &local)) {
            if (first == NULL) {
                first = local;
            } else {
                g_error_free(local);
            }
        }
    }
    if (first) {
        g_propagate_error(error, first);
        return FALSE;
    }
    return TRUE;
}
