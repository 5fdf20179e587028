/* Tests of measurement: kinds and dtypes, row validation (every rule, with SOURCE:LINE, field and
 * value in the message), format sniffing, loading files and shipped data, failure atomicity,
 * series selection and expert FFN points. */
#include <glib/gstdio.h>

#include "ms_test.h"
#include "sim/compute.h"
#include "validate/measurement.h"

static void
test_kinds(void)
{
    for (guint k = 0; k < MS_MEASUREMENT_N_KINDS; k++) {
        MsMeasurementKind back = MS_MEASUREMENT_N_KINDS;
        CU_ASSERT_TRUE(ms_measurement_kind_from_name(ms_measurement_kind_name(k), &back));
        CU_ASSERT_EQUAL(back, k);
    }
    MsMeasurementKind k;
    CU_ASSERT_FALSE(ms_measurement_kind_from_name("all_reduce", &k));
    CU_ASSERT_STRING_EQUAL(ms_measurement_kind_name(MS_MEASUREMENT_REDUCESCATTER), "reducescatter");
    CU_ASSERT_TRUE(ms_measurement_kind_is_comm(MS_MEASUREMENT_SENDRECV));
    CU_ASSERT_FALSE(ms_measurement_kind_is_comm(MS_MEASUREMENT_GEMM));
    CU_ASSERT_EQUAL(ms_dtype_size("bf16"), 2);
    CU_ASSERT_EQUAL(ms_dtype_size("fp8_e4m3"), 1);
    CU_ASSERT_EQUAL(ms_dtype_size("fp64"), 8);
    CU_ASSERT_EQUAL(ms_dtype_size("float"), 0);
    CU_ASSERT_EQUAL(ms_dtype_size(NULL), 0);
}

static MsMeasurement
good_gemm(void)
{
    return (MsMeasurement){.kind = MS_MEASUREMENT_GEMM,
                           .ranks = 1,
                           .ranks_per_node = 1,
                           .m = 256,
                           .n = 28672,
                           .k = 4096,
                           .dtype = "fp16",
                           .label = "mlp_up_proj",
                           .seconds = 291e-6,
                           .min_s = NAN,
                           .median_s = 291e-6,
                           .mean_s = NAN,
                           .source = "b.csv",
                           .line = 7};
}

static void
test_add(void)
{
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    GError *error = NULL;
    char label[] = "mlp_up_proj";
    MsMeasurement row = good_gemm();
    row.label = label;
    CU_ASSERT_TRUE(ms_measurement_set_add(set, &row, &error));
    /* Strings are copied into the set. */
    label[0] = 'X';
    const MsMeasurement *got = ms_measurement_set_get(set, 0);
    CU_ASSERT_STRING_EQUAL(got->label, "mlp_up_proj");
    CU_ASSERT_STRING_EQUAL(got->source, "b.csv");
    CU_ASSERT_EQUAL(got->m, 256);
    MsMeasurement launch = {.kind = MS_MEASUREMENT_LAUNCH,
                            .ranks = 1,
                            .ranks_per_node = 1,
                            .seconds = 4e-6,
                            .min_s = NAN,
                            .median_s = NAN,
                            .mean_s = NAN};
    CU_ASSERT_TRUE(ms_measurement_set_add(set, &launch, &error));
    CU_ASSERT_STRING_EQUAL(ms_measurement_set_get(set, 1)->label, "");
    CU_ASSERT_EQUAL(ms_measurement_set_size(set), 2);
    CU_ASSERT_PTR_NULL(error);
}

