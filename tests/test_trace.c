/* Tests of trace: header limits, provenance line, record field checks, number parsing. */
#include "ms_test.h"
#include "traces/trace.h"

static MsTraceHeader
shape(guint32 experts, guint32 layers, guint32 ranks, guint32 top_k)
{
    MsTraceHeader h;
    ms_trace_header_init_shape(&h, experts, layers, ranks, top_k);
    return h;
}

static void
test_header_limits(void)
{
    GError *error = NULL;
    MsTraceHeader h = shape(16, 12, 16, 2);
    CU_ASSERT_TRUE(ms_trace_header_validate(&h, &error));
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_EQUAL(h.experts, 16);
    CU_ASSERT_EQUAL(h.layers, 12);
    CU_ASSERT_EQUAL(h.ranks, 16);
    CU_ASSERT_EQUAL(h.top_k, 2);
    CU_ASSERT_EQUAL(h.tokens_per_rank, 0);
    CU_ASSERT_STRING_EQUAL(h.generator, "");
    static const struct {
        guint32 experts, layers, ranks, top_k, tokens;
        const char *needle;
    } bad[] = {
        {1000000000, 1, 1, 1, 0, "experts = 1000000000 is outside 1..65536"},
        {0, 1, 1, 1, 0, "experts = 0 is outside 1..65536"},
        {4, 4097, 1, 1, 0, "layers = 4097 is outside 1..4096"},
        {4, 1, 65537, 1, 0, "ranks = 65537 is outside 1..65536"},
        {4, 1, 1, 5, 0, "top_k = 5 is outside 1..4"},
        {128, 1, 1, 65, 0, "top_k = 65 is outside 1..64"},
        {4, 1, 1, 0, 0, "top_k = 0 is outside"},
        {4, 1, 1, 1, (1u << 26) + 1, "tokens_per_rank = 67108865 is outside 0..67108864"},
        {65536, 4096, 2, 1, 0,
         "layers x ranks x experts = 4096 x 2 x 65536 = 536870912 exceeds the limit of 268435456"},
        {256, 58, 18079, 8, 0, "58 x 18079 x 256 = 268436992 exceeds"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        h = shape(bad[i].experts, bad[i].layers, bad[i].ranks, bad[i].top_k);
        h.tokens_per_rank = bad[i].tokens;
        CU_ASSERT_FALSE(ms_trace_header_validate(&h, &error));
        MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT, bad[i].needle);
    }
    /* The cell limit itself, and DeepSeek-V3's 58 MoE layers of 256 experts on 16,384 GPUs. */
    h = shape(65536, 4096, 1, 1);
    CU_ASSERT_TRUE(ms_trace_header_validate(&h, &error));
    h = shape(256, 58, 16384, 8);
    CU_ASSERT_TRUE(ms_trace_header_validate(&h, &error));
    CU_ASSERT_PTR_NULL(error);
    h = shape(4, 1, 1, 1);
    memset(h.generator, 'x', sizeof(h.generator));
    CU_ASSERT_FALSE(ms_trace_header_validate(&h, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT, "generator line not terminated");
}

static void
test_generator_line(void)
{
    GError *error = NULL;
    MsTraceHeader a = shape(4, 2, 2, 2), b = shape(4, 2, 2, 2);
    CU_ASSERT_TRUE(ms_trace_header_set_generator(&a, "moesim trace gen seed=1", &error));
    CU_ASSERT_STRING_EQUAL(a.generator, "moesim trace gen seed=1");
    CU_ASSERT_FALSE(ms_trace_header_equal(&a, &b));
    CU_ASSERT_TRUE(ms_trace_header_set_generator(&b, "moesim trace gen seed=1", &error));
    CU_ASSERT_TRUE(ms_trace_header_equal(&a, &b));
    b.tokens_per_rank = 3;
    CU_ASSERT_FALSE(ms_trace_header_equal(&a, &b));
    CU_ASSERT_FALSE(ms_trace_header_set_generator(&a, "two\nlines", &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT,
                    "control character 0x0a at byte 3");
    CU_ASSERT_FALSE(ms_trace_header_set_generator(&a, "bad \xff utf8", &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT, "not UTF-8");
    g_autofree char *long_line = g_strnfill(MS_TRACE_GENERATOR_MAX, 'g');
    CU_ASSERT_FALSE(ms_trace_header_set_generator(&a, long_line, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT,
                    "512 bytes exceeds the limit of 511");
    CU_ASSERT_STRING_EQUAL(a.generator, "moesim trace gen seed=1");
}

static void
test_sizes(void)
{
    static const struct {
        guint32 experts;
        guint bits;
    } cases[] = {{1, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 3}, {16, 4}, {17, 5}, {65536, 16}};
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        MsTraceHeader h = shape(cases[i].experts, 3, 1, 1);
        CU_ASSERT_EQUAL(ms_trace_header_expert_bits(&h), cases[i].bits);
    }
    MsTraceHeader h = shape(16, 12, 16, 2);
    CU_ASSERT_EQUAL(ms_trace_header_path_len(&h), 24);
    CU_ASSERT_STRING_EQUAL(ms_trace_format_name(MS_TRACE_FORMAT_TEXT), "text");
    CU_ASSERT_STRING_EQUAL(ms_trace_format_name(MS_TRACE_FORMAT_BINARY), "binary");
    CU_ASSERT_STRING_EQUAL(ms_trace_format_name(MS_TRACE_FORMAT_GENERATED), "generated");
}

static void
test_record_checks(void)
{
    GError *error = NULL;
    MsTraceHeader h = shape(8, 2, 4, 2);
    CU_ASSERT_TRUE(ms_trace_check_count(&h, 1, 3, 7, &error));
    CU_ASSERT_FALSE(ms_trace_check_count(&h, 2, 0, 0, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE,
                    "layer 2 out of range (layers = 2)");
    CU_ASSERT_FALSE(ms_trace_check_count(&h, 0, 4, 0, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE, "rank 4 out of range (ranks = 4)");
    CU_ASSERT_FALSE(ms_trace_check_count(&h, 0, 0, 8, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE,
                    "expert 8 out of range (experts = 8)");
    const guint32 good[] = {1, 2, 7, 0};
    CU_ASSERT_TRUE(ms_trace_check_token(&h, 3, good, &error));
    CU_ASSERT_FALSE(ms_trace_check_token(&h, 4, good, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE, "rank 4 out of range");
    const guint32 big[] = {1, 2, 7, 8};
    CU_ASSERT_FALSE(ms_trace_check_token(&h, 0, big, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE,
                    "layer 1: expert 8 out of range (experts = 8)");
    const guint32 twice[] = {1, 2, 5, 5};
    CU_ASSERT_FALSE(ms_trace_check_token(&h, 0, twice, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_PATH,
                    "layer 1: expert 5 chosen twice in one token's top_k");
    /* Top-1 paths pass in one sweep; a bad id still gets its layer named. */
    MsTraceHeader one = shape(8, 3, 4, 1);
    const guint32 path1[] = {7, 0, 7}, bad1[] = {7, 0, 9};
    CU_ASSERT_TRUE(ms_trace_check_token(&one, 0, path1, &error));
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_FALSE(ms_trace_check_token(&one, 0, bad1, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE,
                    "layer 2: expert 9 out of range (experts = 8)");
}

static void
test_parse_number(void)
{
    guint64 v = 0;
    CU_ASSERT_EQUAL(ms_trace_parse_number("412", 3, 1000, &v), MS_TRACE_NUMBER_OK);
    CU_ASSERT_EQUAL(v, 412);
    CU_ASSERT_EQUAL(ms_trace_parse_number("18446744073709551615", 20, G_MAXUINT64, &v),
                    MS_TRACE_NUMBER_OK);
    CU_ASSERT_EQUAL(v, G_MAXUINT64);
    CU_ASSERT_EQUAL(ms_trace_parse_number("18446744073709551616", 20, G_MAXUINT64, &v),
                    MS_TRACE_NUMBER_OVERFLOW);
    CU_ASSERT_EQUAL(ms_trace_parse_number("1001", 4, 1000, &v), MS_TRACE_NUMBER_OVERFLOW);
    CU_ASSERT_EQUAL(ms_trace_parse_number("99999999999999999999999x", 24, G_MAXUINT64, &v),
                    MS_TRACE_NUMBER_SYNTAX);
    CU_ASSERT_EQUAL(ms_trace_parse_number("", 0, 10, &v), MS_TRACE_NUMBER_SYNTAX);
    CU_ASSERT_EQUAL(ms_trace_parse_number("-1", 2, 10, &v), MS_TRACE_NUMBER_SYNTAX);
    CU_ASSERT_EQUAL(ms_trace_parse_number("1.5", 3, 10, &v), MS_TRACE_NUMBER_SYNTAX);
    CU_ASSERT_EQUAL(v, G_MAXUINT64); /* untouched by failures */
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"header limits", test_header_limits},       {"generator line", test_generator_line},
        {"expert bits and path length", test_sizes}, {"record field checks", test_record_checks},
        {"number parsing", test_parse_number},       {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"trace", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
