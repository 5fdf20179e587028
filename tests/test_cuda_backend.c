/* Device tests of the cuda backend (exit 77, skipped, without a CUDA device or without the
 * backend): the backend as moesim finds it (the registry, its module), a one-rank schedule of
 * every op kind through the whole launch path (this moesim's workers), op times against the
 * compute model, fp16, two ranks' collectives when two GPUs are there, and the microbenchmarks'
 * rows (the concurrency benchmark's with two GPUs). */
#include "backends/cuda/cuda_options.h"
#include "backends/bench_options.h"
#include "backends/executor_bench.h"
#include "backends/executor_remote.h"
#include "backends/registry.h"
#include "ms_test.h"
#include "sim/compute.h"
#include "validate/bench_report.h"
#include "validate/moesim_csv.h"
#include "validate/overlap_fit.h"

static guint n_gpus;
static const MsExecBackend *cuda;

static MsExecOptions
options(void)
{
    MsExecOptions o = {.timeout_s = 120 * ms_test_time_factor(),
                       .worker_command = ms_test_moesim()};
    return o;
}

/* Runs s on the cuda backend (this moesim's workers) with the given options record, reporting a
 * failure. */
static MsRecords *
execute_with(const MsSchedule *s, const MsCudaOptions *record)
{
    MsExecOptions o = options();
    o.backend = record;
    GError *error = NULL;
    MsRecords *r = ms_backend_execute("cuda", s, NULL, &o, &error);
    if (error) {
        fprintf(stderr, "\n  %s\n", error->message);
        g_error_free(error);
    }
    return r;
}

static MsRecords *
execute(const MsSchedule *s)
{
    return execute_with(s, NULL);
}

static guint32
gemm(MsSchedule *s, guint rank, MsComputeKind kind, guint32 m, guint32 n, guint32 k, guint32 count,
     guint32 experts, const char *label)
{
    guint32 op =
        ms_schedule_add_compute(s, rank, 0, MS_ROLE_EXPERT, MS_PHASE_FORWARD, 0, -1, label);
    guint32 sets = MAX(experts, 1);
    ms_schedule_set_cost(s, op, kind, 2.0 * m * n * k * count * sets, 0, m * sets);
    ms_schedule_set_shape(s, op, m, n, k, count, experts);
    return op;
}

/* One rank: a big GEMM, an expert op, an elementwise op, an empty op, an all-to-all to itself
 * and an allreduce, chained. */
