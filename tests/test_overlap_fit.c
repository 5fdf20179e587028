/* Tests of the overlap slowdown fit: the closed form of the least-squares factor and its standard
 * error, the pairing of each kernel under an allreduce with its kernel alone, the model's range
 * applied, every refusal; then the whole path on what `moesim bench --what overlap` writes: the
 * calibration's overlap slowdown, the expert curve untouched by the overlapped rows, the
 * prediction of a row under an allreduce, and the command line. */
#include "ms_test.h"

#include <math.h>
#include <string.h>

#include "backends/executor_bench.h"
#include "sim/compute.h"
#include "validate/calibrate.h"
#include "validate/moesim_csv.h"
#include "validate/overlap_fit.h"

#define BACKGROUND (G_GUINT64_CONSTANT(25) << 20)

/* A kernel row: an up projection at tokens tokens, timed seconds, under the allreduce when
 * background is set. */
static void
add_kernel(MsMeasurementSet *set, guint64 tokens, double seconds, guint64 background,
           const char *source, guint line)
{
    MsMeasurement m = {.kind = MS_MEASUREMENT_GEMM,
                       .ranks = 1,
                       .ranks_per_node = 1,
                       .m = tokens,
                       .n = 28672,
                       .k = 4096,
                       .dtype = "bf16",
                       .label = "mlp_up_proj",
                       .seconds = seconds,
                       .min_s = NAN,
                       .median_s = seconds,
                       .mean_s = NAN,
                       .background_bytes = background,
                       .source = source,
                       .line = line};
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_measurement_set_add(set, &m, &error));
}

static void
test_closed_form(void)
{
    /* One ratio: the factor is it, exactly. */
    g_autoptr(MsMeasurementSet) one = ms_measurement_set_new();
    add_kernel(one, 256, 100e-6, 0, "a.csv", 2);
    add_kernel(one, 256, 125e-6, BACKGROUND, "a.csv", 3);
    MsOverlapFit f;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_overlap_fit(one, NULL, &f, &error));
    CU_ASSERT_EQUAL(f.pairs, 1);
    MS_ASSERT_REL(f.slowdown, 1.25, 1e-12);
    MS_ASSERT_REL(f.applied, 1.25, 1e-12);
    CU_ASSERT_TRUE(isnan(f.std_error));
    MS_ASSERT_REL(f.largest, 1.25, 1e-12);
    MS_ASSERT_REL(f.median_before, 0.2, 1e-12); /* 100 predicted for 125 */
    CU_ASSERT_DOUBLE_EQUAL(f.median_after, 0, 1e-12);

    /* Two: q = alone / together = 1/1.2 and 1/1.5; s = sum q / sum q^2 minimises the squared
     * relative errors s q - 1, its variance rss / (n - 1) / sum q^2. */
    g_autoptr(MsMeasurementSet) two = ms_measurement_set_new();
    add_kernel(two, 256, 100e-6, 0, "a.csv", 2);
    add_kernel(two, 256, 120e-6, BACKGROUND, "a.csv", 3);
    add_kernel(two, 1024, 400e-6, 0, "a.csv", 4);
    add_kernel(two, 1024, 600e-6, BACKGROUND, "a.csv", 5);
    CU_ASSERT_TRUE_FATAL(ms_overlap_fit(two, NULL, &f, &error));
    double q[2] = {1 / 1.2, 1 / 1.5}, sq = q[0] + q[1], sqq = q[0] * q[0] + q[1] * q[1];
    double s = sq / sqq, rss = pow(s * q[0] - 1, 2) + pow(s * q[1] - 1, 2);
    CU_ASSERT_EQUAL(f.pairs, 2);
    MS_ASSERT_REL(f.slowdown, s, 1e-12);
    MS_ASSERT_REL(f.std_error, sqrt(rss / sqq), 1e-12);
    MS_ASSERT_REL(f.largest, 1.5, 1e-12);
    MS_ASSERT_REL(f.median_before, ((1 - q[0]) + (1 - q[1])) / 2, 1e-12);
    MS_ASSERT_REL(f.median_after, (fabs(s * q[0] - 1) + fabs(s * q[1] - 1)) / 2, 1e-12);
    CU_ASSERT_TRUE(s > 1.2 && s < 1.5);

    /* The rows to fit on: the second pair's overlapped row left out. */
    gboolean use[4] = {TRUE, TRUE, TRUE, FALSE};
    CU_ASSERT_TRUE_FATAL(ms_overlap_fit(two, use, &f, &error));
    CU_ASSERT_EQUAL(f.pairs, 1);
    MS_ASSERT_REL(f.slowdown, 1.2, 1e-12);
}

