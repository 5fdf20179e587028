/* Tests of peer_wait, the wait for peers: rank skew as the dispatcher makes it (a collective
 * launched on all its GPUs at once), in closed form; what is not a peer's (the stream's own work,
 * a policy's hold after the last arrival, a participant that never ran); and the figures and
 * fields the outputs carry (summary, JSON ops, CSV, Chrome trace). */
#include "ms_test.h"
#include "sim/out/peer_wait.h"
#include "sim/out/result.h"

static guint32 ranks2[2] = {0, 1};

/* Per op, the time it waited. */
static MsTime *
waits_of(const MsSchedule *s, const MsRecords *r)
{
    g_autoptr(GArray) spans = ms_peer_wait_spans(s, r);
    return ms_peer_wait_per_op(s, spans);
}

/* Rank skew as the dispatcher makes it: a collective launches on all its ranks at once.
 * r0: c0 [0,10], c2 [10,35]; r1: c1 [0,30], c3 [30,45]. x (after c0 / c1) runs [30,40] on both;
 * w (after c2 / c3) runs [45,50]: r0 was ready at 35 but its stream was busy with x until 40;
 * ar (after w) is held to [60,70] on both (a policy's gate: no peer was late). */
static void
skewed(MsSchedule **s_out, MsRecords **r_out, guint32 *x, guint32 *w, guint32 *ar)
{
    MsSchedule *s = ms_schedule_new(2);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_add_stream(s, "comm", MS_STREAM_COMM);
    guint32 c[4];
    for (guint k = 0; k < 4; k++) {
        c[k] = ms_schedule_add_compute(s, k % 2, 0, MS_ROLE_EXPERT, MS_PHASE_FORWARD, 0, -1, "c");
    }
    guint64 m[4] = {0, 100, 200, 0};
    ms_schedule_add_alltoall(s, 1, ranks2, 2, m, 1, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0, -1,
                             "x", x);
    ms_schedule_add_alltoall(s, 1, ranks2, 2, m, 1, 0, MS_ROLE_COMBINE, MS_PHASE_FORWARD, 0, -1,
                             "w", w);
    ms_schedule_add_allreduce(s, 1, ranks2, 2, 1000, 4, MS_PHASE_BACKWARD, 0, -1, "ar", ar);
    for (guint p = 0; p < 2; p++) {
        ms_schedule_add_dep(s, c[2 + p], c[p]);
        ms_schedule_add_dep(s, x[p], c[p]);
        ms_schedule_add_dep(s, w[p], c[2 + p]);
        ms_schedule_add_dep(s, ar[p], w[p]);
    }
    MsRecords *r = ms_records_new(ms_schedule_n_ops(s), "test");
    const double span[4][2] = {{0, 10}, {0, 30}, {10, 35}, {30, 45}};
    for (guint k = 0; k < 4; k++) {
        ms_records_set(r, c[k], ms_time_from_us(span[k][0]), ms_time_from_us(span[k][1]));
    }
    for (guint p = 0; p < 2; p++) {
        ms_records_set(r, x[p], ms_time_from_us(30), ms_time_from_us(40));
        ms_records_set(r, w[p], ms_time_from_us(45), ms_time_from_us(50));
        ms_records_set(r, ar[p], ms_time_from_us(60), ms_time_from_us(70));
    }
    *s_out = s;
    *r_out = r;
}

