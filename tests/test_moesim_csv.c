/* Tests of moesim_csv: the writer's exact bytes, reading them back (every kind, every field),
 * column order freedom, and every error path with its code and SOURCE:LINE message. */
#include "ms_test.h"
#include "validate/moesim_csv.h"

static const char golden[] =
    "# moesim-measurements 1\n"
    "kind,bytes,ranks,ranks_per_node,m,n,k,dtype,label,time_us,min_us,median_us,mean_us\n"
    "allreduce,1048576,16,8,,,,fp16,,41.25,40,41.25,41.5\n"
    "gemm,0,1,1,256,28672,4096,bf16,mlp_up_proj,291.5,,291.5,\n"
    "elementwise,44040192,1,1,512,14336,,bf16,mlp_act,27,,,\n"
    "launch,0,1,1,,,,,,4.125,,,\n";

static MsMeasurementSet *
sample_set(void)
{
    MsMeasurementSet *set = ms_measurement_set_new();
    const MsMeasurement rows[] = {
        {.kind = MS_MEASUREMENT_ALLREDUCE,
         .bytes = 1048576,
         .ranks = 16,
         .ranks_per_node = 8,
         .dtype = "fp16",
         .seconds = 41.25e-6,
         .min_s = 40e-6,
         .median_s = 41.25e-6,
         .mean_s = 41.5e-6},
        {.kind = MS_MEASUREMENT_GEMM,
         .ranks = 1,
         .ranks_per_node = 1,
         .m = 256,
         .n = 28672,
         .k = 4096,
         .dtype = "bf16",
         .label = "mlp_up_proj",
         .seconds = 291.5e-6,
         .min_s = NAN,
         .median_s = 291.5e-6,
         .mean_s = NAN},
        {.kind = MS_MEASUREMENT_ELEMENTWISE,
         .bytes = 44040192,
         .ranks = 1,
         .ranks_per_node = 1,
         .m = 512,
         .n = 14336,
         .dtype = "bf16",
         .label = "mlp_act",
         .seconds = 27e-6,
         .min_s = NAN,
         .median_s = NAN,
         .mean_s = NAN},
        {.kind = MS_MEASUREMENT_LAUNCH,
         .ranks = 1,
         .ranks_per_node = 1,
         .seconds = 4.125e-6,
         .min_s = NAN,
         .median_s = NAN,
         .mean_s = NAN},
    };
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
        GError *error = NULL;
        CU_ASSERT_TRUE(ms_measurement_set_add(set, &rows[i], &error));
        CU_ASSERT_PTR_NULL(error);
    }
    return set;
}

static void
test_write_golden(void)
{
    g_autoptr(MsMeasurementSet) set = sample_set();
    gsize len = 0;
    g_autofree char *text = ms_moesim_csv_write(set, &len);
    CU_ASSERT_STRING_EQUAL(text, golden);
    CU_ASSERT_EQUAL(len, strlen(golden));
}

static void
test_round_trip(void)
{
    g_autoptr(MsMeasurementSet) set = sample_set();
    g_autofree char *path = g_build_filename(ms_test_tmpdir(), "bench.csv", NULL);
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_moesim_csv_save(set, path, &error));
    g_autoptr(MsMeasurementSet) back = ms_measurement_set_load(path, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    CU_ASSERT_EQUAL_FATAL(ms_measurement_set_size(back), 4);
    for (guint i = 0; i < 4; i++) {
        const MsMeasurement *a = ms_measurement_set_get(set, i);
        const MsMeasurement *b = ms_measurement_set_get(back, i);
        CU_ASSERT_EQUAL(a->kind, b->kind);
        CU_ASSERT_EQUAL(a->bytes, b->bytes);
        CU_ASSERT_EQUAL(a->ranks, b->ranks);
        CU_ASSERT_EQUAL(a->ranks_per_node, b->ranks_per_node);
        CU_ASSERT_EQUAL(a->m, b->m);
        CU_ASSERT_EQUAL(a->n, b->n);
        CU_ASSERT_EQUAL(a->k, b->k);
        CU_ASSERT_STRING_EQUAL(a->label, b->label);
        CU_ASSERT_EQUAL(a->dtype == NULL, b->dtype == NULL);
        MS_ASSERT_REL(b->seconds, a->seconds, 1e-12);
        CU_ASSERT_EQUAL(isnan(a->min_s), isnan(b->min_s));
        CU_ASSERT_EQUAL(isnan(a->mean_s), isnan(b->mean_s));
        CU_ASSERT_EQUAL(b->line, i + 3);
        CU_ASSERT_STRING_EQUAL(b->source, path);
    }
    /* Written again, the same bytes. */
    g_autofree char *again = ms_moesim_csv_write(back, NULL);
    CU_ASSERT_STRING_EQUAL(again, golden);
}

