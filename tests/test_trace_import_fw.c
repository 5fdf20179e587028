/* Tests of the list formats (trace_import_fw, trace_import_list): the list literals frameworks
 * print, each framework's fixture in tests/data/import (the shapes of docs/trace-format.md's
 * recipes) converted and read back, renamed fields, ignored columns, and every error with its
 * file:line and field. */
#include "ms_test.h"
#include "traces/trace_import.h"
#include "traces/trace_import_list.h"
#include "traces/trace_reader.h"

#include <glib/gstdio.h>

/* --- list literals --- */

static void
expect_list(const char *text, guint depth, guint outer, guint inner, const double *values)
{
    MsImportList l;
    ms_import_list_init(&l);
    g_autofree char *why = NULL;
    gboolean ok = ms_import_list_parse(text, strlen(text), &l, &why);
    if (!ok) {
        fprintf(stderr, "\n  '%s': %s\n", text, why);
    }
    CU_ASSERT_TRUE_FATAL(ok);
    CU_ASSERT_EQUAL(l.depth, depth);
    CU_ASSERT_EQUAL(l.n_outer, outer);
    CU_ASSERT_EQUAL(l.n_inner, inner);
    guint n = depth == 2 ? outer * inner : outer;
    CU_ASSERT_EQUAL_FATAL(l.values->len, n);
    for (guint i = 0; i < n; i++) {
        CU_ASSERT_DOUBLE_EQUAL(g_array_index(l.values, double, i), values[i], 0);
    }
    ms_import_list_clear(&l);
}

