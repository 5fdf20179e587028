/* Tests of the CSV reader every CSV input shares (sim/base/csv.h): plain and quoted fields, blanks,
 * line ends, the byte order mark, the width rule of rows, every syntax error with its column, and
 * fields written and read back. */
#include "ms_test.h"
#include "sim/base/csv.h"

/* The fields of line joined by '|' (an error's message after '!'). */
static char *
split(const char *line)
{
    g_autoptr(MsCsvFields) f = ms_csv_fields_new();
    GError *error = NULL;
    if (!ms_csv_fields_split(f, line, &error)) {
        char *msg = g_strconcat("!", error->message, NULL);
        CU_ASSERT_EQUAL(ms_csv_fields_count(f), 0);
        g_clear_error(&error);
        return msg;
    }
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < ms_csv_fields_count(f); i++) {
        g_string_append_printf(s, "%s%s", i ? "|" : "", ms_csv_fields_get(f, i));
    }
    return g_string_free(s, FALSE);
}

static void
test_split(void)
{
    static const struct {
        const char *line, *fields;
    } cases[] = {
        {"a,b,c", "a|b|c"},
        {" a , b,,c ", "a|b||c"},
        {"", ""},
        {",", "|"},
        {"a,b,\r", "a|b|"},
        {"a,b\r", "a|b"},
        {"\"a, b\",c", "a, b|c"},
        {"\"say \"\"hi\"\"\",x", "say \"hi\"|x"},
        {"  \" padded \"  ,\t1", " padded |1"},
        {"\"\",\"\"", "|"},
        {"\"a\r\nb\",c", "a\r\nb|c"},
        {"x\"y,z", "x\"y|z"}, /* a quote inside an unquoted field is kept as it is */
        {"1\t,\t2", "1|2"},
        {"\"a\"\r", "a"},
        {"\"a\" ,b", "a|b"},
        {"\"unterminated,x",
         "!unterminated quoted field (a field does not span lines) at column 1"},
        {"a,\"b\"c", "!text after a closing quote at column 6"},
        {"a, \"b\" c,d", "!text after a closing quote at column 8"},
        {"ok,\"", "!unterminated quoted field (a field does not span lines) at column 4"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *got = split(cases[i].line);
        if (strcmp(got, cases[i].fields) != 0) {
            fprintf(stderr, "\n  '%s': got '%s', want '%s'\n", cases[i].line, got, cases[i].fields);
            CU_FAIL("fields");
        }
    }
    GError *error = NULL;
    g_autoptr(MsCsvFields) f = ms_csv_fields_new();
    CU_ASSERT_FALSE(ms_csv_fields_split(f, "\"open", &error));
    MS_ASSERT_ERROR(error, MS_CSV_ERROR, MS_CSV_ERROR_SYNTAX, "unterminated");
    CU_ASSERT_TRUE(ms_csv_fields_split(f, "kind,\"time_us\"", &error));
    g_auto(GStrv) names = ms_csv_fields_dup(f);
    CU_ASSERT_EQUAL(g_strv_length(names), 2);
    CU_ASSERT_EQUAL(ms_csv_column(names, "time_us"), 1);
    CU_ASSERT_EQUAL(ms_csv_column(names, "kind"), 0);
    CU_ASSERT_EQUAL(ms_csv_column(names, "time"), -1);
    CU_ASSERT_EQUAL(ms_csv_fields_width(f), 2);
    CU_ASSERT_TRUE(ms_csv_fields_split(f, ",a,,b,, ,\"\"", NULL));
    CU_ASSERT_EQUAL(ms_csv_fields_count(f), 7);
    CU_ASSERT_EQUAL(ms_csv_fields_width(f), 4);
    CU_ASSERT_TRUE(ms_csv_fields_split(f, "", NULL));
    CU_ASSERT_EQUAL(ms_csv_fields_width(f), 0);
}

/* A row may have the header's width, or more with empty extra fields. */
static void
test_width(void)
{
    static const struct {
        const char *line;
        guint columns;
        const char *error;
    } cases[] = {
        {"a,b,c", 3, NULL},
        {"a,b,c,,", 3, NULL},
        {"a,b,c, ,\"\"", 3, NULL},
        {"a,b", 3, "2 fields, but the header names 3"},
        {"a,b,c,d", 3, "4 fields, but the header names 3"},
        {"a,b,c,,x", 3, "5 fields, but the header names 3"},
    };
    g_autoptr(MsCsvFields) f = ms_csv_fields_new();
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        GError *error = NULL;
        CU_ASSERT_TRUE_FATAL(ms_csv_fields_split(f, cases[i].line, NULL));
        gboolean ok = ms_csv_fields_check_width(f, cases[i].columns, &error);
        CU_ASSERT_EQUAL(ok, cases[i].error == NULL);
        if (cases[i].error) {
            MS_ASSERT_ERROR(error, MS_CSV_ERROR, MS_CSV_ERROR_WIDTH, cases[i].error);
        }
    }
}

static void
test_lines_and_bom(void)
{
    const char text[] = "\xEF\xBB\xBF"
                        "a,b\r\nc\n\nd";
    gsize len = sizeof text - 1;
    CU_ASSERT_EQUAL(ms_csv_bom_length(text, len), 3);
    CU_ASSERT_EQUAL(ms_csv_bom_length("abc", 3), 0);
    CU_ASSERT_EQUAL(ms_csv_bom_length("\xEF\xBB", 2), 0);
    gsize pos = ms_csv_bom_length(text, len);
    const char *want[] = {"a,b", "c", "", "d"};
    for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
        g_autofree char *line = ms_csv_next_line(text, len, &pos);
        CU_ASSERT_PTR_NOT_NULL_FATAL(line);
        CU_ASSERT_STRING_EQUAL(line, want[i]);
    }
    CU_ASSERT_PTR_NULL(ms_csv_next_line(text, len, &pos));
}

/* Whatever a field holds, written it reads back the same. */
static void
test_write_read_back(void)
{
    const char *fields[] = {"plain", "",      "a, b", "say \"hi\"", " padded ", "\"",
                            "x\ry",  "tab\t", "\t",   ",",          "a\"b"};
    GString *line = g_string_new(NULL);
    for (guint i = 0; i < G_N_ELEMENTS(fields); i++) {
        if (i) {
            g_string_append_c(line, ',');
        }
        ms_csv_append_field(line, fields[i]);
    }
    g_autoptr(MsCsvFields) f = ms_csv_fields_new();
    CU_ASSERT_TRUE_FATAL(ms_csv_fields_split(f, line->str, NULL));
    CU_ASSERT_EQUAL_FATAL(ms_csv_fields_count(f), G_N_ELEMENTS(fields));
    for (guint i = 0; i < G_N_ELEMENTS(fields); i++) {
        CU_ASSERT_STRING_EQUAL(ms_csv_fields_get(f, i), fields[i]);
    }
    /* Fields that need no quotes get none. */
    g_string_truncate(line, 0);
    ms_csv_append_field(line, "mlp_up_proj");
    CU_ASSERT_STRING_EQUAL(line->str, "mlp_up_proj");
    g_string_free(line, TRUE);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"fields: plain, quoted, blanks, errors with their column", test_split},
        {"rows: the header's width, or more with empty extra fields", test_width},
        {"lines: LF, CR LF, and the byte order mark", test_lines_and_bom},
        {"fields written read back the same", test_write_read_back},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"csv", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
