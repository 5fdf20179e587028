/* plot: gnuplot scripts with inline data blocks, rendered by a child gnuplot process. */
#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "sim/base/output_file.h"

G_DEFINE_QUARK(ms_plot_error_quark, ms_plot_error)

typedef struct {
    char *name, *using_cols, *style;
    GString *data;
} Series;

struct _MsPlot {
    char *path;
    char *title;
    guint width, height;
    GPtrArray *settings;
    GPtrArray *series;
};

static void
series_free(gpointer p)
{
    Series *s = p;
    g_free(s->name);
    g_free(s->using_cols);
    g_free(s->style);
    g_string_free(s->data, TRUE);
    g_free(s);
}

MsPlot *
ms_plot_new(const char *path, const char *title, guint width, guint height)
{
    MsPlot *p = g_new0(MsPlot, 1);
    p->path = g_strdup(path);
    p->title = g_strdup(title ? title : "");
    p->width = width ? width : 1000;
    p->height = height ? height : 600;
    p->settings = g_ptr_array_new_with_free_func(g_free);
    p->series = g_ptr_array_new_with_free_func(series_free);
    return p;
}

void
ms_plot_free(MsPlot *p)
{
    if (p == NULL) {
        return;
    }
    g_free(p->path);
    g_free(p->title);
    g_ptr_array_unref(p->settings);
    g_ptr_array_unref(p->series);
    g_free(p);
}

void
ms_plot_set(MsPlot *p, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_ptr_array_add(p->settings, g_strdup_vprintf(format, ap));
    va_end(ap);
}

guint
ms_plot_series(MsPlot *p, const char *name, const char *using_cols, const char *style)
{
    Series *s = g_new0(Series, 1);
    s->name = g_strdup(name ? name : "");
    s->using_cols = g_strdup(using_cols);
    s->style = g_strdup(style);
    s->data = g_string_new(NULL);
    g_ptr_array_add(p->series, s);
    return p->series->len - 1;
}

/* Quotes text for a gnuplot string in single quotes (a quote is doubled). */
static char *
quote(const char *text)
{
    GString *o = g_string_new("'");
    for (const char *c = text; *c; c++) {
        if (*c == '\'') {
            g_string_append(o, "''");
        } else if (*c != '\n') {
            g_string_append_c(o, *c);
        }
    }
    g_string_append_c(o, '\'');
    return g_string_free(o, FALSE);
}

/* A title for gnuplot: single quotes, or double quotes with escapes when it has several lines
 * (gnuplot reads \n as a line break only there). */
static char *
quote_title(const char *text)
{
    if (strchr(text, '\n') == NULL) {
        return quote(text);
    }
    GString *o = g_string_new("\"");
    for (const char *c = text; *c; c++) {
        if (*c == '\n') {
            g_string_append(o, "\\n");
        } else if (*c == '"' || *c == '\\') {
            g_string_append_c(o, '\\');
            g_string_append_c(o, *c);
        } else {
            g_string_append_c(o, *c);
        }
    }
    g_string_append_c(o, '"');
    return g_string_free(o, FALSE);
}

void
ms_plot_row(MsPlot *p, guint series, const double *values, guint n, const char *label)
{
    g_return_if_fail(series < p->series->len);
    Series *s = p->series->pdata[series];
    /* Ten digits are more than a plot resolves and keep the inline data readable. */
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    for (guint i = 0; i < n; i++) {
        const char *v =
            isfinite(values[i]) ? g_ascii_formatd(buf, sizeof buf, "%.10g", values[i]) : "NaN";
        g_string_append_printf(s->data, "%s%s", i ? " " : "", v);
    }
    if (label) {
        GString *l = g_string_new("\"");
        for (const char *c = label; *c; c++) {
            g_string_append_c(l, *c == '"' ? '\'' : *c);
        }
        g_string_append_c(l, '"');
        g_string_append_printf(s->data, " %s", l->str);
        g_string_free(l, TRUE);
    }
    g_string_append_c(s->data, '\n');
}

gboolean
ms_plot_available(void)
{
    g_autofree char *found = g_find_program_in_path(MOESIM_GNUPLOT);
    return found != NULL;
}

static char *
script(const MsPlot *p, gboolean svg)
{
    GString *g = g_string_new("# moesim figure: run `gnuplot THIS_FILE` to render it again\n");
    g_autofree char *out = quote(p->path);
    g_autofree char *title = quote_title(p->title);
    g_string_append_printf(g, "set terminal %s size %u,%u font 'Sans,11'%s\n",
                           svg ? "svg" : "pngcairo", p->width, p->height,
                           svg ? " dynamic background rgb 'white'" : " background rgb 'white'");
    g_string_append_printf(g, "set output %s\nset title %s noenhanced\n", out, title);
    g_string_append(g, "set key noenhanced\nset grid back lc rgb '#dddddd'\n");
    for (guint i = 0; i < p->settings->len; i++) {
        g_string_append_printf(g, "%s\n", (const char *)p->settings->pdata[i]);
    }
    for (guint i = 0; i < p->series->len; i++) {
        const Series *s = p->series->pdata[i];
        g_string_append_printf(g, "$d%u << EOD\n%sEOD\n", i, s->data->str);
    }
    g_string_append(g, "plot ");
    for (guint i = 0; i < p->series->len; i++) {
        const Series *s = p->series->pdata[i];
        g_autofree char *name = quote(s->name);
        g_string_append_printf(g, "%s$d%u using %s with %s title %s", i ? ", \\\n     " : "", i,
                               s->using_cols, s->style, name);
    }
    g_string_append(g, "\n");
    return g_string_free(g, FALSE);
}

gboolean
ms_plot_render(MsPlot *p, GError **error)
{
    gboolean svg = g_str_has_suffix(p->path, ".svg");
    if (!svg && !g_str_has_suffix(p->path, ".png")) {
        g_set_error(error, MS_PLOT_ERROR, MS_PLOT_ERROR_FORMAT,
                    "%s: plots are written as .png or .svg", p->path);
        return FALSE;
    }
    if (p->series->len == 0) {
        /* gnuplot needs something to plot: an empty figure says so. */
        ms_plot_set(p, "set label 1 'no data' at graph 0.5,0.5 center");
        guint s = ms_plot_series(p, "", "1:2", "points pt -1");
        double zero[2] = {0, 0};
        ms_plot_row(p, s, zero, 2, NULL);
    }
    g_autofree char *gp = g_strconcat(p->path, ".gp", NULL);
    g_autofree char *text = script(p, svg);
    g_autoptr(GError) local = NULL;
    if (!ms_output_file_set_contents(gp, MS_OUTPUT_REPLACE, text, strlen(text), &local)) {
        g_set_error(error, MS_PLOT_ERROR, MS_PLOT_ERROR_IO, "%s", local->message);
        return FALSE;
    }
    const char *argv[] = {MOESIM_GNUPLOT, gp, NULL};
    g_autofree char *err = NULL;
    int status = 0;
    if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL,
                      NULL, NULL, NULL, &err, &status, &local)) {
        g_set_error(error, MS_PLOT_ERROR, MS_PLOT_ERROR_GNUPLOT,
                    "gnuplot not available (%s); the script is in %s", local->message, gp);
        return FALSE;
    }
    if (!g_spawn_check_wait_status(status, NULL)) {
        g_set_error(error, MS_PLOT_ERROR, MS_PLOT_ERROR_GNUPLOT, "gnuplot failed on %s: %s", gp,
                    err ? g_strstrip(err) : "");
        return FALSE;
    }
    return TRUE;
}