static void
test_range(void)
{
    /* Faster together is noise to the model, which takes no speedup: 1 applied. */
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    add_kernel(set, 256, 100e-6, 0, "a.csv", 2);
    add_kernel(set, 256, 95e-6, BACKGROUND, "a.csv", 3);
    MsOverlapFit f;
    CU_ASSERT_TRUE_FATAL(ms_overlap_fit(set, NULL, &f, NULL));
    MS_ASSERT_REL(f.slowdown, 0.95, 1e-12);
    CU_ASSERT_EQUAL(f.applied, 1.0);
    /* Past the model's largest: that one applied. */
    g_autoptr(MsMeasurementSet) slow = ms_measurement_set_new();
    add_kernel(slow, 256, 1e-6, 0, "a.csv", 2);
    add_kernel(slow, 256, 20e-6, BACKGROUND, "a.csv", 3);
    CU_ASSERT_TRUE_FATAL(ms_overlap_fit(slow, NULL, &f, NULL));
    MS_ASSERT_REL(f.slowdown, 20, 1e-12);
    CU_ASSERT_EQUAL(f.applied, MS_COMPUTE_SLOWDOWN_MAX);
    /* No overlapped rows: nothing fitted, not an error. */
    g_autoptr(MsMeasurementSet) none = ms_measurement_set_new();
    add_kernel(none, 256, 100e-6, 0, "a.csv", 2);
    CU_ASSERT_TRUE_FATAL(ms_overlap_fit(none, NULL, &f, NULL));
    CU_ASSERT_EQUAL(f.pairs, 0);
    CU_ASSERT_TRUE(isnan(f.slowdown) && isnan(f.applied));
}

static void
test_pairing(void)
{
    /* Two files of the same kernel: each overlapped row takes the one alone before it in its own
     * file; a file without one takes the first anywhere. */
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    add_kernel(set, 256, 100e-6, 0, "a.csv", 2);
    add_kernel(set, 256, 110e-6, BACKGROUND, "a.csv", 3);
    add_kernel(set, 256, 200e-6, 0, "b.csv", 2);
    add_kernel(set, 256, 260e-6, BACKGROUND, "b.csv", 3);
    add_kernel(set, 256, 130e-6, BACKGROUND, "c.csv", 2);
    CU_ASSERT_PTR_EQUAL(ms_overlap_fit_alone_row(set, 1), ms_measurement_set_get(set, 0));
    CU_ASSERT_PTR_EQUAL(ms_overlap_fit_alone_row(set, 3), ms_measurement_set_get(set, 2));
    CU_ASSERT_PTR_EQUAL(ms_overlap_fit_alone_row(set, 4), ms_measurement_set_get(set, 0));
    MsOverlapFit f;
    CU_ASSERT_TRUE_FATAL(ms_overlap_fit(set, NULL, &f, NULL));
    CU_ASSERT_EQUAL(f.pairs, 3);
    MS_ASSERT_REL(f.largest, 1.3, 1e-12);

    /* Another shape, label, datatype or kind is another kernel: no partner. */
    static const struct {
        guint64 tokens;
        const char *label, *dtype;
    } other[] = {{512, "mlp_up_proj", "bf16"}, {256, "up", "bf16"}, {256, "mlp_up_proj", "fp16"}};
    for (guint k = 0; k < G_N_ELEMENTS(other); k++) {
        g_autoptr(MsMeasurementSet) lone = ms_measurement_set_new();
        add_kernel(lone, 256, 100e-6, 0, "a.csv", 2);
        MsMeasurement m = *ms_measurement_set_get(lone, 0);
        m.m = other[k].tokens;
        m.label = other[k].label;
        m.dtype = other[k].dtype;
        m.background_bytes = BACKGROUND;
        m.line = 7;
        CU_ASSERT_TRUE_FATAL(ms_measurement_set_add(lone, &m, NULL));
        GError *error = NULL;
        CU_ASSERT_FALSE(ms_overlap_fit(lone, NULL, &f, &error));
        MS_ASSERT_ERROR(error, MS_OVERLAP_FIT_ERROR, MS_OVERLAP_FIT_ERROR_ALONE, "a.csv:7: gemm '");
    }
    g_autoptr(MsMeasurementSet) orphan = ms_measurement_set_new();
    add_kernel(orphan, 256, 110e-6, BACKGROUND, "o.csv", 5);
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_overlap_fit(orphan, NULL, &f, &error));
    MS_ASSERT_ERROR(error, MS_OVERLAP_FIT_ERROR, MS_OVERLAP_FIT_ERROR_ALONE,
                    "o.csv:5: gemm 'mlp_up_proj' 256x28672x4096 timed under an allreduce of "
                    "26214400 B: no row of the same kernel alone");
}

