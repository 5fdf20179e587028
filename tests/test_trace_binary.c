/* Tests of trace_binary: encoding round trips (deltas, zigzag token ids, bit-packed ids) and every
 * decoding error with its offset. */
#include "ms_test.h"
#include "traces/trace_binary.h"

typedef struct {
    FILE *file;
    MsTraceBinary *bin;
} Fixture;

static Fixture
open_bytes(const void *data, gsize len)
{
    g_autofree char *path = g_build_filename(ms_test_tmpdir(), "t.bin", NULL);
    g_assert(g_file_set_contents(path, data, (gssize)len, NULL));
    Fixture fx = {fopen(path, "rb"), NULL};
    g_assert(fx.file != NULL);
    fx.bin = ms_trace_binary_new(fx.file, "t.bin");
    return fx;
}

static void
close_bytes(Fixture *fx)
{
    ms_trace_binary_free(fx->bin);
    fclose(fx->file);
}

static MsTraceHeader
shape(guint32 experts, guint32 layers, guint32 ranks, guint32 top_k)
{
    MsTraceHeader h;
    ms_trace_header_init_shape(&h, experts, layers, ranks, top_k);
    return h;
}

/* Magic, version 1 and the bytes of the rest of a header. */
static GString *
raw_header(const char *rest, gsize len)
{
    GString *s = g_string_new(NULL);
    g_string_append_len(s, MS_TRACE_BINARY_MAGIC, MS_TRACE_BINARY_MAGIC_LEN);
    g_string_append_len(s, "\x01\x00\x00\x00", 4);
    g_string_append_len(s, rest, (gssize)len);
    return s;
}

static void
test_round_trip(void)
{
    MsTraceHeader h = shape(5, 2, 300, 2);
    h.tokens_per_rank = 77;
    g_assert(ms_trace_header_set_generator(&h, "moesim trace gen seed=9", NULL));
    g_autoptr(MsTraceBinary) enc = ms_trace_binary_new(NULL, "enc");
    g_autoptr(GString) out = g_string_new(NULL);
    ms_trace_binary_encode_header(enc, out, &h);
    const guint32 a[] = {4, 0, 3, 1}, b[] = {1, 2, 0, 4};
    const MsTraceRecord recs[] = {
        {.kind = MS_TRACE_RECORD_COUNT,
         .iteration = 0,
         .layer = 1,
         .rank = 299,
         .expert = 4,
         .tokens = G_MAXUINT32},
        {.kind = MS_TRACE_RECORD_TOKEN, .iteration = 3, .rank = 7, .token_id = 1000, .experts = a},
        {.kind = MS_TRACE_RECORD_TOKEN, .iteration = 3, .rank = 8, .token_id = 5, .experts = b},
        {.kind = MS_TRACE_RECORD_TOKEN,
         .iteration = 3,
         .rank = 8,
         .token_id = G_MAXUINT64,
         .experts = a},
        {.kind = MS_TRACE_RECORD_TOKEN,
         .iteration = 4294967295u,
         .rank = 0,
         .token_id = 2,
         .experts = b},
    };
    for (guint i = 0; i < G_N_ELEMENTS(recs); i++) {
        ms_trace_binary_encode_record(enc, out, &recs[i]);
    }
    ms_trace_binary_encode_end(enc, out);
    Fixture fx = open_bytes(out->str, out->len);
    GError *error = NULL;
    MsTraceHeader back;
    CU_ASSERT_TRUE_FATAL(ms_trace_binary_read_header(fx.bin, &back, &error));
    CU_ASSERT_TRUE(ms_trace_header_equal(&h, &back));
    for (guint i = 0; i < G_N_ELEMENTS(recs); i++) {
        MsTraceRecord r;
        CU_ASSERT_EQUAL_FATAL(ms_trace_binary_read_record(fx.bin, &r, &error),
                              MS_TRACE_READ_RECORD);
        CU_ASSERT_EQUAL(r.kind, recs[i].kind);
        CU_ASSERT_EQUAL(r.iteration, recs[i].iteration);
        CU_ASSERT_EQUAL(r.rank, recs[i].rank);
        if (r.kind == MS_TRACE_RECORD_COUNT) {
            CU_ASSERT_EQUAL(r.layer, recs[i].layer);
            CU_ASSERT_EQUAL(r.expert, recs[i].expert);
            CU_ASSERT_EQUAL(r.tokens, recs[i].tokens);
        } else {
            CU_ASSERT_EQUAL(r.token_id, recs[i].token_id);
            CU_ASSERT_EQUAL(memcmp(r.experts, recs[i].experts, 4 * sizeof(guint32)), 0);
        }
    }
    MsTraceRecord r;
    CU_ASSERT_EQUAL(ms_trace_binary_read_record(fx.bin, &r, &error), MS_TRACE_READ_END);
    CU_ASSERT_EQUAL(ms_trace_binary_read_record(fx.bin, &r, &error), MS_TRACE_READ_END);
    CU_ASSERT_PTR_NULL(error);
    close_bytes(&fx);
}

