/* Fuzz target: one list format of the trace importer (traces/trace_import_fw.h), chosen when the
 * target is built (FUZZ_IMPORT_FORMAT): counts-list, deepspeed, megatron or hf, as CSV or JSON
 * Lines, with the list literals of trace_import_list.h. The first byte picks whether the shape is
 * given or inferred, top_k, and whether the iteration field is renamed to "step"; the rest goes
 * through a temporary file (the importer reads it twice). A trace that imports must read back
 * with the header the importer reported. */
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"
#include "fuzz_trace_check.h"
#include "traces/trace_import.h"

#ifndef FUZZ_IMPORT_FORMAT
#define FUZZ_IMPORT_FORMAT MS_TRACE_IMPORT_COUNTS_LIST
#endif

int
LLVMFuzzerTestOneInput(const guint8 *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    static const char *const renamed[] = {"iteration=step", NULL};
    MsTraceImportOptions opts = {.top_k = 1 + (data[0] & 3)};
    if (data[0] & 4) {
        opts.experts = 8;
        opts.layers = 2;
        opts.ranks = 2;
    }
    if (data[0] & 16) {
        opts.top_k = 0; /* inferred where the lists allow it */
    }
    if (data[0] & 32) {
        opts.fields = renamed;
    }
    MsTraceFormat out_format = data[0] & 8 ? MS_TRACE_FORMAT_BINARY : MS_TRACE_FORMAT_TEXT;
    int pid = (int)getpid();
    g_autofree char *in = g_strdup_printf("%s/moesim-fuzz-fw-%d.in", g_get_tmp_dir(), pid);
    g_autofree char *out = g_strdup_printf("%s/moesim-fuzz-fw-%d.trace", g_get_tmp_dir(), pid);
    if (!g_file_set_contents(in, (const char *)data + 1, (gssize)size - 1, NULL)) {
        abort();
    }
    GError *error = NULL;
    MsTraceImportResult res = {0};
    if (ms_trace_import_run(in, FUZZ_IMPORT_FORMAT, &opts, out, out_format, &res, &error)) {
        fuzz_trace_read_back(out, &res.header);
        ms_trace_import_result_clear(&res);
    } else {
        fuzz_refused(&error);
    }
    unlink(in);
    unlink(out);
    return 0;
}
