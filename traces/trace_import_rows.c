/* trace_import_rows: CSV (the reader every CSV input shares, sim/base/csv.h: RFC 4180 quoting, a
 * byte order mark, CR LF; a header row naming the columns) and JSON Lines (json-glib, one object a
 * line) into MsTraceImportRow. Lines are bounded (1 MiB). */
#include "trace_import_rows.h"

#include <errno.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include "sim/base/csv.h"
#include "sim/base/input_file.h"
#include "sim/base/json_input.h"
#include "trace_import_fw.h"
#include "trace_lines.h"

#define LINE_MAX_BYTES (1u << 20)

enum {
    COL_ITERATION,
    COL_LAYER,
    COL_RANK,
    COL_TOKEN,
    COL_EXPERTS,
    N_NAMED,
};

static const char *const named[N_NAMED] = {"iteration", "layer", "rank", "token", "experts"};

struct _MsTraceImportRows {
    MsTraceImportFw *fw; /* the list formats: the rest is unused */
    char *path;
    FILE *file;
    MsTraceLines *lines;
    MsTraceImportFormat format;
    guint n_columns;
    char **names;        /* of the CSV columns */
    gint col[N_NAMED];   /* CSV column of each named field, -1 when absent */
    GArray *expert_cols; /* guint: columns holding one expert id (csv) or one count */
    MsCsvFields *fields; /* of the current CSV line */
    gboolean first_read; /* the first line was read: a byte order mark can no longer come */
    GArray *values;      /* guint64 */
    JsonParser *parser;
    gint present[N_NAMED]; /* JSON Lines: -1 undecided, else whether the field is given */
    guint64 decided_line;
};

static void fail(const MsTraceImportRows *r, GError **error, MsTraceImportError code,
                 const char *format, ...) G_GNUC_PRINTF(4, 5);

static void
fail(const MsTraceImportRows *r, GError **error, MsTraceImportError code, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, MS_TRACE_IMPORT_ERROR, code, "%s:%" G_GUINT64_FORMAT ": %s", r->path,
                ms_trace_lines_number(r->lines), msg);
}

void
ms_trace_import_rows_free(MsTraceImportRows *r)
{
    if (r == NULL) {
        return;
    }
    if (r->fw) {
        ms_trace_import_fw_free(r->fw);
        g_free(r);
        return;
    }
    ms_trace_lines_free(r->lines);
    if (r->file) {
        fclose(r->file);
    }
    g_array_unref(r->expert_cols);
    ms_csv_fields_free(r->fields);
    g_array_unref(r->values);
    g_clear_object(&r->parser);
    g_strfreev(r->names);
    g_free(r->path);
    g_free(r);
}

/* Next line that is neither blank nor a '#' comment; FALSE at the end or on error. */
static gboolean
next_data_line(MsTraceImportRows *r, const char **text, gboolean *end, GError **error)
{
    *end = FALSE;
    for (;;) {
        switch (ms_trace_lines_next(r->lines)) {
        case MS_TRACE_LINE_END:
            *end = TRUE;
            return FALSE;
        case MS_TRACE_LINE_TOO_LONG:
            fail(r, error, MS_TRACE_IMPORT_ERROR_SYNTAX, "line longer than %u bytes",
                 LINE_MAX_BYTES);
            return FALSE;
        case MS_TRACE_LINE_IO:
            fail(r, error, MS_TRACE_IMPORT_ERROR_IO, "read error: %s",
                 g_strerror(ms_trace_lines_errno(r->lines)));
            return FALSE;
        case MS_TRACE_LINE_OK:
            break;
        }
        const char *p = ms_trace_lines_text(r->lines, NULL);
        if (!r->first_read) {
            p += ms_csv_bom_length(p, strlen(p));
            r->first_read = TRUE;
        }
        while (*p == ' ' || *p == '\t') {
            p++;
        }
        if (*p != '\0' && *p != '#') {
            *text = p;
            return TRUE;
        }
    }
}

static const char *
cell(const MsTraceImportRows *r, guint i)
{
    return ms_csv_fields_get(r->fields, i);
}

