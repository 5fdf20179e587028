/* Tests of the what-ifs of run, compare and sweep. `--straggler GPU=FACTOR` end to end: the
 * default study with one GPU slowed takes longer, its peers wait longer for it, the header and the
 * result's notes say so, the sweep and compare commands take it too, and a backend refuses it.
 * `--slow-link LINK=FACTOR`: a transfer over the link in closed form, the default study, the
 * refusals. */
#include "ms_test.h"

#include <json-glib/json-glib.h>

#include "sim/net/collective.h"

/* The summary figure of a run's result JSON. */
static double
summary(const char *json, const char *key)
{
    g_autoptr(JsonParser) p = json_parser_new();
    g_assert(json_parser_load_from_data(p, json, -1, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    return json_object_get_double_member(json_object_get_object_member(o, "summary"), key);
}

/* The duration of the op of that label on that GPU in a run's result JSON. */
static double
op_us(const char *json, const char *label, gint64 rank)
{
    g_autoptr(JsonParser) p = json_parser_new();
    g_assert(json_parser_load_from_data(p, json, -1, NULL));
    JsonArray *ops =
        json_object_get_array_member(json_node_get_object(json_parser_get_root(p)), "ops");
    for (guint i = 0; i < json_array_get_length(ops); i++) {
        JsonObject *o = json_array_get_object_element(ops, i);
        if (!strcmp(json_object_get_string_member(o, "label"), label) &&
            json_object_get_int_member(o, "rank") == rank) {
            return json_object_get_double_member(o, "end_us") -
                   json_object_get_double_member(o, "start_us");
        }
    }
    g_assert_not_reached();
}

static void
test_slower_gpu(void)
{
    g_auto(MsTestRun) base = ms_test_moesim_run("run", "--json", "-", NULL);
    g_auto(MsTestRun) slow = ms_test_moesim_run("run", "--straggler", "4=1.5", "--json", "-", NULL);
    CU_ASSERT_EQUAL_FATAL(base.rc, 0);
    CU_ASSERT_EQUAL_FATAL(slow.rc, 0);
    /* GPU 4 computes half as long again: the step grows by at most its extra compute, and the
     * others wait for it. */
    double step0 = summary(base.out, "step_time_us"), step1 = summary(slow.out, "step_time_us");
    CU_ASSERT_TRUE(step1 > step0);
    /* GPU 4's attention takes 1.5x its body and the same 4 us launch; GPU 0's is unchanged. */
    double a0 = op_us(base.out, "L0.fwd.attn", 4), a1 = op_us(slow.out, "L0.fwd.attn", 4);
    MS_ASSERT_REL(a1 - 4, 1.5 * (a0 - 4), 1e-6);
    CU_ASSERT_EQUAL(op_us(slow.out, "L0.fwd.attn", 0), op_us(base.out, "L0.fwd.attn", 0));
    CU_ASSERT_TRUE(summary(slow.out, "comm_wait_us") > summary(base.out, "comm_wait_us"));
    CU_ASSERT_PTR_NOT_NULL(strstr(slow.out, "straggler: GPU 4's kernels take 1.5x their time"));
    CU_ASSERT_PTR_NULL(strstr(base.out, "straggler"));
    g_auto(MsTestRun) text = ms_test_moesim_run("run", "--straggler", "4=1.5", NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(text.out, "nominal figures, straggler 4=1.5, policy fifo"));
    /* Several, and a factor of 1: the same as none. */
    g_auto(MsTestRun) one =
        ms_test_moesim_run("run", "--straggler", "4=1,9=1", "--json", "-", NULL);
    CU_ASSERT_EQUAL(summary(one.out, "step_time_us"), step0);
}

static void
test_other_commands(void)
{
    g_autofree char *cdir = g_build_filename(ms_test_tmpdir(), "compare", NULL);
    g_auto(MsTestRun) cmp = ms_test_moesim_run("compare", "--policies", "fifo,lina", "--straggler",
                                               "4=1.5", "--out", cdir, NULL);
    CU_ASSERT_EQUAL(cmp.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(cmp.out, "straggler 4=1.5"));
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "sweep", NULL);
    g_auto(MsTestRun) sw = ms_test_moesim_run("sweep", "--vary", "policy=fifo", "--straggler",
                                              "4=1.5", "--out", dir, NULL);
    CU_ASSERT_EQUAL(sw.rc, 0);
    g_autofree char *csv = g_build_filename(dir, "sweep.csv", NULL), *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(csv, &text, NULL, NULL));
    g_auto(MsTestRun) run = ms_test_moesim_run("run", "--straggler", "4=1.5", "--json", "-", NULL);
    g_autofree char *step = g_strdup_printf(",%.3f,", summary(run.out, "step_time_us"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, step));
    g_auto(MsTestRun) backend =
        ms_test_moesim_run("run", "--backend", "cpu", "--straggler", "1=2", NULL);
    CU_ASSERT_EQUAL(backend.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(backend.err, "does not go with --backend cpu"));
}

