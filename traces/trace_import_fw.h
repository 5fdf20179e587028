/* trace_import_fw: the reader of the list formats (counts-list, deepspeed, megatron, hf): one
 * line per iteration, MoE layer and rank, as CSV with a header row or as JSON Lines (told apart
 * by the first data line: '{' starts JSON), holding one list: tokens per expert, or per token its
 * expert ids, a 0/1 routing map over the experts or the router's logits (its top_k taken here).
 * Columns and fields other than iteration, layer, rank and the format's lists are ignored and
 * reported. Formats and their sources: docs/trace-format.md ("Framework logs"). */
#pragma once

#include <glib.h>

#include "sim/base/ranges.h"
#include "trace_import.h"
#include "trace_import_rows.h"

G_BEGIN_DECLS

/* Lines of the list formats may be this long: a router's logits for a few thousand tokens. */
#define MS_TRACE_IMPORT_FW_LINE_MAX (64u << 20)

typedef struct _MsTraceImportFw MsTraceImportFw;

/* Every number the list formats carry, with its range (sim/base/ranges.h). */
const MsRangeTable *ms_trace_import_fw_ranges(void);

/* Whether format is one of the list formats. */
gboolean ms_trace_import_fw_format(MsTraceImportFormat format);

/* Opens path (and for CSV reads its header row). Errors (MS_TRACE_IMPORT_ERROR, prefixed
 * PATH:LINE where there is a line): _IO; _COLUMNS for a field renamed that the format does not
 * have (--field), a header row without a layer column, two columns for one field; _MISSING for
 * router logits without options->top_k. */
MsTraceImportFw *ms_trace_import_fw_open(const char *path, MsTraceImportFormat format,
                                         const MsTraceImportOptions *options, GError **error);
void ms_trace_import_fw_free(MsTraceImportFw *fw);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsTraceImportFw, ms_trace_import_fw_free)

/* The next row. Errors prefixed PATH:LINE naming the field: _SYNTAX (field count, bad JSON, a
 * list that does not parse, a count or id that is not a non-negative integer, a routing map
 * entry other than 0 and 1), _COLUMNS (no list field, two of them, or a field on some lines
 * only), _RANGE (lists of another length than the first line's, top_k above the logits'
 * experts, numbers beyond their field). */
MsTraceRead ms_trace_import_fw_next(MsTraceImportFw *fw, MsTraceImportRow *row, GError **error);

/* Once a row is read: whether rows are counts, and the experts a list shows (counts, routing
 * map, logits: its length; 0 for ids). */
gboolean ms_trace_import_fw_counts(const MsTraceImportFw *fw);
guint32 ms_trace_import_fw_experts(const MsTraceImportFw *fw);
/* Columns or fields ignored so far, comma-separated, or NULL. */
const char *ms_trace_import_fw_ignored(const MsTraceImportFw *fw);

G_END_DECLS
