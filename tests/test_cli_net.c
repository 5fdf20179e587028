/* Tests of `moesim collective` and `moesim flows`: figures against closed forms, nccl-tests
 * columns, byte-identical reruns, JSON output, --help, and exit 2 with a clear message for every
 * kind of bad input. */
#include "ms_test.h"

#include <json-glib/json-glib.h>

/* The data rows of an nccl-tests table (lines not starting with '#'). */
static char **
rows(const char *out)
{
    g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
    g_autoptr(GPtrArray) keep = g_ptr_array_new();
    for (guint i = 0; lines[i]; i++) {
        if (lines[i][0] && lines[i][0] != '#') {
            g_ptr_array_add(keep, g_strdup(lines[i]));
        }
    }
    g_ptr_array_add(keep, NULL);
    return (char **)g_ptr_array_free(g_steal_pointer(&keep), FALSE);
}

typedef struct {
    guint64 size, count;
    char type[16], redop[16];
    int root;
    double time, algbw, busbw;
} NcclRow;

static gboolean
parse_row(const char *line, NcclRow *r)
{
    char wrong[16];
    return sscanf(line, "%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %15s %15s %d %lf %lf %lf %15s",
                  &r->size, &r->count, r->type, r->redop, &r->root, &r->time, &r->algbw, &r->busbw,
                  wrong) == 9;
}

/* dgx-a100, 1 GiB ring allreduce: 2(n-1)/n S/B + 2(n-1) a with B = 300 GB/s, a = 1.4 us. */
static void
test_collective_figures(void)
{
    MsTestRun r = ms_test_moesim_run("collective", "--topology", "dgx-a100", "--op", "allreduce",
                                     "-b", "1G", "-e", "1G", NULL);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "# moesim collective: allreduce (ring) on dgx-a100, 8 "
                                         "ranks, 8 channels"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "simulated 1 sizes"));
    g_auto(GStrv) lines = rows(r.out);
    CU_ASSERT_EQUAL_FATAL(g_strv_length(lines), 1);
    NcclRow row;
    CU_ASSERT_TRUE_FATAL(parse_row(lines[0], &row));
    /* #wrong is 0 in both halves, as nccl-tests prints it for a checked run. */
    g_auto(GStrv) fields = g_strsplit_set(lines[0], " ", -1);
    g_autoptr(GPtrArray) cols = g_ptr_array_new();
    for (guint i = 0; fields[i]; i++) {
        if (*fields[i]) {
            g_ptr_array_add(cols, fields[i]);
        }
    }
    CU_ASSERT_EQUAL_FATAL(cols->len, 13);
    CU_ASSERT_STRING_EQUAL(g_ptr_array_index(cols, 8), "0");
    CU_ASSERT_STRING_EQUAL(g_ptr_array_index(cols, 12), "0");
    double S = 1073741824.0, want_us = (1.75 * S / 300e9 + 14 * 1.4e-6) * 1e6;
    CU_ASSERT_EQUAL(row.size, 1073741824);
    CU_ASSERT_EQUAL(row.count, 268435456);
    CU_ASSERT_STRING_EQUAL(row.type, "float");
    CU_ASSERT_STRING_EQUAL(row.redop, "sum");
    CU_ASSERT_EQUAL(row.root, -1);
    MS_ASSERT_REL(row.time, want_us, 1e-3);
    MS_ASSERT_REL(row.algbw, S / want_us / 1e3, 2e-3);
    MS_ASSERT_REL(row.busbw, 1.75 * S / want_us / 1e3, 2e-3);
    ms_test_run_clear(&r);

    /* 2 nodes, all-to-all: bound by the 25 GB/s NICs (S/2 each) plus 1.33 us of latency; the
     * count column is per rank, as in nccl-tests. */
    r = ms_test_moesim_run("collective", "--topology", "dgx-a100-2node", "--op", "alltoall", "-b",
                           "1G", "-e", "1G", NULL);
    CU_ASSERT_EQUAL(r.rc, 0);
    g_auto(GStrv) a2a = rows(r.out);
    CU_ASSERT_TRUE_FATAL(a2a[0] && parse_row(a2a[0], &row));
    CU_ASSERT_EQUAL(row.size, 1073741824);
    CU_ASSERT_EQUAL(row.count, 268435456 / 16);
    CU_ASSERT_STRING_EQUAL(row.redop, "none");
    MS_ASSERT_REL(row.time, (S / 2 / 25e9 + 1.33e-6) * 1e6, 1e-3);
    MS_ASSERT_REL(row.busbw, row.algbw * 15 / 16, 1e-2);
    ms_test_run_clear(&r);

    /* nccl-tests' sweep: 8 B to 128 MiB by 2 is 25 sizes; reducescatter rounds each size down
     * to whole floats per rank (8 B over 8 ranks: 0). */
    r = ms_test_moesim_run("collective", "--op", "reducescatter", NULL);
    CU_ASSERT_EQUAL(r.rc, 0);
    g_auto(GStrv) sweep = rows(r.out);
    CU_ASSERT_EQUAL_FATAL(g_strv_length(sweep), 25);
    CU_ASSERT_TRUE(parse_row(sweep[0], &row) && row.size == 0 && row.count == 0);
    CU_ASSERT_TRUE(parse_row(sweep[2], &row) && row.size == 32 && row.count == 1);
    CU_ASSERT_TRUE(parse_row(sweep[24], &row) && row.size == 134217728 &&
                   row.count == 134217728 / 32);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "# Avg bus bandwidth    : "));
    ms_test_run_clear(&r);

    /* Options reach the model: one channel across two nodes is about 8x slower; alpha adds. */
    r = ms_test_moesim_run("collective", "--topology", "dgx-a100-2node", "--op", "allreduce", "-b",
                           "1G", "-e", "1G", "--channels", "1", "--alpha", "10us", "--step-delay",
                           "0us", "-g", "16", "--window", "2", "--check-invariants", NULL);
    CU_ASSERT_EQUAL(r.rc, 0);
    g_auto(GStrv) one = rows(r.out);
    CU_ASSERT_TRUE_FATAL(one[0] && parse_row(one[0], &row));
    CU_ASSERT_TRUE(row.busbw > 0.95 * 25 && row.busbw < 25);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "16 ranks, 1 channel,"));
    ms_test_run_clear(&r);
}

