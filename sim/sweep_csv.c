/* sweep_csv: formatting, splitting and plotting sweep tables. */
#include "sweep_csv.h"
#include "sim/base/json_output.h"

#include <string.h>

#include "sim/base/input_file.h"
#include "sim/base/units.h"
#include "sim/out/plot.h"

G_DEFINE_QUARK(ms_sweep_csv_error_quark, ms_sweep_csv_error)

static const char *const metric_names[] = {
    "iterations",      "step_time_us", "step_p50_us",    "step_p95_us",     "step_p99_us",
    "compute_us",      "a2a_us",       "a2a_forward_us", "a2a_backward_us", "allreduce_us",
    "exposed_comm_us", "comm_wait_us", "a2a_bytes",      "dropped_tokens",  NULL};

const char *const *
ms_sweep_csv_metrics(void)
{
    return metric_names;
}

void
ms_sweep_csv_field(GString *s, const char *v)
{
    if (strpbrk(v, ",\"\n") == NULL) {
        g_string_append(s, v);
        return;
    }
    g_string_append_c(s, '"');
    for (const char *c = v; *c; c++) {
        if (*c == '"') {
            g_string_append_c(s, '"');
        }
        if (*c != '\n') {
            g_string_append_c(s, *c);
        }
    }
    g_string_append_c(s, '"');
}

GPtrArray *
ms_sweep_csv_split(const char *line)
{
    GPtrArray *f = g_ptr_array_new_with_free_func(g_free);
    GString *cur = g_string_new(NULL);
    gboolean quoted = FALSE;
    for (const char *c = line;; c++) {
        if (quoted) {
            if (*c == '"' && c[1] == '"') {
                g_string_append_c(cur, '"');
                c++;
            } else if (*c == '"') {
                quoted = FALSE;
            } else if (*c == '\0') {
                break;
            } else {
                g_string_append_c(cur, *c);
            }
        } else if (*c == '"') {
            quoted = TRUE;
        } else if (*c == ',' || *c == '\0') {
            g_ptr_array_add(f, g_strdup(cur->str));
            g_string_truncate(cur, 0);
            if (*c == '\0') {
                break;
            }
        } else if (*c != '\r') {
            g_string_append_c(cur, *c);
        }
    }
    g_string_free(cur, TRUE);
    return f;
}

char *
ms_sweep_csv_header(const MsSweepGrid *grid)
{
    GString *s = g_string_new("point");
    for (guint a = 0; a < ms_sweep_grid_n_axes(grid); a++) {
        g_string_append_c(s, ',');
        ms_sweep_csv_field(s, ms_sweep_grid_key(grid, a));
    }
    for (guint m = 0; metric_names[m]; m++) {
        g_string_append_printf(s, ",%s", metric_names[m]);
    }
    return g_string_free(s, FALSE);
}

char *
ms_sweep_csv_row(const MsSweepGrid *grid, guint point, const MsResult *res)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "%u", point);
    for (guint a = 0; a < ms_sweep_grid_n_axes(grid); a++) {
        g_string_append_c(s, ',');
        ms_sweep_csv_field(s, ms_sweep_grid_value(grid, point, a));
    }
    MsMetrics m;
    ms_result_mean(res, &m);
    g_string_append_printf(
        s,
        ",%u,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%" G_GUINT64_FORMAT
        ",%" G_GUINT64_FORMAT,
        ms_result_n_iterations(res), m.step_us, ms_result_step_percentile(res, 50),
        ms_result_step_percentile(res, 95), ms_result_step_percentile(res, 99), m.compute_us,
        m.a2a_us, m.a2a_fwd_us, m.a2a_bwd_us, m.allreduce_us, m.exposed_comm_us, m.comm_wait_us,
        m.a2a_bytes, m.dropped_tokens);
    return g_string_free(s, FALSE);
}

/* Where the metrics begin: the last column named iterations (an iterations axis comes before
 * the metric of that name); -1 when there is none. */
static gint
metrics_start(const GPtrArray *head)
{
    gint start = -1;
    for (guint c = 1; c < head->len; c++) {
        start = strcmp(head->pdata[c], "iterations") == 0 ? (gint)c : start;
    }
    return start;
}

/* Draws DIR/sweep-KEY.png for axis a of the table. */
static gboolean
plot_axis(const GPtrArray *head, const GPtrArray *rows, guint n_axes, guint a, guint step_col,
          const char *dir, GError **error)
{
    const char *key = head->pdata[1 + a];
    g_autofree char *file = g_strdup_printf("sweep-%s.png", key);
    g_autofree char *path = g_build_filename(dir, file, NULL);
    g_autofree char *title = g_strdup_printf("moesim sweep: step time against %s", key);
    g_autoptr(MsPlot) p = ms_plot_new(path, title, 1000, 600);
    ms_plot_set(p, "set xlabel '%s'", key);
    ms_plot_set(p, "set ylabel 'step (batch) time (ms)'");
    ms_plot_set(p, "set key outside right top");
    /* One line per combination of the other axes, in first-seen order. */
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint r = 0; r < rows->len; r++) {
        GPtrArray *f = rows->pdata[r];
        GString *name = g_string_new(NULL);
        for (guint b = 0; b < n_axes; b++) {
            if (b != a) {
                g_string_append_printf(name, "%s%s=%s", name->len ? " " : "",
                                       (char *)head->pdata[1 + b], (char *)f->pdata[1 + b]);
            }
        }
        guint s = 0;
        while (s < names->len && strcmp(names->pdata[s], name->str) != 0) {
            s++;
        }
        if (s == names->len) {
            g_ptr_array_add(names, g_strdup(name->str));
            guint id = ms_plot_series(p, name->len ? name->str : "step time", "1:2",
                                      "linespoints lw 2 pt 7");
            g_array_append_val(ids, id);
        }
        g_string_free(name, TRUE);
        double row[2] = {g_ascii_strtod(f->pdata[1 + a], NULL),
                         g_ascii_strtod(f->pdata[step_col], NULL) / 1e3};
        ms_plot_row(p, g_array_index(ids, guint, s), row, 2, NULL);
    }
    return ms_plot_render(p, error);
}

