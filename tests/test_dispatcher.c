/* Tests of the dispatcher on hand-made schedules, driven by hand: in-order compute streams,
 * coordinated collective launches, readiness vs priority order, Lina's gate under either order,
 * stuck detection, and rules (not policy names) deciding. */
#include "ms_test.h"
#include "sim/schedule/dispatcher.h"

static guint32 ranks2[2] = {0, 1};

/* Two ranks, one compute and one comm stream, under the given rules. */
static MsSchedule *
base(MsDispatchOrder order, MsAllreduceGate gate)
{
    MsSchedule *s = ms_schedule_new(2);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_add_stream(s, "comm", MS_STREAM_COMM);
    ms_schedule_set_rules(s, &(MsDispatchRules){order, gate});
    return s;
}

#define READY MS_DISPATCH_ORDER_READY
#define PRIORITY MS_DISPATCH_ORDER_PRIORITY
#define NO_GATE MS_ALLREDUCE_GATE_NONE
#define A2A_GATE MS_ALLREDUCE_GATE_A2A

static guint32
compute(MsSchedule *s, guint rank, const char *label)
{
    guint32 op = ms_schedule_add_compute(s, rank, 0, MS_ROLE_OTHER, MS_PHASE_FORWARD, 0, -1, label);
    ms_schedule_set_cost(s, op, MS_COMPUTE_ELEMENTWISE, 0, 1000, 0);
    return op;
}

static GArray *
poll(MsDispatcher *d)
{
    GArray *a = g_array_new(FALSE, FALSE, sizeof(guint32));
    ms_dispatcher_poll(d, a);
    return a;
}

static gboolean
contains(GArray *a, guint32 op)
{
    for (guint i = 0; i < a->len; i++) {
        if (g_array_index(a, guint32, i) == op) {
            return TRUE;
        }
    }
    return FALSE;
}

static void
test_compute_in_order(void)
{
    g_autoptr(MsSchedule) s = base(READY, NO_GATE);
    guint32 a = compute(s, 0, "a"), b = compute(s, 0, "b"), c = compute(s, 1, "c");
    /* b comes first in program order but waits for c (on the other rank). */
    ms_schedule_set_priority(s, b, -1);
    ms_schedule_add_dep(s, b, c);
    CU_ASSERT_TRUE_FATAL(ms_schedule_validate(s, NULL));
    g_autoptr(MsDispatcher) d = ms_dispatcher_new(s, NULL);
    g_autoptr(GArray) l1 = poll(d);
    /* Rank 0's stream must wait for b: a may not overtake it. */
    CU_ASSERT_EQUAL(l1->len, 1);
    CU_ASSERT_TRUE(contains(l1, c));
    ms_dispatcher_finished(d, c);
    g_autoptr(GArray) l2 = poll(d);
    CU_ASSERT_EQUAL(l2->len, 1);
    CU_ASSERT_TRUE(contains(l2, b));
    ms_dispatcher_finished(d, b);
    g_autoptr(GArray) l3 = poll(d);
    CU_ASSERT_TRUE(contains(l3, a));
    ms_dispatcher_finished(d, a);
    CU_ASSERT_TRUE(ms_dispatcher_done(d));
}

static void
test_collective_waits_for_all_ranks(void)
{
    g_autoptr(MsSchedule) s = base(READY, NO_GATE);
    guint32 a = compute(s, 0, "a"), b = compute(s, 1, "b");
    guint64 m[4] = {0, 10, 10, 0};
    guint32 ops[2];
    ms_schedule_add_alltoall(s, 1, ranks2, 2, m, 1, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0, -1,
                             "x", ops);
    ms_schedule_add_dep(s, ops[0], a);
    ms_schedule_add_dep(s, ops[1], b);
    g_autoptr(MsDispatcher) d = ms_dispatcher_new(s, NULL);
    g_autoptr(GArray) l1 = poll(d);
    CU_ASSERT_EQUAL(l1->len, 2);
    ms_dispatcher_finished(d, a);
    g_autoptr(GArray) l2 = poll(d);
    /* Rank 0's part is ready, rank 1's is not: nothing launches. */
    CU_ASSERT_EQUAL(l2->len, 0);
    ms_dispatcher_finished(d, b);
    g_autoptr(GArray) l3 = poll(d);
    CU_ASSERT_EQUAL(l3->len, 2);
    CU_ASSERT_TRUE(contains(l3, ops[0]) && contains(l3, ops[1]));
    CU_ASSERT_EQUAL(ms_dispatcher_launch_seq(d, ops[0]) + 1, ms_dispatcher_launch_seq(d, ops[1]));
}