static void
test_one_rank(void)
{
    g_autoptr(MsSchedule) s = ms_schedule_new(1);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_add_stream(s, "comm", MS_STREAM_COMM);
    ms_schedule_set_policy(s, "fifo");
    guint32 big = gemm(s, 0, MS_COMPUTE_GEMM, 8192, 8192, 8192, 1, 0, "big");
    guint32 ex = gemm(s, 0, MS_COMPUTE_EXPERT, 2048, 14336, 4096, 3, 2, "experts");
    guint32 el = ms_schedule_add_compute(s, 0, 0, MS_ROLE_GATE, MS_PHASE_FORWARD, 0, -1, "act");
    ms_schedule_set_cost(s, el, MS_COMPUTE_ELEMENTWISE, 0, 1 << 28, 0);
    guint32 none = ms_schedule_add_compute(s, 0, 0, MS_ROLE_OTHER, MS_PHASE_FORWARD, 0, -1, "nop");
    guint32 zero = 0, x, y;
    guint64 self = 64 << 20;
    ms_schedule_add_alltoall(s, 1, &zero, 1, &self, 1, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0, -1,
                             "self", &x);
    ms_schedule_add_allreduce(s, 1, &zero, 1, 32 << 20, 0, MS_PHASE_BACKWARD, 0, -1, "ar", &y);
    ms_schedule_add_dep(s, x, big);
    ms_schedule_add_dep(s, y, x);
    CU_ASSERT_TRUE_FATAL(ms_schedule_validate(s, NULL));
    g_autoptr(MsRecords) r = execute(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        CU_ASSERT_NOT_EQUAL(ms_records_start(r, op), MS_TIME_NEVER);
        CU_ASSERT_TRUE(ms_records_end(r, op) >= ms_records_start(r, op));
    }
    CU_ASSERT_TRUE(ms_records_start(r, x) >= ms_records_end(r, big));
    double v = 0;
    CU_ASSERT_TRUE(ms_records_get_stat(r, "gemm_calls", &v));
    CU_ASSERT_EQUAL(v, 1 + 3); /* one call for big, one per matrix for the 2 experts */
    CU_ASSERT_TRUE(ms_records_get_stat(r, "elementwise_kernels", &v));
    CU_ASSERT_EQUAL(v, 1);
    CU_ASSERT_TRUE(ms_records_get_stat(r, "empty_kernels", &v));
    CU_ASSERT_EQUAL(v, 1);
    /* 1.1 TFLOP: within 0.2x to 5x of the roofline of an H100/H200-class GPU at 70% */
    g_autoptr(MsTopology) h200 = ms_topology_load("h200", NULL);
    g_autoptr(MsComputeModel) m = ms_compute_model_new(ms_topology_gpu_spec(h200, 0), NULL);
    double model = ms_time_to_s(ms_compute_time(m, 2.0 * 8192 * 8192 * 8192, 0, 8192));
    double took = ms_time_to_s(ms_records_end(r, big) - ms_records_start(r, big));
    fprintf(stderr, "\n  8192^3 bf16 GEMM: %.3f ms measured, %.3f ms modelled (h200)\n", took * 1e3,
            model * 1e3);
    CU_ASSERT_TRUE(took > 0.2 * model && took < 5 * model);
    (void)ex;
    (void)el;
    (void)none;
}

/* fp16 through the options record: the same GEMM runs, in about the time of bf16 (both use the
 * tensor cores at the same rate on Ampere and Hopper). */
static void
test_fp16(void)
{
    g_autoptr(MsSchedule) s = ms_schedule_new(1);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_set_policy(s, "fifo");
    guint32 g = gemm(s, 0, MS_COMPUTE_GEMM, 8192, 8192, 8192, 1, 0, "g");
    MsCudaOptions half = {.dtype = MS_CUDA_FP16};
    g_autoptr(MsRecords) h = execute_with(s, &half);
    g_autoptr(MsRecords) b = execute(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    double th = (double)(ms_records_end(h, g) - ms_records_start(h, g));
    double tb = (double)(ms_records_end(b, g) - ms_records_start(b, g));
    fprintf(stderr, "\n  8192^3 GEMM: fp16 %.3f ms, bf16 %.3f ms\n", th * 1e-9, tb * 1e-9);
    CU_ASSERT_TRUE(th > 0.5 * tb && th < 2 * tb);
    /* A record out of range is refused by the backend's own check, on the rank. */
    MsCudaOptions bad = {.dtype = (MsCudaDtype)7};
    MsExecOptions o = options();
    o.backend = &bad;
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_backend_execute("cuda", s, NULL, &o, &error));
    CU_ASSERT_TRUE(error && strstr(error->message, "dtype: 7 is not a datatype"));
    g_clear_error(&error);
}

/* The schedule's dtype sets the GEMM's types: the same 8192^3 GEMM at fp32 (no tensor cores:
 * V100 15.7 against 125 TFLOP/s fp16, H100 SXM 67 against 989, NVIDIA's datasheets) takes more
 * than three times its bf16 time, and at tf32 (tensor cores from compute capability 8.0) less
 * than its fp32 time. */
