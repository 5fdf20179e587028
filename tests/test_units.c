/* Tests of units: every accepted spelling, every rejection. */
#include "ms_test.h"
#include "sim/base/units.h"

static void
test_bandwidth(void)
{
    MsBandwidth bw = 0;
    CU_ASSERT_TRUE(ms_parse_bandwidth("300GBps", &bw, NULL));
    MS_ASSERT_REL(bw, 300e9, 1e-12);
    CU_ASSERT_TRUE(ms_parse_bandwidth("200Gbps", &bw, NULL));
    MS_ASSERT_REL(bw, 25e9, 1e-12);
    CU_ASSERT_TRUE(ms_parse_bandwidth(" 12.5 GB/s ", &bw, NULL));
    MS_ASSERT_REL(bw, 12.5e9, 1e-12);
    CU_ASSERT_TRUE(ms_parse_bandwidth("1e3Mbps", &bw, NULL));
    MS_ASSERT_REL(bw, 125e6, 1e-12);
}

static void
test_bandwidth_errors(void)
{
    MsBandwidth bw = 7;
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_parse_bandwidth("300", &bw, &error));
    MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_UNIT, "has no unit");
    CU_ASSERT_FALSE(ms_parse_bandwidth("300GHz", &bw, &error));
    MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_UNIT, "unknown unit 'GHz'");
    CU_ASSERT_FALSE(ms_parse_bandwidth("-5GBps", &bw, &error));
    MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE, "out of range");
    CU_ASSERT_FALSE(ms_parse_bandwidth("0GBps", &bw, &error));
    MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE, "out of range");
    CU_ASSERT_FALSE(ms_parse_bandwidth("nanGBps", &bw, &error));
    MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE, "not a finite number");
    CU_ASSERT_FALSE(ms_parse_bandwidth("GBps", &bw, &error));
    MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_SYNTAX, "expected a number");
    CU_ASSERT_FALSE(ms_parse_bandwidth("0x10GBps", &bw, &error));
    MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE, "not a finite number");
    CU_ASSERT_EQUAL(bw, 7);
}

static void
test_time(void)
{
    MsTime t = 0;
    CU_ASSERT_TRUE(ms_parse_time("1.5us", &t, NULL));
    CU_ASSERT_EQUAL(t, 1500000);
    CU_ASSERT_TRUE(ms_parse_time("0s", &t, NULL));
    CU_ASSERT_EQUAL(t, 0);
    CU_ASSERT_TRUE(ms_parse_time("700ns", &t, NULL));
    CU_ASSERT_EQUAL(t, 700000);
    CU_ASSERT_TRUE(ms_parse_time("2ms", &t, NULL));
    CU_ASSERT_EQUAL(t, 2 * MS_PS_PER_MS);
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_parse_time("5", &t, &error));
    MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_UNIT, "no unit");
    CU_ASSERT_FALSE(ms_parse_time("-1us", &t, &error));
    MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE, "out of range");
    CU_ASSERT_FALSE(ms_parse_time("1e9s", &t, &error));
    MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE, "out of range");
    CU_ASSERT_EQUAL(ms_time_from_us(2.5), 2500000);
    MS_ASSERT_REL(ms_time_to_us(2500000), 2.5, 1e-12);
}

static void
test_flops_and_bytes(void)
{
    MsFlops f = 0;
    CU_ASSERT_TRUE(ms_parse_flops("312TFLOPS", &f, NULL));
    MS_ASSERT_REL(f, 312e12, 1e-12);
    guint64 b = 0;
    CU_ASSERT_TRUE(ms_parse_bytes("30MB", &b, NULL));
    CU_ASSERT_EQUAL(b, 30000000);
    CU_ASSERT_TRUE(ms_parse_bytes("64KiB", &b, NULL));
    CU_ASSERT_EQUAL(b, 65536);
    CU_ASSERT_TRUE(ms_parse_bytes("1G", &b, NULL));
    CU_ASSERT_EQUAL(b, 1073741824);
    CU_ASSERT_TRUE(ms_parse_bytes("8B", &b, NULL));
    CU_ASSERT_EQUAL(b, 8);
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_parse_bytes("1.5B", &b, &error));
    MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE, "whole number");
    CU_ASSERT_FALSE(ms_parse_bytes("2048TiB", &b, &error));
    MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE, "out of range");
    CU_ASSERT_FALSE(ms_parse_flops("312", &f, &error));
    MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_UNIT, "no unit");
}

