/* trace_text: the line-oriented text form of a trace ("moe-trace 1", header keys, then `c` and
 * `t` records), decoding from a FILE one record at a time and encoding into a byte buffer. It
 * checks syntax and number sizes; what the numbers mean (ranges, duplicates, order) is checked by
 * MsRouting and the reader. Lines are bounded, so a garbage file cannot exhaust memory. */
#pragma once

#include <glib.h>
#include <stdio.h>

#include "trace.h"

G_BEGIN_DECLS

typedef struct _MsTraceText MsTraceText;

/* A decoder of file (not owned, not closed), source names it in messages. */
MsTraceText *ms_trace_text_new(FILE *file, const char *source);
void ms_trace_text_free(MsTraceText *text);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsTraceText, ms_trace_text_free)

/* Reads the first line and the header keys up to the first record. Errors (all prefixed
 * "SOURCE:LINE: "): MS_TRACE_ERROR_FORMAT (not a moe-trace file), _VERSION, _HEADER (missing,
 * duplicate or unknown key), _SYNTAX (a value that is not a number), _LIMIT (a value outside
 * the documented limits), _IO. */
gboolean ms_trace_text_read_header(MsTraceText *text, MsTraceHeader *header, GError **error);
/* Reads the next record after the header. Errors prefixed "SOURCE:LINE: ": _SYNTAX (record kind,
 * field count, non-numeric field), _OVERFLOW (number too large for its field), _PATH (wrong
 * number of expert ids), _IO. A token record's expert ids stay valid until the next call. */
MsTraceRead ms_trace_text_read_record(MsTraceText *text, MsTraceRecord *record, GError **error);
/* The line of the last line read (1-based), and "SOURCE:LINE: " prefixed to an error from
 * elsewhere (e.g. MsRouting's checks of a record read at that line). */
guint64 ms_trace_text_position(const MsTraceText *text);
void ms_trace_text_prefix_error(const MsTraceText *text, guint64 line, GError **error);

/* Encoders: append the text of the header (first line, generator comment, keys) or of one record
 * to out. The record is not checked. */
void ms_trace_text_encode_header(GString *out, const MsTraceHeader *header);
void ms_trace_text_encode_record(GString *out, const MsTraceHeader *header,
                                 const MsTraceRecord *record);

G_END_DECLS
