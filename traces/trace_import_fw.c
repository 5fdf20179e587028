/* trace_import_fw: each list format is a set of field names, and each list a kind (counts, ids,
 * a 0/1 map, logits) with its conversion into counts or per-token expert ids. The line loop,
 * the CSV header, the JSON members and the presence rules are shared by all of them. */
#include "trace_import_fw.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/base/input_file.h"
#include "sim/base/json_input.h"
#include "sim/base/csv.h"
#include "trace_import_list.h"
#include "trace_lines.h"

typedef enum {
    DATA_COUNTS, /* tokens per expert: one list of experts numbers */
    DATA_IDS,    /* per token its expert ids in gate order (a flat list: one id per token) */
    DATA_MASK,   /* per token a 0/1 entry per expert (the ids in expert order) */
    DATA_LOGITS, /* per token the router's logit per expert (its top_k taken here) */
} DataKind;

typedef struct {
    const char *key;
    DataKind kind;
} DataField;

#define MAX_DATA 3
/* iteration, layer, rank, then the format's lists */
#define N_ROW_FIELDS 3
#define MAX_FIELDS (N_ROW_FIELDS + MAX_DATA)
enum { F_ITERATION, F_LAYER, F_RANK };

typedef struct {
    MsTraceImportFormat format;
    guint n_data;
    DataField data[MAX_DATA];
} FwFormat;

/* The names are those of the frameworks' own variables (docs/trace-format.md gives the file and
 * version each comes from). */
static const FwFormat formats[] = {
    {MS_TRACE_IMPORT_COUNTS_LIST, 1, {{"counts", DATA_COUNTS}}},
    {MS_TRACE_IMPORT_DEEPSPEED, 1, {{"exp_counts", DATA_COUNTS}}},
    {MS_TRACE_IMPORT_MEGATRON,
     3,
     {{"topk_indices", DATA_IDS}, {"routing_map", DATA_MASK}, {"tokens_per_expert", DATA_COUNTS}}},
    {MS_TRACE_IMPORT_HF,
     3,
     {{"selected_experts", DATA_IDS}, {"expert_index", DATA_IDS}, {"router_logits", DATA_LOGITS}}},
};

static const char *const row_keys[N_ROW_FIELDS] = {"iteration", "layer", "rank"};

#define LINE "a line (--from counts-list, deepspeed, megatron, hf)"

/* Every number a line carries (docs/bad-inputs.md is generated from this table, and
 * tests/test_input_ranges.c walks it): the trace's limits (traces/trace.h), which the numbers
 * become. */
static const MsRange line_fields[] = {
    {LINE, "iteration", MS_RANGE_COUNT, 0, MS_TRACE_MAX_ITERATION, "as a trace's iterations"},
    {LINE, "layer", MS_RANGE_COUNT, 0, MS_TRACE_MAX_LAYERS - 1, "an MoE layer of at most 4096"},
    {LINE, "rank", MS_RANGE_COUNT, 0, MS_TRACE_MAX_RANKS - 1, "a rank of at most 65536"},
    {LINE, "count", MS_RANGE_COUNT, 0, MS_TRACE_MAX_TOKENS_PER_RANK,
     "tokens per expert: a rank's tokens at most 2^26, each choosing an expert once"},
    {LINE, "expert id", MS_RANGE_COUNT, 0, MS_TRACE_MAX_EXPERTS - 1, "of at most 65536 experts"},
    {LINE, "routing map entry", MS_RANGE_COUNT, 0, 1,
     "0 or 1 (false or true): whether the token chose the expert"},
    {NULL},
};

static const MsRangeTable ranges = {"Framework logs (trace import)", line_fields};

const MsRangeTable *
ms_trace_import_fw_ranges(void)
{
    return &ranges;
}

