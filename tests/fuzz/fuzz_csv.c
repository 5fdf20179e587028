/* Fuzz target: the CSV reader every CSV input shares (sim/base/csv.h). The bytes are split into
 * lines as a file's are (the byte order mark first, LF or CR LF); each line split into fields must
 * either be refused with a message or give fields that, written back with ms_csv_append_field,
 * split into the same fields; a row always fits the width its own non-empty fields give. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "sim/base/csv.h"

static void
check_line(MsCsvFields *fields, MsCsvFields *again, const char *line)
{
    GError *error = NULL;
    if (!ms_csv_fields_split(fields, line, &error)) {
        if (ms_csv_fields_count(fields) != 0) {
            abort();
        }
        fuzz_refused(&error);
        return;
    }
    guint n = ms_csv_fields_count(fields);
    guint width = ms_csv_fields_width(fields);
    if (n == 0 || width > n || !ms_csv_fields_check_width(fields, width, NULL) ||
        (width < n && ms_csv_fields_check_width(fields, n + 1, NULL))) {
        abort();
    }
    g_autoptr(GString) written = g_string_new(NULL);
    for (guint i = 0; i < n; i++) {
        if (i) {
            g_string_append_c(written, ',');
        }
        ms_csv_append_field(written, ms_csv_fields_get(fields, i));
    }
    if (!ms_csv_fields_split(again, written->str, NULL) || ms_csv_fields_count(again) != n) {
        abort();
    }
    for (guint i = 0; i < n; i++) {
        if (strcmp(ms_csv_fields_get(fields, i), ms_csv_fields_get(again, i)) != 0) {
            abort();
        }
    }
}

int
LLVMFuzzerTestOneInput(const guint8 *data, size_t size)
{
    /* A line is a C string: text after a NUL byte is not part of it (the readers refuse NULs
     * before splitting). */
    g_autofree char *text = g_strndup((const char *)data, size);
    gsize len = strlen(text);
    gsize pos = ms_csv_bom_length(text, len);
    g_autoptr(MsCsvFields) fields = ms_csv_fields_new();
    g_autoptr(MsCsvFields) again = ms_csv_fields_new();
    char *line;
    while ((line = ms_csv_next_line(text, len, &pos)) != NULL) {
        check_line(fields, again, line);
        g_free(line);
    }
    return 0;
}