static void
test_add_errors(void)
{
    static const struct {
        const char *needle;
        int field;
    } cases[] = {
        {"b.csv:7: time: '-1 s' out of range (must be between 1 ns and 1e+06 s)", 0},
        {"b.csv:7: time: nan s", 1},
        {"b.csv:7: min: '0 s' out of range", 2},
        {"b.csv:7: ranks: '0' out of range (must be between 1 and 1048576)", 3},
        {"b.csv:7: ranks_per_node: 2 is outside [1, ranks = 1]", 4},
        {"b.csv:7: m: 0 is outside [1, 2^32] for a gemm row", 5},
        {"b.csv:7: dtype: 'fp13' is not a dtype moesim knows", 6},
        {"b.csv:7: dtype: '' is not a dtype moesim knows (fp16", 7},
        {"b.csv:7: m: 256: a allreduce row has no shape", 8},
        {"b.csv:7: bytes: an elementwise row needs the bytes", 9},
        {"b.csv:7: label: 'up\nproj' contains a control character", 10},
        {"b.csv:7: bytes: '1125899906842625 B' out of range", 11},
        {"b.csv:7: k: '4294967297' out of range", 12},
        {"b.csv:7: mean: 'inf s' out of range", 13},
        {"b.csv:7: label: longer than 256 characters", 14},
        {"b.csv:7: median: '-2 s' out of range", 15},
    };
    char long_label[300];
    memset(long_label, 'x', sizeof long_label - 1);
    long_label[sizeof long_label - 1] = '\0';
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        MsMeasurement r = good_gemm();
        switch (cases[i].field) {
        case 0:
            r.seconds = -1;
            break;
        case 1:
            r.seconds = NAN;
            break;
        case 2:
            r.min_s = 0;
            break;
        case 3:
            r.ranks = 0;
            break;
        case 4:
            r.ranks_per_node = 2;
            break;
        case 5:
            r.m = 0;
            break;
        case 6:
            r.dtype = "fp13";
            break;
        case 7:
            r.dtype = NULL;
            break;
        case 8:
            r.kind = MS_MEASUREMENT_ALLREDUCE;
            break;
        case 9:
            r.kind = MS_MEASUREMENT_ELEMENTWISE;
            break;
        case 10:
            r.label = "up\nproj";
            break;
        case 11:
            r.bytes = MS_BYTES_MAX + 1;
            break;
        case 12:
            r.k = (G_GUINT64_CONSTANT(1) << 32) + 1;
            break;
        case 14:
            r.label = long_label;
            break;
        case 15:
            r.median_s = -2;
            break;
        default:
            r.mean_s = INFINITY;
            break;
        }
        g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
        GError *error = NULL;
        CU_ASSERT_FALSE(ms_measurement_set_add(set, &r, &error));
        MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_VALUE, cases[i].needle);
        CU_ASSERT_EQUAL(ms_measurement_set_size(set), 0);
    }
    /* A row built in memory has no line: the message names just the source. */
    MsMeasurement r = good_gemm();
    r.line = 0;
    r.source = NULL;
    r.seconds = 0;
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_measurement_set_add(set, &r, &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_VALUE,
                    "<memory>: time: '0 s' out of range");
}

static void
test_sniff(void)
{
    static const struct {
        const char *text;
        MsMeasurementFormat format;
    } cases[] = {
        {"# moesim-measurements 1\nkind,time_us\n", MS_MEASUREMENT_FORMAT_MOESIM},
        {",time_stats.all_reduce.median,num_workers,size,devices_per_node\n",
         MS_MEASUREMENT_FORMAT_VIDUR_NETWORK},
        {"time_stats.mlp_up_proj.median,num_tokens\n", MS_MEASUREMENT_FORMAT_VIDUR_COMPUTE},
        {"noise\n# nThread 1 nGpus 8 minBytes 8\n", MS_MEASUREMENT_FORMAT_NCCL_TESTS},
        {"[1,0]<stdout>:#       size         count      type   redop\n",
         MS_MEASUREMENT_FORMAT_NCCL_TESTS},
        {"time_stats.x.median,foo\n", MS_MEASUREMENT_FORMAT_UNKNOWN},
        {"size,count,type\n", MS_MEASUREMENT_FORMAT_UNKNOWN},
        {"", MS_MEASUREMENT_FORMAT_UNKNOWN},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        CU_ASSERT_EQUAL(ms_measurement_sniff(cases[i].text, strlen(cases[i].text)),
                        cases[i].format);
    }
    CU_ASSERT_STRING_EQUAL(ms_measurement_format_name(MS_MEASUREMENT_FORMAT_NCCL_TESTS),
                           "nccl-tests log");
    CU_ASSERT_STRING_EQUAL(ms_measurement_format_name(MS_MEASUREMENT_FORMAT_UNKNOWN), "unknown");
}

