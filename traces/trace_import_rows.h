/* trace_import_rows: the row readers behind trace_import: CSV with a header row (quoted fields,
 * expert-id lists) and JSON Lines, and the list formats of trace_import_fw.h, turned into
 * uniform rows. Checks syntax, column names and that numbers are non-negative integers; what the
 * numbers mean is left to trace_import. */
#pragma once

#include <glib.h>

#include "trace.h"
#include "trace_import.h"

G_BEGIN_DECLS

/* One row: the counts of one (iteration, layer, rank) when n_tokens is 0, else n_tokens tokens'
 * expert ids at one layer, width each (ids in gate order, best first), token i with id
 * token + i. */
typedef struct {
    guint64 line;
    guint64 iteration; /* 0 when the input has no iteration column */
    guint32 layer;
    guint32 rank;  /* 0 when the input has no rank column */
    guint64 token; /* when ms_trace_import_rows_has_token_ids */
    guint n_tokens;
    guint width;           /* ids per token, or counts (one per expert) */
    guint n_values;        /* width, or n_tokens x width */
    const guint64 *values; /* expert ids, or tokens per expert; owned by the reader until the
                              next row */
} MsTraceImportRow;

typedef struct _MsTraceImportRows MsTraceImportRows;

/* Opens path and, for the CSV formats, reads its header row. Errors (MS_TRACE_IMPORT_ERROR,
 * prefixed PATH:LINE where there is a line): _IO, _COLUMNS (missing, repeated or unknown column),
 * _SYNTAX. */
MsTraceImportRows *ms_trace_import_rows_open(const char *path, MsTraceImportFormat format,
                                             const MsTraceImportOptions *options, GError **error);
void ms_trace_import_rows_free(MsTraceImportRows *rows);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsTraceImportRows, ms_trace_import_rows_free)

/* Next data row (blank lines and lines starting with '#' are skipped). Errors prefixed PATH:LINE:
 * _SYNTAX (field count, not a number, bad JSON, empty expert list), _RANGE (a layer or rank above
 * 2^32-1), _COLUMNS (a JSON field unknown, or present on some lines only), _IO. */
MsTraceRead ms_trace_import_rows_next(MsTraceImportRows *rows, MsTraceImportRow *row,
                                      GError **error);
/* Whether rows carry token ids (known from the CSV header, or from the first JSON line; the
 * token lists of the list formats number their tokens by position). */
gboolean ms_trace_import_rows_has_token_ids(const MsTraceImportRows *rows);
/* The experts the input shows exactly (the expert columns of counts-csv; the length of the lists
 * of counts, logits or routing maps, once a row is read), 0 when it does not. */
guint32 ms_trace_import_rows_expert_columns(const MsTraceImportRows *rows);
/* Whether the rows are counts (known for the list formats once a row is read). */
gboolean ms_trace_import_rows_counts(const MsTraceImportRows *rows);
/* The columns or fields ignored so far, comma-separated, or NULL. */
const char *ms_trace_import_rows_ignored(const MsTraceImportRows *rows);

G_END_DECLS