/* Version 2: an all-to-all alone and under an allreduce, at 4 channels and 2 queue pairs, read
 * back field by field; the set is written as version 2 and unchanged by a second round. */
static void
test_version_2(void)
{
    static const char text[] =
        "# moesim-measurements 2\n"
        "kind,bytes,ranks,ranks_per_node,m,n,k,dtype,label,time_us,min_us,median_us,mean_us,"
        "background_bytes,channels,qps\n"
        "alltoall,4194304,16,4,,,,,,1000,,,1000,,4,2\n"
        "allreduce,26214400,16,4,,,,bf16,,4400,,,4400,,4,2\n"
        "alltoall_under_allreduce,4194304,16,4,,,,,,1500,,,1500,26214400,4,2\n"
        "gemm,0,1,1,256,28672,4096,bf16,mlp_up_proj,100,95,100,101,,,\n"
        "gemm,0,1,1,256,28672,4096,bf16,mlp_up_proj,120,115,120,121,26214400,,\n";
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_moesim_csv_read(set, text, strlen(text), "v2.csv", &error));
    CU_ASSERT_EQUAL_FATAL(ms_measurement_set_size(set), 5);
    /* A kernel timed under a looping allreduce (bench --what overlap), beside it alone. */
    CU_ASSERT_FALSE(ms_measurement_overlapped(ms_measurement_set_get(set, 3)));
    CU_ASSERT_TRUE(ms_measurement_overlapped(ms_measurement_set_get(set, 4)));
    CU_ASSERT_EQUAL(ms_measurement_set_get(set, 4)->background_bytes, 26214400);
    CU_ASSERT_FALSE(ms_measurement_overlapped(ms_measurement_set_get(set, 2)));
    const MsMeasurement *u = ms_measurement_set_get(set, 2);
    CU_ASSERT_EQUAL(u->kind, MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE);
    CU_ASSERT_EQUAL(u->bytes, 4194304);
    CU_ASSERT_EQUAL(u->background_bytes, 26214400);
    CU_ASSERT_EQUAL(u->channels, 4);
    CU_ASSERT_EQUAL(u->qps, 2);
    MS_ASSERT_REL(u->seconds, 1.5e-3, 1e-12);
    CU_ASSERT_EQUAL(ms_measurement_set_get(set, 0)->background_bytes, 0);
    CU_ASSERT_EQUAL(ms_measurement_set_get(set, 0)->channels, 4);
    g_autofree char *out = ms_moesim_csv_write(set, NULL);
    CU_ASSERT_STRING_EQUAL(out, text);
    g_autoptr(MsMeasurementSet) back = ms_measurement_set_new();
    CU_ASSERT_TRUE_FATAL(ms_moesim_csv_read(back, out, strlen(out), "again.csv", &error));
    g_autofree char *again = ms_moesim_csv_write(back, NULL);
    CU_ASSERT_STRING_EQUAL(again, text);
    /* A version 2 file of version 1's rows is written back as version 1. */
    static const char old_rows[] = "# moesim-measurements 2\nkind,time_us\nlaunch,4\n";
    g_autoptr(MsMeasurementSet) plain = ms_measurement_set_new();
    CU_ASSERT_TRUE_FATAL(
        ms_moesim_csv_read(plain, old_rows, strlen(old_rows), "plain.csv", &error));
    g_autofree char *v1 = ms_moesim_csv_write(plain, NULL);
    CU_ASSERT_TRUE(g_str_has_prefix(v1, "# moesim-measurements 1\n"));
}