static void
test_load(void)
{
    g_auto(GStrv) names = ms_measurement_list_shipped();
    CU_ASSERT_EQUAL(g_strv_length(names), 4);
    CU_ASSERT_STRING_EQUAL(names[0], "mlp_llama3_8b.csv");
    CU_ASSERT_STRING_EQUAL(names[3], "nccl_send_recv_dgx.csv");
    /* The shipped copy and the file in the source tree read alike. */
    GError *error = NULL;
    g_autoptr(MsMeasurementSet) shipped = ms_measurement_set_load("nccl_send_recv_dgx.csv", &error);
    g_autofree char *path =
        g_build_filename(ms_test_srcdir(), "validate", "data", "nccl_send_recv_dgx.csv", NULL);
    g_autoptr(MsMeasurementSet) file = ms_measurement_set_load(path, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(shipped);
    CU_ASSERT_PTR_NOT_NULL_FATAL(file);
    CU_ASSERT_EQUAL(ms_measurement_set_size(shipped), ms_measurement_set_size(file));
    CU_ASSERT_EQUAL(ms_measurement_set_get(shipped, 99)->seconds,
                    ms_measurement_set_get(file, 99)->seconds);
    CU_ASSERT_STRING_EQUAL(ms_measurement_set_get(file, 0)->source, path);
}

static void
test_load_errors(void)
{
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_measurement_set_load("no_such_profile.csv", &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_IO,
                    "no_such_profile.csv: no such file, nor a shipped measurement file (shipped: "
                    "mlp_llama3_8b.csv");
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "a-directory", NULL);
    g_mkdir(dir, 0700);
    CU_ASSERT_PTR_NULL(ms_measurement_set_load(dir, &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_IO, "a-directory");
    g_autofree char *junk = ms_test_write_tmp("junk.txt", "hello, world\n1,2,3\n");
    CU_ASSERT_PTR_NULL(ms_measurement_set_load(junk, &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_FORMAT,
                    "junk.txt: not a measurement format moesim knows: expected an nccl-tests log");
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    CU_ASSERT_FALSE(ms_measurement_set_read_data(set, "# moesim\0x", 10, "bin", &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_FORMAT,
                    "bin: contains a NUL");
    CU_ASSERT_FALSE(ms_measurement_set_read_data(set, "", (gsize)300 << 20, "huge", &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_IO, "huge: 314572800 bytes");
    /* A file that large is refused from its size, before anything is read (a sparse file). */
    g_autofree char *big = g_build_filename(ms_test_tmpdir(), "big.csv", NULL);
    FILE *f = fopen(big, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fseek(f, 300L << 20, SEEK_SET), 0);
    fputc('\n', f);
    fclose(f);
    CU_ASSERT_PTR_NULL(ms_measurement_set_load(big, &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_IO,
                    "big.csv: 314572801 bytes, more than the 256 MiB limit for a measurement file");
}

static void
test_atomic_read(void)
{
    /* A file failing on its third row adds nothing. */
    static const char text[] = "# moesim-measurements 1\n"
                               "kind,bytes,ranks,time_us\n"
                               "allreduce,1024,8,20\n"
                               "allreduce,2048,8,21\n"
                               "allreduce,4096,8,-1\n";
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    GError *error = NULL;
    gsize two_rows = (gsize)(strstr(text, "allreduce,2048") - text);
    CU_ASSERT_TRUE(ms_measurement_set_read_data(set, text, two_rows, "a.csv", &error));
    CU_ASSERT_EQUAL(ms_measurement_set_size(set), 1);
    CU_ASSERT_FALSE(ms_measurement_set_read_data(set, text, strlen(text), "a.csv", &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_VALUE,
                    "a.csv:5: time_us: '-1' is not a positive time");
    CU_ASSERT_EQUAL(ms_measurement_set_size(set), 1);
}

static void
test_series(void)
{
    GError *error = NULL;
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_load("nccl_all_reduce_dgx.csv", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(set);
    g_autoptr(GArray) x = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GArray) t = g_array_new(FALSE, FALSE, sizeof(double));
    CU_ASSERT_EQUAL(ms_measurement_set_series(set, MS_MEASUREMENT_ALLREDUCE, 8, 8, x, t), 994);
    CU_ASSERT_EQUAL(g_array_index(x, double, 0), 2048);
    CU_ASSERT_EQUAL(ms_measurement_set_series(set, MS_MEASUREMENT_ALLREDUCE, 0, 8, x, t), 994 * 2);
    CU_ASSERT_EQUAL(ms_measurement_set_series(set, MS_MEASUREMENT_ALLREDUCE, 0, 0, x, t), 6958);
    CU_ASSERT_EQUAL(ms_measurement_set_series(set, MS_MEASUREMENT_SENDRECV, 0, 0, x, t), 0);
    CU_ASSERT_EQUAL(x->len, 994 * 3 + 6958);
}

static void
test_expert_points(void)
{
    GError *error = NULL;
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_load("mlp_llama3_8b.csv", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(set);
    g_autoptr(GArray) pts = g_array_new(FALSE, FALSE, sizeof(MsGemmPoint));
    CU_ASSERT_TRUE_FATAL(ms_measurement_set_expert_points(set, 4096, 14336, TRUE, pts, &error));
    /* 451 token counts of 1 .. 32768; tensor-parallel rows have other shapes and stay out. */
    CU_ASSERT_EQUAL_FATAL(pts->len, 451);
    const MsGemmPoint *p = (const MsGemmPoint *)pts->data;
    CU_ASSERT_EQUAL(p[0].tokens, 1);
    CU_ASSERT_EQUAL(p[450].tokens, 32768);
    /* One token: up 0.142 + act 0.011 + down 0.076 ms. */
    MS_ASSERT_REL(p[0].seconds, 0.229e-3, 1e-9);
    double flops;
    guint64 bytes;
    ms_compute_expert_ffn_cost(1, 4096, 14336, TRUE, 2, &flops, &bytes);
    CU_ASSERT_EQUAL(p[0].flops, flops);
    CU_ASSERT_EQUAL(p[0].bytes, (double)bytes);
    /* 32768 tokens appears twice in the file: the two lines are averaged. */
    MS_ASSERT_REL(p[450].seconds,
                  (33.094 + 2.7685 + 16.6075 + 33.6135 + 2.794 + 16.8265) / 2 * 1e-3, 1e-9);
    /* Two-way tensor parallelism: d_ffn 7168 per GPU. */
    g_autoptr(GArray) tp2 = g_array_new(FALSE, FALSE, sizeof(MsGemmPoint));
    CU_ASSERT_TRUE(ms_measurement_set_expert_points(set, 4096, 7168, TRUE, tp2, &error));
    CU_ASSERT_EQUAL(tp2->len, 451);

    CU_ASSERT_FALSE(ms_measurement_set_expert_points(set, 4096, 14336, FALSE, pts, &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_MISSING,
                    "d_model 4096, d_ffn 14336 (not gated)");
    CU_ASSERT_EQUAL(pts->len, 451);
    MsMeasurement other = *ms_measurement_set_get(set, 0);
    other.dtype = "bf16";
    CU_ASSERT_TRUE(ms_measurement_set_add(set, &other, &error));
    CU_ASSERT_FALSE(ms_measurement_set_expert_points(set, 4096, 14336, TRUE, pts, &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_VALUE,
                    "mlp_llama3_8b.csv:2: dtype: 'bf16' differs from the 'fp16'");
}

static void
test_helpers(void)
{
    GError *error = NULL;
    double d;
    guint64 u;
    CU_ASSERT_FALSE(ms_measurement_parse_double("f", 3, "x", "1.5z", 0, 10, &d, &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_VALUE, "f:3: x: '1.5z'");
    CU_ASSERT_FALSE(ms_measurement_parse_uint("f", 4, "y", "12", 0, 10, &u, &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_VALUE, "f:4: y: 12 out of");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"kinds and dtypes", test_kinds},
        {"adding rows", test_add},
        {"row validation errors", test_add_errors},
        {"format sniffing", test_sniff},
        {"loading files and shipped data", test_load},
        {"load errors", test_load_errors},
        {"a failed read adds nothing", test_atomic_read},
        {"series selection", test_series},
        {"expert FFN points", test_expert_points},
        {"reader helpers", test_helpers},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"measurement", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
