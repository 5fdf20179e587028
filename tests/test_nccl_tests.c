/* Tests of nccl_tests: the sample logs in tests/data (format samples in the exact layout of
 * nccl-tests output, with synthetic numbers), kind detection, concatenated runs, and every error
 * path with its code and SOURCE:LINE message. */
#include "ms_test.h"
#include "validate/fit.h"
#include "validate/nccl_tests.h"

static MsMeasurementSet *
load_sample(const char *name)
{
    g_autofree char *path = g_build_filename(ms_test_srcdir(), "tests", "data", name, NULL);
    GError *error = NULL;
    MsMeasurementSet *set = ms_measurement_set_load(path, &error);
    if (error) {
        fprintf(stderr, "\n  %s\n", error->message);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(set);
    return set;
}

static void
test_all_reduce(void)
{
    g_autoptr(MsMeasurementSet) set = load_sample("all_reduce_perf.log");
    CU_ASSERT_EQUAL_FATAL(ms_measurement_set_size(set), 18);
    const MsMeasurement *r = ms_measurement_set_get(set, 0);
    CU_ASSERT_EQUAL(r->kind, MS_MEASUREMENT_ALLREDUCE);
    CU_ASSERT_EQUAL(r->bytes, 1024);
    CU_ASSERT_EQUAL(r->ranks, 8);
    CU_ASSERT_EQUAL(r->ranks_per_node, 4);
    CU_ASSERT_STRING_EQUAL(r->dtype, "fp32");
    CU_ASSERT_DOUBLE_EQUAL(r->seconds, 20.01e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r->mean_s, 20.01e-6, 1e-15);
    CU_ASSERT_TRUE(isnan(r->median_s) && isnan(r->min_s));
    CU_ASSERT_EQUAL(r->line, 20);
    CU_ASSERT_EQUAL(r->threads, 1);
    CU_ASSERT_EQUAL(r->gpus_per_thread, 1);
    CU_ASSERT_TRUE(g_str_has_suffix(r->source, "all_reduce_perf.log"));
    const MsMeasurement *last = ms_measurement_set_get(set, 17);
    CU_ASSERT_EQUAL(last->bytes, 134217728);
    /* The sample was written from t = 20 us + size / 100 GB/s (out-of-place; in-place is 0.2%
     * slower and must not be read): the fit gives them back to the printing precision. */
    g_autoptr(GArray) x = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GArray) t = g_array_new(FALSE, FALSE, sizeof(double));
    CU_ASSERT_EQUAL(ms_measurement_set_series(set, MS_MEASUREMENT_ALLREDUCE, 8, 4, x, t), 18);
    MsLinearFit f;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(
        ms_fit_linear_relative((double *)x->data, (double *)t->data, x->len, &f, &error));
    CU_ASSERT_DOUBLE_EQUAL(f.alpha, 20e-6, 0.01e-6);
    MS_ASSERT_REL(f.beta, 100e9, 1e-4);
}

static void
test_old_layout_concatenated(void)
{
    /* No "Collective test starting" line: the kind comes from the file name; no root column;
     * mpirun tags; NCCL INFO noise; two runs of 8 and 4 ranks. */
    g_autoptr(MsMeasurementSet) set = load_sample("alltoall_perf.log");
    CU_ASSERT_EQUAL_FATAL(ms_measurement_set_size(set), 8);
    for (guint i = 0; i < 8; i++) {
        const MsMeasurement *r = ms_measurement_set_get(set, i);
        CU_ASSERT_EQUAL(r->kind, MS_MEASUREMENT_ALLTOALL);
        CU_ASSERT_EQUAL(r->ranks, i < 4 ? 8 : 4);
        CU_ASSERT_EQUAL(r->ranks_per_node, r->ranks);
        CU_ASSERT_STRING_EQUAL(r->dtype, i < 4 ? "fp32" : "fp16");
    }
    CU_ASSERT_EQUAL(ms_measurement_set_get(set, 1)->bytes, 32768);
    CU_ASSERT_DOUBLE_EQUAL(ms_measurement_set_get(set, 1)->seconds, 30.82e-6, 1e-15);
}