struct _MsTraceImportFw {
    char *path;
    FILE *file;
    MsTraceLines *lines;
    const FwFormat *fmt;
    guint n_fields;
    const char *keys[MAX_FIELDS];
    char *names[MAX_FIELDS]; /* the column or member each field is read from */
    gboolean json;
    gboolean held; /* the line read last is the first data line, not yet returned */
    /* CSV */
    MsCsvFields *fields; /* of the current CSV line */
    guint n_columns;
    gint col[MAX_FIELDS]; /* -1: absent */
    /* JSON Lines */
    JsonParser *parser;
    gint present[N_ROW_FIELDS]; /* -1 undecided */
    guint64 decided_line;
    GHashTable *ignored_set;
    GString *ignored;
    /* the list in use: a field index, -1 until the first row */
    gint data;
    guint64 data_line;
    guint32 experts; /* the length a list of counts, map or logits has (0 for ids) */
    guint top_k;
    MsImportList list;
    GArray *values; /* guint64 */
};

static void fail(const MsTraceImportFw *fw, GError **error, MsTraceImportError code,
                 const char *format, ...) G_GNUC_PRINTF(4, 5);

static void
fail(const MsTraceImportFw *fw, GError **error, MsTraceImportError code, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, MS_TRACE_IMPORT_ERROR, code, "%s:%" G_GUINT64_FORMAT ": %s", fw->path,
                MAX(ms_trace_lines_number(fw->lines), 1), msg);
}

gboolean
ms_trace_import_fw_format(MsTraceImportFormat format)
{
    for (guint i = 0; i < G_N_ELEMENTS(formats); i++) {
        if (formats[i].format == format) {
            return TRUE;
        }
    }
    return FALSE;
}

void
ms_trace_import_fw_free(MsTraceImportFw *fw)
{
    if (fw == NULL) {
        return;
    }
    ms_trace_lines_free(fw->lines);
    if (fw->file) {
        fclose(fw->file);
    }
    for (guint i = 0; i < MAX_FIELDS; i++) {
        g_free(fw->names[i]);
    }
    ms_csv_fields_free(fw->fields);
    g_clear_object(&fw->parser);
    g_hash_table_unref(fw->ignored_set);
    g_string_free(fw->ignored, TRUE);
    ms_import_list_clear(&fw->list);
    g_array_unref(fw->values);
    g_free(fw->path);
    g_free(fw);
}

/* "iteration, layer, rank, counts" for messages. */
static char *
field_list(const MsTraceImportFw *fw)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < fw->n_fields; i++) {
        g_string_append_printf(s, "%s%s", i ? ", " : "", fw->keys[i]);
    }
    return g_string_free(s, FALSE);
}

static gboolean
apply_renames(MsTraceImportFw *fw, const char *const *fields, GError **error)
{
    for (guint i = 0; fields && fields[i]; i++) {
        const char *eq = strchr(fields[i], '=');
        gint hit = -1;
        for (guint f = 0; eq && f < fw->n_fields && hit < 0; f++) {
            if ((gsize)(eq - fields[i]) == strlen(fw->keys[f]) &&
                strncmp(fields[i], fw->keys[f], (gsize)(eq - fields[i])) == 0) {
                hit = (gint)f;
            }
        }
        if (hit < 0 || eq[1] == '\0') {
            g_autofree char *known = field_list(fw);
            g_set_error(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_COLUMNS,
                        "--field '%s': expected KEY=NAME with KEY one of %s (--from %s)", fields[i],
                        known, ms_trace_import_format_name(fw->fmt->format));
            return FALSE;
        }
        g_free(fw->names[hit]);
        fw->names[hit] = g_strdup(eq + 1);
    }
    return TRUE;
}

static void
note_ignored(MsTraceImportFw *fw, const char *name)
{
    if (g_hash_table_contains(fw->ignored_set, name)) {
        return;
    }
    g_hash_table_add(fw->ignored_set, g_strdup(name));
    g_string_append_printf(fw->ignored, "%s%s", fw->ignored->len ? ", " : "", name);
}

/* The text of the line read last, without a UTF-8 byte order mark (on the file's first line, as
 * a spreadsheet saves it) and leading blanks. */
