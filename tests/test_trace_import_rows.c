/* Tests of trace_import_rows: CSV header mapping, quoting and id lists, JSON Lines rows, and
 * every row-level error with its file:line. */
#include "ms_test.h"
#include "traces/trace_import_rows.h"

static MsTraceImportRows *
open_rows(const char *text, MsTraceImportFormat format, GError **error)
{
    g_autofree char *path = ms_test_write_tmp("in.txt", text);
    return ms_trace_import_rows_open(path, format, NULL, error);
}

static void
test_csv(void)
{
    GError *error = NULL;
    g_autoptr(MsTraceImportRows) r =
        open_rows("# a comment\n Layer , TOKEN,experts,rank\n"
                  "0,7,\"3 1\",2\n\n1, 8 ,\"[4, 0]\", 0\n2,9,5;6,1\r\n3,10,\"a\"\"b\",1\n",
                  MS_TRACE_IMPORT_CSV, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_TRUE(ms_trace_import_rows_has_token_ids(r));
    CU_ASSERT_EQUAL(ms_trace_import_rows_expert_columns(r), 0);
    MsTraceImportRow row;
    CU_ASSERT_EQUAL_FATAL(ms_trace_import_rows_next(r, &row, &error), MS_TRACE_READ_RECORD);
    CU_ASSERT_EQUAL(row.line, 3);
    CU_ASSERT_EQUAL(row.iteration, 0);
    CU_ASSERT_EQUAL(row.layer, 0);
    CU_ASSERT_EQUAL(row.token, 7);
    CU_ASSERT_EQUAL(row.rank, 2);
    CU_ASSERT_EQUAL_FATAL(row.n_values, 2);
    CU_ASSERT_EQUAL(row.values[0], 3);
    CU_ASSERT_EQUAL(row.values[1], 1);
    CU_ASSERT_EQUAL_FATAL(ms_trace_import_rows_next(r, &row, &error), MS_TRACE_READ_RECORD);
    CU_ASSERT_EQUAL(row.line, 5);
    CU_ASSERT_EQUAL(row.token, 8);
    CU_ASSERT_EQUAL(row.values[0], 4);
    CU_ASSERT_EQUAL(row.values[1], 0);
    CU_ASSERT_EQUAL_FATAL(ms_trace_import_rows_next(r, &row, &error), MS_TRACE_READ_RECORD);
    CU_ASSERT_EQUAL(row.n_values, 2);
    CU_ASSERT_EQUAL(row.values[1], 6);
    /* A quoted quote inside the list is not a number. */
    CU_ASSERT_EQUAL(ms_trace_import_rows_next(r, &row, &error), MS_TRACE_READ_ERROR);
    MS_ASSERT_ERROR(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_SYNTAX,
                    "in.txt:7: column 'experts': 'a\"b' is not a non-negative integer");
}

static void
test_csv_columns(void)
{
    GError *error = NULL;
    g_autoptr(MsTraceImportRows) r =
        open_rows("layer,expert0,expert1\n1,5,3\n", MS_TRACE_IMPORT_CSV, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_FALSE(ms_trace_import_rows_has_token_ids(r));
    MsTraceImportRow row;
    CU_ASSERT_EQUAL_FATAL(ms_trace_import_rows_next(r, &row, &error), MS_TRACE_READ_RECORD);
    CU_ASSERT_EQUAL(row.rank, 0);
    CU_ASSERT_EQUAL(row.n_values, 2);
    CU_ASSERT_EQUAL(row.values[0], 5);
    CU_ASSERT_EQUAL(ms_trace_import_rows_next(r, &row, &error), MS_TRACE_READ_END);
    g_autoptr(MsTraceImportRows) c =
        open_rows("rank,e0,layer,e1,e2\n1,10,0,20,30\n", MS_TRACE_IMPORT_COUNTS_CSV, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(ms_trace_import_rows_expert_columns(c), 3);
    CU_ASSERT_EQUAL_FATAL(ms_trace_import_rows_next(c, &row, &error), MS_TRACE_READ_RECORD);
    CU_ASSERT_EQUAL(row.rank, 1);
    CU_ASSERT_EQUAL(row.layer, 0);
    CU_ASSERT_EQUAL(row.n_values, 3);
    CU_ASSERT_EQUAL(row.values[2], 30);
}

/* A spreadsheet's CSV (sim/base/csv.h): a byte order mark, CR LF, rows padded with empty fields;
 * a JSON Lines file with a byte order mark. */
static void
test_csv_saved_by_a_spreadsheet(void)
{
    GError *error = NULL;
    g_autoptr(MsTraceImportRows) r =
        open_rows("\xEF\xBB\xBFlayer,\"experts\",,\r\n0,\"3, 1\",,\r\n1,2 0\r\n",
                  MS_TRACE_IMPORT_CSV, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    MsTraceImportRow row;
    CU_ASSERT_EQUAL_FATAL(ms_trace_import_rows_next(r, &row, &error), MS_TRACE_READ_RECORD);
    CU_ASSERT_EQUAL(row.layer, 0);
    CU_ASSERT_EQUAL_FATAL(row.n_values, 2);
    CU_ASSERT_EQUAL(row.values[0], 3);
    CU_ASSERT_EQUAL_FATAL(ms_trace_import_rows_next(r, &row, &error), MS_TRACE_READ_RECORD);
    CU_ASSERT_EQUAL(row.layer, 1);
    CU_ASSERT_EQUAL(row.values[1], 0);
    CU_ASSERT_EQUAL(ms_trace_import_rows_next(r, &row, &error), MS_TRACE_READ_END);
    g_autoptr(MsTraceImportRows) j = open_rows("\xEF\xBB\xBF{\"layer\": 0, \"experts\": [1]}\r\n",
                                               MS_TRACE_IMPORT_JSONL, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    CU_ASSERT_EQUAL_FATAL(ms_trace_import_rows_next(j, &row, &error), MS_TRACE_READ_RECORD);
    CU_ASSERT_EQUAL(row.values[0], 1);
    CU_ASSERT_PTR_NULL(error);
}

static void
test_jsonl(void)
{
    GError *error = NULL;
    g_autoptr(MsTraceImportRows) r =
        open_rows("{\"layer\": 1, \"experts\": [2, 0], \"token\": 4}\n\n"
                  "{\"token\": 5, \"experts\": [1], \"layer\": 0}\n",
                  MS_TRACE_IMPORT_JSONL, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    MsTraceImportRow row;
    CU_ASSERT_EQUAL_FATAL(ms_trace_import_rows_next(r, &row, &error), MS_TRACE_READ_RECORD);
    CU_ASSERT_TRUE(ms_trace_import_rows_has_token_ids(r));
    CU_ASSERT_EQUAL(row.layer, 1);
    CU_ASSERT_EQUAL(row.token, 4);
    CU_ASSERT_EQUAL(row.n_values, 2);
    CU_ASSERT_EQUAL_FATAL(ms_trace_import_rows_next(r, &row, &error), MS_TRACE_READ_RECORD);
    CU_ASSERT_EQUAL(row.line, 3);
    CU_ASSERT_EQUAL(row.n_values, 1);
    CU_ASSERT_EQUAL(ms_trace_import_rows_next(r, &row, &error), MS_TRACE_READ_END);
    CU_ASSERT_PTR_NULL(error);
}

/* An input, its format, and the error code and message text it must give. */
typedef struct {
    const char *text;
    MsTraceImportFormat format;
    int code;
    const char *needle;
} ErrorCase;

static void
test_open_errors(void)
{
    static const ErrorCase cases[] = {
        {"", MS_TRACE_IMPORT_CSV, MS_TRACE_IMPORT_ERROR_COLUMNS,
         "in.txt:1: no header row (the file is empty)"},
        {"# only\n# comments\n", MS_TRACE_IMPORT_CSV, MS_TRACE_IMPORT_ERROR_COLUMNS,
         "in.txt:2: no header row"},
        {"layer,experts,flavour\n", MS_TRACE_IMPORT_CSV, MS_TRACE_IMPORT_ERROR_COLUMNS,
         "in.txt:1: unknown column 'flavour' (known: iteration, layer, rank, token, and either "
         "experts or expert0, expert1, ...)"},
        {"layer,experts,layer\n", MS_TRACE_IMPORT_CSV, MS_TRACE_IMPORT_ERROR_COLUMNS,
         "in.txt:1: column 'layer' given twice"},
        {"rank,experts\n", MS_TRACE_IMPORT_CSV, MS_TRACE_IMPORT_ERROR_COLUMNS,
         "in.txt:1: the header row lacks a layer column"},
        {"layer,rank\n", MS_TRACE_IMPORT_CSV, MS_TRACE_IMPORT_ERROR_COLUMNS,
         "the header row lacks a experts column"},
        {"layer,experts,expert0\n", MS_TRACE_IMPORT_CSV, MS_TRACE_IMPORT_ERROR_COLUMNS,
         "either as one 'experts' list column or as expert0, expert1, ... columns, not both"},
        {"layer,e0\n", MS_TRACE_IMPORT_COUNTS_CSV, MS_TRACE_IMPORT_ERROR_COLUMNS,
         "lacks a rank column"},
        {"layer,rank\n", MS_TRACE_IMPORT_COUNTS_CSV, MS_TRACE_IMPORT_ERROR_COLUMNS,
         "lacks a expert count column"},
        {"layer,\"experts\n", MS_TRACE_IMPORT_CSV, MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:1: unterminated quoted field"},
        {"layer,\"experts\" x\n", MS_TRACE_IMPORT_CSV, MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:1: text after a closing quote"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        GError *error = NULL;
        CU_ASSERT_PTR_NULL(open_rows(cases[i].text, cases[i].format, &error));
        MS_ASSERT_ERROR(error, MS_TRACE_IMPORT_ERROR, cases[i].code, cases[i].needle);
    }
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(
        ms_trace_import_rows_open("/nonexistent/in.csv", MS_TRACE_IMPORT_CSV, NULL, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_IO,
                    "/nonexistent/in.csv: cannot open: No such file");
}

static void
test_row_errors(void)
{
    static const ErrorCase cases[] = {
        {"layer,experts\n0,1 2,3\n", MS_TRACE_IMPORT_CSV, MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:2: 3 fields, but the header names 2"},
        {"layer,experts\n0,\"1 2\" x\n", MS_TRACE_IMPORT_CSV, MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:2: text after a closing quote at column 9"},
        {"layer,experts\nzero,1 2\n", MS_TRACE_IMPORT_CSV, MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:2: column 'layer': 'zero' is not a non-negative integer"},
        {"layer,experts\n-1,1 2\n", MS_TRACE_IMPORT_CSV, MS_TRACE_IMPORT_ERROR_SYNTAX,
         "column 'layer': '-1' is not"},
        {"layer,experts\n,1 2\n", MS_TRACE_IMPORT_CSV, MS_TRACE_IMPORT_ERROR_SYNTAX,
         "column 'layer': '' is not"},
        {"layer,experts\n4294967296,1\n", MS_TRACE_IMPORT_CSV, MS_TRACE_IMPORT_ERROR_RANGE,
         "in.txt:2: column 'layer': 4294967296 is too large (at most 4294967295)"},
        {"iteration,layer,experts\n4294967296,0,1\n", MS_TRACE_IMPORT_CSV,
         MS_TRACE_IMPORT_ERROR_RANGE, "column 'iteration': 4294967296 is too large"},
        {"layer,experts\n0,[ ]\n", MS_TRACE_IMPORT_CSV, MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:2: column 'experts' holds no expert id"},
        {"layer,experts\n0,1 99999999999999999999\n", MS_TRACE_IMPORT_CSV,
         MS_TRACE_IMPORT_ERROR_RANGE, "column 'experts': 99999999999999999999 is too large"},
        {"layer,expert_a,expert_b\n0,1,x\n", MS_TRACE_IMPORT_CSV, MS_TRACE_IMPORT_ERROR_SYNTAX,
         "column 'expert_b': 'x' is not"},
        {"layer,rank,e0\n0,0,1.5\n", MS_TRACE_IMPORT_COUNTS_CSV, MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:2: column 'e0': '1.5' is not a non-negative integer"},
        {"{\"layer\": 0, \"experts\": [1]\n", MS_TRACE_IMPORT_JSONL, MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:1: bad JSON:"},
        {"[1, 2]\n", MS_TRACE_IMPORT_JSONL, MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:1: a line must hold one JSON object"},
        {"{\"layer\": 0, \"experts\": [1], \"gate\": 0.5}\n", MS_TRACE_IMPORT_JSONL,
         MS_TRACE_IMPORT_ERROR_COLUMNS,
         "in.txt:1: unknown field 'gate' (known: iteration, layer, rank, token, experts)"},
        {"{\"Layer\": 0, \"experts\": [1]}\n", MS_TRACE_IMPORT_JSONL, MS_TRACE_IMPORT_ERROR_COLUMNS,
         "unknown field 'Layer'"},
        {"{\"experts\": [1]}\n", MS_TRACE_IMPORT_JSONL, MS_TRACE_IMPORT_ERROR_COLUMNS,
         "in.txt:1: missing field 'layer'"},
        {"{\"layer\": 0}\n", MS_TRACE_IMPORT_JSONL, MS_TRACE_IMPORT_ERROR_COLUMNS,
         "missing field 'experts'"},
        {"{\"layer\": 0, \"experts\": [1], \"token\": 1}\n{\"layer\": 1, \"experts\": [1]}\n",
         MS_TRACE_IMPORT_JSONL, MS_TRACE_IMPORT_ERROR_COLUMNS,
         "in.txt:2: field 'token' is absent here but present on line 1 (give it on every line "
         "or on none)"},
        {"{\"layer\": 0, \"experts\": [1]}\n{\"layer\": 1, \"rank\": 0, \"experts\": [1]}\n",
         MS_TRACE_IMPORT_JSONL, MS_TRACE_IMPORT_ERROR_COLUMNS,
         "in.txt:2: field 'rank' is present here but absent on line 1"},
        {"{\"layer\": -1, \"experts\": [1]}\n", MS_TRACE_IMPORT_JSONL, MS_TRACE_IMPORT_ERROR_SYNTAX,
         "field 'layer' is not a non-negative integer"},
        {"{\"layer\": 1.0, \"experts\": [1]}\n", MS_TRACE_IMPORT_JSONL,
         MS_TRACE_IMPORT_ERROR_SYNTAX, "field 'layer' is not a non-negative integer"},
        {"{\"layer\": \"1\", \"experts\": [1]}\n", MS_TRACE_IMPORT_JSONL,
         MS_TRACE_IMPORT_ERROR_SYNTAX, "field 'layer' is not a non-negative integer"},
        {"{\"layer\": 4294967296, \"experts\": [1]}\n", MS_TRACE_IMPORT_JSONL,
         MS_TRACE_IMPORT_ERROR_RANGE, "field 'layer': 4294967296 is too large"},
        {"{\"layer\": 0, \"experts\": []}\n", MS_TRACE_IMPORT_JSONL, MS_TRACE_IMPORT_ERROR_SYNTAX,
         "field 'experts' must be a non-empty list of expert ids"},
        {"{\"layer\": 0, \"experts\": 3}\n", MS_TRACE_IMPORT_JSONL, MS_TRACE_IMPORT_ERROR_SYNTAX,
         "field 'experts' must be a non-empty list"},
        {"{\"layer\": 0, \"experts\": [1, \"x\"]}\n", MS_TRACE_IMPORT_JSONL,
         MS_TRACE_IMPORT_ERROR_SYNTAX, "field 'experts' is not a non-negative integer"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        GError *error = NULL;
        g_autoptr(MsTraceImportRows) r = open_rows(cases[i].text, cases[i].format, &error);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        MsTraceImportRow row;
        MsTraceRead got;
        while ((got = ms_trace_import_rows_next(r, &row, &error)) == MS_TRACE_READ_RECORD) {
        }
        CU_ASSERT_EQUAL(got, MS_TRACE_READ_ERROR);
        MS_ASSERT_ERROR(error, MS_TRACE_IMPORT_ERROR, cases[i].code, cases[i].needle);
    }
}

static void
test_long_line(void)
{
    g_autofree char *junk = g_strnfill((1u << 20) + 10, '1');
    g_autofree char *text = g_strconcat("layer,experts\n0,", junk, "\n", NULL);
    GError *error = NULL;
    g_autoptr(MsTraceImportRows) r = open_rows(text, MS_TRACE_IMPORT_CSV, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    MsTraceImportRow row;
    CU_ASSERT_EQUAL(ms_trace_import_rows_next(r, &row, &error), MS_TRACE_READ_ERROR);
    MS_ASSERT_ERROR(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_SYNTAX,
                    "in.txt:2: line longer than 1048576 bytes");
}

/* A folder is refused when opened; a read that fails is reported with its line. Linux's
 * /proc/self/mem is a regular file whose first page cannot be read (EIO). */
static void
test_read_error(void)
{
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(
        ms_trace_import_rows_open(ms_test_tmpdir(), MS_TRACE_IMPORT_JSONL, NULL, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_IO,
                    ": not a regular file (a folder)");
    g_autoptr(MsTraceImportRows) r =
        ms_trace_import_rows_open("/proc/self/mem", MS_TRACE_IMPORT_JSONL, NULL, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    MsTraceImportRow row;
    CU_ASSERT_EQUAL(ms_trace_import_rows_next(r, &row, &error), MS_TRACE_READ_ERROR);
    MS_ASSERT_ERROR(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_IO, ":1: read error:");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"CSV rows", test_csv},
        {"CSV column forms", test_csv_columns},
        {"CSV saved by a spreadsheet: byte order mark, CR LF, padding",
         test_csv_saved_by_a_spreadsheet},
        {"JSON Lines rows", test_jsonl},
        {"open errors", test_open_errors},
        {"row errors", test_row_errors},
        {"long line", test_long_line},
        {"read error", test_read_error},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"trace_import_rows", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
