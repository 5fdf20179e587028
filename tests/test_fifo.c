/* Tests of fifo: one communication stream, nothing partitioned, and (driving the dispatcher)
 * collectives launched in exactly the order they became ready. */
#include "plan_fixture.h"

static void
test_structure(void)
{
    g_autoptr(MsSchedule) s = fx_plan_contended("fifo");
    CU_ASSERT_EQUAL(ms_schedule_n_streams(s), 2);
    CU_ASSERT_EQUAL(ms_schedule_stream_kind(s, 1), MS_STREAM_COMM);
    CU_ASSERT_STRING_EQUAL(ms_schedule_stream_name(s, 1), "comm");
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        MsOpInfo i = fx_op(s, op);
        CU_ASSERT_EQUAL(i.stream, i.kind == MS_OP_COMM ? 1 : 0);
        CU_ASSERT_EQUAL(i.chunk, -1);
        CU_ASSERT_EQUAL(i.flags, 0);
    }
    /* Whole: one dispatch collective per MoE layer and phase. */
    for (gint l = 0; l < 4; l++) {
        g_autoptr(GArray) d = fx_colls(s, MS_ROLE_DISPATCH, MS_PHASE_BACKWARD, l);
        CU_ASSERT_EQUAL(d->len, 1);
    }
}

static void
test_readiness_order(void)
{
    g_autoptr(MsSchedule) s = fx_plan_contended("fifo");
    FxRun run;
    CU_ASSERT_TRUE_FATAL(fx_execute(s, &run));
    g_autoptr(GArray) colls = fx_coll_order(s, &run, NULL, NULL, FX_BY_SEQ);
    CU_ASSERT_EQUAL(fx_inversions(colls, 1), 0);
    fx_run_clear(&run);
    /* The check sees the difference: priority launches all-to-alls ahead of allreduce chunks
     * that became ready before them. */
    g_autoptr(MsSchedule) p = fx_plan_contended("priority:chunk=64KiB");
    CU_ASSERT_TRUE_FATAL(fx_execute(p, &run));
    g_autoptr(GArray) pc = fx_coll_order(p, &run, NULL, NULL, FX_BY_SEQ);
    CU_ASSERT_TRUE(fx_inversions(pc, 1) > 0);
    fx_run_clear(&run);
}

static void
test_simulated(void)
{
    g_autoptr(MsSchedule) s = fx_plan_contended("fifo");
    g_autofree MsTime *start = NULL, *end = NULL;
    CU_ASSERT_TRUE_FATAL(fx_engine_times(s, "dgx-a100", &start, &end));
    g_autoptr(GArray) colls = fx_coll_order(s, NULL, start, end, FX_BY_TIME);
    CU_ASSERT_EQUAL(fx_inversions(colls, 1), 0);
    /* ... and the comm stream never runs two collectives of a GPU at once. */
    for (guint a = 0; a < colls->len; a++) {
        for (guint b = 0; b < colls->len; b++) {
            const FxColl *x = &g_array_index(colls, FxColl, a),
                         *y = &g_array_index(colls, FxColl, b);
            MsCollInfo xi;
            ms_schedule_coll(s, x->coll, &xi);
            CU_ASSERT_FALSE(a != b && x->launch < y->launch && y->launch < end[xi.ops[0]]);
        }
    }
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"one communication stream, whole ops", test_structure},
        {"collectives launch in readiness order", test_readiness_order},
        {"simulated: readiness order, one collective at a time", test_simulated},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"fifo", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