/* nccl-tests' habits: its short options where the meaning is the same, its long spellings, its
 * op and type names; the table matches the one moesim's own spellings give. */
static void
test_nccl_tests_habits(void)
{
    MsTestRun mine = ms_test_moesim_run("collective", "--topology", "dgx-a100", "--op", "allreduce",
                                        "--ranks", "4", "--dtype", "fp16", "--minbytes", "8",
                                        "--maxbytes", "64", "--stepbytes", "24", NULL);
    CU_ASSERT_EQUAL(mine.rc, 0);
    g_auto(GStrv) lines = rows(mine.out);
    /* 8, 32, 56 bytes added 24 at a time; half: 2-byte elements. */
    CU_ASSERT_EQUAL_FATAL(g_strv_length(lines), 3);
    const guint64 sizes[] = {8, 32, 56};
    for (guint i = 0; i < 3; i++) {
        NcclRow row;
        CU_ASSERT_TRUE_FATAL(parse_row(lines[i], &row));
        CU_ASSERT_EQUAL(row.size, sizes[i]);
        CU_ASSERT_EQUAL(row.count, sizes[i] / 2);
        CU_ASSERT_STRING_EQUAL(row.type, "half");
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(mine.out, "allreduce (ring) on dgx-a100, 4 ranks"));
    const char *const spellings[][12] = {
        {"--op", "all_reduce", "-g", "4", "-d", "half", "-b", "8", "-e", "64", "-i", "24"},
        {"--op", "all_reduce_perf", "--ngpus", "4", "--datatype", "half", "-b", "8", "-e", "64",
         "-i", "24"},
        {"--op", "AllReduce", "-g", "4", "-d", "float16", "-b", "8", "-e", "64", "-i", "24"},
    };
    for (guint k = 0; k < G_N_ELEMENTS(spellings); k++) {
        const char *args[16] = {"collective", "--topology", "dgx-a100"};
        memcpy(args + 3, spellings[k], sizeof spellings[k]);
        char *out = NULL, *err = NULL;
        CU_ASSERT_EQUAL(ms_test_run_moesim(args, &out, &err), 0);
        CU_ASSERT_STRING_EQUAL(out, mine.out);
        g_free(out);
        g_free(err);
    }
    ms_test_run_clear(&mine);
    /* The element size sets count and rounding: double over 8 ranks of alltoall. */
    MsTestRun r = ms_test_moesim_run("collective", "--op", "all_to_all", "-d", "double", "-b",
                                     "100", "-e", "100", NULL);
    CU_ASSERT_EQUAL(r.rc, 0);
    g_auto(GStrv) a2a = rows(r.out);
    NcclRow row;
    CU_ASSERT_TRUE_FATAL(a2a[0] && parse_row(a2a[0], &row));
    CU_ASSERT_EQUAL(row.count, 1); /* 100 / 8 B = 12 elements, 1 per rank */
    CU_ASSERT_EQUAL(row.size, 64);
    CU_ASSERT_STRING_EQUAL(row.type, "double");
    ms_test_run_clear(&r);
    /* nccl-tests' letters for what the model has not are refused, never read as another option. */
    const char *const refused[] = {"-t", "-n", "-w", "-c", "-o", "-a", "-p", "-z", "-G", "-C"};
    for (guint i = 0; i < G_N_ELEMENTS(refused); i++) {
        r = ms_test_moesim_run("collective", "--op", "allreduce", refused[i], "1", NULL);
        CU_ASSERT_EQUAL(r.rc, 2);
        g_autofree char *want = g_strdup_printf("Unknown option %s", refused[i]);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, want));
        ms_test_run_clear(&r);
    }
}