/* The CSV row of a sweep point: its first fields are the point and its axes' values. */
static char *
csv_row(const char *text, const char *prefix)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (guint i = 0; lines[i]; i++) {
        if (g_str_has_prefix(lines[i], prefix)) {
            return g_strdup(lines[i]);
        }
    }
    return NULL;
}

/* A sweep's command line refused before anything runs (exit 2, the message holding needle). */
typedef struct {
    const char *args[10];
    const char *needle;
} Refusal;

static void
refusals(Refusal *bad, guint n_bad)
{
    for (guint i = 0; i < n_bad; i++) {
        g_autofree char *out = g_build_filename(ms_test_tmpdir(), "sweep-bad", NULL);
        guint n = 0;
        while (bad[i].args[n]) {
            n++;
        }
        bad[i].args[n] = "--out";
        bad[i].args[n + 1] = out;
        g_auto(MsTestRun) r = {0};
        r.rc = ms_test_run_moesim(bad[i].args, &r.out, &r.err);
        CU_ASSERT_EQUAL(r.rc, 2);
        if (strstr(r.err, bad[i].needle) == NULL) {
            fprintf(stderr, "\n  expected '%s' in: %s\n", bad[i].needle, r.err);
            CU_FAIL("unexpected refusal");
        }
    }
}

/* --vary straggler: each value is a --straggler one, and each row is that run's, to the CSV's
 * precision (the engine takes the point's pace through the runner); a bad value, the option and
 * the axis together, the axis beside a topology axis or a backend are refused before anything
 * runs. */
static void
test_straggler_axis(void)
{
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "sweep-straggler", NULL);
    g_auto(MsTestRun) sw =
        ms_test_moesim_run("sweep", "--vary", "straggler=4=1;4=1.5;4=1.2,11=1.1", "--vary",
                           "policy=fifo,lina", "--jobs", "2", "--out", dir, "--json", "-", NULL);
    CU_ASSERT_EQUAL_FATAL(sw.rc, 0);
    g_autofree char *csv = g_build_filename(dir, "sweep.csv", NULL), *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(csv, &text, NULL, NULL));
    static const struct {
        const char *row, *straggler, *policy;
    } cases[] = {
        {"0,4=1,fifo,", NULL, "fifo"},
        {"3,4=1.5,lina,", "4=1.5", "lina"},
        {"4,\"4=1.2,11=1.1\",fifo,", "4=1.2,11=1.1", "fifo"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *row = csv_row(text, cases[i].row);
        CU_ASSERT_PTR_NOT_NULL_FATAL(row);
        g_auto(MsTestRun) run =
            cases[i].straggler
                ? ms_test_moesim_run("run", "-P", cases[i].policy, "--straggler",
                                     cases[i].straggler, "--json", "-", NULL)
                : ms_test_moesim_run("run", "-P", cases[i].policy, "--json", "-", NULL);
        CU_ASSERT_EQUAL_FATAL(run.rc, 0);
        g_autofree char *step = g_strdup_printf(",%.3f,", summary(run.out, "step_time_us"));
        CU_ASSERT_PTR_NOT_NULL(strstr(row, step));
    }
    /* The slower GPU's rows take longer than the baseline's. */
    g_autofree char *base = csv_row(text, "0,"), *slow = csv_row(text, "2,");
    CU_ASSERT_FATAL(base && slow);
    g_auto(GStrv) b = g_strsplit(base, ",", -1), f = g_strsplit(slow, ",", -1);
    CU_ASSERT_TRUE(g_ascii_strtod(f[4], NULL) > g_ascii_strtod(b[4], NULL));
    Refusal bad[] = {
        {{"sweep", "--vary", "straggler=4=0.5", NULL},
         "sweep: straggler '4=0.5': the factor must be between 1 and 10"},
        {{"sweep", "--vary", "straggler=16=2", NULL},
         "sweep: straggler '16=2': GPU 16 is not among the 16 GPUs the run uses"},
        {{"sweep", "--vary", "straggler=4=2", "--gpus", "4", NULL},
         "GPU 4 is not among the 4 GPUs the run uses"},
        {{"sweep", "--vary", "straggler=4", NULL}, "sweep: straggler '4': give GPU=FACTOR"},
        {{"sweep", "--vary", "straggler=4=2", "--straggler", "4=1.5", NULL},
         "--straggler and --vary straggler both set the GPUs' pace"},
        {{"sweep", "--vary", "straggler=4=2", "--vary", "nodes=2,4", NULL},
         "--vary straggler names GPUs of one topology: it does not go with --vary nodes"},
        {{"sweep", "--vary", "straggler=1=2", "--backend", "cpu", NULL},
         "--vary straggler slows the simulator's GPUs: it does not go with --backend cpu"},
    };
    refusals(bad, G_N_ELEMENTS(bad));
}