static void
test_list_literals(void)
{
    static const double v4[] = {412, 388, 0, 224};
    expect_list("[412, 388, 0, 224]", 1, 4, 0, v4);
    expect_list("  [412,388,0,224]  ", 1, 4, 0, v4);
    expect_list("(412, 388, 0, 224)", 1, 4, 0, v4);
    expect_list("[412, 388, 0, 224,]", 1, 4, 0, v4);
    /* torch prints aligned, with the device and dtype when not the defaults */
    expect_list("tensor([412, 388,   0, 224])", 1, 4, 0, v4);
    expect_list("tensor([412., 388., 0., 224.], device='cuda:0', dtype=torch.float32)", 1, 4, 0,
                v4);
    expect_list("array([412, 388, 0, 224], dtype=int64)", 1, 4, 0, v4);
    /* numpy 2 prints its scalars inside a Python list */
    expect_list("[np.int64(412), np.int64(388), np.int64(0), np.int64(224)]", 1, 4, 0, v4);
    expect_list("[4.12e2, 3.88E+2, 0.0, 224]", 1, 4, 0, v4);
    static const double mask[] = {0, 1, 1, 0, 1, 0};
    expect_list("[[False, True, True], [false, true, false]]", 2, 2, 3, mask);
    expect_list("[[0, 1, 1], [0, 1, 0]]", 2, 2, 3, mask);
    static const double neg[] = {-1.5, 2};
    expect_list("[[-1.5, 2]]", 2, 1, 2, neg);
    expect_list("[]", 1, 0, 0, NULL);
    expect_list("[[], []]", 2, 2, 0, NULL);

    static const struct {
        const char *text, *why;
    } bad[] = {
        {"", "at character 1: the text ends where a value was expected"},
        {"412", "at character 1: expected a list"},
        {"[1, 2", "the list is not closed (expected ']')"},
        {"[1 2]", "at character 4: expected ',' or ']'"},
        {"[[1, 2], [3]]", "this list has 1 entries, the first one 2"},
        {"[[[1]]]", "more than 2 levels of lists"},
        {"[1, [2]]", "a list mixes numbers and lists"},
        {"[[1], 2]", "a list mixes numbers and lists"},
        {"[[], 2]", "a list mixes numbers and lists"},
        {"[1] x", "text after the list"},
        {"[1, abc]", "'abc' is neither a number nor a wrapper"},
        {"[1, 1..2]", "'1..2' is not a number"},
        {"[nan]", "'nan' is neither a number nor a wrapper"},
        {"[1e999]", "the number is not finite"},
        {"tensor([1], device='cuda:0)", "unterminated string"},
        {"tensor([1], 3)", "expected KEY=VALUE after the wrapped value"},
        {"tensor([1]", "expected ')' closing 'tensor('"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        MsImportList l;
        ms_import_list_init(&l);
        g_autofree char *why = NULL;
        CU_ASSERT_FALSE(ms_import_list_parse(bad[i].text, strlen(bad[i].text), &l, &why));
        CU_ASSERT_PTR_NOT_NULL_FATAL(why);
        if (strstr(why, bad[i].why) == NULL) {
            fprintf(stderr, "\n  '%s': '%s' lacks '%s'\n", bad[i].text, why, bad[i].why);
            CU_FAIL("list error message");
        }
        ms_import_list_clear(&l);
    }
}

static void
test_list_json(void)
{
    g_autoptr(JsonParser) p = json_parser_new();
    MsImportList l;
    ms_import_list_init(&l);
    g_autofree char *why = NULL;
    CU_ASSERT_TRUE(json_parser_load_from_data(p, "[[true, false], [0, 1.5]]", -1, NULL));
    CU_ASSERT_TRUE(ms_import_list_from_json(json_parser_get_root(p), &l, &why));
    CU_ASSERT_EQUAL(l.depth, 2);
    CU_ASSERT_EQUAL(l.n_outer, 2);
    CU_ASSERT_EQUAL(l.n_inner, 2);
    CU_ASSERT_DOUBLE_EQUAL(g_array_index(l.values, double, 3), 1.5, 0);
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"{\"a\": 1}", "not a JSON list"},
        {"[[1, 2], [3]]", "entry 1 has 1 numbers, entry 0 2"},
        {"[1, [2]]", "entry 1: a list mixes numbers and lists"},
        {"[[1], 2]", "entry 1: a list mixes numbers and lists"},
        {"[1, \"2\"]", "entry 1 is not a finite number"},
        {"[[1, null]]", "entry 0, 1 is not a finite number"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_clear_pointer(&why, g_free);
        CU_ASSERT_TRUE_FATAL(json_parser_load_from_data(p, bad[i].text, -1, NULL));
        CU_ASSERT_FALSE(ms_import_list_from_json(json_parser_get_root(p), &l, &why));
        CU_ASSERT_PTR_NOT_NULL_FATAL(why);
        if (strstr(why, bad[i].why) == NULL) {
            fprintf(stderr, "\n  '%s': '%s' lacks '%s'\n", bad[i].text, why, bad[i].why);
            CU_FAIL("JSON list error message");
        }
    }
    ms_import_list_clear(&l);
}

/* --- the fixtures --- */

static char *
fixture(const char *name)
{
    return g_build_filename(ms_test_srcdir(), "tests", "data", "import", name, NULL);
}

/* Imports a fixture; the routing of its first iteration in *first (may be NULL). */
static MsTraceReader *
import_file(const char *path, MsTraceImportFormat from, const MsTraceImportOptions *opt,
            MsTraceImportResult *res, GError **error)
{
    g_autofree char *out = g_build_filename(ms_test_tmpdir(), "out.trace", NULL);
    g_remove(out);
    if (!ms_trace_import_run(path, from, opt, out, MS_TRACE_FORMAT_TEXT, res, error)) {
        CU_ASSERT_FALSE(g_file_test(out, G_FILE_TEST_EXISTS));
        return NULL;
    }
    return ms_trace_reader_open(out, error);
}

static void
expect_counts(const MsRouting *r, guint layer, guint rank, const guint32 *counts)
{
    for (guint e = 0; e < ms_routing_header(r)->experts; e++) {
        CU_ASSERT_EQUAL(ms_routing_count(r, layer, rank, e), counts[e]);
    }
}

static void
expect_token(const MsRouting *r, guint rank, guint token, guint layer, const guint16 *ids)
{
    const guint16 *got = ms_routing_token_experts(r, rank, token, layer);
    for (guint k = 0; k < ms_routing_header(r)->top_k; k++) {
        CU_ASSERT_EQUAL(got[k], ids[k]);
    }
}

