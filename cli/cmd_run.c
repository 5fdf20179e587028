/* cmd_run: `moesim run`: one scenario: plan every iteration with a policy, execute it, report. */
#include "cli.h"
#include "commands.h"

#include <stdio.h>
#include <string.h>

#include "scenario_opts.h"
#include "sim/out/chrome_trace.h"
#include "sim/out/figures.h"

static void
print_metrics(FILE *out, const MsResult *res, MsPlanMode mode)
{
    MsMetrics m;
    ms_result_mean(res, &m);
    guint n = ms_result_n_iterations(res);
    const char *what = mode == MS_PLAN_INFER ? "batch latency" : "step time";
    fprintf(out, "  %-22s %10.3f ms%s\n", what, m.step_us / 1e3, n > 1 ? " (mean)" : "");
    if (mode == MS_PLAN_INFER || n > 1) {
        fprintf(out, "  %-22s %10.3f / %.3f / %.3f ms\n", "p50 / p95 / p99",
                ms_result_step_percentile(res, 50) / 1e3, ms_result_step_percentile(res, 95) / 1e3,
                ms_result_step_percentile(res, 99) / 1e3);
    }
    fprintf(out, "  %-22s %10.3f ms per GPU\n", "compute", m.compute_us / 1e3);
    fprintf(out, "  %-22s %10.3f ms per GPU (forward %.3f, backward %.3f)\n", "all-to-all",
            m.a2a_us / 1e3, m.a2a_fwd_us / 1e3, m.a2a_bwd_us / 1e3);
    fprintf(out, "  %-22s %10.3f ms per GPU\n", "allreduce", m.allreduce_us / 1e3);
    fprintf(out, "  %-22s %10.3f ms per GPU (%.1f%% of the %s)\n", "exposed communication",
            m.exposed_comm_us / 1e3, m.step_us > 0 ? 100 * m.exposed_comm_us / m.step_us : 0,
            mode == MS_PLAN_INFER ? "latency" : "step");
    fprintf(out, "  %-22s %10.3f ms per GPU (collectives ready here, waiting for a later GPU)\n",
            "waiting for peers", m.comm_wait_us / 1e3);
    char buf[32];
    fprintf(out, "  %-22s %10s per iteration\n", "all-to-all traffic",
            ms_format_bytes(m.a2a_bytes, buf, sizeof buf));
    if (m.dropped_tokens) {
        fprintf(out, "  %-22s %10" G_GUINT64_FORMAT " (capacity factor)\n", "dropped tokens",
                m.dropped_tokens);
    }
}

gboolean
ms_cli_make_parent(const char *path, GError **error)
{
    if (path == NULL || !strcmp(path, "-")) {
        return TRUE;
    }
    g_autofree char *dir = g_path_get_dirname(path);
    if (g_mkdir_with_parents(dir, 0755) != 0) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "cannot create %s", dir);
        return FALSE;
    }
    return TRUE;
}

gboolean
ms_cli_write_outputs(MsResult *res, const char *json, const char *chrome, const char *csv,
                     const char *plot_dir, GError **error)
{
    if (!ms_cli_make_parent(json, error) || !ms_cli_make_parent(chrome, error) ||
        !ms_cli_make_parent(csv, error)) {
        return FALSE;
    }
    if (json) {
        g_autoptr(JsonNode) root = ms_result_to_json(res);
        if (!ms_cli_write_json(json, root, error)) {
            return FALSE;
        }
    }
    if ((chrome && !ms_result_write_chrome(res, chrome, error)) ||
        (csv && !ms_result_write_csv(res, csv, error))) {
        return FALSE;
    }
    if (plot_dir == NULL) {
        return TRUE;
    }
    if (g_mkdir_with_parents(plot_dir, 0755) != 0) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "cannot create %s", plot_dir);
        return FALSE;
    }
    const MsSchedule *s = ms_result_schedule(res);
    const MsRecords *r = ms_result_records(res);
    g_autofree char *timeline = g_build_filename(plot_dir, "timeline.png", NULL);
    g_autofree char *links = g_build_filename(plot_dir, "links.png", NULL);
    /* The timeline and the links show the detailed iteration, the CDF every iteration. */
    guint n = ms_result_n_iterations(res);
    const char *unit = !g_strcmp0(ms_schedule_get_meta(s, "mode"), "infer") ? "batches" : "steps";
    g_autofree char *base = g_strdup_printf(
        "moesim: %s, policy %s", ms_schedule_get_meta(s, "model"), ms_schedule_policy(s));
    g_autofree char *title =
        n > 1 ? g_strdup_printf("%s (the first of %u %s)", base, n, unit) : g_strdup(base);
    if (!ms_figure_timeline(timeline, title, s, r, 8, error) ||
        !ms_figure_links(links, title, r, error)) {
        return FALSE;
    }
    if (n > 1) {
        g_autofree char *cdf = g_build_filename(plot_dir, "latency-cdf.png", NULL);
        g_autofree char *all = g_strdup_printf("%s, %u %s", base, n, unit);
        const char *names[] = {ms_schedule_policy(s)};
        MsResult *one[] = {res};
        return ms_figure_latency_cdf(cdf, all, names, one, 1, error);
    }
    return TRUE;
}

