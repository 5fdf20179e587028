/* Tests of trace_reader: iterations streamed from text, binary, samples and generators, text <->
 * binary round trips, and every iteration-level error with its FILE:LINE or FILE:offset. */
#include "ms_test.h"
#include "traces/trace_gen.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

#define HEADER "moe-trace 1\nexperts 4\nlayers 2\nranks 2\ntop_k 2\n"

static MsTraceReader *
open_text(const char *text)
{
    g_autofree char *path = ms_test_write_tmp("r.trace", text);
    GError *error = NULL;
    MsTraceReader *r = ms_trace_reader_open(path, &error);
    CU_ASSERT_PTR_NULL(error);
    return r;
}

static void
test_stream_text(void)
{
    g_autoptr(MsTraceReader) r = open_text(HEADER "c 0 0 0 1 2\nc 0 1 0 3 2\n"
                                                  "# iteration 3 has token paths\n"
                                                  "t 3 9 1 0 1 2 3\nt 3 8 1 3 2 0 1\n"
                                                  "c 7 0 1 2 2\nc 7 1 1 2 1\nc 7 1 1 0 1\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(ms_trace_reader_format(r), MS_TRACE_FORMAT_TEXT);
    CU_ASSERT_EQUAL(ms_trace_reader_header(r)->experts, 4);
    CU_ASSERT_TRUE(g_str_has_suffix(ms_trace_reader_source(r), "r.trace"));
    GError *error = NULL;
    MsRouting *it = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(r, &it, &error));
    CU_ASSERT_EQUAL(ms_routing_iteration(it), 0);
    CU_ASSERT_FALSE(ms_routing_has_paths(it));
    CU_ASSERT_EQUAL(ms_routing_rank_tokens(it, 0), 1);
    CU_ASSERT_EQUAL(ms_routing_count(it, 1, 0, 3), 2);
    ms_routing_free(it);
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(r, &it, &error));
    CU_ASSERT_EQUAL(ms_routing_iteration(it), 3);
    CU_ASSERT_TRUE(ms_routing_has_paths(it));
    CU_ASSERT_EQUAL(ms_routing_n_tokens(it, 1), 2);
    CU_ASSERT_EQUAL(ms_routing_token_id(it, 1, 1), 8);
    CU_ASSERT_EQUAL(ms_routing_token_experts(it, 1, 1, 1)[1], 1);
    ms_routing_free(it);
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(r, &it, &error));
    CU_ASSERT_EQUAL(ms_routing_iteration(it), 7);
    CU_ASSERT_EQUAL(ms_routing_rank_tokens(it, 1), 1);
    ms_routing_free(it);
    it = GINT_TO_POINTER(1);
    CU_ASSERT_FALSE(ms_trace_reader_next_iteration(r, &it, &error));
    CU_ASSERT_PTR_NULL(it);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_FALSE(ms_trace_reader_next_iteration(r, &it, &error));
    CU_ASSERT_PTR_NULL(error);
}