static void
test_schedule_dtype(void)
{
    double t[3] = {0};
    static const char *const names[] = {"bf16", "fp32", "tf32"};
    double sm = 0;
    for (guint d = 0; d < G_N_ELEMENTS(names); d++) {
        g_autoptr(MsSchedule) s = ms_schedule_new(1);
        ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
        ms_schedule_set_policy(s, "fifo");
        ms_schedule_set_meta(s, "dtype", names[d]);
        guint32 g = gemm(s, 0, MS_COMPUTE_GEMM, 8192, 8192, 8192, 1, 0, "g");
        g_autoptr(MsRecords) r = execute(s);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        t[d] = (double)(ms_records_end(r, g) - ms_records_start(r, g));
        CU_ASSERT_TRUE(ms_records_get_stat(r, "device_sm", &sm));
    }
    fprintf(stderr, "\n  8192^3 GEMM: bf16 %.3f ms, fp32 %.3f ms, tf32 %.3f ms (sm %g)\n",
            t[0] * 1e-9, t[1] * 1e-9, t[2] * 1e-9, sm);
    CU_ASSERT_TRUE(t[1] > 3 * t[0]);
    if (sm >= 80) {
        CU_ASSERT_TRUE(t[2] < t[1]);
    }
    /* An fp8 schedule is refused before any GPU work, naming the datatype. */
    g_autoptr(MsSchedule) s = ms_schedule_new(1);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_set_policy(s, "fifo");
    ms_schedule_set_meta(s, "dtype", "fp8");
    gemm(s, 0, MS_COMPUTE_GEMM, 64, 64, 64, 1, 0, "g");
    MsExecOptions o = options();
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_backend_execute("cuda", s, NULL, &o, &error));
    CU_ASSERT_TRUE(error && strstr(error->message, "runs no fp8 GEMMs"));
    g_clear_error(&error);
}