/* The Chrome trace as a sink of the run: the iterations selected, written as they finish. */
typedef struct {
    MsChromeTrace *trace;
    guint first, count;
} ChromeSink;

static gboolean
chrome_wants(gpointer data, guint iteration)
{
    const ChromeSink *c = data;
    return iteration >= c->first && iteration - c->first < c->count;
}

static gboolean
chrome_each(gpointer data, guint iteration, const MsSchedule *s, const MsRecords *r, GError **error)
{
    return ms_chrome_trace_add(((ChromeSink *)data)->trace, iteration, s, r, error);
}

/* Ends the trace: the selection must have been run whole (a count asked for is a count run). */
static gboolean
chrome_finish(ChromeSink *c, const char *spec, guint ran, GError **error)
{
    if (c->count != G_MAXUINT && (c->first >= ran || c->count > ran - c->first)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--chrome-iterations %s: the run has %u iteration%s (0 to %u)", spec, ran,
                    ran == 1 ? "" : "s", ran - 1);
        return FALSE;
    }
    return ms_chrome_trace_close(c->trace, error);
}

/* The link timeline's outputs in plot_dir: the CSV of the detailed iteration, and the chart of
 * the first all-to-all that shares the link with an allreduce (of the whole iteration when none
 * does). Reports the window on out. */
static gboolean
write_link_timeline(const MsLinkTimeline *tl, const MsResult *res, const char *plot_dir, FILE *out,
                    GError **error)
{
    g_autofree char *csv = g_build_filename(plot_dir, "link-timeline.csv", NULL);
    g_autofree char *png = g_build_filename(plot_dir, "link-timeline.png", NULL);
    if (!ms_link_timeline_write_csv(tl, csv, error)) {
        return FALSE;
    }
    MsTime from = 0, to = MS_TIME_NEVER;
    const char *op = NULL;
    gboolean overlap = ms_link_timeline_overlap(tl, "alltoall", "allreduce", &from, &to, &op);
    const MsSchedule *s = ms_result_schedule(res);
    g_autofree char *what =
        overlap ? g_strdup_printf("%s, from %.1f us of the step", op, ms_time_to_us(from))
                : g_strdup("the first iteration");
    g_autofree char *title =
        g_strdup_printf("moesim: %s, policy %s: flows on the link\n%s",
                        ms_schedule_get_meta(s, "model"), ms_schedule_policy(s), what);
    fprintf(out, "  %-22s %u flows, %u rate steps in %s; chart: %s%s\n", "link timeline",
            ms_link_timeline_n_series(tl), ms_link_timeline_n_steps(tl), csv,
            overlap ? "from the first all-to-all sharing the link with an allreduce, " : "",
            overlap ? op : "the whole iteration (no all-to-all shares the link with an allreduce)");
    return ms_link_timeline_plot(tl, png, title, from, to, error);
}