static void
expect_same_output(const char *const *args)
{
    char *out[2] = {NULL, NULL}, *err[2] = {NULL, NULL};
    for (guint i = 0; i < 2; i++) {
        CU_ASSERT_EQUAL(ms_test_run_moesim(args, &out[i], &err[i]), 0);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(out[0]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out[1]);
    CU_ASSERT_TRUE(strlen(out[0]) > 100);
    CU_ASSERT_STRING_EQUAL(out[0], out[1]);
    for (guint i = 0; i < 2; i++) {
        g_free(out[i]);
        g_free(err[i]);
    }
}

static void
test_determinism(void)
{
    const char *const coll[] = {"collective", "--topology", "dgx-a100-2node",
                                "--op",       "alltoall",   "--algo",
                                "2dh",        "-b",         "1K",
                                "-e",         "64M",        "-f",
                                "4",          NULL};
    expect_same_output(coll);
    const char *const hier[] = {
        "collective", "--topology", "dgx-a100-2node", "--op", "allreduce", "--algo",
        "hier",       "-b",         "1000",           "-e",   "10M",       "-f",
        "3.3",        NULL};
    expect_same_output(hier);
    g_autofree char *path =
        g_build_filename(ms_test_srcdir(), "docs", "examples", "two-flows.txt", NULL);
    const char *const flows[] = {"flows", "--topology", "dgx-a100-2node", path, NULL};
    expect_same_output(flows);
}

static JsonNode *
parse_json(const char *text)
{
    g_autoptr(JsonParser) p = json_parser_new();
    g_autoptr(GError) error = NULL;
    if (!json_parser_load_from_data(p, text, -1, &error)) {
        fprintf(stderr, "\n  not JSON: %s\n", error->message);
        return NULL;
    }
    return json_node_copy(json_parser_get_root(p));
}

static void
test_collective_json(void)
{
    g_autofree char *file = g_build_filename(ms_test_tmpdir(), "coll.json", NULL);
    MsTestRun r = ms_test_moesim_run("collective", "--op", "allgather", "-b", "1M", "-e", "4M",
                                     "--json", file, NULL);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "# Avg bus bandwidth")); /* the table as well */
    g_autofree char *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(file, &text, NULL, NULL));
    g_autoptr(JsonNode) root = parse_json(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    JsonObject *o = json_node_get_object(root);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(o, "op"), "allgather");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(o, "algo"), "ring");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(o, "topology"), "dgx-a100");
    CU_ASSERT_EQUAL(json_object_get_int_member(o, "ranks"), 8);
    JsonArray *rowsj = json_object_get_array_member(o, "rows");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(rowsj), 3);
    JsonObject *row = json_array_get_object_element(rowsj, 2);
    CU_ASSERT_EQUAL(json_object_get_int_member(row, "size"), 4 << 20);
    CU_ASSERT_EQUAL(json_object_get_int_member(row, "count"), (4 << 20) / 32);
    /* allgather of 4 MiB on one node: 7 steps of S/8 at 300 GB/s plus 1.4 us each */
    MS_ASSERT_REL(json_object_get_double_member(row, "time_us"),
                  (7 * (4194304.0 / 8 / 300e9 + 1.4e-6)) * 1e6, 1e-3);
    CU_ASSERT_EQUAL(json_object_get_int_member(row, "flows"), 8 * 7 * 8);
    CU_ASSERT_TRUE(json_object_get_double_member(o, "avg_busbw_gbps") > 0);
    ms_test_run_clear(&r);

    /* "-": standard output is the JSON alone. */
    r = ms_test_moesim_run("collective", "--op", "allgather", "-b", "1M", "-e", "4M", "--json", "-",
                           NULL);
    CU_ASSERT_EQUAL(r.rc, 0);
    g_autoptr(JsonNode) again = parse_json(r.out);
    CU_ASSERT_PTR_NOT_NULL(again);
    CU_ASSERT_TRUE(again && json_node_equal(root, again));
    ms_test_run_clear(&r);
}