static void
test_sendrecv(void)
{
    g_autoptr(MsMeasurementSet) set = load_sample("sendrecv_perf.log");
    CU_ASSERT_EQUAL_FATAL(ms_measurement_set_size(set), 3);
    const MsMeasurement *r = ms_measurement_set_get(set, 2);
    CU_ASSERT_EQUAL(r->kind, MS_MEASUREMENT_SENDRECV);
    CU_ASSERT_EQUAL(r->ranks, 2);
    CU_ASSERT_EQUAL(r->ranks_per_node, 1);
    CU_ASSERT_EQUAL(r->bytes, G_GUINT64_CONSTANT(4294967296));
    CU_ASSERT_STRING_EQUAL(r->dtype, "bf16");
    /* Printed as "1.2e+07" us. */
    CU_ASSERT_DOUBLE_EQUAL(r->seconds, 12.0, 1e-12);
}

static void
test_two_collectives(void)
{
    g_autoptr(MsMeasurementSet) set = load_sample("collectives_concatenated.log");
    CU_ASSERT_EQUAL_FATAL(ms_measurement_set_size(set), 6);
    for (guint i = 0; i < 6; i++) {
        const MsMeasurement *r = ms_measurement_set_get(set, i);
        CU_ASSERT_EQUAL(r->kind, i < 3 ? MS_MEASUREMENT_ALLGATHER : MS_MEASUREMENT_REDUCESCATTER);
        CU_ASSERT_EQUAL(r->ranks, 8);
        CU_ASSERT_EQUAL(r->ranks_per_node, 8);
    }
    CU_ASSERT_EQUAL(ms_measurement_set_get(set, 5)->bytes, 16777216);
}

static void
test_kind_names(void)
{
    MsMeasurementKind k = MS_MEASUREMENT_N_KINDS;
    CU_ASSERT_TRUE(ms_nccl_tests_kind_from_name("all_reduce_perf", &k));
    CU_ASSERT_EQUAL(k, MS_MEASUREMENT_ALLREDUCE);
    CU_ASSERT_TRUE(ms_nccl_tests_kind_from_name("runs/ALLTOALL_8gpu.log", &k));
    CU_ASSERT_EQUAL(k, MS_MEASUREMENT_ALLTOALL);
    CU_ASSERT_TRUE(ms_nccl_tests_kind_from_name("reduce_scatter_perf", &k));
    CU_ASSERT_EQUAL(k, MS_MEASUREMENT_REDUCESCATTER);
    CU_ASSERT_TRUE(ms_nccl_tests_kind_from_name("send_recv.txt", &k));
    CU_ASSERT_EQUAL(k, MS_MEASUREMENT_SENDRECV);
    CU_ASSERT_TRUE(ms_nccl_tests_kind_from_name("allgather", &k));
    CU_ASSERT_EQUAL(k, MS_MEASUREMENT_ALLGATHER);
    CU_ASSERT_FALSE(ms_nccl_tests_kind_from_name("alltoallv_perf", &k));
    CU_ASSERT_FALSE(ms_nccl_tests_kind_from_name("broadcast_perf", &k));
    CU_ASSERT_TRUE(ms_nccl_tests_sniff("# Using devices\n", 16));
    CU_ASSERT_FALSE(ms_nccl_tests_sniff("size,count\n1,2\n", 15));
}

/* A valid one-run log with its data line replaced by `data`. */
#define DEVICES                                                                                    \
    "#\n# Using devices\n"                                                                         \
    "#  Rank  0 Group  0 Pid   100 on      host1 device  0 [0x07] NVIDIA A100-SXM4-80GB\n"         \
    "#  Rank  1 Group  0 Pid   100 on      host1 device  1 [0x0f] NVIDIA A100-SXM4-80GB\n"
#define PRE                                                                                        \
    "# nThread 1 nGpus 2 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 agg "     \
    "iters: 1 validation: 1 graph: 0\n" DEVICES
#define HDR                                                                                        \
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     "    \
    "time   algbw   busbw #wrong\n"

