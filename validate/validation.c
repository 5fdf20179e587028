/* validation: pairing ops of two runs, Kendall's tau, and the validation plots. */
#include "validation.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "sim/base/json_input.h"
#include "sim/out/plot.h"

G_DEFINE_QUARK(ms_validation_error_quark, ms_validation_error)

static gboolean
is_number(JsonNode *n)
{
    if (n == NULL || !JSON_NODE_HOLDS_VALUE(n)) {
        return FALSE;
    }
    GType t = json_node_get_value_type(n);
    return (t == G_TYPE_INT64 || t == G_TYPE_DOUBLE) && isfinite(json_node_get_double(n));
}

static gboolean
is_string(JsonNode *n)
{
    return n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING;
}

static gboolean G_GNUC_PRINTF(3, 4)
    format_error(GError **error, const char *path, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, MS_VALIDATION_ERROR, MS_VALIDATION_ERROR_FORMAT, "%s: %s", path, msg);
    return FALSE;
}

/* An op record: an object with an integer id, a label, and start_us <= end_us. */
static gboolean
check_op(JsonNode *node, guint i, const char *path, GError **error)
{
    JsonObject *o = JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
    if (o == NULL) {
        return format_error(error, path, "op %u is not an object", i);
    }
    JsonNode *id = json_object_get_member(o, "id");
    if (id == NULL || !JSON_NODE_HOLDS_VALUE(id) || json_node_get_value_type(id) != G_TYPE_INT64) {
        return format_error(error, path, "op %u: 'id' is missing or not an integer", i);
    }
    if (!is_string(json_object_get_member(o, "label"))) {
        return format_error(error, path, "op %u: 'label' is missing or not a string", i);
    }
    JsonNode *role = json_object_get_member(o, "role");
    if (role && !is_string(role)) {
        return format_error(error, path, "op %u: 'role' is not a string", i);
    }
    JsonNode *rank = json_object_get_member(o, "rank");
    if (rank && (!JSON_NODE_HOLDS_VALUE(rank) || json_node_get_value_type(rank) != G_TYPE_INT64 ||
                 json_node_get_int(rank) < 0 || json_node_get_int(rank) > G_MAXINT32)) {
        return format_error(error, path, "op %u: 'rank' is not a GPU number", i);
    }
    JsonNode *kind = json_object_get_member(o, "kind");
    if (kind && (!is_string(kind) || (strcmp(json_node_get_string(kind), "compute") != 0 &&
                                      strcmp(json_node_get_string(kind), "comm") != 0))) {
        return format_error(error, path, "op %u: 'kind' is neither \"compute\" nor \"comm\"", i);
    }
    const char *keys[] = {"start_us", "end_us"};
    for (guint k = 0; k < 2; k++) {
        if (!is_number(json_object_get_member(o, keys[k]))) {
            return format_error(error, path, "op %u: '%s' is missing or not a finite number", i,
                                keys[k]);
        }
    }
    double start = json_object_get_double_member(o, "start_us");
    double end = json_object_get_double_member(o, "end_us");
    if (end < start) {
        return format_error(error, path, "op %u: end_us %g is before start_us %g", i, end, start);
    }
    if (!isfinite(end - start)) {
        return format_error(error, path, "op %u: end_us %g - start_us %g is not a finite time", i,
                            end, start);
    }
    return TRUE;
}

/* The members ms_compare_runs reads besides the ops: an optional policy name and an optional
 * summary object with a numeric step_time_us. */
