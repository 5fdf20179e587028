/* Tests of trace_lines: line splitting, CRLF, a last line without newline, the length bound. */
#include "ms_test.h"
#include "traces/trace_lines.h"

#include <errno.h>

static FILE *
open_text(const char *name, const char *text, gsize len)
{
    g_autofree char *path = g_build_filename(ms_test_tmpdir(), name, NULL);
    g_assert(g_file_set_contents(path, text, (gssize)len, NULL));
    FILE *f = fopen(path, "rb");
    g_assert(f != NULL);
    return f;
}

static void
test_lines(void)
{
    static const char text[] = "first\r\n\nthird line\nlast";
    FILE *f = open_text("a.txt", text, strlen(text));
    g_autoptr(MsTraceLines) l = ms_trace_lines_new(f, 64);
    static const char *const want[] = {"first", "", "third line", "last"};
    for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
        CU_ASSERT_EQUAL_FATAL(ms_trace_lines_next(l), MS_TRACE_LINE_OK);
        gsize len = 0;
        CU_ASSERT_STRING_EQUAL(ms_trace_lines_text(l, &len), want[i]);
        CU_ASSERT_EQUAL(len, strlen(want[i]));
        CU_ASSERT_EQUAL(ms_trace_lines_number(l), i + 1);
    }
    CU_ASSERT_EQUAL(ms_trace_lines_next(l), MS_TRACE_LINE_END);
    CU_ASSERT_EQUAL(ms_trace_lines_number(l), 4);
    CU_ASSERT_EQUAL(ms_trace_lines_next(l), MS_TRACE_LINE_END);
    fclose(f);
}

static void
test_bound(void)
{
    /* Longer than one 64 KiB read chunk, so the line spans chunks. */
    gsize n = 200000;
    g_autofree char *text = g_malloc(n + 8);
    memset(text, 'x', n);
    memcpy(text + n, "\nok\n", 4);
    FILE *f = open_text("b.txt", text, n + 4);
    g_autoptr(MsTraceLines) l = ms_trace_lines_new(f, n);
    CU_ASSERT_EQUAL(ms_trace_lines_max(l), n);
    CU_ASSERT_EQUAL(ms_trace_lines_next(l), MS_TRACE_LINE_OK);
    gsize len = 0;
    ms_trace_lines_text(l, &len);
    CU_ASSERT_EQUAL(len, n);
    CU_ASSERT_EQUAL(ms_trace_lines_next(l), MS_TRACE_LINE_OK);
    CU_ASSERT_STRING_EQUAL(ms_trace_lines_text(l, NULL), "ok");
    fclose(f);

    f = open_text("c.txt", text, n + 4);
    g_autoptr(MsTraceLines) small = ms_trace_lines_new(f, 1000);
    CU_ASSERT_EQUAL(ms_trace_lines_next(small), MS_TRACE_LINE_TOO_LONG);
    CU_ASSERT_EQUAL(ms_trace_lines_number(small), 1);
    ms_trace_lines_set_max(small, 10);
    CU_ASSERT_EQUAL(ms_trace_lines_max(small), 10);
    fclose(f);
}

static void
test_read_error(void)
{
    /* Reading a directory fails with EISDIR. */
    FILE *f = fopen(ms_test_tmpdir(), "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    g_autoptr(MsTraceLines) l = ms_trace_lines_new(f, 100);
    CU_ASSERT_EQUAL(ms_trace_lines_next(l), MS_TRACE_LINE_IO);
    CU_ASSERT_EQUAL(ms_trace_lines_errno(l), EISDIR);
    fclose(f);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"lines, CRLF and last line", test_lines},
        {"length bound", test_bound},
        {"read error", test_read_error},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"trace_lines", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
