/* Tests of ini: locations in messages, duplicates, typed getters, unknown keys. */
#include "ms_test.h"
#include "sim/base/ini.h"

static const char good[] = "# a comment\n"
                           "[gpu]\n"
                           "peak = 312TFLOPS\n"
                           "hbm = 2039GBps\n"
                           "name = A100 \\s80GB\n"
                           "\n"
                           "[net]\n"
                           "latency = 1.5us\n"
                           "count = 4\n"
                           "ratio = 0.5\n"
                           "enabled = true\n";

static void
test_getters(void)
{
    GError *error = NULL;
    g_autoptr(MsIni) ini = ms_ini_load_data(good, strlen(good), "t.ini", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ini);
    guint n = 0;
    const char *const *groups = ms_ini_groups(ini, &n);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_STRING_EQUAL(groups[0], "gpu");
    CU_ASSERT_STRING_EQUAL(groups[1], "net");
    CU_ASSERT_PTR_NULL(groups[2]);
    CU_ASSERT_EQUAL(ms_ini_line(ini, "gpu", "hbm"), 4);
    CU_ASSERT_EQUAL(ms_ini_line(ini, "net", NULL), 7);
    MsFlops f = 0;
    CU_ASSERT_TRUE(ms_ini_get_flops(ini, "gpu", "peak", &f, &error));
    MS_ASSERT_REL(f, 312e12, 1e-12);
    CU_ASSERT_STRING_EQUAL(ms_ini_get_string(ini, "gpu", "name", &error), "A100  80GB");
    MsTime t = 0;
    CU_ASSERT_TRUE(ms_ini_get_time(ini, "net", "latency", &t, &error));
    CU_ASSERT_EQUAL(t, 1500000);
    guint64 c = 0;
    CU_ASSERT_TRUE(ms_ini_get_uint(ini, "net", "count", 1, 64, &c, &error));
    CU_ASSERT_EQUAL(c, 4);
    double r = 0;
    CU_ASSERT_TRUE(ms_ini_get_double(ini, "net", "ratio", 0, 1, &r, &error));
    CU_ASSERT_EQUAL(r, 0.5);
    gboolean b = FALSE;
    CU_ASSERT_TRUE(ms_ini_get_bool(ini, "net", "enabled", &b, &error));
    CU_ASSERT_TRUE(b);
    guint64 dflt = 99;
    CU_ASSERT_TRUE(ms_ini_opt_uint(ini, "net", "absent", 0, 100, &dflt, &error));
    CU_ASSERT_EQUAL(dflt, 99);
    CU_ASSERT_PTR_NULL(error);
}

static void
test_value_errors(void)
{
    GError *error = NULL;
    g_autoptr(MsIni) ini = ms_ini_load_data(good, strlen(good), "t.ini", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ini);
    MsBandwidth bw;
    CU_ASSERT_FALSE(ms_ini_get_bandwidth(ini, "gpu", "peak", &bw, &error));
    MS_ASSERT_ERROR(error, MS_INI_ERROR, MS_INI_ERROR_VALUE, "t.ini:3: [gpu] peak: bandwidth");
    CU_ASSERT_FALSE(ms_ini_get_bandwidth(ini, "gpu", "missing", &bw, &error));
    MS_ASSERT_ERROR(error, MS_INI_ERROR, MS_INI_ERROR_MISSING, "t.ini:2: [gpu] missing:");
    guint64 c;
    CU_ASSERT_FALSE(ms_ini_get_uint(ini, "net", "count", 5, 8, &c, &error));
    MS_ASSERT_ERROR(error, MS_INI_ERROR, MS_INI_ERROR_VALUE,
                    "t.ini:9: [net] count: 4 out of range");
    gboolean b;
    CU_ASSERT_FALSE(ms_ini_get_bool(ini, "net", "ratio", &b, &error));
    MS_ASSERT_ERROR(error, MS_INI_ERROR, MS_INI_ERROR_VALUE, "not a boolean");
    static const char *const allowed[] = {"peak", "hbm", NULL};
    CU_ASSERT_FALSE(ms_ini_check_keys(ini, "gpu", allowed, &error));
    MS_ASSERT_ERROR(error, MS_INI_ERROR, MS_INI_ERROR_UNKNOWN_KEY, "t.ini:5: [gpu] name: unknown");
}

static void
test_structure_errors(void)
{
    static const struct {
        const char *text;
        int code;
        const char *needle;
    } cases[] = {
        {"[a]\nx = 1\nx = 2\n", MS_INI_ERROR_DUPLICATE, "f.ini:3: [a] key 'x' given twice"},
        {"[a]\n[b]\n[a]\n", MS_INI_ERROR_DUPLICATE, "f.ini:3: group [a] given twice"},
        {"x = 1\n", MS_INI_ERROR_PARSE, "f.ini:1: key 'x = 1' before the first [group]"},
        {"[a]\njunk\n", MS_INI_ERROR_PARSE, "f.ini:2: 'junk' is not a group header"},
        {"[a\n", MS_INI_ERROR_PARSE, "f.ini:1: malformed group header"},
        {"[a]\n= 3\n", MS_INI_ERROR_PARSE, "f.ini:2:"},
        {"[a]\nx = \xff\xfe\n", MS_INI_ERROR_PARSE, "f.ini:2: line is not valid UTF-8"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        GError *error = NULL;
        MsIni *ini = ms_ini_load_data(cases[i].text, strlen(cases[i].text), "f.ini", &error);
        CU_ASSERT_PTR_NULL(ini);
        MS_ASSERT_ERROR(error, MS_INI_ERROR, cases[i].code, cases[i].needle);
    }
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_ini_load_data("[a]\n\0x", 6, "bin", &error));
    MS_ASSERT_ERROR(error, MS_INI_ERROR, MS_INI_ERROR_PARSE, "NUL byte");
    CU_ASSERT_PTR_NULL(ms_ini_load_file("/nonexistent/x.ini", MS_INPUT_TOPOLOGY, &error));
    MS_ASSERT_ERROR(error, MS_INI_ERROR, MS_INI_ERROR_IO, "x.ini");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"typed getters", test_getters},
        {"value errors name file:line", test_value_errors},
        {"structure errors", test_structure_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"ini", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
