/* Tests of priority: equal chunks of the given size, all-to-alls ahead of allreduces and
 * earlier layers first among allreduce chunks, both in the priorities and (driving the
 * dispatcher) in launch order. */
#include "plan_fixture.h"
#include "sim/policy/priority.h"

static void
test_key(void)
{
    CU_ASSERT_EQUAL(ms_priority_comm(MS_ROLE_DISPATCH, 3, 17), 17);
    CU_ASSERT_EQUAL(ms_priority_comm(MS_ROLE_WEIGHTS, 3, 17), 17);
    gint64 ar0 = ms_priority_comm(MS_ROLE_ALLREDUCE, 0, 900);
    gint64 ar1 = ms_priority_comm(MS_ROLE_ALLREDUCE, 1, 5);
    CU_ASSERT_TRUE(ms_priority_comm(MS_ROLE_COMBINE, 4095, 1000000) < ar0);
    CU_ASSERT_TRUE(ar0 < ar1);
    CU_ASSERT_TRUE(ar1 < ms_priority_comm(MS_ROLE_ALLREDUCE, 1, 6));
    CU_ASSERT_EQUAL(ms_priority_comm(MS_ROLE_ALLREDUCE, -1, 0),
                    ms_priority_comm(MS_ROLE_ALLREDUCE, 0, 0));
}

static void
test_chunks(void)
{
    g_autoptr(MsSchedule) s = fx_plan_contended("priority:chunk=64KiB");
    CU_ASSERT_EQUAL(ms_schedule_n_streams(s), 2);
    /* Backward buckets: layers 3 and 2 (2 x (2048 + 262144) elements x 2 B = 1056768 B) cut
     * into ceil(1056768 / 65536) = 17 chunks of 62162 or 62163 B; layers 1 and 0 likewise. */
    g_autoptr(GArray) ar = fx_colls(s, MS_ROLE_ALLREDUCE, MS_PHASE_BACKWARD, -2);
    CU_ASSERT_EQUAL_FATAL(ar->len, 34);
    guint64 sum = 0;
    for (guint k = 0; k < 17; k++) {
        MsCollInfo c;
        ms_schedule_coll(s, g_array_index(ar, guint32, k), &c);
        CU_ASSERT_TRUE(c.bytes == 62162 || c.bytes == 62163);
        CU_ASSERT_EQUAL(fx_op(s, c.ops[0]).chunk, (gint)k);
        CU_ASSERT_EQUAL(fx_op(s, c.ops[0]).layer, 2);
        sum += c.bytes;
    }
    CU_ASSERT_EQUAL(sum, 1056768);
    /* All-to-alls: the largest sender sends 116 tokens of 512 B off its rank (59392 B): one
     * chunk of 64 KiB. */
    g_autoptr(GArray) d = fx_colls(s, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0);
    CU_ASSERT_EQUAL(d->len, 1);
}

static void
test_priorities(void)
{
    g_autoptr(MsSchedule) s = fx_plan_contended("priority:chunk=64KiB");
    gint64 worst_a2a = G_MININT64, best_ar = G_MAXINT64;
    g_autoptr(GArray) ar = fx_colls(s, MS_ROLE_ALLREDUCE, MS_PHASE_BACKWARD, -2);
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        MsOpInfo i = fx_op(s, op);
        if (i.kind != MS_OP_COMM) {
            continue;
        }
        if (i.role == MS_ROLE_ALLREDUCE) {
            best_ar = MIN(best_ar, i.priority);
        } else {
            worst_a2a = MAX(worst_a2a, i.priority);
        }
    }
    CU_ASSERT_TRUE(worst_a2a < best_ar);
    for (guint a = 0; a < ar->len; a++) {
        for (guint b = 0; b < ar->len; b++) {
            MsCollInfo x, y;
            ms_schedule_coll(s, g_array_index(ar, guint32, a), &x);
            ms_schedule_coll(s, g_array_index(ar, guint32, b), &y);
            MsOpInfo xi = fx_op(s, x.ops[0]), yi = fx_op(s, y.ops[0]);
            if (xi.layer < yi.layer) {
                CU_ASSERT_TRUE(xi.priority < yi.priority);
            }
        }
    }
}

/* Collective pairs launched against the policy's order although the one it puts first was
 * launchable when the other launched: an allreduce of a later layer before one of an earlier
 * layer, or any allreduce before an all-to-all (all span every rank here, so the stream was free
 * for both). *contested counts the pairs where the order mattered. */
static guint
order_violations(const GArray *colls, guint *contested)
{
    guint bad = 0;
    *contested = 0;
    for (guint a = 0; a < colls->len; a++) {
        const FxColl *x = &g_array_index(colls, FxColl, a);
        for (guint b = 0; b < colls->len; b++) {
            const FxColl *y = &g_array_index(colls, FxColl, b);
            gboolean x_first = (x->role != MS_ROLE_ALLREDUCE && y->role == MS_ROLE_ALLREDUCE) ||
                               (x->role == MS_ROLE_ALLREDUCE && y->role == MS_ROLE_ALLREDUCE &&
                                x->layer < y->layer);
            *contested += x_first && x->ready < y->launch;
            bad += x_first && x->ready < y->launch && y->launch < x->launch;
        }
    }
    return bad;
}

/* Violations in a unit-cost run, readiness and launch compared by step. */
static guint
run_violations(const MsSchedule *s, guint *contested)
{
    FxRun run;
    CU_ASSERT_TRUE(fx_execute(s, &run));
    g_autoptr(GArray) colls = fx_coll_order(s, &run, NULL, NULL, FX_BY_STEP);
    fx_run_clear(&run);
    return order_violations(colls, contested);
}

static void
test_launch_order(void)
{
    guint contested = 0;
    g_autoptr(MsSchedule) s = fx_plan_contended("priority:chunk=64KiB");
    CU_ASSERT_EQUAL(run_violations(s, &contested), 0);
    CU_ASSERT_TRUE(contested > 0);
    /* fifo, run the same way, launches by readiness and breaks the order. */
    g_autoptr(MsSchedule) f = fx_plan_contended("fifo");
    CU_ASSERT_TRUE(run_violations(f, &contested) > 0);
}

/* The same order on the simulator, by time. */
static void
test_simulated(void)
{
    g_autoptr(MsSchedule) s = fx_plan_contended("priority:chunk=64KiB");
    g_autofree MsTime *start = NULL, *end = NULL;
    CU_ASSERT_TRUE_FATAL(fx_engine_times(s, "dgx-a100", &start, &end));
    g_autoptr(GArray) colls = fx_coll_order(s, NULL, start, end, FX_BY_TIME);
    guint contested = 0;
    CU_ASSERT_EQUAL(order_violations(colls, &contested), 0);
    CU_ASSERT_TRUE(contested > 0);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"priority key", test_key},
        {"equal chunks of the given size", test_chunks},
        {"all-to-all first, earlier layers first", test_priorities},
        {"launch order respects the priorities", test_launch_order},
        {"simulated: launch order respects the priorities", test_simulated},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"priority", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