static gboolean
check_summary(JsonObject *o, const char *path, GError **error)
{
    JsonNode *policy = json_object_get_member(o, "policy");
    if (policy && !is_string(policy)) {
        return format_error(error, path, "'policy' is not a string");
    }
    JsonNode *summary = json_object_get_member(o, "summary");
    if (summary == NULL) {
        return TRUE;
    }
    JsonNode *step = JSON_NODE_HOLDS_OBJECT(summary)
                         ? json_object_get_member(json_node_get_object(summary), "step_time_us")
                         : NULL;
    if (step == NULL || !is_number(step)) {
        return format_error(error, path, "'summary' has no numeric step_time_us");
    }
    JsonNode *wait = json_object_get_member(json_node_get_object(summary), "comm_wait_us");
    if (wait && !is_number(wait)) {
        return format_error(error, path, "'summary' has a comm_wait_us that is not a number");
    }
    return TRUE;
}

JsonNode *
ms_result_file_load(const char *path, GError **error)
{
    g_autoptr(JsonParser) p = json_parser_new();
    g_autoptr(GError) local = NULL;
    if (!ms_json_input_load_file(p, path, MS_INPUT_RESULT, &local)) {
        format_error(error, path, "%s", local->message);
        return NULL;
    }
    return ms_result_check(json_parser_get_root(p), path, error);
}

JsonNode *
ms_result_check(JsonNode *root, const char *path, GError **error)
{
    JsonObject *o = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    if (o == NULL || !is_string(json_object_get_member(o, "format")) ||
        strcmp(json_object_get_string_member(o, "format"), "moesim-result") != 0) {
        format_error(error, path,
                     "not a moesim result (write one with `moesim run --json` or "
                     "`moesim exec --json`)");
        return NULL;
    }
    JsonNode *ops = json_object_get_member(o, "ops");
    if (ops == NULL || !JSON_NODE_HOLDS_ARRAY(ops)) {
        format_error(error, path, "the result has no per-op records");
        return NULL;
    }
    JsonArray *a = json_node_get_array(ops);
    for (guint i = 0; i < json_array_get_length(a); i++) {
        if (!check_op(json_array_get_element(a, i), i, path, error)) {
            return NULL;
        }
    }
    if (!check_summary(o, path, error)) {
        return NULL;
    }
    return json_node_copy(root);
}

/* A figure of the summary; fallback for a result without a summary or without the figure
 * (ms_result_file_load checked the rest). */
static double
summary_us(JsonObject *o, const char *key, double fallback)
{
    if (!json_object_has_member(o, "summary")) {
        return fallback;
    }
    JsonObject *s = json_object_get_object_member(o, "summary");
    return json_object_has_member(s, key) ? json_object_get_double_member(s, key) : fallback;
}

gboolean
ms_compare_runs(JsonNode *simulated, JsonNode *measured, double min_us, MsRunComparison *cmp,
                GError **error)
{
    JsonObject *so = json_node_get_object(simulated), *mo = json_node_get_object(measured);
    JsonArray *sa = json_object_get_array_member(so, "ops");
    JsonArray *ma = json_object_get_array_member(mo, "ops");
    memset(cmp, 0, sizeof *cmp);
    if (json_array_get_length(sa) != json_array_get_length(ma)) {
        g_set_error(error, MS_VALIDATION_ERROR, MS_VALIDATION_ERROR_MISMATCH,
                    "the results have %u and %u ops: they come from different schedules",
                    json_array_get_length(sa), json_array_get_length(ma));
        return FALSE;
    }
    cmp->ops = g_array_new(FALSE, FALSE, sizeof(MsOpPair));
    cmp->step_predicted_us = summary_us(so, "step_time_us", 0);
    cmp->step_measured_us = summary_us(mo, "step_time_us", 0);
    cmp->wait_predicted_us = summary_us(so, "comm_wait_us", NAN);
    cmp->wait_measured_us = summary_us(mo, "comm_wait_us", NAN);
    cmp->policy = json_object_get_string_member_with_default(so, "policy", "?");
    for (guint i = 0; i < json_array_get_length(sa); i++) {
        JsonObject *a = json_array_get_object_element(sa, i);
        JsonObject *b = json_array_get_object_element(ma, i);
        const char *la = json_object_get_string_member(a, "label");
        const char *lb = json_object_get_string_member(b, "label");
        gint64 ia = json_object_get_int_member(a, "id"), ib = json_object_get_int_member(b, "id");
        if (ia != ib || strcmp(la, lb) != 0) {
            g_set_error(error, MS_VALIDATION_ERROR, MS_VALIDATION_ERROR_MISMATCH,
                        "op %u differs (id %" G_GINT64_FORMAT " '%s' against id %" G_GINT64_FORMAT
                        " '%s'): the results come from different schedules",
                        i, ia, la, ib, lb);
            ms_run_comparison_clear(cmp);
            return FALSE;
        }
        /* ms_result_file_load checked that both times are there and finite. */
        double p = json_object_get_double_member(a, "end_us") -
                   json_object_get_double_member(a, "start_us");
        double m = json_object_get_double_member(b, "end_us") -
                   json_object_get_double_member(b, "start_us");
        if (!(m > min_us)) {
            continue;
        }
        const char *kind = json_object_get_string_member_with_default(a, "kind", "");
        MsOpPair pair = {i,
                         la,
                         json_object_get_string_member_with_default(a, "role", ""),
                         p,
                         m,
                         json_object_get_int_member_with_default(a, "rank", -1),
                         !strcmp(kind, "compute")};
        g_array_append_val(cmp->ops, pair);
    }
    return TRUE;
}

