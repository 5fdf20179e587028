/* Tests of `moesim run --link-timeline LINK`: its refusals (no --plot DIR, a link the topology
 * lacks or of unlimited bandwidth, a backend), and what it writes for Lina's case (lina-testbed,
 * the concurrent policy under NCCL 2.10): the CSV's header, rates that never exceed the NIC, and
 * the connections of the all-to-all and the allreduce on node 0's NIC while they overlap. */
#include "ms_test.h"

#include <math.h>

static void
test_refusals(void)
{
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "refused", NULL);
    g_auto(MsTestRun) no_plot =
        ms_test_moesim_run("run", "--link-timeline", "n0.nic0->fabric", NULL);
    CU_ASSERT_EQUAL(no_plot.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(no_plot.err, "--link-timeline writes into the --plot DIR"));
    g_auto(MsTestRun) unknown =
        ms_test_moesim_run("run", "--plot", dir, "--link-timeline", "n9.nic0->fabric", NULL);
    CU_ASSERT_EQUAL(unknown.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(unknown.err, "topology 'lina-testbed' has no link 'n9.nic0->fabric'"));
    g_auto(MsTestRun) backend = ms_test_moesim_run("run", "--plot", dir, "--backend", "cpu",
                                                   "--link-timeline", "n0.nic0->fabric", NULL);
    CU_ASSERT_EQUAL(backend.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(backend.err, "does not go with --backend cpu"));
    /* dgx-a100 leaves the GPU-to-NIC path unlimited: nothing is shared there. */
    g_auto(MsTestRun) unlimited = ms_test_moesim_run("run", "--topology", "dgx-a100", "--plot", dir,
                                                     "--link-timeline", "gpu0->n0.nic0", NULL);
    CU_ASSERT_EQUAL(unlimited.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(unlimited.err, "link 'gpu0->n0.nic0' has unlimited bandwidth"));
    CU_ASSERT_FALSE(g_file_test(dir, G_FILE_TEST_EXISTS));
}

typedef struct {
    double rate;
    char *op, *kind;
} Flow;

static void
flow_clear(gpointer p)
{
    Flow *f = p;
    g_free(f->op);
    g_free(f->kind);
}

static void
test_lina_case(void)
{
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "lina", NULL);
    g_auto(MsTestRun) run =
        ms_test_moesim_run("run", "--policy", "concurrent", "--net", "nccl:version=2.10", "--plot",
                           dir, "--link-timeline", "n0.nic0->fabric", NULL);
    CU_ASSERT_EQUAL_FATAL(run.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(run.out, "from the first all-to-all sharing the link with an "
                                           "allreduce, L11.bwd.combine"));
    g_autofree char *csv = g_build_filename(dir, "link-timeline.csv", NULL);
    g_autofree char *png = g_build_filename(dir, "link-timeline.png.gp", NULL);
    CU_ASSERT_TRUE(g_file_test(png, G_FILE_TEST_EXISTS));
    g_autofree char *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(csv, &text, NULL, NULL));
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    CU_ASSERT_STRING_EQUAL(lines[0],
                           "# moesim-link-timeline 1 link n0.nic0->fabric capacity_GBps 12.500000");
    CU_ASSERT_STRING_EQUAL(lines[1], "time_us,flow,rate_GBps,op,kind,connection");
    /* Replay the steps: at the end of every instant the flows' rates sum to at most the NIC's
     * 12.5 GB/s; when the all-to-all L11.bwd.combine first moves beside the allreduce, node 0's
     * 4 GPUs send to the 12 GPUs of the other nodes (48 flows, one connection each in NCCL 2.10)
     * and the ring crosses the NIC on 2 channels, as docs/collectives.md reads the figure. */
    g_autoptr(GArray) flows = g_array_new(FALSE, TRUE, sizeof(Flow));
    g_array_set_clear_func(flows, flow_clear);
    double worst = 0;
    guint a2a_at_overlap = 0, ring_at_overlap = 0;
    guint n = g_strv_length(lines);
    for (guint i = 2; i + 1 < n; i++) {
        g_auto(GStrv) c = g_strsplit(lines[i], ",", 6);
        CU_ASSERT_EQUAL_FATAL(g_strv_length(c), 6);
        guint id = (guint)g_ascii_strtoull(c[1], NULL, 10);
        if (id >= flows->len) {
            g_array_set_size(flows, id + 1);
        }
        Flow *f = &g_array_index(flows, Flow, id);
        f->rate = g_ascii_strtod(c[2], NULL);
        if (f->op == NULL) {
            f->op = g_strdup(c[3]);
            f->kind = g_strdup(c[4]);
        }
        g_auto(GStrv) next = i + 2 < n ? g_strsplit(lines[i + 1], ",", 2) : NULL;
        if (next && !strcmp(next[0], c[0])) {
            continue; /* the instant goes on */
        }
        double sum = 0;
        guint a2a = 0, ring = 0;
        for (guint k = 0; k < flows->len; k++) {
            const Flow *x = &g_array_index(flows, Flow, k);
            sum += x->rate;
            a2a += x->rate > 0 && x->op && !strcmp(x->op, "L11.bwd.combine");
            ring += x->rate > 0 && x->kind && !strcmp(x->kind, "allreduce");
        }
        worst = MAX(worst, sum);
        if (a2a_at_overlap == 0 && a2a && ring) {
            a2a_at_overlap = a2a;
            ring_at_overlap = ring;
        }
    }
    CU_ASSERT_TRUE(worst <= 12.5 * (1 + 1e-6));
    CU_ASSERT_TRUE(worst >= 12.5 * (1 - 1e-6)); /* and the NIC is saturated at times */
    CU_ASSERT_EQUAL(a2a_at_overlap, 48);
    CU_ASSERT_EQUAL(ring_at_overlap, 2);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"refusals: no --plot, unknown or unlimited link, a backend", test_refusals},
        {"Lina's case on node 0's NIC", test_lina_case},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"cli link timeline", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
