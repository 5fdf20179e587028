/* cmd_validate: `moesim validate`: simulated against measured, op by op and end to end, with
 * policy ranking agreement, plots, and a bound for CI. */
#include "cli.h"
#include "commands.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "validate/calibrate.h"
#include "validate/validation.h"

typedef struct {
    GArray *pred, *meas; /* double, all compared items */
    JsonBuilder *json;
} Totals;

static gboolean
compare_results(char **sims, char **meas, double min_us, Totals *t, GError **error)
{
    guint n = g_strv_length(sims);
    g_autofree double *step_p = g_new(double, n);
    g_autofree double *step_m = g_new(double, n);
    printf("%-12s %7s %9s %9s %9s %13s %13s %8s\n", "policy", "ops", "median", "p90", "max",
           "step sim(us)", "step meas(us)", "step err");
    json_builder_set_member_name(t->json, "runs");
    json_builder_begin_array(t->json);
    for (guint i = 0; i < n; i++) {
        g_autoptr(JsonNode) a = ms_result_file_load(sims[i], error);
        g_autoptr(JsonNode) b = a ? ms_result_file_load(meas[i], error) : NULL;
        MsRunComparison cmp;
        if (b == NULL) {
            return FALSE;
        }
        if (!ms_compare_runs(a, b, min_us, &cmp, error)) {
            g_prefix_error(error, "%s against %s: ", sims[i], meas[i]);
            return FALSE;
        }
        guint k = cmp.ops->len;
        if (k == 0) {
            g_set_error(error, MS_VALIDATION_ERROR, MS_VALIDATION_ERROR_MISMATCH,
                        "%s against %s: no op measured longer than --min-op (%g us): nothing to "
                        "compare",
                        sims[i], meas[i], min_us);
            ms_run_comparison_clear(&cmp);
            return FALSE;
        }
        g_autofree double *p = g_new(double, MAX(k, 1));
        g_autofree double *m = g_new(double, MAX(k, 1));
        for (guint j = 0; j < k; j++) {
            const MsOpPair *op = &g_array_index(cmp.ops, MsOpPair, j);
            p[j] = op->predicted_us;
            m[j] = op->measured_us;
        }
        g_array_append_vals(t->pred, p, k);
        g_array_append_vals(t->meas, m, k);
        MsErrorStats st = {0};
        if (!ms_error_stats(p, m, k, &st, error)) {
            ms_run_comparison_clear(&cmp);
            return FALSE;
        }
        step_p[i] = cmp.step_predicted_us;
        step_m[i] = cmp.step_measured_us;
        double step_err = step_m[i] > 0 ? step_p[i] / step_m[i] - 1 : NAN;
        printf("%-12s %7u %8.2f%% %8.2f%% %8.2f%% %13.1f %13.1f %7.2f%%\n", cmp.policy, k,
               100 * st.median, 100 * st.p90, 100 * st.max, step_p[i], step_m[i], 100 * step_err);
        json_builder_begin_object(t->json);
        json_builder_set_member_name(t->json, "policy");
        json_builder_add_string_value(t->json, cmp.policy);
        ms_cli_json_error_stats(t->json, "ops", &st);
        json_builder_set_member_name(t->json, "step_simulated_us");
        json_builder_add_double_value(t->json, step_p[i]);
        json_builder_set_member_name(t->json, "step_measured_us");
        json_builder_add_double_value(t->json, step_m[i]);
        json_builder_end_object(t->json);
        ms_run_comparison_clear(&cmp);
    }
    json_builder_end_array(t->json);
    if (n >= 2) {
        double tau = ms_kendall_tau(step_p, step_m, n);
        printf("ranking of the %u runs by step time: Kendall tau %.3f (1 = same order)\n", n, tau);
        json_builder_set_member_name(t->json, "kendall_tau");
        json_builder_add_double_value(t->json, tau);
    }
    return TRUE;
}

