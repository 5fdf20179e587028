/* trace_import: pass 1 reads every row to check it and infer the shape; pass 2 reads them again,
 * collects one iteration's rows, joins a token's per-layer rows into its path (by token id, or by
 * position within its rank and layer when the input has no token ids) and writes the iteration. */
#include "trace_import.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_import_rows.h"
#include "trace_routing.h"
#include "trace_writer.h"

/* clang-format off */
G_DEFINE_QUARK(ms_trace_import_error_quark, ms_trace_import_error)
/* clang-format on */

static const char *const format_names[MS_TRACE_IMPORT_N_FORMATS] = {
    [MS_TRACE_IMPORT_CSV] = "csv",
    [MS_TRACE_IMPORT_JSONL] = "jsonl",
    [MS_TRACE_IMPORT_COUNTS_CSV] = "counts-csv",
    [MS_TRACE_IMPORT_COUNTS_LIST] = "counts-list",
    [MS_TRACE_IMPORT_DEEPSPEED] = "deepspeed",
    [MS_TRACE_IMPORT_MEGATRON] = "megatron",
    [MS_TRACE_IMPORT_HF] = "hf",
};

gboolean
ms_trace_import_format_from_name(const char *name, MsTraceImportFormat *out)
{
    for (guint i = 0; i < MS_TRACE_IMPORT_N_FORMATS; i++) {
        if (strcmp(name, format_names[i]) == 0) {
            *out = (MsTraceImportFormat)i;
            return TRUE;
        }
    }
    return FALSE;
}

const char *
ms_trace_import_format_name(MsTraceImportFormat format)
{
    return format < MS_TRACE_IMPORT_N_FORMATS ? format_names[format] : "?";
}

const char *
ms_trace_import_format_names(void)
{
    return "csv, jsonl, counts-csv, counts-list, deepspeed, megatron, hf";
}

void
ms_trace_import_result_clear(MsTraceImportResult *result)
{
    g_clear_pointer(&result->ignored, g_free);
}

/* What pass 1 learns. */
typedef struct {
    guint64 max_layer, max_rank, max_expert;
    guint32 ids_per_row; /* 0 until the first token with ids */
    guint64 iteration;   /* of the previous row */
    gboolean any;
    gboolean counts; /* the rows are counts */
} Seen;

static gboolean
scan_row(const MsTraceImportRow *row, const MsTraceImportOptions *opt, const char *input,
         Seen *seen, GError **error)
{
    if (seen->any && row->iteration < seen->iteration) {
        g_set_error(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_ORDER,
                    "%s:%" G_GUINT64_FORMAT ": iteration %" G_GUINT64_FORMAT
                    " follows iteration %" G_GUINT64_FORMAT ": iterations must not decrease",
                    input, row->line, row->iteration, seen->iteration);
        return FALSE;
    }
    seen->iteration = row->iteration;
    seen->any = TRUE;
    seen->max_layer = MAX(seen->max_layer, row->layer);
    seen->max_rank = MAX(seen->max_rank, row->rank);
    if (seen->counts || row->n_tokens == 0) {
        return TRUE;
    }
    guint32 want = opt->top_k ? opt->top_k : seen->ids_per_row;
    if (want && row->width != want) {
        g_set_error(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_RANGE,
                    "%s:%" G_GUINT64_FORMAT ": %s %u expert ids, expected top_k = %u (%s)", input,
                    row->line, row->n_tokens > 1 ? "tokens have" : "row has", row->width, want,
                    opt->top_k ? "--top-k" : "from the first row");
        return FALSE;
    }
    seen->ids_per_row = row->width;
    for (guint i = 0; i < row->n_values; i++) {
        seen->max_expert = MAX(seen->max_expert, row->values[i]);
    }
    return TRUE;
}

/* A count given as an option, or inferred as the largest id seen plus one. */
static gboolean
count_of(const char *input, const char *what, guint32 given, guint64 largest, guint32 *out,
         GError **error)
{
    if (given) {
        *out = given;
        return TRUE;
    }
    if (largest >= G_MAXUINT32) {
        g_set_error(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_RANGE,
                    "%s: %s id %" G_GUINT64_FORMAT " is too large", input, what, largest);
        return FALSE;
    }
    *out = (guint32)largest + 1;
    return TRUE;
}