static gboolean
split_csv(MsTraceImportRows *r, const char *p, GError **error)
{
    g_autoptr(GError) local = NULL;
    if (!ms_csv_fields_split(r->fields, p, &local)) {
        fail(r, error, MS_TRACE_IMPORT_ERROR_SYNTAX, "%s", local->message);
        return FALSE;
    }
    return TRUE;
}

static gint
named_index(const char *name, MsTraceImportFormat format)
{
    guint n = format == MS_TRACE_IMPORT_COUNTS_CSV ? COL_TOKEN : N_NAMED;
    for (guint i = 0; i < n; i++) {
        if (g_ascii_strcasecmp(name, named[i]) == 0) {
            return (gint)i;
        }
    }
    return -1;
}

static gboolean
map_column(MsTraceImportRows *r, guint c, GError **error)
{
    const char *name = cell(r, c);
    gint i = named_index(name, r->format);
    if (i >= 0) {
        if (r->col[i] >= 0) {
            fail(r, error, MS_TRACE_IMPORT_ERROR_COLUMNS, "column '%s' given twice", name);
            return FALSE;
        }
        r->col[i] = (gint)c;
        return TRUE;
    }
    if (r->format == MS_TRACE_IMPORT_CSV && g_ascii_strncasecmp(name, "expert", 6) != 0) {
        fail(r, error, MS_TRACE_IMPORT_ERROR_COLUMNS,
             "unknown column '%s' (known: iteration, layer, rank, token, and either experts or "
             "expert0, expert1, ...)",
             name);
        return FALSE;
    }
    g_array_append_val(r->expert_cols, c);
    return TRUE;
}

static const char *
missing_column(const MsTraceImportRows *r)
{
    if (r->col[COL_LAYER] < 0) {
        return "layer";
    }
    if (r->format == MS_TRACE_IMPORT_COUNTS_CSV) {
        return r->col[COL_RANK] < 0 ? "rank" : r->expert_cols->len == 0 ? "expert count" : NULL;
    }
    return r->col[COL_EXPERTS] < 0 && r->expert_cols->len == 0 ? "experts" : NULL;
}

static gboolean
check_columns(MsTraceImportRows *r, GError **error)
{
    const char *missing = missing_column(r);
    if (missing) {
        fail(r, error, MS_TRACE_IMPORT_ERROR_COLUMNS, "the header row lacks a %s column", missing);
        return FALSE;
    }
    if (r->format == MS_TRACE_IMPORT_CSV && r->col[COL_EXPERTS] >= 0 && r->expert_cols->len) {
        fail(r, error, MS_TRACE_IMPORT_ERROR_COLUMNS,
             "give the expert ids either as one 'experts' list column or as expert0, expert1, "
             "... columns, not both");
        return FALSE;
    }
    return TRUE;
}

static gboolean
read_csv_header(MsTraceImportRows *r, GError **error)
{
    const char *text = NULL;
    gboolean end = FALSE;
    if (!next_data_line(r, &text, &end, error)) {
        if (end) {
            g_set_error(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_COLUMNS,
                        "%s:%" G_GUINT64_FORMAT ": no header row (the file is empty)", r->path,
                        MAX(ms_trace_lines_number(r->lines), 1));
        }
        return FALSE;
    }
    if (!split_csv(r, text, error)) {
        return FALSE;
    }
    r->n_columns = ms_csv_fields_width(r->fields);
    r->names = g_new0(char *, r->n_columns + 1);
    for (guint c = 0; c < r->n_columns; c++) {
        r->names[c] = g_strdup(cell(r, c));
    }
    for (guint c = 0; c < r->n_columns; c++) {
        if (!map_column(r, c, error)) {
            return FALSE;
        }
    }
    return check_columns(r, error);
}

