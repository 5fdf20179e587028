/* trace_writer: writes a trace in the text or binary form, streaming: records go out as they are
 * given, so writing a long trace needs the memory of one record (or one MsRouting). Every record is
 * checked as it is written (ranges, non-decreasing iterations, one record kind per iteration), so
 * what the writer accepts the reader reads back. */
#pragma once

#include <glib.h>

#include "trace.h"
#include "trace_routing.h"

G_BEGIN_DECLS

typedef struct _MsTraceWriter MsTraceWriter;

/* Creates path ("-" = standard output) through sim/base/output_file (a regular file is written
 * beside path and takes its place when closed) and writes the header. format is TEXT or BINARY.
 * NULL with MS_TRACE_ERROR_LIMIT (bad header) or MS_TRACE_ERROR_IO (cannot create). */
MsTraceWriter *ms_trace_writer_new(const char *path, MsTraceFormat format,
                                   const MsTraceHeader *header, GError **error);
/* Discards the writer; when it was not closed successfully the partial file is removed and a file
 * that was at path is left as it was, so a failed conversion never leaves a truncated trace. */
void ms_trace_writer_free(MsTraceWriter *writer);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsTraceWriter, ms_trace_writer_free)

/* Record writers. Errors: MS_TRACE_ERROR_RANGE, _PATH (an expert twice in one layer's top_k),
 * _ORDER (iteration below the previous record's), _MIXED (count and token records in one
 * iteration), _OVERFLOW (iteration above MS_TRACE_MAX_ITERATION), _IO. Duplicate count cells are
 * not detected here: the reader refuses them. */
gboolean ms_trace_writer_write_count(MsTraceWriter *writer, guint64 iteration, guint32 layer,
                                     guint32 src_rank, guint32 expert, guint32 tokens,
                                     GError **error);
/* experts: layers * top_k ids, layer-major. */
gboolean ms_trace_writer_write_token(MsTraceWriter *writer, guint64 iteration, guint64 token_id,
                                     guint32 src_rank, const guint32 *experts, GError **error);
/* A whole iteration: token records (rank by rank) when it has paths, else its non-zero counts
 * (layer, then rank, then expert). An iteration without tokens writes nothing. The routing's
 * header must have the writer's shape. */
gboolean ms_trace_writer_write_routing(MsTraceWriter *writer, const MsRouting *routing,
                                       GError **error);
/* The same, always as count records (a count-level trace of a token-level iteration). */
gboolean ms_trace_writer_write_routing_counts(MsTraceWriter *writer, const MsRouting *routing,
                                              GError **error);
/* Writes the end (binary end record), flushes and closes; FALSE with MS_TRACE_ERROR_IO when any
 * write failed. The writer must still be freed. */
gboolean ms_trace_writer_close(MsTraceWriter *writer, GError **error);

/* Records and bytes written so far (bytes include the header). */
guint64 ms_trace_writer_records(const MsTraceWriter *writer);
guint64 ms_trace_writer_bytes(const MsTraceWriter *writer);

G_END_DECLS