/* One transfer from GPU 0 to GPU 4 (node 0 to node 1 of lina-testbed, bounded by the NIC): with
 * node 0's NIC at half its rate it takes B / bw longer, B / bw being its time on the NIC before. */
static void
test_slow_link_closed_form(void)
{
    g_autoptr(MsTopology) topo = ms_topology_load("lina-testbed", NULL);
    g_assert(topo);
    static const guint ranks[2] = {0, 4};
    const guint64 bytes = 100 << 20, matrix[4] = {0, bytes, 0, 0};
    MsCollSpec spec = {.op = MS_COLL_ALLTOALL, .n_ranks = 2, .ranks = ranks, .matrix = matrix};
    MsTime before = 0, after = 0;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_coll_run_alone(topo, &spec, &before, &error));
    guint l = 0;
    while (strcmp(ms_topology_link(topo, l)->name, "n0.nic0->fabric") != 0) {
        l++;
    }
    double bw = ms_topology_link(topo, l)->bandwidth;
    ms_topology_slow_link(topo, l, 2);
    MS_ASSERT_REL(ms_topology_link(topo, l)->bandwidth, bw / 2, 1e-15);
    CU_ASSERT_TRUE_FATAL(ms_coll_run_alone(topo, &spec, &after, &error));
    MS_ASSERT_REL((double)(after - before), bytes / bw * 1e12, 1e-9);
}

static void
test_slow_link_cli(void)
{
    g_auto(MsTestRun) base = ms_test_moesim_run("run", "--json", "-", NULL);
    g_auto(MsTestRun) slow =
        ms_test_moesim_run("run", "--slow-link", "n0.nic0->fabric=2", "--json", "-", NULL);
    CU_ASSERT_EQUAL_FATAL(slow.rc, 0);
    /* Every all-to-all crosses node 0's NIC: the step grows, and the others wait for node 0. */
    CU_ASSERT_TRUE(summary(slow.out, "step_time_us") > 1.5 * summary(base.out, "step_time_us"));
    CU_ASSERT_TRUE(summary(slow.out, "comm_wait_us") > summary(base.out, "comm_wait_us"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(slow.out, "slow link: n0.nic0->fabric at 1/2 of its bandwidth, 6.25 GB/s"));
    g_auto(MsTestRun) text = ms_test_moesim_run("run", "--slow-link", "n0.nic0->fabric=2", NULL);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(text.out, "nominal figures, slow link n0.nic0->fabric=2, policy"));
    static const struct {
        const char *value, *message;
    } bad[] = {
        {"n9.nic0->fabric=2", "topology 'lina-testbed' has no link 'n9.nic0->fabric'"},
        {"n0.nic0->fabric", "give LINK=FACTOR"},
        {"n0.nic0->fabric=0.5", "the factor must be between 1 and 10"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_auto(MsTestRun) r = ms_test_moesim_run("run", "--slow-link", bad[i].value, NULL);
        CU_ASSERT_EQUAL(r.rc, 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, bad[i].message));
    }
    g_auto(MsTestRun) unlimited =
        ms_test_moesim_run("run", "--topology", "dgx-a100", "--slow-link", "gpu0->n0.nic0=2", NULL);
    CU_ASSERT_EQUAL(unlimited.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(unlimited.err, "has unlimited bandwidth"));
    /* Symmetric classes map links of equal bandwidth onto each other only: with one NIC slowed
     * they give the flow-by-flow step. */
    const char *engines[] = {"classes", "flows"};
    double step[2];
    for (guint k = 0; k < 2; k++) {
        g_auto(MsTestRun) r =
            ms_test_moesim_run("run", "-t", "dgx-a100-4node", "-m", "switch-base-8", "--engine",
                               engines[k], "--slow-link", "n0.nic0->fabric=2", "--json", "-", NULL);
        CU_ASSERT_EQUAL_FATAL(r.rc, 0);
        step[k] = summary(r.out, "step_time_us");
    }
    MS_ASSERT_REL(step[0], step[1], 1e-9);
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "sweep-topo", NULL);
    g_auto(MsTestRun) sw = ms_test_moesim_run("sweep", "--vary", "nodes=2,4", "--slow-link",
                                              "n0.nic0->fabric=2", "--out", dir, NULL);
    CU_ASSERT_EQUAL(sw.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(sw.err, "it does not go with --vary nodes"));
}

