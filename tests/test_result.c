/* Tests of result metrics (interval unions, exposed communication) and of the outputs' shape. */
#include "ms_test.h"
#include "sim/out/result.h"

static guint32 ranks2[2] = {0, 1};

/* r0: compute [0,10] and [12,20] us; both ranks: a2a [5,15] us (forward); r1: allreduce [15,30]. */
static void
build(MsSchedule **s_out, MsRecords **r_out)
{
    MsSchedule *s = ms_schedule_new(2);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_add_stream(s, "comm", MS_STREAM_COMM);
    guint32 c1 = ms_schedule_add_compute(s, 0, 0, MS_ROLE_ATTENTION, MS_PHASE_FORWARD, 0, -1,
                                         "attn \"quoted\"");
    guint32 c2 = ms_schedule_add_compute(s, 0, 0, MS_ROLE_EXPERT, MS_PHASE_FORWARD, 0, -1, "exp");
    guint64 m[4] = {0, 100, 200, 0};
    guint32 x[2], ar[2];
    ms_schedule_add_alltoall(s, 1, ranks2, 2, m, 1, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0, -1,
                             "a2a", x);
    ms_schedule_add_allreduce(s, 1, ranks2, 2, 1000, 4, MS_PHASE_BACKWARD, 0, -1, "ar", ar);
    MsRecords *r = ms_records_new(ms_schedule_n_ops(s), "test");
    ms_records_set(r, c1, 0, ms_time_from_us(10));
    ms_records_set(r, c2, ms_time_from_us(12), ms_time_from_us(20));
    ms_records_set(r, x[0], ms_time_from_us(5), ms_time_from_us(15));
    ms_records_set(r, x[1], ms_time_from_us(5), ms_time_from_us(15));
    ms_records_set(r, ar[0], ms_time_from_us(20), ms_time_from_us(21));
    ms_records_set(r, ar[1], ms_time_from_us(15), ms_time_from_us(30));
    *s_out = s;
    *r_out = r;
}

static void
test_metrics(void)
{
    MsSchedule *s;
    MsRecords *r;
    build(&s, &r);
    MsMetrics m;
    ms_metrics_compute(s, r, &m);
    MS_ASSERT_REL(m.step_us, 30, 1e-12);
    MS_ASSERT_REL(m.compute_us, 18.0 / 2, 1e-12);
    MS_ASSERT_REL(m.a2a_us, 10, 1e-12);
    MS_ASSERT_REL(m.a2a_fwd_us, 10, 1e-12);
    MS_ASSERT_REL(m.a2a_bwd_us, 0, 1e-12);
    MS_ASSERT_REL(m.allreduce_us, (1 + 15) / 2.0, 1e-12);
    /* r0: comm [5,15] u [20,21] minus compute [0,10] u [12,20] = [10,12] + [20,21] = 3 us;
     * r1: no compute, comm [5,30] = 25 us. */
    MS_ASSERT_REL(m.exposed_comm_us, (3 + 25) / 2.0, 1e-12);
    CU_ASSERT_EQUAL(m.a2a_bytes, 300);
    ms_schedule_free(s);
    ms_records_free(r);
}

static void
test_summary_and_outputs(void)
{
    MsSchedule *s;
    MsRecords *r;
    build(&s, &r);
    g_autoptr(MsResult) res = ms_result_new("test");
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_result_write_csv(res, "/nonexistent", &error));
    g_clear_error(&error);
    for (guint i = 0; i < 4; i++) {
        ms_records_set(r, 0, 0, ms_time_from_us(10 + 10 * i));
        ms_result_add(res, s, r);
    }
    ms_result_set_detail(res, s, r);
    CU_ASSERT_EQUAL(ms_result_n_iterations(res), 4);
    /* steps 30, 30, 30, 40 */
    MS_ASSERT_REL(ms_result_step_percentile(res, 50), 30, 1e-12);
    MS_ASSERT_REL(ms_result_step_percentile(res, 100), 40, 1e-12);
    MS_ASSERT_REL(ms_result_step_percentile(res, 90), 37, 1e-12);
    g_autofree char *chrome = g_build_filename(ms_test_tmpdir(), "t.json", NULL);
    g_autofree char *csv = g_build_filename(ms_test_tmpdir(), "t.csv", NULL);
    CU_ASSERT_TRUE(ms_result_write_chrome(res, chrome, &error));
    CU_ASSERT_TRUE(ms_result_write_csv(res, csv, &error));
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_file(p, chrome, &error));
    JsonArray *ev =
        json_object_get_array_member(json_node_get_object(json_parser_get_root(p)), "traceEvents");
    guint x = 0;
    for (guint i = 0; i < json_array_get_length(ev); i++) {
        JsonObject *o = json_array_get_object_element(ev, i);
        if (g_strcmp0(json_object_get_string_member(o, "ph"), "X") == 0 &&
            g_strcmp0(json_object_get_string_member(o, "cat"), "op") == 0) {
            x++;
        }
    }
    CU_ASSERT_EQUAL(x, 6); /* the ops; the iteration is a slice of its own */
    g_autofree char *text = NULL;
    CU_ASSERT_TRUE(g_file_get_contents(csv, &text, NULL, NULL));
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    CU_ASSERT_EQUAL(g_strv_length(lines), 8); /* header + 6 ops + final empty */
    g_autoptr(JsonNode) j = ms_result_to_json(res);
    JsonObject *o = json_node_get_object(j);
    CU_ASSERT_EQUAL(json_array_get_length(json_object_get_array_member(o, "ops")), 6);
    MS_ASSERT_REL(
        json_object_get_double_member(json_object_get_object_member(o, "summary"), "step_time_us"),
        32.5, 1e-12);
}

/* A stat reads back as the last value set, and as the JSON's "stats" member shows it; a name
 * never set is FALSE and leaves the value alone. */
static void
test_stats_read_back(void)
{
    g_autoptr(MsResult) res = ms_result_new("test");
    ms_result_set_stat(res, "events", 5);
    ms_result_set_stat(res, "flows", 7);
    ms_result_set_stat(res, "events", 11);
    double v = -1;
    CU_ASSERT_TRUE(ms_result_get_stat(res, "events", &v));
    CU_ASSERT_EQUAL(v, 11);
    CU_ASSERT_TRUE(ms_result_get_stat(res, "flows", &v));
    CU_ASSERT_EQUAL(v, 7);
    v = -1;
    CU_ASSERT_FALSE(ms_result_get_stat(res, "wall_s", &v));
    CU_ASSERT_EQUAL(v, -1);
    g_autoptr(JsonNode) json = ms_result_to_json(res);
    JsonObject *stats = json_object_get_object_member(json_node_get_object(json), "stats");
    CU_ASSERT_EQUAL(json_object_get_double_member(stats, "events"), 11);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"metrics from interval unions", test_metrics},
        {"summary, percentiles, Chrome trace and CSV", test_summary_and_outputs},
        {"stats read back", test_stats_read_back},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"result", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
