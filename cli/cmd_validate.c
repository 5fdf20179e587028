/* cmd_validate: `moesim validate`: simulated against measured, op by op and end to end, with
 * policy ranking agreement, plots, and a bound for CI. */
#include "cli.h"
#include "commands.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/inputs.h"
#include "validate/bound.h"
#include "validate/kineto.h"
#include "validate/layer_compare.h"
#include "validate/layer_file.h"
#include "validate/pace_fit.h"
#include "validate/validation.h"
#include "validate/validation_report.h"

/* Where the human-readable report goes: standard output, or standard error when --json - makes
 * standard output the JSON alone. */
static FILE *out_text;

/* A pair's wait for peers and the GPUs that computed slower than their peers, with the
 * --straggler that would make the simulation do the same. */
static void
print_skew(const MsReportRow *row)
{
    if (isfinite(row->wait_simulated_us) && isfinite(row->wait_measured_us)) {
        fprintf(out_text, "%s: waiting for peers %.3f ms per GPU simulated, %.3f ms measured\n",
                row->name, row->wait_simulated_us / 1e3, row->wait_measured_us / 1e3);
    }
    if (row->paces->len == 0) {
        return;
    }
    const MsGpuPace *slow = NULL, *fast = NULL;
    g_autoptr(GString) what_if = g_string_new(NULL);
    for (guint k = 0; k < row->paces->len; k++) {
        const MsGpuPace *g = &g_array_index(row->paces, MsGpuPace, k);
        slow = slow == NULL || g->pace > slow->pace ? g : slow;
        fast = fast == NULL || g->pace < fast->pace ? g : fast;
        if (g->pace >= MS_PACE_STRAGGLER) {
            g_string_append_printf(what_if, "%s%u=%.3f", what_if->len ? "," : "", g->gpu, g->pace);
        }
    }
    fprintf(out_text,
            "%s: compute per GPU, measured over simulated, against the median of %u GPUs: "
            "slowest GPU %u %.3f (%u ops), fastest GPU %u %.3f (%u ops)\n",
            row->name, row->paces->len, slow->gpu, slow->pace, slow->ops, fast->gpu, fast->pace,
            fast->ops);
    if (what_if->len) {
        fprintf(out_text, "%s: GPUs %.0f%% or more slower than the median: --straggler %s\n",
                row->name, 100 * (MS_PACE_STRAGGLER - 1), what_if->str);
    }
}

static void
print_runs(const MsValidationReport *r)
{
    fprintf(out_text, "%-12s %7s %9s %9s %9s %13s %13s %8s\n", "policy", "ops", "median", "p90",
            "max", "step sim(us)", "step meas(us)", "step err");
    guint n = ms_validation_report_n_rows(r);
    for (guint i = 0; i < n; i++) {
        const MsReportRow *row = ms_validation_report_row(r, i);
        const MsErrorStats *st = &row->stats;
        double step_err =
            row->step_measured_us > 0 ? row->step_simulated_us / row->step_measured_us - 1 : NAN;
        fprintf(out_text, "%-12s %7u %8.2f%% %8.2f%% %8.2f%% %13.1f %13.1f %7.2f%%\n", row->name,
                st->n, 100 * st->median, 100 * st->p90, 100 * st->max, row->step_simulated_us,
                row->step_measured_us, 100 * step_err);
    }
    for (guint i = 0; i < n; i++) {
        print_skew(ms_validation_report_row(r, i));
    }
    if (n >= 2) {
        fprintf(out_text,
                "ranking of the %u runs by step time: Kendall tau %.3f (1 = same order)\n", n,
                ms_validation_report_tau(r));
    }
}

static void
print_tables(const MsValidationReport *r)
{
    int width = 24; /* the names' column, as wide as the longest */
    for (guint i = 0; i < ms_validation_report_n_rows(r); i++) {
        width = MAX(width, (int)strlen(ms_validation_report_row(r, i)->name));
    }
    fprintf(out_text, "%-*s %7s %9s %9s %9s\n", width, "measurement", "points", "median", "p90",
            "max");
    for (guint i = 0; i < ms_validation_report_n_rows(r); i++) {
        const MsReportRow *row = ms_validation_report_row(r, i);
        fprintf(out_text, "%-*s %7u %8.2f%% %8.2f%% %8.2f%%\n", width, row->name, row->stats.n,
                100 * row->stats.median, 100 * row->stats.p90, 100 * row->stats.max);
    }
}