/* --vary slow-link: each value is a --slow-link one, slowing its own copy of the topology before
 * the point plans, so that each row is that run's to the CSV's precision; a slower NIC's rows take
 * longer; a bad value, the option and the axis together, the axis beside a nodes axis or a
 * backend are refused before anything runs. */
static void
test_slow_link_axis(void)
{
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "sweep-slow-link", NULL);
    g_auto(MsTestRun) sw = ms_test_moesim_run(
        "sweep", "--vary", "slow-link=n0.nic0->fabric=1;n0.nic0->fabric=2,n1.nic0->fabric=1.5",
        "--vary", "policy=fifo,lina", "--jobs", "2", "--out", dir, NULL);
    CU_ASSERT_EQUAL_FATAL(sw.rc, 0);
    g_autofree char *csv = g_build_filename(dir, "sweep.csv", NULL), *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(csv, &text, NULL, NULL));
    static const struct {
        const char *row, *slow, *policy;
    } cases[] = {
        {"0,n0.nic0->fabric=1,fifo,", "n0.nic0->fabric=1", "fifo"},
        {"3,\"n0.nic0->fabric=2,n1.nic0->fabric=1.5\",lina,",
         "n0.nic0->fabric=2,n1.nic0->fabric=1.5", "lina"},
    };
    double step[2];
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *row = csv_row(text, cases[i].row);
        CU_ASSERT_PTR_NOT_NULL_FATAL(row);
        g_auto(MsTestRun) run = ms_test_moesim_run("run", "-P", cases[i].policy, "--slow-link",
                                                   cases[i].slow, "--json", "-", NULL);
        CU_ASSERT_EQUAL_FATAL(run.rc, 0);
        step[i] = summary(run.out, "step_time_us");
        g_autofree char *want = g_strdup_printf(",%.3f,", step[i]);
        CU_ASSERT_PTR_NOT_NULL(strstr(row, want));
    }
    /* Every all-to-all crosses node 0's NIC: at half its rate fifo's step is much longer. */
    g_autofree char *base = csv_row(text, "0,"), *slow = csv_row(text, "2,");
    CU_ASSERT_FATAL(base && slow);
    g_auto(GStrv) b = g_strsplit(base, ",", -1), f = g_strsplit(slow, ",", -1);
    /* The slow row's quoted value holds a ',': its step is the sixth piece, the base's the fifth.
     */
    CU_ASSERT_TRUE(g_ascii_strtod(f[5], NULL) > 1.5 * g_ascii_strtod(b[4], NULL));
    Refusal bad[] = {
        {{"sweep", "--vary", "slow-link=n9.nic0->fabric=2", NULL},
         "sweep: slow-link 'n9.nic0->fabric=2': topology 'lina-testbed' has no link "
         "'n9.nic0->fabric'"},
        {{"sweep", "--vary", "slow-link=n0.nic0->fabric=0.5", NULL},
         "sweep: slow-link 'n0.nic0->fabric=0.5': the factor must be between 1 and 10"},
        {{"sweep", "--vary", "slow-link=n0.nic0->fabric=2", "--slow-link", "n0.nic0->fabric=3",
          NULL},
         "--slow-link and --vary slow-link both slow links"},
        {{"sweep", "--vary", "slow-link=n0.nic0->fabric=2", "--vary",
          "topology=lina-testbed,dgx-a100-2node", NULL},
         "--vary slow-link names links of one topology: it does not go with --vary topology"},
        {{"sweep", "--vary", "slow-link=n3.nic0->fabric=2", "--vary", "nodes=2,4", NULL},
         "sweep: slow-link 'n3.nic0->fabric=2': topology 'lina-testbed-nodes2' has no link"},
        {{"sweep", "--vary", "slow-link=n0.nic0->fabric=2", "--backend", "cpu", NULL},
         "--vary slow-link slows the simulator's links: it does not go with --backend cpu"},
    };
    refusals(bad, G_N_ELEMENTS(bad));
    /* Beside a nodes axis each variant has its own slowed copy: the 4-node rows are the shipped
     * testbed's runs. */
    g_autofree char *nodes_dir = g_build_filename(ms_test_tmpdir(), "sweep-slow-nodes", NULL);
    g_auto(MsTestRun) nodes =
        ms_test_moesim_run("sweep", "--vary", "slow-link=n0.nic0->fabric=1;n0.nic0->fabric=2",
                           "--vary", "nodes=2,4", "--out", nodes_dir, NULL);
    CU_ASSERT_EQUAL_FATAL(nodes.rc, 0);
    g_autofree char *nodes_csv = g_build_filename(nodes_dir, "sweep.csv", NULL), *rows = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(nodes_csv, &rows, NULL, NULL));
    g_autofree char *four = csv_row(rows, "3,n0.nic0->fabric=2,4,"), *two = csv_row(rows, "2,");
    CU_ASSERT_FATAL(four && two);
    g_auto(MsTestRun) run =
        ms_test_moesim_run("run", "--slow-link", "n0.nic0->fabric=2", "--json", "-", NULL);
    CU_ASSERT_EQUAL_FATAL(run.rc, 0);
    g_autofree char *want = g_strdup_printf(",%.3f,", summary(run.out, "step_time_us"));
    CU_ASSERT_PTR_NOT_NULL(strstr(four, want));
    /* The 2-node variant is slowed too: its row is not the unslowed one's. */
    g_autofree char *two_base = csv_row(rows, "0,");
    CU_ASSERT_FATAL(two_base != NULL);
    g_auto(GStrv) unslowed = g_strsplit(two_base, ",", -1), slowed = g_strsplit(two, ",", -1);
    CU_ASSERT_TRUE(g_ascii_strtod(slowed[4], NULL) > 1.2 * g_ascii_strtod(unslowed[4], NULL));
}

