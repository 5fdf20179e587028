/* Tests of `moesim run --straggler GPU=FACTOR` end to end: the default study with one GPU slowed
 * takes longer, its peers wait longer for it, the header and the result's notes say so, the
 * sweep and compare commands take it too, and a backend refuses it. */
#include "ms_test.h"

#include <json-glib/json-glib.h>

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

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"a slower GPU: a longer step, longer waits, said in the notes", test_slower_gpu},
        {"compare and sweep take it, a backend refuses it", test_other_commands},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"cli_straggler", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
