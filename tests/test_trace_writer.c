/* Tests of trace_writer: what it writes reads back, its checks, and that a failed or abandoned
 * write leaves no file behind. */
#include "ms_test.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

#include <signal.h>
#include <sys/resource.h>

static MsTraceHeader
shape(void)
{
    MsTraceHeader h;
    ms_trace_header_init_shape(&h, 4, 2, 2, 2);
    return h;
}

static char *
tmp_path(const char *name)
{
    return g_build_filename(ms_test_tmpdir(), name, NULL);
}

static void
test_text_output(void)
{
    g_autofree char *path = tmp_path("w.trace");
    MsTraceHeader h = shape();
    GError *error = NULL;
    g_autoptr(MsTraceWriter) w = ms_trace_writer_new(path, MS_TRACE_FORMAT_TEXT, &h, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_TRUE(ms_trace_writer_write_count(w, 0, 1, 1, 3, 2, &error));
    CU_ASSERT_TRUE(ms_trace_writer_write_count(w, 0, 0, 1, 2, 2, &error));
    const guint32 path0[] = {0, 1, 2, 3};
    CU_ASSERT_TRUE(ms_trace_writer_write_token(w, 2, 77, 1, path0, &error));
    CU_ASSERT_EQUAL(ms_trace_writer_records(w), 3);
    CU_ASSERT_TRUE(ms_trace_writer_close(w, &error));
    CU_ASSERT_PTR_NULL(error);
    g_autofree char *text = NULL;
    gsize len = 0;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &text, &len, NULL));
    CU_ASSERT_STRING_EQUAL(text, "moe-trace 1\nexperts 4\nlayers 2\nranks 2\ntop_k 2\n"
                                 "c 0 1 1 3 2\nc 0 0 1 2 2\nt 2 77 1 0 1 2 3\n");
    CU_ASSERT_EQUAL(ms_trace_writer_bytes(w), len);
}

/* A token routing of iteration it; rank 0 holds two tokens, rank 1 one. */
static MsRouting *
paths(guint64 it)
{
    MsTraceHeader h = shape();
    MsRouting *r = ms_routing_new(&h, it, NULL);
    const guint32 a[] = {0, 1, 2, 3}, b[] = {3, 1, 0, 2};
    g_assert(ms_routing_add_token(r, 5, 1, a, NULL));
    g_assert(ms_routing_add_token(r, 6, 0, b, NULL));
    g_assert(ms_routing_add_token(r, 7, 0, a, NULL));
    g_assert(ms_routing_seal(r, NULL));
    return r;
}

static void
test_routings(void)
{
    for (int binary = 0; binary < 2; binary++) {
        g_autofree char *path = tmp_path(binary ? "r.bin" : "r.trace");
        MsTraceHeader h = shape();
        GError *error = NULL;
        MsTraceFormat format = binary ? MS_TRACE_FORMAT_BINARY : MS_TRACE_FORMAT_TEXT;
        g_autoptr(MsTraceWriter) w = ms_trace_writer_new(path, format, &h, &error);
        g_autoptr(MsRouting) a = paths(0), b = paths(1), c = paths(2);
        CU_ASSERT_TRUE(ms_trace_writer_write_routing(w, a, &error));
        CU_ASSERT_TRUE(ms_trace_writer_write_routing_counts(w, b, &error));
        ms_routing_drop_paths(c);
        CU_ASSERT_TRUE(ms_trace_writer_write_routing(w, c, &error));
        CU_ASSERT_TRUE(ms_trace_writer_close(w, &error));
        g_autoptr(MsTraceReader) r = ms_trace_reader_open(path, &error);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_EQUAL(ms_trace_reader_format(r), format);
        MsRouting *it = NULL;
        CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(r, &it, &error));
        CU_ASSERT_TRUE(ms_routing_equal(it, a));
        ms_routing_free(it);
        CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(r, &it, &error));
        CU_ASSERT_FALSE(ms_routing_has_paths(it));
        ms_routing_drop_paths(b);
        CU_ASSERT_TRUE(ms_routing_equal(it, b));
        ms_routing_free(it);
        CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(r, &it, &error));
        CU_ASSERT_TRUE(ms_routing_equal(it, c));
        ms_routing_free(it);
        CU_ASSERT_FALSE(ms_trace_reader_next_iteration(r, &it, &error));
        CU_ASSERT_PTR_NULL(error);
    }
}