static void
test_errors(void)
{
    static const struct {
        const char *text;
        int code;
        const char *needle;
    } cases[] = {
        {PRE HDR "        1024           256     float     sum      -1    20.01    0.05    0.05\n",
         MS_MEASUREMENT_ERROR_SYNTAX, "t.log:7: 8 fields, but the column header names 13"},
        {PRE HDR
         "        1024           256     float     sum      -1    fast    0.05    0.05      0"
         "    20.05    0.05    0.05      0\n",
         MS_MEASUREMENT_ERROR_VALUE, "t.log:7: time: 'fast' is not a number"},
        {PRE HDR
         "        1024           256     float     sum      -1   -20.01    0.05    0.05      0"
         "    20.05    0.05    0.05      0\n",
         MS_MEASUREMENT_ERROR_VALUE,
         "t.log:7: time: '-20.01' out of range (must be between 0.001 and 1e+12)"},
        {PRE HDR
         "        1024           256     float     sum      -1    20.01    0.05    0.05     12"
         "    20.05    0.05    0.05      0\n",
         MS_MEASUREMENT_ERROR_VALUE, "t.log:7: #wrong: 12 elements wrong"},
        {PRE HDR
         "       1e+03           256     float     sum      -1    20.01    0.05    0.05      0"
         "    20.05    0.05    0.05      0\n",
         MS_MEASUREMENT_ERROR_VALUE, "t.log:7: size: '1e+03' is not a non-negative integer"},
        {PRE HDR
         "        1024           256     quad      sum      -1    20.01    0.05    0.05      0"
         "    20.05    0.05    0.05      0\n",
         MS_MEASUREMENT_ERROR_VALUE, "t.log:7: type: 'quad' is not an nccl-tests data type"},
        {PRE "        1024           256     float     sum      -1    20.01    0.05    0.05      0"
             "    20.05    0.05    0.05      0\n",
         MS_MEASUREMENT_ERROR_MISSING, "t.log:6: data line before the '# size count type"},
        {HDR "        1024           256     float     sum      -1    20.01    0.05    0.05      0"
             "    20.05    0.05    0.05      0\n",
         MS_MEASUREMENT_ERROR_MISSING, "t.log:2: data line before any '#  Rank"},
        {PRE "#       size         count      type   redop    root   algbw\n",
         MS_MEASUREMENT_ERROR_MISSING, "t.log:6: the column header has no 'time' column"},
        {PRE "#  Rank  1 Group  0 Pid   100 on      host1 device  1 [0x0f] NVIDIA A100\n",
         MS_MEASUREMENT_ERROR_VALUE, "t.log:6: Rank: 1 is listed twice"},
        {"#  Rank  x Group  0 Pid   100 on      host1 device  1\n", MS_MEASUREMENT_ERROR_VALUE,
         "t.log:1: Rank: 'x' is not a non-negative integer"},
        {"#  Rank  0 Group  0 Pid   100\n", MS_MEASUREMENT_ERROR_SYNTAX,
         "t.log:1: Rank 0: no 'on HOSTNAME'"},
        {"#  Rank\n", MS_MEASUREMENT_ERROR_SYNTAX, "t.log:1: 'Rank' without a number"},
        {PRE HDR
         "        1024           256     float     sum      -1    20.01    0.05    0.05    abc"
         "    20.05    0.05    0.05      0\n",
         MS_MEASUREMENT_ERROR_VALUE, "t.log:7: #wrong: 'abc' is not a number"},
        {"# nThread 1 nGpus x minBytes 8\n", MS_MEASUREMENT_ERROR_VALUE,
         "t.log:1: nGpus: 'x' is not a non-negative integer"},
        {"# nThread 0 nGpus 2 minBytes 8\n", MS_MEASUREMENT_ERROR_VALUE,
         "t.log:1: nThread: '0' out of range (must be between 1 and"},
        {"# nThread 1 minBytes 8\n", MS_MEASUREMENT_ERROR_SYNTAX,
         "t.log:1: nGpus: the '# nThread T nGpus G' line has no 'nGpus G'"},
        {"# nThread 3 nGpus 1 minBytes 8\n" DEVICES HDR
         "        1024           256     float     sum      -1    20.01    0.05    0.05      0"
         "    20.05    0.05    0.05      0\n",
         MS_MEASUREMENT_ERROR_VALUE,
         "t.log:1: nGpus: nThread 3 x nGpus 1 does not divide the run's 2 ranks"},
        {"# Collective test starting: broadcast_perf\n", MS_MEASUREMENT_ERROR_VALUE,
         "t.log:1: collective test 'broadcast_perf' is not one moesim models"},
        {PRE HDR, MS_MEASUREMENT_ERROR_FORMAT, "t.log:6: no nccl-tests data line"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        GError *error = NULL;
        g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
        CU_ASSERT_FALSE(ms_nccl_tests_read(set, cases[i].text, strlen(cases[i].text), "t.log",
                                           MS_MEASUREMENT_ALLREDUCE, NULL, &error));
        MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, cases[i].code, cases[i].needle);
    }
}