MsTraceImportRows *
ms_trace_import_rows_open(const char *path, MsTraceImportFormat format,
                          const MsTraceImportOptions *options, GError **error)
{
    if (ms_trace_import_fw_format(format)) {
        MsTraceImportFw *fw = ms_trace_import_fw_open(path, format, options, error);
        if (fw == NULL) {
            return NULL;
        }
        MsTraceImportRows *r = g_new0(MsTraceImportRows, 1);
        r->fw = fw;
        r->format = format;
        return r;
    }
    g_autoptr(GError) local = NULL;
    FILE *f = ms_input_file_open(path, MS_INPUT_TRACE_IMPORT, &local);
    if (f == NULL) {
        g_set_error_literal(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_IO, local->message);
        return NULL;
    }
    g_autoptr(MsTraceImportRows) r = g_new0(MsTraceImportRows, 1);
    r->path = g_strdup(path);
    r->file = f;
    r->lines = ms_trace_lines_new(f, LINE_MAX_BYTES);
    r->format = format;
    r->expert_cols = g_array_new(FALSE, FALSE, sizeof(guint));
    r->fields = ms_csv_fields_new();
    r->values = g_array_new(FALSE, FALSE, sizeof(guint64));
    for (guint i = 0; i < N_NAMED; i++) {
        r->col[i] = -1;
        r->present[i] = -1;
    }
    if (format == MS_TRACE_IMPORT_JSONL) {
        r->parser = json_parser_new();
    } else if (!read_csv_header(r, error)) {
        return NULL;
    }
    return g_steal_pointer(&r);
}

static gboolean
parse_u64(MsTraceImportRows *r, const char *field, const char *text, gsize len, guint64 max,
          guint64 *out, GError **error)
{
    switch (ms_trace_parse_number(text, len, max, out)) {
    case MS_TRACE_NUMBER_OK:
        return TRUE;
    case MS_TRACE_NUMBER_SYNTAX:
        fail(r, error, MS_TRACE_IMPORT_ERROR_SYNTAX, "%s: '%.*s' is not a non-negative integer",
             field, (int)MIN(len, 64), text);
        return FALSE;
    case MS_TRACE_NUMBER_OVERFLOW:
        fail(r, error, MS_TRACE_IMPORT_ERROR_RANGE,
             "%s: %.*s is too large (at most %" G_GUINT64_FORMAT ")", field, (int)MIN(len, 64),
             text, max);
        return FALSE;
    }
    return FALSE;
}

/* An expert-id list: ids separated by blanks, ';' or ',', optionally within [ ]. */
static gboolean
parse_id_list(MsTraceImportRows *r, const char *text, GError **error)
{
    const char *p = text, *end = text + strlen(text);
    if (*p == '[' && end > p && end[-1] == ']') {
        p++;
        end--;
    }
    while (p < end) {
        while (p < end && strchr(" \t;,", *p)) {
            p++;
        }
        const char *s = p;
        while (p < end && !strchr(" \t;,", *p)) {
            p++;
        }
        guint64 id = 0;
        if (p > s) {
            if (!parse_u64(r, "column 'experts'", s, (gsize)(p - s), G_MAXUINT64, &id, error)) {
                return FALSE;
            }
            g_array_append_val(r->values, id);
        }
    }
    if (r->values->len == 0) {
        fail(r, error, MS_TRACE_IMPORT_ERROR_SYNTAX, "column 'experts' holds no expert id");
        return FALSE;
    }
    return TRUE;
}

static gboolean
csv_named(MsTraceImportRows *r, guint field, guint64 max, guint64 *out, GError **error)
{
    *out = 0;
    if (r->col[field] < 0) {
        return TRUE;
    }
    const char *text = cell(r, (guint)r->col[field]);
    g_autofree char *what = g_strdup_printf("column '%s'", named[field]);
    return parse_u64(r, what, text, strlen(text), max, out, error);
}