void
ms_run_comparison_clear(MsRunComparison *cmp)
{
    if (cmp->ops) {
        g_array_unref(cmp->ops);
    }
    memset(cmp, 0, sizeof *cmp);
}

double
ms_kendall_tau(const double *a, const double *b, guint n)
{
    double concordant = 0, discordant = 0, ties_a = 0, ties_b = 0;
    for (guint i = 0; i < n; i++) {
        for (guint j = i + 1; j < n; j++) {
            double da = a[i] - a[j], db = b[i] - b[j];
            if (da == 0 && db == 0) {
                continue;
            }
            if (da == 0) {
                ties_a++;
            } else if (db == 0) {
                ties_b++;
            } else if ((da > 0) == (db > 0)) {
                concordant++;
            } else {
                discordant++;
            }
        }
    }
    double denom = sqrt((concordant + discordant + ties_a) * (concordant + discordant + ties_b));
    return denom > 0 ? (concordant - discordant) / denom : 0;
}

/* One colour and point type per configuration (matplotlib's tab10 colours). */
static const char *const group_colour[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                           "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
static const guint group_point[] = {7, 5, 9, 11, 13};

/* The plots' folder, created with its parents. */
static gboolean
make_dir(const char *dir, GError **error)
{
    if (g_mkdir_with_parents(dir, 0755) != 0) {
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot create %s: %s",
                    dir, g_strerror(errno));
        return FALSE;
    }
    return TRUE;
}

