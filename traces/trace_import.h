/* trace_import: converts expert-selection dumps of other tools into a moe-trace: per-token CSV or
 * JSON Lines (one row per token and MoE layer, holding the layer's top_k expert ids), per-rank
 * expert-count CSV (one row per iteration, layer and rank, one column per expert), and what
 * frameworks log per iteration, layer and rank in one list column or field: tokens per expert
 * (a list of counts; DeepSpeed-MoE's exp_counts, Megatron-LM's tokens per expert) or every
 * token's choice (Hugging Face router logits or top-k ids, Megatron-LM's routing map or recorded
 * top-k ids). The input formats are specified with examples in docs/trace-format.md
 * ("Importing"). Two passes over the input (infer, then convert), each streaming; memory is that
 * of one iteration. */
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
    /* Per iteration, layer and rank, one list (CSV with a header row, or JSON Lines): */
    MS_TRACE_IMPORT_COUNTS_LIST, /* counts: tokens per expert */
    MS_TRACE_IMPORT_DEEPSPEED,   /* exp_counts: DeepSpeed-MoE's gate counts */
    MS_TRACE_IMPORT_MEGATRON,    /* topk_indices, routing_map or tokens_per_expert */
    MS_TRACE_IMPORT_HF,          /* selected_experts, expert_index or router_logits */
    MS_TRACE_IMPORT_N_FORMATS,
} MsTraceImportFormat;

/* "csv", "jsonl", "counts-csv", "counts-list", "deepspeed", "megatron" or "hf"; FALSE for
 * anything else. */
gboolean ms_trace_import_format_from_name(const char *name, MsTraceImportFormat *out);
const char *ms_trace_import_format_name(MsTraceImportFormat format);
/* The names, comma-separated ("csv, jsonl, ..."), for messages. */
const char *ms_trace_import_format_names(void);

/* Shape of the trace; 0 means "infer from the input": experts, layers and ranks as the largest
 * id seen plus one (the expert columns of counts-csv, the length of a list of counts, logits or
 * a routing map), top_k as the number of ids a token has. top_k cannot be inferred from counts
 * nor from router logits. Inferred counts are lower bounds: an expert nobody chose is not seen,
 * so give experts when it matters. fields (NULL-terminated, may be NULL) renames the fields of
 * the list formats: "KEY=NAME" reads field KEY (iteration, layer, rank or one of the format's
 * lists) from the column or member NAME. */
typedef struct {
    guint32 experts, layers, ranks, top_k;
    const char *const *fields;
    /* Layer groups of the trace written (trace.h): n_groups 0 for none. */
    guint32 n_groups;
    guint32 group_first[MS_TRACE_MAX_GROUPS];
} MsTraceImportOptions;

/* What an import reports besides errors: the header written and, for the list formats, the
 * columns or fields it did not use, comma-separated in the order met (NULL: none). */
typedef struct {
    MsTraceHeader header;
    char *ignored;
} MsTraceImportResult;

void ms_trace_import_result_clear(MsTraceImportResult *result);

/* Reads input (a file: two passes) and writes output in out_format. On success fills *header
 * (when not NULL) with the header written. Errors name INPUT:LINE: MS_TRACE_IMPORT_ERROR_* for the
 * input's own problems; MS_TRACE_ERROR_* (also prefixed INPUT:LINE) when rows violate the trace
 * rules (expert id >= experts, an expert twice in one top_k, a count cell given twice...); an
 * output that fails is removed. */
gboolean ms_trace_import(const char *input, MsTraceImportFormat from,
                         const MsTraceImportOptions *options, const char *output,
                         MsTraceFormat out_format, MsTraceHeader *header, GError **error);
/* The same, filling result (when not NULL; clear it after). */
gboolean ms_trace_import_run(const char *input, MsTraceImportFormat from,
                             const MsTraceImportOptions *options, const char *output,
                             MsTraceFormat out_format, MsTraceImportResult *result, GError **error);

G_END_DECLS