/* nThread and nGpus of each run: the PRE run's (one thread driving both GPUs), then a run of
 * two threads of one GPU each; a log without the line keeps 0 (one process per GPU). */
static void
test_threads_and_gpus(void)
{
    const char *row =
        "        1024           256     float     sum      -1    20.01    0.05    0.05"
        "      0    20.05    0.05    0.05      0\n";
    g_autofree char *text = g_strconcat(
        PRE, HDR, row,
        "# nThread 2 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20\n"
        "#  Rank  0 Group  0 Pid   100 on      host1 device  0 [0x07] NVIDIA A100-SXM4-80GB\n"
        "#  Rank  1 Group  0 Pid   100 on      host1 device  1 [0x0f] NVIDIA A100-SXM4-80GB\n",
        HDR, row, NULL);
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_nccl_tests_read(set, text, strlen(text), "t.log",
                                            MS_MEASUREMENT_ALLREDUCE, NULL, &error));
    CU_ASSERT_EQUAL_FATAL(ms_measurement_set_size(set), 2);
    CU_ASSERT_EQUAL(ms_measurement_set_get(set, 0)->threads, 1);
    CU_ASSERT_EQUAL(ms_measurement_set_get(set, 0)->gpus_per_thread, 2);
    CU_ASSERT_EQUAL(ms_measurement_set_get(set, 1)->threads, 2);
    CU_ASSERT_EQUAL(ms_measurement_set_get(set, 1)->gpus_per_thread, 1);
    /* Without the line (an excerpt): 0, read as one process per GPU. */
    g_autofree char *excerpt = g_strconcat(DEVICES, HDR, row, NULL);
    g_autoptr(MsMeasurementSet) other = ms_measurement_set_new();
    CU_ASSERT_TRUE_FATAL(ms_nccl_tests_read(other, excerpt, strlen(excerpt), "t.log",
                                            MS_MEASUREMENT_ALLREDUCE, NULL, &error));
    CU_ASSERT_EQUAL(ms_measurement_set_get(other, 0)->gpus_per_thread, 0);
}

/* NCCL's "NCCL version" line gives the rows after it their release: printed alone (nccl-tests
 * 2.13 on) or inside an NCCL INFO line under an mpirun tag; a log without it gives 0, and a line
 * that names no release in NCCL's form changes nothing. */
static void
test_release(void)
{
    CU_ASSERT_EQUAL(ms_nccl_tests_release("NCCL version 2.29.2+cuda13.1"), 22902);
    CU_ASSERT_EQUAL(ms_nccl_tests_release("host:26:26 [0] NCCL INFO NCCL version 2.8.3+cuda11.2"),
                    20803);
    CU_ASSERT_EQUAL(ms_nccl_tests_release("NCCL version 2.18.3"), 21803);
    CU_ASSERT_EQUAL(ms_nccl_tests_release("NCCL version 2.x"), 0);
    CU_ASSERT_EQUAL(ms_nccl_tests_release("NCCL version 2.18.3-rc1"), 0);
    CU_ASSERT_EQUAL(ms_nccl_tests_release("NCCL version 2.180.3"), 0);
    CU_ASSERT_EQUAL(ms_nccl_tests_release("# nThread 1 nGpus 8"), 0);
    const char *row =
        "        1024           256     float     sum      -1    20.01    0.05    0.05"
        "      0    20.05    0.05    0.05      0\n";
    g_autofree char *text =
        g_strconcat(PRE, "[1,0]<stdout>:worker-0:26:26 [0] NCCL INFO NCCL version 2.9.9+cuda11.2\n",
                    "NCCL version 2.x is not a release\n", HDR, row, NULL);
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_nccl_tests_read(set, text, strlen(text), "t.log",
                                            MS_MEASUREMENT_ALLREDUCE, NULL, &error));
    CU_ASSERT_EQUAL(ms_measurement_set_get(set, 0)->nccl_version, 20909);
    g_autofree char *none = g_strconcat(PRE, HDR, row, NULL);
    g_autoptr(MsMeasurementSet) other = ms_measurement_set_new();
    CU_ASSERT_TRUE_FATAL(ms_nccl_tests_read(other, none, strlen(none), "t.log",
                                            MS_MEASUREMENT_ALLREDUCE, NULL, &error));
    CU_ASSERT_EQUAL(ms_measurement_set_get(other, 0)->nccl_version, 0);
}