int
ms_cmd_run(int argc, char **argv)
{
    g_auto(MsScenarioOpts) o = {0};
    g_autofree char *json = NULL, *chrome = NULL, *csv = NULL, *plot = NULL, *which = NULL;
    g_autofree char *layers = NULL, *link = NULL;
    gint jobs = 1;
    guint workers = 1;
    const GOptionEntry outputs[] = {
        MS_SCENARIO_JOBS_ENTRY(jobs),
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &json,
         "Summary and per-op records as JSON (- for standard output, the text going to standard "
         "error)",
         "FILE"},
        {"chrome-trace", 0, 0, G_OPTION_ARG_FILENAME, &chrome,
         "Chrome trace-event JSON of every iteration (Perfetto), written as the run goes", "FILE"},
        {"chrome-iterations", 0, 0, G_OPTION_ARG_STRING, &which,
         "The iterations of --chrome-trace: all (default), N or A-B, counted from 0", "SPEC"},
        {"csv", 0, 0, G_OPTION_ARG_FILENAME, &csv, "Per-op CSV of the first iteration", "FILE"},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &plot,
         "Write timeline.png, links.png (and latency-cdf.png) here", "DIR"},
        {"link-timeline", 0, 0, G_OPTION_ARG_STRING, &link,
         "Record every flow on LINK (e.g. n0.nic0->fabric) in the first iteration: "
         "link-timeline.csv and .png in the --plot DIR",
         "LINK"},
        {"layers", 0, 0, G_OPTION_ARG_FILENAME, &layers,
         "Per-iteration, per-layer figures of every iteration (FILE.json or FILE.csv)", "FILE"},
        {NULL},
    };
    g_autofree GOptionEntry *entries = ms_scenario_opts_with(&o, TRUE, outputs);
    if (!ms_cli_parse(&argc, &argv, entries, NULL,
                      "Simulate MoE training steps or inference batches under a policy.",
                      "Without options: one training step of lina-gpt2-16e on lina-testbed under "
                      "fifo with generated routing. See docs/running.md.")) {
        return MS_EXIT_USAGE;
    }
    if (argc > 1) {
        return ms_cli_usage("run: unexpected argument '%s'", argv[1]);
    }
    if (!ms_scenario_opts_workers("run", jobs, &workers)) {
        return MS_EXIT_USAGE;
    }
    {
        g_autoptr(GError) claim = NULL;
        const char *outs[] = {json, chrome, csv, layers};
        if (!ms_cli_claim_outputs(outs, G_N_ELEMENTS(outs), &claim)) {
            return ms_cli_fail(claim);
        }
    }
    g_autoptr(GError) error = NULL;
    ChromeSink sink = {NULL, 0, G_MAXUINT};
    if (which && (chrome == NULL ||
                  !ms_chrome_trace_parse_iterations(which, &sink.first, &sink.count, &error))) {
        return ms_cli_usage("run: --chrome-iterations: %s",
                            error ? error->message : "give --chrome-trace FILE too");
    }
    if (link && plot == NULL) {
        return ms_cli_usage("run: --link-timeline writes into the --plot DIR: give it too");
    }
    o.link_timeline = link;
    g_auto(MsCliScenario) cs = {0};
    /* Link series feed the plots and the trace's utilisation counters. */
    int rc = ms_scenario_opts_setup(&o, plot != NULL || chrome != NULL, &cs);
    if (rc != MS_EXIT_OK) {
        return rc;
    }
    g_autoptr(MsChromeTrace) trace = NULL;
    const MsIterationSink to_chrome = {chrome_wants, chrome_each, &sink};
    if (chrome) {
        trace = ms_cli_make_parent(chrome, &error) ? ms_chrome_trace_open(chrome, &error) : NULL;
        if (trace == NULL) {
            return ms_cli_fail(error);
        }
        sink.trace = trace;
        cs.sc.sink = &to_chrome;
    }
    if (layers && !ms_cli_make_parent(layers, &error)) {
        return ms_cli_fail(error);
    }
    cs.sc.layers = layers != NULL;
    /* A link timeline is one recorder that every detailed execution writes into: those run one
     * at a time. */
    cs.sc.workers = cs.timeline ? 1 : workers;
    double t0 = ms_cli_wall_seconds();
    g_autoptr(MsResult) res = ms_scenario_run(&cs.sc, &error);
    if (res == NULL ||
        (trace && !chrome_finish(&sink, which, ms_result_n_iterations(res), &error))) {
        return ms_cli_fail(error);
    }
    double wall = ms_cli_wall_seconds() - t0;
    /* With the JSON on standard output, the text report goes to standard error. */
    FILE *text = json && !strcmp(json, "-") ? stderr : stdout;
    g_autofree char *what = ms_scenario_describe(&o, cs.sc.mode);
    fprintf(text, "moesim run: %s, policy %s, %u iteration%s\n", what,
            ms_schedule_policy(ms_result_schedule(res)), ms_result_n_iterations(res),
            ms_result_n_iterations(res) == 1 ? "" : "s");
    print_metrics(text, res, cs.sc.mode);
    if (!ms_cli_write_outputs(res, json, NULL, csv, plot, &error) ||
        (layers && !ms_layer_table_save(ms_result_layers(res), layers, &error)) ||
        (cs.timeline && !write_link_timeline(cs.timeline, res, plot, text, &error))) {
        return ms_cli_fail(error);
    }
    /* Wall-clock figures go to standard error: outputs are identical for identical inputs. */
    fprintf(stderr, "# ran in %.3f s of wall time\n", wall);
    return MS_EXIT_OK;
}