static const char *
line_text(const MsTraceImportFw *fw)
{
    const char *p = ms_trace_lines_text(fw->lines, NULL);
    if (ms_trace_lines_number(fw->lines) == 1) {
        p += ms_csv_bom_length(p, strlen(p));
    }
    return p + strspn(p, " \t");
}

/* Next line that is neither blank nor a '#' comment; FALSE at the end or on error. */
static gboolean
next_line(MsTraceImportFw *fw, const char **text, gboolean *end, GError **error)
{
    *end = FALSE;
    if (fw->held) {
        fw->held = FALSE;
        *text = line_text(fw);
        return TRUE;
    }
    for (;;) {
        switch (ms_trace_lines_next(fw->lines)) {
        case MS_TRACE_LINE_END:
            *end = TRUE;
            return FALSE;
        case MS_TRACE_LINE_TOO_LONG:
            fail(fw, error, MS_TRACE_IMPORT_ERROR_SYNTAX, "line longer than %u bytes",
                 MS_TRACE_IMPORT_FW_LINE_MAX);
            return FALSE;
        case MS_TRACE_LINE_IO:
            fail(fw, error, MS_TRACE_IMPORT_ERROR_IO, "read error: %s",
                 g_strerror(ms_trace_lines_errno(fw->lines)));
            return FALSE;
        case MS_TRACE_LINE_OK:
            break;
        }
        const char *p = line_text(fw);
        if (*p != '\0' && *p != '#') {
            *text = p;
            return TRUE;
        }
    }
}

static gint
field_of(const MsTraceImportFw *fw, const char *name, gboolean fold)
{
    for (guint f = 0; f < fw->n_fields; f++) {
        if (fold ? g_ascii_strcasecmp(name, fw->names[f]) == 0 : strcmp(name, fw->names[f]) == 0) {
            return (gint)f;
        }
    }
    return -1;
}

static gboolean
read_csv_header(MsTraceImportFw *fw, const char *text, GError **error)
{
    g_autoptr(GError) local = NULL;
    if (!ms_csv_fields_split(fw->fields, text, &local)) {
        fail(fw, error, MS_TRACE_IMPORT_ERROR_SYNTAX, "%s", local->message);
        return FALSE;
    }
    /* A spreadsheet pads rows with empty fields: those are no columns. */
    fw->n_columns = ms_csv_fields_width(fw->fields);
    for (guint c = 0; c < fw->n_columns; c++) {
        const char *name = ms_csv_fields_get(fw->fields, c);
        gint f = field_of(fw, name, TRUE);
        if (f < 0) {
            note_ignored(fw, name);
        } else if (fw->col[f] >= 0) {
            fail(fw, error, MS_TRACE_IMPORT_ERROR_COLUMNS, "column '%s' given twice", name);
            return FALSE;
        } else {
            fw->col[f] = (gint)c;
        }
    }
    if (fw->col[F_LAYER] < 0) {
        fail(fw, error, MS_TRACE_IMPORT_ERROR_COLUMNS,
             "the header row lacks a '%s' column (name it with --field layer=NAME)",
             fw->names[F_LAYER]);
        return FALSE;
    }
    for (guint f = N_ROW_FIELDS; f < fw->n_fields; f++) {
        if (fw->col[f] >= 0 && fw->data >= 0) {
            fail(fw, error, MS_TRACE_IMPORT_ERROR_COLUMNS,
                 "columns '%s' and '%s' both hold lists: keep one", fw->names[fw->data],
                 fw->names[f]);
            return FALSE;
        }
        fw->data = fw->col[f] >= 0 ? (gint)f : fw->data;
    }
    if (fw->data < 0) {
        g_autofree char *known = field_list(fw);
        fail(fw, error, MS_TRACE_IMPORT_ERROR_COLUMNS,
             "the header row has no list column (--from %s reads %s; name yours with --field "
             "KEY=NAME)",
             ms_trace_import_format_name(fw->fmt->format), known);
        return FALSE;
    }
    fw->data_line = ms_trace_lines_number(fw->lines);
    return TRUE;
}