/* The issue's log: per rank and layer a Python-printed list of tokens per expert and a column of
 * measured times (ignored, with a notice). */
static void
test_issue_counts(void)
{
    g_autofree char *in = fixture("issue-counts.csv");
    const char *fields[] = {"counts=tokens_per_expert", NULL};
    MsTraceImportOptions opt = {.top_k = 1, .fields = fields};
    MsTraceImportResult res = {0};
    GError *error = NULL;
    g_autoptr(MsTraceReader) r = import_file(in, MS_TRACE_IMPORT_COUNTS_LIST, &opt, &res, &error);
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(res.header.experts, 4);
    CU_ASSERT_EQUAL(res.header.layers, 2);
    CU_ASSERT_EQUAL(res.header.ranks, 2);
    CU_ASSERT_STRING_EQUAL(res.ignored, "layer_ms");
    ms_trace_import_result_clear(&res);
    MsRouting *it = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(r, &it, &error));
    expect_counts(it, 0, 0, (const guint32[]){3, 1, 0, 4});
    expect_counts(it, 1, 0, (const guint32[]){4, 4, 0, 0});
    expect_counts(it, 1, 1, (const guint32[]){1, 3, 3, 1});
    CU_ASSERT_FALSE(ms_routing_has_paths(it));
    ms_routing_free(it);
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(r, &it, &error));
    expect_counts(it, 0, 0, (const guint32[]){8, 0, 0, 0});
    expect_counts(it, 1, 1, (const guint32[]){0, 8, 0, 0});
    ms_routing_free(it);
    CU_ASSERT_FALSE(ms_trace_reader_next_iteration(r, &it, &error));
    g_assert_no_error(error);
}

/* DeepSpeed's exp_counts as the recipe dumps them (JSON Lines) and as a log prints the tensor
 * (CSV, its step column renamed): the same routing. */
static void
test_deepspeed(void)
{
    g_autofree char *jl = fixture("deepspeed-exp_counts.jsonl");
    g_autofree char *csv = fixture("deepspeed-print.csv");
    MsTraceImportOptions opt = {.top_k = 1};
    MsTraceImportResult res = {0};
    GError *error = NULL;
    g_autoptr(MsTraceReader) a = import_file(jl, MS_TRACE_IMPORT_DEEPSPEED, &opt, &res, &error);
    g_assert_no_error(error);
    CU_ASSERT_STRING_EQUAL(res.ignored, "l_aux");
    ms_trace_import_result_clear(&res);
    g_autoptr(MsRouting) ra = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(a, &ra, &error));
    expect_counts(ra, 0, 0, (const guint32[]){5, 1, 0, 2});
    expect_counts(ra, 1, 1, (const guint32[]){1, 1, 1, 5});
    CU_ASSERT_EQUAL(ms_routing_rank_tokens(ra, 1), 8);
    const char *fields[] = {"iteration=step", NULL};
    opt.fields = fields;
    g_autoptr(MsTraceReader) b = import_file(csv, MS_TRACE_IMPORT_DEEPSPEED, &opt, &res, &error);
    g_assert_no_error(error);
    CU_ASSERT_PTR_NULL(res.ignored);
    g_autoptr(MsRouting) rb = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(b, &rb, &error));
    CU_ASSERT_EQUAL(ms_routing_iteration(rb), 7);
    for (guint l = 0; l < 2; l++) {
        for (guint k = 0; k < 2; k++) {
            for (guint e = 0; e < 4; e++) {
                CU_ASSERT_EQUAL(ms_routing_count(ra, l, k, e), ms_routing_count(rb, l, k, e));
            }
        }
    }
}

/* Megatron-LM: recorded top-k indices (gate order kept), a routing map (expert order) and
 * tokens per expert printed as a float tensor. */