static void
test_flexible_columns(void)
{
    /* Any column order, comments and blank lines, optional columns left out. */
    static const char text[] = "# moesim-measurements 1\n"
                               "# host: node-a, nccl 2.21\n"
                               "\n"
                               "time_us,kind,ranks,bytes\n"
                               "12.5,sendrecv,2,4096\n"
                               "# a comment between rows\n"
                               "  13 , sendrecv , 2 , 8192 \n";
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_moesim_csv_read(set, text, strlen(text), "f.csv", &error));
    CU_ASSERT_EQUAL_FATAL(ms_measurement_set_size(set), 2);
    const MsMeasurement *r = ms_measurement_set_get(set, 1);
    CU_ASSERT_EQUAL(r->kind, MS_MEASUREMENT_SENDRECV);
    CU_ASSERT_EQUAL(r->bytes, 8192);
    CU_ASSERT_EQUAL(r->ranks_per_node, 2);
    CU_ASSERT_DOUBLE_EQUAL(r->seconds, 13e-6, 1e-18);
    CU_ASSERT_TRUE(isnan(r->median_s));
    CU_ASSERT_EQUAL(r->line, 7);
}

#define V "# moesim-measurements 1\n"
#define H "kind,bytes,ranks,ranks_per_node,m,n,k,dtype,label,time_us\n"
#define V2                                                                                         \
    "# moesim-measurements 2\n"                                                                    \
    "kind,bytes,ranks,ranks_per_node,time_us,background_bytes,channels,qps\n"