MsTraceImportFw *
ms_trace_import_fw_open(const char *path, MsTraceImportFormat format,
                        const MsTraceImportOptions *options, GError **error)
{
    const FwFormat *fmt = NULL;
    for (guint i = 0; i < G_N_ELEMENTS(formats); i++) {
        fmt = formats[i].format == format ? &formats[i] : fmt;
    }
    g_return_val_if_fail(fmt != NULL, NULL);
    g_autoptr(GError) local = NULL;
    FILE *f = ms_input_file_open(path, MS_INPUT_TRACE_IMPORT, &local);
    if (f == NULL) {
        g_set_error_literal(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_IO, local->message);
        return NULL;
    }
    g_autoptr(MsTraceImportFw) fw = g_new0(MsTraceImportFw, 1);
    fw->path = g_strdup(path);
    fw->file = f;
    fw->lines = ms_trace_lines_new(f, MS_TRACE_IMPORT_FW_LINE_MAX);
    fw->fmt = fmt;
    fw->fields = ms_csv_fields_new();
    fw->ignored_set = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    fw->ignored = g_string_new(NULL);
    fw->values = g_array_new(FALSE, FALSE, sizeof(guint64));
    fw->data = -1;
    fw->top_k = options ? options->top_k : 0;
    ms_import_list_init(&fw->list);
    for (guint i = 0; i < N_ROW_FIELDS; i++) {
        fw->keys[fw->n_fields++] = row_keys[i];
        fw->present[i] = -1;
    }
    for (guint i = 0; i < fmt->n_data; i++) {
        fw->keys[fw->n_fields++] = fmt->data[i].key;
    }
    for (guint i = 0; i < fw->n_fields; i++) {
        fw->names[i] = g_strdup(fw->keys[i]);
        fw->col[i] = -1;
    }
    if (!apply_renames(fw, options ? options->fields : NULL, error)) {
        return NULL;
    }
    const char *text = NULL;
    gboolean end = FALSE;
    if (!next_line(fw, &text, &end, error)) {
        if (end) {
            fail(fw, error, MS_TRACE_IMPORT_ERROR_COLUMNS,
                 "no data (the file is empty): expected a CSV header row or JSON Lines");
        }
        return NULL;
    }
    fw->json = *text == '{';
    if (fw->json) {
        fw->held = TRUE;
        fw->parser = json_parser_new();
    } else if (!read_csv_header(fw, text, error)) {
        return NULL;
    }
    return g_steal_pointer(&fw);
}

/* --- the lists --- */

static DataKind
kind_of(const MsTraceImportFw *fw)
{
    return fw->fmt->data[fw->data - N_ROW_FIELDS].kind;
}

static const char *
data_name(const MsTraceImportFw *fw)
{
    return fw->names[fw->data];
}

/* A whole number of the table's field key (integers are what the lists of counts, ids and
 * maps hold: 412. as a float tensor prints is one). */
static gboolean
integral(MsTraceImportFw *fw, double v, const char *key, GError **error)
{
    const MsRange *r = ms_range_find(line_fields, LINE, key);
    g_autofree char *text = g_strdup_printf("%.17g", v);
    g_autoptr(GError) local = NULL;
    if (v < 0 || v != floor(v)) {
        fail(fw, error, MS_TRACE_IMPORT_ERROR_SYNTAX,
             "field '%s': %s %s is not a whole number from 0", data_name(fw), key, text);
        return FALSE;
    }
    if (!ms_range_check(r, v, text, &local)) {
        fail(fw, error, MS_TRACE_IMPORT_ERROR_RANGE, "field '%s': %s %s", data_name(fw), key,
             local->message);
        return FALSE;
    }
    return TRUE;
}

