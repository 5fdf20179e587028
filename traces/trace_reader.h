/* trace_reader: streams a trace one iteration at a time, whatever its source: a text or binary
 * file (auto-detected from the first byte), a shipped sample ("sample:NAME", compiled into the
 * binary) or a synthetic generator ("gen:SPEC", see trace_gen.h). It holds at most one iteration
 * in memory, so memory is bounded by the largest iteration, never by the length of the trace. */
#pragma once

#include <glib.h>

#include "trace.h"
#include "trace_routing.h"

G_BEGIN_DECLS

typedef struct _MsTraceReader MsTraceReader;

/* Opens source and reads its header. source is a path ("-" = standard input), "sample:NAME" or
 * "gen:SPEC". Returns NULL on failure with MS_TRACE_ERROR_IO (cannot open), _UNKNOWN (no such
 * sample; the message lists the shipped ones), a header error of the text or binary form (every
 * message names SOURCE:LINE or SOURCE:offset N), or MS_TRACE_GEN_ERROR for a bad SPEC. */
MsTraceReader *ms_trace_reader_open(const char *source, GError **error);
void ms_trace_reader_free(MsTraceReader *reader);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsTraceReader, ms_trace_reader_free)

const MsTraceHeader *ms_trace_reader_header(const MsTraceReader *reader);
MsTraceFormat ms_trace_reader_format(const MsTraceReader *reader);
/* The source as given to ms_trace_reader_open. */
const char *ms_trace_reader_source(const MsTraceReader *reader);

/* Reads the next whole iteration into a new sealed MsRouting (*out, owned by the caller).
 * Returns FALSE with *out NULL and no error at the end of the trace; FALSE with *out NULL and
 * error set on bad input: any record or iteration error (MS_TRACE_ERROR_*, prefixed with the
 * SOURCE:LINE or SOURCE:offset N of the offending record), including MS_TRACE_ERROR_ORDER when an
 * iteration number decreases. After an error every further call fails with MS_TRACE_ERROR_IO. */
gboolean ms_trace_reader_next_iteration(MsTraceReader *reader, MsRouting **out, GError **error);

/* Names of the shipped samples (for "sample:NAME"), sorted; free with g_strfreev. */
char **ms_trace_sample_names(void);

G_END_DECLS