static void
test_errors(void)
{
    static const struct {
        const char *text;
        int code;
        const char *needle;
    } cases[] = {
        {"kind,time_us\n", MS_MEASUREMENT_ERROR_FORMAT, "m.csv:1: a moesim CSV starts with"},
        {"# moesim-measurements 3\n" H, MS_MEASUREMENT_ERROR_FORMAT,
         "m.csv:1: version '3' is not one this moesim reads (it reads 1 to 2)"},
        {"# moesim-measurements 0\n" H, MS_MEASUREMENT_ERROR_FORMAT, "version '0' is not one"},
        {V "kind,bytes,time_us,channels\n", MS_MEASUREMENT_ERROR_SYNTAX,
         "m.csv:2: column 'channels' is one of version 2, but the file says version 1"},
        {V H "alltoall_under_allreduce,1024,8,8,,,,,,20\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: kind: 'alltoall_under_allreduce' is not one of allreduce, alltoall, "
         "allgather, reducescatter, sendrecv, gemm, elementwise, launch (the kinds of version 1)"},
        {"# moesim-measurements one\n", MS_MEASUREMENT_ERROR_FORMAT, "version 'one'"},
        {V "# only comments\n", MS_MEASUREMENT_ERROR_MISSING,
         "m.csv:2: no column header after the version line"},
        {V "kind,bytes,tme_us\n", MS_MEASUREMENT_ERROR_SYNTAX,
         "m.csv:2: unknown column 'tme_us' (columns: kind, bytes"},
        {V "kind,time_us,kind\n", MS_MEASUREMENT_ERROR_SYNTAX,
         "m.csv:2: column 'kind' given twice"},
        {V "kind,bytes\n", MS_MEASUREMENT_ERROR_MISSING,
         "m.csv:2: required column 'time_us' is missing"},
        {V H "allreduce,1024,8,8,,,,fp16,,20,7\n", MS_MEASUREMENT_ERROR_SYNTAX,
         "m.csv:3: 11 fields, but the header names 10"},
        {V H "allreduce,1024,8,8,,,,fp16,\n", MS_MEASUREMENT_ERROR_SYNTAX, "m.csv:3: 9 fields"},
        {V H "allreduce,1024,8,8,,,,fp16,,fast\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: time_us: 'fast' is not a number"},
        {V H "allreduce,1024,8,8,,,,fp16,,-3\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: time_us: '-3' is not a positive time"},
        {V H "allreduce,1024,8,8,,,,fp16,,\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: time_us: empty, but required"},
        {V H "all_reduce,1024,8,8,,,,fp16,,20\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: kind: 'all_reduce' is not one of allreduce"},
        {V H "allreduce,1KB,8,8,,,,fp16,,20\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: bytes: '1KB' is not a non-negative integer"},
        {V H "allreduce,1024,-8,8,,,,fp16,,20\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: ranks: '-8'"},
        {V H "allreduce,1024,8,9,,,,fp16,,20\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: ranks_per_node: 9 is outside [1, ranks = 8]"},
        {V H "gemm,,1,1,256,4096,,fp16,up,20\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: k: 0 is outside [1, 2^32] for a gemm row"},
        {V H "gemm,,1,1,256,4096,4096,,up,20\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: dtype: '' is not a dtype moesim knows"},
        {V H "gemm,,1,1,256,4096,x,fp16,up,20\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: k: 'x' is not a non-negative integer"},
        {V "kind,time_us,min_us\nlaunch,4,0\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: min_us: '0' is not a positive time"},
        /* Version 2's fields. */
        {V2 "alltoall_under_allreduce,1024,8,8,20,,,\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: background_bytes: 0: the allreduce's size is required, 1 B to 1 PiB"},
        {V2 "alltoall_under_allreduce,1024,1,1,20,4096,,\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: ranks: an alltoall_under_allreduce row needs an all-to-all of at least 1 byte"},
        {V2 "alltoall_under_allreduce,0,8,8,20,4096,,\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: bytes: an alltoall_under_allreduce row needs"},
        {V2 "allreduce,1024,8,8,20,4096,,\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: background_bytes: 4096: only alltoall_under_allreduce, gemm and elementwise "
         "rows have a background"},
        {V2 "launch,0,1,1,4,4096,,\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: background_bytes: 4096: only alltoall_under_allreduce"},
        {V2 "alltoall,1024,8,8,20,,65,\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: channels: 65 out of range (must be between 0 and 64)"},
        {V2 "alltoall,1024,8,8,20,,,129\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: qps: 129 out of range (must be between 0 and 128)"},
        {V2 "launch,0,1,1,4,,2,\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: channels: 2: a launch row does not run NCCL"},
        {V2 "launch,0,1,1,4,,,2\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: qps: 2: a launch row does not run NCCL"},
        {V2 "alltoall,1024,8,8,20,,x,\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: channels: 'x' is not a non-negative integer"},
        {V2 "alltoall,1024,8,8,20,-1,,\n", MS_MEASUREMENT_ERROR_VALUE, "m.csv:3: background_bytes"},
        {V2 "alltoall_under_allreduce,1024,8,8,20,1125899906842625,,\n", MS_MEASUREMENT_ERROR_VALUE,
         "m.csv:3: background_bytes: 1125899906842625 out of range (must be between 0 and "
         "1125899906842624)"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        GError *error = NULL;
        g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
        CU_ASSERT_FALSE(
            ms_moesim_csv_read(set, cases[i].text, strlen(cases[i].text), "m.csv", &error));
        MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, cases[i].code, cases[i].needle);
    }
    g_autoptr(MsMeasurementSet) set = sample_set();
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_moesim_csv_save(set, "/nonexistent-dir/x.csv", &error));
    MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_IO, "x.csv");
}

