/* Tests of `moesim trace gen|info|import`: gen then info (table and JSON), determinism, the
 * shipped samples against the commands documented for them, and exit code 2 with file:line on
 * bad input. */
#include "ms_test.h"

#include <json-glib/json-glib.h>

typedef struct {
    int rc;
    char *out;
    char *err;
} Run;

static Run
run(const char *const *args)
{
    Run r = {0};
    r.rc = ms_test_run_moesim(args, &r.out, &r.err);
    return r;
}

static void
run_clear(Run *r)
{
    g_free(r->out);
    g_free(r->err);
}

static char *
tmp(const char *name)
{
    return g_build_filename(ms_test_tmpdir(), name, NULL);
}

#define ASSERT_CONTAINS(text, needle)                                                              \
    do {                                                                                           \
        if (strstr((text), (needle)) == NULL) {                                                    \
            fprintf(stderr, "\n  output '%s' lacks '%s'\n", (text), (needle));                     \
            CU_FAIL("output lacks expected text");                                                 \
        }                                                                                          \
    } while (0)

static void
test_usage(void)
{
    Run r = run((const char *[]){"trace", "--help", NULL});
    CU_ASSERT_EQUAL(r.rc, 0);
    ASSERT_CONTAINS(r.out, "gen ");
    ASSERT_CONTAINS(
        r.out,
        "sample:NAME (shipped: counts, default, lina-enwik8-16e, lina-enwik8-4e, lina-wmt-16e, "
        "lina-wmt-4e, tiny)");
    run_clear(&r);
    r = run((const char *[]){"trace", NULL});
    CU_ASSERT_EQUAL(r.rc, 2);
    run_clear(&r);
    r = run((const char *[]){"trace", "bogus", NULL});
    CU_ASSERT_EQUAL(r.rc, 2);
    ASSERT_CONTAINS(r.err, "unknown trace subcommand 'bogus'");
    run_clear(&r);
    static const char *const subs[] = {"gen", "info", "import"};
    for (guint i = 0; i < G_N_ELEMENTS(subs); i++) {
        r = run((const char *[]){"trace", subs[i], "--help", NULL});
        CU_ASSERT_EQUAL(r.rc, 0);
        ASSERT_CONTAINS(r.out, "Usage:");
        run_clear(&r);
    }
}

static void
test_gen_then_info(void)
{
    g_autofree char *path = tmp("g.trace");
    g_autofree char *json = tmp("g.json");
    Run r = run((const char *[]){"trace", "gen", "ranks=4,experts=8,layers=3,tokens=64",
                                 "--iterations", "2", "--seed", "5", "--out", path, NULL});
    CU_ASSERT_EQUAL(r.rc, 0);
    ASSERT_CONTAINS(r.out, "2 iterations, 512 records");
    run_clear(&r);
    r = run((const char *[]){"trace", "info", path, "--json", json, NULL});
    CU_ASSERT_EQUAL(r.rc, 0);
    ASSERT_CONTAINS(r.out, "(text)");
    ASSERT_CONTAINS(r.out, "8 experts, 3 MoE layers, 4 ranks, top_k 2, 64 tokens per rank");
    ASSERT_CONTAINS(r.out, "generator   moesim trace gen ranks=4,experts=8,layers=3,top_k=2,"
                           "tokens=64,iterations=2,zipf=1,corr=0,drift=0,seed=5");
    ASSERT_CONTAINS(r.out, "iterations  2 (2 with token paths), 512 tokens");
    ASSERT_CONTAINS(r.out, "   all ");
    run_clear(&r);
    g_autoptr(JsonParser) parser = json_parser_new();
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_file(parser, json, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    CU_ASSERT_EQUAL(json_object_get_int_member(root, "iterations"), 2);
    CU_ASSERT_EQUAL(json_object_get_int_member(root, "tokens"), 512);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(root, "format"), "text");
    JsonObject *header = json_object_get_object_member(root, "header");
    CU_ASSERT_EQUAL(json_object_get_int_member(header, "experts"), 8);
    JsonArray *layers = json_object_get_array_member(root, "layers");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(layers), 3);
    JsonObject *l0 = json_array_get_object_element(layers, 0);
    double hot = json_object_get_double_member(l0, "hot_share");
    CU_ASSERT(hot > 1.0 / 8 && hot <= 0.5);
    CU_ASSERT_FALSE(json_object_get_null_member(l0, "path_consistency"));
    JsonObject *l2 = json_array_get_object_element(layers, 2);
    CU_ASSERT_TRUE(json_object_get_null_member(l2, "path_consistency"));
    JsonObject *summary = json_object_get_object_member(root, "summary");
    CU_ASSERT(json_object_get_double_member(summary, "entropy_norm") > 0.5);
    /* --json - writes only JSON on stdout. */
    r = run((const char *[]){"trace", "info", "gen:ranks=2,experts=4,layers=2,tokens=8", "--json",
                             "-", NULL});
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_TRUE(json_parser_load_from_data(parser, r.out, -1, NULL));
    run_clear(&r);
}