/* What the overlap benchmark writes for the default expert (4096 x 14336, gated) at a few token
 * counts: each kernel alone at a roofline time, then under the allreduce at truth x that, with
 * a fixed alternating noise of +-noise. */
static MsMeasurementSet *
bench_rows(double truth, double noise)
{
    g_autoptr(MsBenchSpec) spec = ms_bench_spec_new();
    MsMeasurementSet *set = ms_measurement_set_new();
    static const guint32 tokens[] = {64, 256, 1024, 4096};
    guint n = 0;
    for (guint t = 0; t < G_N_ELEMENTS(tokens); t++) {
        MsBenchKernel kern[3];
        ms_bench_expert_kernels(spec, tokens[t], kern);
        for (guint j = 0; j < 3; j++) {
            double flops =
                kern[j].kind == MS_MEASUREMENT_GEMM ? 2.0 * kern[j].m * kern[j].n * kern[j].k : 0;
            double alone = 5e-6 + flops / 200e12 + (double)kern[j].bytes / 1.5e12;
            for (guint under = 0; under < 2; under++) {
                double sec = under ? alone * truth * (1 + (n++ % 2 ? noise : -noise)) : alone;
                MsMeasurement m = {.kind = kern[j].kind,
                                   .bytes = kern[j].bytes,
                                   .ranks = 1,
                                   .ranks_per_node = 1,
                                   .m = kern[j].m,
                                   .n = kern[j].n,
                                   .k = kern[j].k,
                                   .dtype = "bf16",
                                   .label = kern[j].label,
                                   .seconds = sec,
                                   .min_s = NAN,
                                   .median_s = sec,
                                   .mean_s = NAN,
                                   .background_bytes = under ? BACKGROUND : 0};
                CU_ASSERT_TRUE(ms_measurement_set_add(set, &m, NULL));
            }
        }
    }
    return set;
}

static void
test_calibrate(void)
{
    g_autoptr(MsTopology) topo = ms_topology_load("dgx-a100", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(topo);
    g_autoptr(MsMeasurementSet) set = bench_rows(1.2, 0.02);
    g_autoptr(MsCalibration) cal = ms_calibration_new();
    g_autoptr(GPtrArray) report = g_ptr_array_new_with_free_func(g_free);
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_calibrate(topo, set, NULL, cal, report, &error));
    /* The alternating +-2% around 1.2 cancel in the least-squares factor to within the noise. */
    g_autoptr(MsComputeModel) model =
        ms_calibration_compute_model(cal, ms_topology_gpu_spec(topo, 0), &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(model);
    double s = ms_compute_model_overlap_slowdown(model);
    MS_ASSERT_REL(s, 1.2, 0.005);
    gboolean reported = FALSE;
    for (guint i = 0; i < report->len; i++) {
        reported |= g_str_has_prefix(report->pdata[i], "overlap slowdown 1.199 +- 0.007 (12 "
                                                       "kernels alone and under an allreduce");
    }
    CU_ASSERT_TRUE(reported);

    /* The expert curve is the kernels' alone: the same as fitted without the overlapped rows. */
    g_autoptr(MsMeasurementSet) alone = ms_measurement_set_new();
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        const MsMeasurement *r = ms_measurement_set_get(set, i);
        if (!ms_measurement_overlapped(r)) {
            CU_ASSERT_TRUE(ms_measurement_set_add(alone, r, NULL));
        }
    }
    g_autoptr(MsCalibration) plain = ms_calibration_new();
    CU_ASSERT_TRUE_FATAL(ms_calibrate(topo, alone, NULL, plain, NULL, &error));
    g_autoptr(MsComputeModel) pm =
        ms_calibration_compute_model(plain, ms_topology_gpu_spec(topo, 0), &error);
    CU_ASSERT_EQUAL(ms_compute_model_overlap_slowdown(pm), 1.0);
    for (guint i = 0; i < ms_measurement_set_size(alone); i++) {
        double a = 0, b = 0;
        const MsMeasurement *r = ms_measurement_set_get(alone, i);
        CU_ASSERT_TRUE(ms_calibrate_predict(topo, cal, r, &a, NULL));
        CU_ASSERT_TRUE(ms_calibrate_predict(topo, plain, r, &b, NULL));
        CU_ASSERT_EQUAL(a, b);
    }

    /* A row under the allreduce is predicted as the engine runs compute beside NCCL: the launch,
     * then the body stretched by the slowdown. */
    const MsMeasurement *a = ms_measurement_set_get(set, 2), *u = ms_measurement_set_get(set, 3);
    CU_ASSERT_TRUE_FATAL(ms_measurement_overlapped(u) && !ms_measurement_overlapped(a));
    double ta = 0, tu = 0, launch = ms_time_to_s(ms_compute_model_launch(model));
    CU_ASSERT_TRUE(ms_calibrate_predict(topo, cal, a, &ta, NULL));
    CU_ASSERT_TRUE(ms_calibrate_predict(topo, cal, u, &tu, NULL));
    /* Times are whole picoseconds. */
    CU_ASSERT_DOUBLE_EQUAL(tu - launch, s * (ta - launch), 2e-12);
}