/* The header from the options, filling what is 0 from pass 1. */
static gboolean
infer_header(const char *input, MsTraceImportFormat from, const MsTraceImportOptions *opt,
             const Seen *seen, guint32 expert_columns, MsTraceHeader *h, GError **error)
{
    ms_trace_header_init(h);
    if (seen->counts && opt->top_k == 0) {
        g_set_error(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_MISSING,
                    "%s: top_k cannot be inferred from expert counts: give --top-k", input);
        return FALSE;
    }
    if (expert_columns && opt->experts && opt->experts != expert_columns) {
        g_set_error(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_RANGE,
                    from == MS_TRACE_IMPORT_COUNTS_CSV
                        ? "%s: --experts %u but the header names %u expert columns"
                        : "%s: --experts %u but the lists hold %u experts",
                    input, opt->experts, expert_columns);
        return FALSE;
    }
    if (!seen->any && !(opt->layers && opt->ranks && (opt->experts || expert_columns))) {
        g_set_error(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_MISSING,
                    "%s: no data rows to infer the trace shape from", input);
        return FALSE;
    }
    if (!seen->counts && opt->top_k == 0 && seen->ids_per_row == 0) {
        g_set_error(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_MISSING,
                    "%s: no token to infer top_k from: give --top-k", input);
        return FALSE;
    }
    if (expert_columns) {
        h->experts = expert_columns;
    } else if (!count_of(input, "expert", opt->experts, seen->max_expert, &h->experts, error)) {
        return FALSE;
    }
    if (!count_of(input, "layer", opt->layers, seen->max_layer, &h->layers, error) ||
        !count_of(input, "rank", opt->ranks, seen->max_rank, &h->ranks, error)) {
        return FALSE;
    }
    h->top_k = opt->top_k ? opt->top_k : seen->ids_per_row;
    h->n_groups = opt->n_groups;
    memcpy(h->group_first, opt->group_first, sizeof h->group_first);
    if (!ms_trace_header_validate(h, error)) {
        g_prefix_error(error, "%s: ", input);
        return FALSE;
    }
    return TRUE;
}

typedef struct {
    const char *input;
    MsTraceImportFormat from;
    const MsTraceImportOptions *opt;
    gboolean counts;
    MsTraceHeader header;
    MsTraceWriter *writer;
    MsTraceImportRows *src;
    guint64 iteration;
    /* Rows of the current iteration (token formats). */
    GArray *rows;       /* TokenRow */
    GArray *ids;        /* guint32, top_k per row */
    guint32 *path;      /* layers * top_k */
    MsRouting *routing; /* counts-csv: the iteration being filled */
    guint64 last_line;
} Convert;

typedef struct {
    guint64 line;
    guint64 token;
    guint32 layer, rank;
    guint32 index; /* into ids, in rows of top_k */
} TokenRow;

static int
compare_rows(const void *pa, const void *pb)
{
    const TokenRow *a = pa, *b = pb;
    if (a->rank != b->rank) {
        return a->rank < b->rank ? -1 : 1;
    }
    if (a->token != b->token) {
        return a->token < b->token ? -1 : 1;
    }
    if (a->layer != b->layer) {
        return a->layer < b->layer ? -1 : 1;
    }
    return a->line < b->line ? -1 : a->line > b->line;
}

/* Without token ids, the n-th row of a (rank, layer) in an iteration is the n-th token. */
static void
number_by_position(Convert *c)
{
    gsize n = (gsize)c->header.ranks * c->header.layers;
    g_autofree guint64 *next = g_new0(guint64, n);
    for (guint i = 0; i < c->rows->len; i++) {
        TokenRow *row = &g_array_index(c->rows, TokenRow, i);
        row->token = next[(gsize)row->rank * c->header.layers + row->layer]++;
    }
}

/* Joins the rows of one token (rows[first..end), sorted by layer) into c->path. */
static gboolean
join_token(Convert *c, const TokenRow *rows, guint n, GError **error)
{
    guint k = c->header.top_k;
    for (guint32 layer = 0; layer < c->header.layers; layer++) {
        if (layer >= n || rows[layer].layer != layer) {
            gboolean twice = layer < n && layer > 0 && rows[layer].layer == layer - 1;
            g_set_error(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_TOKEN,
                        twice ? "%s:%" G_GUINT64_FORMAT ": token %" G_GUINT64_FORMAT
                                " of rank %u has a second row for layer %u"
                              : "%s:%" G_GUINT64_FORMAT ": token %" G_GUINT64_FORMAT
                                " of rank %u has no row for layer %u",
                        c->input, twice ? rows[layer].line : rows[0].line, rows[0].token,
                        rows[0].rank, twice ? layer - 1 : layer);
            return FALSE;
        }
        memcpy(c->path + (gsize)layer * k, &g_array_index(c->ids, guint32, rows[layer].index),
               k * sizeof(guint32));
    }
    if (n > c->header.layers) {
        g_set_error(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_TOKEN,
                    "%s:%" G_GUINT64_FORMAT ": token %" G_GUINT64_FORMAT
                    " of rank %u has a second row for layer %u",
                    c->input, rows[n - 1].line, rows[0].token, rows[0].rank, rows[n - 1].layer);
        return FALSE;
    }
    return TRUE;
}

