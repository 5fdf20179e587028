/* cmd_calibrate: `moesim calibrate`: fits a calibration file to measurements (nccl-tests logs,
 * moesim bench output, profiling CSVs) and optionally reports held-out prediction errors; with
 * --net nccl, the nccl model's factors too (its NIC arbitration where all-to-alls were measured
 * under an allreduce) and the fitted --net spec. */
#include "cli.h"
#include "commands.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "validate/calibrate.h"
#include "sim/base/json_output.h"
#include "validate/holdout.h"
#include "validate/kineto.h"
#include "validate/layer_file.h"
#include "validate/layer_fit.h"
#include "validate/nccl_fit.h"
#include "validate/nic_fit.h"

/* Where the human-readable report goes: standard output, or standard error when --json - makes
 * standard output the JSON alone. */
static FILE *out_text;

static void
print_stats(const char *what, const MsErrorStats *s)
{
    fprintf(out_text, "  %-28s %5u points  median %6.2f%%  p90 %6.2f%%  max %7.2f%%\n", what, s->n,
            100 * s->median, 100 * s->p90, 100 * s->max);
}

/* One held-out table: a line and a JSON member per group, then all communication. */
static void
holdout_table(const GArray *groups, const MsErrorStats *all, JsonBuilder *b)
{
    for (guint k = 0; k < groups->len; k++) {
        const MsHoldoutGroup *g = &g_array_index(groups, MsHoldoutGroup, k);
        g_autofree char *label =
            g->kind == MS_MEASUREMENT_GEMM
                ? g_strdup("expert FFN (every other token count)")
                : g_strdup_printf("%s %ux%u", ms_measurement_kind_name(g->kind), g->ranks,
                                  g->per_node);
        print_stats(label, &g->stats);
        ms_error_stats_json(b, label, &g->stats);
    }
    print_stats("all communication", all);
    ms_error_stats_json(b, "all communication", all);
}

/* Runs one held-out evaluation and prints its table; adds it to the JSON report. With net (the
 * base spec of --net), the nccl model's factors are fitted without the held-out rows too, on the
 * nominal topology, and their predictions of them make a second table ("nccl NAME" in the JSON,
 * with the spec fitted without them). */