/* Layer groups route their own token counts: 4 ranks x 2 iterations of 64 tokens in the first
 * group and of 16 in the second, in the table and in the JSON. */
static void
test_info_groups(void)
{
    static const char spec[] =
        "gen:ranks=4,experts=8,layers=4,tokens=64,iterations=2,groups=0/2,group_tokens=64/16";
    Run r = run((const char *[]){"trace", "info", spec, NULL});
    CU_ASSERT_EQUAL(r.rc, 0);
    ASSERT_CONTAINS(r.out, "groups      0 2 (first MoE layer of each layer group)");
    ASSERT_CONTAINS(r.out, "512 tokens in the first layer group; per group: 512 128\n");
    run_clear(&r);
    r = run((const char *[]){"trace", "info", spec, "--json", "-", NULL});
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    g_autoptr(JsonParser) parser = json_parser_new();
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_data(parser, r.out, -1, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    CU_ASSERT_EQUAL(json_object_get_int_member(root, "tokens"), 512);
    JsonArray *groups = json_object_get_array_member(root, "group_tokens");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(groups), 2);
    CU_ASSERT_EQUAL(json_array_get_int_element(groups, 0), 512);
    CU_ASSERT_EQUAL(json_array_get_int_element(groups, 1), 128);
    run_clear(&r);
    /* Without groups: one entry, the same as tokens, and no per-group words in the table. */
    r = run((const char *[]){"trace", "info", "gen:ranks=2,experts=4,layers=2,tokens=8", NULL});
    CU_ASSERT_EQUAL(r.rc, 0);
    ASSERT_CONTAINS(r.out, "iterations  1 (1 with token paths), 16 tokens\n");
    run_clear(&r);
}

static GBytes *
file_bytes(const char *path)
{
    char *data = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &data, &len, NULL)) {
        return NULL;
    }
    return g_bytes_new_take(data, len);
}

static void
test_gen_determinism(void)
{
    g_autofree char *a = tmp("a.bin"), *b = tmp("b.bin"), *c = tmp("c.bin");
    const char *spec = "gen:experts=8,layers=3,tokens=32,corr=0.5,drift=0.2,iterations=3";
    const char *const *outs[] = {
        (const char *[]){"trace", "gen", spec, "--seed", "3", "--binary", "--out", a, NULL},
        (const char *[]){"trace", "gen", spec, "--seed", "3", "--binary", "--out", b, NULL},
        (const char *[]){"trace", "gen", spec, "--seed", "4", "--binary", "--out", c, NULL},
    };
    for (guint i = 0; i < G_N_ELEMENTS(outs); i++) {
        Run r = run(outs[i]);
        CU_ASSERT_EQUAL(r.rc, 0);
        run_clear(&r);
    }
    g_autoptr(GBytes) x = file_bytes(a), y = file_bytes(b), z = file_bytes(c);
    CU_ASSERT_TRUE_FATAL(x && y && z);
    CU_ASSERT_TRUE(g_bytes_equal(x, y));
    CU_ASSERT_FALSE(g_bytes_equal(x, z));
    /* Options: --counts gives a count-level trace. */
    g_autofree char *counts = tmp("counts.trace");
    Run r = run((const char *[]){"trace", "gen", "--experts", "8", "--top-k", "3", "--hot", "0.2",
                                 "--counts", "--out", counts, NULL});
    CU_ASSERT_EQUAL(r.rc, 0);
    run_clear(&r);
    r = run((const char *[]){"trace", "info", counts, NULL});
    CU_ASSERT_EQUAL(r.rc, 0);
    ASSERT_CONTAINS(r.out, "(0 with token paths)");
    ASSERT_CONTAINS(r.out, "top_k 3");
    run_clear(&r);
}

