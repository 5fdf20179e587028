/* trace_import: converts expert-selection dumps of other tools into a moe-trace: per-token CSV or
 * JSON Lines (one row per token and MoE layer, holding the layer's top_k expert ids) and per-rank
 * expert-count CSV (one row per iteration, layer and rank, one column per expert). The input
 * formats are specified with examples in docs/trace-format.md ("Importing"). Two passes over the
 * input (infer, then convert), each streaming; memory is that of one iteration. */
#pragma once

#include <glib.h>

#include "trace.h"

G_BEGIN_DECLS

#define MS_TRACE_IMPORT_ERROR (ms_trace_import_error_quark())
GQuark ms_trace_import_error_quark(void);
typedef enum {
    MS_TRACE_IMPORT_ERROR_IO,      /* cannot read the input */
    MS_TRACE_IMPORT_ERROR_SYNTAX,  /* a malformed line: field count, not a number, bad JSON */
    MS_TRACE_IMPORT_ERROR_COLUMNS, /* missing, repeated or unknown column (or JSON field) */
    MS_TRACE_IMPORT_ERROR_MISSING, /* a value that cannot be inferred and was not given */
    MS_TRACE_IMPORT_ERROR_RANGE,   /* a number too large, or inconsistent with a given option */
    MS_TRACE_IMPORT_ERROR_ORDER,   /* iterations going backwards */
    MS_TRACE_IMPORT_ERROR_TOKEN,   /* a token without a row for some layer, or with two */
} MsTraceImportError;

typedef enum {
    MS_TRACE_IMPORT_CSV,        /* per token and layer, CSV */
    MS_TRACE_IMPORT_JSONL,      /* per token and layer, JSON Lines */
    MS_TRACE_IMPORT_COUNTS_CSV, /* per iteration, layer and rank: tokens per expert, CSV */
} MsTraceImportFormat;

/* "csv", "jsonl" or "counts-csv"; FALSE for anything else. */
gboolean ms_trace_import_format_from_name(const char *name, MsTraceImportFormat *out);

/* Shape of the trace; 0 means "infer from the input": experts, layers and ranks as the largest
 * id seen plus one (expert columns for counts-csv), top_k as the number of ids in a row. top_k
 * cannot be inferred from counts-csv. Inferred counts are lower bounds: an expert nobody chose
 * is not seen, so give experts when it matters. */
typedef struct {
    guint32 experts, layers, ranks, top_k;
} MsTraceImportOptions;

/* Reads input (a file: two passes) and writes output in out_format. On success fills *header
 * (when not NULL) with the header written. Errors name INPUT:LINE: MS_TRACE_IMPORT_ERROR_* for the
 * input's own problems; MS_TRACE_ERROR_* (also prefixed INPUT:LINE) when rows violate the trace
 * rules (expert id >= experts, an expert twice in one top_k, a count cell given twice...); an
 * output that fails is removed. */
gboolean ms_trace_import(const char *input, MsTraceImportFormat from,
                         const MsTraceImportOptions *options, const char *output,
                         MsTraceFormat out_format, MsTraceHeader *header, GError **error);

G_END_DECLS