/* Two allreduces ready in the order y, x; x has the better priority. */
static void
order_case(MsDispatchOrder order, gboolean expect_x_first)
{
    g_autoptr(MsSchedule) s = base(order, NO_GATE);
    guint32 t0 = compute(s, 0, "t0"), t1 = compute(s, 1, "t1");
    guint32 u0 = compute(s, 0, "u0"), u1 = compute(s, 1, "u1");
    guint32 x[2], y[2];
    ms_schedule_add_allreduce(s, 1, ranks2, 2, 100, 4, MS_PHASE_BACKWARD, 0, -1, "x", x);
    ms_schedule_add_allreduce(s, 1, ranks2, 2, 100, 4, MS_PHASE_BACKWARD, 1, -1, "y", y);
    /* A comm op that holds the stream busy while both become ready. */
    guint32 hold[2];
    ms_schedule_add_allreduce(s, 1, ranks2, 2, 100, 4, MS_PHASE_BACKWARD, 2, -1, "hold", hold);
    for (guint r = 0; r < 2; r++) {
        ms_schedule_add_dep(s, y[r], r ? t1 : t0);
        ms_schedule_add_dep(s, x[r], r ? u1 : u0);
        ms_schedule_set_priority(s, x[r], 0);
        ms_schedule_set_priority(s, y[r], 5);
        ms_schedule_set_priority(s, hold[r], -10);
    }
    g_autoptr(MsDispatcher) d = ms_dispatcher_new(s, NULL);
    g_autoptr(GArray) l = poll(d);
    CU_ASSERT_TRUE(contains(l, hold[0]));
    ms_dispatcher_finished(d, t0);
    ms_dispatcher_finished(d, t1);
    g_autoptr(GArray) l1 = poll(d);
    /* The comm stream is held: only the next compute ops launch while y and x become ready. */
    CU_ASSERT_EQUAL(l1->len, 2);
    CU_ASSERT_TRUE(contains(l1, u0) && contains(l1, u1));
    ms_dispatcher_finished(d, u0);
    ms_dispatcher_finished(d, u1);
    g_autoptr(GArray) l2 = poll(d);
    CU_ASSERT_EQUAL(l2->len, 0);
    CU_ASSERT_TRUE(ms_dispatcher_ready_seq(d, y[1]) < ms_dispatcher_ready_seq(d, x[0]));
    ms_dispatcher_finished(d, hold[0]);
    ms_dispatcher_finished(d, hold[1]);
    g_autoptr(GArray) l3 = poll(d);
    CU_ASSERT_EQUAL(l3->len, 2);
    CU_ASSERT_TRUE(contains(l3, expect_x_first ? x[0] : y[0]));
}

static void
test_readiness_order(void)
{
    order_case(READY, FALSE);
}

static void
test_priority_order(void)
{
    order_case(PRIORITY, TRUE);
}

/* Lina's gate: an allreduce may not start on a rank whose all-to-all waits for the other rank.
 * The gate does not depend on the order rule; without it the allreduce starts at once. */
