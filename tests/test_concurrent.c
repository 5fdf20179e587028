/* Tests of concurrent: all-to-alls and allreduces on two streams, both in readiness order, and
 * (driving the dispatcher) allreduces that run while all-to-alls do, as DeepSpeed's do. */
#include "plan_fixture.h"

static void
test_streams(void)
{
    g_autoptr(MsSchedule) s = fx_plan_contended("concurrent");
    CU_ASSERT_EQUAL(ms_schedule_n_streams(s), 3);
    CU_ASSERT_STRING_EQUAL(ms_schedule_stream_name(s, 1), "a2a");
    CU_ASSERT_STRING_EQUAL(ms_schedule_stream_name(s, 2), "allreduce");
    guint ar = 0;
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        MsOpInfo i = fx_op(s, op);
        if (i.kind == MS_OP_COMM) {
            CU_ASSERT_EQUAL(i.stream, i.role == MS_ROLE_ALLREDUCE ? 2 : 1);
            ar += i.role == MS_ROLE_ALLREDUCE;
        }
    }
    CU_ASSERT_TRUE(ar > 0);
}

static void
test_overlap(void)
{
    g_autoptr(MsSchedule) s = fx_plan_contended("concurrent");
    FxRun run;
    CU_ASSERT_TRUE_FATAL(fx_execute(s, &run));
    g_autoptr(GArray) colls = fx_coll_order(s, &run, NULL, NULL, FX_BY_SEQ);
    CU_ASSERT_EQUAL(fx_inversions(colls, 1), 0);
    CU_ASSERT_EQUAL(fx_inversions(colls, 2), 0);
    /* Allreduces start while all-to-alls wait or run: what Lina's gate forbids. */
    CU_ASSERT_TRUE(fx_gate_violations(s, &run, run.start, run.end) > 0);
    fx_run_clear(&run);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"two communication streams", test_streams},
        {"allreduce overlaps all-to-all", test_overlap},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"concurrent", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
