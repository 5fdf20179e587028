/* cmd_check: `moesim check`: reruns the scenarios of a baseline and fails (exit 1) with a
 * readable diff when schedule quality regressed beyond a tolerance: the regression gate for CI
 * pipelines (validate/gate.h). `--update` records the current figures as the new baseline. */
#include "cli.h"
#include "commands.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "validate/bound.h"
#include "validate/gate.h"
#include "validate/gate_report.h"

/* Where the text goes (standard error when the JSON report takes standard output) and the
 * report that collects every figure. */
typedef struct {
    FILE *text;
    MsGateReport *report;
} Out;

/* A figure's name in the table: the baseline's keys are in microseconds ("step_time_us"), the
 * table is in milliseconds, so it names the quantity, not the key. */
static const char *
figure_name(const char *metric)
{
    static const char *const names[][2] = {
        {"step_time_us", "step time"}, {"step_time_p95_us", "p95 step time"},
        {"a2a_us", "all-to-all"},      {"exposed_comm_us", "exposed communication"},
        {"allreduce_us", "allreduce"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        if (!strcmp(metric, names[i][0])) {
            return names[i][1];
        }
    }
    return metric;
}

static void
print_figure(const MsGateFigure *f, gpointer ctx)
{
    static const char *const verdicts[] = {"ok", "REGRESSED", "improved"};
    Out *o = ctx;
    /* A change that rounds to 0.00% is printed +0.00%, not -0.00%. */
    double change = fabs(f->change) < 5e-5 ? 0 : f->change;
    fprintf(o->text, "  %-28s %-22s %10.3f ms -> %10.3f ms  %+7.2f%%  %s\n",
            f->first ? f->name : "", figure_name(f->metric), f->expected_us / 1e3,
            f->measured_us / 1e3, 100 * change, verdicts[f->verdict]);
    ms_gate_report_add(f, o->report);
}

static void
print_recorded(guint scenario, const char *name, gpointer ctx)
{
    fprintf(((Out *)ctx)->text, "  %-28s recorded\n", name);
}

/* The JSON and JUnit reports the options ask for. */
static gboolean
write_reports(const MsGateReport *r, const char *json, const char *junit, GError **error)
{
    if (json) {
        g_autoptr(JsonNode) root = ms_gate_report_to_json(r);
        if (!ms_cli_write_json(json, root, error)) {
            return FALSE;
        }
    }
    g_autofree char *xml = junit ? ms_gate_report_to_junit(r) : NULL;
    return xml == NULL ||
           ms_output_file_set_contents(junit, MS_OUTPUT_REPLACE, xml, strlen(xml), error);
}

int
ms_cmd_check(int argc, char **argv)
{
    g_autofree char *baseline = NULL, *tolerance = NULL, *json = NULL, *junit = NULL;
    gboolean update = FALSE;
    const GOptionEntry entries[] = {
        {"baseline", 0, 0, G_OPTION_ARG_FILENAME, &baseline,
         "Baseline JSON: scenarios and their expected figures (required)", "FILE"},
        {"tolerance", 0, 0, G_OPTION_ARG_STRING, &tolerance,
         "Allowed worsening, e.g. 2% (default 2%)", "T"},
        {"update", 0, 0, G_OPTION_ARG_NONE, &update, "Record the current figures as the baseline",
         NULL},
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &json,
         "Write the comparison as JSON (- for standard output, the text going to standard error)",
         "FILE"},
        {"junit", 0, 0, G_OPTION_ARG_FILENAME, &junit,
         "Write the comparison as JUnit XML: a test case per figure, a failure per regression",
         "FILE"},
        {NULL},
    };
    if (!ms_cli_parse(&argc, &argv, entries, NULL, "Fail when schedule quality regressed.",
                      "Reruns every scenario of the baseline (fields: name, topology, model, "
                      "trace, policy, mode, iterations, warmup, seed) and compares step time, "
                      "p95, all-to-all, exposed communication and allreduce with its 'expect' "
                      "figures. Exit 1 when any is worse by more than the tolerance. See "
                      "docs/running.md.")) {
        return MS_EXIT_USAGE;
    }
    if (argc > 1 || baseline == NULL) {
        return ms_cli_usage("check: give --baseline FILE (and no other argument)");
    }
    {
        g_autoptr(GError) claim = NULL;
        const char *outs[] = {json, junit};
        if (!ms_cli_claim_outputs(outs, G_N_ELEMENTS(outs), &claim)) {
            return ms_cli_fail(claim);
        }
    }
    double tol = 0.02; /* 2%: deliberate model changes move figures by more (docs/running.md) */
    g_autoptr(GError) error = NULL;
    if (tolerance && !ms_bound_parse_percent(tolerance, &tol, &error)) {
        return ms_cli_usage("check: --tolerance '%s': %s", tolerance, error->message);
    }
    g_autoptr(MsBaseline) b = ms_baseline_load(baseline, &error);
    if (b == NULL) {
        return ms_cli_fail(error);
    }
    if (update && (json || junit)) {
        return ms_cli_usage("check: --update records figures; --json and --junit report a check");
    }
    g_autoptr(MsGateReport) report = ms_gate_report_new(baseline, tol);
    Out o = {json && !strcmp(json, "-") ? stderr : stdout, report};
    guint n = ms_baseline_n_scenarios(b);
    fprintf(o.text, "check: %u scenario%s from %s, tolerance %.2f%%\n", n, n == 1 ? "" : "s",
            baseline, 100 * tol);
    if (update) {
        if (!ms_gate_update(b, print_recorded, &o, &error) ||
            !ms_baseline_write(b, baseline, &error)) {
            return ms_cli_fail(error);
        }
        fprintf(o.text, "updated %s\n", baseline);
        return MS_EXIT_OK;
    }
    fprintf(o.text, "  %-28s %-22s %13s    %13s  %8s  %s\n", "scenario", "figure", "baseline (ms)",
            "now (ms)", "change", "verdict");
    MsGateSummary sum;
    if (!ms_gate_check(b, tol, print_figure, &o, &sum, &error) ||
        !write_reports(report, json, junit, &error)) {
        return ms_cli_fail(error);
    }
    if (sum.improved) {
        fprintf(o.text, "%u figure%s improved beyond the tolerance: record them with --update\n",
                sum.improved, sum.improved == 1 ? "" : "s");
    }
    if (sum.regressed) {
        fprintf(stderr,
                "moesim: schedule quality regressed: %u figure%s worse than %s by more "
                "than %.2f%%\n",
                sum.regressed, sum.regressed == 1 ? "" : "s", baseline, 100 * tol);
        return MS_EXIT_BOUND;
    }
    fprintf(o.text, "no regression\n");
    return MS_EXIT_OK;
}
