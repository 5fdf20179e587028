/* cmd_repro: `moesim repro NAME`: one of the Lina and ScheMoE papers' experiments as the papers
 * set them up (sim/repro.h), its table printed, its Markdown, JSON and charts written. */
#include "cli.h"
#include "commands.h"

#include <stdio.h>
#include <string.h>

#include "sim/out/plot.h"
#include "sim/repro.h"

static void
progress(guint done, guint total, const char *what, gpointer data)
{
    fprintf(stderr, "\r[%u/%u] %-70.70s", done, total, what);
    if (done == total) {
        fprintf(stderr, "\n");
    }
}

static void
list(void)
{
    printf("experiments (moesim repro NAME):\n");
    for (const char *const *n = ms_repro_names(); *n; n++) {
        printf("  %-18s %s\n", *n, ms_repro_summary(*n));
    }
}

int
ms_cmd_repro(int argc, char **argv)
{
    gboolean list_only = FALSE, quick = FALSE, quiet = FALSE;
    g_autofree char *out = NULL, *json = NULL, *net = NULL;
    gint threads = 0;
    const GOptionEntry entries[] = {
        {"list", 'l', 0, G_OPTION_ARG_NONE, &list_only, "List the experiments", NULL},
        {"quick", 0, 0, G_OPTION_ARG_NONE, &quick,
         "The reduced version CI runs (tests/golden/repro-NAME.json)", NULL},
        {"out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
         "Folder for NAME.md, NAME.json and the charts (default moesim-out/repro)", "DIR"},
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &json,
         "Also write the rows as JSON here (- for standard output, the table going to standard "
         "error)",
         "FILE"},
        {"net", 0, 0, G_OPTION_ARG_STRING, &net,
         "Network models, separated by ';' (default: flow and nccl:version=2.10)", "LIST"},
        {"jobs", 'j', 0, G_OPTION_ARG_INT, &threads, "Worker threads (default: one per processor)",
         "N"},
        {"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "No progress on standard error", NULL},
        {NULL},
    };
    if (!ms_cli_parse(&argc, &argv, entries, "NAME",
                      "Run one of the Lina and ScheMoE papers' experiments as they set it up.",
                      "Each experiment derives the paper's testbed and models, runs every policy "
                      "it compares (the papers' baselines included) under each network model, and "
                      "prints a table beside the paper's figures. docs/reproduce.md.")) {
        return MS_EXIT_USAGE;
    }
    if (list_only) {
        list();
        return MS_EXIT_OK;
    }
    if (argc != 2) {
        return ms_cli_usage("repro: give one experiment (moesim repro --list)");
    }
    if (threads < 0 || threads > 4096) {
        return ms_cli_usage("repro: --jobs must be between 0 and 4096");
    }
    g_auto(GStrv) nets = net ? g_strsplit(net, ";", -1) : NULL;
    MsReproOptions opts = {
        .quick = quick,
        .nets = (const char *const *)nets,
        .threads = (guint)threads,
        .progress = quiet ? NULL : progress,
    };
    g_autoptr(GError) error = NULL;
    double t0 = ms_cli_wall_seconds();
    g_autoptr(MsReproResult) res = ms_repro_run(argv[1], &opts, &error);
    if (res == NULL) {
        return ms_cli_fail(error);
    }
    FILE *text = json && !strcmp(json, "-") ? stderr : stdout;
    g_autofree char *md = ms_repro_result_markdown(res);
    fputs(md, text);
    const char *dir = out ? out : "moesim-out/repro";
    g_autoptr(JsonNode) root = ms_repro_result_to_json(res);
    if (json && !ms_cli_write_json(json, root, &error)) {
        return ms_cli_fail(error);
    }
    if (!ms_repro_result_write(res, dir, &error)) {
        if (!g_error_matches(error, MS_PLOT_ERROR, MS_PLOT_ERROR_GNUPLOT)) {
            return ms_cli_fail(error);
        }
        fprintf(stderr, "moesim repro: charts not rendered (%s); their scripts are in %s\n",
                error->message, dir);
    }
    fprintf(text, "\nwrote %s/%s.md, %s.json and the charts\n", dir, argv[1], argv[1]);
    fprintf(stderr, "moesim repro %s: %.1f s\n", argv[1], ms_cli_wall_seconds() - t0);
    return MS_EXIT_OK;
}