gboolean
ms_sweep_csv_plot(const char *csv, const char *dir, GError **error)
{
    g_autofree char *text = NULL;
    g_autoptr(GError) local = NULL;
    if (!ms_input_file_read(csv, MS_INPUT_SWEEP_CSV, &text, NULL, &local)) {
        g_set_error(error, MS_SWEEP_CSV_ERROR, MS_SWEEP_CSV_ERROR_IO, "%s", local->message);
        return FALSE;
    }
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_autoptr(GPtrArray) head = ms_sweep_csv_split(lines[0] ? lines[0] : "");
    gint start = metrics_start(head);
    guint n_axes = start > 0 ? (guint)start - 1 : 0, step_col = 0;
    for (guint c = 0; c < head->len; c++) {
        if (!strcmp(head->pdata[c], "step_time_us")) {
            step_col = c;
        }
    }
    g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
    for (guint i = 1; lines[i]; i++) {
        if (lines[i][0]) {
            g_ptr_array_add(rows, ms_sweep_csv_split(lines[i]));
        }
    }
    for (guint a = 0; a < n_axes; a++) {
        gboolean numeric = rows->len > 1;
        for (guint r = 0; r < rows->len && numeric; r++) {
            GPtrArray *f = rows->pdata[r];
            double v;
            numeric =
                f->len == head->len && ms_parse_double(f->pdata[1 + a], -1e300, 1e300, &v, NULL);
        }
        if (numeric && !plot_axis(head, rows, n_axes, a, step_col, dir, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

/* Columns whose values are counts: integers in JSON. */
static gboolean
is_count(const char *column)
{
    static const char *const counts[] = {"point", "iterations", "a2a_bytes", "dropped_tokens",
                                         NULL};
    return g_strv_contains(counts, column);
}

static gboolean
add_cell(JsonBuilder *b, const char *column, const char *text, gboolean is_axis, const char *path,
         guint line, GError **error)
{
    json_builder_set_member_name(b, column);
    if (is_axis) {
        json_builder_add_string_value(b, text);
        return TRUE;
    }
    double v;
    if (!ms_parse_double(text, -1e300, 1e300, &v, NULL)) {
        g_set_error(error, MS_SWEEP_CSV_ERROR, MS_SWEEP_CSV_ERROR_FORMAT,
                    "%s:%u: %s '%s' is not a number", path, line, column, text);
        return FALSE;
    }
    if (is_count(column)) {
        json_builder_add_int_value(b, (gint64)v);
    } else {
        json_builder_add_double_value(b, v);
    }
    return TRUE;
}

JsonNode *
ms_sweep_csv_to_json(const char *path, GError **error)
{
    g_autofree char *text = NULL;
    g_autoptr(GError) local = NULL;
    if (!ms_input_file_read(path, MS_INPUT_SWEEP_CSV, &text, NULL, &local)) {
        g_set_error(error, MS_SWEEP_CSV_ERROR, MS_SWEEP_CSV_ERROR_IO, "%s", local->message);
        return NULL;
    }
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_autoptr(GPtrArray) head = ms_sweep_csv_split(lines[0] ? lines[0] : "");
    gint start = metrics_start(head);
    if (head->len < 2 || strcmp(head->pdata[0], "point") != 0 || start < 0) {
        g_set_error(error, MS_SWEEP_CSV_ERROR, MS_SWEEP_CSV_ERROR_FORMAT,
                    "%s:1: not a sweep table (point, the axes, iterations, ...)", path);
        return NULL;
    }
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    ms_json_member_string(b, "schema", "moesim.sweep/1"); /* docs/outputs.md */
    json_builder_set_member_name(b, "format");
    json_builder_add_string_value(b, "moesim-sweep");
    json_builder_set_member_name(b, "version");
    json_builder_add_int_value(b, 1);
    const char *const groups[] = {"axes", "metrics"};
    for (guint g = 0; g < 2; g++) {
        json_builder_set_member_name(b, groups[g]);
        json_builder_begin_array(b);
        for (guint c = g ? (guint)start : 1; c < (g ? head->len : (guint)start); c++) {
            json_builder_add_string_value(b, head->pdata[c]);
        }
        json_builder_end_array(b);
    }
    json_builder_set_member_name(b, "rows");
    json_builder_begin_array(b);
    for (guint i = 1; lines[i]; i++) {
        if (lines[i][0] == '\0') {
            continue;
        }
        g_autoptr(GPtrArray) f = ms_sweep_csv_split(lines[i]);
        if (f->len != head->len) {
            g_set_error(error, MS_SWEEP_CSV_ERROR, MS_SWEEP_CSV_ERROR_FORMAT,
                        "%s:%u: %u fields, the header has %u", path, i + 1, f->len, head->len);
            return NULL;
        }
        json_builder_begin_object(b);
        if (!add_cell(b, "point", f->pdata[0], FALSE, path, i + 1, error)) {
            return NULL;
        }
        for (guint g = 0; g < 2; g++) {
            json_builder_set_member_name(b, groups[g]);
            json_builder_begin_object(b);
            for (guint c = g ? (guint)start : 1; c < (g ? head->len : (guint)start); c++) {
                if (!add_cell(b, head->pdata[c], f->pdata[c], !g, path, i + 1, error)) {
                    return NULL;
                }
            }
            json_builder_end_object(b);
        }
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    return json_builder_get_root(b);
}