static void
push(MsTraceImportFw *fw, guint64 v)
{
    g_array_append_val(fw->values, v);
}

/* The length a list of counts, map or logits has is the experts: the same on every line. */
static gboolean
check_experts(MsTraceImportFw *fw, guint n, GError **error)
{
    if (fw->experts && n != fw->experts) {
        fail(fw, error, MS_TRACE_IMPORT_ERROR_RANGE,
             "field '%s' has %u entries per %s, line %" G_GUINT64_FORMAT " %u (one per expert)",
             data_name(fw), n, kind_of(fw) == DATA_COUNTS ? "line" : "token", fw->data_line,
             fw->experts);
        return FALSE;
    }
    if (n == 0) {
        fail(fw, error, MS_TRACE_IMPORT_ERROR_SYNTAX, "field '%s' lists no expert", data_name(fw));
        return FALSE;
    }
    if (fw->experts == 0) {
        fw->data_line = ms_trace_lines_number(fw->lines);
    }
    fw->experts = n;
    return TRUE;
}

static gboolean
from_counts(MsTraceImportFw *fw, MsTraceImportRow *row, GError **error)
{
    const MsImportList *l = &fw->list;
    if (l->depth != 1) {
        fail(fw, error, MS_TRACE_IMPORT_ERROR_SYNTAX,
             "field '%s' must be one list of tokens per expert, not a list of lists",
             data_name(fw));
        return FALSE;
    }
    if (!check_experts(fw, l->n_outer, error)) {
        return FALSE;
    }
    for (guint e = 0; e < l->n_outer; e++) {
        double v = g_array_index(l->values, double, e);
        if (!integral(fw, v, "count", error)) {
            return FALSE;
        }
        push(fw, (guint64)v);
    }
    row->n_tokens = 0;
    row->width = l->n_outer;
    return TRUE;
}

static gboolean
from_ids(MsTraceImportFw *fw, MsTraceImportRow *row, GError **error)
{
    const MsImportList *l = &fw->list;
    for (guint i = 0; i < l->values->len; i++) {
        double v = g_array_index(l->values, double, i);
        if (!integral(fw, v, "expert id", error)) {
            return FALSE;
        }
        push(fw, (guint64)v);
    }
    row->n_tokens = l->n_outer;
    row->width = l->depth == 1 ? 1 : l->n_inner;
    return TRUE;
}

/* Per token the experts whose entry is 1, in expert order (a map has no gate order). */
static gboolean
from_mask(MsTraceImportFw *fw, MsTraceImportRow *row, GError **error)
{
    const MsImportList *l = &fw->list;
    if (l->depth != 2) {
        fail(fw, error, MS_TRACE_IMPORT_ERROR_SYNTAX,
             "field '%s' must hold one list of 0/1 per token", data_name(fw));
        return FALSE;
    }
    if (l->n_outer > 0 && !check_experts(fw, l->n_inner, error)) {
        return FALSE;
    }
    guint width = 0;
    for (guint t = 0; t < l->n_outer; t++) {
        guint ones = 0;
        for (guint e = 0; e < l->n_inner; e++) {
            double v = g_array_index(l->values, double, (gsize)t * l->n_inner + e);
            if (v != 0 && v != 1) {
                g_autofree char *text = g_strdup_printf("%.17g", v);
                g_autoptr(GError) local = NULL;
                gboolean in = ms_range_check(ms_range_find(line_fields, LINE, "routing map entry"),
                                             v, text, &local);
                fail(fw, error, MS_TRACE_IMPORT_ERROR_RANGE,
                     "field '%s': token %u, expert %u: routing map entry %s", data_name(fw), t, e,
                     in ? "is not 0 or 1" : local->message);
                return FALSE;
            }
            if (v == 1) {
                push(fw, e);
                ones++;
            }
        }
        if (t > 0 && ones != width) {
            fail(fw, error, MS_TRACE_IMPORT_ERROR_RANGE,
                 "field '%s': token %u is routed to %u experts, token 0 to %u (a map cut by "
                 "capacity? dump it before tokens are dropped)",
                 data_name(fw), t, ones, width);
            return FALSE;
        }
        width = ones;
    }
    row->n_tokens = l->n_outer;
    row->width = width;
    return TRUE;
}

