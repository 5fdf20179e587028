/* cmd_compare: `moesim compare`: several policies on the same inputs, side by side. */
#include "cli.h"
#include "commands.h"

#include <stdio.h>
#include <string.h>

#include "scenario_opts.h"
#include "sim/base/json_output.h"
#include "sim/out/figures.h"

#define DEFAULT_POLICIES "fifo,concurrent,priority,lina,schemoe"

/* The expert-parallel degree a result's schedule was planned with (its meta "ep"). */
static guint
result_ep(const MsResult *res)
{
    const char *ep = ms_schedule_get_meta(ms_result_schedule(res), "ep");
    return ep ? (guint)g_ascii_strtoull(ep, NULL, 10) : 0;
}

/* A line under the table for each policy whose all-to-alls span other GPUs than the model's
 * expert-parallel degree gives (Lina's packing): without it the all-to-all column compares
 * exchanges of different sizes as if they were one. */
static gboolean
note_degrees(FILE *text, const MsScenario *sc, const char *const *names, GPtrArray *results,
             GError **error)
{
    guint model_ep = 0;
    if (!ms_model_resolve_ep(sc->model, ms_topology_n_gpus(sc->topology), &model_ep, error)) {
        return FALSE;
    }
    for (guint i = 0; i < results->len; i++) {
        const MsSchedule *s = ms_result_schedule(results->pdata[i]);
        guint ep = result_ep(results->pdata[i]);
        if (ep == model_ep) {
            continue;
        }
        const char *pack = ms_schedule_get_meta(s, "lina.pack");
        const char *why = ms_schedule_get_meta(s, "lina.pack_reason");
        fprintf(text, "%s: expert-parallel degree %u, not %u", names[i], ep, model_ep);
        if (pack && why) {
            fprintf(text, " (it packs %s experts per GPU: %s)", pack, why);
        }
        fprintf(text,
                ": its all-to-alls span %u GPUs, and the allreduce adds the gradients of each "
                "expert's %u copies\n",
                ep, ep ? ms_topology_n_gpus(sc->topology) / ep : 0);
    }
    return TRUE;
}

/* DIR/layers.json ({"format": "moesim-layers-compare", "policies": [{"policy", "table"}]}) and
 * DIR/layers.csv (one table, a policy column first). */
