/* Tests of sweep_csv: quoting and splitting, the header and a row built from a result whose
 * metrics have a closed form (records written by hand), and the plots of a sweep table. */
#include <glib/gstdio.h>

#include "ms_test.h"
#include "sim/sweep_csv.h"

static void
test_fields(void)
{
    GString *s = g_string_new(NULL);
    ms_sweep_csv_field(s, "fifo");
    g_string_append_c(s, ',');
    ms_sweep_csv_field(s, "lina:chunk=8MB,pack=1");
    g_string_append_c(s, ',');
    ms_sweep_csv_field(s, "say \"hi\"\n");
    CU_ASSERT_STRING_EQUAL(s->str, "fifo,\"lina:chunk=8MB,pack=1\",\"say \"\"hi\"\"\"");
    g_autoptr(GPtrArray) f = ms_sweep_csv_split(s->str);
    CU_ASSERT_EQUAL_FATAL(f->len, 3);
    CU_ASSERT_STRING_EQUAL(f->pdata[0], "fifo");
    CU_ASSERT_STRING_EQUAL(f->pdata[1], "lina:chunk=8MB,pack=1");
    CU_ASSERT_STRING_EQUAL(f->pdata[2], "say \"hi\"");
    g_string_free(s, TRUE);
    g_autoptr(GPtrArray) crlf = ms_sweep_csv_split("a,,b\r");
    CU_ASSERT_EQUAL_FATAL(crlf->len, 3);
    CU_ASSERT_STRING_EQUAL(crlf->pdata[1], "");
    CU_ASSERT_STRING_EQUAL(crlf->pdata[2], "b");
}

/* Two ranks, one compute op each: rank 0 busy 100 us, rank 1 300 us (then 500 us). */
static MsResult *
result(void)
{
    MsSchedule *s = ms_schedule_new(2);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_set_policy(s, "fifo");
    for (guint r = 0; r < 2; r++) {
        guint32 op = ms_schedule_add_compute(s, r, 0, MS_ROLE_OTHER, MS_PHASE_FORWARD, 0, -1, "g");
        ms_schedule_set_cost(s, op, MS_COMPUTE_GEMM, 1e9, 0, 64);
    }
    g_assert(ms_schedule_validate(s, NULL));
    MsResult *res = ms_result_new("sim");
    for (guint it = 0; it < 2; it++) {
        MsRecords *rec = ms_records_new(2, "sim");
        ms_records_set(rec, 0, 0, ms_time_from_us(100));
        ms_records_set(rec, 1, 0, ms_time_from_us(it ? 500 : 300));
        ms_result_add(res, s, rec);
        if (it == 0) {
            ms_result_set_detail(res, s, rec);
        } else {
            ms_records_free(rec);
        }
    }
    return res;
}

static void
test_rows(void)
{
    g_autoptr(MsSweepGrid) g = ms_sweep_grid_new();
    g_assert(ms_sweep_grid_add_axis(g, "policy=fifo;lina:chunk=8MB,pack=1", NULL));
    g_assert(ms_sweep_grid_add_axis(g, "seed=1,2", NULL));
    g_autofree char *head = ms_sweep_csv_header(g);
    CU_ASSERT_STRING_EQUAL(head, "point,policy,seed,iterations,step_time_us,step_p50_us,"
                                 "step_p95_us,step_p99_us,compute_us,a2a_us,a2a_forward_us,"
                                 "a2a_backward_us,allreduce_us,exposed_comm_us,comm_wait_us,"
                                 "a2a_bytes,dropped_tokens");
    CU_ASSERT_EQUAL(g_strv_length((char **)ms_sweep_csv_metrics()), 14);
    g_autoptr(MsResult) res = result();
    g_autofree char *row = ms_sweep_csv_row(g, 3, res);
    /* Means: step (300 + 500) / 2, compute ((100 + 300) / 2 + (100 + 500) / 2) / 2; the
     * percentiles of {300, 500} interpolated: p50 400, p95 490, p99 498. */
    CU_ASSERT_STRING_EQUAL(row, "3,\"lina:chunk=8MB,pack=1\",2,2,400.000,400.000,490.000,"
                                "498.000,250.000,0.000,0.000,0.000,0.000,0.000,0.000,0,0");
}