static void
test_samples_match_readme(void)
{
    g_autofree char *readme_path =
        g_build_filename(ms_test_srcdir(), "traces", "samples", "README.md", NULL);
    g_autofree char *readme = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(readme_path, &readme, NULL, NULL));
    g_auto(GStrv) lines = g_strsplit(readme, "\n", -1);
    guint checked = 0;
    for (guint i = 0; lines[i]; i++) {
        if (!g_str_has_prefix(lines[i], "moesim trace gen ")) {
            continue;
        }
        g_auto(GStrv) argv = NULL;
        CU_ASSERT_TRUE_FATAL(g_shell_parse_argv(lines[i], NULL, &argv, NULL));
        /* Run it with --out redirected to a temporary file, then compare with the shipped one. */
        GPtrArray *args = g_ptr_array_new();
        const char *shipped = NULL;
        g_autofree char *fresh = tmp("sample.trace");
        for (guint a = 1; argv[a]; a++) {
            if (a > 1 && strcmp(argv[a - 1], "--out") == 0) {
                shipped = argv[a];
                g_ptr_array_add(args, fresh);
            } else {
                g_ptr_array_add(args, argv[a]);
            }
        }
        g_ptr_array_add(args, NULL);
        Run r = run((const char *const *)args->pdata);
        g_ptr_array_free(args, TRUE);
        CU_ASSERT_EQUAL(r.rc, 0);
        run_clear(&r);
        CU_ASSERT_PTR_NOT_NULL_FATAL(shipped);
        g_autofree char *shipped_path = g_build_filename(ms_test_srcdir(), shipped, NULL);
        g_autoptr(GBytes) want = file_bytes(shipped_path), got = file_bytes(fresh);
        CU_ASSERT_TRUE_FATAL(want && got);
        CU_ASSERT_TRUE(g_bytes_equal(want, got));
        checked++;
    }
    CU_ASSERT_EQUAL(checked, 3);
    /* The default sample stays small. */
    g_autofree char *def = g_build_filename(ms_test_srcdir(), "traces/samples/default.trace", NULL);
    g_autoptr(GBytes) d = file_bytes(def);
    CU_ASSERT_TRUE_FATAL(d != NULL);
    CU_ASSERT(g_bytes_get_size(d) < 300 * 1000);
    Run r = run((const char *[]){"trace", "info", "sample:default", NULL});
    CU_ASSERT_EQUAL(r.rc, 0);
    ASSERT_CONTAINS(r.out, "sample:default (binary)");
    ASSERT_CONTAINS(r.out, "16 experts, 12 MoE layers, 16 ranks, top_k 2");
    run_clear(&r);
}

static void
expect_fail(const char *const *args, const char *needle)
{
    Run r = run(args);
    CU_ASSERT_EQUAL(r.rc, 2);
    ASSERT_CONTAINS(r.err, needle);
    run_clear(&r);
}

static void
test_errors(void)
{
    g_autofree char *out = tmp("never.trace");
    expect_fail((const char *[]){"trace", "gen", "ranks=4", NULL}, "trace gen needs --out FILE");
    expect_fail((const char *[]){"trace", "gen", "a=1", "b=2", "--out", out, NULL},
                "at most one SPEC");
    expect_fail((const char *[]){"trace", "gen", "flavour=1", "--out", out, NULL},
                "moesim: generator spec 'flavour=1': unknown generator key 'flavour'");
    expect_fail((const char *[]){"trace", "gen", "--zipf", "1", "--hot", "0.3", "--out", out, NULL},
                "give one of zipf, hot and ratio, not two");
    expect_fail((const char *[]){"trace", "gen", "--ranks", "abc", "--out", out, NULL},
                "ranks=abc: 'abc' is not a non-negative integer");
    expect_fail((const char *[]){"trace", "gen", "--nope", NULL}, "Unknown option --nope");
    expect_fail((const char *[]){"trace", "gen", "--out", "/nonexistent/x.trace", NULL},
                "/nonexistent/x.trace: cannot write");
    CU_ASSERT_FALSE(g_file_test(out, G_FILE_TEST_EXISTS));
    expect_fail((const char *[]){"trace", "info", NULL}, "trace info takes one trace");
    expect_fail((const char *[]){"trace", "info", "/nonexistent/t.trace", NULL},
                "moesim: /nonexistent/t.trace: cannot open: No such file");
    expect_fail((const char *[]){"trace", "info", "sample:nope", NULL}, "unknown sample 'nope'");
    g_autofree char *bad = ms_test_write_tmp("bad.trace", "moe-trace 1\nexperts 4\nlayers 1\n"
                                                          "ranks 1\ntop_k 1\nc 0 0 0 9 1\n");
    expect_fail((const char *[]){"trace", "info", bad, NULL},
                "bad.trace:6: expert 9 out of range (experts = 4)");
    expect_fail((const char *[]){"trace", "info", "sample:tiny", "--json", "/nonexistent/j", NULL},
                "/nonexistent/j: cannot write");
}