static void
test_two_ranks(void)
{
    if (n_gpus < 2) {
        fprintf(stderr, " (one GPU: skipped) ");
        return;
    }
    g_autoptr(MsSchedule) s = ms_schedule_new(2);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_add_stream(s, "a2a", MS_STREAM_COMM);
    ms_schedule_add_stream(s, "ar", MS_STREAM_COMM);
    ms_schedule_set_policy(s, "lina");
    guint32 ranks[2] = {0, 1}, x[2], y[2];
    guint64 m[4] = {1 << 20, 3 << 20, 5 << 20, 7 << 20};
    ms_schedule_add_alltoall(s, 1, ranks, 2, m, 1, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0, -1,
                             "x", x);
    ms_schedule_add_allreduce(s, 2, ranks, 2, 64 << 20, 0, MS_PHASE_BACKWARD, 0, -1, "y", y);
    for (guint r = 0; r < 2; r++) {
        guint32 g = gemm(s, r, MS_COMPUTE_GEMM, 4096, 4096, 4096, 1, 0, "g");
        ms_schedule_add_dep(s, g, x[r]);
        ms_schedule_add_dep(s, y[r], g);
    }
    g_autoptr(MsRecords) r = execute(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    double v = 0;
    CU_ASSERT_TRUE(ms_records_get_stat(r, "ranks", &v));
    CU_ASSERT_EQUAL(v, 2);
}

static GBytes *
spec_for(const char *const *hosts, guint world, gpointer data, GError **error)
{
    MsBenchSpec *spec = data;
    return ms_bench_plan_pairs(spec, NULL, hosts, world, error) ? ms_bench_spec_to_bytes(spec)
                                                                : NULL;
}

/* Runs the benchmarks of spec on world ranks and reads rank 0's CSV into set: the result's
 * bytes, NULL (reported) when the run failed. */
static GBytes *
run_bench(guint world, MsBenchSpec *spec, MsMeasurementSet *set)
{
    MsExecOptions o = options();
    GError *error = NULL;
    GBytes *result = ms_remote_bench(cuda, world, spec_for, spec, &o, &error);
    if (error) {
        fprintf(stderr, "\n  %s\n", error->message);
        g_clear_error(&error);
    }
    if (result) {
        gsize len = 0;
        const char *text = g_bytes_get_data(result, &len);
        CU_ASSERT_TRUE(ms_moesim_csv_read(set, text, len, "bench", &error));
        g_clear_error(&error);
    }
    return result;
}

static void
test_bench(void)
{
    g_autoptr(MsBenchSpec) spec = ms_bench_spec_new();
    spec->what = MS_BENCH_GEMM | MS_BENCH_LAUNCH | MS_BENCH_ALLREDUCE;
    spec->max_bytes = 1 << 20;
    spec->iters = 5;
    spec->warmup = 2;
    CU_ASSERT_TRUE_FATAL(ms_bench_option_set(spec, "--tokens", "1,256", NULL));
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    g_autoptr(GBytes) result = run_bench(1, spec, set);
    CU_ASSERT_PTR_NOT_NULL_FATAL(result);
    /* 18 allreduce sizes (8 B .. 1 MiB), 2 token counts x 3 kernels, 1 launch row */
    CU_ASSERT_EQUAL(ms_measurement_set_size(set), 18 + 6 + 1);
    g_autofree char *table = ms_bench_report_format(set, NULL);
    fprintf(stderr, "\n%s", table);
}

/* Two ranks: the concurrency benchmark at NCCL's own channels and at 2 (set in the environment
 * the workers inherit, as moesim bench sets it): per size an all-to-all alone and under the
 * looping allreduce, which cannot make it faster than alone by more than noise. */
static void
test_bench_concurrency(void)
{
    if (n_gpus < 2) {
        fprintf(stderr, " (one GPU: skipped) ");
        return;
    }
    for (guint32 channels = 0; channels <= 2; channels += 2) {
        g_autoptr(MsBenchSpec) spec = ms_bench_spec_new();
        spec->what = MS_BENCH_CONCURRENCY;
        spec->iters = 5;
        spec->warmup = 2;
        spec->background_bytes = 16u << 20;
        spec->channels = channels;
        CU_ASSERT_TRUE_FATAL(ms_bench_option_set(spec, "--concurrency-sizes", "1M,16M", NULL));
        g_auto(GStrv) vars = ms_bench_nccl_assignments(spec);
        for (guint k = 0; vars[k]; k++) {
            g_auto(GStrv) kv = g_strsplit(vars[k], "=", 2);
            g_setenv(kv[0], kv[1], TRUE);
        }
        g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
        g_autoptr(GBytes) result = run_bench(2, spec, set);
        g_unsetenv("NCCL_MIN_NCHANNELS");
        g_unsetenv("NCCL_MAX_NCHANNELS");
        CU_ASSERT_PTR_NOT_NULL_FATAL(result);
        CU_ASSERT_TRUE(
            g_str_has_prefix(g_bytes_get_data(result, NULL), "# moesim-measurements 2\n"));
        /* The allreduce alone, then per size the all-to-all alone and under it. */
        CU_ASSERT_EQUAL_FATAL(ms_measurement_set_size(set), 1 + 2 * 2);
        CU_ASSERT_EQUAL(ms_measurement_set_get(set, 0)->kind, MS_MEASUREMENT_ALLREDUCE);
        for (guint k = 0; k < 2; k++) {
            const MsMeasurement *a = ms_measurement_set_get(set, 1 + 2 * k);
            const MsMeasurement *u = ms_measurement_set_get(set, 2 + 2 * k);
            CU_ASSERT_EQUAL(a->kind, MS_MEASUREMENT_ALLTOALL);
            CU_ASSERT_EQUAL(u->kind, MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE);
            CU_ASSERT_EQUAL(u->background_bytes, 16u << 20);
            CU_ASSERT_EQUAL(u->bytes, a->bytes);
            CU_ASSERT_EQUAL(u->channels, channels);
            CU_ASSERT(u->seconds > 0.8 * a->seconds);
        }
        g_autofree char *table = ms_bench_report_format(set, NULL);
        fprintf(stderr, "\n%s", table);
    }
}

/* The overlap benchmark: each expert kernel on rank 0 alone, then (two ranks) under the looping
 * allreduce over both; with one rank, alone only. Under the allreduce a kernel cannot be faster
 * than alone by more than noise. */
static void
test_bench_overlap(void)
{
    for (guint world = 1; world <= MIN(n_gpus, 2); world++) {
        g_autoptr(MsBenchSpec) spec = ms_bench_spec_new();
        spec->what = MS_BENCH_OVERLAP;
        spec->iters = 5;
        spec->warmup = 2;
        spec->background_bytes = 16u << 20;
        CU_ASSERT_TRUE_FATAL(ms_bench_option_set(spec, "--tokens", "16,1024", NULL));
        g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
        g_autoptr(GBytes) result = run_bench(world, spec, set);
        CU_ASSERT_PTR_NOT_NULL_FATAL(result);
        if (world == 1) {
            CU_ASSERT_EQUAL(ms_measurement_set_size(set), 2 * 3);
            continue;
        }
        /* The allreduce alone, then per token count and kernel alone and under it. */
        CU_ASSERT_EQUAL_FATAL(ms_measurement_set_size(set), 1 + 2 * 3 * 2);
        CU_ASSERT_EQUAL(ms_measurement_set_get(set, 0)->kind, MS_MEASUREMENT_ALLREDUCE);
        for (guint k = 0; k < 6; k++) {
            const MsMeasurement *a = ms_measurement_set_get(set, 1 + 2 * k);
            const MsMeasurement *u = ms_measurement_set_get(set, 2 + 2 * k);
            CU_ASSERT_FALSE(ms_measurement_overlapped(a));
            CU_ASSERT_TRUE(ms_measurement_overlapped(u));
            CU_ASSERT_EQUAL(u->kind, a->kind);
            CU_ASSERT_EQUAL(u->m, a->m);
            CU_ASSERT_EQUAL(u->background_bytes, 16u << 20);
            CU_ASSERT(u->seconds > 0.8 * a->seconds);
        }
        MsOverlapFit f;
        CU_ASSERT_TRUE(ms_overlap_fit(set, NULL, &f, NULL));
        CU_ASSERT_EQUAL(f.pairs, 6);
        fprintf(stderr, "\n  overlap slowdown %.3f +- %.3f, largest %.3fx\n", f.slowdown,
                f.std_error, f.largest);
        g_autofree char *table = ms_bench_report_format(set, NULL);
        fprintf(stderr, "\n%s", table);
    }
}

static int
suite_init(void)
{
    return 0;
}

int
main(int argc, char **argv)
{
    g_autoptr(GError) error = NULL;
    const MsBackendInfo *info = ms_backend_find("cuda", NULL);
    cuda = ms_backend_hooks(info, &error);
    if (cuda == NULL && ms_backend_in_build(info)) {
        /* This build made the module: that it does not load is a failure, not a skip. */
        fprintf(stderr, "%s\n", error->message);
        return 1;
    }
    n_gpus = cuda ? cuda->devices(NULL) : 0;
    static const MsTestCase tests[] = {
        {"one rank: every op kind, times against the model", test_one_rank},
        {"fp16 from the options record", test_fp16},
        {"fp32, tf32 and fp8 from the schedule's dtype", test_schedule_dtype},
        {"two ranks: all-to-all and allreduce", test_two_ranks},
        {"microbenchmarks", test_bench},
        {"two ranks: the concurrency benchmark", test_bench_concurrency},
        {"one and two ranks: the overlap benchmark", test_bench_overlap},
        {NULL, NULL},
    };
    static const MsTestSuite with_gpu[] = {{"cuda backend", suite_init, NULL, tests}, {NULL}};
    static const MsTestSuite none[] = {{NULL}};
    if (cuda == NULL) {
        fprintf(stderr, "%s: the cuda backend's device tests are skipped\n", error->message);
    } else if (n_gpus == 0) {
        fprintf(stderr, "no CUDA device: the cuda backend's device tests are skipped\n");
    }
    return ms_test_main(argc, argv, n_gpus ? with_gpu : none);
}
