/* cmd_check: `moesim check`: reruns the scenarios of a baseline and fails (exit 1) with a
 * readable diff when schedule quality regressed beyond a tolerance: the regression gate for CI
 * pipelines (validate/gate.h). `--update` records the current figures as the new baseline. */
#include "cli.h"
#include "commands.h"

#include <stdio.h>
#include <string.h>

#include "validate/bound.h"
#include "validate/gate.h"

static void
print_figure(const MsGateFigure *f, gpointer ctx)
{
    static const char *const verdicts[] = {"ok", "REGRESSED", "improved"};
    printf("  %-28s %-17s %12.3f ms -> %12.3f ms  %+7.2f%%  %s\n", f->first ? f->name : "",
           f->metric, f->expected_us / 1e3, f->measured_us / 1e3, 100 * f->change,
           verdicts[f->verdict]);
}

static void
print_recorded(guint scenario, const char *name, gpointer ctx)
{
    printf("  %-28s recorded\n", name);
}

int
ms_cmd_check(int argc, char **argv)
{
    g_autofree char *baseline = NULL, *tolerance = NULL;
    gboolean update = FALSE;
    const GOptionEntry entries[] = {
        {"baseline", 'b', 0, G_OPTION_ARG_FILENAME, &baseline,
         "Baseline JSON: scenarios and their expected figures (required)", "FILE"},
        {"tolerance", 't', 0, G_OPTION_ARG_STRING, &tolerance,
         "Allowed worsening, e.g. 2% (default 2%)", "T"},
        {"update", 0, 0, G_OPTION_ARG_NONE, &update, "Record the current figures as the baseline",
         NULL},
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
    double tol = 0.02; /* 2%: deliberate model changes move figures by more (docs/running.md) */
    g_autoptr(GError) error = NULL;
    if (tolerance && !ms_bound_parse_percent(tolerance, &tol, &error)) {
        return ms_cli_usage("check: --tolerance '%s': %s", tolerance, error->message);
    }
    g_autoptr(MsBaseline) b = ms_baseline_load(baseline, &error);
    if (b == NULL) {
        return ms_cli_fail(error);
    }
    guint n = ms_baseline_n_scenarios(b);
    printf("check: %u scenario%s from %s, tolerance %.2f%%\n", n, n == 1 ? "" : "s", baseline,
           100 * tol);
    if (update) {
        if (!ms_gate_update(b, print_recorded, NULL, &error) ||
            !ms_baseline_write(b, baseline, &error)) {
            return ms_cli_fail(error);
        }
        printf("updated %s\n", baseline);
        return MS_EXIT_OK;
    }
    MsGateSummary sum;
    if (!ms_gate_check(b, tol, print_figure, NULL, &sum, &error)) {
        return ms_cli_fail(error);
    }
    if (sum.improved) {
        printf("%u figure%s improved beyond the tolerance: record them with --update\n",
               sum.improved, sum.improved == 1 ? "" : "s");
    }
    if (sum.regressed) {
        fprintf(stderr,
                "moesim: schedule quality regressed: %u figure%s worse than %s by more "
                "than %.2f%%\n",
                sum.regressed, sum.regressed == 1 ? "" : "s", baseline, 100 * tol);
        return MS_EXIT_BOUND;
    }
    printf("no regression\n");
    return MS_EXIT_OK;
}
