/* trace_binary: the compact binary form of a trace: an 8-byte magic, a little-endian version,
 * the header as varints, then tagged records (LEB128 varints, iteration and token ids as deltas,
 * expert ids bit-packed) and an end record carrying the record count, so truncation is always
 * detected. Decodes from a FILE one record at a time; encodes into a byte buffer. It checks the
 * encoding; what the numbers mean is checked by MsRouting and the reader. */
#pragma once

#include <glib.h>
#include <stdio.h>

#include "trace.h"

G_BEGIN_DECLS

/* The magic that opens a binary trace; its first byte (0x89) tells it from a text trace. */
#define MS_TRACE_BINARY_MAGIC "\x89MOE\r\n\x1a\n"
#define MS_TRACE_BINARY_MAGIC_LEN 8

typedef struct _MsTraceBinary MsTraceBinary;

/* A decoder of file (not owned, not closed), or an encoder when file is NULL. source names the
 * input in messages. */
MsTraceBinary *ms_trace_binary_new(FILE *file, const char *source);
void ms_trace_binary_free(MsTraceBinary *bin);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsTraceBinary, ms_trace_binary_free)

/* Reads magic, version and header. Errors prefixed "SOURCE:offset N: ": MS_TRACE_ERROR_FORMAT
 * (bad magic), _VERSION, _TRUNCATED, _OVERFLOW (a varint too large), _LIMIT (header values
 * outside the limits, refused before any allocation), _IO. */
gboolean ms_trace_binary_read_header(MsTraceBinary *bin, MsTraceHeader *header, GError **error);
/* Reads the next record. Errors prefixed "SOURCE:offset N: " (the record's first byte):
 * _TRUNCATED (the file ends inside a record or before the end record), _FORMAT (unknown tag,
 * wrong end count, data after the end record, non-zero padding bits), _OVERFLOW, _IO. */
MsTraceRead ms_trace_binary_read_record(MsTraceBinary *bin, MsTraceRecord *record, GError **error);
/* Byte offset of the last record read, and "SOURCE:offset N: " prefixed to an error. */
guint64 ms_trace_binary_position(const MsTraceBinary *bin);
void ms_trace_binary_prefix_error(const MsTraceBinary *bin, guint64 offset, GError **error);

/* Encoders: append the bytes of the header, of one record (deltas are taken against the
 * previous record encoded by this encoder; records must come in non-decreasing iteration order),
 * or of the end record. The record is not checked. */
void ms_trace_binary_encode_header(MsTraceBinary *bin, GString *out, const MsTraceHeader *header);
void ms_trace_binary_encode_record(MsTraceBinary *bin, GString *out, const MsTraceRecord *record);
void ms_trace_binary_encode_end(MsTraceBinary *bin, GString *out);

G_END_DECLS