static gboolean
holdout(const char *name, const char *topology, const MsMeasurementSet *set, const gboolean *held,
        const MsCalibrateOptions *opts, const MsNetSpec *net, JsonBuilder *b, GError **error)
{
    g_autoptr(GArray) groups = g_array_new(FALSE, FALSE, sizeof(MsHoldoutGroup));
    MsErrorStats all;
    if (!ms_calibrate_holdout(topology, set, held, opts, groups, &all, error)) {
        return FALSE;
    }
    fprintf(out_text, "held out: %s\n", name);
    json_builder_set_member_name(b, name);
    json_builder_begin_object(b);
    holdout_table(groups, &all, b);
    json_builder_end_object(b);
    if (net == NULL) {
        return TRUE;
    }
    g_autoptr(MsTopology) topo = ms_topology_load(topology, error);
    g_array_set_size(groups, 0);
    MsNcclFit fit;
    GError *local = NULL;
    if (topo == NULL) {
        return FALSE;
    }
    if (!ms_nccl_fit_holdout(topo, set, held, net, &fit, groups, &all, &local)) {
        /* Rows the nccl fit cannot use on one side or the other (no collective held out, too
         * few kept) leave it unevaluated, as its main fit is when it has no rows. */
        if (!g_error_matches(local, MS_NCCL_FIT_ERROR, MS_NCCL_FIT_ERROR_NO_DATA) &&
            !g_error_matches(local, MS_FIT_ERROR, MS_FIT_ERROR_INPUT)) {
            g_propagate_prefixed_error(error, local, "held out %s, nccl model: ", name);
            return FALSE;
        }
        fprintf(out_text, "held out, nccl model: %s not evaluated: %s\n", name, local->message);
        g_error_free(local);
        return TRUE;
    }
    g_autofree char *spec = ms_net_spec_to_string(&fit.spec);
    fprintf(out_text, "held out, nccl model fitted without them on %u rows: %s\n  --net '%s'\n",
            fit.rows, name, spec);
    g_autofree char *member = g_strdup_printf("nccl %s", name);
    json_builder_set_member_name(b, member);
    json_builder_begin_object(b);
    ms_json_member_string(b, "spec", spec);
    ms_json_member_int(b, "rows", fit.rows);
    holdout_table(groups, &all, b);
    json_builder_end_object(b);
    return TRUE;
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(MsNicFit, ms_nic_fit_clear)

/* The nccl model's factors, then its message exponent where the measurements hold all-to-alls
 * under an allreduce. The exponent stays the base's, with a note saying why, when the rows cannot
 * tell it (no NIC carries both collectives); when too few single-collective rows leave the other
 * factors unfitted, the exponent is fitted on the base spec. */
static gboolean
fit_net(const MsTopology *topo, const MsMeasurementSet *set, const MsNetSpec *base, MsNcclFit *fit,
        MsNicFit *nic, char **note, GError **error)
{
    guint under = ms_nic_fit_count(set);
    GError *local = NULL;
    if (!ms_nccl_fit(topo, set, base, fit, &local)) {
        if (under == 0 || !g_error_matches(local, MS_NCCL_FIT_ERROR, MS_NCCL_FIT_ERROR_NO_DATA)) {
            g_propagate_error(error, local);
            return FALSE;
        }
        *note = g_strdup_printf("latency and efficiencies not fitted: %s", local->message);
        g_clear_error(&local);
        memset(fit, 0, sizeof *fit);
        fit->spec = *base;
    }
    if (under == 0) {
        return TRUE;
    }
    if (!ms_nic_fit(topo, set, &fit->spec, nic, &local)) {
        if (!g_error_matches(local, MS_NIC_FIT_ERROR, MS_NIC_FIT_ERROR_FLAT)) {
            g_propagate_error(error, local);
            return FALSE;
        }
        char *old = *note;
        *note = g_strdup_printf("%s%smessage_exponent not fitted: %s", old ? old : "",
                                old ? "; " : "", local->message);
        g_free(old);
        g_clear_error(&local);
    }
    return TRUE;
}

/* The NIC fit's members of the --json "net" object. */
static void
json_nic(JsonBuilder *b, const MsNicFit *nic)
{
    ms_json_member_double(b, "message_exponent", nic->spec.message_exponent);
    ms_json_member_double(b, "message_exponent_se", nic->exponent_se);
    ms_json_member_int(b, "concurrency_rows", nic->rows);
    ms_json_member_double(b, "slowdown_error_before", nic->median_before);
    ms_json_member_double(b, "slowdown_error_after", nic->median_after);
    json_builder_set_member_name(b, "concurrency_groups");
    json_builder_begin_array(b);
    for (guint k = 0; k < nic->groups->len; k++) {
        const MsNicFitGroup *g = &g_array_index(nic->groups, MsNicFitGroup, k);
        json_builder_begin_object(b);
        ms_json_member_int(b, "channels", g->channels);
        ms_json_member_int(b, "qps", g->qps);
        ms_json_member_int(b, "rows", g->rows);
        ms_json_member_double(b, "mean_log_error", g->mean_log_error);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}

/* The nccl model's fitted factors, printed and as the --json "net" object: those of single
 * collectives where they were fitted, the message exponent where it was, the spec with them. */
static void
report_net(JsonBuilder *b, const MsNcclFit *fit, const MsNicFit *nic, const char *note)
{
    g_autofree char *text = fit->rows ? ms_nccl_fit_describe(fit) : g_strdup("");
    g_autofree char *nic_text = nic->rows ? ms_nic_fit_describe(nic) : g_strdup("");
    g_autofree char *spec_text = ms_net_spec_to_string(nic->rows ? &nic->spec : &fit->spec);
    fprintf(out_text, "nccl network model fitted on %u collective rows%s:\n", fit->rows,
            nic->rows ? " and the all-to-alls under an allreduce" : "");
    g_autofree char *all = g_strconcat(text, nic_text, note ? note : "", NULL);
    g_auto(GStrv) lines = g_strsplit(g_strchomp(all), "\n", -1);
    for (guint i = 0; lines[i]; i++) {
        fprintf(out_text, "  %s\n", lines[i]);
    }
    fprintf(out_text, "  --net '%s'\n", spec_text);
    json_builder_set_member_name(b, "net");
    json_builder_begin_object(b);
    ms_json_member_string(b, "spec", spec_text);
    if (fit->rows) {
        ms_json_member_double(b, "latency_scale", fit->spec.latency_scale);
        ms_json_member_double(b, "latency_scale_se", fit->latency_scale_se);
    }
    for (guint p = 0; p < MS_NCCL_N_PROTOS; p++) {
        if (fit->proto_rows[p]) {
            g_autofree char *name = g_ascii_strdown(ms_nccl_proto_name(p), -1);
            g_autofree char *k = g_strdup_printf("%s_efficiency", name);
            g_autofree char *k_se = g_strdup_printf("%s_efficiency_se", name);
            ms_json_member_double(b, k, fit->spec.proto_efficiency[p]);
            if (isfinite(fit->efficiency_se[p])) {
                ms_json_member_double(b, k_se, fit->efficiency_se[p]);
            }
        }
    }
    if (fit->host_rows) {
        ms_json_member_double(b, "host_us", fit->spec.host_us);
        ms_json_member_double(b, "host_us_se", fit->host_us_se);
        ms_json_member_int(b, "host_rows", fit->host_rows);
    }
    if (isfinite(fit->net_efficiency_se)) {
        ms_json_member_double(b, "net_efficiency", fit->spec.net_efficiency);
        ms_json_member_double(b, "net_efficiency_se", fit->net_efficiency_se);
        ms_json_member_int(b, "net_rows", fit->net_rows);
    }
    ms_json_member_int(b, "rows", fit->rows);
    if (fit->rows) {
        ms_json_member_double(b, "median_error_before", fit->median_before);
        ms_json_member_double(b, "median_error_after", fit->median_after);
    }
    if (nic->rows) {
        json_nic(b, nic);
    }
    if (note) {
        ms_json_member_string(b, "note", note);
    }
    json_builder_end_object(b);
}

static gboolean
parse_expert(const char *text, MsCalibrateOptions *opts, GError **error)
{
    g_auto(GStrv) f = g_strsplit(text, ",", -1);
    guint64 d = 0, ffn = 0;
    guint n = g_strv_length(f);
    if (n < 2 || n > 3 || !ms_parse_uint(f[0], 1, 1 << 20, &d, NULL) ||
        !ms_parse_uint(f[1], 1, 1 << 22, &ffn, NULL) ||
        (n == 3 && strcmp(f[2], "gated") != 0 && strcmp(f[2], "plain") != 0)) {
        g_set_error(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_ARGUMENT,
                    "--expert '%s': expected D_MODEL,D_FFN[,gated|plain] (e.g. 4096,14336,gated)",
                    text);
        return FALSE;
    }
    opts->expert_d_model = d;
    opts->expert_d_ffn = ffn;
    opts->expert_gated = n < 3 || strcmp(f[2], "gated") == 0;
    return TRUE;
}

/* calibrate --layers: a measured run's per-layer figures against the same run simulated. */
typedef struct {
    char **measured, **simulated;
    const char *iterations, *pattern, *topology, *out, *json;
    gint gpu;
} LayerFitArgs;

/* Runs fitted together are told apart by their iterations: run k's become k x RUN_STRIDE + it. */
#define RUN_STRIDE (1u << 24)

/* Appends the selected rows of the k-th measured and simulated tables, renumbered. */
static gboolean
add_run(const LayerFitArgs *a, guint k, const MsLayerSelect *sel, MsLayerTable *meas,
        MsLayerTable *sim, GError **error)
{
    MsKinetoOptions ko = {.layer_pattern = a->pattern, .gpu = a->gpu};
    g_autoptr(MsLayerTable) m = ms_layer_table_new();
    g_autoptr(MsLayerTable) s = ms_layer_table_new();
    if (!ms_layer_file_load(m, a->measured[k], &ko, error) ||
        !ms_layer_file_load(s, a->simulated[k], &ko, error)) {
        return FALSE;
    }
    MsLayerTable *both[2] = {m, s}, *into[2] = {meas, sim};
    for (guint t = 0; t < 2; t++) {
        for (guint i = 0; i < ms_layer_table_n_rows(both[t]); i++) {
            MsLayerRow r = *ms_layer_table_row(both[t], i);
            if (r.iteration < sel->first || r.iteration > sel->last) {
                continue;
            }
            if (r.iteration >= RUN_STRIDE) {
                g_set_error(error, MS_LAYER_FILE_ERROR, MS_LAYER_FILE_ERROR_VALUE,
                            "%s: iteration %u: runs fitted together are numbered below %u",
                            t ? a->simulated[k] : a->measured[k], r.iteration, RUN_STRIDE);
                return FALSE;
            }
            r.iteration += k * RUN_STRIDE;
            ms_layer_table_append(into[t], &r);
        }
    }
    return TRUE;
}

static int
calibrate_layers(const LayerFitArgs *a)
{
    g_autoptr(GError) error = NULL;
    MsLayerSelect sel;
    ms_layer_select_init(&sel);
    if (a->iterations && !ms_layer_select_parse(&sel, a->iterations)) {
        return ms_cli_usage("calibrate: --iterations '%s': expected A-B, A or A- (numbers of the "
                            "measured iterations to fit on)",
                            a->iterations);
    }
    g_autoptr(MsTopology) topo = ms_topology_load(a->topology, &error);
    if (topo == NULL) {
        return ms_cli_fail(error);
    }
    g_autoptr(MsLayerTable) meas = ms_layer_table_new();
    g_autoptr(MsLayerTable) sim = ms_layer_table_new();
    guint runs = g_strv_length(a->measured);
    if (runs != g_strv_length(a->simulated) || runs > 255) {
        return ms_cli_usage("calibrate --layers: give one --simulated FILE per measured --layers "
                            "FILE (in the same order, at most 255)");
    }
    for (guint k = 0; k < runs; k++) {
        if (!add_run(a, k, &sel, meas, sim, &error)) {
            return ms_cli_fail(error);
        }
    }
    MsLayerSelect all;
    ms_layer_select_init(&all);
    MsLayerFit fit;
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    double launch = ms_time_to_s(ms_topology_gpu_spec(topo, 0)->launch_overhead);
    if (!ms_layer_fit(sim, meas, &all, launch, &fit, &error) ||
        !ms_layer_fit_apply(&fit, cal, &error) ||
        !ms_calibration_set_topology(cal, ms_topology_name(topo), &error)) {
        return ms_cli_fail(error);
    }
    for (guint i = 0; a->measured[i]; i++) {
        ms_calibration_add_source(cal, a->measured[i], NULL);
    }
    g_autoptr(GPtrArray) lines = ms_layer_fit_describe(&fit);
    fprintf(out_text, "calibration of %s from per-layer figures (%s against %s%s)\n",
            ms_topology_name(topo), a->measured[0], a->simulated[0],
            runs > 1 ? ", and further runs" : "");
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    ms_json_member_string(b, "schema", "moesim.calibrate-layers/1"); /* docs/outputs.md */
    json_builder_set_member_name(b, "fits");
    json_builder_begin_array(b);
    for (guint i = 0; i < lines->len; i++) {
        fprintf(out_text, "  %s\n", (const char *)lines->pdata[i]);
        json_builder_add_string_value(b, lines->pdata[i]);
    }
    json_builder_end_array(b);
    ms_json_member_double(b, "efficiency", fit.efficiency);
    ms_json_member_double(b, "launch_us", fit.launch_s * 1e6);
    ms_json_member_double(b, "host_op_us", fit.framework.op_s * 1e6);
    ms_json_member_double(b, "host_moe_layer_us", fit.framework.layer_s * 1e6);
    ms_json_member_double(b, "host_expert_us", fit.framework.expert_s * 1e6);
    ms_json_member_double(b, "host_token_us", fit.framework.token_s * 1e6);
    ms_error_stats_json(b, "fitted layers", &fit.layer_stats);
    json_builder_end_object(b);
    if (a->out) {
        if (!ms_calibration_save(cal, a->out, &error)) {
            return ms_cli_fail(error);
        }
        fprintf(out_text, "wrote %s\n", a->out);
    }
    if (a->json) {
        g_autoptr(JsonNode) root = json_builder_get_root(b);
        if (!ms_cli_write_json(a->json, root, &error)) {
            return ms_cli_fail(error);
        }
    }
    return MS_EXIT_OK;
}

int
ms_cmd_calibrate(int argc, char **argv)
{
    g_autofree char *topology = NULL, *out = NULL, *json = NULL, *expert = NULL;
    g_autofree char *holdout_configs = NULL, *net = NULL;
    g_autofree char *iterations = NULL, *pattern = NULL, *log_shape = NULL;
    g_auto(GStrv) layers = NULL, simulated = NULL;
    gint gpu = -1;
    gboolean holdout_sizes = FALSE;
    const GOptionEntry entries[] = {
        {"topology", 't', 0, G_OPTION_ARG_STRING, &topology,
         "Topology the measurements were taken on (required)", "T"},
        {"out", 'o', 0, G_OPTION_ARG_FILENAME, &out, "Write the calibration file here", "FILE"},
        {"expert", 0, 0, G_OPTION_ARG_STRING, &expert,
         "Expert shape of GEMM profiles (default 4096,14336,gated)", "D,F[,gated]"},
        {"holdout-sizes", 0, 0, G_OPTION_ARG_NONE, &holdout_sizes,
         "Also fit on every other size of each configuration and report errors on the rest", NULL},
        {"holdout-configs", 0, 0, G_OPTION_ARG_STRING, &holdout_configs,
         "Also fit without these configurations and report errors on them", "RxP,..."},
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &json, "Write the fit report as JSON (- for stdout)",
         "FILE"},
        {"log-shape", 0, 0, G_OPTION_ARG_STRING, &log_shape,
         "Ranks and ranks per node of nccl-tests logs that print no '#  Rank' lines (srun --label "
         "output; 16x8: two nodes of 8 GPUs); logs that print them must agree",
         "RANKSxPER_NODE"},
        {"net", 0, 0, G_OPTION_ARG_STRING, &net,
         "Also fit the nccl network model's factors (latency scale, protocol efficiencies, and "
         "the NIC's message exponent from all-to-alls measured under an allreduce) and print "
         "the fitted --net spec",
         "nccl[:...]"},
        {"layers", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &layers,
         "Fit compute, all-to-all and framework figures to a measured run's per-layer figures "
         "(run --layers on a backend, or a PyTorch profiler trace); repeat for several files",
         "FILE"},
        {"simulated", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &simulated,
         "Layers: the same run simulated with nominal figures and no framework time "
         "(run --layers); one per --layers, in the same order",
         "FILE"},
        {"iterations", 0, 0, G_OPTION_ARG_STRING, &iterations,
         "Layers: fit on these measured iterations only (A-B, A or A-); hold out the rest", "A-B"},
        {"layer-pattern", 0, 0, G_OPTION_ARG_STRING, &pattern,
         "Layers: profiler ranges that are layers (default " MS_KINETO_LAYER_PATTERN ")", "RE"},
        {"gpu", 0, 0, G_OPTION_ARG_INT, &gpu,
         "Layers: the GPU of a profiler trace without distributedInfo.rank (default 0)", "N"},
        {NULL},
    };
    if (!ms_cli_parse(
            &argc, &argv, entries, "INPUT...",
            "Fit link, collective and GEMM figures to measurements.",
            "INPUT: nccl-tests output (all_reduce_perf, alltoall_perf, sendrecv_perf ...), "
            "moesim bench CSV, or a profiling CSV; shipped Vidur A100 profiles load by "
            "name (nccl_all_reduce_dgx.csv, nccl_send_recv_dgx.csv, mlp_llama3_8b.csv). "
            "See docs/calibration.md.")) {
        return MS_EXIT_USAGE;
    }
    out_text = json && strcmp(json, "-") == 0 ? stderr : stdout;
    if (layers || simulated) {
        if (layers == NULL || simulated == NULL || topology == NULL || argc > 1 || net ||
            holdout_sizes || holdout_configs || expert || log_shape) {
            return ms_cli_usage("calibrate --layers: give the measured --layers FILE, the "
                                "--simulated FILE and --topology, and no measurement INPUT or "
                                "table options");
        }
        LayerFitArgs la = {layers, simulated, iterations, pattern, topology, out, json, gpu};
        return calibrate_layers(&la);
    }
    if (iterations || pattern || gpu >= 0) {
        return ms_cli_usage("calibrate: --iterations, --layer-pattern and --gpu go with --layers");
    }
    if (argc < 2) {
        return ms_cli_usage("calibrate: give at least one measurement INPUT");
    }
    {
        g_autoptr(GError) claim = NULL;
        const char *outs[] = {out, json};
        if (!ms_cli_claim_outputs(outs, G_N_ELEMENTS(outs), &claim)) {
            return ms_cli_fail(claim);
        }
    }
    if (topology == NULL) {
        return ms_cli_usage("calibrate: --topology is required (the cluster the measurements "
                            "come from)");
    }
    g_autoptr(GError) error = NULL;
    MsCalibrateOptions opts = ms_calibrate_default_options;
    if (expert && !parse_expert(expert, &opts, &error)) {
        return ms_cli_fail(error);
    }
    g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
    MsMeasurementReadOptions read = {0, 0, notes};
    if (log_shape && !ms_calibration_parse_config(log_shape, &read.ranks, &read.ranks_per_node)) {
        return ms_cli_usage("calibrate: --log-shape '%s' is not RANKSxPER_NODE with 1 <= PER_NODE "
                            "<= RANKS <= 2^20 (e.g. 16x8: two nodes of 8 GPUs)",
                            log_shape);
    }
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    for (int i = 1; i < argc; i++) {
        g_autoptr(MsMeasurementSet) one = ms_measurement_set_load_with(argv[i], &read, &error);
        for (guint k = 0; k < notes->len; k++) {
            fprintf(stderr, "moesim: notice: %s\n", (const char *)notes->pdata[k]);
        }
        g_ptr_array_set_size(notes, 0);
        if (one == NULL) {
            return ms_cli_fail(error);
        }
        for (guint k = 0; k < ms_measurement_set_size(one); k++) {
            if (!ms_measurement_set_add(set, ms_measurement_set_get(one, k), &error)) {
                return ms_cli_fail(error);
            }
        }
    }
    /* Rows of one configuration in two datatypes, or a bad held-out list, are refused before
     * the (long) fits. */
    if (!ms_calibrate_check_dtypes(set, &error)) {
        return ms_cli_fail(error);
    }
    guint n = ms_measurement_set_size(set);
    g_autofree gboolean *held_configs = g_new(gboolean, MAX(n, 1));
    if (holdout_configs && !ms_holdout_configs(set, holdout_configs, held_configs, &error)) {
        g_prefix_error(&error, "--holdout-configs: ");
        return ms_cli_fail(error);
    }
    MsNetSpec net_spec;
    ms_net_spec_init(&net_spec);
    if (net && (!ms_net_spec_parse(net, &net_spec, &error) || net_spec.kind != MS_NET_NCCL)) {
        return error ? (g_prefix_error(&error, "--net: "), ms_cli_fail(error))
                     : ms_cli_usage("calibrate: --net '%s': only the nccl model has factors to "
                                    "fit",
                                    net);
    }
    g_autoptr(MsTopology) topo = ms_topology_load(topology, &error);
    if (topo == NULL) {
        return ms_cli_fail(error);
    }
    /* The nccl model's factors are fitted on the nominal topology, before the calibration's
     * link figures change it: first those of single collectives, then the NIC's arbitration on
     * top of them (the slowdowns depend little on the others, but the simulated times do). */
    MsNcclFit fit;
    g_auto(MsNicFit) nic = {0};
    g_autofree char *nic_note = NULL;
    if (net && !fit_net(topo, set, &net_spec, &fit, &nic, &nic_note, &error)) {
        return ms_cli_fail(error);
    }
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    g_autoptr(GPtrArray) report = g_ptr_array_new_with_free_func(g_free);
    if (!ms_calibrate(topo, set, &opts, cal, report, &error)) {
        /* Rows all under forced NCCL settings leave the flow model nothing, the nccl model its
         * fit: that one is still reported, when no calibration file is asked for. */
        if (!net || out ||
            !g_error_matches(error, MS_CALIBRATE_ERROR, MS_CALIBRATE_ERROR_NO_DATA)) {
            return ms_cli_fail(error);
        }
        g_ptr_array_add(report, g_strdup_printf("no flow model figures: %s", error->message));
        g_clear_error(&error);
    }
    for (int i = 1; i < argc; i++) {
        ms_calibration_add_source(cal, argv[i], NULL);
    }
    fprintf(out_text, "calibration of %s from %u measurements\n", ms_topology_name(topo),
            ms_measurement_set_size(set));
    for (guint i = 0; i < report->len; i++) {
        fprintf(out_text, "  %s\n", (const char *)report->pdata[i]);
    }
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    ms_json_member_string(b, "schema", "moesim.calibrate/1"); /* docs/outputs.md */
    json_builder_set_member_name(b, "fits");
    json_builder_begin_array(b);
    for (guint i = 0; i < report->len; i++) {
        json_builder_add_string_value(b, report->pdata[i]);
    }
    json_builder_end_array(b);
    if (net) {
        report_net(b, &fit, &nic, nic_note);
    }
    g_autofree gboolean *held = g_new(gboolean, MAX(n, 1));
    const MsNetSpec *held_net = net ? &net_spec : NULL;
    if (holdout_sizes) {
        ms_holdout_alternate_sizes(set, 1, held);
        if (!holdout("every other size", topology, set, held, &opts, held_net, b, &error)) {
            return ms_cli_fail(error);
        }
    }
    if (holdout_configs) {
        g_autofree char *name = g_strdup_printf("configurations %s", holdout_configs);
        if (!holdout(name, topology, set, held_configs, &opts, held_net, b, &error)) {
            return ms_cli_fail(error);
        }
    }
    json_builder_end_object(b);
    if (out) {
        if (!ms_calibration_save(cal, out, &error)) {
            return ms_cli_fail(error);
        }
        fprintf(out_text, "wrote %s\n", out);
    }
    if (json) {
        g_autoptr(JsonNode) root = json_builder_get_root(b);
        if (!ms_cli_write_json(json, root, &error)) {
            return ms_cli_fail(error);
        }
    }
    return MS_EXIT_OK;
}
