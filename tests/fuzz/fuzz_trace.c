/* Fuzz target: trace files through the streaming reader (traces/trace_reader.h), built twice:
 * fuzz_trace_text reads the bytes as given, fuzz_trace_binary puts the binary magic in front so
 * that every mutation lands in the binary header and records. Iterations that read cleanly feed
 * the statistics and are written back (in the other form) and read again: what the writer
 * accepts the reader must read back identically, so a decoding slip shows up as a mismatch. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "traces/trace_binary.h"
#include "traces/trace_reader.h"
#include "traces/trace_stats.h"
#include "traces/trace_writer.h"

/* Iterations compared per input; more only slows the fuzzer down. */
#define MAX_ITERATIONS 16

/* Reads every iteration of bytes; keeps the first MAX_ITERATIONS that route tokens. */
static MsTraceReader *
read_all(GBytes *bytes, GPtrArray *kept, gboolean *clean)
{
    GError *error = NULL;
    MsTraceReader *r = ms_trace_reader_open_bytes(bytes, "fuzz.trace", &error);
    if (r == NULL) {
        fuzz_refused(&error);
        *clean = FALSE;
        return NULL;
    }
    g_autoptr(MsTraceStats) stats = ms_trace_stats_new(ms_trace_reader_header(r));
    MsRouting *it = NULL;
    while (ms_trace_reader_next_iteration(r, &it, &error)) {
        ms_trace_stats_add(stats, it);
        if (kept->len < MAX_ITERATIONS && ms_routing_total_tokens(it) > 0) {
            g_ptr_array_add(kept, it);
        } else {
            ms_routing_free(it);
        }
    }
    *clean = error == NULL;
    if (error) {
        fuzz_refused(&error);
    }
    MsTraceLayerStats summary;
    ms_trace_stats_summary(stats, &summary);
    return r;
}

static void
round_trip(const MsTraceReader *r, GPtrArray *kept)
{
    g_autofree char *path =
        g_strdup_printf("%s/moesim-fuzz-%d.trace", g_get_tmp_dir(), (int)getpid());
    MsTraceFormat other = ms_trace_reader_format(r) == MS_TRACE_FORMAT_TEXT ? MS_TRACE_FORMAT_BINARY
                                                                            : MS_TRACE_FORMAT_TEXT;
    GError *error = NULL;
    g_autoptr(MsTraceWriter) w =
        ms_trace_writer_new(path, other, ms_trace_reader_header(r), &error);
    if (w == NULL) {
        abort(); /* the reader accepted this header */
    }
    for (guint i = 0; i < kept->len; i++) {
        if (!ms_trace_writer_write_routing(w, kept->pdata[i], &error)) {
            abort();
        }
    }
    if (!ms_trace_writer_close(w, &error)) {
        abort();
    }
    g_autofree char *text = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &text, &len, NULL)) {
        abort();
    }
    unlink(path);
    g_autoptr(GBytes) bytes = g_bytes_new_take(g_steal_pointer(&text), len);
    g_autoptr(GPtrArray) again = g_ptr_array_new_with_free_func((GDestroyNotify)ms_routing_free);
    gboolean clean = FALSE;
    ms_trace_reader_free(read_all(bytes, again, &clean));
    if (!clean || again->len != kept->len) {
        abort();
    }
    for (guint i = 0; i < kept->len; i++) {
        if (!ms_routing_equal(kept->pdata[i], again->pdata[i])) {
            abort();
        }
    }
}

int
LLVMFuzzerTestOneInput(const guint8 *data, size_t size)
{
#ifdef FUZZ_TRACE_BINARY
    guint8 *framed = g_malloc(size + MS_TRACE_BINARY_MAGIC_LEN);
    memcpy(framed, MS_TRACE_BINARY_MAGIC, MS_TRACE_BINARY_MAGIC_LEN);
    if (size) {
        memcpy(framed + MS_TRACE_BINARY_MAGIC_LEN, data, size);
    }
    GBytes *input = g_bytes_new_take(framed, size + MS_TRACE_BINARY_MAGIC_LEN);
#else
    GBytes *input = g_bytes_new(data, size);
#endif
    g_autoptr(GPtrArray) kept = g_ptr_array_new_with_free_func((GDestroyNotify)ms_routing_free);
    gboolean clean = FALSE;
    g_autoptr(MsTraceReader) r = read_all(input, kept, &clean);
    g_bytes_unref(input);
    if (r != NULL && kept->len > 0) {
        round_trip(r, kept);
    }
    return 0;
}