/* Seals an iteration (an error names its last line) and writes it. */
static gboolean
write_iteration(Convert *c, MsRouting *r, GError **error)
{
    if (!ms_routing_seal(r, error)) {
        g_prefix_error(error, "%s:%" G_GUINT64_FORMAT ": ", c->input, c->last_line);
        return FALSE;
    }
    return ms_trace_writer_write_routing(c->writer, r, error);
}

static gboolean
flush_tokens(Convert *c, GError **error)
{
    if (c->rows->len == 0) {
        return TRUE;
    }
    if (!ms_trace_import_rows_has_token_ids(c->src)) {
        number_by_position(c);
    }
    qsort(c->rows->data, c->rows->len, sizeof(TokenRow), compare_rows);
    g_autoptr(MsRouting) r = ms_routing_new(&c->header, c->iteration, error);
    if (r == NULL) {
        return FALSE;
    }
    const TokenRow *rows = (const TokenRow *)c->rows->data;
    for (guint i = 0, end; i < c->rows->len; i = end) {
        for (end = i + 1; end < c->rows->len && rows[end].rank == rows[i].rank &&
                          rows[end].token == rows[i].token;
             end++) {
        }
        if (!join_token(c, rows + i, end - i, error)) {
            return FALSE;
        }
        if (!ms_routing_add_token(r, rows[i].token, rows[i].rank, c->path, error)) {
            g_prefix_error(error, "%s:%" G_GUINT64_FORMAT ": ", c->input, rows[i].line);
            return FALSE;
        }
    }
    g_array_set_size(c->rows, 0);
    g_array_set_size(c->ids, 0);
    return write_iteration(c, r, error);
}

static gboolean
flush_counts(Convert *c, GError **error)
{
    if (c->routing == NULL) {
        return TRUE;
    }
    g_autoptr(MsRouting) r = g_steal_pointer(&c->routing);
    return write_iteration(c, r, error);
}

static gboolean
flush(Convert *c, GError **error)
{
    return c->counts ? flush_counts(c, error) : flush_tokens(c, error);
}