static void
test_megatron(void)
{
    g_autofree char *topk = fixture("megatron-topk_indices.jsonl");
    g_autofree char *map = fixture("megatron-routing_map.jsonl");
    g_autofree char *tpe = fixture("megatron-tokens_per_expert.csv");
    MsTraceImportOptions opt = {.experts = 8};
    MsTraceImportResult res = {0};
    GError *error = NULL;
    g_autoptr(MsTraceReader) a = import_file(topk, MS_TRACE_IMPORT_MEGATRON, &opt, &res, &error);
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(res.header.top_k, 2);
    CU_ASSERT_EQUAL(res.header.ranks, 2);
    g_autoptr(MsRouting) ra = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(a, &ra, &error));
    CU_ASSERT_EQUAL(ms_routing_iteration(ra), 3);
    CU_ASSERT_EQUAL(ms_routing_n_tokens(ra, 0), 3);
    expect_token(ra, 0, 1, 0, (const guint16[]){0, 7});
    expect_token(ra, 0, 1, 1, (const guint16[]){7, 0});
    expect_token(ra, 1, 2, 1, (const guint16[]){5, 7});
    opt.experts = 0;
    g_autoptr(MsTraceReader) b = import_file(map, MS_TRACE_IMPORT_MEGATRON, &opt, &res, &error);
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(res.header.experts, 8); /* the map's width */
    g_autoptr(MsRouting) rb = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(b, &rb, &error));
    expect_token(rb, 0, 0, 0, (const guint16[]){1, 5});
    expect_token(rb, 0, 0, 1, (const guint16[]){4, 6});
    expect_token(rb, 0, 1, 1, (const guint16[]){0, 7});
    opt.top_k = 2;
    g_autoptr(MsTraceReader) c = import_file(tpe, MS_TRACE_IMPORT_MEGATRON, &opt, &res, &error);
    g_assert_no_error(error);
    g_autoptr(MsRouting) rc = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(c, &rc, &error));
    expect_counts(rc, 0, 0, (const guint32[]){3, 1, 0, 2, 0, 1, 0, 1});
    expect_counts(rc, 1, 1, (const guint32[]){8, 0, 0, 0, 0, 0, 0, 0});
    CU_ASSERT_EQUAL(ms_routing_rank_tokens(rc, 0), 4);
}

/* Hugging Face: Mixtral's selected experts over two batches, Qwen-MoE's router logits (top-2
 * taken by the importer) and Switch's expert index (top-1, no rank field). */
static void
test_hf(void)
{
    g_autofree char *sel = fixture("hf-mixtral-selected_experts.jsonl");
    g_autofree char *logits = fixture("hf-qwen-router_logits.jsonl");
    g_autofree char *sw = fixture("hf-switch-expert_index.jsonl");
    MsTraceImportOptions opt = {0};
    MsTraceImportResult res = {0};
    GError *error = NULL;
    g_autoptr(MsTraceReader) a = import_file(sel, MS_TRACE_IMPORT_HF, &opt, &res, &error);
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(res.header.experts, 4);
    MsRouting *it = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(a, &it, &error));
    CU_ASSERT_EQUAL(ms_routing_n_tokens(it, 0), 3);
    expect_token(it, 0, 2, 0, (const guint16[]){3, 1});
    expect_token(it, 0, 2, 1, (const guint16[]){3, 2});
    ms_routing_free(it);
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(a, &it, &error));
    CU_ASSERT_EQUAL(ms_routing_n_tokens(it, 0), 1);
    expect_token(it, 0, 0, 1, (const guint16[]){0, 3});
    ms_routing_free(it);
    opt.top_k = 2;
    g_autoptr(MsTraceReader) b = import_file(logits, MS_TRACE_IMPORT_HF, &opt, &res, &error);
    g_assert_no_error(error);
    g_autoptr(MsRouting) rb = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(b, &rb, &error));
    /* 2.5 > 0.7 > 0.1; 1.25 > 1.125; 5 > 1 > 0.5; 0.004 > 0.003 */
    expect_token(rb, 0, 0, 0, (const guint16[]){1, 3});
    expect_token(rb, 0, 1, 0, (const guint16[]){0, 2});
    expect_token(rb, 0, 0, 1, (const guint16[]){2, 3});
    expect_token(rb, 0, 1, 1, (const guint16[]){3, 2});
    opt.top_k = 0;
    g_autoptr(MsTraceReader) c = import_file(sw, MS_TRACE_IMPORT_HF, &opt, &res, &error);
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(res.header.top_k, 1);
    CU_ASSERT_EQUAL(res.header.ranks, 1);
    CU_ASSERT_EQUAL(res.header.experts, 8);
    g_autoptr(MsRouting) rc = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(c, &rc, &error));
    CU_ASSERT_EQUAL(ms_routing_n_tokens(rc, 0), 5);
    expect_token(rc, 0, 3, 0, (const guint16[]){7});
    expect_token(rc, 0, 2, 1, (const guint16[]){6});
}

