/* fuzz_trace_check: the check the trace importers' fuzz targets share: a trace that imports must
 * read back, whole, with the header the importer reported. */
#pragma once

#include <stdlib.h>

#include "traces/trace_reader.h"

static inline void
fuzz_trace_read_back(const char *path, const MsTraceHeader *header)
{
    GError *error = NULL;
    g_autoptr(MsTraceReader) r = ms_trace_reader_open(path, &error);
    if (r == NULL || !ms_trace_header_equal(ms_trace_reader_header(r), header)) {
        abort();
    }
    MsRouting *it = NULL;
    while (ms_trace_reader_next_iteration(r, &it, &error)) {
        ms_routing_free(it);
    }
    if (error != NULL) {
        abort();
    }
}