static gboolean
write_layers(const char *dir, const char *const *names, GPtrArray *results, GError **error)
{
    g_autofree char *json_path = g_build_filename(dir, "layers.json", NULL);
    g_autofree char *csv_path = g_build_filename(dir, "layers.csv", NULL);
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    ms_json_member_string(b, "format", "moesim-layers-compare");
    ms_json_member_int(b, "version", MS_LAYERS_FORMAT);
    json_builder_set_member_name(b, "policies");
    json_builder_begin_array(b);
    MsOutputFile *f = ms_output_file_open(csv_path, MS_OUTPUT_REPLACE, error);
    if (f == NULL) {
        return FALSE;
    }
    for (guint i = 0; i < results->len; i++) {
        const MsLayerTable *t = ms_result_layers(results->pdata[i]);
        json_builder_begin_object(b);
        ms_json_member_string(b, "policy", names[i]);
        json_builder_set_member_name(b, "table");
        json_builder_add_value(b, ms_layer_table_to_json(t));
        json_builder_end_object(b);
        /* Policies with parameters hold commas: quote the column (RFC 4180). */
        g_autofree char *quoted = g_strdup_printf("\"%s\"", names[i]);
        ms_layer_table_write_csv(f, t, "policy", strchr(names[i], ',') ? quoted : names[i], i == 0);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    if (!ms_output_file_close(f, error)) {
        return FALSE;
    }
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    return ms_cli_write_json(json_path, root, error);
}

int
ms_cmd_compare(int argc, char **argv)
{
    g_auto(MsScenarioOpts) o = {0};
    g_autofree char *policies = NULL, *out = NULL, *json = NULL;
    gboolean layers = FALSE;
    gint jobs = 1;
    guint workers = 1;
    const GOptionEntry own[] = {
        MS_SCENARIO_JOBS_ENTRY(jobs),
        {"policies", 'p', 0, G_OPTION_ARG_STRING, &policies,
         "Policies to compare, separated by ';' or ',' (default " DEFAULT_POLICIES ")", "LIST"},
        {"out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
         "Folder for compare.json and the charts (default moesim-out)", "DIR"},
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &json,
         "Also write compare.json's report here (- for standard output, the text going to "
         "standard error)",
         "FILE"},
        {"layers", 0, 0, G_OPTION_ARG_NONE, &layers,
         "Also write every policy's per-iteration, per-layer figures: layers.json and layers.csv",
         NULL},
        {NULL},
    };
    g_autofree GOptionEntry *entries = ms_scenario_opts_with(&o, FALSE, own);
    if (!ms_cli_parse(&argc, &argv, entries, NULL,
                      "Compare scheduling policies on the same inputs.",
                      "Every policy plans and runs the same routing; the table gives per-iteration "
                      "means and the speedup over the first policy. Policies with parameters are "
                      "separated by ';' (e.g. 'fifo;lina:chunk=8MB'). See docs/running.md.")) {
        return MS_EXIT_USAGE;
    }
    if (argc > 1) {
        return ms_cli_usage("compare: unexpected argument '%s'", argv[1]);
    }
    if (!ms_scenario_opts_workers("compare", jobs, &workers)) {
        return MS_EXIT_USAGE;
    }
    const char *dir = out ? out : "moesim-out";
    g_autofree char *json_path = g_build_filename(dir, "compare.json", NULL);
    {
        g_autoptr(GError) claim = NULL;
        const char *outs[] = {json_path, json};
        if (!ms_cli_claim_outputs(outs, G_N_ELEMENTS(outs), &claim)) {
            return ms_cli_fail(claim);
        }
    }
    const char *list = policies ? policies : DEFAULT_POLICIES;
    g_auto(GStrv) names = g_strsplit_set(list, strchr(list, ';') ? ";" : ",", -1);
    if (g_strv_length(names) == 0 || names[0][0] == '\0') {
        return ms_cli_usage("compare: --policies is empty");
    }
    g_auto(MsCliScenario) cs = {0};
    int rc = ms_scenario_opts_setup(&o, FALSE, &cs);
    if (rc != MS_EXIT_OK) {
        return rc;
    }
    g_autoptr(GPtrArray) results = g_ptr_array_new_with_free_func((GDestroyNotify)ms_result_free);
    g_autoptr(GError) error = NULL;
    for (guint i = 0; names[i]; i++) {
        g_strstrip(names[i]);
        g_autoptr(MsPolicy) policy = ms_policy_parse(names[i], &error);
        MsScenario sc = cs.sc;
        sc.policy = policy;
        sc.layers = layers;
        sc.workers = workers;
        MsResult *res = policy ? ms_scenario_run(&sc, &error) : NULL;
        if (res == NULL) {
            g_prefix_error(&error, "policy %s: ", names[i]);
            return ms_cli_fail(error);
        }
        g_ptr_array_add(results, res);
    }
    /* With the JSON on standard output, the table goes to standard error. */
    FILE *text = json && !strcmp(json, "-") ? stderr : stdout;
    gboolean infer = cs.sc.mode == MS_PLAN_INFER;
    g_autofree char *what = ms_scenario_describe(&o, cs.sc.mode);
    fprintf(text, "moesim compare: %s, %u iteration%s each\n", what,
            ms_result_n_iterations(results->pdata[0]),
            ms_result_n_iterations(results->pdata[0]) == 1 ? "" : "s");
    /* ep: the GPUs an all-to-all spans. A policy that packs experts changes it, and with it
     * what its all-to-all column measures: the table says so (note_degrees). */
    if (infer) {
        fprintf(text, "%-24s %10s %10s %10s %10s %4s %10s %8s\n", "policy", "mean(ms)", "p50(ms)",
                "p95(ms)", "p99(ms)", "ep", "a2a(ms)", "speedup");
    } else {
        fprintf(text, "%-24s %10s %4s %10s %12s %13s %9s %8s\n", "policy", "step(ms)", "ep",
                "a2a(ms)", "exposed(ms)", "allreduce(ms)", "wait(ms)", "speedup");
    }
    g_autoptr(JsonBuilder) jb = json_builder_new();
    json_builder_begin_object(jb);
    ms_json_member_string(jb, "schema", "moesim.compare/1"); /* docs/outputs.md */
    json_builder_set_member_name(jb, "scenario");
    json_builder_add_string_value(jb, what);
    json_builder_set_member_name(jb, "policies");
    json_builder_begin_array(jb);
    MsMetrics base;
    ms_result_mean(results->pdata[0], &base);
    double base_p50 = ms_result_step_percentile(results->pdata[0], 50);
    for (guint i = 0; i < results->len; i++) {
        MsResult *res = results->pdata[i];
        MsMetrics m;
        ms_result_mean(res, &m);
        double p50 = ms_result_step_percentile(res, 50), p95 = ms_result_step_percentile(res, 95);
        double p99 = ms_result_step_percentile(res, 99);
        double speedup = infer ? base_p50 / p50 : base.step_us / m.step_us;
        guint ep = result_ep(res);
        if (infer) {
            fprintf(text, "%-24s %10.3f %10.3f %10.3f %10.3f %4u %10.3f %7.2fx\n", names[i],
                    m.step_us / 1e3, p50 / 1e3, p95 / 1e3, p99 / 1e3, ep, m.a2a_us / 1e3, speedup);
        } else {
            fprintf(text, "%-24s %10.3f %4u %10.3f %12.3f %13.3f %9.3f %7.2fx\n", names[i],
                    m.step_us / 1e3, ep, m.a2a_us / 1e3, m.exposed_comm_us / 1e3,
                    m.allreduce_us / 1e3, m.comm_wait_us / 1e3, speedup);
        }
        json_builder_begin_object(jb);
        json_builder_set_member_name(jb, "policy");
        json_builder_add_string_value(jb, names[i]);
        ms_json_member_int(jb, "ep", ep);
        ms_json_member_double(jb, "step_time_us", m.step_us);
        ms_json_member_double(jb, "a2a_us", m.a2a_us);
        ms_json_member_double(jb, "a2a_backward_us", m.a2a_bwd_us);
        ms_json_member_double(jb, "exposed_comm_us", m.exposed_comm_us);
        ms_json_member_double(jb, "comm_wait_us", m.comm_wait_us);
        ms_json_member_double(jb, "allreduce_us", m.allreduce_us);
        ms_json_member_double(jb, "step_time_p50_us", p50);
        ms_json_member_double(jb, "step_time_p95_us", p95);
        ms_json_member_double(jb, "step_time_p99_us", p99);
        ms_json_member_double(jb, "speedup", speedup);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    json_builder_end_object(jb);
    if (!note_degrees(text, &cs.sc, (const char *const *)names, results, &error)) {
        return ms_cli_fail(error);
    }
    if (g_mkdir_with_parents(dir, 0755) != 0) {
        return ms_cli_usage("compare: cannot create %s", dir);
    }
    g_autofree char *bars = g_build_filename(dir, "compare.png", NULL);
    g_autoptr(JsonNode) root = json_builder_get_root(jb);
    g_autofree char *title = g_strdup_printf("moesim compare: %s", what);
    if (!ms_cli_write_json(json_path, root, &error) ||
        (json && !ms_cli_write_json(json, root, &error)) ||
        !ms_figure_compare(bars, title, (const char *const *)names,
                           (MsResult *const *)results->pdata, results->len, &error)) {
        return ms_cli_fail(error);
    }
    g_autofree char *cdf = infer ? g_build_filename(dir, "latency-cdf.png", NULL) : NULL;
    if (cdf && !ms_figure_latency_cdf(cdf, title, (const char *const *)names,
                                      (MsResult *const *)results->pdata, results->len, &error)) {
        return ms_cli_fail(error);
    }
    if (layers && !write_layers(dir, (const char *const *)names, results, &error)) {
        return ms_cli_fail(error);
    }
    fprintf(text, "wrote %s and %s%s%s%s\n", json_path, bars, cdf ? " and " : "", cdf ? cdf : "",
            layers ? " and layers.json, layers.csv" : "");
    return MS_EXIT_OK;
}