/* --- errors --- */

static void
test_errors(void)
{
    static const char *const rename_bad[] = {"expert=x", NULL};
    static const char *const rename_empty[] = {"counts=", NULL};
    const struct {
        const char *text;
        MsTraceImportFormat from;
        MsTraceImportOptions opt;
        GQuark domain;
        gint code;
        const char *needle;
    } cases[] = {
        {"",
         MS_TRACE_IMPORT_COUNTS_LIST,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_COLUMNS,
         "in.txt:1: no data (the file is empty)"},
        {"layer,counts\n0,[1]\n",
         MS_TRACE_IMPORT_COUNTS_LIST,
         {.top_k = 1, .fields = rename_bad},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_COLUMNS,
         "--field 'expert=x': expected KEY=NAME with KEY one of iteration, layer, rank, counts "
         "(--from counts-list)"},
        {"layer,counts\n0,[1]\n",
         MS_TRACE_IMPORT_COUNTS_LIST,
         {.top_k = 1, .fields = rename_empty},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_COLUMNS,
         "--field 'counts='"},
        {"rank,counts\n0,[1]\n",
         MS_TRACE_IMPORT_COUNTS_LIST,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_COLUMNS,
         "in.txt:1: the header row lacks a 'layer' column (name it with --field layer=NAME)"},
        {"layer,Layer,counts\n",
         MS_TRACE_IMPORT_COUNTS_LIST,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_COLUMNS,
         "in.txt:1: column 'Layer' given twice"},
        {"layer,tpe\n0,[1]\n",
         MS_TRACE_IMPORT_COUNTS_LIST,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_COLUMNS,
         "in.txt:1: the header row has no list column (--from counts-list reads iteration, "
         "layer, rank, counts; name yours with --field KEY=NAME)"},
        {"layer,routing_map,tokens_per_expert\n",
         MS_TRACE_IMPORT_MEGATRON,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_COLUMNS,
         "in.txt:1: columns 'routing_map' and 'tokens_per_expert' both hold lists: keep one"},
        {"layer,counts\n0,\"[1, 2.5]\"\n",
         MS_TRACE_IMPORT_COUNTS_LIST,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:2: field 'counts': count 2.5 is not a whole number from 0"},
        {"layer,counts\n0,\"[1, -2]\"\n",
         MS_TRACE_IMPORT_COUNTS_LIST,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:2: field 'counts': count -2 is not a whole number from 0"},
        {"layer,counts\n0,[4294967296]\n",
         MS_TRACE_IMPORT_COUNTS_LIST,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_RANGE,
         "in.txt:2: field 'counts': count '4294967296' out of range (must be between 0 and "
         "67108864)"},
        {"layer,counts\n0,\"[1, 1]\"\n1,[2]\n",
         MS_TRACE_IMPORT_COUNTS_LIST,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_RANGE,
         "in.txt:3: field 'counts' has 1 entries per line, line 2 2 (one per expert)"},
        {"layer,counts\n0,[]\n",
         MS_TRACE_IMPORT_COUNTS_LIST,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:2: field 'counts' lists no expert"},
        {"layer,counts\n0,[[1]]\n",
         MS_TRACE_IMPORT_COUNTS_LIST,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:2: field 'counts' must be one list of tokens per expert"},
        {"layer,counts\n0,\"[1, 2\"\n",
         MS_TRACE_IMPORT_COUNTS_LIST,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:2: column 'counts': at character 6: the list is not closed"},
        {"layer,counts\n0,[1],3\n",
         MS_TRACE_IMPORT_COUNTS_LIST,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:2: 3 fields, but the header names 2"},
        {"layer,counts\nx,[1]\n",
         MS_TRACE_IMPORT_COUNTS_LIST,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:2: column 'layer': 'x' is not a non-negative integer"},
        {"layer,counts\n4294967296,[1]\n",
         MS_TRACE_IMPORT_COUNTS_LIST,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_RANGE,
         "in.txt:2: column 'layer': layer '4294967296' out of range (must be between 0 and 4095)"},
        {"layer,counts\n\"0,[1]\n",
         MS_TRACE_IMPORT_COUNTS_LIST,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:2: unterminated quoted field"},
        {"layer,counts\n0,[1]\n",
         MS_TRACE_IMPORT_COUNTS_LIST,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_MISSING,
         "in.txt: top_k cannot be inferred from expert counts: give --top-k"},
        {"layer,counts\n0,\"[1, 1]\"\n",
         MS_TRACE_IMPORT_COUNTS_LIST,
         {.top_k = 1, .experts = 3},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_RANGE,
         "in.txt: --experts 3 but the lists hold 2 experts"},
        {"layer,counts\n0,\"[1, 1]\"\n1,\"[1, 2]\"\n",
         MS_TRACE_IMPORT_COUNTS_LIST,
         {.top_k = 1},
         MS_TRACE_ERROR,
         MS_TRACE_ERROR_INCONSISTENT,
         "in.txt:3: iteration 0 rank 0: 3 token-expert assignments at layer 1 but 2 at layer 0"},
        {"{\"layer\": 0, \"exp_counts\": [1]}\n{\"layer\": 0, \"exp_counts\": [1]}\n",
         MS_TRACE_IMPORT_DEEPSPEED,
         {.top_k = 1},
         MS_TRACE_ERROR,
         MS_TRACE_ERROR_DUPLICATE,
         "in.txt:2: duplicate count record for iteration 0 layer 0 rank 0 expert 0"},
        {"{\"layer\": 0}\n",
         MS_TRACE_IMPORT_DEEPSPEED,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_COLUMNS,
         "in.txt:1: no list field (--from deepspeed reads iteration, layer, rank, exp_counts"},
        {"{\"rank\": 0, \"exp_counts\": [1]}\n",
         MS_TRACE_IMPORT_DEEPSPEED,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_COLUMNS,
         "in.txt:1: missing field 'layer'"},
        {"{\"layer\": 0, \"rank\": 0, \"exp_counts\": [1]}\n{\"layer\": 1, \"exp_counts\": [1]}\n",
         MS_TRACE_IMPORT_DEEPSPEED,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_COLUMNS,
         "in.txt:2: field 'rank' is absent here but present on line 1 (give it on every line or "
         "on none)"},
        {"{\"layer\": -1, \"exp_counts\": [1]}\n",
         MS_TRACE_IMPORT_DEEPSPEED,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:1: field 'layer' is not a non-negative integer"},
        {"{\"iteration\": 4294967296, \"layer\": 0, \"exp_counts\": [1]}\n",
         MS_TRACE_IMPORT_DEEPSPEED,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_RANGE,
         "in.txt:1: field 'iteration': iteration '4294967296' out of range"},
        {"{\"layer\": 0, \"exp_counts\": [1]\n",
         MS_TRACE_IMPORT_DEEPSPEED,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:1: bad JSON"},
        {"{\"layer\": 0, \"exp_counts\": [1]}\n[1]\n",
         MS_TRACE_IMPORT_DEEPSPEED,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:2: a line must hold one JSON object"},
        {"{\"layer\": 0, \"exp_counts\": \"[1]\"}\n",
         MS_TRACE_IMPORT_DEEPSPEED,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:1: field 'exp_counts': not a JSON list"},
        {"{\"layer\": 0, \"topk_indices\": [[1, 0]]}\n{\"layer\": 1, \"routing_map\": [[1, "
         "1]]}\n",
         MS_TRACE_IMPORT_MEGATRON,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_COLUMNS,
         "in.txt:2: field 'routing_map' here but 'topk_indices' on line 1 (one list kind per "
         "file)"},
        {"{\"layer\": 0, \"topk_indices\": [[1, 0]], \"tokens_per_expert\": [1, 1]}\n",
         MS_TRACE_IMPORT_MEGATRON,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_COLUMNS,
         "both hold lists: keep one"},
        {"{\"layer\": 0, \"topk_indices\": [[1, 70000]]}\n",
         MS_TRACE_IMPORT_MEGATRON,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_RANGE,
         "in.txt:1: field 'topk_indices': expert id '70000' out of range (must be between 0 and "
         "65535)"},
        {"{\"layer\": 0, \"topk_indices\": [[1, 0.5]]}\n",
         MS_TRACE_IMPORT_MEGATRON,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:1: field 'topk_indices': expert id 0.5 is not a whole number from 0"},
        {"{\"layer\": 0, \"topk_indices\": [[1, 0], [2, 3]]}\n"
         "{\"layer\": 1, \"topk_indices\": [[1, 0, 2], [2, 3, 1]]}\n",
         MS_TRACE_IMPORT_MEGATRON,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_RANGE,
         "in.txt:2: tokens have 3 expert ids, expected top_k = 2 (from the first row)"},
        {"{\"layer\": 0, \"topk_indices\": [[1, 1]]}\n",
         MS_TRACE_IMPORT_MEGATRON,
         {0},
         MS_TRACE_ERROR,
         MS_TRACE_ERROR_PATH,
         "in.txt:1: layer 0: expert 1 chosen twice in one token's top_k"},
        {"{\"layer\": 0, \"topk_indices\": [[1, 0], [2, 3]]}\n"
         "{\"layer\": 1, \"topk_indices\": [[1, 0]]}\n",
         MS_TRACE_IMPORT_MEGATRON,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_TOKEN,
         "in.txt:1: token 1 of rank 0 has no row for layer 1"},
        {"{\"layer\": 0, \"topk_indices\": []}\n",
         MS_TRACE_IMPORT_MEGATRON,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_MISSING,
         "in.txt: no token to infer top_k from: give --top-k"},
        {"{\"layer\": 0, \"routing_map\": [[0, 2]]}\n",
         MS_TRACE_IMPORT_MEGATRON,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_RANGE,
         "in.txt:1: field 'routing_map': token 0, expert 1: routing map entry '2' out of range "
         "(must be between 0 and 1)"},
        {"{\"layer\": 0, \"routing_map\": [[0, 0.5]]}\n",
         MS_TRACE_IMPORT_MEGATRON,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_RANGE,
         "in.txt:1: field 'routing_map': token 0, expert 1: routing map entry is not 0 or 1"},
        {"{\"layer\": 0, \"routing_map\": [[1, 1, 0], [0, 1, 0]]}\n",
         MS_TRACE_IMPORT_MEGATRON,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_RANGE,
         "in.txt:1: field 'routing_map': token 1 is routed to 1 experts, token 0 to 2"},
        {"{\"layer\": 0, \"routing_map\": [1, 0]}\n",
         MS_TRACE_IMPORT_MEGATRON,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:1: field 'routing_map' must hold one list of 0/1 per token"},
        {"{\"layer\": 0, \"routing_map\": [[1, 0]]}\n{\"layer\": 1, \"routing_map\": [[1, 0, "
         "0]]}\n",
         MS_TRACE_IMPORT_MEGATRON,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_RANGE,
         "in.txt:2: field 'routing_map' has 3 entries per token, line 1 2 (one per expert)"},
        {"{\"layer\": 0, \"router_logits\": [[0.5, 1.5]]}\n",
         MS_TRACE_IMPORT_HF,
         {0},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_MISSING,
         "in.txt:1: field 'router_logits' holds router logits: give --top-k"},
        {"{\"layer\": 0, \"router_logits\": [[0.5, 1.5]]}\n",
         MS_TRACE_IMPORT_HF,
         {.top_k = 3},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_RANGE,
         "in.txt:1: --top-k 3 but field 'router_logits' has logits for 2 experts"},
        {"{\"layer\": 0, \"router_logits\": [0.5, 1.5]}\n",
         MS_TRACE_IMPORT_HF,
         {.top_k = 1},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_SYNTAX,
         "in.txt:1: field 'router_logits' must hold one list of logits per token"},
        {"{\"layer\": 0, \"router_logits\": [[0.5, 1.5]]}\n",
         MS_TRACE_IMPORT_HF,
         {.top_k = 1, .experts = 4},
         MS_TRACE_IMPORT_ERROR,
         MS_TRACE_IMPORT_ERROR_RANGE,
         "in.txt: --experts 4 but the lists hold 2 experts"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *in = ms_test_write_tmp("in.txt", cases[i].text);
        GError *error = NULL;
        MsTraceImportResult res = {0};
        g_autoptr(MsTraceReader) r = import_file(in, cases[i].from, &cases[i].opt, &res, &error);
        CU_ASSERT_PTR_NULL(r);
        if (error == NULL) {
            fprintf(stderr, "\n  case %u imported\n", i);
        }
        MS_ASSERT_ERROR(error, cases[i].domain, cases[i].code, cases[i].needle);
    }
}

/* The names are the frameworks': a --field renames, the notice lists every column unused once. */
static void
test_fields(void)
{
    g_autofree char *in = ms_test_write_tmp(
        "in.txt", "{\"step\": 2, \"moe_layer\": 0, \"loss\": 1.5, \"exp_counts\": [2, 0], "
                  "\"lr\": 0.1}\n{\"step\": 2, \"moe_layer\": 1, \"loss\": 1.5, \"exp_counts\": "
                  "[1, 1], \"lr\": 0.1, \"note\": \"x\"}\n");
    const char *fields[] = {"iteration=step", "layer=moe_layer", NULL};
    MsTraceImportOptions opt = {.top_k = 2, .fields = fields};
    MsTraceImportResult res = {0};
    GError *error = NULL;
    g_autoptr(MsTraceReader) r = import_file(in, MS_TRACE_IMPORT_DEEPSPEED, &opt, &res, &error);
    g_assert_no_error(error);
    CU_ASSERT_STRING_EQUAL(res.ignored, "loss, lr, note");
    CU_ASSERT_EQUAL(res.header.layers, 2);
    ms_trace_import_result_clear(&res);
    g_autoptr(MsRouting) it = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(r, &it, &error));
    CU_ASSERT_EQUAL(ms_routing_iteration(it), 2);
    CU_ASSERT_EQUAL(ms_routing_rank_tokens(it, 0), 1);
    /* Without the renames nothing names the layer. */
    opt.fields = NULL;
    CU_ASSERT_PTR_NULL(import_file(in, MS_TRACE_IMPORT_DEEPSPEED, &opt, &res, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_COLUMNS,
                    "in.txt:1: missing field 'layer'");
    /* Format names. */
    MsTraceImportFormat f;
    static const char *const names[] = {"counts-list", "deepspeed", "megatron", "hf"};
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        CU_ASSERT_TRUE(ms_trace_import_format_from_name(names[i], &f));
        CU_ASSERT_STRING_EQUAL(ms_trace_import_format_name(f), names[i]);
    }
    CU_ASSERT_FALSE(ms_trace_import_format_from_name("torch", &f));
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"list literals: JSON, Python, torch and numpy prints", test_list_literals},
        {"lists from JSON", test_list_json},
        {"the issue's per-rank count lists", test_issue_counts},
        {"DeepSpeed-MoE exp_counts", test_deepspeed},
        {"Megatron-LM top-k indices, routing map, tokens per expert", test_megatron},
        {"Hugging Face selected experts, router logits, expert index", test_hf},
        {"every error names file:line and the field", test_errors},
        {"renamed fields and the columns ignored", test_fields},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"trace_import_fw", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