/* Per token the top_k largest logits, largest first, ties to the lower expert (the order of the
 * routers that take top_k of softmax(logits), which softmax does not change). */
static gboolean
from_logits(MsTraceImportFw *fw, MsTraceImportRow *row, GError **error)
{
    const MsImportList *l = &fw->list;
    if (l->depth != 2) {
        fail(fw, error, MS_TRACE_IMPORT_ERROR_SYNTAX,
             "field '%s' must hold one list of logits per token", data_name(fw));
        return FALSE;
    }
    if (l->n_outer > 0 && !check_experts(fw, l->n_inner, error)) {
        return FALSE;
    }
    guint E = l->n_inner, k = fw->top_k;
    if (k == 0) {
        fail(fw, error, MS_TRACE_IMPORT_ERROR_MISSING,
             "field '%s' holds router logits: give --top-k, the experts each token takes",
             data_name(fw));
        return FALSE;
    }
    if (l->n_outer > 0 && k > E) {
        fail(fw, error, MS_TRACE_IMPORT_ERROR_RANGE,
             "--top-k %u but field '%s' has logits for %u experts", k, data_name(fw), E);
        return FALSE;
    }
    g_autofree guint8 *taken = g_new(guint8, MAX(E, 1));
    for (guint t = 0; t < l->n_outer; t++) {
        const double *x = &g_array_index(l->values, double, (gsize)t *E);
        memset(taken, 0, E);
        for (guint j = 0; j < k; j++) {
            guint best = G_MAXUINT;
            for (guint e = 0; e < E; e++) {
                if (!taken[e] && (best == G_MAXUINT || x[e] > x[best])) {
                    best = e;
                }
            }
            taken[best] = 1;
            push(fw, best);
        }
    }
    row->n_tokens = l->n_outer;
    row->width = k;
    return TRUE;
}

static gboolean
convert_list(MsTraceImportFw *fw, MsTraceImportRow *row, GError **error)
{
    switch (kind_of(fw)) {
    case DATA_COUNTS:
        return from_counts(fw, row, error);
    case DATA_IDS:
        return from_ids(fw, row, error);
    case DATA_MASK:
        return from_mask(fw, row, error);
    case DATA_LOGITS:
        return from_logits(fw, row, error);
    }
    return FALSE;
}

/* --- CSV rows --- */

/* A row field (iteration, layer, rank) checked against the table. */
static gboolean
row_number(MsTraceImportFw *fw, guint f, const char *text, double v, guint64 *out, GError **error)
{
    g_autoptr(GError) local = NULL;
    if (!ms_range_check(ms_range_find(line_fields, LINE, row_keys[f]), v, text, &local)) {
        fail(fw, error, MS_TRACE_IMPORT_ERROR_RANGE, "%s '%s': %s %s",
             fw->json ? "field" : "column", fw->names[f], row_keys[f], local->message);
        return FALSE;
    }
    *out = (guint64)v;
    return TRUE;
}

static gboolean
csv_number(MsTraceImportFw *fw, guint f, guint64 *out, GError **error)
{
    *out = 0;
    if (fw->col[f] < 0) {
        return TRUE;
    }
    const char *text = ms_csv_fields_get(fw->fields, (guint)fw->col[f]);
    guint64 v = 0;
    switch (ms_trace_parse_number(text, strlen(text), G_MAXUINT64, &v)) {
    case MS_TRACE_NUMBER_OK:
        return row_number(fw, f, text, (double)v, out, error);
    case MS_TRACE_NUMBER_SYNTAX:
        fail(fw, error, MS_TRACE_IMPORT_ERROR_SYNTAX,
             "column '%s': '%.64s' is not a non-negative integer", fw->names[f], text);
        return FALSE;
    case MS_TRACE_NUMBER_OVERFLOW:
        return row_number(fw, f, text, 1.9e19, out, error);
    }
    return FALSE;
}

