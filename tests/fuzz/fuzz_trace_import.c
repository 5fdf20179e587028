/* Fuzz target: the trace importers (traces/trace_import.h) for per-token CSV, JSON Lines and
 * per-rank count CSV. The importer reads a file twice, so the input goes through a temporary
 * file; the first byte picks the format and whether the shape is given or inferred. A trace that
 * imports must read back with the header the importer reported. */
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"
#include "fuzz_trace_check.h"
#include "traces/trace_import.h"

int
LLVMFuzzerTestOneInput(const guint8 *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    static const MsTraceImportFormat formats[] = {MS_TRACE_IMPORT_CSV, MS_TRACE_IMPORT_JSONL,
                                                  MS_TRACE_IMPORT_COUNTS_CSV};
    MsTraceImportFormat from = formats[data[0] % 3];
    MsTraceImportOptions opts = {0};
    if (data[0] & 4) {
        opts = (MsTraceImportOptions){.experts = 8, .layers = 2, .ranks = 2, .top_k = 2};
    } else if (from == MS_TRACE_IMPORT_COUNTS_CSV) {
        opts.top_k = 2; /* cannot be inferred from counts */
    }
    MsTraceFormat out_format = data[0] & 8 ? MS_TRACE_FORMAT_BINARY : MS_TRACE_FORMAT_TEXT;
    int pid = (int)getpid();
    g_autofree char *in = g_strdup_printf("%s/moesim-fuzz-%d.in", g_get_tmp_dir(), pid);
    g_autofree char *out = g_strdup_printf("%s/moesim-fuzz-%d.trace", g_get_tmp_dir(), pid);
    if (!g_file_set_contents(in, (const char *)data + 1, (gssize)size - 1, NULL)) {
        abort();
    }
    GError *error = NULL;
    MsTraceHeader header;
    if (ms_trace_import(in, from, &opts, out, out_format, &header, &error)) {
        fuzz_trace_read_back(out, &header);
    } else
        fuzz_refused(&error);
    unlink(in);
    unlink(out);
    return 0;
}