static void
test_import(void)
{
    g_autofree char *csv = ms_test_write_tmp("in.csv", "layer,token,experts\n0,1,\"2 0\"\n"
                                                       "1,1,\"3 1\"\n");
    g_autofree char *out = tmp("imported.trace");
    Run r = run((const char *[]){"trace", "import", "--from", "csv", csv, "--out", out, "--experts",
                                 "6", "--binary", NULL});
    CU_ASSERT_EQUAL(r.rc, 0);
    ASSERT_CONTAINS(r.out, "6 experts, 2 MoE layers, 1 ranks, top_k 2");
    run_clear(&r);
    r = run((const char *[]){"trace", "info", out, NULL});
    CU_ASSERT_EQUAL(r.rc, 0);
    ASSERT_CONTAINS(r.out, "(binary)");
    run_clear(&r);
    g_autofree char *bad = ms_test_write_tmp("bad.csv", "layer,experts\n0,1 2\n0,1 x\n");
    expect_fail((const char *[]){"trace", "import", "--from", "csv", bad, "--out", out, NULL},
                "moesim: ");
    expect_fail((const char *[]){"trace", "import", "--from", "csv", bad, "--out", out, NULL},
                "bad.csv:3: column 'experts': 'x' is not a non-negative integer");
    g_autofree char *counts = ms_test_write_tmp("c.csv", "layer,rank,e0\n0,0,1\n");
    expect_fail(
        (const char *[]){"trace", "import", "--from", "counts-csv", counts, "--out", out, NULL},
        "give --top-k");
    expect_fail(
        (const char *[]){"trace", "import", "--from", "tsv", csv, "--out", out, NULL},
        "--from tsv: expected one of csv, jsonl, counts-csv, counts-list, deepspeed, megatron, hf");
    expect_fail((const char *[]){"trace", "import", "--from", "csv", csv, NULL},
                "trace import needs --from FORMAT, --out FILE and one INPUT");
    expect_fail((const char *[]){"trace", "import", "--from", "csv", csv, "--out", out, "--top-k",
                                 "abc", NULL},
                "--top-k: 'abc' is not a non-negative integer");
    expect_fail((const char *[]){"trace", "import", "--from", "csv", csv, "--out", out, "--ranks",
                                 "0", NULL},
                "--ranks: 0 out of range");
    /* A framework log: the list column renamed, the unused column named once on stderr. */
    g_autofree char *issue =
        g_build_filename(ms_test_srcdir(), "tests/data/import/issue-counts.csv", NULL);
    r = run((const char *[]){"trace", "import", "--from", "counts-list", issue, "--field",
                             "counts=tokens_per_expert", "--top-k", "1", "--out", out, NULL});
    CU_ASSERT_EQUAL(r.rc, 0);
    ASSERT_CONTAINS(r.out, "4 experts, 2 MoE layers, 2 ranks, top_k 1");
    ASSERT_CONTAINS(r.err, "moesim: notice: ");
    ASSERT_CONTAINS(r.err, "issue-counts.csv: not read by --from counts-list: layer_ms");
    run_clear(&r);
    expect_fail((const char *[]){"trace", "import", "--from", "counts-list", issue, "--top-k", "1",
                                 "--out", out, NULL},
                "issue-counts.csv:3: the header row has no list column (--from counts-list reads "
                "iteration, layer, rank, counts; name yours with --field KEY=NAME)");
    expect_fail((const char *[]){"trace", "import", "--from", "hf", issue, "--field", "x=y",
                                 "--out", out, NULL},
                "--field 'x=y': expected KEY=NAME with KEY one of iteration, layer, rank, "
                "selected_experts, expert_index, router_logits (--from hf)");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"usage", test_usage},
        {"gen then info", test_gen_then_info},
        {"info counts each layer group's tokens", test_info_groups},
        {"gen is deterministic", test_gen_determinism},
        {"samples match their commands", test_samples_match_readme},
        {"bad input exits 2", test_errors},
        {"import", test_import},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"trace_cli", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
