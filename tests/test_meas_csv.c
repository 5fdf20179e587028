/* Tests of the measurement CSV's format module: column names both ways, the version line and
 * header, and rows written byte for byte (shapes only for kernels, empty fields for what was not
 * measured, times in microseconds with 12 significant digits). */
#include "ms_test.h"
#include "sim/calib/meas_csv.h"

static void
test_columns(void)
{
    for (guint c = 0; c < MS_MEAS_N_COLS; c++) {
        MsMeasColumn back;
        CU_ASSERT_TRUE(ms_meas_csv_column_from_name(ms_meas_csv_column_name(c), &back));
        CU_ASSERT_EQUAL(back, c);
    }
    MsMeasColumn c;
    CU_ASSERT_FALSE(ms_meas_csv_column_from_name("time", &c));
    CU_ASSERT_FALSE(ms_meas_csv_column_from_name(NULL, &c));
    CU_ASSERT_STRING_EQUAL(ms_meas_csv_column_name(MS_MEAS_COL_TIME), "time_us");
}

static void
test_write(void)
{
    g_autoptr(GString) s = g_string_new(NULL);
    ms_meas_csv_write_header(s, 1);
    CU_ASSERT_STRING_EQUAL(s->str, "# moesim-measurements 1\n"
                                   "kind,bytes,ranks,ranks_per_node,m,n,k,dtype,label,time_us,"
                                   "min_us,median_us,mean_us\n");
    g_string_truncate(s, 0);
    /* A communication row keeps no shape even when one is set; unmeasured statistics are empty. */
    MsMeasurement ar = {.kind = MS_MEASUREMENT_ALLREDUCE,
                        .bytes = 1048576,
                        .ranks = 16,
                        .ranks_per_node = 8,
                        .m = 7,
                        .dtype = "fp16",
                        .label = "",
                        .seconds = 41.25e-6,
                        .min_s = NAN,
                        .median_s = 41.25e-6,
                        .mean_s = NAN};
    CU_ASSERT_EQUAL(ms_meas_csv_row_version(&ar), 1);
    ms_meas_csv_write_row(s, &ar, 1);
    CU_ASSERT_STRING_EQUAL(s->str, "allreduce,1048576,16,8,,,,fp16,,41.25,,41.25,\n");
    g_string_truncate(s, 0);
    /* In a version 2 file the same row has its three new columns empty. */
    ms_meas_csv_write_row(s, &ar, 2);
    CU_ASSERT_STRING_EQUAL(s->str, "allreduce,1048576,16,8,,,,fp16,,41.25,,41.25,,,,\n");
    g_string_truncate(s, 0);
    MsMeasurement gemm = {.kind = MS_MEASUREMENT_GEMM,
                          .ranks = 1,
                          .ranks_per_node = 1,
                          .m = 256,
                          .n = 28672,
                          .k = 4096,
                          .dtype = "bf16",
                          .label = "mlp_up_proj",
                          .seconds = 1.0 / 3 * 1e-3,
                          .min_s = NAN,
                          .median_s = NAN,
                          .mean_s = NAN};
    ms_meas_csv_write_row(s, &gemm, 1);
    CU_ASSERT_STRING_EQUAL(s->str, "gemm,0,1,1,256,28672,4096,bf16,mlp_up_proj,333.333333333,,,\n");
}

/* Version 2: the concurrency kind, the allreduce's size, NCCL's channels and queue pairs. */
static void
test_version_2(void)
{
    CU_ASSERT_EQUAL(ms_meas_csv_column_version(MS_MEAS_COL_MEAN), 1);
    CU_ASSERT_EQUAL(ms_meas_csv_column_version(MS_MEAS_COL_BACKGROUND_BYTES), 2);
    CU_ASSERT_EQUAL(ms_meas_csv_column_version(MS_MEAS_COL_QPS), 2);
    CU_ASSERT_EQUAL(ms_meas_csv_kind_version(MS_MEASUREMENT_LAUNCH), 1);
    CU_ASSERT_EQUAL(ms_meas_csv_kind_version(MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE), 2);
    MsMeasColumn c;
    CU_ASSERT_TRUE(ms_meas_csv_column_from_name("background_bytes", &c));
    CU_ASSERT_EQUAL(c, MS_MEAS_COL_BACKGROUND_BYTES);
    CU_ASSERT_STRING_EQUAL(ms_meas_csv_column_name(MS_MEAS_COL_CHANNELS), "channels");
    g_autoptr(GString) s = g_string_new(NULL);
    ms_meas_csv_write_header(s, 2);
    CU_ASSERT_STRING_EQUAL(s->str, "# moesim-measurements 2\n"
                                   "kind,bytes,ranks,ranks_per_node,m,n,k,dtype,label,time_us,"
                                   "min_us,median_us,mean_us,background_bytes,channels,qps\n");
    g_string_truncate(s, 0);
    MsMeasurement under = {.kind = MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE,
                           .bytes = 4194304,
                           .ranks = 16,
                           .ranks_per_node = 4,
                           .label = "",
                           .seconds = 1.5e-3,
                           .min_s = NAN,
                           .median_s = NAN,
                           .mean_s = 1.5e-3,
                           .background_bytes = 26214400,
                           .channels = 4};
    CU_ASSERT_EQUAL(ms_meas_csv_row_version(&under), 2);
    ms_meas_csv_write_row(s, &under, 2);
    CU_ASSERT_STRING_EQUAL(s->str,
                           "alltoall_under_allreduce,4194304,16,4,,,,,,1500,,,1500,26214400,4,\n");
    /* An alltoall row under forced queue pairs needs version 2 too. */
    MsMeasurement a2a = {.kind = MS_MEASUREMENT_ALLTOALL, .qps = 2};
    CU_ASSERT_EQUAL(ms_meas_csv_row_version(&a2a), 2);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"column names", test_columns},
        {"version line, header and rows", test_write},
        {"version 2: the concurrency kind and NCCL's configuration", test_version_2},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"measurement CSV format", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