static void
test_cli(void)
{
    g_autoptr(MsMeasurementSet) set = bench_rows(1.3, 0);
    g_autofree char *csv = ms_moesim_csv_write(set, NULL);
    CU_ASSERT_TRUE(g_str_has_prefix(csv, "# moesim-measurements 2\n"));
    g_autofree char *path = ms_test_write_tmp("overlap.csv", csv);
    g_autofree char *out = g_build_filename(ms_test_tmpdir(), "overlap.ini", NULL);
    g_auto(MsTestRun) r =
        ms_test_moesim_run("calibrate", path, "--topology", "dgx-a100", "--out", out, NULL);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "overlap slowdown 1.300 +- 0.000 (12 kernels alone and "
                                         "under an allreduce, largest 1.300x; median error of the "
                                         "time together 23.1% without it, 0.0% with it)"));
    g_autofree char *ini = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(out, &ini, NULL, NULL));
    CU_ASSERT_PTR_NOT_NULL(strstr(ini, "overlap_slowdown = 1.3\n"));
    /* validate predicts the rows under the allreduce with it. */
    g_auto(MsTestRun) v =
        ms_test_moesim_run("validate", "-M", path, "-t", "dgx-a100", "-c", out, NULL);
    CU_ASSERT_EQUAL(v.rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(v.out, "\ngemm 1x1 mlp_up_proj under allreduce          4 "));
    CU_ASSERT_PTR_NOT_NULL(strstr(v.out, "\ngemm 1x1 mlp_up_proj                          4 "));

    /* A kernel under an allreduce without its kernel alone: file:line, exit 2. */
    g_autofree char *bad =
        ms_test_write_tmp("orphan.csv", "# moesim-measurements 2\n"
                                        "kind,m,n,k,dtype,label,time_us,background_bytes\n"
                                        "gemm,256,4096,14336,bf16,mlp_down_proj,120,26214400\n");
    g_auto(MsTestRun) o =
        ms_test_moesim_run("calibrate", bad, "--topology", "dgx-a100", "--out", out, NULL);
    CU_ASSERT_EQUAL(o.rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.err, "orphan.csv:3: gemm 'mlp_down_proj' 256x4096x14336 timed "
                                         "under an allreduce of 26214400 B: no row of the same "
                                         "kernel alone"));
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"least squares in closed form, rows to fit on", test_closed_form},
        {"the model's range: no speedup, at most the largest", test_range},
        {"each kernel under an allreduce paired with its kernel alone", test_pairing},
        {"calibrate: the slowdown fitted, the curve untouched, rows predicted", test_calibrate},
        {"command line: calibrate, validate, a row without its kernel alone", test_cli},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"overlap_fit", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
