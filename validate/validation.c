/* validation: pairing ops of two runs, Kendall's tau, and the validation plots. */
#include "validation.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "sim/out/plot.h"

G_DEFINE_QUARK(ms-validation-error-quark, ms_validation_error)

JsonNode *
ms_result_file_load(const char *path, GError **error)
{
    g_autoptr(JsonParser) p = json_parser_new();
    g_autoptr(GError) local = NULL;
    if (!json_parser_load_from_file(p, path, &local)) {
        g_set_error(error, MS_VALIDATION_ERROR, MS_VALIDATION_ERROR_FORMAT, "%s: %s", path,
                    local->message);
        return NULL;
    }
    JsonNode *root = json_parser_get_root(p);
    JsonObject *o = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    if (o == NULL || g_strcmp0(json_object_get_string_member_with_default(o, "format", ""),
                               "moesim-result") != 0) {
        g_set_error(error, MS_VALIDATION_ERROR, MS_VALIDATION_ERROR_FORMAT,
                    "%s: not a moesim result (write one with `moesim run --json` or "
                    "`moesim exec --json`)",
                    path);
        return NULL;
    }
    if (!json_object_has_member(o, "ops") ||
        !JSON_NODE_HOLDS_ARRAY(json_object_get_member(o, "ops"))) {
        g_set_error(error, MS_VALIDATION_ERROR, MS_VALIDATION_ERROR_FORMAT,
                    "%s: the result has no per-op records", path);
        return NULL;
    }
    return json_node_copy(root);
}

static double
step_us(JsonObject *o)
{
    JsonObject *s = json_object_get_object_member(o, "summary");
    return s ? json_object_get_double_member_with_default(s, "step_time_us", 0) : 0;
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
    cmp->step_predicted_us = step_us(so);
    cmp->step_measured_us = step_us(mo);
    cmp->policy = json_object_get_string_member_with_default(so, "policy", "?");
    for (guint i = 0; i < json_array_get_length(sa); i++) {
        JsonObject *a = json_array_get_object_element(sa, i);
        JsonObject *b = json_array_get_object_element(ma, i);
        const char *la = json_object_get_string_member_with_default(a, "label", "");
        const char *lb = json_object_get_string_member_with_default(b, "label", "");
        if (json_object_get_int_member_with_default(a, "id", -1) !=
                json_object_get_int_member_with_default(b, "id", -2) ||
            strcmp(la, lb) != 0) {
            g_set_error(error, MS_VALIDATION_ERROR, MS_VALIDATION_ERROR_MISMATCH,
                        "op %u differs ('%s' against '%s'): the results come from different "
                        "schedules",
                        i, la, lb);
            ms_run_comparison_clear(cmp);
            return FALSE;
        }
        double p = json_object_get_double_member_with_default(a, "end_us", 0) -
                   json_object_get_double_member_with_default(a, "start_us", 0);
        double m = json_object_get_double_member_with_default(b, "end_us", 0) -
                   json_object_get_double_member_with_default(b, "start_us", 0);
        if (!(m > min_us) || !isfinite(p)) {
            continue;
        }
        MsOpPair pair = {i, la, json_object_get_string_member_with_default(a, "role", ""), p, m};
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

gboolean
ms_validation_plots(const char *dir, const char *title, const double *predicted,
                    const double *measured, guint n, GError **error)
{
    if (g_mkdir_with_parents(dir, 0755) != 0) {
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot create %s: %s",
                    dir, g_strerror(errno));
        return FALSE;
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
    guint pts = ms_plot_series(sc, "operations", "1:2", "points pt 7 ps 0.5 lc rgb '#1f77b4'");
    for (guint i = 0; i < n; i++) {
        double row[2] = {measured[i], predicted[i]};
        ms_plot_row(sc, pts, row, 2, NULL);
    }
    guint diag = ms_plot_series(sc, "y = x", "1:2", "lines lw 2 lc rgb '#d62728'");
    double a[2] = {lo, lo}, b[2] = {hi, hi};
    ms_plot_row(sc, diag, a, 2, NULL);
    ms_plot_row(sc, diag, b, 2, NULL);
    if (!ms_plot_render(sc, error)) {
        return FALSE;
    }
    g_autofree char *hist_path = g_build_filename(dir, "errors.png", NULL);
    g_autoptr(MsPlot) h = ms_plot_new(hist_path, title, 800, 500);
    ms_plot_set(h, "set xlabel 'relative error: predicted / measured - 1 (%%)'");
    ms_plot_set(h, "set ylabel 'operations'");
    ms_plot_set(h, "set style fill solid 0.6");
    ms_plot_set(h, "set boxwidth 1.8");
    guint bins = 51;
    g_autofree double *count = g_new0(double, bins);
    for (guint i = 0; i < n; i++) {
        double e = 100 * (predicted[i] / measured[i] - 1);
        gint k = (gint)floor((CLAMP(e, -50, 50) + 51) / 2);
        count[CLAMP(k, 0, (gint)bins - 1)]++;
    }
    guint hs = ms_plot_series(h, "errors (clamped to +-50%)", "1:2", "boxes lc rgb '#2ca02c'");
    for (guint k = 0; k < bins; k++) {
        double row[2] = {-50.0 + 2.0 * k, count[k]};
        ms_plot_row(h, hs, row, 2, NULL);
    }
    return ms_plot_render(h, error);
}
