/* cli: what every moesim command shares: the command table, option parsing with GOptionContext,
 * the exit-code convention and writing reports to a file or standard output. Only code under
 * cli/ prints or exits. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>

#include "sim/base/input_file.h"
#include "sim/base/output_file.h"
#include "validate/fit.h"

G_BEGIN_DECLS

/* Exit codes of every command. */
enum {
    MS_EXIT_OK = 0,
    MS_EXIT_BOUND = 1, /* ran fine, but a result lies outside a bound the user asked for */
    MS_EXIT_USAGE = 2, /* bad input or usage: the message says what and where */
};

typedef struct {
    const char *name;
    const char *summary;
    /* argv[0] is "moesim NAME"; returns an exit code. */
    int (*run)(int argc, char **argv);
} MsCommand;

/* The table of commands, NULL-name terminated (commands.c). */
extern const MsCommand ms_commands[];

/* Parses argv with the given entries. parameter_string describes positional arguments (may be
 * NULL), description is printed after the options in --help. On a parse error prints
 * "moesim NAME: message" with a hint to --help and returns FALSE; the caller returns
 * MS_EXIT_USAGE. --help itself prints and exits 0 (GOptionContext's behaviour). */
gboolean ms_cli_parse(int *argc, char ***argv, const GOptionEntry *entries,
                      const char *parameter_string, const char *summary, const char *description);

/* Prints "moesim: MESSAGE" for error to stderr and returns MS_EXIT_USAGE. */
int ms_cli_fail(const GError *error);
/* Prints "moesim: formatted message" and returns MS_EXIT_USAGE. */
int ms_cli_usage(const char *format, ...) G_GNUC_PRINTF(1, 2);

/* Parses a byte count given on the command line: a bare integer means bytes ("8"), otherwise the
 * units of ms_parse_bytes ("64KiB", "1G"). The error names the option. */
gboolean ms_cli_parse_size(const char *option, const char *text, guint64 *out, GError **error);

/* Seconds of wall-clock time since an arbitrary origin (monotonic), for "wall" figures. */
double ms_cli_wall_seconds(void);

/* Peak resident set size of this process in bytes (0 when unknown). */
guint64 ms_cli_peak_rss(void);

/* Prints the text a named input was read from: the file `what` when it exists (read as an input
 * of that kind, sim/base/input_file.h), else the shipped copy that shipped(what) returns. */
int ms_cli_print_source(const char *what, MsInputKind kind, GBytes *(*shipped)(const char *name));

/* Writes node as pretty JSON to path ("-" = stdout) through sim/base/output_file (every write
 * checked; FALSE with a message naming the path). */
gboolean ms_cli_write_json(const char *path, JsonNode *node, GError **error);

/* Claims the outputs a command was asked to write (NULL entries: options not given) as soon as
 * its options are parsed (sim/base/file_claims.h): two on one file, or one that is an input
 * already read, are refused, and an input opened later that is one of them is refused too, all
 * before any work is done. */
gboolean ms_cli_claim_outputs(const char *const *paths, guint n, GError **error);

G_END_DECLS
