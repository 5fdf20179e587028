/* Tests of the figures the commands print: the same quantity gives the same number wherever it is
 * printed (plan's all-to-all traffic against run's), units that say what the number is (check's
 * figures in ms under names without a unit suffix), counts asked for that are counts run (no
 * silent replacement of --iterations 0), and the comparison table naming a policy's changed
 * expert-parallel degree. */
#include "ms_test.h"

#include <json-glib/json-glib.h>

/* The text after prefix on the first line of text that starts with it (after leading spaces),
 * up to the end of that line; NULL when no line does. */
static char *
line_after(const char *text, const char *prefix)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (guint i = 0; lines[i]; i++) {
        const char *l = lines[i] + strspn(lines[i], " ");
        if (g_str_has_prefix(l, prefix)) {
            return g_strdup(l + strlen(prefix));
        }
    }
    return NULL;
}

/* plan counted the bytes a GPU keeps for itself as all-to-all traffic, run did not: 9 GiB against
 * 6.755 GiB for Lina's step, whose packed all-to-alls span 4 GPUs (a quarter stays local). */
static void
test_plan_traffic_matches_run(void)
{
    static const char *const policies[] = {"fifo", "lina"};
    for (guint k = 0; k < G_N_ELEMENTS(policies); k++) {
        g_autofree char *out = g_build_filename(ms_test_tmpdir(), "step.json", NULL);
        g_auto(MsTestRun) plan =
            ms_test_moesim_run("plan", "--policy", policies[k], "--out", out, NULL);
        g_auto(MsTestRun) run = ms_test_moesim_run("run", "--policy", policies[k], NULL);
        CU_ASSERT_EQUAL_FATAL(plan.rc, 0);
        CU_ASSERT_EQUAL_FATAL(run.rc, 0);
        /* "traffic     all-to-all 24 (8.438 GiB between GPUs), ..." */
        g_autofree char *traffic = line_after(plan.out, "traffic     all-to-all ");
        g_autofree char *sent = line_after(run.out, "all-to-all traffic");
        CU_ASSERT_PTR_NOT_NULL_FATAL(traffic);
        CU_ASSERT_PTR_NOT_NULL_FATAL(sent);
        g_strstrip(sent);
        /* "8.438 GiB per iteration" -> "8.438 GiB" */
        *strstr(sent, " per iteration") = '\0';
        g_autofree char *want = g_strdup_printf("(%s between GPUs", sent);
        if (strstr(traffic, want) == NULL) {
            fprintf(stderr, "\n  plan: '%s', run: '%s'\n", traffic, sent);
            CU_FAIL("plan's all-to-all traffic differs from run's");
        }
    }
    /* Lina's figure as the docs quote it. */
    g_auto(MsTestRun) lina = ms_test_moesim_run("run", "--policy", "lina", NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(lina.out, "6.755 GiB per iteration"));
}

/* check printed "step_time_us  236.898 ms": a name in microseconds beside a figure in ms; and
 * "-0.00%" for no change. */
static void
test_check_units(void)
{
    g_autofree char *base = ms_test_write_tmp(
        "baseline.json",
        "{\"format\": \"moesim-baseline\", \"version\": 1, \"scenarios\": [{\"name\": \"small\", "
        "\"topology\": \"dgx-a100\", \"model\": \"switch-base-8\", \"policy\": \"fifo\", "
        "\"expect\": {\"step_time_us\": 1, \"a2a_us\": 1, \"exposed_comm_us\": 1}}]}");
    g_auto(MsTestRun) update = ms_test_moesim_run("check", "--baseline", base, "--update", NULL);
    CU_ASSERT_EQUAL_FATAL(update.rc, 0);
    g_auto(MsTestRun) r = ms_test_moesim_run("check", "--baseline", base, NULL);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NULL(strstr(r.out, "_us "));
    CU_ASSERT_PTR_NULL(strstr(r.out, "-0.00%"));
    g_autofree char *step = line_after(r.out, "small");
    CU_ASSERT_PTR_NOT_NULL_FATAL(step);
    /* "step time  16.100 ms ->  16.100 ms  +0.00%  ok" */
    CU_ASSERT_TRUE(g_str_has_prefix(g_strstrip(step), "step time "));
    CU_ASSERT_PTR_NOT_NULL(strstr(step, " ms -> "));
    CU_ASSERT_PTR_NOT_NULL(strstr(step, "+0.00%  ok"));
    g_autofree char *a2a = line_after(r.out, "all-to-all ");
    g_autofree char *exposed = line_after(r.out, "exposed communication ");
    CU_ASSERT_PTR_NOT_NULL(a2a);
    CU_ASSERT_PTR_NOT_NULL(exposed);
    /* The column heads say the unit once. */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "baseline (ms)"));
}

