/* trace_lines: a buffered reader of text lines with a bound on line length, shared by the text
 * trace codec and the importers. A file without newlines (or a binary file read as text) cannot
 * grow its buffer past the bound. Reports status codes; callers turn them into their own errors
 * with FILE:LINE. Strips "\n" and "\r\n". */
#pragma once

#include <glib.h>
#include <stdio.h>

G_BEGIN_DECLS

typedef enum {
    MS_TRACE_LINE_OK,       /* a line was read */
    MS_TRACE_LINE_END,      /* end of input */
    MS_TRACE_LINE_TOO_LONG, /* the line exceeds the bound */
    MS_TRACE_LINE_IO,       /* read error (ms_trace_lines_errno) */
} MsTraceLineStatus;

typedef struct _MsTraceLines MsTraceLines;

/* Reads file (not owned, not closed); lines longer than max_len bytes are refused. */
MsTraceLines *ms_trace_lines_new(FILE *file, gsize max_len);
void ms_trace_lines_free(MsTraceLines *lines);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsTraceLines, ms_trace_lines_free)

void ms_trace_lines_set_max(MsTraceLines *lines, gsize max_len);
gsize ms_trace_lines_max(const MsTraceLines *lines);

MsTraceLineStatus ms_trace_lines_next(MsTraceLines *lines);
/* The last line read, NUL-terminated (owned by lines, valid until the next call), and its
 * length. */
const char *ms_trace_lines_text(const MsTraceLines *lines, gsize *len);
/* 1-based number of the last line read (of the last line there is, after the end). */
guint64 ms_trace_lines_number(const MsTraceLines *lines);
int ms_trace_lines_errno(const MsTraceLines *lines);

G_END_DECLS