static void
test_flows_command(void)
{
    g_autofree char *path =
        g_build_filename(ms_test_srcdir(), "docs", "examples", "two-flows.txt", NULL);
    MsTestRun r = ms_test_moesim_run("flows", "--topology", "dgx-a100-2node", path, NULL);
    CU_ASSERT_EQUAL(r.rc, 0);
    /* f1 and f2 share gpu0's NIC: 50 MB at 25 GB/s after 1.33 us; f3 then 1 MB alone. */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "f1               gpu0       gpu8             25000000"
                                         "        0.000        0.000     2001.330     2001.330"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "f3               gpu8       gpu0              1000000"
                                         "        0.000     2001.330     2042.660       41.330"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "# flows 3, makespan 2042.660 us, events "));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "# wall time"));
    ms_test_run_clear(&r);

    r = ms_test_moesim_run("flows", "--topology", "dgx-a100-2node", "--summary",
                           "--check-invariants", path, NULL);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_TRUE(g_str_has_prefix(r.out, "# flows 3, makespan 2042.660 us"));
    CU_ASSERT_PTR_NULL(strstr(r.out, "gpu0"));
    ms_test_run_clear(&r);

    r = ms_test_moesim_run("flows", "--topology", "dgx-a100-2node", "--json", "-", path, NULL);
    CU_ASSERT_EQUAL(r.rc, 0);
    g_autoptr(JsonNode) root = parse_json(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    JsonObject *o = json_node_get_object(root);
    CU_ASSERT_EQUAL(json_object_get_int_member(o, "flows"), 3);
    MS_ASSERT_REL(json_object_get_double_member(o, "makespan_us"), 2042.66, 1e-9);
    JsonArray *res = json_object_get_array_member(o, "results");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(res), 3);
    JsonObject *f3 = json_array_get_object_element(res, 2);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(f3, "id"), "f3");
    MS_ASSERT_REL(json_object_get_double_member(f3, "begin_us"), 2001.33, 1e-9);
    ms_test_run_clear(&r);

    /* An empty list is fine. */
    g_autofree char *empty = ms_test_write_tmp("empty.txt", "# nothing\n");
    r = ms_test_moesim_run("flows", empty, NULL);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "# flows 0, makespan 0.000 us"));
    ms_test_run_clear(&r);
}