/* What a spreadsheet saving the file writes (sim/base/csv.h): a byte order mark, CR LF, quoted
 * fields, trailing empty fields; a label with a comma and a quote is written quoted and reads
 * back; extra values past the header and broken quotes are refused, naming the line. */
static void
test_csv_reader(void)
{
    const char sheet[] = "\xEF\xBB\xBF# moesim-measurements 1\r\n"
                         "\"kind\",bytes,ranks,ranks_per_node,m,n,k,dtype,label,time_us,,\r\n"
                         "gemm,0,1,1,256,28672,4096,\"bf16\",\"up, \"\"fused\"\"\",291.5,,\r\n"
                         "launch , 0 , 1 , 1 ,,,,,, 4.125\r\n";
    GError *error = NULL;
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    CU_ASSERT_TRUE_FATAL(ms_measurement_set_read_data(set, sheet, strlen(sheet), "s.csv", &error));
    CU_ASSERT_EQUAL_FATAL(ms_measurement_set_size(set), 2);
    const MsMeasurement *g = ms_measurement_set_get(set, 0);
    CU_ASSERT_STRING_EQUAL(g->label, "up, \"fused\"");
    CU_ASSERT_STRING_EQUAL(g->dtype, "bf16");
    CU_ASSERT_EQUAL(g->n, 28672);
    MS_ASSERT_REL(ms_measurement_set_get(set, 1)->seconds, 4.125e-6, 1e-12);
    g_autofree char *text = ms_moesim_csv_write(set, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, ",bf16,\"up, \"\"fused\"\"\",291.5,"));
    g_autoptr(MsMeasurementSet) back = ms_measurement_set_new();
    CU_ASSERT_TRUE_FATAL(ms_moesim_csv_read(back, text, strlen(text), "w.csv", &error));
    CU_ASSERT_STRING_EQUAL(ms_measurement_set_get(back, 0)->label, "up, \"fused\"");
    const struct {
        const char *text, *needle;
    } bad[] = {
        {"# moesim-measurements 1\nkind,time_us\nlaunch,4,5\n",
         "m.csv:3: 3 fields, but the header names 2"},
        {"# moesim-measurements 1\nkind,time_us\n\"launch,4\n",
         "m.csv:3: unterminated quoted field (a field does not span lines) at column 1"},
        {"# moesim-measurements 1\nkind,\"time_us\"x\n", "m.csv:2: text after a closing quote"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(MsMeasurementSet) none = ms_measurement_set_new();
        CU_ASSERT_FALSE(
            ms_moesim_csv_read(none, bad[i].text, strlen(bad[i].text), "m.csv", &error));
        MS_ASSERT_ERROR(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_SYNTAX, bad[i].needle);
    }
    /* A Vidur profile saved the same way. */
    const char vidur[] = "\xEF\xBB\xBF\"\",time_stats.send_recv.median,size,num_workers,"
                         "devices_per_node\r\n0,\"0.024\",2048,2,1,\r\n";
    g_autoptr(MsMeasurementSet) v = ms_measurement_set_new();
    CU_ASSERT_TRUE_FATAL(ms_measurement_set_read_data(v, vidur, strlen(vidur), "n.csv", &error));
    CU_ASSERT_EQUAL_FATAL(ms_measurement_set_size(v), 1);
    CU_ASSERT_EQUAL(ms_measurement_set_get(v, 0)->bytes, 2048);
    MS_ASSERT_REL(ms_measurement_set_get(v, 0)->seconds, 0.024e-3, 1e-12);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"writer golden bytes", test_write_golden},
        {"save, load, write again", test_round_trip},
        {"version 2: the concurrency kind, kernels under an allreduce, channels and queue pairs",
         test_version_2},
        {"column order, comments, optional columns", test_flexible_columns},
        {"error paths", test_errors},
        {"the CSV reader: byte order mark, CR LF, quotes, trailing empty fields", test_csv_reader},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"moesim_csv", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
