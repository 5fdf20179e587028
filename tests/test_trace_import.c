/* Tests of trace_import: each input format converted and read back, shape inference and
 * options, token joining, and every conversion error with its file:line. */
#include "ms_test.h"
#include "traces/trace_import.h"
#include "traces/trace_reader.h"

#include <glib/gstdio.h>

static char *
out_path(const char *name)
{
    return g_build_filename(ms_test_tmpdir(), name, NULL);
}

/* Imports text (as in.csv) and returns the reader of the result, or NULL with error. */
static MsTraceReader *
import(const char *text, MsTraceImportFormat from, const MsTraceImportOptions *opt,
       MsTraceFormat format, MsTraceHeader *header, GError **error)
{
    g_autofree char *in = ms_test_write_tmp("in.csv", text);
    g_autofree char *out = out_path("out.trace");
    g_remove(out);
    if (!ms_trace_import(in, from, opt, out, format, header, error)) {
        CU_ASSERT_FALSE(g_file_test(out, G_FILE_TEST_EXISTS)); /* no partial output */
        return NULL;
    }
    return ms_trace_reader_open(out, error);
}

static void
test_format_names(void)
{
    MsTraceImportFormat f;
    CU_ASSERT_TRUE(ms_trace_import_format_from_name("csv", &f));
    CU_ASSERT_EQUAL(f, MS_TRACE_IMPORT_CSV);
    CU_ASSERT_TRUE(ms_trace_import_format_from_name("jsonl", &f));
    CU_ASSERT_EQUAL(f, MS_TRACE_IMPORT_JSONL);
    CU_ASSERT_TRUE(ms_trace_import_format_from_name("counts-csv", &f));
    CU_ASSERT_EQUAL(f, MS_TRACE_IMPORT_COUNTS_CSV);
    CU_ASSERT_FALSE(ms_trace_import_format_from_name("tsv", &f));
}

static void
test_csv_token_ids(void)
{
    MsTraceImportOptions opt = {0};
    MsTraceHeader h;
    GError *error = NULL;
    g_autoptr(MsTraceReader) r =
        import("iteration,layer,rank,token,experts\n"
               "0,1,0,5,\"2 0\"\n"
               "0,0,1,6,\"[1, 2]\"\n"
               "0,0,0,5,3 1\n"
               "0,1,1,6,0;3\n"
               "2,0,0,1,3 2\n"
               "2,1,0,1,1 0\n",
               MS_TRACE_IMPORT_CSV, &opt, MS_TRACE_FORMAT_TEXT, &h, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(h.experts, 4);
    CU_ASSERT_EQUAL(h.layers, 2);
    CU_ASSERT_EQUAL(h.ranks, 2);
    CU_ASSERT_EQUAL(h.top_k, 2);
    CU_ASSERT_STRING_EQUAL(ms_trace_reader_header(r)->generator,
                           "moesim trace import --from csv in.csv");
    MsRouting *it = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(r, &it, &error));
    CU_ASSERT_EQUAL(ms_routing_n_tokens(it, 0), 1);
    CU_ASSERT_EQUAL(ms_routing_token_id(it, 0, 0), 5);
    const guint16 *e = ms_routing_token_experts(it, 0, 0, 1);
    CU_ASSERT_EQUAL(e[0], 2);
    CU_ASSERT_EQUAL(e[1], 0);
    e = ms_routing_token_experts(it, 1, 0, 0);
    CU_ASSERT_EQUAL(e[0], 1);
    CU_ASSERT_EQUAL(e[1], 2);
    ms_routing_free(it);
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(r, &it, &error));
    CU_ASSERT_EQUAL(ms_routing_iteration(it), 2);
    CU_ASSERT_EQUAL(ms_routing_n_tokens(it, 1), 0);
    ms_routing_free(it);
    CU_ASSERT_FALSE(ms_trace_reader_next_iteration(r, &it, &error));
    CU_ASSERT_PTR_NULL(error);
}

static void
test_csv_positional(void)
{
    /* No token ids: the n-th row of a (rank, layer) is the rank's n-th token. */
    MsTraceImportOptions opt = {.experts = 8, .ranks = 3};
    GError *error = NULL;
    MsTraceHeader h;
    g_autoptr(MsTraceReader) r =
        import("layer,rank,expert0\n"
               "0,1,4\n0,1,5\n1,1,6\n1,1,7\n",
               MS_TRACE_IMPORT_CSV, &opt, MS_TRACE_FORMAT_BINARY, &h, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(h.experts, 8);
    CU_ASSERT_EQUAL(h.ranks, 3);
    CU_ASSERT_EQUAL(h.top_k, 1);
    CU_ASSERT_EQUAL(ms_trace_reader_format(r), MS_TRACE_FORMAT_BINARY);
    MsRouting *it = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(r, &it, &error));
    CU_ASSERT_EQUAL(ms_routing_n_tokens(it, 1), 2);
    CU_ASSERT_EQUAL(ms_routing_token_experts(it, 1, 0, 0)[0], 4);
    CU_ASSERT_EQUAL(ms_routing_token_experts(it, 1, 0, 1)[0], 6);
    CU_ASSERT_EQUAL(ms_routing_token_experts(it, 1, 1, 1)[0], 7);
    ms_routing_free(it);
}

