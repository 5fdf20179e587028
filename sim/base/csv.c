/* csv: splitting a line into fields (RFC 4180 quotes, blanks trimmed outside them), the width
 * rule of rows, line ends, the byte order mark, and the quoting of a field written. */
#include "csv.h"

#include <string.h>

G_DEFINE_QUARK(ms_csv_error_quark, ms_csv_error)

struct _MsCsvFields {
    GString *cells; /* the fields, each followed by its NUL */
    GArray *starts; /* gsize: the offset of each field in cells */
};

gsize
ms_csv_bom_length(const char *data, gsize len)
{
    return len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
}

char *
ms_csv_next_line(const char *data, gsize len, gsize *pos)
{
    if (*pos >= len) {
        return NULL;
    }
    const char *start = data + *pos;
    const char *nl = memchr(start, '\n', len - *pos);
    gsize n = nl ? (gsize)(nl - start) : len - *pos;
    *pos += n + (nl != NULL);
    if (n > 0 && start[n - 1] == '\r') {
        n--;
    }
    return g_strndup(start, n);
}

MsCsvFields *
ms_csv_fields_new(void)
{
    MsCsvFields *f = g_new0(MsCsvFields, 1);
    f->cells = g_string_new(NULL);
    f->starts = g_array_new(FALSE, FALSE, sizeof(gsize));
    return f;
}

void
ms_csv_fields_free(MsCsvFields *f)
{
    if (f == NULL) {
        return;
    }
    g_string_free(f->cells, TRUE);
    g_array_unref(f->starts);
    g_free(f);
}

static gboolean
blank(char c)
{
    return c == ' ' || c == '\t';
}

static gboolean
syntax_error(MsCsvFields *f, GError **error, const char *what, gsize column)
{
    g_string_truncate(f->cells, 0);
    g_array_set_size(f->starts, 0);
    g_set_error(error, MS_CSV_ERROR, MS_CSV_ERROR_SYNTAX, "%s at column %" G_GSIZE_FORMAT, what,
                column);
    return FALSE;
}

/* A quoted field from p (at its opening quote) to past its closing one; NULL on error. */
static const char *
quoted(MsCsvFields *f, const char *line, const char *p, const char *end, GError **error)
{
    const char *open = p++;
    for (;;) {
        if (p == end) {
            syntax_error(f, error, "unterminated quoted field (a field does not span lines)",
                         (gsize)(open - line) + 1);
            return NULL;
        }
        if (*p == '"') {
            if (p + 1 < end && p[1] == '"') {
                g_string_append_c(f->cells, '"');
                p += 2;
                continue;
            }
            p++;
            break;
        }
        g_string_append_c(f->cells, *p++);
    }
    while (p < end && blank(*p)) {
        p++;
    }
    if (p < end && *p != ',') {
        syntax_error(f, error, "text after a closing quote", (gsize)(p - line) + 1);
        return NULL;
    }
    return p;
}

gboolean
ms_csv_fields_split(MsCsvFields *f, const char *line, GError **error)
{
    g_string_truncate(f->cells, 0);
    g_array_set_size(f->starts, 0);
    const char *p = line, *end = line + strlen(line);
    if (end > line && end[-1] == '\r') {
        end--;
    }
    for (;;) {
        while (p < end && blank(*p)) {
            p++;
        }
        gsize start = f->cells->len;
        g_array_append_val(f->starts, start);
        if (p < end && *p == '"') {
            if ((p = quoted(f, line, p, end, error)) == NULL) {
                return FALSE;
            }
        } else {
            while (p < end && *p != ',') {
                g_string_append_c(f->cells, *p++);
            }
            while (f->cells->len > start && blank(f->cells->str[f->cells->len - 1])) {
                g_string_truncate(f->cells, f->cells->len - 1);
            }
        }
        g_string_append_c(f->cells, '\0');
        if (p == end) {
            return TRUE;
        }
        p++; /* the comma */
    }
}

guint
ms_csv_fields_count(const MsCsvFields *f)
{
    return f->starts->len;
}

const char *
ms_csv_fields_get(const MsCsvFields *f, guint i)
{
    g_return_val_if_fail(i < f->starts->len, NULL);
    return f->cells->str + g_array_index(f->starts, gsize, i);
}

guint
ms_csv_fields_width(const MsCsvFields *f)
{
    guint n = f->starts->len;
    while (n > 0 && *ms_csv_fields_get(f, n - 1) == '\0') {
        n--;
    }
    return n;
}

char **
ms_csv_fields_dup(const MsCsvFields *f)
{
    char **names = g_new0(char *, f->starts->len + 1);
    for (guint i = 0; i < f->starts->len; i++) {
        names[i] = g_strdup(ms_csv_fields_get(f, i));
    }
    return names;
}

gboolean
ms_csv_fields_check_width(const MsCsvFields *f, guint n_columns, GError **error)
{
    guint n = f->starts->len;
    gboolean ok = n >= n_columns;
    for (guint i = n_columns; ok && i < n; i++) {
        ok = *ms_csv_fields_get(f, i) == '\0';
    }
    if (!ok) {
        g_set_error(error, MS_CSV_ERROR, MS_CSV_ERROR_WIDTH, "%u fields, but the header names %u",
                    n, n_columns);
    }
    return ok;
}

gint
ms_csv_column(char *const *names, const char *name)
{
    for (gint i = 0; names[i]; i++) {
        if (strcmp(names[i], name) == 0) {
            return i;
        }
    }
    return -1;
}

void
ms_csv_append_field(GString *out, const char *text)
{
    gsize n = strlen(text);
    gboolean quote = n > 0 && (blank(text[0]) || blank(text[n - 1]) || text[0] == '"' ||
                               strpbrk(text, ",\"\r\n") != NULL);
    if (!quote) {
        g_string_append(out, text);
        return;
    }
    g_string_append_c(out, '"');
    for (const char *p = text; *p; p++) {
        if (*p == '"') {
            g_string_append_c(out, '"');
        }
        g_string_append_c(out, *p);
    }
    g_string_append_c(out, '"');
}