static void
gate_case(MsDispatchOrder order)
{
    g_autoptr(MsSchedule) s = base(order, A2A_GATE);
    ms_schedule_add_stream(s, "allreduce", MS_STREAM_COMM);
    guint32 a = compute(s, 0, "a"), b = compute(s, 1, "b");
    guint64 m[4] = {0, 10, 10, 0};
    guint32 x[2], ar[2];
    ms_schedule_add_alltoall(s, 1, ranks2, 2, m, 1, 0, MS_ROLE_DISPATCH, MS_PHASE_BACKWARD, 0, -1,
                             "a2a", x);
    ms_schedule_add_allreduce(s, 2, ranks2, 2, 100, 4, MS_PHASE_BACKWARD, 1, -1, "ar", ar);
    ms_schedule_add_dep(s, x[0], a);
    ms_schedule_add_dep(s, x[1], b);
    /* a precedes rank 0's all-to-all: starting it makes the a2a imminent there. */
    ms_schedule_set_flags(s, a, MS_OP_FLAG_A2A_IMMINENT);
    g_autoptr(MsDispatcher) d2 = ms_dispatcher_new(s, NULL);
    g_autoptr(GArray) l = poll(d2);
    CU_ASSERT_TRUE(contains(l, a) && contains(l, b));
    CU_ASSERT_FALSE(contains(l, ar[0]));
    ms_dispatcher_finished(d2, a);
    g_autoptr(GArray) l1 = poll(d2);
    /* Rank 0's a2a waits for rank 1: still gated. */
    CU_ASSERT_EQUAL(l1->len, 0);
    ms_dispatcher_finished(d2, b);
    g_autoptr(GArray) l2 = poll(d2);
    CU_ASSERT_TRUE(contains(l2, x[0]) && contains(l2, x[1]));
    CU_ASSERT_FALSE(contains(l2, ar[0]));
    ms_dispatcher_finished(d2, x[0]);
    ms_dispatcher_finished(d2, x[1]);
    g_autoptr(GArray) l3 = poll(d2);
    CU_ASSERT_TRUE(contains(l3, ar[0]) && contains(l3, ar[1]));
    /* No gate: the allreduce goes with the compute ops. */
    ms_schedule_set_rules(s, &(MsDispatchRules){order, NO_GATE});
    g_autoptr(MsDispatcher) open = ms_dispatcher_new(s, NULL);
    g_autoptr(GArray) l5 = poll(open);
    CU_ASSERT_TRUE(contains(l5, a) && contains(l5, b) && contains(l5, ar[0]));
    /* Without the flag the allreduce starts at once. */
    g_autoptr(MsSchedule) s2 = base(order, A2A_GATE);
    ms_schedule_add_stream(s2, "allreduce", MS_STREAM_COMM);
    guint32 ar2[2];
    ms_schedule_add_allreduce(s2, 2, ranks2, 2, 100, 4, MS_PHASE_BACKWARD, 1, -1, "ar", ar2);
    g_autoptr(MsDispatcher) d3 = ms_dispatcher_new(s2, NULL);
    g_autoptr(GArray) l4 = poll(d3);
    CU_ASSERT_TRUE(contains(l4, ar2[0]));
}

static void
test_lina_gate(void)
{
    gate_case(PRIORITY);
    gate_case(READY);
}

/* A waiting collective keeps its place on its own ranks only: one on other ranks goes ahead, one
 * sharing its ranks does not overtake it. */