static void
test_jsonl(void)
{
    MsTraceImportOptions opt = {.experts = 6, .layers = 3};
    GError *error = NULL;
    MsTraceHeader h;
    g_autoptr(MsTraceReader) r =
        import("{\"layer\": 0, \"experts\": [3, 1], \"token\": 9}\n"
               "{\"layer\": 1, \"experts\": [2, 0], \"token\": 9}\n"
               "{\"layer\": 2, \"experts\": [5, 0], \"token\": 9}\n",
               MS_TRACE_IMPORT_JSONL, &opt, MS_TRACE_FORMAT_TEXT, &h, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(h.experts, 6);
    CU_ASSERT_EQUAL(h.layers, 3);
    CU_ASSERT_EQUAL(h.ranks, 1);
    MsRouting *it = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(r, &it, &error));
    CU_ASSERT_EQUAL(ms_routing_token_id(it, 0, 0), 9);
    CU_ASSERT_EQUAL(ms_routing_token_experts(it, 0, 0, 2)[0], 5);
    ms_routing_free(it);
}

static void
test_counts_csv(void)
{
    MsTraceImportOptions opt = {.top_k = 2};
    GError *error = NULL;
    MsTraceHeader h;
    g_autoptr(MsTraceReader) r =
        import("iteration,layer,rank,e0,e1,e2,e3\n"
               "0,0,0,1,1,1,1\n0,1,0,2,0,2,0\n"
               "0,0,1,0,0,2,0\n0,1,1,0,1,0,1\n"
               "3,0,0,0,2,0,0\n3,1,0,1,1,0,0\n",
               MS_TRACE_IMPORT_COUNTS_CSV, &opt, MS_TRACE_FORMAT_TEXT, &h, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(h.experts, 4);
    CU_ASSERT_EQUAL(h.ranks, 2);
    CU_ASSERT_EQUAL(h.top_k, 2);
    MsRouting *it = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(r, &it, &error));
    CU_ASSERT_FALSE(ms_routing_has_paths(it));
    CU_ASSERT_EQUAL(ms_routing_rank_tokens(it, 0), 2);
    CU_ASSERT_EQUAL(ms_routing_rank_tokens(it, 1), 1);
    CU_ASSERT_EQUAL(ms_routing_count(it, 1, 1, 3), 1);
    ms_routing_free(it);
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(r, &it, &error));
    CU_ASSERT_EQUAL(ms_routing_iteration(it), 3);
    CU_ASSERT_EQUAL(ms_routing_rank_tokens(it, 0), 1);
    ms_routing_free(it);
}

