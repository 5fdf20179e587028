/* Tests of trace_text: header and record decoding, encoding, and every error with its line. */
#include "ms_test.h"
#include "traces/trace_text.h"

typedef struct {
    FILE *file;
    MsTraceText *text;
} Fixture;

static Fixture
open_text(const char *text)
{
    g_autofree char *path = ms_test_write_tmp("t.trace", text);
    Fixture fx = {fopen(path, "rb"), NULL};
    g_assert(fx.file != NULL);
    fx.text = ms_trace_text_new(fx.file, "t.trace");
    return fx;
}

static void
close_text(Fixture *fx)
{
    ms_trace_text_free(fx->text);
    fclose(fx->file);
}

#define HEADER "moe-trace 1\nexperts 4\nlayers 2\nranks 3\ntop_k 2\n"

static void
test_decode(void)
{
    Fixture fx = open_text("moe-trace 1\n"
                           "# generator: moesim trace gen seed=3\n"
                           "# generator: ignored second line\n"
                           "experts 4\n\n  layers\t2\nranks 3\ntop_k 2\ntokens_per_rank 9\n"
                           "# records\n"
                           "c 0 1 2 3 412\r\n"
                           "  t 5 1234 2 3 0 1 2  \n"
                           "\n");
    GError *error = NULL;
    MsTraceHeader h;
    CU_ASSERT_TRUE_FATAL(ms_trace_text_read_header(fx.text, &h, &error));
    CU_ASSERT_EQUAL(h.experts, 4);
    CU_ASSERT_EQUAL(h.layers, 2);
    CU_ASSERT_EQUAL(h.ranks, 3);
    CU_ASSERT_EQUAL(h.top_k, 2);
    CU_ASSERT_EQUAL(h.tokens_per_rank, 9);
    CU_ASSERT_STRING_EQUAL(h.generator, "moesim trace gen seed=3");
    MsTraceRecord rec;
    CU_ASSERT_EQUAL(ms_trace_text_read_record(fx.text, &rec, &error), MS_TRACE_READ_RECORD);
    CU_ASSERT_EQUAL(ms_trace_text_position(fx.text), 11);
    CU_ASSERT_EQUAL(rec.kind, MS_TRACE_RECORD_COUNT);
    CU_ASSERT_EQUAL(rec.iteration, 0);
    CU_ASSERT_EQUAL(rec.layer, 1);
    CU_ASSERT_EQUAL(rec.rank, 2);
    CU_ASSERT_EQUAL(rec.expert, 3);
    CU_ASSERT_EQUAL(rec.tokens, 412);
    CU_ASSERT_EQUAL(ms_trace_text_read_record(fx.text, &rec, &error), MS_TRACE_READ_RECORD);
    CU_ASSERT_EQUAL(rec.kind, MS_TRACE_RECORD_TOKEN);
    CU_ASSERT_EQUAL(rec.iteration, 5);
    CU_ASSERT_EQUAL(rec.token_id, 1234);
    CU_ASSERT_EQUAL(rec.rank, 2);
    CU_ASSERT_EQUAL(rec.experts[0], 3);
    CU_ASSERT_EQUAL(rec.experts[3], 2);
    CU_ASSERT_EQUAL(ms_trace_text_read_record(fx.text, &rec, &error), MS_TRACE_READ_END);
    CU_ASSERT_PTR_NULL(error);
    close_text(&fx);
}

static void
test_short_paths(void)
{
    /* One layer, top-1: a token record has 5 fields, fewer than a count record's 6. */
    Fixture fx = open_text("moe-trace 1\nexperts 4\nlayers 1\nranks 1\ntop_k 1\n"
                           "c 0 0 0 3 1\nt 1 0 0 2\nc 2 0 0 1 1 9\n");
    GError *error = NULL;
    MsTraceHeader h;
    CU_ASSERT_TRUE_FATAL(ms_trace_text_read_header(fx.text, &h, &error));
    MsTraceRecord rec;
    CU_ASSERT_EQUAL(ms_trace_text_read_record(fx.text, &rec, &error), MS_TRACE_READ_RECORD);
    CU_ASSERT_EQUAL(rec.expert, 3);
    CU_ASSERT_EQUAL(rec.tokens, 1);
    CU_ASSERT_EQUAL(ms_trace_text_read_record(fx.text, &rec, &error), MS_TRACE_READ_RECORD);
    CU_ASSERT_EQUAL(rec.experts[0], 2);
    CU_ASSERT_EQUAL(ms_trace_text_read_record(fx.text, &rec, &error), MS_TRACE_READ_ERROR);
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_SYNTAX,
                    "t.trace:8: count record needs 6 fields");
    close_text(&fx);
}