static gboolean
compare_table(char **files, const char *topology, const char *calibration, Totals *t,
              GError **error)
{
    g_autoptr(MsTopology) topo = ms_topology_load(topology, error);
    if (topo == NULL) {
        return FALSE;
    }
    g_autoptr(MsCalibration) cal = NULL;
    if (calibration) {
        cal = ms_calibration_load(calibration, error);
        if (cal == NULL || !ms_calibration_apply_topology(cal, topo, error)) {
            return FALSE;
        }
    } else {
        printf("# no --calibration: nominal figures of %s\n", ms_topology_name(topo));
    }
    printf("%-24s %7s %9s %9s %9s\n", "measurement", "points", "median", "p90", "max");
    json_builder_set_member_name(t->json, "groups");
    json_builder_begin_object(t->json);
    for (guint f = 0; files[f]; f++) {
        g_autoptr(MsMeasurementSet) set = ms_measurement_set_load(files[f], error);
        if (set == NULL) {
            return FALSE;
        }
        /* One group per kind and configuration, in the order they appear. */
        guint n = ms_measurement_set_size(set);
        g_autofree guint8 *done = g_new0(guint8, MAX(n, 1));
        for (guint i = 0; i < n; i++) {
            const MsMeasurement *a = ms_measurement_set_get(set, i);
            if (done[i]) {
                continue;
            }
            g_autoptr(GArray) p = g_array_new(FALSE, FALSE, sizeof(double));
            g_autoptr(GArray) m = g_array_new(FALSE, FALSE, sizeof(double));
            for (guint j = i; j < n; j++) {
                const MsMeasurement *b = ms_measurement_set_get(set, j);
                if (done[j] || b->kind != a->kind || b->ranks != a->ranks ||
                    b->ranks_per_node != a->ranks_per_node || g_strcmp0(b->label, a->label)) {
                    continue;
                }
                done[j] = 1;
                double s;
                if (!ms_calibrate_predict(topo, cal, b, &s, error)) {
                    return FALSE;
                }
                s *= 1e6;
                double mu = b->seconds * 1e6;
                g_array_append_val(p, s);
                g_array_append_val(m, mu);
            }
            MsErrorStats st;
            if (!ms_error_stats((double *)p->data, (double *)m->data, p->len, &st, error)) {
                return FALSE;
            }
            g_autofree char *name = g_strdup_printf(
                "%s %ux%u%s%s", ms_measurement_kind_name(a->kind), a->ranks, a->ranks_per_node,
                a->label && *a->label ? " " : "", a->label ? a->label : "");
            printf("%-24s %7u %8.2f%% %8.2f%% %8.2f%%\n", name, st.n, 100 * st.median, 100 * st.p90,
                   100 * st.max);
            ms_cli_json_error_stats(t->json, name, &st);
            g_array_append_vals(t->pred, p->data, p->len);
            g_array_append_vals(t->meas, m->data, m->len);
        }
    }
    json_builder_end_object(t->json);
    return TRUE;
}