static void
test_import_errors(void)
{
    /* Not static: the error domains are quarks, known only at run time. */
    const struct {
        const char *text;
        MsTraceImportFormat from;
        MsTraceImportOptions opt;
        GQuark domain;
        int code;
        const char *needle;
    } cases[] = {
        {"iteration,layer,experts\n1,0,1\n0,0,1\n",
         MS_TRACE_IMPORT_CSV,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_ORDER,
         "in.csv:3: iteration 0 follows iteration 1: iterations must not decrease"},
        {"layer,experts\n0,1 2\n1,3\n",
         MS_TRACE_IMPORT_CSV,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_RANGE,
         "in.csv:3: row has 1 expert ids, expected top_k = 2 (from the first row)"},
        {"layer,experts\n0,1 2\n",
         MS_TRACE_IMPORT_CSV,
         {.top_k = 3},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_RANGE,
         "in.csv:2: row has 2 expert ids, expected top_k = 3 (--top-k)"},
        {"layer,rank,e0,e1\n0,0,1,1\n",
         MS_TRACE_IMPORT_COUNTS_CSV,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_MISSING,
         "in.csv: top_k cannot be inferred from expert counts: give --top-k"},
        {"layer,rank,e0,e1\n0,0,1,1\n",
         MS_TRACE_IMPORT_COUNTS_CSV,
         {.top_k = 1, .experts = 3},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_RANGE,
         "in.csv: --experts 3 but the header names 2 expert columns"},
        {"layer,experts\n",
         MS_TRACE_IMPORT_CSV,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_MISSING,
         "in.csv: no data rows to infer the trace shape from"},
        {"layer,token,experts\n0,1,2\n0,2,3\n1,1,0\n",
         MS_TRACE_IMPORT_CSV,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_TOKEN,
         "in.csv:3: token 2 of rank 0 has no row for layer 1"},
        {"layer,token,experts\n0,1,2\n1,1,0\n0,1,3\n",
         MS_TRACE_IMPORT_CSV,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_TOKEN,
         "in.csv:4: token 1 of rank 0 has a second row for layer 0"},
        {"layer,token,experts\n0,1,2\n1,1,0\n1,1,3\n",
         MS_TRACE_IMPORT_CSV,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_TOKEN,
         "in.csv:4: token 1 of rank 0 has a second row for layer 1"},
        {"layer,experts\n0,1 2\n0,4 2\n",
         MS_TRACE_IMPORT_CSV,
         {.experts = 4},
         MS_TRACE_ERROR,
         MS_TRACE_ERROR_RANGE,
         "in.csv:3: layer 0: expert 4 out of range (experts = 4)"},
        {"layer,experts\n0,1 1\n",
         MS_TRACE_IMPORT_CSV,
         {0},
         MS_TRACE_ERROR,
         MS_TRACE_ERROR_PATH,
         "in.csv:2: layer 0: expert 1 chosen twice in one token's top_k"},
        {"layer,experts\n0,1\n1,1\n2,1\n",
         MS_TRACE_IMPORT_CSV,
         {.layers = 2},
         MS_TRACE_ERROR,
         MS_TRACE_ERROR_RANGE,
         "in.csv:4: layer 2 out of range (layers = 2)"},
        {"layer,rank,experts\n0,3,1\n",
         MS_TRACE_IMPORT_CSV,
         {.ranks = 2},
         MS_TRACE_ERROR,
         MS_TRACE_ERROR_RANGE,
         "in.csv:2: rank 3 out of range (ranks = 2)"},
        {"layer,experts\n0,4294967296\n",
         MS_TRACE_IMPORT_CSV,
         {.experts = 4},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_RANGE,
         "in.csv:2: expert id 4294967296 is too large"},
        {"layer,experts\n0,70000\n",
         MS_TRACE_IMPORT_CSV,
         {0},
         MS_TRACE_ERROR,
         MS_TRACE_ERROR_LIMIT,
         "in.csv: experts = 70001 is outside 1..65536"},
        {"layer,experts\n0,18446744073709551615\n",
         MS_TRACE_IMPORT_CSV,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_RANGE,
         "in.csv: expert id 18446744073709551615 is too large"},
        {"layer,rank,e0,e1\n0,0,1,1\n0,0,1,1\n",
         MS_TRACE_IMPORT_COUNTS_CSV,
         {.top_k = 1},
         MS_TRACE_ERROR,
         MS_TRACE_ERROR_DUPLICATE,
         "in.csv:3: duplicate count record for iteration 0 layer 0 rank 0 expert 0"},
        {"layer,rank,e0,e1\n0,0,1,1\n1,0,1,2\n",
         MS_TRACE_IMPORT_COUNTS_CSV,
         {.top_k = 1},
         MS_TRACE_ERROR,
         MS_TRACE_ERROR_INCONSISTENT,
         "in.csv:3: iteration 0 rank 0: 3 token-expert assignments at layer 1 but 2 at layer 0"},
        {"layer,rank,e0\n0,0,4294967296\n",
         MS_TRACE_IMPORT_COUNTS_CSV,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_RANGE,
         "in.csv:2: 4294967296 tokens for expert 0 is too large"},
        {"layer,rank,e0\n0,0,1\n",
         MS_TRACE_IMPORT_COUNTS_CSV,
         {.top_k = 2},
         MS_TRACE_ERROR,
         MS_TRACE_ERROR_LIMIT,
         "in.csv: top_k = 2 is outside 1..1"},
        {"iteration,layer,rank,e0\n4294967295,0,0,1\n",
         MS_TRACE_IMPORT_COUNTS_CSV,
         {.top_k = 1},
         0,
         0,
         NULL},
        {"layer,experts\nx,1\n",
         MS_TRACE_IMPORT_CSV,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.csv:2: column 'layer': 'x' is not"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        GError *error = NULL;
        MsTraceHeader h;
        g_autoptr(MsTraceReader) r =
            import(cases[i].text, cases[i].from, &cases[i].opt, MS_TRACE_FORMAT_TEXT, &h, &error);
        if (cases[i].needle == NULL) {
            CU_ASSERT_PTR_NOT_NULL(r); /* the largest iteration is accepted */
            CU_ASSERT_PTR_NULL(error);
            continue;
        }
        CU_ASSERT_PTR_NULL(r);
        MS_ASSERT_ERROR(error, cases[i].domain, cases[i].code, cases[i].needle);
    }
}

static void
test_io_errors(void)
{
    MsTraceImportOptions opt = {0};
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_trace_import("/nonexistent/in.csv", MS_TRACE_IMPORT_CSV, &opt,
                                    "/nonexistent/out.trace", MS_TRACE_FORMAT_TEXT, NULL, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_IO,
                    "/nonexistent/in.csv: cannot open: No such file");
    g_autofree char *in = ms_test_write_tmp("ok.csv", "layer,experts\n0,1\n");
    CU_ASSERT_FALSE(ms_trace_import(in, MS_TRACE_IMPORT_CSV, &opt, "/nonexistent/out.trace",
                                    MS_TRACE_FORMAT_TEXT, NULL, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_IO,
                    "/nonexistent/out.trace: cannot write");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"format names", test_format_names},
        {"csv with token ids", test_csv_token_ids},
        {"csv joined by position", test_csv_positional},
        {"jsonl", test_jsonl},
        {"counts-csv", test_counts_csv},
        {"conversion errors", test_import_errors},
        {"io errors", test_io_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"trace_import", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