/* The topology and calibration (NULL: nominal figures) tables are predicted on. */
static gboolean
load_tables_inputs(const char *topology, const char *calibration, MsTopology **topo,
                   MsCalibration **cal, GError **error)
{
    *topo = ms_inputs_load_topology(topology, NULL, error);
    if (*topo == NULL) {
        return FALSE;
    }
    if (calibration) {
        *cal = ms_calibration_load(calibration, error);
        if (*cal == NULL || !ms_calibration_apply_topology(*cal, *topo, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

/* The tables predicted under the network model net_text (NULL: the flow model); option names the
 * option it came from in messages. */
static MsValidationReport *
predict_tables(char **files, const MsTopology *topo, const MsCalibration *cal, const char *net_text,
               const char *option, const MsMeasurementReadOptions *read, GError **error)
{
    MsNetSpec spec;
    ms_net_spec_init(&spec);
    if (net_text && !ms_net_spec_parse(net_text, &spec, error)) {
        g_prefix_error(error, "%s: ", option);
        return NULL;
    }
    g_autoptr(MsNetModel) net = ms_net_model_new(&spec, topo, error);
    if (net == NULL) {
        return NULL;
    }
    return ms_validation_report_tables((const char *const *)files, read, topo, cal, net, error);
}

/* The tables' report on the topology (calibrated when a calibration is given). */
static MsValidationReport *
tables_report(char **files, const MsTopology *topo, const MsCalibration *cal, const char *net_text,
              const MsMeasurementReadOptions *read, GError **error)
{
    MsValidationReport *report = predict_tables(files, topo, cal, net_text, "--net", read, error);
    for (guint k = 0; k < read->notes->len; k++) {
        fprintf(stderr, "moesim: notice: %s\n", (const char *)read->notes->pdata[k]);
    }
    /* Said only once the tables are read: a failure prints its message alone. */
    if (report && cal == NULL) {
        fprintf(out_text, "# no --calibration: nominal figures of %s\n", ms_topology_name(topo));
    }
    return report;
}

/* What the tables were predicted with, for the curves' other models. */
typedef struct {
    const MsTopology *topo;
    const MsCalibration *cal;
    const char *net;    /* --net, NULL: the flow model */
    char **plot_nets;   /* --plot-net, may be NULL */
    char **plot_labels; /* --plot-label: the legend's names of --net and the --plot-nets */
    const MsMeasurementReadOptions *read;
} TablesCtx;

/* curves.png: the report's predictions (named by --net) and those of every --plot-net model on
 * the same tables, topology and calibration. */
static gboolean
write_curves(const char *dir, const MsValidationReport *r, const MsPlotGroup *groups,
             const char *title, char **files, const TablesCtx *t, GError **error)
{
    guint extra = t->plot_nets ? g_strv_length(t->plot_nets) : 0, n = 0;
    g_autoptr(GPtrArray) reports =
        g_ptr_array_new_with_free_func((GDestroyNotify)ms_validation_report_free);
    g_autofree MsPlotModel *models = g_new(MsPlotModel, extra + 1);
    guint labels = t->plot_labels ? g_strv_length(t->plot_labels) : 0;
    models[0] = (MsPlotModel){labels   ? t->plot_labels[0]
                              : t->net ? t->net
                                       : "flow",
                              ms_validation_report_predicted(r, &n)};
    /* The same tables read the same way; their notices were printed once already. */
    g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
    MsMeasurementReadOptions quiet = {t->read->ranks, t->read->ranks_per_node, notes};
    for (guint m = 0; m < extra; m++) {
        MsValidationReport *other =
            predict_tables(files, t->topo, t->cal, t->plot_nets[m], "--plot-net", &quiet, error);
        if (other == NULL) {
            return FALSE;
        }
        g_ptr_array_add(reports, other);
        guint k = 0;
        models[m + 1] = (MsPlotModel){m + 1 < labels ? t->plot_labels[m + 1] : t->plot_nets[m],
                                      ms_validation_report_predicted(other, &k)};
    }
    const double *size = ms_validation_report_sizes(r, &n);
    const double *factor = ms_validation_report_bus_factors(r, &n);
    const double *meas = ms_validation_report_measured(r, &n);
    return ms_validation_curves(dir, title, groups, ms_validation_report_n_rows(r), size, factor,
                                meas, models, extra + 1, n, error);
}

/* Appends part to a title after sep, on a new line where the current one (from *line on) would
 * pass 90 characters; *line 0: the first part, which starts the title's second line. */
static void
add_title_part(GString *title, gsize *line, const char *part, const char *sep)
{
    if (*line == 0 || title->len - *line + strlen(sep) + strlen(part) > 90) {
        /* The separator's punctuation ends the line it leaves. */
        if (*line != 0) {
            g_string_append(title, sep);
            while (title->len && title->str[title->len - 1] == ' ') {
                g_string_truncate(title, title->len - 1);
            }
        }
        g_string_append_c(title, '\n');
        *line = title->len;
    } else {
        g_string_append(title, sep);
    }
    g_string_append(title, part);
}

/* The plots, a colour per row of the report (a pair of runs, a configuration of a table) named
 * in the legend, under a title that names the inputs. */
static gboolean
write_plots(const char *dir, const MsValidationReport *r, char **sims, char **meas,
            const char *topology, const char *calibration, const TablesCtx *tables, GError **error)
{
    guint rows = ms_validation_report_n_rows(r);
    g_autofree MsPlotGroup *groups = g_new0(MsPlotGroup, MAX(rows, 1));
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    GString *title = g_string_new("moesim validate: predicted against measured");
    /* The inputs by file name, a line of the title each time one would pass 90 characters. */
    gsize line = 0;
    for (guint i = 0; i < rows; i++) {
        const MsReportRow *row = ms_validation_report_row(r, i);
        /* Two pairs of one policy would share a name: a run's row names its measured file. */
        g_autofree char *base = sims ? g_path_get_basename(meas[i]) : NULL;
        char *name = sims ? g_strdup_printf("%s (%s)", row->name, base) : g_strdup(row->name);
        g_ptr_array_add(names, name);
        groups[i] = (MsPlotGroup){name, row->stats.n};
        if (sims) {
            g_autofree char *sim = g_path_get_basename(sims[i]);
            g_autofree char *part = g_strdup_printf("%s against %s", sim, base);
            add_title_part(title, &line, part, i ? "; " : "");
        }
    }
    for (guint i = 0; !sims && meas[i]; i++) {
        g_autofree char *file = g_path_get_basename(meas[i]);
        add_title_part(title, &line, file, i ? ", " : "");
    }
    if (!sims) {
        g_autofree char *cal = calibration ? g_path_get_basename(calibration) : NULL;
        g_autofree char *part = g_strdup_printf(
            "on %s, %s%s", topology, cal ? "calibration " : "nominal figures", cal ? cal : "");
        add_title_part(title, &line, part, " ");
    }
    guint n = 0;
    const double *pred = ms_validation_report_predicted(r, &n);
    const double *measd = ms_validation_report_measured(r, &n);
    gboolean ok = ms_validation_plots(dir, title->str, groups, rows, pred, measd, n, error);
    /* Curves need sizes: tables only. */
    if (ok && tables) {
        ok = write_curves(dir, r, groups, title->str, meas, tables, error);
    }
    g_string_free(title, TRUE);
    return ok;
}

/* Options of the per-layer comparison. */
typedef struct {
    const char *iterations, *pattern;
    gint gpu;
} LayerArgs;

static MsLayerTable *
load_tables(char **files, const LayerArgs *la, GError **error)
{
    MsKinetoOptions ko = {.layer_pattern = la->pattern, .gpu = la->gpu};
    g_autoptr(MsLayerTable) t = ms_layer_table_new();
    for (guint i = 0; files[i]; i++) {
        if (!ms_layer_file_load(t, files[i], &ko, error)) {
            return NULL;
        }
    }
    return g_steal_pointer(&t);
}

static void
print_layers(const MsLayerComparison *c, const MsLayerSelect *sel)
{
    fprintf(out_text, "layers: %u pairs (%u simulated only, %u measured only)", c->pairs,
            c->sim_only, c->meas_only);
    if (sel->first > 0 || sel->last < G_MAXUINT32) {
        fprintf(out_text, ", iterations %u to %u", sel->first, sel->last);
    }
    fprintf(out_text, "\n%-12s %7s %9s %9s %9s %14s %14s\n", "figure", "points", "median", "p90",
            "max", "simulated(us)", "measured(us)");
    for (guint m = 0; m < MS_LAYER_COMPARE_N_METRICS; m++) {
        const MsLayerMetric *x = &c->metrics[m];
        if (x->stats.n == 0 && x->sim_mean_us == 0) {
            continue;
        }
        fprintf(out_text, "%-12s %7u %8.2f%% %8.2f%% %8.2f%% %14.3f %14.3f\n", x->name, x->stats.n,
                100 * x->stats.median, 100 * x->stats.p90, 100 * x->stats.max, x->sim_mean_us,
                x->meas_mean_us);
    }
    if (c->unmodelled->len) {
        fprintf(out_text, "in the measurement and not in the simulation:\n");
        for (guint i = 0; i < c->unmodelled->len; i++) {
            fprintf(out_text, "  - %s\n", (const char *)c->unmodelled->pdata[i]);
        }
    }
}

/* validate --layers: per-layer tables (or profiler traces) compared. */
static int
validate_layers(char **sims, char **meas, const LayerArgs *la, double bound, const char *stat,
                const char *plot, const char *json)
{
    g_autoptr(GError) error = NULL;
    MsLayerSelect sel;
    ms_layer_select_init(&sel);
    if (la->iterations && !ms_layer_select_parse(&sel, la->iterations)) {
        return ms_cli_usage("validate: --iterations '%s': expected A-B, A or A- (numbers of the "
                            "measured iterations)",
                            la->iterations);
    }
    g_autoptr(MsLayerTable) s = load_tables(sims, la, &error);
    g_autoptr(MsLayerTable) m = s ? load_tables(meas, la, &error) : NULL;
    if (m == NULL) {
        return ms_cli_fail(error);
    }
    MsLayerComparison c;
    if (!ms_layer_compare(s, m, &sel, &c, &error)) {
        g_prefix_error(&error, "validate: ");
        return ms_cli_fail(error);
    }
    print_layers(&c, &sel);
    int rc = MS_EXIT_OK;
    const MsPlotGroup one = {"layers (a point per GPU)", c.measured->len};
    if (plot && !ms_validation_plots(plot,
                                     "moesim validate --layers: per-layer time, predicted against "
                                     "measured",
                                     &one, 1, (const double *)c.predicted->data,
                                     (const double *)c.measured->data, c.measured->len, &error)) {
        rc = ms_cli_fail(error);
    }
    if (rc == MS_EXIT_OK && json) {
        g_autoptr(JsonNode) root = ms_layer_comparison_to_json(&c);
        if (!ms_cli_write_json(json, root, &error)) {
            rc = ms_cli_fail(error);
        }
    }
    const MsErrorStats *st = &c.metrics[0].stats;
    double v = !strcmp(stat, "p90") ? st->p90 : !strcmp(stat, "max") ? st->max : st->median;
    if (rc == MS_EXIT_OK && !isnan(bound) && v > bound) {
        fprintf(stderr,
                "moesim: validation failed: per-layer %s error %.2f%% exceeds --max-error "
                "%.2f%%\n",
                stat, 100 * v, 100 * bound);
        rc = MS_EXIT_BOUND;
    }
    ms_layer_comparison_clear(&c);
    return rc;
}

int
ms_cmd_validate(int argc, char **argv)
{
    g_auto(GStrv) sims = NULL, meas = NULL, plot_nets = NULL, plot_labels = NULL;
    g_autofree char *topology = NULL, *calibration = NULL, *max_error = NULL, *stat = NULL;
    g_autofree char *plot = NULL, *json = NULL, *min_op = NULL, *net = NULL;
    g_autofree char *iterations = NULL, *pattern = NULL, *log_shape = NULL;
    gboolean layers = FALSE;
    gint gpu = -1;
    const GOptionEntry entries[] = {
        {"simulated", 's', 0, G_OPTION_ARG_FILENAME_ARRAY, &sims,
         "A simulated result (moesim run --json); repeat, paired in order with --measured", "FILE"},
        {"measured", 'M', 0, G_OPTION_ARG_FILENAME_ARRAY, &meas,
         "A measured result (moesim exec --json), or with --topology a measurement table", "FILE"},
        {"topology", 't', 0, G_OPTION_ARG_STRING, &topology,
         "Predict measurement tables on this topology", "T"},
        {"calibration", 'c', 0, G_OPTION_ARG_FILENAME, &calibration,
         "Calibration to predict with (default: nominal figures)", "FILE"},
        {"net", 0, 0, G_OPTION_ARG_STRING, &net,
         "Tables: network model to predict with, flow (default) or nccl[:...]", "MODEL"},
        {"log-shape", 0, 0, G_OPTION_ARG_STRING, &log_shape,
         "Tables: ranks and ranks per node of nccl-tests logs that print no '#  Rank' lines "
         "(srun --label output; 16x8: two nodes of 8 GPUs); logs that print them must agree",
         "RANKSxPER_NODE"},
        {"min-op", 0, 0, G_OPTION_ARG_STRING, &min_op,
         "Leave out ops measured shorter than this (default 2us)", "TIME"},
        {"max-error", 0, 0, G_OPTION_ARG_STRING, &max_error,
         "Exit 1 when the error statistic exceeds this percentage, e.g. 10%", "E"},
        {"stat", 0, 0, G_OPTION_ARG_STRING, &stat,
         "Statistic --max-error bounds: median (default), p90 or max", "S"},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &plot,
         "Write scatter.png and errors.png into this folder (tables: curves.png too)", "DIR"},
        {"plot-net", 0, 0, G_OPTION_ARG_STRING_ARRAY, &plot_nets,
         "Tables: also draw this network model's prediction on curves.png (repeatable; the "
         "figures and the bound stay --net's)",
         "MODEL"},
        {"plot-label", 0, 0, G_OPTION_ARG_STRING_ARRAY, &plot_labels,
         "Tables: the legend's name of a curve on curves.png, in order: --net's, then each "
         "--plot-net's (default: the model as given)",
         "TEXT"},
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &json, "Write the report as JSON (- for stdout)",
         "FILE"},
        {"layers", 0, 0, G_OPTION_ARG_NONE, &layers,
         "Compare per-layer figures: --simulated and --measured are run --layers tables or "
         "PyTorch profiler traces",
         NULL},
        {"iterations", 0, 0, G_OPTION_ARG_STRING, &iterations,
         "Layers: compare these measured iterations only (A-B, A or A-)", "A-B"},
        {"layer-pattern", 0, 0, G_OPTION_ARG_STRING, &pattern,
         "Layers: profiler ranges that are layers (a regex; group 1 the layer, group 2 the phase; "
         "default " MS_KINETO_LAYER_PATTERN ")",
         "RE"},
        {"gpu", 0, 0, G_OPTION_ARG_INT, &gpu,
         "Layers: the GPU of a profiler trace without distributedInfo.rank (default 0)", "N"},
        {NULL},
    };
    if (!ms_cli_parse(&argc, &argv, entries, NULL, "Compare simulated with measured times.",
                      "Runs: --simulated A.json --measured B.json [...] compares two results of "
                      "the same schedule op by op and end to end, and with several pairs the "
                      "ranking of their step times (Kendall tau). Tables: --measured FILE "
                      "--topology T [--calibration C] predicts every measured row.")) {
        return MS_EXIT_USAGE;
    }
    out_text = json && strcmp(json, "-") == 0 ? stderr : stdout;
    if (argc > 1) {
        return ms_cli_usage("validate: unexpected argument '%s'", argv[1]);
    }
    guint ns = sims ? g_strv_length(sims) : 0, nm = meas ? g_strv_length(meas) : 0;
    if (layers && (ns == 0 || nm == 0 || topology)) {
        return ms_cli_usage("validate --layers: give --simulated and --measured tables (or "
                            "traces), without --topology");
    }
    if (!layers && (iterations || pattern || gpu >= 0)) {
        return ms_cli_usage("validate: --iterations, --layer-pattern and --gpu go with --layers");
    }
    if (nm == 0 || (topology == NULL && ns != nm && !layers) || (topology && ns)) {
        return ms_cli_usage("validate: give --simulated/--measured pairs, or --measured tables "
                            "with --topology (see --help)");
    }
    g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
    MsMeasurementReadOptions read = {0, 0, notes};
    if (log_shape && (topology == NULL ||
                      !ms_calibration_parse_config(log_shape, &read.ranks, &read.ranks_per_node))) {
        return ms_cli_usage("validate: --log-shape '%s' goes with --measured tables and "
                            "--topology, as RANKSxPER_NODE with 1 <= PER_NODE <= RANKS <= 2^20 "
                            "(e.g. 16x8: two nodes of 8 GPUs)",
                            log_shape);
    }
    g_autoptr(GError) error = NULL;
    double bound = NAN, min_us = 2.0;
    if (max_error && !ms_bound_parse_percent(max_error, &bound, &error)) {
        return ms_cli_usage("validate: --max-error '%s': %s", max_error, error->message);
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
    if (layers) {
        LayerArgs la = {iterations, pattern, gpu};
        return validate_layers(sims, meas, &la, bound, stat ? stat : "median", plot, json);
    }
    if ((plot_nets || plot_labels) && (topology == NULL || plot == NULL)) {
        return ms_cli_usage("validate: --plot-net and --plot-label go with --measured tables, "
                            "--topology and --plot");
    }
    guint n_curves = 1 + (plot_nets ? g_strv_length(plot_nets) : 0);
    if (plot_labels && g_strv_length(plot_labels) > n_curves) {
        return ms_cli_usage("validate: %u --plot-label for %u curves (--net and %u --plot-net)",
                            g_strv_length(plot_labels), n_curves, n_curves - 1);
    }
    g_autoptr(MsTopology) topo = NULL;
    g_autoptr(MsCalibration) cal = NULL;
    if (topology && !load_tables_inputs(topology, calibration, &topo, &cal, &error)) {
        return ms_cli_fail(error);
    }
    g_autoptr(MsValidationReport) r =
        topology ? tables_report(meas, topo, cal, net, &read, &error)
                 : ms_validation_report_runs((const char *const *)sims, (const char *const *)meas,
                                             min_us, &error);
    if (r == NULL) {
        if (g_error_matches(error, MS_VALIDATION_ERROR, MS_VALIDATION_ERROR_EMPTY)) {
            g_prefix_error(&error, "validate: ");
        }
        return ms_cli_fail(error);
    }
    if (topology) {
        print_tables(r);
    } else {
        print_runs(r);
    }
    const MsErrorStats *all = ms_validation_report_all(r);
    fprintf(out_text, "all: %u compared, median %.2f%%, p90 %.2f%%, max %.2f%%\n", all->n,
            100 * all->median, 100 * all->p90, 100 * all->max);
    const TablesCtx tables = {topo, cal, net, plot_nets, plot_labels, &read};
    if (plot &&
        !write_plots(plot, r, sims, meas, topology, calibration, topo ? &tables : NULL, &error)) {
        return ms_cli_fail(error);
    }
    if (json) {
        g_autoptr(JsonNode) root = ms_validation_report_to_json(r);
        if (!ms_cli_write_json(json, root, &error)) {
            return ms_cli_fail(error);
        }
    }
    if (!isnan(bound)) {
        const char *which = stat ? stat : "median";
        double v = 0;
        ms_validation_report_stat(r, which, &v);
        if (v > bound) {
            fprintf(stderr,
                    "moesim: validation failed: %s error %.2f%% exceeds --max-error %.2f%%\n",
                    which, 100 * v, 100 * bound);
            return MS_EXIT_BOUND;
        }
    }
    return MS_EXIT_OK;
}