int
ms_cmd_validate(int argc, char **argv)
{
    g_auto(GStrv) sims = NULL, meas = NULL;
    g_autofree char *topology = NULL, *calibration = NULL, *max_error = NULL, *stat = NULL;
    g_autofree char *plot = NULL, *json = NULL, *min_op = NULL;
    const GOptionEntry entries[] = {
        {"simulated", 's', 0, G_OPTION_ARG_FILENAME_ARRAY, &sims,
         "A simulated result (moesim run --json); repeat, paired in order with --measured", "FILE"},
        {"measured", 'm', 0, G_OPTION_ARG_FILENAME_ARRAY, &meas,
         "A measured result (moesim exec --json), or with --topology a measurement table", "FILE"},
        {"topology", 't', 0, G_OPTION_ARG_STRING, &topology,
         "Predict measurement tables on this topology", "T"},
        {"calibration", 'c', 0, G_OPTION_ARG_FILENAME, &calibration,
         "Calibration to predict with (default: nominal figures)", "FILE"},
        {"min-op", 0, 0, G_OPTION_ARG_STRING, &min_op,
         "Leave out ops measured shorter than this (default 2us)", "TIME"},
        {"max-error", 0, 0, G_OPTION_ARG_STRING, &max_error,
         "Exit 1 when the error statistic exceeds this, e.g. 10%", "E"},
        {"stat", 0, 0, G_OPTION_ARG_STRING, &stat,
         "Statistic --max-error bounds: median (default), p90 or max", "S"},
        {"plot", 'p', 0, G_OPTION_ARG_FILENAME, &plot,
         "Write scatter.png and errors.png into this folder", "DIR"},
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &json, "Write the report as JSON (- for stdout)",
         "FILE"},
        {NULL},
    };
    if (!ms_cli_parse(&argc, &argv, entries, NULL, "Compare simulated with measured times.",
                      "Runs: --simulated A.json --measured B.json [...] compares two results of "
                      "the same schedule op by op and end to end, and with several pairs the "
                      "ranking of their step times (Kendall tau). Tables: --measured FILE "
                      "--topology T [--calibration C] predicts every measured row.")) {
        return MS_EXIT_USAGE;
    }
    if (argc > 1) {
        return ms_cli_usage("validate: unexpected argument '%s'", argv[1]);
    }
    guint ns = sims ? g_strv_length(sims) : 0, nm = meas ? g_strv_length(meas) : 0;
    if (nm == 0 || (topology == NULL && ns != nm) || (topology && ns)) {
        return ms_cli_usage("validate: give --simulated/--measured pairs, or --measured tables "
                            "with --topology (see --help)");
    }
    g_autoptr(GError) error = NULL;
    double bound = NAN, min_us = 2.0;
    if (max_error) {
        g_autofree char *num = g_strdup(max_error);
        gboolean pct = g_str_has_suffix(num, "%");
        if (pct) {
            num[strlen(num) - 1] = '\0';
        }
        if (!ms_parse_double(num, 0, 1e6, &bound, &error)) {
            return ms_cli_usage("validate: --max-error '%s': %s", max_error, error->message);
        }
        bound = pct ? bound / 100 : bound;
    }
    if (stat && strcmp(stat, "median") && strcmp(stat, "p90") && strcmp(stat, "max")) {
        return ms_cli_usage("validate: --stat '%s': use median, p90 or max", stat);
    }
    if (min_op) {
        MsTime t;
        if (!ms_parse_time(min_op, &t, &error)) {
            return ms_cli_usage("validate: --min-op: %s", error->message);
        }
        min_us = ms_time_to_us(t);
    }
    g_autoptr(GArray) pred = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GArray) measd = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(JsonBuilder) jb = json_builder_new();
    json_builder_begin_object(jb);
    Totals t = {pred, measd, jb};
    gboolean ok = topology ? compare_table(meas, topology, calibration, &t, &error)
                           : compare_results(sims, meas, min_us, &t, &error);
    if (!ok) {
        return ms_cli_fail(error);
    }
    MsErrorStats all = {0};
    if (pred->len == 0) {
        /* Never let an empty comparison pass a --max-error bound. */
        return ms_cli_usage("validate: the measurements hold nothing to compare");
    }
    if (!ms_error_stats((double *)pred->data, (double *)measd->data, pred->len, &all, &error)) {
        return ms_cli_fail(error);
    }
    printf("all: %u compared, median %.2f%%, p90 %.2f%%, max %.2f%%\n", all.n, 100 * all.median,
           100 * all.p90, 100 * all.max);
    ms_cli_json_error_stats(jb, "all", &all);
    json_builder_end_object(jb);
    if (plot &&
        !ms_validation_plots(plot, "moesim: predicted against measured", (double *)pred->data,
                             (double *)measd->data, pred->len, &error)) {
        return ms_cli_fail(error);
    }
    if (json) {
        g_autoptr(JsonNode) root = json_builder_get_root(jb);
        if (!ms_cli_write_json(json, root, &error)) {
            return ms_cli_fail(error);
        }
    }
    if (!isnan(bound)) {
        const char *which = stat ? stat : "median";
        double v = !strcmp(which, "p90") ? all.p90 : !strcmp(which, "max") ? all.max : all.median;
        if (v > bound) {
            fprintf(stderr,
                    "moesim: validation failed: %s error %.2f%% exceeds --max-error %.2f%%\n",
                    which, 100 * v, 100 * bound);
            return MS_EXIT_BOUND;
        }
    }
    return MS_EXIT_OK;
}
