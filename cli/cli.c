/* cli: shared plumbing of the commands: option parsing, error reporting and output files. */
#include "cli.h"

#include "sim/base/file_claims.h"
#include "sim/base/json_output.h"
#include "sim/base/units.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

gboolean
ms_cli_parse(int *argc, char ***argv, const GOptionEntry *entries, const char *parameter_string,
             const char *summary, const char *description)
{
    g_autoptr(GOptionContext) ctx = g_option_context_new(parameter_string);
    g_option_context_set_summary(ctx, summary);
    if (description) {
        g_option_context_set_description(ctx, description);
    }
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_autoptr(GError) error = NULL;
    if (!g_option_context_parse(ctx, argc, argv, &error)) {
        fprintf(stderr, "%s: %s\nTry '%s --help'.\n", (*argv)[0], error->message, (*argv)[0]);
        return FALSE;
    }
    return TRUE;
}

int
ms_cli_fail(const GError *error)
{
    fprintf(stderr, "moesim: %s\n", error->message);
    return MS_EXIT_USAGE;
}

int
ms_cli_usage(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    fprintf(stderr, "moesim: %s\n", msg);
    return MS_EXIT_USAGE;
}

gboolean
ms_cli_write_json(const char *path, JsonNode *node, GError **error)
{
    return ms_json_write_file(path, node, TRUE, MS_OUTPUT_REPLACE, error);
}

gboolean
ms_cli_claim_outputs(const char *const *paths, guint n, GError **error)
{
    for (guint i = 0; i < n; i++) {
        if (paths[i] && !ms_file_claims_output(paths[i], FALSE, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

gboolean
ms_cli_parse_size(const char *option, const char *text, guint64 *out, GError **error)
{
    g_autoptr(GError) local = NULL;
    guint64 v = 0;
    gboolean ok = (text && g_ascii_isdigit(text[0]) && strspn(text, "0123456789") == strlen(text))
                      ? ms_parse_uint(text, 0, MS_BYTES_MAX, &v, &local)
                      : ms_parse_bytes(text, &v, &local);
    if (!ok) {
        g_set_error(error, MS_UNITS_ERROR, local->code, "%s: %s", option, local->message);
        return FALSE;
    }
    *out = v;
    return TRUE;
}

double
ms_cli_wall_seconds(void)
{
    return g_get_monotonic_time() * 1e-6;
}

guint64
ms_cli_peak_rss(void)
{
    g_autofree char *status = NULL;
    if (!g_file_get_contents("/proc/self/status", &status, NULL, NULL)) {
        return 0;
    }
    const char *hwm = strstr(status, "VmHWM:");
    return hwm ? g_ascii_strtoull(hwm + 6, NULL, 10) * 1024 : 0;
}

int
ms_cli_print_source(const char *what, MsInputKind kind, GBytes *(*shipped)(const char *name))
{
    g_autoptr(GBytes) data = NULL;
    if (g_file_test(what, G_FILE_TEST_EXISTS)) {
        g_autoptr(GError) error = NULL;
        char *text = NULL;
        gsize len = 0;
        if (!ms_input_file_read(what, kind, &text, &len, &error)) {
            return ms_cli_fail(error);
        }
        data = g_bytes_new_take(text, len);
    } else {
        data = shipped(what);
    }
    if (data == NULL) {
        return ms_cli_usage("%s: no such file or shipped name", what);
    }
    gsize len = 0;
    const char *text = g_bytes_get_data(data, &len);
    fwrite(text, 1, len, stdout);
    return MS_EXIT_OK;
}