static gboolean
add_count_row(Convert *c, const MsTraceImportRow *row, GError **error)
{
    if (c->routing == NULL) {
        c->routing = ms_routing_new(&c->header, row->iteration, error);
        if (c->routing == NULL) {
            g_prefix_error(error, "%s:%" G_GUINT64_FORMAT ": ", c->input, row->line);
            return FALSE;
        }
    }
    for (guint e = 0; e < row->n_values; e++) {
        if (row->values[e] > G_MAXUINT32) {
            g_set_error(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_RANGE,
                        "%s:%" G_GUINT64_FORMAT ": %" G_GUINT64_FORMAT
                        " tokens for expert %u is too large",
                        c->input, row->line, row->values[e], e);
            return FALSE;
        }
        if (!ms_routing_add_count(c->routing, row->layer, row->rank, e, (guint32)row->values[e],
                                  error)) {
            g_prefix_error(error, "%s:%" G_GUINT64_FORMAT ": ", c->input, row->line);
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
add_token_row(Convert *c, const MsTraceImportRow *row, GError **error)
{
    for (guint i = 0; i < row->n_values; i++) {
        if (row->values[i] > G_MAXUINT32) {
            g_set_error(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_RANGE,
                        "%s:%" G_GUINT64_FORMAT ": expert id %" G_GUINT64_FORMAT " is too large",
                        c->input, row->line, row->values[i]);
            return FALSE;
        }
    }
    if (row->layer >= c->header.layers || row->rank >= c->header.ranks) {
        ms_trace_check_count(&c->header, row->layer, row->rank, 0, error);
        g_prefix_error(error, "%s:%" G_GUINT64_FORMAT ": ", c->input, row->line);
        return FALSE;
    }
    for (guint k = 0; k < row->n_tokens; k++) {
        TokenRow t = {.line = row->line,
                      .token = row->token + k,
                      .layer = row->layer,
                      .rank = row->rank,
                      .index = c->ids->len};
        g_array_append_val(c->rows, t);
        for (guint i = 0; i < row->width; i++) {
            guint32 id = (guint32)row->values[(gsize)k * row->width + i];
            g_array_append_val(c->ids, id);
        }
    }
    return TRUE;
}

static gboolean
convert_row(Convert *c, const MsTraceImportRow *row, GError **error)
{
    if (row->iteration != c->iteration) {
        if (!flush(c, error)) {
            return FALSE;
        }
        c->iteration = row->iteration;
    }
    c->last_line = row->line;
    return c->counts ? add_count_row(c, row, error) : add_token_row(c, row, error);
}

/* Pass 1: every row checked, the shape inferred, the columns ignored noted. */
static gboolean
scan(Convert *c, char **ignored, GError **error)
{
    g_autoptr(MsTraceImportRows) rows = ms_trace_import_rows_open(c->input, c->from, c->opt, error);
    if (rows == NULL) {
        return FALSE;
    }
    Seen seen = {.counts = ms_trace_import_rows_counts(rows)};
    MsTraceImportRow row;
    MsTraceRead got;
    while ((got = ms_trace_import_rows_next(rows, &row, error)) == MS_TRACE_READ_RECORD) {
        seen.counts = ms_trace_import_rows_counts(rows);
        if (!scan_row(&row, c->opt, c->input, &seen, error)) {
            return FALSE;
        }
    }
    c->counts = seen.counts;
    *ignored = g_strdup(ms_trace_import_rows_ignored(rows));
    return got == MS_TRACE_READ_END &&
           infer_header(c->input, c->from, c->opt, &seen, ms_trace_import_rows_expert_columns(rows),
                        &c->header, error);
}

static void
convert_clear(Convert *c)
{
    ms_trace_writer_free(c->writer);
    g_array_unref(c->rows);
    g_array_unref(c->ids);
    g_free(c->path);
    ms_routing_free(c->routing);
}

/* Pass 2: rows grouped into iterations and written. */
static gboolean
convert(Convert *c, const char *output, MsTraceFormat out_format, GError **error)
{
    g_autoptr(MsTraceImportRows) rows = ms_trace_import_rows_open(c->input, c->from, c->opt, error);
    if (rows == NULL) {
        return FALSE;
    }
    c->src = rows;
    c->writer = ms_trace_writer_new(output, out_format, &c->header, error);
    if (c->writer == NULL) {
        return FALSE;
    }
    MsTraceImportRow row;
    MsTraceRead got;
    while ((got = ms_trace_import_rows_next(rows, &row, error)) == MS_TRACE_READ_RECORD) {
        if (!convert_row(c, &row, error)) {
            return FALSE;
        }
    }
    return got == MS_TRACE_READ_END && flush(c, error) && ms_trace_writer_close(c->writer, error);
}

gboolean
ms_trace_import_run(const char *input, MsTraceImportFormat from,
                    const MsTraceImportOptions *options, const char *output,
                    MsTraceFormat out_format, MsTraceImportResult *result, GError **error)
{
    g_return_val_if_fail(input != NULL && options != NULL && output != NULL, FALSE);
    g_return_val_if_fail(from < MS_TRACE_IMPORT_N_FORMATS, FALSE);
    Convert c = {.input = input, .from = from, .opt = options};
    g_autofree char *ignored = NULL;
    if (!scan(&c, &ignored, error)) {
        return FALSE;
    }
    const char *name = ms_trace_import_format_name(from);
    g_autofree char *base = g_path_get_basename(input);
    g_autofree char *line = g_strdup_printf("moesim trace import --from %s %s", name, base);
    if (!ms_trace_header_set_generator(&c.header, line, NULL)) {
        /* An input name with control characters: provenance is optional, drop the name. */
        g_autofree char *bare = g_strdup_printf("moesim trace import --from %s", name);
        ms_trace_header_set_generator(&c.header, bare, NULL);
    }
    c.rows = g_array_new(FALSE, FALSE, sizeof(TokenRow));
    c.ids = g_array_new(FALSE, FALSE, sizeof(guint32));
    c.path = g_new(guint32, ms_trace_header_path_len(&c.header));
    gboolean ok = convert(&c, output, out_format, error);
    convert_clear(&c);
    if (ok && result) {
        result->header = c.header;
        result->ignored = g_steal_pointer(&ignored);
    }
    return ok;
}

gboolean
ms_trace_import(const char *input, MsTraceImportFormat from, const MsTraceImportOptions *options,
                const char *output, MsTraceFormat out_format, MsTraceHeader *header, GError **error)
{
    MsTraceImportResult result = {0};
    gboolean ok = ms_trace_import_run(input, from, options, output, out_format, &result, error);
    if (ok && header) {
        *header = result.header;
    }
    ms_trace_import_result_clear(&result);
    return ok;
}