static void
test_encode(void)
{
    MsTraceHeader h;
    ms_trace_header_init_shape(&h, 4, 2, 3, 2);
    h.tokens_per_rank = 7;
    g_assert(ms_trace_header_set_generator(&h, "here", NULL));
    g_autoptr(GString) out = g_string_new(NULL);
    ms_trace_text_encode_header(out, &h);
    const guint32 ids[] = {3, 0, 1, 2};
    MsTraceRecord c = {.kind = MS_TRACE_RECORD_COUNT,
                       .iteration = 4294967295u,
                       .layer = 1,
                       .rank = 2,
                       .expert = 3,
                       .tokens = 0};
    MsTraceRecord t = {.kind = MS_TRACE_RECORD_TOKEN,
                       .iteration = 0,
                       .rank = 1,
                       .token_id = G_MAXUINT64,
                       .experts = ids};
    ms_trace_text_encode_record(out, &h, &c);
    ms_trace_text_encode_record(out, &h, &t);
    CU_ASSERT_STRING_EQUAL(out->str, "moe-trace 1\n# generator: here\nexperts 4\nlayers 2\n"
                                     "ranks 3\ntop_k 2\ntokens_per_rank 7\n"
                                     "c 4294967295 1 2 3 0\n"
                                     "t 0 18446744073709551615 1 3 0 1 2\n");
    /* Decoding the encoding gives the records back. */
    Fixture fx = open_text(out->str);
    GError *error = NULL;
    MsTraceHeader back;
    CU_ASSERT_TRUE_FATAL(ms_trace_text_read_header(fx.text, &back, &error));
    CU_ASSERT_TRUE(ms_trace_header_equal(&h, &back));
    MsTraceRecord rec;
    CU_ASSERT_EQUAL(ms_trace_text_read_record(fx.text, &rec, &error), MS_TRACE_READ_RECORD);
    CU_ASSERT_EQUAL(rec.iteration, 4294967295u);
    CU_ASSERT_EQUAL(ms_trace_text_read_record(fx.text, &rec, &error), MS_TRACE_READ_RECORD);
    CU_ASSERT_EQUAL(rec.token_id, G_MAXUINT64);
    close_text(&fx);
}