static void
test_help(void)
{
    const char *const cmds[] = {"collective", "flows"};
    for (guint i = 0; i < G_N_ELEMENTS(cmds); i++) {
        MsTestRun r = ms_test_moesim_run(cmds[i], "--help", NULL);
        CU_ASSERT_EQUAL(r.rc, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "Usage:"));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "--topology"));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "--json"));
        ms_test_run_clear(&r);
    }
}

typedef struct {
    const char *args[16];
    const char *needle;
} Bad;

static void
expect_usage(const char *const *args, const char *needle)
{
    char *out = NULL, *err = NULL;
    int rc = ms_test_run_moesim(args, &out, &err);
    CU_ASSERT_EQUAL(rc, 2);
    if (err == NULL || strstr(err, needle) == NULL) {
        fprintf(stderr, "\n  %s %s: stderr '%s' lacks '%s'\n", args[0], args[1] ? args[1] : "",
                err ? err : "(null)", needle);
        CU_FAIL("message lacks expected text");
    }
    g_free(out);
    g_free(err);
}

static void
test_collective_errors(void)
{
    g_autofree char *bad_topo = ms_test_write_tmp(
        "bad.ini",
        "[topology]\nformat = 1\nname = b\n[gpu]\nmodel = X\npeak = 1TFLOPS\n"
        "hbm = 1TBps\nmemory = 1GB\nlaunch_overhead = 1us\n[preset]\nnodes = 1\n"
        "gpus_per_node = 2\nintra = nvswitch\nintra_bandwidth = 300\nintra_latency = 1us\n");
    /* A valid calibration whose efficiency stretches a valid size past the 1 PiB limit: the
     * message says the calibration did it. */
    g_autofree char *stretch = ms_test_write_tmp(
        "stretch.cal", "[calibration]\nformat = 1\n[collective allreduce]\nalpha = 1us\n"
                       "sizes = 1KB;512TiB\nefficiency = 0.01;0.01\n");
    const Bad cases[] = {
        {{"collective", "--op", "allreduce", "-b", "100TiB", "-e", "100TiB", "--calibration",
          stretch, NULL},
         "--calibration: its efficiency at 109951162777600 B stretches the transfer: size "
         "10995116277760000 B is larger than 1 PiB"},
        {{"collective", NULL}, "moesim: collective: --op is required"},
        {{"collective", "--op", "broadcast", NULL}, "unknown --op 'broadcast'"},
        {{"collective", "--op", "allreduce", "--algo", "tree", NULL}, "unknown --algo 'tree'"},
        {{"collective", "--op", "alltoall", "--algo", "ring", NULL},
         "algorithm 'ring' does not apply to alltoall"},
        {{"collective", "--op", "allreduce", "-b", "1M", "-e", "1K", NULL},
         "--minbytes 1048576 is larger than --maxbytes 1024"},
        {{"collective", "--op", "allreduce", "-b", "1X", NULL},
         "--minbytes: size '1X': unknown unit 'X'"},
        {{"collective", "--op", "allreduce", "-e", "-5M", NULL},
         "--maxbytes: size '-5M' out of range"},
        {{"collective", "--op", "allreduce", "-e", "2P", NULL},
         "--maxbytes: size '2P': unknown unit"},
        {{"collective", "--op", "allreduce", "-f", "1", NULL},
         "--stepfactor must be greater than 1"},
        {{"collective", "--op", "allreduce", "-f", "0.5", NULL}, "(got 0.5)"},
        {{"collective", "--op", "allreduce", "-f", "nan", NULL},
         "--stepfactor must be greater than 1"},
        {{"collective", "--op", "allreduce", "-f", "abc", NULL}, "Cannot parse double value"},
        {{"collective", "--op", "allreduce", "-b", "1", "-e", "1G", "-f", "1.0001", NULL},
         "makes more than 10000 sizes"},
        {{"collective", "--op", "allreduce", "--topology", "dgx-z", NULL}, "dgx-z"},
        {{"collective", "--op", "allreduce", "--topology", bad_topo, NULL},
         "bad.ini:14: [preset] intra_bandwidth"},
        {{"collective", "--op", "allreduce", "-g", "9", NULL},
         "--ranks 9 but topology 'dgx-a100' has 8 GPUs"},
        {{"collective", "--op", "allreduce", "-g", "-1", NULL}, "--ranks must be >= 0 (got -1)"},
        {{"collective", "--op", "allreduce", "--channels", "300", NULL},
         "--channels must be between 0 and 256 (got 300)"},
        {{"collective", "--op", "alltoall", "--window", "-2", NULL},
         "--window must be >= 0 (got -2)"},
        {{"collective", "--op", "allreduce", "--alpha", "5", NULL},
         "--alpha: time '5' has no unit"},
        {{"collective", "--op", "allreduce", "--step-delay", "-1us", NULL},
         "--step-delay: time '-1us' out of range"},
        {{"collective", "--op", "alltoall", "--algo", "2dh", "--topology", "dgx-a100-2node", "-g",
          "9", NULL},
         "2dh needs the same number of ranks on every node (9 ranks on 2 nodes)"},
        {{"collective", "--op", "allreduce", "extra", NULL}, "unexpected argument 'extra'"},
        {{"collective", "--bogus", NULL}, "Unknown option --bogus"},
        {{"collective", "--op", "all_reduce_perfx", NULL}, "unknown --op 'all_reduce_perfx'"},
        {{"collective", "--op", "allreduce", "-d", "all", NULL}, "unknown --dtype 'all' (int8,"},
        {{"collective", "--op", "allreduce", "-i", "0", NULL}, "--stepbytes must be at least 1"},
        {{"collective", "--op", "allreduce", "-i", "1x", NULL}, "--stepbytes"},
        {{"collective", "--op", "allreduce", "-b", "1", "-e", "1G", "-i", "1K", NULL},
         "by --stepbytes 1024 makes more than 10000 sizes"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        expect_usage(cases[i].args, cases[i].needle);
    }
}

static void
test_flows_errors(void)
{
    g_autofree char *bad = ms_test_write_tmp("bad-flows.txt", "f1 gpu0 gpu8 25MB 0us\n"
                                                              "f2 gpu0 gpu99 25MB 0us\n");
    g_autofree char *unit = ms_test_write_tmp("unit-flows.txt", "f1 gpu0 gpu7 25 0us\n");
    g_autofree char *cycle = ms_test_write_tmp("cycle-flows.txt", "a 0 1 1MB 0us after=b\n"
                                                                  "b 1 0 1MB 0us after=a\n");
    g_autofree char *ok = ms_test_write_tmp("ok-flows.txt", "f1 gpu0 gpu1 1MB 0us\n");
    const Bad cases[] = {
        {{"flows", NULL}, "flows: expected exactly one FILE"},
        {{"flows", ok, ok, NULL}, "flows: expected exactly one FILE"},
        {{"flows", "/nonexistent/f.txt", NULL}, "/nonexistent/f.txt"},
        {{"flows", "--topology", "dgx-a100-2node", bad, NULL},
         "bad-flows.txt:2: destination: unknown device 'gpu99'"},
        {{"flows", unit, NULL}, "unit-flows.txt:1: bytes: size '25' has no unit"},
        {{"flows", cycle, NULL}, "cycle-flows.txt:1: flow 'a' depends on itself"},
        {{"flows", "--topology", "nowhere", ok, NULL}, "nowhere"},
        {{"flows", "--json", "/nonexistent/dir/out.json", ok, NULL}, "/nonexistent/dir/out.json"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        expect_usage(cases[i].args, cases[i].needle);
    }
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"collective figures and nccl-tests columns", test_collective_figures},
        {"identical output on reruns", test_determinism},
        {"collective: nccl-tests' options, op and type names", test_nccl_tests_habits},
        {"collective --json", test_collective_json},
        {"flows: table, summary, JSON", test_flows_command},
        {"--help", test_help},
        {"collective: bad input exits 2 with a message", test_collective_errors},
        {"flows: bad input exits 2 with a message", test_flows_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"cli_net", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
