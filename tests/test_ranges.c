/* Tests of ranges: every unit (booleans and choices too) parsed and checked at and just past both
 * bounds, the messages and formats, the exact text the walk of the tables writes, and lookups. */
#include "ms_test.h"
#include "sim/base/ranges.h"
#include "sim/base/units.h"

static const char *const colours[] = {"red", "green", "blue", NULL};

static const MsRange table[] = {
    {"[a]", "count", MS_RANGE_COUNT, 1, 64, "r"},
    {"[a]", "ratio", MS_RANGE_NUMBER, 0.01, 1.5, "r"},
    {"[a]", "size", MS_RANGE_BYTES, 1, 1125899906842624.0, "r"},
    {"[b]", "latency", MS_RANGE_TIME, 0, 1, "r"},
    {"[b]", "bandwidth", MS_RANGE_BANDWIDTH, 1e6, 1e15, "r"},
    {"[b]", "peak", MS_RANGE_FLOPS, 1e9, 1e18, "r"},
    {"[c]", "on", MS_RANGE_BOOLEAN, 0, 1, "r"},
    {"[c]", "colour", MS_RANGE_CHOICE, 0, 2, "r", colours},
    {NULL},
};

static void
test_parse(void)
{
    static const struct {
        const char *key, *text;
        double value; /* NAN: refused */
        const char *needle;
    } cases[] = {
        {"count", "1", 1, NULL},
        {"count", "64", 64, NULL},
        {"count", "0", NAN, "'0' out of range (must be between 1 and 64)"},
        {"count", "65", NAN, "'65' out of range"},
        {"count", "-3", NAN, "'-3' out of range"},
        {"count", "2.5", NAN, "is not a non-negative integer"},
        {"count", "99999999999999999999999", NAN, "is not a non-negative integer"},
        {"ratio", "0.01", 0.01, NULL},
        {"ratio", "1e-15", NAN, "'1e-15' out of range (must be between 0.01 and 1.5)"},
        {"ratio", "nan", NAN, "is not a number"},
        {"size", "1024TiB", 1125899906842624.0, NULL},
        {"size", "1125899906842625B", NAN, "out of range (must be between 1 B and 1 PiB)"},
        {"size", "0.5KB", 500, NULL},
        {"size", "1.5B", NAN, "not a whole number of bytes"},
        {"size", "30", NAN, "has no unit"},
        {"latency", "1s", 1, NULL},
        {"latency", "0ps", 0, NULL},
        {"latency", "1.000001s", NAN, "out of range (must be between 0 s and 1 s)"},
        {"latency", "-1ns", NAN, "'-1ns' out of range"},
        {"bandwidth", "8Mbps", 1e6, NULL},
        {"bandwidth", "1000TBps", 1e15, NULL},
        {"bandwidth", "7.9Mbps", NAN, "out of range (must be between 1 MB/s and 1 PB/s)"},
        {"peak", "1GFLOPS", 1e9, NULL},
        {"peak", "1FLOPS", NAN, "(must be between 1 GFLOPS and 1 EFLOPS)"},
        {"on", "true", 1, NULL},
        {"on", "NO", 0, NULL},
        {"on", "1", 1, NULL},
        {"on", "0", 0, NULL},
        {"on", "2", NAN, "'2' is not a boolean (true/false)"},
        {"on", "", NAN, "'' is not a boolean"},
        {"colour", "red", 0, NULL},
        {"colour", "blue", 2, NULL},
        {"colour", "Blue", NAN, "'Blue' is not one of: red, green, blue"},
        {"colour", "1", NAN, "'1' is not one of"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        const MsRange *r = NULL;
        for (const MsRange *t = table; t->key; t++) {
            r = strcmp(t->key, cases[i].key) == 0 ? t : r;
        }
        double v = -42;
        GError *error = NULL;
        gboolean ok = ms_range_parse(r, cases[i].text, &v, &error);
        if (isnan(cases[i].value)) {
            CU_ASSERT_FALSE(ok);
            CU_ASSERT_EQUAL(v, -42);
            CU_ASSERT_PTR_NOT_NULL_FATAL(error);
            CU_ASSERT_EQUAL(error->domain, MS_UNITS_ERROR);
            if (strstr(error->message, cases[i].needle) == NULL) {
                fprintf(stderr, "\n  %s: '%s' lacks '%s'\n", cases[i].text, error->message,
                        cases[i].needle);
                CU_FAIL("message");
            }
            g_clear_error(&error);
        } else {
            if (!ok) {
                fprintf(stderr, "\n  %s refused: %s\n", cases[i].text, error->message);
            }
            CU_ASSERT_TRUE(ok);
            CU_ASSERT_DOUBLE_EQUAL(v, cases[i].value, 1e-9 * cases[i].value);
            CU_ASSERT_PTR_NULL(error);
        }
    }
}

/* The text the walk writes parses back to the very value, inside or just outside a bound. */
static void
test_text_round_trip(void)
{
    for (const MsRange *r = table; r->key; r++) {
        const double values[] = {r->min, r->max, nextafter(r->max, INFINITY), r->max + 1};
        for (guint i = 0; i < G_N_ELEMENTS(values); i++) {
            gboolean integral = r->unit == MS_RANGE_COUNT || r->unit == MS_RANGE_BYTES ||
                                r->unit == MS_RANGE_BOOLEAN || r->unit == MS_RANGE_CHOICE;
            if (integral && values[i] != floor(values[i])) {
                continue;
            }
            g_autofree char *text = ms_range_text(r, values[i]);
            double v = 0;
            GError *error = NULL;
            gboolean inside = values[i] <= r->max;
            CU_ASSERT_EQUAL(ms_range_parse(r, text, &v, &error), inside);
            if (inside) {
                CU_ASSERT_EQUAL(v, values[i]);
            }
            g_clear_error(&error);
        }
    }
}

static void
test_format(void)
{
    static const struct {
        guint row;
        double v;
        const char *text;
    } cases[] = {
        {0, 65536, "65536"},
        {1, 0.01, "0.01"},
        {2, 1125899906842624.0, "1 PiB"},
        {2, 1e6, "1 MB"},
        {2, 1, "1 B"},
        {2, 1536, "1.536 KB"},
        {3, 0, "0 s"},
        {3, 7e-7, "700 ns"},
        {3, 1, "1 s"},
        {4, 1e6, "1 MB/s"},
        {4, 3e11, "300 GB/s"},
        {5, 1e18, "1 EFLOPS"},
        {5, 312e12, "312 TFLOPS"},
        {6, 0, "false"},
        {6, 1, "true"},
        {6, 2, "(neither)"},
        {7, 1, "green"},
        {7, 3, "(none of these)"},
        {7, -1, "(none of these)"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *t = ms_range_format(&table[cases[i].row], cases[i].v);
        CU_ASSERT_STRING_EQUAL(t, cases[i].text);
    }
}

static void
test_find(void)
{
    CU_ASSERT_PTR_EQUAL(ms_range_find(table, "[b]", "peak"), &table[5]);
    CU_ASSERT_PTR_EQUAL(ms_range_find(table, "[a]", "count"), &table[0]);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"parse and check every unit", test_parse},
        {"walk text reads back exactly", test_text_round_trip},
        {"bounds in units", test_format},
        {"lookup", test_find},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"ranges", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
