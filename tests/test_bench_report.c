/* Tests of the tables `moesim bench` prints: nccl-tests columns for communication rows with the
 * bandwidths they imply, shapes and TFLOP/s for kernels, the compute model's time beside them. */
#include "ms_test.h"
#include "topologies/topology.h"
#include "validate/bench_report.h"

static void
test_tables(void)
{
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    MsMeasurement rows[] = {
        {.kind = MS_MEASUREMENT_ALLREDUCE,
         .bytes = 1048576,
         .ranks = 8,
         .ranks_per_node = 8,
         .dtype = "bf16",
         .label = "",
         .seconds = 50e-6},
        {.kind = MS_MEASUREMENT_GEMM,
         .m = 256,
         .n = 28672,
         .k = 4096,
         .dtype = "bf16",
         .ranks = 1,
         .ranks_per_node = 1,
         .label = "mlp_up_proj",
         .seconds = 300e-6},
        {.kind = MS_MEASUREMENT_GEMM,
         .m = 256,
         .n = 28672,
         .k = 4096,
         .dtype = "bf16",
         .ranks = 1,
         .ranks_per_node = 1,
         .label = "mlp_up_proj",
         .seconds = 360e-6,
         .background_bytes = 26214400},
        {.kind = MS_MEASUREMENT_LAUNCH,
         .ranks = 1,
         .ranks_per_node = 1,
         .label = "",
         .seconds = 2.5e-6},
    };
    for (guint k = 0; k < G_N_ELEMENTS(rows); k++) {
        rows[k].min_s = rows[k].median_s = rows[k].mean_s = NAN;
        rows[k].source = "t";
        CU_ASSERT_TRUE(ms_measurement_set_add(set, &rows[k], NULL));
    }
    g_autofree char *text = ms_bench_report_format(set, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "# allreduce\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "size         count      type   redop    root"));
    /* 1 MiB in 50 us: 20.97 GB/s algbw, x 14/8 busbw */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "     1048576        524288      bf16     sum      -1"
                                        "      50.00    20.97    36.70      8  -\n"));
    /* 2 x 256 x 28672 x 4096 flops in 300 us: 200.43 TFLOP/s */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "mlp_up_proj         300.00    200.43"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "# launch\n# one empty kernel: 2.500 us\n"));
    CU_ASSERT_PTR_NULL(strstr(text, "model(us)"));
    /* With the GPU's compute model: its time beside the measured one. A100 at 0.7 x 312 TFLOP/s
     * and 4 us launch: 4 us + 60.13e9 / 218.4e12 s = 279.32 us, 0.93 of the 300 us measured. */
    g_autoptr(MsTopology) t = ms_topology_load("dgx-a100", NULL);
    g_autoptr(MsComputeModel) m = ms_compute_model_new(ms_topology_gpu_spec(t, 0), NULL);
    g_autofree char *modelled = ms_bench_report_format(set, m);
    CU_ASSERT_PTR_NOT_NULL(strstr(modelled, "   model(us)  model/measured\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(modelled, "    279.32    0.93\n"));
    /* The kernel under an allreduce says so and how much slower than alone; the model stretches
     * its body by the overlap slowdown: 4 + 1.5 x 275.32 = 416.98 us, 1.16 of 360. */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "mlp_up_proj         360.00    167.03"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "  under an allreduce of 26214400 B: 1.20x alone\n"));
    CU_ASSERT_TRUE(ms_compute_model_set_overlap_slowdown(m, 1.5, NULL));
    g_autofree char *stretched = ms_bench_report_format(set, m);
    CU_ASSERT_PTR_NOT_NULL(strstr(stretched, "    279.32    0.93\n"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(stretched, "    416.98    1.16  under an allreduce of 26214400 B: 1.20x alone\n"));
}

/* An all-to-all under an allreduce beside the all-to-all alone of its size and NCCL settings (the
 * slowdown); without one, dashes. NCCL's settings follow the label. */
static void
test_concurrency(void)
{
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    MsMeasurement rows[] = {
        {.kind = MS_MEASUREMENT_ALLTOALL, .bytes = 1048576, .seconds = 200e-6},
        {.kind = MS_MEASUREMENT_ALLTOALL, .bytes = 1048576, .seconds = 250e-6, .channels = 2},
        {.kind = MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE,
         .bytes = 1048576,
         .background_bytes = 26214400,
         .seconds = 500e-6,
         .channels = 2},
        {.kind = MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE,
         .bytes = 4194304,
         .background_bytes = 26214400,
         .seconds = 900e-6,
         .qps = 4},
    };
    for (guint k = 0; k < G_N_ELEMENTS(rows); k++) {
        rows[k].ranks = 16;
        rows[k].ranks_per_node = 4;
        rows[k].label = "";
        rows[k].min_s = rows[k].median_s = rows[k].mean_s = NAN;
        rows[k].source = "t";
        CU_ASSERT_TRUE(ms_measurement_set_add(set, &rows[k], NULL));
    }
    g_autofree char *text = ms_bench_report_format(set, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "#       size    background   alone(us)  together(us)  "
                                        "slowdown  ranks  label\n"));
    /* 500 us against the 250 us alone at the same 2 channels, not the 200 us at NCCL's own. */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "     1048576      26214400      250.00        500.00     "
                                        "2.00x     16  - channels=2\n"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(text, "     4194304      26214400           -        900.00         -     "
                     "16  - qps=4\n"));
    /* 1 MiB in 200 us: 5.24 GB/s algbw, x 15/16 busbw. */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "-1     200.00     5.24     4.92     16  -\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "     16  - channels=2\n"));
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"nccl-tests columns, kernel figures, the model beside", test_tables},
        {"an all-to-all under an allreduce beside its time alone", test_concurrency},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"bench report", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
