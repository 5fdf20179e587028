/* Tests of calibration: reading the documented example, lookups, the writer's exact bytes and
 * round trip, the compute model it configures (end to end from the Vidur expert profile), API
 * validation, and every reader error with its code and FILE:LINE message; configuration groups,
 * their order, the nearest-configuration lookup and their errors. */
#include "ms_test.h"
#include "sim/base/ini.h"
#include "sim/calib/calibration.h"
#include "validate/fit.h"
#include "validate/measurement.h"

static const char example[] = "[calibration]\n"
                              "format = 1\n"
                              "topology = dgx-a100\n"
                              "sources = a.log;b.csv\n"
                              "\n"
                              "[link nvswitch]\n"
                              "bandwidth = 231.4GBps\n"
                              "latency = 3.2us\n"
                              "r2 = 0.9981\n"
                              "max_residual = 0.042\n"
                              "points = 24\n"
                              "\n"
                              "[collective allreduce]\n"
                              "alpha = 12.5us\n"
                              "sizes = 1KB;64KB;1MB;64MB\n"
                              "efficiency = 0.31;0.55;0.83;0.97\n"
                              "\n"
                              "[gemm]\n"
                              "tokens = 1;16;256;4096\n"
                              "efficiency = 0.01;0.12;0.66;0.73\n"
                              "overlap_slowdown = 1\n";

static const MsGpuSpec a100 = {
    .model = "A100-SXM4-80GB",
    .peak_flops = 312e12,
    .hbm_bandwidth = 2039e9,
    .memory_bytes = 80000000000ull,
    .launch_overhead = 5 * MS_PS_PER_US,
};