/* --iterations 0 ran one iteration as if it had been asked for; it is refused now, in every
 * command that takes it, and leaving it out keeps the default. */
static void
test_iterations_zero_refused(void)
{
    static const char *const commands[] = {"run", "compare"};
    for (guint k = 0; k < G_N_ELEMENTS(commands); k++) {
        g_auto(MsTestRun) r = ms_test_moesim_run(commands[k], "--iterations", "0", "--model",
                                                 "switch-base-8", "--topology", "dgx-a100", NULL);
        CU_ASSERT_EQUAL(r.rc, 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--iterations 0"));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "at least 1"));
    }
    g_auto(MsTestRun) one =
        ms_test_moesim_run("run", "--model", "switch-base-8", "--topology", "dgx-a100", NULL);
    CU_ASSERT_EQUAL(one.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(one.out, ", 1 iteration\n"));
    g_auto(MsTestRun) two = ms_test_moesim_run("run", "-n", "2", "--model", "switch-base-8",
                                               "--topology", "dgx-a100", NULL);
    CU_ASSERT_EQUAL(two.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(two.out, ", 2 iterations\n"));
}

/* Lina's all-to-all column (1.7 ms against 162 ms) hid that packing made its all-to-alls span 4
 * GPUs instead of 16: the table has the degree and a note says why it changed. */
static void
test_compare_names_expert_parallel_degree(void)
{
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "cmp", NULL);
    g_auto(MsTestRun) r =
        ms_test_moesim_run("compare", "--policies", "fifo,lina", "--out", dir, NULL);
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    g_autofree char *head = line_after(r.out, "policy ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(head);
    CU_ASSERT_PTR_NOT_NULL(strstr(head, " ep "));
    g_autofree char *fifo = line_after(r.out, "fifo ");
    g_autofree char *lina = line_after(r.out, "lina ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fifo);
    CU_ASSERT_PTR_NOT_NULL_FATAL(lina);
    /* step, ep, a2a ...: the degree follows the step time */
    CU_ASSERT_PTR_NOT_NULL(strstr(fifo, " 16 "));
    CU_ASSERT_PTR_NOT_NULL(strstr(lina, "  4 "));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "lina: expert-parallel degree 4, not 16"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "one chunk's expert compute outlasts its all-to-all"));
    /* compare.json has it too */
    g_autofree char *json = g_build_filename(dir, "compare.json", NULL);
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_file(p, json, NULL));
    JsonArray *rows =
        json_object_get_array_member(json_node_get_object(json_parser_get_root(p)), "policies");
    CU_ASSERT_EQUAL(json_object_get_int_member(json_array_get_object_element(rows, 0), "ep"), 16);
    CU_ASSERT_EQUAL(json_object_get_int_member(json_array_get_object_element(rows, 1), "ep"), 4);
    /* Without a changed degree there is no note. */
    g_auto(MsTestRun) same =
        ms_test_moesim_run("compare", "--policies", "fifo,priority", "--out", dir, NULL);
    CU_ASSERT_EQUAL(same.rc, 0);
    CU_ASSERT_PTR_NULL(strstr(same.out, "expert-parallel degree"));
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"plan's all-to-all traffic is run's", test_plan_traffic_matches_run},
        {"check's figures in ms under plain names", test_check_units},
        {"--iterations 0 is refused", test_iterations_zero_refused},
        {"compare names a changed expert-parallel degree",
         test_compare_names_expert_parallel_degree},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"cli figures", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