static void
test_header_errors(void)
{
    static const struct {
        const char *text;
        int code;
        const char *needle;
    } cases[] = {
        {"", MS_TRACE_ERROR_FORMAT, "t.trace:1: empty file: expected 'moe-trace 1'"},
        {"hello world\n", MS_TRACE_ERROR_FORMAT,
         "t.trace:1: not a moe-trace file: the first line must be 'moe-trace 1'"},
        {"moe-trace\n", MS_TRACE_ERROR_FORMAT, "t.trace:1: not a moe-trace file"},
        {"moe-trace x\n", MS_TRACE_ERROR_FORMAT, "t.trace:1: bad version 'x'"},
        {"moe-trace 2\n", MS_TRACE_ERROR_VERSION,
         "t.trace:1: unsupported trace version 2 (this moesim reads version 1)"},
        {"moe-trace 1\nexperts 4\nexpert 5\n", MS_TRACE_ERROR_HEADER,
         "t.trace:3: unknown header key 'expert' (known: experts, layers"},
        {"moe-trace 1\nexperts 4\nlayers 2\nexperts 8\n", MS_TRACE_ERROR_HEADER,
         "t.trace:4: header key 'experts' given twice (first at line 2)"},
        {"moe-trace 1\nexperts four\n", MS_TRACE_ERROR_SYNTAX,
         "t.trace:2: experts is not a number: 'four'"},
        {"moe-trace 1\nexperts 1000000000\n", MS_TRACE_ERROR_LIMIT,
         "t.trace:2: experts = 1000000000 is outside 1..65536"},
        {"moe-trace 1\nranks 99999999999999999999999\n", MS_TRACE_ERROR_LIMIT,
         "t.trace:2: ranks = 99999999999999999999999 is outside 1..65536"},
        {"moe-trace 1\nlayers 0\n", MS_TRACE_ERROR_LIMIT, "t.trace:2: layers = 0 is outside"},
        {"moe-trace 1\nexperts 4 5\n", MS_TRACE_ERROR_SYNTAX,
         "t.trace:2: header line must be 'KEY VALUE', got 3 fields"},
        {"moe-trace 1\nexperts 4\nlayers 2\nranks 3\nc 0 0 0 0 1\n", MS_TRACE_ERROR_HEADER,
         "t.trace:5: missing header key 'top_k' before the records"},
        {"moe-trace 1\nexperts 4\nlayers 2\ntop_k 2\n", MS_TRACE_ERROR_HEADER,
         "t.trace:4: missing header key 'ranks'"},
        {"moe-trace 1\nexperts 4\nlayers 2\nranks 3\ntop_k 5\n", MS_TRACE_ERROR_LIMIT,
         "t.trace:5: top_k = 5 is outside 1..4"},
        {"moe-trace 1\nexperts 65536\nlayers 4096\nranks 2\ntop_k 2\n", MS_TRACE_ERROR_LIMIT,
         "layers x ranks x experts = 4096 x 2 x 65536"},
        {"moe-trace 1\n# generator: \x01\n", MS_TRACE_ERROR_LIMIT,
         "t.trace:2: generator line holds control character 0x01"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        Fixture fx = open_text(cases[i].text);
        GError *error = NULL;
        MsTraceHeader h;
        CU_ASSERT_FALSE(ms_trace_text_read_header(fx.text, &h, &error));
        MS_ASSERT_ERROR(error, MS_TRACE_ERROR, cases[i].code, cases[i].needle);
        close_text(&fx);
    }
}

static void
test_record_errors(void)
{
    static const struct {
        const char *records;
        int code;
        const char *needle;
    } cases[] = {
        {"x 0 0 0 0 1\n", MS_TRACE_ERROR_SYNTAX,
         "t.trace:7: unknown record kind 'x' (expected 'c' or 't')"},
        {"\n# note\ncount 0\n", MS_TRACE_ERROR_SYNTAX, "t.trace:9: unknown record kind 'count'"},
        {"c 0 0 0 1\n", MS_TRACE_ERROR_SYNTAX,
         "t.trace:7: count record needs 6 fields 'c ITERATION LAYER RANK EXPERT TOKENS', got 5"},
        {"c 0 0 0 1 2 3\n", MS_TRACE_ERROR_SYNTAX, "count record needs 6 fields"},
        {"c 0 one 0 1 2\n", MS_TRACE_ERROR_SYNTAX, "t.trace:7: layer is not a number: 'one'"},
        {"c 0 0 -1 1 2\n", MS_TRACE_ERROR_SYNTAX, "t.trace:7: rank is not a number: '-1'"},
        {"c 0 0 0 1 2.5\n", MS_TRACE_ERROR_SYNTAX, "tokens is not a number: '2.5'"},
        {"c 4294967296 0 0 1 2\n", MS_TRACE_ERROR_OVERFLOW,
         "t.trace:7: iteration '4294967296' overflows its field (at most 4294967295)"},
        {"c 0 0 0 1 99999999999\n", MS_TRACE_ERROR_OVERFLOW,
         "tokens '99999999999' overflows its field (at most 4294967295)"},
        {"c 0 0 0 5000000000 1\n", MS_TRACE_ERROR_OVERFLOW, "expert '5000000000' overflows"},
        {"t 0 1 2 3 0 1\n", MS_TRACE_ERROR_PATH,
         "t.trace:7: token record has 3 expert ids, expected layers x top_k = 2 x 2 = 4"},
        {"t 0 1 2 3 0 1 2 3\n", MS_TRACE_ERROR_PATH, "token record has 5 expert ids"},
        {"t 0 1\n", MS_TRACE_ERROR_SYNTAX, "t.trace:7: token record has 0 expert ids"},
        {"t 0 1 2 3 0 x 2\n", MS_TRACE_ERROR_SYNTAX, "t.trace:7: expert id is not a number: 'x'"},
        {"t 0 99999999999999999999 2 3 0 1 2\n", MS_TRACE_ERROR_OVERFLOW,
         "token id '99999999999999999999' overflows"},
        {"t 0 1 4294967296 3 0 1 2\n", MS_TRACE_ERROR_OVERFLOW, "rank '4294967296' overflows"},
        {"t 0 1 2 3 0 1 4294967296\n", MS_TRACE_ERROR_OVERFLOW, "expert id '4294967296' overflows"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        /* After one good record: before it, the header reader would see a bad header line. */
        g_autofree char *text = g_strconcat(HEADER, "c 0 0 0 0 2\n", cases[i].records, NULL);
        Fixture fx = open_text(text);
        GError *error = NULL;
        MsTraceHeader h;
        CU_ASSERT_TRUE_FATAL(ms_trace_text_read_header(fx.text, &h, &error));
        MsTraceRecord rec;
        CU_ASSERT_EQUAL(ms_trace_text_read_record(fx.text, &rec, &error), MS_TRACE_READ_RECORD);
        CU_ASSERT_EQUAL(ms_trace_text_read_record(fx.text, &rec, &error), MS_TRACE_READ_ERROR);
        MS_ASSERT_ERROR(error, MS_TRACE_ERROR, cases[i].code, cases[i].needle);
        close_text(&fx);
    }
}

static void
test_long_lines(void)
{
    /* A 100 KB line: a header line is refused at 64 KiB, and so is any record line of a trace
     * whose token records are short. */
    g_autofree char *junk = g_strnfill(100000, '7');
    g_autofree char *in_header = g_strconcat("moe-trace 1\nexperts ", junk, "\n", NULL);
    Fixture fx = open_text(in_header);
    GError *error = NULL;
    MsTraceHeader h;
    CU_ASSERT_FALSE(ms_trace_text_read_header(fx.text, &h, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_SYNTAX,
                    "t.trace:2: line longer than 65536 bytes");
    close_text(&fx);
    g_autofree char *in_records = g_strconcat(HEADER, "c 0 0 0 0 2\nc 0 0 0 1 ", junk, "\n", NULL);
    fx = open_text(in_records);
    CU_ASSERT_TRUE(ms_trace_text_read_header(fx.text, &h, &error));
    MsTraceRecord rec;
    CU_ASSERT_EQUAL(ms_trace_text_read_record(fx.text, &rec, &error), MS_TRACE_READ_RECORD);
    CU_ASSERT_EQUAL(ms_trace_text_read_record(fx.text, &rec, &error), MS_TRACE_READ_ERROR);
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_SYNTAX,
                    "t.trace:7: line longer than 65536 bytes");
    close_text(&fx);
}

static void
test_io_error(void)
{
    FILE *f = fopen(ms_test_tmpdir(), "rb"); /* a directory: reads fail */
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    g_autoptr(MsTraceText) t = ms_trace_text_new(f, "dir");
    GError *error = NULL;
    MsTraceHeader h;
    CU_ASSERT_FALSE(ms_trace_text_read_header(t, &h, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_IO, "dir:1: read error:");
    fclose(f);
}

static void
test_prefix(void)
{
    Fixture fx = open_text(HEADER);
    GError *error = g_error_new(MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE, "bad");
    ms_trace_text_prefix_error(fx.text, 42, &error);
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE, "t.trace:42: bad");
    close_text(&fx);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"decode header and records", test_decode},
        {"records of one-id paths", test_short_paths},
        {"encode and decode back", test_encode},
        {"header errors", test_header_errors},
        {"record errors", test_record_errors},
        {"long lines", test_long_lines},
        {"read error", test_io_error},
        {"error prefix", test_prefix},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"trace_text", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