static MsCalibration *
load_example(void)
{
    GError *error = NULL;
    MsCalibration *cal = ms_calibration_load_data(example, strlen(example), "cal.ini", &error);
    if (error) {
        fprintf(stderr, "\n  %s\n", error->message);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(cal);
    return cal;
}

static void
test_read_example(void)
{
    g_autoptr(MsCalibration) cal = load_example();
    CU_ASSERT_STRING_EQUAL(ms_calibration_topology(cal), "dgx-a100");
    guint n = 0;
    const char *const *src = ms_calibration_sources(cal, &n);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_STRING_EQUAL(src[1], "b.csv");
    CU_ASSERT_PTR_NULL(src[2]);

    MsCalibrationLink l;
    CU_ASSERT_TRUE_FATAL(ms_calibration_link(cal, MS_LINK_NVSWITCH, &l));
    MS_ASSERT_REL(l.bandwidth, 231.4e9, 1e-12);
    CU_ASSERT_EQUAL(l.latency, 3200000);
    CU_ASSERT_EQUAL(l.r2, 0.9981);
    CU_ASSERT_EQUAL(l.max_residual, 0.042);
    CU_ASSERT_EQUAL(l.points, 24);
    CU_ASSERT_FALSE(ms_calibration_link(cal, MS_LINK_NIC, &l));

    MsTime alpha = 0;
    CU_ASSERT_TRUE(ms_calibration_collective_alpha(cal, MS_MEASUREMENT_ALLREDUCE, &alpha));
    CU_ASSERT_EQUAL(alpha, 12500000);
    CU_ASSERT_FALSE(ms_calibration_collective_alpha(cal, MS_MEASUREMENT_ALLTOALL, &alpha));
    CU_ASSERT_FALSE(ms_calibration_collective_alpha(cal, MS_MEASUREMENT_GEMM, &alpha));
    /* 8 KB is halfway between 1 KB and 64 KB in log size. */
    MS_ASSERT_REL(ms_calibration_collective_efficiency(cal, MS_MEASUREMENT_ALLREDUCE, 8000), 0.43,
                  1e-12);
    CU_ASSERT_EQUAL(ms_calibration_collective_efficiency(cal, MS_MEASUREMENT_ALLREDUCE, 10), 0.31);
    CU_ASSERT_EQUAL(ms_calibration_collective_efficiency(cal, MS_MEASUREMENT_ALLREDUCE, 1ull << 40),
                    0.97);
    CU_ASSERT_EQUAL(ms_calibration_collective_efficiency(cal, MS_MEASUREMENT_ALLTOALL, 8000), 1.0);
    CU_ASSERT_EQUAL(ms_calibration_collective_table(cal, MS_MEASUREMENT_ALLREDUCE)->n, 4);
    CU_ASSERT_PTR_NULL(ms_calibration_collective_table(cal, MS_MEASUREMENT_SENDRECV));

    CU_ASSERT_TRUE(ms_calibration_has_gemm(cal));
    GError *error = NULL;
    g_autoptr(MsComputeModel) m = ms_calibration_compute_model(cal, &a100, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(ms_compute_efficiency(m, 16), 0.12);
    MS_ASSERT_REL(ms_compute_efficiency(m, 64), sqrt(0.12 * 0.66), 1e-12);
    CU_ASSERT_EQUAL(ms_compute_model_overlap_slowdown(m), 1.0);
    /* No launch in the file: the GPU spec's stands. */
    CU_ASSERT_EQUAL(ms_compute_model_launch(m), 5 * MS_PS_PER_US);
}

/* What the writer makes of the example: its own first line, then the example byte for byte. */
#define WRITTEN_HEAD "# moesim calibration (see docs/calibration-format.md)\n"

/* Loads text, writes it again and checks the bytes are the same; returns the loaded calibration. */
static MsCalibration *
reload_same(const char *text)
{
    GError *error = NULL;
    MsCalibration *back = ms_calibration_load_data(text, strlen(text), "again.ini", &error);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    g_autofree char *again = ms_calibration_to_data(back, NULL);
    CU_ASSERT_STRING_EQUAL(again, text);
    return back;
}

static void
test_write(void)
{
    g_autoptr(MsCalibration) cal = load_example();
    gsize len = 0;
    g_autofree char *text = ms_calibration_to_data(cal, &len);
    g_autofree char *example_written = g_strconcat(WRITTEN_HEAD, example, NULL);
    CU_ASSERT_STRING_EQUAL(text, example_written);
    CU_ASSERT_EQUAL(len, strlen(example_written));
    /* Saved, loaded, written again: the same bytes. */
    g_autofree char *path = g_build_filename(ms_test_tmpdir(), "cal.ini", NULL);
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_calibration_save(cal, path, &error));
    g_autoptr(MsCalibration) back = ms_calibration_load(path, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    g_autofree char *again = ms_calibration_to_data(back, NULL);
    CU_ASSERT_STRING_EQUAL(again, example_written);

    g_autoptr(MsCalibration) empty = ms_calibration_new();
    g_autofree char *bare = ms_calibration_to_data(empty, NULL);
    CU_ASSERT_STRING_EQUAL(bare, WRITTEN_HEAD "[calibration]\nformat = 1\n");
    CU_ASSERT_FALSE(ms_calibration_has_gemm(empty));
}

static void
test_write_units(void)
{
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    GError *error = NULL;
    const double sorted[] = {1, 1536, 2048, 3000000, 3145728, 1073741824, 1e12 + 1};
    const double ratios[] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.123456789};
    MsEffTable table = {.n = 7, .sizes = (double *)sorted, .ratios = (double *)ratios};
    CU_ASSERT_TRUE(
        ms_calibration_set_collective(cal, MS_MEASUREMENT_ALLTOALL, 12500001, &table, &error));
    MsCalibrationLink l = {.bandwidth = 25e9, .latency = 3, .r2 = NAN, .max_residual = NAN};
    CU_ASSERT_TRUE(ms_calibration_set_link(cal, MS_LINK_NIC, &l, &error));
    MsGemmCurve curve = {.n = 2, .tokens = (double[]){1, 64}, .efficiency = (double[]){0.5, 0.7}};
    CU_ASSERT_TRUE(ms_calibration_set_gemm(cal, &curve, 1.25, 4 * MS_PS_PER_US, &error));
    CU_ASSERT_TRUE(ms_calibration_set_topology(cal, "two nodes", &error));
    CU_ASSERT_TRUE(ms_calibration_add_source(cal, "runs/a2a.log", &error));
    g_autofree char *text = ms_calibration_to_data(cal, NULL);
    CU_ASSERT_STRING_EQUAL(text,
                           WRITTEN_HEAD "[calibration]\nformat = 1\ntopology = two nodes\n"
                                        "sources = runs/a2a.log\n"
                                        "\n[link nic]\nbandwidth = 25GBps\nlatency = 0.000003us\n"
                                        "\n[collective alltoall]\nalpha = 12.500001us\n"
                                        "sizes = 1B;1536B;2KiB;3MB;3MiB;1GiB;1000000000001B\n"
                                        "efficiency = 0.1;0.2;0.3;0.4;0.5;0.6;0.123457\n"
                                        "\n[gemm]\ntokens = 1;64\nefficiency = 0.5;0.7\n"
                                        "overlap_slowdown = 1.25\nlaunch = 4us\n");
    g_autoptr(MsCalibration) back = reload_same(text);
    MsTime alpha;
    CU_ASSERT_TRUE(ms_calibration_collective_alpha(back, MS_MEASUREMENT_ALLTOALL, &alpha));
    CU_ASSERT_EQUAL(alpha, 12500001);
    g_autoptr(MsComputeModel) m = ms_calibration_compute_model(back, &a100, &error);
    CU_ASSERT_EQUAL(ms_compute_model_launch(m), 4 * MS_PS_PER_US);
    CU_ASSERT_EQUAL(ms_compute_model_overlap_slowdown(m), 1.25);
    CU_ASSERT_PTR_NULL(error);
}

static void
test_api_errors(void)
{
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    GError *error = NULL;
    MsCalibrationLink l = {.bandwidth = 0, .latency = 1};
    CU_ASSERT_FALSE(ms_calibration_set_link(cal, MS_LINK_PCIE, &l, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATION_ERROR, MS_CALIBRATION_ERROR_VALUE,
                    "link pcie: bandwidth 0 B/s");
    CU_ASSERT_FALSE(ms_calibration_set_collective(cal, MS_MEASUREMENT_GEMM, 0, NULL, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATION_ERROR, MS_CALIBRATION_ERROR_VALUE,
                    "collective gemm: not a communication kind");
    MsEffTable collapsing = {
        .n = 2, .sizes = (double[]){1000.2, 1000.4}, .ratios = (double[]){0.5, 0.6}};
    CU_ASSERT_FALSE(
        ms_calibration_set_collective(cal, MS_MEASUREMENT_ALLREDUCE, 0, &collapsing, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATION_ERROR, MS_CALIBRATION_ERROR_LIST,
                    "collective allreduce: entry 1: size 1000");
    CU_ASSERT_FALSE(ms_calibration_set_gemm(cal, NULL, 0.5, MS_TIME_NEVER, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATION_ERROR, MS_CALIBRATION_ERROR_VALUE,
                    "gemm: overlap_slowdown 0.5");
    MsGemmCurve bad = {.n = 1, .tokens = (double[]){1}, .efficiency = (double[]){2}};
    CU_ASSERT_FALSE(ms_calibration_set_gemm(cal, &bad, 1, MS_TIME_NEVER, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATION_ERROR, MS_CALIBRATION_ERROR_VALUE,
                    "gemm: efficiency curve: efficiency[0] = 2");
    MsGemmCurve empty = {0};
    CU_ASSERT_FALSE(ms_calibration_set_gemm(cal, &empty, 1, MS_TIME_NEVER, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATION_ERROR, MS_CALIBRATION_ERROR_VALUE, "gemm: empty curve");
    CU_ASSERT_FALSE(ms_calibration_add_source(cal, "a;b", &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATION_ERROR, MS_CALIBRATION_ERROR_VALUE, "source 'a;b'");
    CU_ASSERT_FALSE(ms_calibration_set_topology(cal, "x\ny", &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATION_ERROR, MS_CALIBRATION_ERROR_VALUE, "topology 'x");
    CU_ASSERT_FALSE(ms_calibration_save(cal, "/nonexistent-dir/c.ini", &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATION_ERROR, MS_CALIBRATION_ERROR_IO, "c.ini");
    CU_ASSERT_PTR_NULL(ms_calibration_load("/nonexistent-dir/c.ini", &error));
    MS_ASSERT_ERROR(error, MS_INI_ERROR, MS_INI_ERROR_IO, "c.ini");
    /* Nothing of the failed calls stuck. */
    CU_ASSERT_FALSE(ms_calibration_has_gemm(cal));
    CU_ASSERT_FALSE(ms_calibration_link(cal, MS_LINK_PCIE, &l));
    g_autoptr(MsComputeModel) m = ms_calibration_compute_model(cal, &a100, &error);
    CU_ASSERT_EQUAL(ms_compute_efficiency(m, 7), MS_COMPUTE_DEFAULT_EFFICIENCY);
}

#define HEAD "[calibration]\nformat = 1\n"
#define AR "[collective allreduce]\nalpha = 12.5us\n"

static void
test_read_errors(void)
{
    static const struct {
        const char *text;
        GQuark (*domain)(void);
        int code;
        const char *needle;
    } cases[] = {
        {HEAD AR "sizes = 1KB;64KB;1MB;64MB\nefficiency = 0.31;0.55;0.83\n",
         ms_calibration_error_quark, MS_CALIBRATION_ERROR_LIST,
         "c.ini:6: [collective allreduce] efficiency: 3 values, but sizes has 4"},
        {HEAD AR "sizes = 1KB;64;1MB\nefficiency = 0.3;0.5;0.8\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_VALUE,
         "c.ini:5: [collective allreduce] sizes: item 2: size '64' has no unit"},
        {HEAD AR "sizes = 1KB;64KB;0.5KB\nefficiency = 0.3;0.5;0.8\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_LIST,
         "c.ini:5: [collective allreduce] sizes: item 3: '0.5KB' is "
         "not larger"},
        {HEAD AR "sizes = 0B;1KB\nefficiency = 0.3;0.5\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_VALUE,
         "sizes: item 1: '0B' out of range (must be between 1 B and 1 PiB)"},
        {HEAD AR "sizes = 1KB;2KB\nefficiency = 0.3;0\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_VALUE,
         "c.ini:6: [collective allreduce] efficiency: item 2: '0' out of range (must be between "
         "0.01 and 1.5)"},
        {HEAD AR "sizes = 1KB;2KB\nefficiency = 1.6;0.5\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_VALUE, "efficiency: item 1: '1.6' out of range"},
        {HEAD AR "sizes = 1KB;2KB\n", ms_calibration_error_quark, MS_CALIBRATION_ERROR_LIST,
         "c.ini:5: [collective allreduce] sizes: given without 'efficiency'"},
        {HEAD AR "sizes =\nefficiency =\n", ms_calibration_error_quark, MS_CALIBRATION_ERROR_LIST,
         "c.ini:5: [collective allreduce] sizes: 0 items"},
        {HEAD AR "sizes = 1KB;;2KB\nefficiency = 0.1;0.2\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_LIST, "c.ini:5: [collective allreduce] sizes: item 2 is empty"},
        {HEAD "[collective allreduce]\nsizes = 1KB\nefficiency = 0.5\n", ms_ini_error_quark,
         MS_INI_ERROR_MISSING, "[collective allreduce] alpha: required key is missing"},
        {HEAD "[collective allreduce]\nalpha = 12.5\n", ms_ini_error_quark, MS_INI_ERROR_VALUE,
         "c.ini:4: [collective allreduce] alpha: time '12.5' has no unit"},
        {HEAD "[link nvswitch]\nbandwidth = 231.4\nlatency = 3us\n", ms_ini_error_quark,
         MS_INI_ERROR_VALUE, "c.ini:4: [link nvswitch] bandwidth: bandwidth '231.4' has no unit"},
        {HEAD "[link nvswitch]\nbandwidth = 231GBps\nlatency = 3.2\n", ms_ini_error_quark,
         MS_INI_ERROR_VALUE, "c.ini:5: [link nvswitch] latency: time '3.2' has no unit"},
        {HEAD "[link nvswitch]\nbandwidth = 231GBps\nlatency = 3us\nr2 = 1.5\n", ms_ini_error_quark,
         MS_INI_ERROR_VALUE, "c.ini:6: [link nvswitch] r2: '1.5' out of range"},
        {HEAD "[link nvswitch]\nbandwith = 231GBps\nlatency = 3us\n", ms_ini_error_quark,
         MS_INI_ERROR_UNKNOWN_KEY, "c.ini:4: [link nvswitch] bandwith: unknown key"},
        {HEAD "[link infiniband]\nbandwidth = 25GBps\nlatency = 1us\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_GROUP,
         "c.ini:3: [link infiniband]: unknown link class 'infiniband' (classes: nvlink"},
        {HEAD "[collective broadcast]\nalpha = 1us\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_GROUP, "c.ini:3: [collective broadcast]: unknown collective"},
        {HEAD "[collective gemm]\nalpha = 1us\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_GROUP, "unknown collective 'gemm'"},
        {HEAD "[gpu]\npeak = 1TFLOPS\n", ms_calibration_error_quark, MS_CALIBRATION_ERROR_GROUP,
         "c.ini:3: [gpu]: unknown group"},
        {"[calibration]\nformat = 2\n", ms_calibration_error_quark, MS_CALIBRATION_ERROR_VERSION,
         "c.ini:2: [calibration] format: format 2 is not one this moesim reads (it reads 1)"},
        {"[calibration]\ntopology = x\n", ms_calibration_error_quark, MS_CALIBRATION_ERROR_VERSION,
         "c.ini: no [calibration] group with format = 1"},
        {"[gemm]\ntokens = 1\nefficiency = 0.5\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_VERSION, "not a moesim calibration file"},
        {"[calibration]\nformat = one\n", ms_ini_error_quark, MS_INI_ERROR_VALUE,
         "c.ini:2: [calibration] format: 'one'"},
        {"[calibration]\nformat = 1\nsources = a;b\\tc\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_VALUE, "source 'b"},
        {HEAD "[gemm]\ntokens = 1;16;16\nefficiency = 0.1;0.2;0.3\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_LIST, "c.ini:4: [gemm] tokens: item 3: '16' is not larger"},
        {HEAD "[gemm]\ntokens = 1;x\nefficiency = 0.1;0.2\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_VALUE, "c.ini:4: [gemm] tokens: item 2: 'x' is not a number"},
        {HEAD "[gemm]\nefficiency = 0.1\n", ms_calibration_error_quark, MS_CALIBRATION_ERROR_LIST,
         "c.ini:4: [gemm] efficiency: given without 'tokens'"},
        {HEAD "[gemm]\noverlap_slowdown = 0.5\n", ms_ini_error_quark, MS_INI_ERROR_VALUE,
         "c.ini:4: [gemm] overlap_slowdown: '0.5' out of range"},
        {HEAD "[gemm]\nlaunch = 5\n", ms_ini_error_quark, MS_INI_ERROR_VALUE,
         "c.ini:4: [gemm] launch: time '5' has no unit"},
        {HEAD "[gemm]\ntokens = 1\nefficiency = 0.5\nslowdown = 2\n", ms_ini_error_quark,
         MS_INI_ERROR_UNKNOWN_KEY, "c.ini:6: [gemm] slowdown: unknown key"},
        {HEAD AR "efficency = 0.5\n", ms_ini_error_quark, MS_INI_ERROR_UNKNOWN_KEY,
         "c.ini:5: [collective allreduce] efficency: unknown key"},
        {"[calibration]\nformat = 1\nversion = 2\n", ms_ini_error_quark, MS_INI_ERROR_UNKNOWN_KEY,
         "c.ini:3: [calibration] version: unknown key"},
        {"[calibration]\nformat = 1\ntopology = a\\tb\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_VALUE, "topology 'a"},
        {HEAD "[link nic]\nbandwidth = 25GBps\nlatency = 1us\npoints = 0\n", ms_ini_error_quark,
         MS_INI_ERROR_VALUE, "c.ini:6: [link nic] points: '0' out of range"},
        {HEAD "[link nic]\nbandwidth = 25GBps\nlatency = 1us\nmax_residual = -1\n",
         ms_ini_error_quark, MS_INI_ERROR_VALUE, "c.ini:6: [link nic] max_residual: '-1' out of"},
        {HEAD "[gemm]\nlaunch = 5us\nlaunch = 6us\n", ms_ini_error_quark, MS_INI_ERROR_DUPLICATE,
         "c.ini:5: [gemm] key 'launch' given twice"},
        /* The framework group. */
        {HEAD "[framework]\nname = fairseq\n", ms_ini_error_quark, MS_INI_ERROR_VALUE,
         "c.ini:4: [framework] name: 'fairseq' is not one of: custom, deepspeed, megatron, tutel, "
         "vllm"},
        {HEAD "[framework]\nmoe_layer = 9.7\n", ms_ini_error_quark, MS_INI_ERROR_VALUE,
         "c.ini:4: [framework] moe_layer: time '9.7' has no unit"},
        {HEAD "[framework]\nexpert = 1.5s\n", ms_ini_error_quark, MS_INI_ERROR_VALUE,
         "c.ini:4: [framework] expert: '1.5s' out of range (must be between 0 s and 1 s)"},
        {HEAD "[framework]\nsyncs = 65\n", ms_ini_error_quark, MS_INI_ERROR_VALUE,
         "c.ini:4: [framework] syncs: '65' out of range (must be between 0 and 64)"},
        {HEAD "[framework]\nper_expert = 1us\n", ms_ini_error_quark, MS_INI_ERROR_UNKNOWN_KEY,
         "c.ini:4: [framework] per_expert: unknown key"},
        {HEAD "[framework]\npoints = 0\n", ms_ini_error_quark, MS_INI_ERROR_VALUE,
         "c.ini:4: [framework] points: '0' out of range"},
        /* Configuration groups. */
        {HEAD "[collective allreduce 16y8]\nalpha = 1us\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_GROUP,
         "c.ini:3: [collective allreduce 16y8]: configuration '16y8' is not RANKSxPER_NODE (e.g. "
         "16x8)"},
        {HEAD "[collective allreduce 8x16]\nalpha = 1us\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_GROUP, "configuration '8x16' is not RANKSxPER_NODE"},
        {HEAD "[collective allreduce 0x0]\nalpha = 1us\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_GROUP, "configuration '0x0' is not"},
        {HEAD "[collective allreduce 16x]\nalpha = 1us\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_GROUP, "configuration '16x' is not"},
        {HEAD "[collective allreduce 4096x1]\nalpha = 1us\n[collective allreduce 2097152x1]\n"
              "alpha = 1us\n",
         ms_calibration_error_quark, MS_CALIBRATION_ERROR_GROUP,
         "c.ini:5: [collective allreduce 2097152x1]: configuration '2097152x1' is not"},
        {HEAD "[collective allreduce 16x8 fp16]\nalpha = 1us\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_GROUP,
         "c.ini:3: [collective allreduce 16x8 fp16]: expected [collective NAME] or [collective "
         "NAME RANKSxPER_NODE]"},
        {HEAD "[collective bcast 16x8]\nalpha = 1us\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_GROUP,
         "c.ini:3: [collective bcast 16x8]: unknown collective 'bcast'"},
        {HEAD "[collective gemm 1x1]\nalpha = 1us\n", ms_calibration_error_quark,
         MS_CALIBRATION_ERROR_GROUP, "unknown collective 'gemm'"},
        {HEAD "[collective allreduce 16x8]\nsizes = 1KB\nefficiency = 0.5\n", ms_ini_error_quark,
         MS_INI_ERROR_MISSING, "[collective allreduce 16x8] alpha: required key is missing"},
        {HEAD "[collective allreduce 16x8]\nalpha = 1us\nsizes = 2KB;1KB\nefficiency = 1;1\n",
         ms_calibration_error_quark, MS_CALIBRATION_ERROR_LIST,
         "c.ini:5: [collective allreduce 16x8] sizes: item 2: '1KB' is not larger"},
        {HEAD "[collective allreduce 16x8]\nalpha = 1us\nover = 2\n", ms_ini_error_quark,
         MS_INI_ERROR_UNKNOWN_KEY, "c.ini:5: [collective allreduce 16x8] over: unknown key"},
        {HEAD "[collective allreduce 16x8]\nalpha = 1us\n[collective allreduce 16x8]\nalpha = "
              "2us\n",
         ms_ini_error_quark, MS_INI_ERROR_DUPLICATE, "[collective allreduce 16x8]"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        GError *error = NULL;
        MsCalibration *cal =
            ms_calibration_load_data(cases[i].text, strlen(cases[i].text), "c.ini", &error);
        CU_ASSERT_PTR_NULL(cal);
        MS_ASSERT_ERROR(error, cases[i].domain(), cases[i].code, cases[i].needle);
    }
}

/* Configuration groups: written in order of ranks then ranks per node after the entry for any
 * configuration, whatever order the file gave them in; read back to the same bytes. */
static void
test_config_groups_round_trip(void)
{
    static const char text[] = "[calibration]\nformat = 1\n"
                               "[collective sendrecv 2x1]\nalpha = 28us\n"
                               "[collective allreduce 16x8]\nalpha = 250us\n"
                               "sizes = 1MB;64MB\nefficiency = 0.2;0.3\n"
                               "[collective allreduce 2x2]\nalpha = 50us\n"
                               "[collective allreduce]\nalpha = 10us\n"
                               "[collective allreduce 4x2]\nalpha = 0.5us\n";
    GError *error = NULL;
    g_autoptr(MsCalibration) cal = ms_calibration_load_data(text, strlen(text), "g.ini", &error);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cal);
    g_autofree char *out = ms_calibration_to_data(cal, NULL);
    CU_ASSERT_STRING_EQUAL(out, WRITTEN_HEAD "[calibration]\nformat = 1\n"
                                             "\n[collective allreduce]\nalpha = 10us\n"
                                             "\n[collective allreduce 2x2]\nalpha = 50us\n"
                                             "\n[collective allreduce 4x2]\nalpha = 0.5us\n"
                                             "\n[collective allreduce 16x8]\nalpha = 250us\n"
                                             "sizes = 1MB;64MB\nefficiency = 0.2;0.3\n"
                                             "\n[collective sendrecv 2x1]\nalpha = 28us\n");
    g_autoptr(MsCalibration) back = reload_same(out);
    CU_ASSERT_EQUAL(ms_calibration_collective_configs(back, MS_MEASUREMENT_ALLREDUCE), 3);
    CU_ASSERT_EQUAL(ms_calibration_collective_configs(back, MS_MEASUREMENT_SENDRECV), 1);
    CU_ASSERT_EQUAL(ms_calibration_collective_configs(back, MS_MEASUREMENT_ALLTOALL), 0);
    CU_ASSERT_EQUAL(ms_calibration_collective_configs(back, MS_MEASUREMENT_GEMM), 0);
    /* The entry for any configuration keeps its own accessors. */
    MsTime alpha = 0;
    CU_ASSERT_TRUE(ms_calibration_collective_alpha(back, MS_MEASUREMENT_ALLREDUCE, &alpha));
    CU_ASSERT_EQUAL(alpha, 10 * MS_PS_PER_US);
    CU_ASSERT_FALSE(ms_calibration_collective_alpha(back, MS_MEASUREMENT_SENDRECV, &alpha));
    /* Setting a configuration again replaces it. */
    CU_ASSERT_TRUE(ms_calibration_set_collective_config(back, MS_MEASUREMENT_ALLREDUCE, 2, 2,
                                                        7 * MS_PS_PER_US, NULL, &error));
    CU_ASSERT_EQUAL(ms_calibration_collective_configs(back, MS_MEASUREMENT_ALLREDUCE), 3);
    g_autofree char *replaced = ms_calibration_to_data(back, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(replaced, "[collective allreduce 2x2]\nalpha = 7us\n"));
}

/* The configuration a lookup picks (alpha in us tells which). */
static double
lookup_us(const MsCalibration *cal, MsMeasurementKind kind, guint ranks, guint per_node)
{
    MsTime alpha = 0;
    const MsEffTable *table = (const MsEffTable *)cal;
    if (!ms_calibration_collective_lookup(cal, kind, ranks, per_node, &alpha, &table)) {
        return -1;
    }
    CU_ASSERT_PTR_NULL(table);
    return ms_time_to_us(alpha);
}

/* Nearest configuration: the same side of the node boundary first, then ranks, then ranks per
 * node (log scale); ties go to the smaller configuration. Alphas name the entries: 2x2 -> 22,
 * 8x8 -> 88, 4x2 -> 42, 16x8 -> 168, any configuration -> 1. */
static void
test_nearest_config(void)
{
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    static const guint cfg[][2] = {{16, 8}, {8, 8}, {4, 2}, {2, 2}};
    for (guint i = 0; i < G_N_ELEMENTS(cfg); i++) {
        MsTime alpha = ms_time_from_us(cfg[i][0] * 10 + cfg[i][1]);
        CU_ASSERT_TRUE(ms_calibration_set_collective_config(
            cal, MS_MEASUREMENT_ALLREDUCE, cfg[i][0], cfg[i][1], alpha, NULL, NULL));
    }
    CU_ASSERT_TRUE(
        ms_calibration_set_collective(cal, MS_MEASUREMENT_ALLREDUCE, MS_PS_PER_US, NULL, NULL));
    const struct {
        guint ranks, per_node;
        double want;
    } cases[] = {
        {8, 8, 88},   /* exact */
        {16, 8, 168}, /* exact */
        {6, 6, 88},   /* one node: 8x8 is 0.62 away, 2x2 1.79 */
        {4, 4, 22},   /* one node: 2x2 and 8x8 both 1.5 away: the smaller */
        {16, 16, 88}, /* one node: 8x8 (1 + 0.5) */
        {1, 1, 22},   /* one rank: 2x2 */
        {8, 4, 42},   /* two nodes: 4x2 and 16x8 both 1.5 away: the smaller */
        {32, 8, 168}, /* 16x8 at 1, 4x2 at 4 */
        {2, 1, 42},   /* 4x2 at 1.5, 16x8 at 4.5 */
        {64, 4, 168}, /* 16x8 (2 + 0.5) rather than 4x2 (4 + 0.5) */
        {0, 0, 1},    /* no configuration given: the entry for any */
        {8, 0, 1},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        double got = lookup_us(cal, MS_MEASUREMENT_ALLREDUCE, cases[i].ranks, cases[i].per_node);
        if (got != cases[i].want) {
            fprintf(stderr, "\n  %ux%u: picked %g, want %g\n", cases[i].ranks, cases[i].per_node,
                    got, cases[i].want);
            CU_FAIL("nearest configuration");
        }
    }
    /* Only the other side calibrated: it still beats the entry for any configuration. */
    CU_ASSERT_TRUE(ms_calibration_set_collective_config(cal, MS_MEASUREMENT_SENDRECV, 2, 1,
                                                        ms_time_from_us(21), NULL, NULL));
    CU_ASSERT_EQUAL(lookup_us(cal, MS_MEASUREMENT_SENDRECV, 2, 2), 21);
    CU_ASSERT_EQUAL(lookup_us(cal, MS_MEASUREMENT_SENDRECV, 0, 0), -1);
    /* Without any entry, or for a kind that is not communication: nothing. */
    CU_ASSERT_EQUAL(lookup_us(cal, MS_MEASUREMENT_ALLTOALL, 8, 8), -1);
    CU_ASSERT_EQUAL(lookup_us(cal, MS_MEASUREMENT_GEMM, 1, 1), -1);
    /* A table comes with its entry. */
    static const double sizes[] = {1000, 2000}, eff[] = {0.5, 0.25};
    const MsEffTable t = {2, (double *)sizes, (double *)eff};
    CU_ASSERT_TRUE(
        ms_calibration_set_collective_config(cal, MS_MEASUREMENT_ALLREDUCE, 2, 2, 0, &t, NULL));
    const MsEffTable *got = NULL;
    MsTime alpha = 1;
    CU_ASSERT_TRUE(
        ms_calibration_collective_lookup(cal, MS_MEASUREMENT_ALLREDUCE, 3, 3, &alpha, &got));
    CU_ASSERT_EQUAL(alpha, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_EQUAL(got->n, 2);
    CU_ASSERT_EQUAL(ms_eff_table_eval(got, 2000), 0.25);
    /* Parsing configurations. */
    guint r = 0, p = 0;
    CU_ASSERT_TRUE(ms_calibration_parse_config("1048576x1", &r, &p));
    CU_ASSERT_EQUAL(r, 1048576);
    CU_ASSERT_EQUAL(p, 1);
    static const char *const bad[] = {"16y8",      "8x16", "0x0",  "16x", "x8",  "16x8x", "-2x1",
                                      "2097152x1", " 8x8", "8x 8", "",    "8X8", "8x8 "};
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        CU_ASSERT_FALSE(ms_calibration_parse_config(bad[i], &r, &p));
    }
}

/* Every error of the configuration API (the reader's are in test_read_errors). */
static void
test_config_errors(void)
{
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    GError *error = NULL;
    static const guint bad[][2] = {{8, 16}, {8, 0}, {0, 4}, {2097152, 1}};
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        CU_ASSERT_FALSE(ms_calibration_set_collective_config(
            cal, MS_MEASUREMENT_ALLREDUCE, bad[i][0], bad[i][1], 0, NULL, &error));
        g_autofree char *needle = g_strdup_printf(
            "collective allreduce: configuration %ux%u is not ranks x ranks-per-node", bad[i][0],
            bad[i][1]);
        MS_ASSERT_ERROR(error, MS_CALIBRATION_ERROR, MS_CALIBRATION_ERROR_VALUE, needle);
    }
    CU_ASSERT_FALSE(
        ms_calibration_set_collective_config(cal, MS_MEASUREMENT_LAUNCH, 8, 8, 0, NULL, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATION_ERROR, MS_CALIBRATION_ERROR_VALUE,
                    "collective launch: not a communication kind");
    CU_ASSERT_FALSE(ms_calibration_set_collective_config(cal, MS_MEASUREMENT_ALLREDUCE, 8, 8,
                                                         MS_TIME_NEVER, NULL, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATION_ERROR, MS_CALIBRATION_ERROR_VALUE, "alpha not set");
    CU_ASSERT_EQUAL(ms_calibration_collective_configs(cal, MS_MEASUREMENT_ALLREDUCE), 0);
}

/* From the Vidur expert profile to a calibration file and back into a compute model that
 * reproduces the measured expert FFN times. */
static void
test_vidur_end_to_end(void)
{
    GError *error = NULL;
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_load("mlp_llama3_8b.csv", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(set);
    g_autoptr(GArray) pts = g_array_new(FALSE, FALSE, sizeof(MsGemmPoint));
    CU_ASSERT_TRUE_FATAL(ms_measurement_set_expert_points(set, 4096, 14336, TRUE, pts, &error));
    /* Vidur's times are kernel durations without the host launch: fit with launch 0. */
    const MsRoofline roof = {a100.peak_flops, a100.hbm_bandwidth, 0};
    g_autoptr(MsGemmCurve) curve =
        ms_fit_gemm_curve((MsGemmPoint *)pts->data, pts->len, &roof, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(curve);
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    CU_ASSERT_TRUE(ms_calibration_set_gemm(cal, curve, 1.0, 0, &error));
    CU_ASSERT_TRUE(ms_calibration_add_source(cal, "mlp_llama3_8b.csv", &error));
    g_autofree char *text = ms_calibration_to_data(cal, NULL);
    g_autoptr(MsCalibration) back = ms_calibration_load_data(text, strlen(text), "v.ini", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    g_autoptr(MsComputeModel) model = ms_calibration_compute_model(back, &a100, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(model);
    CU_ASSERT_EQUAL(ms_compute_model_launch(model), 0);
    double worst = 0;
    for (guint i = 0; i < pts->len; i++) {
        const MsGemmPoint *p = &g_array_index(pts, MsGemmPoint, i);
        MsTime t = ms_compute_expert_ffn_time(model, (guint64)p->tokens, 4096, 14336, TRUE, 2);
        worst = MAX(worst, fabs(ms_time_to_s(t) / p->seconds - 1));
    }
    /* Six significant digits in the file keep every point within 2% (in fact within 1e-5). */
    CU_ASSERT_TRUE(worst < 1e-5);
    CU_ASSERT_PTR_NULL(error);
}

/* A list longer than any table should be is refused before it is parsed. */
/* The [framework] group: read, applied to a model (replacing its figures), written back byte for
 * byte; the API refuses what the reader refuses. */
static void
test_framework_group(void)
{
    static const char text[] = "# moesim calibration (see docs/calibration-format.md)\n"
                               "[calibration]\nformat = 1\n"
                               "\n[framework]\nname = deepspeed\nop = 12.5us\nmoe_layer = 9700us\n"
                               "expert = 650us\nsync = 0us\ntoken = 0.25us\nsyncs = 1\n"
                               "points = 48\n";
    GError *error = NULL;
    g_autoptr(MsCalibration) cal = ms_calibration_load_data(text, strlen(text), "c.ini", &error);
    g_assert_no_error(error);
    MsFramework f;
    guint points = 0;
    CU_ASSERT_TRUE_FATAL(ms_calibration_framework(cal, &f, &points));
    CU_ASSERT_EQUAL(f.kind, MS_FRAMEWORK_DEEPSPEED);
    MS_ASSERT_REL(f.op_s, 12.5e-6, 1e-12);
    MS_ASSERT_REL(f.layer_s, 9.7e-3, 1e-12);
    MS_ASSERT_REL(f.expert_s, 650e-6, 1e-12);
    MS_ASSERT_REL(f.token_s, 0.25e-6, 1e-12);
    CU_ASSERT_EQUAL(f.syncs, 1);
    CU_ASSERT_EQUAL(points, 48);
    gsize len = 0;
    g_autofree char *back = ms_calibration_to_data(cal, &len);
    CU_ASSERT_STRING_EQUAL(back, text);
    static const char model[] = "[model]\nformat = 1\nname = m\nlayers = 2\nd_model = 64\n"
                                "d_ffn = 256\nexperts = 8\ntop_k = 2\nheads = 4\nseq_len = 128\n"
                                "tokens_per_gpu = 1024\nhost_op = 1ms\n";
    g_autoptr(MsModel) m = ms_model_load_data(model, strlen(model), "m.ini", &error);
    g_assert_no_error(error);
    MS_ASSERT_REL(ms_model_spec(m)->framework.op_s, 1e-3, 1e-12);
    ms_calibration_apply_model(cal, m);
    MS_ASSERT_REL(ms_model_spec(m)->framework.op_s, 12.5e-6, 1e-12);
    MS_ASSERT_REL(ms_model_spec(m)->framework.layer_s, 9.7e-3, 1e-12);
    /* A calibration without the group leaves the model alone; a bad figure is refused. */
    g_autoptr(MsCalibration) empty = ms_calibration_new();
    CU_ASSERT_FALSE(ms_calibration_framework(empty, &f, NULL));
    MsFramework bad = {.layer_s = 2.0};
    CU_ASSERT_FALSE(ms_calibration_set_framework(empty, &bad, 0, &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATION_ERROR, MS_CALIBRATION_ERROR_VALUE,
                    "framework: moe_layer time 2 s is outside [0, 1] s");
}

static void
test_long_list(void)
{
    GString *s = g_string_new(HEAD "[gemm]\ntokens = ");
    for (guint i = 1; i <= 4097; i++) {
        g_string_append_printf(s, "%u;", i);
    }
    g_string_append(s, "\nefficiency = 0.5\n");
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_calibration_load_data(s->str, s->len, "c.ini", &error));
    MS_ASSERT_ERROR(error, MS_CALIBRATION_ERROR, MS_CALIBRATION_ERROR_LIST,
                    "c.ini:4: [gemm] tokens: 4097 items: a list needs 1 to 4096");
    g_string_free(s, TRUE);
}

/* Values that parse but would overflow what is computed from them later: an efficiency of 1e-15
 * stretches a 4.9 MB transfer to 4.9e21 bytes, beyond 2^64. Such values are refused where they
 * are read, and the stretch saturates instead of converting an out-of-range double. */
static void
test_extreme_efficiencies(void)
{
    static const char *const texts[] = {
        HEAD AR "sizes = 1KB;1GB\nefficiency = 1e-15;0.5\n",
        HEAD AR "sizes = 1KB;1GB\nefficiency = 0.5;1e-300\n",
        HEAD "[gemm]\ntokens = 1;1024\nefficiency = 1e-15;0.5\n",
    };
    for (guint i = 0; i < G_N_ELEMENTS(texts); i++) {
        GError *error = NULL;
        CU_ASSERT_PTR_NULL(ms_calibration_load_data(texts[i], strlen(texts[i]), "c.ini", &error));
        MS_ASSERT_ERROR(error, MS_CALIBRATION_ERROR, MS_CALIBRATION_ERROR_VALUE, "out of range");
    }
    CU_ASSERT_EQUAL(ms_calibration_stretch(G_GUINT64_CONSTANT(1) << 62, 1e-3), G_MAXUINT64);
    CU_ASSERT_EQUAL(ms_calibration_stretch(G_MAXUINT64, 0.5), G_MAXUINT64);
    CU_ASSERT_EQUAL(ms_calibration_stretch(1000, 0.5), 2000);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"read the documented example", test_read_example},
        {"extreme efficiencies refused, stretch saturates", test_extreme_efficiencies},
        {"writer bytes and round trip", test_write},
        {"writer units and exactness", test_write_units},
        {"API validation", test_api_errors},
        {"reader errors name file:line", test_read_errors},
        {"overlong list", test_long_list},
        {"framework group", test_framework_group},
        {"configuration groups round trip", test_config_groups_round_trip},
        {"nearest configuration", test_nearest_config},
        {"configuration API errors", test_config_errors},
        {"Vidur expert profile end to end", test_vidur_end_to_end},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"calibration", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