static void
test_plot(void)
{
    g_autofree char *csv = ms_test_write_tmp(
        "sweep.csv", "point,policy,nodes,iterations,step_time_us\n0,fifo,2,1,1000\n"
                     "1,fifo,4,1,800\n2,lina,2,1,900\n3,lina,4,1,700\n");
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "plots", NULL);
    g_mkdir_with_parents(dir, 0755);
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_sweep_csv_plot(csv, dir, &error));
    g_assert_no_error(error);
    /* nodes is numeric: its plot's script, one line per policy; policy is not plotted. */
    g_autofree char *gp = g_build_filename(dir, "sweep-nodes.png.gp", NULL);
    g_autofree char *script = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(gp, &script, NULL, NULL));
    CU_ASSERT_PTR_NOT_NULL(strstr(script, "policy=fifo"));
    CU_ASSERT_PTR_NOT_NULL(strstr(script, "policy=lina"));
    g_autofree char *other = g_build_filename(dir, "sweep-policy.png.gp", NULL);
    CU_ASSERT_FALSE(g_file_test(other, G_FILE_TEST_EXISTS));
    /* Regression: with an iterations axis the table has two iterations columns (the axis, then
     * the metric), and the axes were taken to end at the first: no plot at all. */
    g_autofree char *twice = ms_test_write_tmp(
        "twice.csv", "point,iterations,nodes,iterations,step_time_us\n0,1,2,1,1000\n"
                     "1,1,4,1,800\n2,3,2,3,900\n3,3,4,3,700\n");
    g_autofree char *dir2 = g_build_filename(ms_test_tmpdir(), "plots2", NULL);
    g_mkdir_with_parents(dir2, 0755);
    CU_ASSERT_TRUE(ms_sweep_csv_plot(twice, dir2, &error));
    g_autofree char *nodes2 = g_build_filename(dir2, "sweep-nodes.png.gp", NULL);
    g_autofree char *its2 = g_build_filename(dir2, "sweep-iterations.png.gp", NULL);
    CU_ASSERT_TRUE(g_file_test(nodes2, G_FILE_TEST_EXISTS));
    CU_ASSERT_TRUE(g_file_test(its2, G_FILE_TEST_EXISTS));
    CU_ASSERT_FALSE(ms_sweep_csv_plot("no/such.csv", dir, &error));
    MS_ASSERT_ERROR(error, MS_SWEEP_CSV_ERROR, MS_SWEEP_CSV_ERROR_IO, "no/such.csv");
}

static void
test_json(void)
{
    g_autofree char *csv = ms_test_write_tmp(
        "j.csv", "point,policy,iterations,iterations,step_time_us,a2a_bytes\n"
                 "0,\"lina:chunk=8MB,pack=1\",2,2,1000.5,123\n3,fifo,4,4,800,0\n");
    GError *error = NULL;
    g_autoptr(JsonNode) node = ms_sweep_csv_to_json(csv, &error);
    g_assert_no_error(error);
    JsonObject *o = json_node_get_object(node);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(o, "format"), "moesim-sweep");
    JsonArray *axes = json_object_get_array_member(o, "axes");
    JsonArray *metrics = json_object_get_array_member(o, "metrics");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(axes), 2);
    CU_ASSERT_STRING_EQUAL(json_array_get_string_element(axes, 1), "iterations");
    CU_ASSERT_EQUAL(json_array_get_length(metrics), 3);
    JsonArray *rows = json_object_get_array_member(o, "rows");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(rows), 2);
    JsonObject *r0 = json_array_get_object_element(rows, 0);
    CU_ASSERT_EQUAL(json_object_get_int_member(r0, "point"), 0);
    /* Axis values stay the strings of the table; counts are integers, times numbers; an axis
     * and a metric of the same name each keep theirs. */
    JsonObject *ax = json_object_get_object_member(r0, "axes");
    JsonObject *me = json_object_get_object_member(r0, "metrics");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(ax, "policy"), "lina:chunk=8MB,pack=1");
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(ax, "iterations"), "2");
    CU_ASSERT_EQUAL(json_object_get_int_member(me, "iterations"), 2);
    CU_ASSERT_EQUAL(json_node_get_value_type(json_object_get_member(me, "a2a_bytes")),
                    G_TYPE_INT64);
    CU_ASSERT_EQUAL(json_object_get_double_member(me, "step_time_us"), 1000.5);
    g_autofree char *bad = ms_test_write_tmp("jb.csv", "point,nodes,iterations\n0,2,x\n");
    CU_ASSERT_PTR_NULL(ms_sweep_csv_to_json(bad, &error));
    MS_ASSERT_ERROR(error, MS_SWEEP_CSV_ERROR, MS_SWEEP_CSV_ERROR_FORMAT,
                    "jb.csv:2: iterations 'x' is not a number");
    g_autofree char *short_row = ms_test_write_tmp("js.csv", "point,nodes,iterations\n0,2\n");
    CU_ASSERT_PTR_NULL(ms_sweep_csv_to_json(short_row, &error));
    MS_ASSERT_ERROR(error, MS_SWEEP_CSV_ERROR, MS_SWEEP_CSV_ERROR_FORMAT, "js.csv:2: 2 fields");
    g_autofree char *other = ms_test_write_tmp("jo.csv", "a,b\n1,2\n");
    CU_ASSERT_PTR_NULL(ms_sweep_csv_to_json(other, &error));
    MS_ASSERT_ERROR(error, MS_SWEEP_CSV_ERROR, MS_SWEEP_CSV_ERROR_FORMAT, "jo.csv:1: not a sweep");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"quoting and splitting", test_fields},
        {"header and rows", test_rows},
        {"plots of a sweep table", test_plot},
        {"the table as JSON", test_json},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"sweep_csv", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