static void
test_plain_numbers(void)
{
    double d = 0;
    guint64 u = 0;
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_parse_double("1.25", 0, 2, &d, NULL));
    CU_ASSERT_EQUAL(d, 1.25);
    CU_ASSERT_FALSE(ms_parse_double("1.25x", 0, 2, &d, &error));
    MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_SYNTAX, "not a number");
    CU_ASSERT_FALSE(ms_parse_double("3", 0, 2, &d, &error));
    MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE, "out of range");
    CU_ASSERT_TRUE(ms_parse_uint("42", 1, 100, &u, NULL));
    CU_ASSERT_EQUAL(u, 42);
    CU_ASSERT_FALSE(ms_parse_uint("-1", 0, 100, &u, &error));
    MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_SYNTAX, "non-negative integer");
    CU_ASSERT_FALSE(ms_parse_uint("99999999999999999999999", 0, 100, &u, &error));
    MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_SYNTAX, "non-negative integer");
    CU_ASSERT_FALSE(ms_parse_uint("101", 0, 100, &u, &error));
    MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE, "out of range");
    /* Digits only, up to the largest 64-bit value and not one more. */
    CU_ASSERT_TRUE(ms_parse_uint("0", 0, 1, &u, NULL));
    CU_ASSERT_EQUAL(u, 0);
    CU_ASSERT_TRUE(ms_parse_uint("18446744073709551615", 0, G_MAXUINT64, &u, NULL));
    CU_ASSERT_EQUAL(u, G_MAXUINT64);
    CU_ASSERT_TRUE(ms_parse_uint("007", 0, 10, &u, NULL));
    CU_ASSERT_EQUAL(u, 7);
    static const char *const bad[] = {
        "18446744073709551616", "", "+1", " 1", "1 ", "1x", "0x10", "1.0"};
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        CU_ASSERT_FALSE(ms_parse_uint(bad[i], 0, G_MAXUINT64, &u, &error));
        MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_SYNTAX, "non-negative integer");
    }
}

static void
test_format(void)
{
    char buf[32];
    CU_ASSERT_STRING_EQUAL(ms_format_bytes(512, buf, sizeof buf), "512 B");
    CU_ASSERT_STRING_EQUAL(ms_format_bytes(3 << 20, buf, sizeof buf), "3 MiB");
    CU_ASSERT_STRING_EQUAL(ms_format_bandwidth(25e9, buf, sizeof buf), "25 GB/s");
    CU_ASSERT_STRING_EQUAL(ms_format_time(1500000, buf, sizeof buf), "1.5 us");
}

/* Conversions that saturate instead of wrapping or invoking undefined behaviour. */
static void
test_saturate(void)
{
    CU_ASSERT_EQUAL(ms_u64_saturate(2.5), 3);
    CU_ASSERT_EQUAL(ms_u64_saturate(2.49), 2);
    CU_ASSERT_EQUAL(ms_u64_saturate(-1), 0);
    CU_ASSERT_EQUAL(ms_u64_saturate(NAN), 0);
    CU_ASSERT_EQUAL(ms_u64_saturate(INFINITY), G_MAXUINT64);
    CU_ASSERT_EQUAL(ms_u64_saturate(4.9e21), G_MAXUINT64);
    /* 2^64 is the first double a guint64 cannot hold; the one below it converts exactly. */
    CU_ASSERT_EQUAL(ms_u64_saturate(18446744073709551616.0), G_MAXUINT64);
    CU_ASSERT_EQUAL(ms_u64_saturate(18446744073709549568.0),
                    G_GUINT64_CONSTANT(18446744073709549568));
    CU_ASSERT_EQUAL(ms_u32_saturate(4294967295.4), G_MAXUINT32);
    CU_ASSERT_EQUAL(ms_u32_saturate(4294967296.0), G_MAXUINT32);
    CU_ASSERT_EQUAL(ms_u32_saturate(1e300), G_MAXUINT32);
    CU_ASSERT_EQUAL(ms_u32_saturate(7.0), 7);
    CU_ASSERT_EQUAL(ms_time_from_s(1e300), MS_TIME_NEVER - 1);
}

/* The raw parser ranges.h builds on: units applied, no range but finiteness. */
static void
test_unit_value(void)
{
    double v = 0;
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_parse_unit_value("2KiB", MS_UNIT_BYTES, &v, &error));
    CU_ASSERT_EQUAL(v, 2048);
    CU_ASSERT_TRUE(ms_parse_unit_value("-3us", MS_UNIT_TIME, &v, &error));
    CU_ASSERT_DOUBLE_EQUAL(v, -3e-6, 1e-20);
    CU_ASSERT_TRUE(ms_parse_unit_value("8Gbps", MS_UNIT_BANDWIDTH, &v, &error));
    CU_ASSERT_EQUAL(v, 1e9);
    CU_ASSERT_TRUE(ms_parse_unit_value("1e30PFLOPS", MS_UNIT_FLOPS, &v, &error));
    MS_ASSERT_REL(v, 1e45, 1e-15);
    CU_ASSERT_FALSE(ms_parse_unit_value("5", MS_UNIT_TIME, &v, &error));
    MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_UNIT, "time '5' has no unit");
    CU_ASSERT_FALSE(ms_parse_unit_value("infGBps", MS_UNIT_BANDWIDTH, &v, &error));
    MS_ASSERT_ERROR(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE, "not a finite number");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"bandwidth", test_bandwidth},
        {"bandwidth errors", test_bandwidth_errors},
        {"time", test_time},
        {"flops and bytes", test_flops_and_bytes},
        {"plain numbers", test_plain_numbers},
        {"format", test_format},
        {"saturating conversions", test_saturate},
        {"unit values without a range", test_unit_value},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"units", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