static void
test_empty_trace(void)
{
    g_autoptr(MsTraceReader) r = open_text(HEADER "# no records\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    GError *error = NULL;
    MsRouting *it = NULL;
    CU_ASSERT_FALSE(ms_trace_reader_next_iteration(r, &it, &error));
    CU_ASSERT_PTR_NULL(it);
    CU_ASSERT_PTR_NULL(error);
}

/* Writes every iteration of source to path in format; returns the iteration count. */
static guint
copy_trace(const char *source, const char *path, MsTraceFormat format)
{
    GError *error = NULL;
    g_autoptr(MsTraceReader) r = ms_trace_reader_open(source, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    g_autoptr(MsTraceWriter) w =
        ms_trace_writer_new(path, format, ms_trace_reader_header(r), &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    MsRouting *it = NULL;
    guint n = 0;
    while (ms_trace_reader_next_iteration(r, &it, &error)) {
        CU_ASSERT_TRUE(ms_trace_writer_write_routing(w, it, &error));
        ms_routing_free(it);
        n++;
    }
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_TRUE(ms_trace_writer_close(w, &error));
    return n;
}

/* Every iteration of a and b equal, and the same header. */
static void
assert_same_trace(const char *a, const char *b)
{
    GError *error = NULL;
    g_autoptr(MsTraceReader) ra = ms_trace_reader_open(a, &error);
    g_autoptr(MsTraceReader) rb = ms_trace_reader_open(b, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ra);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rb);
    CU_ASSERT_TRUE(ms_trace_header_equal(ms_trace_reader_header(ra), ms_trace_reader_header(rb)));
    guint n = 0;
    for (;;) {
        MsRouting *x = NULL, *y = NULL;
        gboolean gx = ms_trace_reader_next_iteration(ra, &x, &error);
        gboolean gy = ms_trace_reader_next_iteration(rb, &y, &error);
        CU_ASSERT_EQUAL(gx, gy);
        if (!gx || !gy) {
            ms_routing_free(x);
            ms_routing_free(y);
            break;
        }
        CU_ASSERT_TRUE(ms_routing_equal(x, y));
        ms_routing_free(x);
        ms_routing_free(y);
        n++;
    }
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_TRUE(n > 0);
}

static void
test_round_trips(void)
{
    const char *gen = "gen:ranks=4,experts=10,layers=3,top_k=3,tokens=50,iterations=3,corr=0.5,"
                      "drift=0.2,seed=11";
    g_autofree char *txt = g_build_filename(ms_test_tmpdir(), "rt.trace", NULL);
    g_autofree char *bin = g_build_filename(ms_test_tmpdir(), "rt.bin", NULL);
    g_autofree char *txt2 = g_build_filename(ms_test_tmpdir(), "rt2.trace", NULL);
    CU_ASSERT_EQUAL(copy_trace(gen, txt, MS_TRACE_FORMAT_TEXT), 3);
    CU_ASSERT_EQUAL(copy_trace(txt, bin, MS_TRACE_FORMAT_BINARY), 3);
    CU_ASSERT_EQUAL(copy_trace(bin, txt2, MS_TRACE_FORMAT_TEXT), 3);
    assert_same_trace(gen, txt);
    assert_same_trace(txt, bin);
    /* text -> binary -> text gives the very same bytes. */
    g_autofree char *a = NULL, *b = NULL;
    gsize la = 0, lb = 0;
    CU_ASSERT_TRUE(g_file_get_contents(txt, &a, &la, NULL));
    CU_ASSERT_TRUE(g_file_get_contents(txt2, &b, &lb, NULL));
    CU_ASSERT_EQUAL(la, lb);
    CU_ASSERT_TRUE(la == lb && memcmp(a, b, la) == 0);
    /* Count-level iterations too, and a binary sample. */
    g_autofree char *cbin = g_build_filename(ms_test_tmpdir(), "counts.bin", NULL);
    CU_ASSERT_EQUAL(copy_trace("sample:counts", cbin, MS_TRACE_FORMAT_BINARY), 8);
    assert_same_trace("sample:counts", cbin);
    g_autofree char *dtxt = g_build_filename(ms_test_tmpdir(), "default.trace", NULL);
    CU_ASSERT_EQUAL(copy_trace("sample:default", dtxt, MS_TRACE_FORMAT_TEXT), 4);
    assert_same_trace("sample:default", dtxt);
}

static void
test_samples(void)
{
    g_auto(GStrv) names = ms_trace_sample_names();
    CU_ASSERT_EQUAL_FATAL(g_strv_length(names), 7);
    CU_ASSERT_STRING_EQUAL(names[0], "counts");
    CU_ASSERT_STRING_EQUAL(names[1], "default");
    CU_ASSERT_STRING_EQUAL(names[2], "lina-enwik8-16e");
    CU_ASSERT_STRING_EQUAL(names[6], "tiny");
    GError *error = NULL;
    g_autoptr(MsTraceReader) d = ms_trace_reader_open("sample:default", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    const MsTraceHeader *h = ms_trace_reader_header(d);
    CU_ASSERT_EQUAL(ms_trace_reader_format(d), MS_TRACE_FORMAT_BINARY);
    CU_ASSERT_EQUAL(h->ranks, 16);
    CU_ASSERT_EQUAL(h->experts, 16);
    CU_ASSERT_EQUAL(h->layers, 12);
    CU_ASSERT_EQUAL(h->top_k, 2);
    MsRouting *it = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(d, &it, &error));
    CU_ASSERT_TRUE(ms_routing_has_paths(it));
    CU_ASSERT_EQUAL(ms_routing_total_tokens(it), 16 * h->tokens_per_rank);
    ms_routing_free(it);
    g_autoptr(MsTraceReader) c = ms_trace_reader_open("sample:counts", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(ms_trace_reader_format(c), MS_TRACE_FORMAT_TEXT);
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(c, &it, &error));
    CU_ASSERT_FALSE(ms_routing_has_paths(it));
    ms_routing_free(it);
    CU_ASSERT_PTR_NULL(ms_trace_reader_open("sample:nope", &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_UNKNOWN,
                    "unknown sample 'nope' (shipped samples: counts, default, lina-enwik8-16e, "
                    "lina-enwik8-4e, lina-wmt-16e, lina-wmt-4e, tiny)");
    /* A recipe sample is the generator with its keys: Lina's inference routing. */
    g_autoptr(MsTraceReader) g = ms_trace_reader_open("sample:lina-wmt-4e", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(ms_trace_reader_format(g), MS_TRACE_FORMAT_GENERATED);
    h = ms_trace_reader_header(g);
    CU_ASSERT_TRUE(h->ranks == 4 && h->experts == 4 && h->layers == 24 && h->top_k == 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(h->generator, "ratio=4.02,corr=0.3652,drift=0,seed=14"));
    CU_ASSERT_PTR_NULL(ms_trace_reader_open("sample:../default", &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_UNKNOWN, "unknown sample '../default'");
}

static void
test_generated(void)
{
    GError *error = NULL;
    g_autoptr(MsTraceReader) r =
        ms_trace_reader_open("gen:ranks=2,experts=4,layers=2,tokens=3,iterations=2", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(ms_trace_reader_format(r), MS_TRACE_FORMAT_GENERATED);
    CU_ASSERT_EQUAL(ms_trace_reader_header(r)->tokens_per_rank, 3);
    MsRouting *it = NULL;
    guint n = 0;
    while (ms_trace_reader_next_iteration(r, &it, &error)) {
        CU_ASSERT_EQUAL(ms_routing_iteration(it), n);
        ms_routing_free(it);
        n++;
    }
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_PTR_NULL(ms_trace_reader_open("gen:ranks=0", &error));
    MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE, "ranks=0");
    CU_ASSERT_PTR_NULL(ms_trace_reader_open("gen:hot=0.9", &error));
    MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE, "hot=0.9 is unreachable");
}

static void
test_stdin(void)
{
    g_autofree char *path = ms_test_write_tmp("in.trace", HEADER "c 0 0 0 7 2\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(freopen(path, "rb", stdin));
    GError *error = NULL;
    g_autoptr(MsTraceReader) r = ms_trace_reader_open("-", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_STRING_EQUAL(ms_trace_reader_source(r), "-");
    MsRouting *it = NULL;
    CU_ASSERT_FALSE(ms_trace_reader_next_iteration(r, &it, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE,
                    "<stdin>:6: expert 7 out of range (experts = 4)");
}

static void
test_open_errors(void)
{
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_trace_reader_open("/nonexistent/x.trace", &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_IO,
                    "/nonexistent/x.trace: cannot open: No such file");
    g_autofree char *bad = ms_test_write_tmp("bad.trace", "moe-trace 1\nexperts 4\nlayers x\n");
    CU_ASSERT_PTR_NULL(ms_trace_reader_open(bad, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_SYNTAX, "bad.trace:3: layers is not");
    g_autofree char *bin = g_build_filename(ms_test_tmpdir(), "bad.bin", NULL);
    g_assert(g_file_set_contents(bin, "\x89MOE", 4, NULL));
    CU_ASSERT_PTR_NULL(ms_trace_reader_open(bin, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_FORMAT, "bad.bin:offset 0: bad magic");
}

static void
test_open_bytes(void)
{
    GError *error = NULL;
    g_autoptr(GBytes) text =
        g_bytes_new_static(HEADER "c 4 0 1 3 2\nc 4 1 1 3 2\n", strlen(HEADER) + 24);
    g_autoptr(MsTraceReader) r = ms_trace_reader_open_bytes(text, "mem.trace", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(ms_trace_reader_format(r), MS_TRACE_FORMAT_TEXT);
    CU_ASSERT_STRING_EQUAL(ms_trace_reader_source(r), "mem.trace");
    MsRouting *it = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(r, &it, &error));
    CU_ASSERT_EQUAL(ms_routing_iteration(it), 4);
    CU_ASSERT_EQUAL(ms_routing_count(it, 1, 1, 3), 2);
    ms_routing_free(it);
    CU_ASSERT_FALSE(ms_trace_reader_next_iteration(r, &it, &error));
    CU_ASSERT_PTR_NULL(error);
    /* The binary form is detected the same way; errors name the given source. */
    g_autoptr(GBytes) magic = g_bytes_new_static("\x89MOE", 4);
    CU_ASSERT_PTR_NULL(ms_trace_reader_open_bytes(magic, "mem.bin", &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_FORMAT, "mem.bin:offset 0: bad magic");
    g_autoptr(GBytes) empty = g_bytes_new_static("", 0);
    CU_ASSERT_PTR_NULL(ms_trace_reader_open_bytes(empty, "empty.trace", &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_FORMAT, "empty.trace:");
}

/* Reads iterations until one fails; returns the error. */
static GError *
first_error(const char *records)
{
    g_autofree char *text = g_strconcat(HEADER, records, NULL);
    g_autoptr(MsTraceReader) r = open_text(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    GError *error = NULL;
    MsRouting *it = NULL;
    while (ms_trace_reader_next_iteration(r, &it, &error)) {
        ms_routing_free(it);
    }
    CU_ASSERT_PTR_NULL(it);
    /* The reader stays failed. */
    GError *again = NULL;
    CU_ASSERT_FALSE(ms_trace_reader_next_iteration(r, &it, &again));
    if (error) {
        MS_ASSERT_ERROR(again, MS_TRACE_ERROR, MS_TRACE_ERROR_IO,
                        "reading stopped at an earlier error");
    }
    return error;
}

static void
test_iteration_errors(void)
{
    static const struct {
        const char *records;
        int code;
        const char *needle;
    } cases[] = {
        {"c 1 0 0 0 2\nc 1 1 0 0 2\nc 0 0 0 0 2\n", MS_TRACE_ERROR_ORDER,
         "r.trace:8: iteration 0 follows iteration 1: iterations must not decrease"},
        {"c 0 0 0 0 2\nc 0 1 0 0 2\nc 2 0 0 0 2\nc 2 1 0 0 2\nc 1 0 0 0 2\n", MS_TRACE_ERROR_ORDER,
         "r.trace:10: iteration 1 follows iteration 2"},
        {"c 0 0 0 1 2\nc 0 1 0 1 2\nc 0 0 0 1 2\n", MS_TRACE_ERROR_DUPLICATE,
         "r.trace:8: duplicate count record for iteration 0 layer 0 rank 0 expert 1"},
        {"c 0 0 0 1 2\nt 0 5 0 0 1 2 3\n", MS_TRACE_ERROR_MIXED,
         "r.trace:7: iteration 0 mixes count and token records"},
        {"c 0 0 0 1 2\nc 0 1 0 1 4\nc 1 0 0 0 2\nc 1 1 0 0 2\n", MS_TRACE_ERROR_INCONSISTENT,
         "r.trace:7: iteration 0 rank 0: 4 token-expert assignments at layer 1 but 2 at layer 0"},
        {"c 0 0 0 1 3\nc 0 1 0 1 3\n", MS_TRACE_ERROR_INCONSISTENT,
         "r.trace:7: iteration 0 rank 0: 3 token-expert assignments per layer is not a multiple"},
        {"c 0 2 0 1 2\n", MS_TRACE_ERROR_RANGE, "r.trace:6: layer 2 out of range (layers = 2)"},
        {"c 0 0 2 1 2\n", MS_TRACE_ERROR_RANGE, "r.trace:6: rank 2 out of range (ranks = 2)"},
        {"c 0 0 0 4 2\n", MS_TRACE_ERROR_RANGE, "r.trace:6: expert 4 out of range (experts = 4)"},
        {"t 0 1 0 0 1 2 3\nt 0 2 1 0 1 2 7\n", MS_TRACE_ERROR_RANGE,
         "r.trace:7: layer 1: expert 7 out of range (experts = 4)"},
        {"t 0 1 3 0 1 2 3\n", MS_TRACE_ERROR_RANGE, "r.trace:6: rank 3 out of range"},
        {"t 0 1 0 0 1 2 2\n", MS_TRACE_ERROR_PATH,
         "r.trace:6: layer 1: expert 2 chosen twice in one token's top_k"},
        {"t 0 1 0 0 1 2 3\nt 0 1 0 1 2 3 0\n", MS_TRACE_ERROR_DUPLICATE,
         "r.trace:7: token 1 of rank 0 appears twice in iteration 0"},
        {"t 0 1 0 0 1 2 3\nt 0 1 1 0 1 2 3 4\n", MS_TRACE_ERROR_PATH,
         "r.trace:7: token record has 5 expert ids"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        GError *error = first_error(cases[i].records);
        MS_ASSERT_ERROR(error, MS_TRACE_ERROR, cases[i].code, cases[i].needle);
    }
}

static void
test_tokens_per_rank(void)
{
    GError *error = first_error("t 0 1 0 0 1 2 3\nt 0 2 1 0 1 2 3\nt 1 3 0 0 1 2 3\n");
    CU_ASSERT_PTR_NULL(error);
    g_autofree char *text = g_strconcat(HEADER, "tokens_per_rank 1\n", "t 0 1 0 0 1 2 3\n",
                                        "t 0 2 1 0 1 2 3\nt 1 3 0 0 1 2 3\n", NULL);
    g_autoptr(MsTraceReader) r = open_text(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    MsRouting *it = NULL;
    CU_ASSERT_TRUE(ms_trace_reader_next_iteration(r, &it, &error));
    ms_routing_free(it);
    CU_ASSERT_FALSE(ms_trace_reader_next_iteration(r, &it, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_INCONSISTENT,
                    "r.trace:9: iteration 1 rank 1 routes 0 tokens but the header says "
                    "tokens_per_rank 1");
}

static void
test_binary_errors(void)
{
    /* 5 experts take 3 bits, so a packed id can say 7: caught with the record's offset. */
    MsTraceHeader h;
    ms_trace_header_init_shape(&h, 5, 1, 1, 1);
    g_autofree char *path = g_build_filename(ms_test_tmpdir(), "ids.bin", NULL);
    GError *error = NULL;
    g_autoptr(MsTraceWriter) w = ms_trace_writer_new(path, MS_TRACE_FORMAT_BINARY, &h, &error);
    const guint32 ok[] = {4};
    CU_ASSERT_TRUE(ms_trace_writer_write_token(w, 0, 0, 0, ok, &error));
    CU_ASSERT_TRUE(ms_trace_writer_close(w, &error));
    g_autofree char *data = NULL;
    gsize len = 0;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &data, &len, NULL));
    /* Records start after magic, version, 6 header varints: offset 18; the id byte is 4 on. */
    CU_ASSERT_EQUAL_FATAL(data[18], 0x02);
    data[22] = 7;
    g_assert(g_file_set_contents(path, data, (gssize)len, NULL));
    g_autoptr(MsTraceReader) r = ms_trace_reader_open(path, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    MsRouting *it = NULL;
    CU_ASSERT_FALSE(ms_trace_reader_next_iteration(r, &it, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE,
                    "ids.bin:offset 18: layer 0: expert 7 out of range (experts = 5)");
    /* A truncated file: the error names the offset where it ends. */
    g_assert(g_file_set_contents(path, data, 21, NULL));
    g_autoptr(MsTraceReader) t = ms_trace_reader_open(path, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_FALSE(ms_trace_reader_next_iteration(t, &it, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_TRUNCATED,
                    "ids.bin:offset 21: file ends inside the token record");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"stream a text trace", test_stream_text},
        {"header-only trace", test_empty_trace},
        {"text <-> binary round trips", test_round_trips},
        {"shipped samples", test_samples},
        {"gen: sources", test_generated},
        {"standard input", test_stdin},
        {"open errors", test_open_errors},
        {"traces in memory", test_open_bytes},
        {"iteration errors name file:line", test_iteration_errors},
        {"tokens_per_rank", test_tokens_per_rank},
        {"binary errors name file:offset", test_binary_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"trace_reader", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