static MsTraceRead
next_csv(MsTraceImportRows *r, const char *text, MsTraceImportRow *row, GError **error)
{
    if (!split_csv(r, text, error)) {
        return MS_TRACE_READ_ERROR;
    }
    g_autoptr(GError) local = NULL;
    if (!ms_csv_fields_check_width(r->fields, r->n_columns, &local)) {
        fail(r, error, MS_TRACE_IMPORT_ERROR_SYNTAX, "%s", local->message);
        return MS_TRACE_READ_ERROR;
    }
    guint64 layer, rank;
    if (!csv_named(r, COL_ITERATION, MS_TRACE_MAX_ITERATION, &row->iteration, error) ||
        !csv_named(r, COL_LAYER, G_MAXUINT32, &layer, error) ||
        !csv_named(r, COL_RANK, G_MAXUINT32, &rank, error) ||
        !csv_named(r, COL_TOKEN, G_MAXUINT64, &row->token, error)) {
        return MS_TRACE_READ_ERROR;
    }
    row->layer = (guint32)layer;
    row->rank = (guint32)rank;
    if (r->col[COL_EXPERTS] >= 0) {
        return parse_id_list(r, cell(r, (guint)r->col[COL_EXPERTS]), error) ? MS_TRACE_READ_RECORD
                                                                            : MS_TRACE_READ_ERROR;
    }
    for (guint i = 0; i < r->expert_cols->len; i++) {
        guint c = g_array_index(r->expert_cols, guint, i);
        const char *value = cell(r, c);
        g_autofree char *what = g_strdup_printf("column '%s'", r->names[c]);
        guint64 v = 0;
        if (!parse_u64(r, what, value, strlen(value), G_MAXUINT64, &v, error)) {
            return MS_TRACE_READ_ERROR;
        }
        g_array_append_val(r->values, v);
    }
    return MS_TRACE_READ_RECORD;
}

static gboolean
json_u64(MsTraceImportRows *r, const char *field, JsonNode *node, guint64 *out, GError **error)
{
    if (JSON_NODE_HOLDS_VALUE(node) && json_node_get_value_type(node) == G_TYPE_INT64 &&
        json_node_get_int(node) >= 0) {
        *out = (guint64)json_node_get_int(node);
        return TRUE;
    }
    fail(r, error, MS_TRACE_IMPORT_ERROR_SYNTAX, "field '%s' is not a non-negative integer", field);
    return FALSE;
}