static void
test_record_errors(void)
{
    g_autofree char *path = tmp_path("e.trace");
    MsTraceHeader h = shape();
    GError *error = NULL;
    g_autoptr(MsTraceWriter) w = ms_trace_writer_new(path, MS_TRACE_FORMAT_TEXT, &h, &error);
    const guint32 ok[] = {0, 1, 2, 3}, twice[] = {0, 0, 2, 3}, wide[] = {0, 1, 2, 4};
    CU_ASSERT_TRUE(ms_trace_writer_write_count(w, 3, 0, 0, 0, 2, &error));
    CU_ASSERT_FALSE(ms_trace_writer_write_count(w, 2, 0, 0, 1, 2, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_ORDER,
                    "iteration 2 after iteration 3: iterations must not decrease");
    CU_ASSERT_FALSE(ms_trace_writer_write_token(w, 3, 1, 0, ok, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_MIXED,
                    "iteration 3 mixes count and token records");
    CU_ASSERT_FALSE(ms_trace_writer_write_count(w, 3, 2, 0, 0, 2, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE, "layer 2 out of range");
    CU_ASSERT_FALSE(ms_trace_writer_write_count(w, 3, 0, 0, 9, 2, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE, "expert 9 out of range");
    CU_ASSERT_FALSE(
        ms_trace_writer_write_count(w, G_GUINT64_CONSTANT(1) << 32, 0, 0, 0, 2, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_OVERFLOW,
                    "iteration 4294967296 exceeds the limit");
    CU_ASSERT_TRUE(ms_trace_writer_write_token(w, 4, 1, 0, ok, &error));
    CU_ASSERT_FALSE(ms_trace_writer_write_token(w, 4, 2, 0, twice, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_PATH, "layer 0: expert 0 chosen twice");
    CU_ASSERT_FALSE(ms_trace_writer_write_token(w, 4, 2, 0, wide, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE, "layer 1: expert 4 out of range");
    CU_ASSERT_FALSE(ms_trace_writer_write_token(w, 4, 2, 2, ok, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE, "rank 2 out of range");
    /* A routing of another shape. */
    MsTraceHeader other = shape();
    other.experts = 5;
    g_autoptr(MsRouting) r = ms_routing_new(&other, 5, &error);
    CU_ASSERT_TRUE(ms_routing_seal(r, &error));
    CU_ASSERT_FALSE(ms_trace_writer_write_routing(w, r, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE,
                    "iteration 5 has shape 5 experts, 2 layers, 2 ranks, top_k 2; the trace has "
                    "4, 2, 2, 2");
    CU_ASSERT_TRUE(ms_trace_writer_close(w, &error));
}

static void
test_open_errors(void)
{
    GError *error = NULL;
    MsTraceHeader h = shape();
    CU_ASSERT_PTR_NULL(
        ms_trace_writer_new("/nonexistent/dir/x.trace", MS_TRACE_FORMAT_TEXT, &h, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_IO,
                    "/nonexistent/dir/x.trace: cannot write:");
    h.top_k = 9;
    g_autofree char *path = tmp_path("never.trace");
    CU_ASSERT_PTR_NULL(ms_trace_writer_new(path, MS_TRACE_FORMAT_TEXT, &h, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT, "top_k = 9 is outside 1..4");
    CU_ASSERT_FALSE(g_file_test(path, G_FILE_TEST_EXISTS));
}

static void
test_abandoned_and_full(void)
{
    /* Freed without a successful close: the partial file is removed, an earlier file kept. */
    g_autofree char *path = tmp_path("partial.trace");
    MsTraceHeader h = shape();
    GError *error = NULL;
    MsTraceWriter *w = ms_trace_writer_new(path, MS_TRACE_FORMAT_BINARY, &h, &error);
    CU_ASSERT_TRUE(ms_trace_writer_write_count(w, 0, 0, 0, 0, 2, &error));
    CU_ASSERT_TRUE(ms_test_output_temp_exists(path));
    ms_trace_writer_free(w);
    CU_ASSERT_FALSE(ms_test_output_temp_exists(path));
    CU_ASSERT_FALSE(g_file_test(path, G_FILE_TEST_EXISTS));
    CU_ASSERT_TRUE_FATAL(g_file_set_contents(path, "earlier", -1, NULL));
    w = ms_trace_writer_new(path, MS_TRACE_FORMAT_TEXT, &h, &error);
    CU_ASSERT_TRUE(ms_trace_writer_write_count(w, 0, 0, 0, 0, 2, &error));
    ms_trace_writer_free(w);
    g_autofree char *kept = NULL;
    CU_ASSERT_TRUE(g_file_get_contents(path, &kept, NULL, NULL));
    CU_ASSERT_STRING_EQUAL(kept, "earlier");
    /* A write that fails (the file size limit): the error is reported, the file removed. */
    struct rlimit saved;
    CU_ASSERT_EQUAL_FATAL(getrlimit(RLIMIT_FSIZE, &saved), 0);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = {.rlim_cur = 100000, .rlim_max = saved.rlim_max};
    CU_ASSERT_EQUAL_FATAL(setrlimit(RLIMIT_FSIZE, &small), 0);
    g_autofree char *big = tmp_path("big.trace");
    w = ms_trace_writer_new(big, MS_TRACE_FORMAT_TEXT, &h, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    gboolean ok = TRUE;
    for (guint32 i = 0; i < 200000 && ok; i++) {
        ok = ms_trace_writer_write_count(w, i, 0, 0, 0, 2, &error);
    }
    CU_ASSERT_FALSE(ok);
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_IO,
                    "big.trace: cannot write: File too large");
    ms_trace_writer_free(w);
    CU_ASSERT_FALSE(g_file_test(big, G_FILE_TEST_EXISTS));
    /* The same failure found only when closing. */
    w = ms_trace_writer_new(big, MS_TRACE_FORMAT_BINARY, &h, &error);
    for (guint32 i = 0; i < 30000; i++) {
        CU_ASSERT_TRUE_FATAL(ms_trace_writer_write_count(w, i, 0, 0, 0, 2, &error));
    }
    CU_ASSERT_FALSE(ms_trace_writer_close(w, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_IO,
                    "big.trace: cannot write: File too large");
    ms_trace_writer_free(w);
    CU_ASSERT_FALSE(g_file_test(big, G_FILE_TEST_EXISTS));
    CU_ASSERT_EQUAL(setrlimit(RLIMIT_FSIZE, &saved), 0);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"text output", test_text_output},
        {"routings read back", test_routings},
        {"record errors", test_record_errors},
        {"open errors", test_open_errors},
        {"abandoned and failed writes", test_abandoned_and_full},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"trace_writer", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
