/* main: `moesim COMMAND [OPTIONS]`: finds the command in the table and runs it. */
#include "config.h"

#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "backends/registry.h"
#include "cli.h"
#include "sim/base/file_claims.h"
#include "sim/base/output_file.h"

static void
print_usage(FILE *out)
{
    fprintf(out, "Usage: moesim COMMAND [OPTIONS]\n\n"
                 "Trace-driven simulator of Mixture-of-Experts training and inference on GPU "
                 "clusters.\n\nCommands:\n");
    for (const MsCommand *c = ms_commands; c->name; c++) {
        fprintf(out, "  %-12s %s\n", c->name, c->summary);
    }
    fprintf(out, "\nRun 'moesim COMMAND --help' for the options of a command.\n"
                 "Exit status: 0 ok, 1 result outside a requested bound, 2 bad input or usage.\n");
}

/* A command's exit status, unless what it printed did not all reach standard output: a result
 * lost on a full disk must not exit 0. */
static int
finish(int rc)
{
    g_autoptr(GError) error = NULL;
    if (!ms_output_file_finish_stdout(&error)) {
        fprintf(stderr, "moesim: %s\n", error->message);
        return MS_EXIT_USAGE;
    }
    return rc;
}

static int
run(int argc, char **argv)
{
    /* Numbers in every output use '.' whatever the user's locale. */
    setlocale(LC_ALL, "C");
    if (argc < 2) {
        print_usage(stderr);
        return MS_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        print_usage(stdout);
        return MS_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        /* The backends this build has, from the registry (nothing is loaded). */
        printf("moesim %s (backends:", MOESIM_VERSION);
        gboolean first = TRUE;
        for (const MsBackendInfo *const *b = ms_backend_list(); *b; b++) {
            if (ms_backend_in_build(*b)) {
                printf("%s%s", first ? " " : ", ", (*b)->name);
                first = FALSE;
            }
        }
        printf(")\n");
        return MS_EXIT_OK;
    }
    for (const MsCommand *c = ms_commands; c->name; c++) {
        if (strcmp(c->name, argv[1]) == 0) {
            g_autofree char *prog = g_strdup_printf("moesim %s", c->name);
            argv[1] = prog;
            return c->run(argc - 1, argv + 1);
        }
    }
    fprintf(stderr, "moesim: unknown command '%s'\n\n", argv[1]);
    print_usage(stderr);
    return MS_EXIT_USAGE;
}

int
main(int argc, char **argv)
{
    /* One command per process: its inputs and outputs are checked against each other. */
    ms_file_claims_enable(TRUE);
    return finish(run(argc, argv));
}