gboolean
ms_validation_plots(const char *dir, const char *title, const MsPlotGroup *groups, guint n_groups,
                    const double *predicted, const double *measured, guint n, GError **error)
{
    if (!make_dir(dir, error)) {
        return FALSE;
    }
    MsPlotGroup all = {"operations", n};
    if (n_groups == 0) {
        groups = &all;
        n_groups = 1;
    }
    g_autofree char *scatter_path = g_build_filename(dir, "scatter.png", NULL);
    g_autoptr(MsPlot) sc = ms_plot_new(scatter_path, title, 800, 700);
    double lo = G_MAXDOUBLE, hi = 0;
    for (guint i = 0; i < n; i++) {
        lo = MIN(lo, MIN(predicted[i], measured[i]));
        hi = MAX(hi, MAX(predicted[i], measured[i]));
    }
    ms_plot_set(sc, "set logscale xy");
    ms_plot_set(sc, "set xlabel 'measured (us)'");
    ms_plot_set(sc, "set ylabel 'predicted (us)'");
    ms_plot_set(sc, "set key top left");
    for (guint g = 0, first = 0; g < n_groups; first += groups[g].n, g++) {
        g_autofree char *style = g_strdup_printf("points pt %u ps 0.6 lc rgb '%s'",
                                                 group_point[g % G_N_ELEMENTS(group_point)],
                                                 group_colour[g % G_N_ELEMENTS(group_colour)]);
        guint pts = ms_plot_series(sc, groups[g].name, "1:2", style);
        for (guint i = first; i < first + groups[g].n && i < n; i++) {
            double row[2] = {measured[i], predicted[i]};
            ms_plot_row(sc, pts, row, 2, NULL);
        }
    }
    guint diag = ms_plot_series(sc, "y = x", "1:2", "lines lw 2 lc rgb '#000000'");
    double a[2] = {lo, lo}, b[2] = {hi, hi};
    ms_plot_row(sc, diag, a, 2, NULL);
    ms_plot_row(sc, diag, b, 2, NULL);
    if (!ms_plot_render(sc, error)) {
        return FALSE;
    }
    g_autofree char *hist_path = g_build_filename(dir, "errors.png", NULL);
    g_autoptr(MsPlot) h = ms_plot_new(hist_path, title, 800, 500);
    ms_plot_set(h, "set xlabel 'relative error: predicted / measured - 1 (%%), clamped to +-50%%'");
    ms_plot_set(h, "set ylabel 'operations'");
    ms_plot_set(h, "set style fill solid 0.8 border -1");
    ms_plot_set(h, "set boxwidth 1.8");
    /* Stacked: each configuration's boxes reach its running total, the last drawn first so
     * every one shows; the legend is inverted back into the groups' order. */
    ms_plot_set(h, "set key invert");
    guint bins = 51;
    g_autofree double *count = g_new0(double, (gsize)bins *n_groups);
    for (guint g = 0, first = 0; g < n_groups; first += groups[g].n, g++) {
        for (guint i = first; i < first + groups[g].n && i < n; i++) {
            double e = 100 * (predicted[i] / measured[i] - 1);
            gint k = (gint)floor((CLAMP(e, -50, 50) + 51) / 2);
            count[(gsize)g * bins + CLAMP(k, 0, (gint)bins - 1)]++;
        }
        for (guint k = 0; g > 0 && k < bins; k++) {
            count[(gsize)g * bins + k] += count[(gsize)(g - 1) * bins + k];
        }
    }
    for (guint g = n_groups; g-- > 0;) {
        g_autofree char *style =
            g_strdup_printf("boxes lc rgb '%s'", group_colour[g % G_N_ELEMENTS(group_colour)]);
        guint hs = ms_plot_series(h, groups[g].name, "1:2", style);
        for (guint k = 0; k < bins; k++) {
            double row[2] = {-50.0 + 2.0 * k, count[(gsize)g * bins + k]};
            ms_plot_row(h, hs, row, 2, NULL);
        }
    }
    return ms_plot_render(h, error);
}

/* Dash types of the predictions, a model each: solid, dashed, dotted, dash-dot. */
static const guint model_dash[] = {1, 2, 3, 4};

/* The items of a group with a bus bandwidth, ordered by size (stable: a log's repeated sizes keep
 * their order), into idx; how many. */
static guint
curve_items(const double *size, const double *factor, const double *measured, guint first,
            guint count, guint *idx)
{
    guint k = 0;
    for (guint i = first; i < first + count; i++) {
        if (!(size[i] > 0 && factor[i] > 0 && measured[i] > 0)) {
            continue;
        }
        guint j = k++;
        for (; j > 0 && size[idx[j - 1]] > size[i]; j--) {
            idx[j] = idx[j - 1];
        }
        idx[j] = i;
    }
    return k;
}

/* Size tics at powers of two, labelled in binary units, with a step that keeps at most 12 of
 * them over the sizes drawn. */