static void
test_unknown_collective(void)
{
    /* A valid log whose collective cannot be told: no start line, no hint. */
    static const char text[] = PRE HDR
        "        1024           256     float     sum      -1    20.01    0.05    0.05      0"
        "    20.05    0.05    0.05      0\n";
    GError *error = NULL;
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    CU_ASSERT_FALSE(ms_nccl_tests_read(set, text, strlen(text), "run.log", MS_MEASUREMENT_N_KINDS,
                                       NULL, &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_MISSING,
                    "run.log:7: cannot tell which collective");
    /* Through ms_measurement_set_read_data the file name gives the hint. */
    CU_ASSERT_FALSE(ms_measurement_set_read_data(set, text, strlen(text), "run.log", &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_MISSING, "name the file");
    CU_ASSERT_TRUE(
        ms_measurement_set_read_data(set, text, strlen(text), "x/sendrecv_perf.out", &error));
    CU_ASSERT_EQUAL(ms_measurement_set_size(set), 1);
    CU_ASSERT_EQUAL(ms_measurement_set_get(set, 0)->kind, MS_MEASUREMENT_SENDRECV);
    CU_ASSERT_EQUAL(ms_measurement_set_get(set, 0)->ranks_per_node, 2);
    CU_ASSERT_STRING_EQUAL(ms_measurement_set_get(set, 0)->source, "x/sendrecv_perf.out");
}

/* srun --label logs: the excerpts of validate/data/corpus/aws-p5 (column header and data lines
 * only) in miniature, and the ways several tasks' lines can meet. */
#define ROW(size, us)                                                                              \
    "  " size "   256     float     sum      -1    " us "    0.05    0.05      0    " us           \
    "    0.05    0.05      0\n"

static MsMeasurementSet *
read_labelled(const char *text, guint ranks, guint per_node, GPtrArray *notes, GError **error)
{
    MsMeasurementSet *set = ms_measurement_set_new();
    MsMeasurementReadOptions opts = {ranks, per_node, notes};
    if (!ms_measurement_set_read_data_with(set, text, strlen(text), "all_reduce_2x8.log", &opts,
                                           error)) {
        ms_measurement_set_free(set);
        return NULL;
    }
    return set;
}

static void
test_srun_label(void)
{
    /* One task, no rank lines: the caller's shape, the label stripped (srun pads task numbers to
     * one width: " 0: " beside "15: "). */
    static const char one[] = " 0: " HDR " 0: " ROW("1024", "20.01") " 0: " ROW("2048", "30.50");
    GError *error = NULL;
    g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(MsMeasurementSet) set = read_labelled(one, 16, 8, notes, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(set);
    CU_ASSERT_EQUAL_FATAL(ms_measurement_set_size(set), 2);
    const MsMeasurement *r = ms_measurement_set_get(set, 1);
    CU_ASSERT_EQUAL(r->kind, MS_MEASUREMENT_ALLREDUCE);
    CU_ASSERT_EQUAL(r->bytes, 2048);
    CU_ASSERT_DOUBLE_EQUAL(r->seconds, 30.50e-6, 1e-15);
    CU_ASSERT_EQUAL(r->ranks, 16);
    CU_ASSERT_EQUAL(r->ranks_per_node, 8);
    CU_ASSERT_EQUAL(r->line, 3);
    CU_ASSERT_EQUAL(notes->len, 0);
    /* The sniffer sees the labelled header: ms_measurement_set_load_with's path. */
    CU_ASSERT_TRUE(ms_nccl_tests_sniff(one, strlen(one)));
    CU_ASSERT_EQUAL(ms_measurement_sniff(one, strlen(one)), MS_MEASUREMENT_FORMAT_NCCL_TESTS);

    /* Without a shape the run's ranks are unknown. */
    CU_ASSERT_PTR_NULL(read_labelled(one, 0, 0, NULL, &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_MISSING,
                    "all_reduce_2x8.log:2: data line before any '#  Rank");
    /* A shape is checked against rank lines when the log has them: PRE lists 2 on one host. */
    static const char ranked[] = PRE HDR ROW("1024", "20.01");
    CU_ASSERT_PTR_NULL(read_labelled(ranked, 16, 8, NULL, &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_VALUE,
                    "all_reduce_2x8.log:7: Rank: the '#  Rank' lines give 2 ranks, 2 per node, "
                    "but the given shape is 16 ranks, 8 per node");
    g_autoptr(MsMeasurementSet) agree = read_labelled(ranked, 2, 2, NULL, &error);
    CU_ASSERT_PTR_NOT_NULL(agree);
    /* A shape of more per node than ranks, or half a shape, is refused before reading. */
    CU_ASSERT_PTR_NULL(read_labelled(one, 4, 8, NULL, &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_VALUE,
                    "all_reduce_2x8.log: shape: 4 ranks, 8 per node");
    CU_ASSERT_PTR_NULL(read_labelled(one, 4, 0, NULL, &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_VALUE, "give both");

    /* Two tasks interleaved, each with a table of its own (e.g. one single-node run per task),
     * around unlabelled launcher lines: task 0's lines are read, task 1's skipped, with a note.
     * Task 3 printed only NCCL INFO lines, which do not count. */
    static const char two[] = "srun: job 42 queued\n"
                              " 1: " HDR " 0: " HDR " 3: host:1:1 [0] NCCL INFO Bootstrap\n"
                              " 1: " ROW("1024", "99.00") " 0: " ROW("1024", "20.01") " 0: " ROW(
                                  "2048", "30.50") " 1: " ROW("2048", "99.50");
    g_autoptr(MsMeasurementSet) first = read_labelled(two, 8, 8, notes, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(first);
    CU_ASSERT_EQUAL_FATAL(ms_measurement_set_size(first), 2);
    CU_ASSERT_DOUBLE_EQUAL(ms_measurement_set_get(first, 0)->seconds, 20.01e-6, 1e-15);
    CU_ASSERT_EQUAL(ms_measurement_set_get(first, 0)->line, 6);
    CU_ASSERT_DOUBLE_EQUAL(ms_measurement_set_get(first, 1)->seconds, 30.50e-6, 1e-15);
    CU_ASSERT_EQUAL_FATAL(notes->len, 1);
    CU_ASSERT_STRING_EQUAL(notes->pdata[0],
                           "all_reduce_2x8.log: nccl-tests lines of 2 srun tasks (--label): read "
                           "those of task 0, the lowest with data lines; skipped those of "
                           "task 1");
    /* A task that printed only a header yields to the one with data, even a higher one. */
    static const char late[] = " 0: " HDR " 2: " HDR " 2: " ROW("1024", "20.01");
    g_autoptr(MsMeasurementSet) second = read_labelled(late, 8, 8, NULL, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(second);
    CU_ASSERT_EQUAL(ms_measurement_set_size(second), 1);

    /* Labelled and unlabelled nccl-tests lines mixed: whose is the bare row cannot be told. */
    static const char mixed[] = " 0: " HDR " 0: " ROW("1024", "20.01") ROW("2048", "30.50");
    CU_ASSERT_PTR_NULL(read_labelled(mixed, 16, 8, NULL, &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_SYNTAX,
                    "all_reduce_2x8.log:3: an nccl-tests line without srun --label's 'TASK: ' "
                    "prefix, while line 1 carries task 0's");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"all_reduce_perf sample", test_all_reduce},
        {"older layout, tags, two runs", test_old_layout_concatenated},
        {"sendrecv_perf sample", test_sendrecv},
        {"all_gather then reduce_scatter", test_two_collectives},
        {"kind from names, sniffing", test_kind_names},
        {"error paths", test_errors},
        {"nThread and nGpus per run", test_threads_and_gpus},
        {"the NCCL release a log prints", test_release},
        {"collective unknown without hint", test_unknown_collective},
        {"srun --label: tasks, shapes, mixes", test_srun_label},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"nccl_tests", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