/* Optional fields must be given on every line or on none. */
static gboolean
json_presence(MsTraceImportRows *r, JsonObject *obj, GError **error)
{
    if (r->decided_line == 0) {
        r->decided_line = ms_trace_lines_number(r->lines);
        for (guint i = 0; i < N_NAMED; i++) {
            r->present[i] = json_object_has_member(obj, named[i]);
        }
    }
    for (guint i = 0; i < N_NAMED; i++) {
        gboolean has = json_object_has_member(obj, named[i]);
        if ((i == COL_LAYER || i == COL_EXPERTS) && !has) {
            fail(r, error, MS_TRACE_IMPORT_ERROR_COLUMNS, "missing field '%s'", named[i]);
            return FALSE;
        }
        if (has != r->present[i]) {
            fail(r, error, MS_TRACE_IMPORT_ERROR_COLUMNS,
                 "field '%s' is %s here but %s on line %" G_GUINT64_FORMAT
                 " (give it on every line or on none)",
                 named[i], has ? "present" : "absent", has ? "absent" : "present", r->decided_line);
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
json_fields(MsTraceImportRows *r, JsonObject *obj, GError **error)
{
    g_autoptr(GList) members = json_object_get_members(obj);
    for (GList *m = members; m; m = m->next) {
        gint i = named_index(m->data, MS_TRACE_IMPORT_JSONL);
        if (i < 0 || strcmp(m->data, named[i]) != 0) {
            fail(r, error, MS_TRACE_IMPORT_ERROR_COLUMNS,
                 "unknown field '%s' (known: iteration, layer, rank, token, experts)",
                 (const char *)m->data);
            return FALSE;
        }
    }
    return json_presence(r, obj, error);
}

static gboolean
json_experts(MsTraceImportRows *r, JsonNode *node, GError **error)
{
    JsonArray *list = JSON_NODE_HOLDS_ARRAY(node) ? json_node_get_array(node) : NULL;
    if (list == NULL || json_array_get_length(list) == 0) {
        fail(r, error, MS_TRACE_IMPORT_ERROR_SYNTAX,
             "field 'experts' must be a non-empty list of expert ids");
        return FALSE;
    }
    for (guint i = 0; i < json_array_get_length(list); i++) {
        guint64 id = 0;
        if (!json_u64(r, "experts", json_array_get_element(list, i), &id, error)) {
            return FALSE;
        }
        g_array_append_val(r->values, id);
    }
    return TRUE;
}

static gboolean
json_limited(MsTraceImportRows *r, JsonObject *obj, guint field, guint64 max, guint64 *out,
             GError **error)
{
    *out = 0;
    if (!json_object_has_member(obj, named[field])) {
        return TRUE;
    }
    if (!json_u64(r, named[field], json_object_get_member(obj, named[field]), out, error)) {
        return FALSE;
    }
    if (*out > max) {
        fail(r, error, MS_TRACE_IMPORT_ERROR_RANGE,
             "field '%s': %" G_GUINT64_FORMAT " is too large (at most %" G_GUINT64_FORMAT ")",
             named[field], *out, max);
        return FALSE;
    }
    return TRUE;
}

static MsTraceRead
next_json(MsTraceImportRows *r, const char *text, MsTraceImportRow *row, GError **error)
{
    g_autoptr(GError) local = NULL;
    if (!ms_json_input_load_data(r->parser, text, strlen(text), NULL, &local)) {
        fail(r, error, MS_TRACE_IMPORT_ERROR_SYNTAX, "bad JSON: %s", local->message);
        return MS_TRACE_READ_ERROR;
    }
    JsonNode *root = json_parser_get_root(r->parser);
    if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root)) {
        fail(r, error, MS_TRACE_IMPORT_ERROR_SYNTAX, "a line must hold one JSON object");
        return MS_TRACE_READ_ERROR;
    }
    JsonObject *obj = json_node_get_object(root);
    guint64 layer, rank;
    if (!json_fields(r, obj, error) ||
        !json_limited(r, obj, COL_ITERATION, MS_TRACE_MAX_ITERATION, &row->iteration, error) ||
        !json_limited(r, obj, COL_LAYER, G_MAXUINT32, &layer, error) ||
        !json_limited(r, obj, COL_RANK, G_MAXUINT32, &rank, error) ||
        !json_limited(r, obj, COL_TOKEN, G_MAXUINT64, &row->token, error) ||
        !json_experts(r, json_object_get_member(obj, "experts"), error)) {
        return MS_TRACE_READ_ERROR;
    }
    row->layer = (guint32)layer;
    row->rank = (guint32)rank;
    return MS_TRACE_READ_RECORD;
}

MsTraceRead
ms_trace_import_rows_next(MsTraceImportRows *r, MsTraceImportRow *row, GError **error)
{
    if (r->fw) {
        return ms_trace_import_fw_next(r->fw, row, error);
    }
    const char *text = NULL;
    gboolean end = FALSE;
    if (!next_data_line(r, &text, &end, error)) {
        return end ? MS_TRACE_READ_END : MS_TRACE_READ_ERROR;
    }
    memset(row, 0, sizeof(*row));
    row->line = ms_trace_lines_number(r->lines);
    g_array_set_size(r->values, 0);
    MsTraceRead got = r->format == MS_TRACE_IMPORT_JSONL ? next_json(r, text, row, error)
                                                         : next_csv(r, text, row, error);
    row->n_values = r->values->len;
    row->values = (const guint64 *)r->values->data;
    gboolean counts = r->format == MS_TRACE_IMPORT_COUNTS_CSV;
    row->n_tokens = counts ? 0 : 1;
    row->width = row->n_values;
    return got;
}

gboolean
ms_trace_import_rows_has_token_ids(const MsTraceImportRows *r)
{
    if (r->fw) {
        return TRUE;
    }
    return r->format == MS_TRACE_IMPORT_JSONL ? r->present[COL_TOKEN] == 1 : r->col[COL_TOKEN] >= 0;
}

guint32
ms_trace_import_rows_expert_columns(const MsTraceImportRows *r)
{
    if (r->fw) {
        return ms_trace_import_fw_experts(r->fw);
    }
    return r->format == MS_TRACE_IMPORT_COUNTS_CSV ? r->expert_cols->len : 0;
}

gboolean
ms_trace_import_rows_counts(const MsTraceImportRows *r)
{
    return r->fw ? ms_trace_import_fw_counts(r->fw) : r->format == MS_TRACE_IMPORT_COUNTS_CSV;
}

const char *
ms_trace_import_rows_ignored(const MsTraceImportRows *r)
{
    return r->fw ? ms_trace_import_fw_ignored(r->fw) : NULL;
}