static void
test_compact(void)
{
    /* 16 experts, 12 layers, top-2: 24 ids of 4 bits = 12 bytes, plus tag, iteration delta,
     * token id delta and rank of one byte each. */
    MsTraceHeader h = shape(16, 12, 16, 2);
    g_autoptr(MsTraceBinary) enc = ms_trace_binary_new(NULL, "enc");
    g_autoptr(GString) out = g_string_new(NULL);
    ms_trace_binary_encode_header(enc, out, &h);
    gsize start = out->len;
    guint32 ids[24];
    for (guint i = 0; i < 24; i++) {
        ids[i] = (i * 7) % 16;
    }
    MsTraceRecord t = {
        .kind = MS_TRACE_RECORD_TOKEN, .iteration = 0, .rank = 3, .token_id = 0, .experts = ids};
    ms_trace_binary_encode_record(enc, out, &t);
    CU_ASSERT_EQUAL(out->len - start, 16);
    start = out->len;
    t.token_id = 1;
    ms_trace_binary_encode_record(enc, out, &t);
    CU_ASSERT_EQUAL(out->len - start, 16);
}

static void
expect_header_error(const GString *bytes, int code, const char *needle)
{
    Fixture fx = open_bytes(bytes->str, bytes->len);
    GError *error = NULL;
    MsTraceHeader h;
    CU_ASSERT_FALSE(ms_trace_binary_read_header(fx.bin, &h, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, code, needle);
    close_bytes(&fx);
}

static void
test_header_errors(void)
{
    g_autoptr(GString) empty = g_string_new(NULL);
    expect_header_error(empty, MS_TRACE_ERROR_FORMAT, "t.bin:offset 0: bad magic");
    g_autoptr(GString) wrong = g_string_new("\x89MOE\r\n\x1a\x0d rest");
    expect_header_error(wrong, MS_TRACE_ERROR_FORMAT, "bad magic: not a binary moe-trace");
    g_autoptr(GString) version = raw_header("", 0);
    version->str[MS_TRACE_BINARY_MAGIC_LEN] = 2;
    expect_header_error(version, MS_TRACE_ERROR_VERSION,
                        "t.bin:offset 8: unsupported binary trace version 2");
    g_autoptr(GString) no_version = g_string_new_len(MS_TRACE_BINARY_MAGIC "\x01", 9);
    expect_header_error(no_version, MS_TRACE_ERROR_TRUNCATED,
                        "t.bin:offset 9: file ends inside the header");
    g_autoptr(GString) cut = raw_header("\x04\x02", 2);
    expect_header_error(cut, MS_TRACE_ERROR_TRUNCATED, "t.bin:offset 14: file ends inside");
    g_autoptr(GString) over = raw_header("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 10);
    expect_header_error(over, MS_TRACE_ERROR_OVERFLOW,
                        "t.bin:offset 12: header: varint for experts overflows 64 bits");
    g_autoptr(GString) huge = raw_header("\x80\x94\xeb\xdc\x03\x02\x02\x02\x00\x00", 10);
    expect_header_error(huge, MS_TRACE_ERROR_LIMIT, "experts = 1000000000 is outside 1..65536");
    g_autoptr(GString) wide = raw_header("\x80\x80\x80\x80\x10", 5);
    expect_header_error(wide, MS_TRACE_ERROR_LIMIT,
                        "t.bin:offset 12: experts = 4294967296 is out of range");
    g_autoptr(GString) k = raw_header("\x04\x02\x02\x05\x00\x00", 6);
    expect_header_error(k, MS_TRACE_ERROR_LIMIT, "t.bin:offset 12: top_k = 5 is outside 1..4");
    g_autoptr(GString) gen_len = raw_header("\x04\x02\x02\x02\x00\xd8\x04", 7);
    expect_header_error(gen_len, MS_TRACE_ERROR_LIMIT,
                        "t.bin:offset 17: generator length 600 exceeds the limit of 511");
    g_autoptr(GString) gen_nul = raw_header("\x04\x02\x02\x02\x00\x03"
                                            "a\0b",
                                            9);
    expect_header_error(gen_nul, MS_TRACE_ERROR_LIMIT, "generator holds a NUL byte");
    g_autoptr(GString) gen_nl = raw_header("\x04\x02\x02\x02\x00\x03"
                                           "a\nb",
                                           9);
    expect_header_error(gen_nl, MS_TRACE_ERROR_LIMIT,
                        "t.bin:offset 17: generator line holds control character 0x0a");
    g_autoptr(GString) gen_cut = raw_header("\x04\x02\x02\x02\x00\x09"
                                            "abc",
                                            9);
    expect_header_error(gen_cut, MS_TRACE_ERROR_TRUNCATED, "file ends inside the header");
}

/* Header of 4 experts, 3 layers, 2 ranks, top-1 (6 bits of ids, 2 padding bits), then rest. */
static void
expect_record_error(const char *rest, gsize len, guint good, int code, const char *needle)
{
    g_autoptr(GString) bytes = raw_header("\x04\x03\x02\x01\x00\x00", 6);
    g_string_append_len(bytes, rest, (gssize)len);
    Fixture fx = open_bytes(bytes->str, bytes->len);
    GError *error = NULL;
    MsTraceHeader h;
    CU_ASSERT_TRUE_FATAL(ms_trace_binary_read_header(fx.bin, &h, &error));
    MsTraceRecord r;
    for (guint i = 0; i < good; i++) {
        CU_ASSERT_EQUAL(ms_trace_binary_read_record(fx.bin, &r, &error), MS_TRACE_READ_RECORD);
    }
    CU_ASSERT_EQUAL(ms_trace_binary_read_record(fx.bin, &r, &error), MS_TRACE_READ_ERROR);
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, code, needle);
    close_bytes(&fx);
}

static void
test_record_errors(void)
{
    /* Records start at offset 18. A good count record is 01 00 01 01 03 07 (6 bytes). */
    expect_record_error("", 0, 0, MS_TRACE_ERROR_TRUNCATED,
                        "t.bin:offset 18: file ends without the end record (truncated?)");
    expect_record_error("\x01\x00\x01\x01\x03\x07", 6, 1, MS_TRACE_ERROR_TRUNCATED,
                        "t.bin:offset 24: file ends without the end record");
    expect_record_error("\x07", 1, 0, MS_TRACE_ERROR_FORMAT,
                        "t.bin:offset 18: unknown record tag 0x07 (expected 0x00 end, 0x01 count "
                        "or 0x02 token)");
    expect_record_error("\x01\x00\x01", 3, 0, MS_TRACE_ERROR_TRUNCATED,
                        "t.bin:offset 21: file ends inside the count record");
    expect_record_error("\x02\x00\x00\x01", 4, 0, MS_TRACE_ERROR_TRUNCATED,
                        "file ends inside the token record");
    expect_record_error("\x02\x00\x00\x01\xc0", 5, 0, MS_TRACE_ERROR_FORMAT,
                        "t.bin:offset 18: token record: non-zero padding bits");
    expect_record_error("\x01\x00\x80\x80\x80\x80\x10\x00\x00\x01", 10, 0, MS_TRACE_ERROR_OVERFLOW,
                        "t.bin:offset 20: count record: layer 4294967296 overflows its field");
    expect_record_error("\x01\xff\xff\xff\xff\x0f\x00\x00\x00\x01"
                        "\x01\x01\x00\x00\x00\x01",
                        16, 1, MS_TRACE_ERROR_OVERFLOW,
                        "t.bin:offset 28: count record: iteration 4294967295 + 1 exceeds the "
                        "limit of 4294967295");
    expect_record_error("\x01\x00\x01\x01\x03\x07\x00\x05", 8, 1, MS_TRACE_ERROR_FORMAT,
                        "t.bin:offset 24: end record counts 5 records but 1 were read");
    expect_record_error("\x01\x00\x01\x01\x03\x07\x00\x01\x00", 9, 1, MS_TRACE_ERROR_FORMAT,
                        "t.bin:offset 26: trailing data after the end record");
    expect_record_error("\x00\x80", 2, 0, MS_TRACE_ERROR_TRUNCATED,
                        "t.bin:offset 20: file ends inside the end record");
}

static void
test_prefix_and_io(void)
{
    Fixture fx = open_bytes("x", 1);
    GError *error = g_error_new(MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE, "bad");
    ms_trace_binary_prefix_error(fx.bin, 99, &error);
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE, "t.bin:offset 99: bad");
    close_bytes(&fx);
    FILE *f = fopen(ms_test_tmpdir(), "rb"); /* a directory: reads fail */
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    g_autoptr(MsTraceBinary) bin = ms_trace_binary_new(f, "dir");
    MsTraceHeader h;
    CU_ASSERT_FALSE(ms_trace_binary_read_header(bin, &h, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_IO, "dir:offset 0: read error:");
    fclose(f);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"round trip", test_round_trip},
        {"token records are compact", test_compact},
        {"header errors", test_header_errors},
        {"record errors", test_record_errors},
        {"error prefix and read errors", test_prefix_and_io},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"trace_binary", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