static void
test_head_of_line_per_rank(void)
{
    MsSchedule *s = ms_schedule_new(4);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_add_stream(s, "comm", MS_STREAM_COMM);
    ms_schedule_set_rules(s, &(MsDispatchRules){PRIORITY, NO_GATE});
    guint32 r01[2] = {0, 1}, r23[2] = {2, 3}, r12[2] = {1, 2};
    guint32 hold[2], a[2], b[2], c[2];
    ms_schedule_add_allreduce(s, 1, r01, 2, 100, 4, MS_PHASE_BACKWARD, 0, -1, "hold", hold);
    ms_schedule_add_allreduce(s, 1, r01, 2, 100, 4, MS_PHASE_BACKWARD, 0, -1, "a", a);
    ms_schedule_add_allreduce(s, 1, r23, 2, 100, 4, MS_PHASE_BACKWARD, 0, -1, "b", b);
    ms_schedule_add_allreduce(s, 1, r12, 2, 100, 4, MS_PHASE_BACKWARD, 0, -1, "c", c);
    for (guint i = 0; i < 2; i++) {
        ms_schedule_set_priority(s, hold[i], 0);
        ms_schedule_set_priority(s, a[i], 1);
        ms_schedule_set_priority(s, b[i], 2);
        ms_schedule_set_priority(s, c[i], 3);
    }
    g_autoptr(MsDispatcher) d = ms_dispatcher_new(s, NULL);
    g_autoptr(GArray) l = poll(d);
    /* hold runs on 0 and 1; a waits for them; b (ranks 2, 3) goes ahead; c would take rank 1
     * before a: it must wait. */
    CU_ASSERT_TRUE(contains(l, hold[0]) && contains(l, b[0]));
    CU_ASSERT_FALSE(contains(l, a[0]));
    CU_ASSERT_FALSE(contains(l, c[0]));
    ms_dispatcher_finished(d, b[0]);
    ms_dispatcher_finished(d, b[1]);
    g_autoptr(GArray) l2 = poll(d);
    CU_ASSERT_FALSE(contains(l2, c[0]));
    ms_dispatcher_finished(d, hold[0]);
    ms_dispatcher_finished(d, hold[1]);
    g_autoptr(GArray) l3 = poll(d);
    CU_ASSERT_TRUE(contains(l3, a[0]));
    CU_ASSERT_FALSE(contains(l3, c[0]));
    ms_dispatcher_finished(d, a[0]);
    ms_dispatcher_finished(d, a[1]);
    g_autoptr(GArray) l4 = poll(d);
    CU_ASSERT_TRUE(contains(l4, c[0]) && contains(l4, c[1]));
    ms_dispatcher_free(g_steal_pointer(&d));
    ms_schedule_free(s);
}

static void
test_stuck_and_unknown_rules(void)
{
    g_autoptr(MsSchedule) s = base(READY, NO_GATE);
    guint32 a = compute(s, 0, "first"), b = compute(s, 0, "second");
    /* Program order says first, but first waits for second on the same in-order stream. */
    ms_schedule_add_dep(s, a, b);
    CU_ASSERT_TRUE(ms_schedule_validate(s, NULL));
    g_autoptr(MsDispatcher) d = ms_dispatcher_new(s, NULL);
    g_autoptr(GArray) l = poll(d);
    CU_ASSERT_EQUAL(l->len, 0);
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_dispatcher_check_progress(d, &error));
    MS_ASSERT_ERROR(error, MS_DISPATCHER_ERROR, MS_DISPATCHER_ERROR_STUCK, "op 0 (first)");
    /* The policy's name is a label: any name runs, only unknown rule values are refused. */
    ms_schedule_set_policy(s, "random");
    g_autoptr(MsDispatcher) named = ms_dispatcher_new(s, &error);
    CU_ASSERT_PTR_NOT_NULL(named);
    ms_schedule_set_rules(s, &(MsDispatchRules){MS_DISPATCH_ORDER_N, NO_GATE});
    CU_ASSERT_PTR_NULL(ms_dispatcher_new(s, &error));
    MS_ASSERT_ERROR(error, MS_DISPATCHER_ERROR, MS_DISPATCHER_ERROR_RULES,
                    "the schedule's dispatch order 2 is unknown (known: ready, priority)");
    ms_schedule_set_rules(s, &(MsDispatchRules){PRIORITY, 7});
    CU_ASSERT_PTR_NULL(ms_dispatcher_new(s, &error));
    MS_ASSERT_ERROR(error, MS_DISPATCHER_ERROR, MS_DISPATCHER_ERROR_RULES,
                    "the schedule's allreduce gate 7 is unknown (known: none, a2a)");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"compute streams run in program order", test_compute_in_order},
        {"collectives launch when all ranks are ready", test_collective_waits_for_all_ranks},
        {"readiness order", test_readiness_order},
        {"priority order", test_priority_order},
        {"the all-to-all gate holds allreduces back", test_lina_gate},
        {"head of line per rank", test_head_of_line_per_rank},
        {"stuck schedules and unknown rules", test_stuck_and_unknown_rules},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"dispatcher", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