/* --vary net: each value a --net spec, the point's network model through the runner; each row is
 * that run's, to the CSV's precision; the axis and the option together, a bad spec, a backend are
 * refused before anything runs. */
static void
test_net_axis(void)
{
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "sweep-net", NULL);
    g_auto(MsTestRun) sw = ms_test_moesim_run(
        "sweep", "--vary", "net=flow;nccl:version=2.10;nccl:version=2.10,arbitration=connection",
        "--vary", "policy=concurrent", "--out", dir, NULL);
    CU_ASSERT_EQUAL_FATAL(sw.rc, 0);
    g_autofree char *csv = g_build_filename(dir, "sweep.csv", NULL), *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(csv, &text, NULL, NULL));
    static const struct {
        const char *row, *net;
    } cases[] = {
        {"0,flow,concurrent,", "flow"},
        {"1,nccl:version=2.10,concurrent,", "nccl:version=2.10"},
        {"2,\"nccl:version=2.10,arbitration=connection\",concurrent,",
         "nccl:version=2.10,arbitration=connection"},
    };
    double step[3];
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *row = csv_row(text, cases[i].row);
        CU_ASSERT_PTR_NOT_NULL_FATAL(row);
        g_auto(MsTestRun) run = ms_test_moesim_run("run", "-P", "concurrent", "--net", cases[i].net,
                                                   "--json", "-", NULL);
        CU_ASSERT_EQUAL_FATAL(run.rc, 0);
        step[i] = summary(run.out, "step_time_us");
        g_autofree char *want = g_strdup_printf(",%.3f,", step[i]);
        CU_ASSERT_PTR_NOT_NULL(strstr(row, want));
    }
    /* The models differ here (the NIC's arbitration is what slows DeepSpeed's all-to-all). */
    CU_ASSERT(step[1] > step[2] && step[1] > step[0]);
    Refusal bad[] = {
        {{"sweep", "--vary", "net=flow;nccl:version=2.7", NULL}, "sweep: net=nccl:version=2.7:"},
        {{"sweep", "--vary", "net=flow", "--net", "nccl", NULL},
         "--net and --vary net both choose the network model"},
        {{"sweep", "--vary", "net=flow", "--backend", "cpu", NULL},
         "--vary net chooses the simulator's network model: it does not go with --backend cpu"},
    };
    refusals(bad, G_N_ELEMENTS(bad));
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"a slower GPU: a longer step, longer waits, said in the notes", test_slower_gpu},
        {"compare and sweep take it, a backend refuses it", test_other_commands},
        {"a sweep varies the straggler: each row is its run", test_straggler_axis},
        {"a slow link in closed form", test_slow_link_closed_form},
        {"a slow link from the command line, and its refusals", test_slow_link_cli},
        {"a sweep varies a slow link: each row is its run", test_slow_link_axis},
        {"a sweep varies the network model: each row is its run", test_net_axis},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"what_ifs", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