static void
test_wait_for_peers(void)
{
    MsSchedule *s;
    MsRecords *r;
    guint32 x[2], w[2], ar[2];
    skewed(&s, &r, x, w, ar);
    CU_ASSERT_EQUAL(ms_peer_wait_ready(s, r, x[0]), ms_time_from_us(10));
    CU_ASSERT_EQUAL(ms_peer_wait_ready(s, r, w[0]), ms_time_from_us(35));
    CU_ASSERT_EQUAL(ms_peer_wait_ready(s, r, 0), 0); /* no dependency */
    g_autofree MsTime *wait = waits_of(s, r);
    /* x: r0 ready at 10, r1 at 30; w: r0 arrives when x ends (40), r1 at 45; ar: both at 50, the
     * ten microseconds after that are the gate's, not a peer's. */
    CU_ASSERT_EQUAL(wait[x[0]], ms_time_from_us(20));
    CU_ASSERT_EQUAL(wait[w[0]], ms_time_from_us(5));
    for (guint p = 0; p < 2; p++) {
        CU_ASSERT_EQUAL(wait[ar[p]], 0);
    }
    CU_ASSERT_EQUAL(wait[x[1]] + wait[w[1]], 0);
    CU_ASSERT_EQUAL(wait[0], 0); /* compute */
    MsMetrics m;
    ms_metrics_compute(s, r, &m);
    MS_ASSERT_REL(m.comm_wait_us, (20 + 5) / 2.0, 1e-12);
    g_autoptr(MsResult) res = ms_result_new("test");
    ms_result_add(res, s, r);
    ms_result_set_detail(res, s, r);
    g_autoptr(JsonNode) j = ms_result_to_json(res);
    JsonObject *o = json_node_get_object(j);
    MS_ASSERT_REL(
        json_object_get_double_member(json_object_get_object_member(o, "summary"), "comm_wait_us"),
        12.5, 1e-12);
    JsonObject *op = json_array_get_object_element(json_object_get_array_member(o, "ops"), x[0]);
    MS_ASSERT_REL(json_object_get_double_member(op, "ready_us"), 10, 1e-12);
    MS_ASSERT_REL(json_object_get_double_member(op, "wait_us"), 20, 1e-12);
    op = json_array_get_object_element(json_object_get_array_member(o, "ops"), 0);
    CU_ASSERT_FALSE(json_object_has_member(op, "wait_us")); /* compute */
    g_autofree char *csv = g_build_filename(ms_test_tmpdir(), "skew.csv", NULL);
    g_autofree char *chrome = g_build_filename(ms_test_tmpdir(), "skew.json", NULL);
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_result_write_csv(res, csv, &error));
    CU_ASSERT_TRUE(ms_result_write_chrome(res, chrome, &error));
    g_autofree char *text = NULL;
    CU_ASSERT_TRUE(g_file_get_contents(csv, &text, NULL, NULL));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "duration_us,ready_us,wait_us\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, ",30.000000,40.000000,10.000000,10.000000,20.000000\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, ",0.000000,10.000000,10.000000,0.000000,\n")); /* c0 */
    g_autofree char *trace = NULL;
    CU_ASSERT_TRUE(g_file_get_contents(chrome, &trace, NULL, NULL));
    CU_ASSERT_PTR_NOT_NULL(strstr(trace, "\"wait_us\":20"));
    /* The waits as slices of their own: x on r0 from 10 to 30 us, w on r0 from 40 to 45. */
    CU_ASSERT_PTR_NOT_NULL(strstr(trace, "{\"ph\":\"X\",\"name\":\"waiting for peers\",\"cat\":"
                                         "\"wait\",\"pid\":0,\"tid\":1,\"ts\":10.0,\"dur\":20.0,"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(trace, "\"cat\":\"wait\",\"pid\":0,\"tid\":1,\"ts\":40.0,\"dur\":5.0,"));
}

/* A participant that never ran: nobody can be said to have waited for it. */
static void
test_wait_without_a_peer(void)
{
    MsSchedule *s;
    MsRecords *r;
    guint32 x[2], w[2], ar[2];
    skewed(&s, &r, x, w, ar);
    ms_records_set(r, x[1], MS_TIME_NEVER, MS_TIME_NEVER);
    g_autofree MsTime *wait = waits_of(s, r);
    CU_ASSERT_EQUAL(wait[x[0]], 0);
    CU_ASSERT_EQUAL(ms_peer_wait_ready(s, r, ar[1]), ms_time_from_us(50));
    ms_records_set(r, w[1], MS_TIME_NEVER, MS_TIME_NEVER);
    CU_ASSERT_EQUAL(ms_peer_wait_ready(s, r, ar[1]), MS_TIME_NEVER);
    ms_records_set(r, ar[1], MS_TIME_NEVER, MS_TIME_NEVER);
    MsMetrics m;
    ms_metrics_compute(s, r, &m);
    CU_ASSERT_EQUAL(m.comm_wait_us, 0);
    ms_schedule_free(s);
    ms_records_free(r);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"rank skew, not the stream's own work or a gate", test_wait_for_peers},
        {"no wait for a peer that never ran", test_wait_without_a_peer},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"peer_wait", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