static void
size_ticks(MsPlot *p, const double *size, guint n)
{
    double lo = G_MAXDOUBLE, hi = 0;
    for (guint i = 0; i < n; i++) {
        if (size[i] > 0) {
            lo = MIN(lo, size[i]);
            hi = MAX(hi, size[i]);
        }
    }
    if (hi == 0) {
        return;
    }
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    gint first = (gint)floor(log2(lo)), last = (gint)ceil(log2(hi));
    gint step = MAX(1, (last - first + 11) / 12);
    GString *t = g_string_new("set xtics (");
    for (gint e = first; e <= last; e += step) {
        gint u = MIN(e / 10, (gint)G_N_ELEMENTS(unit) - 1);
        g_string_append_printf(t, "%s'%.0f %s' %.0f", e > first ? ", " : "", ldexp(1, e - 10 * u),
                               unit[u], ldexp(1, e));
    }
    g_string_append(t, ")");
    ms_plot_set(p, "%s", t->str);
    g_string_free(t, TRUE);
}

gboolean
ms_validation_curves(const char *dir, const char *title, const MsPlotGroup *groups, guint n_groups,
                     const double *size, const double *factor, const double *measured,
                     const MsPlotModel *models, guint n_models, guint n, GError **error)
{
    if (!make_dir(dir, error)) {
        return FALSE;
    }
    g_autofree char *path = g_build_filename(dir, "curves.png", NULL);
    g_autoptr(MsPlot) p = ms_plot_new(path, title, 1300, 820);
    ms_plot_set(p, "set logscale x 2");
    size_ticks(p, size, n);
    ms_plot_set(p, "set xlabel 'size (bytes, as nccl-tests counts them)'");
    ms_plot_set(p, "set ylabel 'bus bandwidth (GB/s, nccl-tests busbw)'");
    ms_plot_set(p, "set yrange [0:*]");
    ms_plot_set(p, "set grid");
    /* Outside the plot: a legend entry per group and model would hide the curves. */
    ms_plot_set(p, "set key outside right top Left reverse samplen 3 font ',9'");
    ms_plot_set(p, "set key title 'kind ranks x ranks per node' font ',9'");
    /* Room for the smallest and largest sizes' points at the edges. */
    ms_plot_set(p, "set offsets graph 0.02, graph 0.02, 0, 0");
    g_autofree guint *idx = g_new(guint, MAX(n, 1));
    for (guint g = 0, first = 0; g < n_groups; first += groups[g].n, g++) {
        guint k = curve_items(size, factor, measured, first, MIN(groups[g].n, n - first), idx);
        if (k == 0) {
            continue;
        }
        const char *colour = group_colour[g % G_N_ELEMENTS(group_colour)];
        g_autofree char *pts_style = g_strdup_printf(
            "points pt %u ps 1.2 lc rgb '%s'", group_point[g % G_N_ELEMENTS(group_point)], colour);
        g_autofree char *pts_name = g_strdup_printf("%s measured", groups[g].name);
        guint pts = ms_plot_series(p, pts_name, "1:2", pts_style);
        for (guint j = 0; j < k; j++) {
            guint i = idx[j];
            double row[2] = {size[i], size[i] / measured[i] * factor[i] / 1e3};
            ms_plot_row(p, pts, row, 2, NULL);
        }
        for (guint m = 0; m < n_models; m++) {
            g_autofree char *style = g_strdup_printf(
                "lines lw 2 dt %u lc rgb '%s'", model_dash[m % G_N_ELEMENTS(model_dash)], colour);
            g_autofree char *name = g_strdup_printf("%s %s", groups[g].name, models[m].name);
            guint line = ms_plot_series(p, name, "1:2", style);
            for (guint j = 0; j < k; j++) {
                guint i = idx[j];
                double t = models[m].predicted[i];
                /* A prediction of no time has no bandwidth to draw. */
                if (t > 0) {
                    double row[2] = {size[i], size[i] / t * factor[i] / 1e3};
                    ms_plot_row(p, line, row, 2, NULL);
                }
            }
        }
    }
    return ms_plot_render(p, error);
}