static MsTraceRead
next_csv(MsTraceImportFw *fw, const char *text, MsTraceImportRow *row, GError **error)
{
    g_autoptr(GError) local = NULL;
    if (!ms_csv_fields_split(fw->fields, text, &local) ||
        !ms_csv_fields_check_width(fw->fields, fw->n_columns, &local)) {
        fail(fw, error, MS_TRACE_IMPORT_ERROR_SYNTAX, "%s", local->message);
        return MS_TRACE_READ_ERROR;
    }
    guint64 layer = 0, rank = 0;
    if (!csv_number(fw, F_ITERATION, &row->iteration, error) ||
        !csv_number(fw, F_LAYER, &layer, error) || !csv_number(fw, F_RANK, &rank, error)) {
        return MS_TRACE_READ_ERROR;
    }
    row->layer = (guint32)layer;
    row->rank = (guint32)rank;
    const char *cell = ms_csv_fields_get(fw->fields, (guint)fw->col[fw->data]);
    g_autofree char *bad = NULL;
    if (!ms_import_list_parse(cell, strlen(cell), &fw->list, &bad)) {
        fail(fw, error, MS_TRACE_IMPORT_ERROR_SYNTAX, "column '%s': %s", data_name(fw), bad);
        return MS_TRACE_READ_ERROR;
    }
    return convert_list(fw, row, error) ? MS_TRACE_READ_RECORD : MS_TRACE_READ_ERROR;
}

/* --- JSON Lines rows --- */

static gboolean
json_number(MsTraceImportFw *fw, JsonObject *obj, guint f, guint64 *out, GError **error)
{
    *out = 0;
    JsonNode *n = json_object_get_member(obj, fw->names[f]);
    if (n == NULL) {
        return TRUE;
    }
    if (!JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_INT64 ||
        json_node_get_int(n) < 0) {
        fail(fw, error, MS_TRACE_IMPORT_ERROR_SYNTAX, "field '%s' is not a non-negative integer",
             fw->names[f]);
        return FALSE;
    }
    g_autofree char *text = g_strdup_printf("%" G_GINT64_FORMAT, json_node_get_int(n));
    return row_number(fw, f, text, (double)json_node_get_int(n), out, error);
}

/* Which members are fields, which list this line holds, and the presence rules: iteration and
 * rank on every line or on none, the same list on every line. */
static gboolean
json_members(MsTraceImportFw *fw, JsonObject *obj, GError **error)
{
    gint data = -1;
    g_autoptr(GList) members = json_object_get_members(obj);
    for (GList *m = members; m; m = m->next) {
        gint f = field_of(fw, m->data, FALSE);
        if (f < 0) {
            note_ignored(fw, m->data);
        } else if (f >= N_ROW_FIELDS) {
            if (data >= 0) {
                fail(fw, error, MS_TRACE_IMPORT_ERROR_COLUMNS,
                     "fields '%s' and '%s' both hold lists: keep one", fw->names[data],
                     fw->names[f]);
                return FALSE;
            }
            data = f;
        }
    }
    if (data < 0) {
        g_autofree char *known = field_list(fw);
        fail(fw, error, MS_TRACE_IMPORT_ERROR_COLUMNS,
             "no list field (--from %s reads %s; name yours with --field KEY=NAME)",
             ms_trace_import_format_name(fw->fmt->format), known);
        return FALSE;
    }
    if (fw->data >= 0 && data != fw->data) {
        fail(fw, error, MS_TRACE_IMPORT_ERROR_COLUMNS,
             "field '%s' here but '%s' on line %" G_GUINT64_FORMAT " (one list kind per file)",
             fw->names[data], fw->names[fw->data], fw->decided_line);
        return FALSE;
    }
    if (fw->decided_line == 0) {
        fw->decided_line = ms_trace_lines_number(fw->lines);
        fw->data = data;
        fw->data_line = fw->decided_line;
        for (guint f = 0; f < N_ROW_FIELDS; f++) {
            fw->present[f] = json_object_has_member(obj, fw->names[f]);
        }
    }
    for (guint f = 0; f < N_ROW_FIELDS; f++) {
        gboolean has = json_object_has_member(obj, fw->names[f]);
        if (f == F_LAYER && !has) {
            fail(fw, error, MS_TRACE_IMPORT_ERROR_COLUMNS, "missing field '%s'", fw->names[f]);
            return FALSE;
        }
        if (has != fw->present[f]) {
            fail(fw, error, MS_TRACE_IMPORT_ERROR_COLUMNS,
                 "field '%s' is %s here but %s on line %" G_GUINT64_FORMAT
                 " (give it on every line or on none)",
                 fw->names[f], has ? "present" : "absent", has ? "absent" : "present",
                 fw->decided_line);
            return FALSE;
        }
    }
    return TRUE;
}

