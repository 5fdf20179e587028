/* Tests of bound: percentages read into fractions, and every refused text (a bare number among
 * them) with its code. */
#include "ms_test.h"
#include "validate/bound.h"

static void
test_percent(void)
{
    double f = -1;
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_bound_parse_percent("2%", &f, &error));
    CU_ASSERT_DOUBLE_EQUAL(f, 0.02, 1e-15);
    CU_ASSERT_TRUE(ms_bound_parse_percent(" 0.5 % ", &f, &error));
    CU_ASSERT_DOUBLE_EQUAL(f, 0.005, 1e-15);
    CU_ASSERT_TRUE(ms_bound_parse_percent("0%", &f, &error));
    CU_ASSERT_EQUAL(f, 0);
    CU_ASSERT_TRUE(ms_bound_parse_percent("1e6%", &f, &error));
    CU_ASSERT_DOUBLE_EQUAL(f, 1e4, 1e-9);
    g_assert_no_error(error);
}

static void
refused(const char *text, gint code, const char *needle)
{
    double f = 7;
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_bound_parse_percent(text, &f, &error));
    MS_ASSERT_ERROR(error, MS_BOUND_ERROR, code, needle);
    CU_ASSERT_EQUAL(f, 7);
}

static void
test_refused(void)
{
    refused("two", MS_BOUND_ERROR_NUMBER, "not a number or percentage");
    refused("%", MS_BOUND_ERROR_NUMBER, "not a number");
    refused("", MS_BOUND_ERROR_NUMBER, "not a number");
    refused("5", MS_BOUND_ERROR_UNIT, "no '%': a bound is a percentage, e.g. 5%");
    refused("0.02", MS_BOUND_ERROR_UNIT, "e.g. 0.02%");
    refused("-1%", MS_BOUND_ERROR_RANGE, "out of range (0% to 1e+06%)");
    refused("2e6%", MS_BOUND_ERROR_RANGE, "out of range");
    refused("nan%", MS_BOUND_ERROR_NUMBER, "not a number");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"percentages", test_percent},
        {"refused bounds", test_refused},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"bound", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