static MsTraceRead
next_json(MsTraceImportFw *fw, const char *text, MsTraceImportRow *row, GError **error)
{
    g_autoptr(GError) local = NULL;
    if (!ms_json_input_load_data(fw->parser, text, strlen(text), NULL, &local)) {
        fail(fw, error, MS_TRACE_IMPORT_ERROR_SYNTAX, "bad JSON: %s", local->message);
        return MS_TRACE_READ_ERROR;
    }
    JsonNode *root = json_parser_get_root(fw->parser);
    if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root)) {
        fail(fw, error, MS_TRACE_IMPORT_ERROR_SYNTAX, "a line must hold one JSON object");
        return MS_TRACE_READ_ERROR;
    }
    JsonObject *obj = json_node_get_object(root);
    guint64 layer = 0, rank = 0;
    if (!json_members(fw, obj, error) ||
        !json_number(fw, obj, F_ITERATION, &row->iteration, error) ||
        !json_number(fw, obj, F_LAYER, &layer, error) ||
        !json_number(fw, obj, F_RANK, &rank, error)) {
        return MS_TRACE_READ_ERROR;
    }
    row->layer = (guint32)layer;
    row->rank = (guint32)rank;
    g_autofree char *bad = NULL;
    if (!ms_import_list_from_json(json_object_get_member(obj, data_name(fw)), &fw->list, &bad)) {
        fail(fw, error, MS_TRACE_IMPORT_ERROR_SYNTAX, "field '%s': %s", data_name(fw), bad);
        return MS_TRACE_READ_ERROR;
    }
    return convert_list(fw, row, error) ? MS_TRACE_READ_RECORD : MS_TRACE_READ_ERROR;
}

MsTraceRead
ms_trace_import_fw_next(MsTraceImportFw *fw, MsTraceImportRow *row, GError **error)
{
    const char *text = NULL;
    gboolean end = FALSE;
    if (!next_line(fw, &text, &end, error)) {
        return end ? MS_TRACE_READ_END : MS_TRACE_READ_ERROR;
    }
    memset(row, 0, sizeof(*row));
    row->line = ms_trace_lines_number(fw->lines);
    g_array_set_size(fw->values, 0);
    MsTraceRead got = fw->json ? next_json(fw, text, row, error) : next_csv(fw, text, row, error);
    row->n_values = fw->values->len;
    row->values = (const guint64 *)fw->values->data;
    return got;
}

gboolean
ms_trace_import_fw_counts(const MsTraceImportFw *fw)
{
    return fw->data >= 0 && kind_of(fw) == DATA_COUNTS;
}

guint32
ms_trace_import_fw_experts(const MsTraceImportFw *fw)
{
    return fw->experts;
}

const char *
ms_trace_import_fw_ignored(const MsTraceImportFw *fw)
{
    return fw->ignored->len ? fw->ignored->str : NULL;
}
