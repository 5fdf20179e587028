/* Tests of the microbenchmark spec: defaults, option parsing and every refusal, the JSON form and
 * malformed specs, size sweeps, the concurrency benchmark's sizes, NCCL's settings read from and
 * checked against an environment, point-to-point pairs per link class (from a topology or from
 * host names), expert kernel shapes that calibration's expert fit accepts, nccl-tests bandwidths,
 * the text tables; and `moesim bench` errors (a GPU-less machine included). */
#include "backends/bench_options.h"
#include "backends/executor_bench.h"
#include "backends/registry.h"
#include "ms_test.h"
#include "sim/compute.h"
#include "validate/fit.h"
#include "validate/measurement.h"

static void
test_defaults_and_parsing(void)
{
    g_autoptr(MsBenchSpec) s = ms_bench_spec_new();
    GError *error = NULL;
    CU_ASSERT_EQUAL(s->what, MS_BENCH_ALL);
    CU_ASSERT_EQUAL(s->min_bytes, 8);
    CU_ASSERT_EQUAL(s->max_bytes, 128u << 20);
    CU_ASSERT_EQUAL(s->tokens->len, 14); /* 1 .. 8192 */
    CU_ASSERT_EQUAL(g_array_index(s->tokens, guint32, 13), 8192);
    CU_ASSERT_TRUE(ms_bench_spec_check(s, &error));
    guint32 what = 0;
    CU_ASSERT_TRUE(ms_bench_parse_what("gemm, p2p", &what, &error));
    CU_ASSERT_EQUAL(what, MS_BENCH_GEMM | MS_BENCH_P2P);
    CU_ASSERT_TRUE(ms_bench_parse_what("all", &what, &error));
    CU_ASSERT_EQUAL(what, MS_BENCH_ALL);
    CU_ASSERT_FALSE(ms_bench_parse_what("gemm,nvlink", &what, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC,
                    "--what: unknown benchmark 'nvlink'");
    CU_ASSERT_FALSE(ms_bench_parse_what(" , ", &what, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC, "unknown benchmark ''");
    CU_ASSERT_TRUE(ms_bench_option_set(s, "--tokens", "16, 256,4096", &error));
    CU_ASSERT_EQUAL(s->tokens->len, 3);
    CU_ASSERT_EQUAL(g_array_index(s->tokens, guint32, 1), 256);
    const struct {
        const char *option, *text, *needle;
    } bad[] = {
        {"--tokens", "16,8", "--tokens: item 2, 8, does not increase after 16"},
        {"--tokens", "0", "--tokens: item 1: '0' out of range (must be between 1 and 1048576)"},
        {"--tokens", "4,x", "--tokens: item 2: 'x' is not a non-negative integer"},
        {"--tokens", "2000000", "--tokens: item 1: '2000000' out of range"},
        {"--iters", "0", "--iters: '0' out of range (must be between 1 and 100000)"},
        {"--iters", "-3", "--iters: '-3' out of range"},
        {"--warmup", "100001", "--warmup: '100001' out of range (must be between 0 and 100000)"},
        {"--minbytes", "0", "--minbytes: '0' out of range (must be between 1 B and 16 GiB)"},
        {"--maxbytes", "17G", "--maxbytes: '17G' out of range (must be between 1 B and 16 GiB)"},
        {"--maxbytes", "8Q", "--maxbytes: size '8Q': unknown unit 'Q'"},
        {"--d-model", "262145", "--d-model: '262145' out of range"},
        {"--d-ffn", "1.5", "--d-ffn: '1.5' is not a non-negative integer"},
        {"--channels", "0", "--channels: '0' out of range (must be between 1 and 64)"},
        {"--qps", "129", "--qps: '129' out of range (must be between 1 and 128)"},
        {"--dtype", "fp32", "--dtype: 'fp32' is not one of: bf16, fp16, bfloat16, half"},
    };
    for (guint k = 0; k < G_N_ELEMENTS(bad); k++) {
        CU_ASSERT_FALSE(ms_bench_option_set(s, bad[k].option, bad[k].text, &error));
        MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC, bad[k].needle);
    }
    /* Sizes in digits or with a unit, and nccl-tests' spellings of the types. */
    CU_ASSERT_TRUE(ms_bench_option_set(s, "--minbytes", "8", &error));
    CU_ASSERT_TRUE(ms_bench_option_set(s, "--maxbytes", "128M", &error));
    CU_ASSERT_EQUAL(s->min_bytes, 8);
    CU_ASSERT_EQUAL(s->max_bytes, 128u << 20);
    CU_ASSERT_TRUE(ms_bench_option_set(s, "--dtype", "half", &error));
    CU_ASSERT_STRING_EQUAL(s->dtype, "fp16");
    CU_ASSERT_TRUE(ms_bench_option_set(s, "--dtype", "bfloat16", &error));
    CU_ASSERT_STRING_EQUAL(s->dtype, "bf16");
    CU_ASSERT_TRUE(ms_bench_option_set(s, "--iters", "7", &error));
    CU_ASSERT_EQUAL(s->iters, 7);
    CU_ASSERT_TRUE(ms_bench_spec_check(s, &error));
    CU_ASSERT_EQUAL(s->tokens->len, 3); /* unchanged by the refusals */
}

static void
test_check_errors(void)
{
    GError *error = NULL;
    g_autoptr(MsBenchSpec) s = ms_bench_spec_new();
    s->min_bytes = 0;
    CU_ASSERT_FALSE(ms_bench_spec_check(s, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC, "sizes: 0 to 134217728 bytes");
    s->min_bytes = 1 << 20;
    s->max_bytes = 1024;
    CU_ASSERT_FALSE(ms_bench_spec_check(s, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC, "is not a range");
    s->min_bytes = 8;
    s->max_bytes = G_GUINT64_CONSTANT(1) << 40;
    CU_ASSERT_FALSE(ms_bench_spec_check(s, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC, "within 1 to 17179869184");
    s->max_bytes = 1 << 20;
    s->step_factor = 1.0;
    CU_ASSERT_FALSE(ms_bench_spec_check(s, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC,
                    "step factor: 1 is not in (1, 1024]");
    s->step_factor = 1.0001;
    s->min_bytes = 1;
    CU_ASSERT_FALSE(ms_bench_spec_check(s, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC, "sizes: more than 4096 steps");
    s->step_factor = 2;
    s->iters = 0;
    CU_ASSERT_FALSE(ms_bench_spec_check(s, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC, "iterations: 0 (warm-up 5)");
    s->iters = 10;
    g_free(s->dtype);
    s->dtype = g_strdup("fp32");
    CU_ASSERT_FALSE(ms_bench_spec_check(s, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC, "dtype: 'fp32' is not bf16");
    g_free(s->dtype);
    s->dtype = g_strdup("fp16");
    s->ranks_per_node = 3;
    CU_ASSERT_FALSE(ms_bench_spec_check(s, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC, "ranks: 1 with 3 per node");
    s->ranks_per_node = 1;
    s->d_ffn = 0;
    CU_ASSERT_FALSE(ms_bench_spec_check(s, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC, "expert: d_model 4096, d_ffn 0");
    s->d_ffn = 1024;
    g_array_set_size(s->tokens, 0);
    CU_ASSERT_FALSE(ms_bench_spec_check(s, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC, "needs at least one token count");
    s->what = MS_BENCH_P2P;
    MsBenchPair p = {0, 0, 2, g_strdup("self")};
    g_array_append_val(s->pairs, p);
    CU_ASSERT_FALSE(ms_bench_spec_check(s, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC, "pair 0: ranks 0 and 0 of 1");
    s->what = 1 << 9;
    CU_ASSERT_FALSE(ms_bench_spec_check(s, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC, "what: 0x200");
}

static void
test_json(void)
{
    g_autoptr(MsBenchSpec) s = ms_bench_spec_new();
    const char *hosts[] = {"a", "a", "b", NULL};
    CU_ASSERT_TRUE_FATAL(ms_bench_plan_pairs(s, NULL, hosts, 3, NULL));
    s->iters = 7;
    s->gated = FALSE;
    g_autoptr(GBytes) bytes = ms_bench_spec_to_bytes(s);
    GError *error = NULL;
    g_autoptr(MsBenchSpec) back = ms_bench_spec_from_bytes(bytes, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    CU_ASSERT_EQUAL(back->iters, 7);
    CU_ASSERT_FALSE(back->gated);
    CU_ASSERT_EQUAL(back->world, 3);
    CU_ASSERT_EQUAL(back->ranks_per_node, 2);
    CU_ASSERT_EQUAL(back->tokens->len, s->tokens->len);
    CU_ASSERT_EQUAL_FATAL(back->pairs->len, 2);
    CU_ASSERT_STRING_EQUAL(g_array_index(back->pairs, MsBenchPair, 1).label, "cross-node");
    g_autoptr(GBytes) again = ms_bench_spec_to_bytes(back);
    CU_ASSERT_TRUE(g_bytes_equal(bytes, again));
    const struct {
        const char *text, *needle;
    } bad[] = {
        {"[1, 2]", "spec: not a JSON object"},
        {"{\"what\": 1", "spec: not a JSON object: "},
        {"{}", "spec: 'what' is missing"},
        {"{\"what\": 31, \"min_bytes\": -8}", "spec: 'min_bytes' is missing or not an integer"},
    };
    for (guint k = 0; k < G_N_ELEMENTS(bad); k++) {
        g_autoptr(GBytes) b = g_bytes_new(bad[k].text, strlen(bad[k].text));
        CU_ASSERT_PTR_NULL(ms_bench_spec_from_bytes(b, &error));
        MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC, bad[k].needle);
    }
    /* Regression: a spec nested 100000 deep overflowed json-glib's recursive parser. */
    GString *deep = g_string_new(NULL);
    for (guint k = 0; k < 100000; k++) {
        g_string_append_c(deep, '[');
    }
    g_autoptr(GBytes) db = g_string_free_to_bytes(deep);
    CU_ASSERT_PTR_NULL(ms_bench_spec_from_bytes(db, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC,
                    "spec: not a JSON object: JSON nested deeper than 512 levels");
    /* A spec whose values parse but do not check. */
    g_autofree char *text = g_strndup(g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));
    g_auto(GStrv) parts = g_strsplit(text, "\"iters\":7", 2);
    CU_ASSERT_EQUAL_FATAL(g_strv_length(parts), 2);
    g_autofree char *zero = g_strjoinv("\"iters\":0", parts);
    g_autoptr(GBytes) zb = g_bytes_new(zero, strlen(zero));
    CU_ASSERT_PTR_NULL(ms_bench_spec_from_bytes(zb, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC, "iterations: 0");
}

static void
test_sizes(void)
{
    g_autoptr(MsBenchSpec) s = ms_bench_spec_new();
    s->min_bytes = 1000;
    s->max_bytes = 9000;
    s->step_factor = 3;
    g_autoptr(GArray) sizes = ms_bench_sizes(s);
    /* the largest size is included when the steps land on it, as in nccl-tests */
    CU_ASSERT_EQUAL_FATAL(sizes->len, 3);
    CU_ASSERT_EQUAL(g_array_index(sizes, guint64, 0), 1000);
    CU_ASSERT_EQUAL(g_array_index(sizes, guint64, 1), 3000);
    CU_ASSERT_EQUAL(g_array_index(sizes, guint64, 2), 9000);
    s->min_bytes = 1;
    s->max_bytes = 3;
    s->step_factor = 1.2; /* 1 x 1.2 rounds down to 1: the sweep still advances */
    g_autoptr(GArray) small = ms_bench_sizes(s);
    CU_ASSERT_EQUAL(small->len, 3);
}

static void
test_pairs(void)
{
    GError *error = NULL;
    g_autoptr(MsBenchSpec) s = ms_bench_spec_new();
    g_autoptr(MsTopology) two = ms_topology_load("dgx-a100-2node", NULL);
    const char *hosts[17];
    for (guint r = 0; r < 16; r++) {
        hosts[r] = r < 8 ? "node-a" : "node-b";
    }
    hosts[16] = NULL;
    CU_ASSERT_TRUE_FATAL(ms_bench_plan_pairs(s, two, hosts, 16, &error));
    /* rank 1 across the NVSwitch, rank 8 through the NICs (the PCIe links are unlimited) */
    CU_ASSERT_EQUAL_FATAL(s->pairs->len, 2);
    const MsBenchPair *p = &g_array_index(s->pairs, MsBenchPair, 0);
    CU_ASSERT_EQUAL(p->b, 1);
    CU_ASSERT_EQUAL(p->ranks_per_node, 2);
    CU_ASSERT_STRING_EQUAL(p->label, "nvswitch");
    p = &g_array_index(s->pairs, MsBenchPair, 1);
    CU_ASSERT_EQUAL(p->b, 8);
    CU_ASSERT_EQUAL(p->ranks_per_node, 1);
    CU_ASSERT_STRING_EQUAL(p->label, "nic");
    CU_ASSERT_EQUAL(s->world, 16);
    CU_ASSERT_EQUAL(s->ranks_per_node, 8);
    /* DGX-1: some GPUs reach GPU 0 by NVLink, the others only through PCIe. */
    g_autoptr(MsTopology) dgx1 = ms_topology_load("dgx1-v100", NULL);
    CU_ASSERT_TRUE_FATAL(ms_bench_plan_pairs(s, dgx1, hosts, 8, &error));
    CU_ASSERT_EQUAL_FATAL(s->pairs->len, 2);
    CU_ASSERT_STRING_EQUAL(g_array_index(s->pairs, MsBenchPair, 0).label, "nvlink");
    CU_ASSERT_STRING_EQUAL(g_array_index(s->pairs, MsBenchPair, 1).label, "pcie");
    /* Without a topology: by host. One rank: nothing to pair. */
    CU_ASSERT_TRUE(ms_bench_plan_pairs(s, NULL, hosts, 16, &error));
    CU_ASSERT_EQUAL(s->pairs->len, 2);
    CU_ASSERT_STRING_EQUAL(g_array_index(s->pairs, MsBenchPair, 0).label, "same-node");
    CU_ASSERT_TRUE(ms_bench_plan_pairs(s, NULL, hosts, 1, &error));
    CU_ASSERT_EQUAL(s->pairs->len, 0);
    g_autoptr(MsTopology) h200 = ms_topology_load("h200", NULL);
    CU_ASSERT_FALSE(ms_bench_plan_pairs(s, h200, hosts, 2, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC,
                    "--topology: 'h200' has 1 GPUs, the run 2 ranks");
}

/* The expert kernels are the shapes calibration's expert fit combines. */
static void
test_expert_kernels(void)
{
    g_autoptr(MsBenchSpec) s = ms_bench_spec_new();
    MsBenchKernel k[3];
    ms_bench_expert_kernels(s, 256, k);
    CU_ASSERT_EQUAL(k[0].kind, MS_MEASUREMENT_GEMM);
    CU_ASSERT_EQUAL(k[0].m, 256);
    CU_ASSERT_EQUAL(k[0].n, 2 * 14336);
    CU_ASSERT_EQUAL(k[0].k, 4096);
    CU_ASSERT_EQUAL(k[1].kind, MS_MEASUREMENT_ELEMENTWISE);
    CU_ASSERT_EQUAL(k[1].bytes, 2ull * 256 * (2 * 14336 + 14336));
    CU_ASSERT_EQUAL(k[2].n, 4096);
    CU_ASSERT_EQUAL(k[2].k, 14336);
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    for (guint t = 0; t < 3; t++) {
        ms_bench_expert_kernels(s, 64u << t, k);
        for (guint j = 0; j < 3; j++) {
            MsMeasurement row = {.kind = k[j].kind,
                                 .bytes = k[j].bytes,
                                 .ranks = 1,
                                 .ranks_per_node = 1,
                                 .m = k[j].m,
                                 .n = k[j].n,
                                 .k = k[j].k,
                                 .dtype = "bf16",
                                 .label = k[j].label,
                                 .seconds = 1e-4 * (j + 1),
                                 .min_s = NAN,
                                 .median_s = NAN,
                                 .mean_s = NAN,
                                 .source = "t"};
            CU_ASSERT_TRUE(ms_measurement_set_add(set, &row, NULL));
        }
    }
    g_autoptr(GArray) points = g_array_new(FALSE, FALSE, sizeof(MsGemmPoint));
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_measurement_set_expert_points(set, 4096, 14336, TRUE, points, &error));
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_EQUAL(points->len, 3);
}

static void
test_bandwidth(void)
{
    double alg, bus;
    ms_bench_bandwidth(MS_MEASUREMENT_ALLREDUCE, 1000000, 1e-3, 8, &alg, &bus);
    MS_ASSERT_REL(alg, 1e9, 1e-12);
    MS_ASSERT_REL(bus, 1e9 * 2 * 7 / 8, 1e-12);
    ms_bench_bandwidth(MS_MEASUREMENT_ALLTOALL, 1000000, 1e-3, 4, &alg, &bus);
    MS_ASSERT_REL(bus, 1e9 * 3 / 4, 1e-12);
    ms_bench_bandwidth(MS_MEASUREMENT_SENDRECV, 1000000, 1e-3, 2, &alg, &bus);
    MS_ASSERT_REL(bus, 1e9, 1e-12);
}

/* The concurrency benchmark's spec: defaults, its sizes, its checks, its JSON form. */
static void
test_concurrency_spec(void)
{
    g_autoptr(MsBenchSpec) s = ms_bench_spec_new();
    GError *error = NULL;
    CU_ASSERT_TRUE(s->what & MS_BENCH_CONCURRENCY);
    CU_ASSERT_EQUAL_FATAL(s->concurrency_sizes->len, 4);
    CU_ASSERT_EQUAL(g_array_index(s->concurrency_sizes, guint64, 0), 1u << 20);
    CU_ASSERT_EQUAL(g_array_index(s->concurrency_sizes, guint64, 3), 64u << 20);
    CU_ASSERT_EQUAL(s->background_bytes, 25u << 20);
    CU_ASSERT_EQUAL(s->channels, 0);
    guint32 what = 0;
    CU_ASSERT_TRUE(ms_bench_parse_what("concurrency", &what, &error));
    CU_ASSERT_EQUAL(what, MS_BENCH_CONCURRENCY);
    CU_ASSERT_TRUE(ms_bench_parse_what("overlap,gemm", &what, &error));
    CU_ASSERT_EQUAL(what, MS_BENCH_OVERLAP | MS_BENCH_GEMM);
    CU_ASSERT_TRUE(MS_BENCH_ALL & MS_BENCH_OVERLAP);
    CU_ASSERT_TRUE(ms_bench_option_set(s, "--concurrency-sizes", "512K, 2M,16777216", &error));
    CU_ASSERT_EQUAL_FATAL(s->concurrency_sizes->len, 3);
    CU_ASSERT_EQUAL(g_array_index(s->concurrency_sizes, guint64, 0), 512u << 10);
    CU_ASSERT_EQUAL(g_array_index(s->concurrency_sizes, guint64, 2), 16u << 20);
    const struct {
        const char *list, *needle;
    } bad[] = {
        {"4M,1M", "--concurrency-sizes: item 2, 1048576, does not increase after 4194304"},
        {"4M,x", "--concurrency-sizes: item 2: bad size 'x'"},
        {"0", "--concurrency-sizes: item 1: '0' out of range (must be between 1 B and 16 GiB)"},
        {"32G", "--concurrency-sizes: item 1: '32G' out of range"},
        {"", "--concurrency-sizes: no value in ''"},
        {"1M,,4M", "--concurrency-sizes: item 2: bad size ''"},
    };
    for (guint k = 0; k < G_N_ELEMENTS(bad); k++) {
        CU_ASSERT_FALSE(ms_bench_option_set(s, "--concurrency-sizes", bad[k].list, &error));
        MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC, bad[k].needle);
    }
    CU_ASSERT_FALSE(ms_bench_option_set(s, "--background", "1", &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC,
                    "--background: '1' out of range (must be between 2 B and 16 GiB)");
    /* The loop under the all-to-all: a million calls at most. */
    CU_ASSERT_TRUE(ms_bench_loop_check(1e6, "the all-to-all of 1048576 B", 8, &error));
    CU_ASSERT_FALSE(ms_bench_loop_check(1e6 + 1, "the all-to-all of 1048576 B", 8, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC,
                    "allreduce calls: '1000001' out of range (must be between 1 and "
                    "1000000): the all-to-all of 1048576 B needs that many calls of the 8 B "
                    "allreduce to loop under it: give a larger --background");
    CU_ASSERT_EQUAL(s->concurrency_sizes->len, 3); /* unchanged by the refusals */
    s->background_bytes = 1;
    CU_ASSERT_FALSE(ms_bench_spec_check(s, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC,
                    "background allreduce: 1 bytes is not within 2 to 17179869184");
    s->background_bytes = 25u << 20;
    s->channels = 65;
    CU_ASSERT_FALSE(ms_bench_spec_check(s, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC,
                    "channels: 65 is not within 1 to 64 (0: NCCL's own)");
    s->channels = 4;
    s->qps = 129;
    CU_ASSERT_FALSE(ms_bench_spec_check(s, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC,
                    "queue pairs per connection: 129 is not within 1 to 128");
    s->qps = 2;
    g_array_index(s->concurrency_sizes, guint64, 1) = 1;
    CU_ASSERT_FALSE(ms_bench_spec_check(s, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC,
                    "concurrency sizes: 1 (item 2) is not increasing");
    g_array_set_size(s->concurrency_sizes, 0);
    CU_ASSERT_FALSE(ms_bench_spec_check(s, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC,
                    "concurrency sizes: the benchmark needs at least one size");
    s->what = MS_BENCH_GEMM; /* not asked for: no sizes needed */
    CU_ASSERT_TRUE(ms_bench_spec_check(s, &error));
    CU_ASSERT_EQUAL(ms_bench_csv_version(s), 2); /* NCCL settings are version 2 columns */
    s->channels = s->qps = 0;
    CU_ASSERT_EQUAL(ms_bench_csv_version(s), 1);
    s->what = MS_BENCH_ALL;
    CU_ASSERT_EQUAL(ms_bench_csv_version(s), 2);
    s->what = MS_BENCH_OVERLAP; /* kernels with a background_bytes column */
    CU_ASSERT_EQUAL(ms_bench_csv_version(s), 2);
    /* The overlap benchmark times the expert kernels: it needs token counts as gemm does. */
    g_autoptr(GArray) saved = g_array_copy(s->tokens);
    g_array_set_size(s->tokens, 0);
    CU_ASSERT_FALSE(ms_bench_spec_check(s, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC,
                    "tokens: the GEMM sweep needs at least one token count");
    g_array_append_vals(s->tokens, saved->data, saved->len);
    s->what = MS_BENCH_ALL;
    /* The JSON form carries every field. */
    CU_ASSERT_TRUE_FATAL(ms_bench_option_set(s, "--concurrency-sizes", "1M,8M", &error));
    s->background_bytes = 1u << 20;
    s->channels = 8;
    s->qps = 4;
    g_autoptr(GBytes) bytes = ms_bench_spec_to_bytes(s);
    g_autoptr(MsBenchSpec) back = ms_bench_spec_from_bytes(bytes, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    CU_ASSERT_EQUAL_FATAL(back->concurrency_sizes->len, 2);
    CU_ASSERT_EQUAL(g_array_index(back->concurrency_sizes, guint64, 1), 8u << 20);
    CU_ASSERT_EQUAL(back->background_bytes, 1u << 20);
    CU_ASSERT_EQUAL(back->channels, 8);
    CU_ASSERT_EQUAL(back->qps, 4);
    g_autofree char *text = g_strndup(g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));
    g_auto(GStrv) parts = g_strsplit(text, "\"concurrency_sizes\":[1048576,", 2);
    CU_ASSERT_EQUAL_FATAL(g_strv_length(parts), 2);
    g_autofree char *neg = g_strjoinv("\"concurrency_sizes\":[-1,", parts);
    g_autoptr(GBytes) nb = g_bytes_new(neg, strlen(neg));
    CU_ASSERT_PTR_NULL(ms_bench_spec_from_bytes(nb, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC,
                    "spec: concurrency size 0 is not a size in bytes");
}

/* NCCL's settings from and to the environment, and every rank's check of its own. */
static void
test_nccl_env(void)
{
    GError *error = NULL;
    const struct {
        const char *env[4];
        guint32 channels, qps; /* what the spec takes; G_MAXUINT32: refused */
        const char *needle;
    } cases[] = {
        {{NULL}, 0, 0, NULL},
        {{"NCCL_MIN_NCHANNELS=4", "NCCL_MAX_NCHANNELS=4", NULL}, 4, 0, NULL},
        {{"NCCL_IB_QPS_PER_CONNECTION=2", "HOME=/x", NULL}, 0, 2, NULL},
        {{"NCCL_MAX_NCHANNELS=4", NULL},
         G_MAXUINT32,
         0,
         "environment: NCCL_MIN_NCHANNELS=(unset) and NCCL_MAX_NCHANNELS=4 leave NCCL a range of "
         "channel counts, which a row cannot record: set both alike or give --channels N"},
        {{"NCCL_MIN_NCHANNELS=2", "NCCL_MAX_NCHANNELS=8", NULL},
         G_MAXUINT32,
         0,
         "NCCL_MIN_NCHANNELS=2 and NCCL_MAX_NCHANNELS=8 leave NCCL a range"},
        {{"NCCL_MIN_NCHANNELS=two", NULL},
         G_MAXUINT32,
         0,
         "environment: NCCL_MIN_NCHANNELS='two' is not a count from 1 to 64"},
        {{"NCCL_MAX_NRINGS=4", NULL},
         G_MAXUINT32,
         0,
         "environment: NCCL_MAX_NRINGS='4' bounds NCCL's channels under its older name"},
        {{"NCCL_IB_QPS_PER_CONNECTION=0", NULL},
         0,
         G_MAXUINT32,
         "environment: NCCL_IB_QPS_PER_CONNECTION='0' is not a count from 1 to 128"},
    };
    for (guint k = 0; k < G_N_ELEMENTS(cases); k++) {
        g_autoptr(MsBenchSpec) s = ms_bench_spec_new();
        gboolean ok = ms_bench_nccl_env(s, cases[k].env, &error);
        if (cases[k].needle) {
            CU_ASSERT_FALSE(ok);
            MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC, cases[k].needle);
            continue;
        }
        CU_ASSERT_TRUE(ok);
        CU_ASSERT_EQUAL(s->channels, cases[k].channels);
        CU_ASSERT_EQUAL(s->qps, cases[k].qps);
        /* What the spec took is what the environment it came from holds. */
        CU_ASSERT_TRUE(ms_bench_nccl_env_check(s, cases[k].env, &error));
    }
    /* Options win over the environment (the command then sets it). */
    g_autoptr(MsBenchSpec) s = ms_bench_spec_new();
    s->channels = 2;
    s->qps = 4;
    const char *const range[] = {"NCCL_MIN_NCHANNELS=1", "NCCL_MAX_NCHANNELS=8",
                                 "NCCL_IB_QPS_PER_CONNECTION=1", NULL};
    CU_ASSERT_TRUE(ms_bench_nccl_env(s, range, &error));
    CU_ASSERT_EQUAL(s->channels, 2);
    CU_ASSERT_EQUAL(s->qps, 4);
    g_auto(GStrv) set = ms_bench_nccl_assignments(s);
    CU_ASSERT_EQUAL_FATAL(g_strv_length(set), 3);
    CU_ASSERT_STRING_EQUAL(set[0], "NCCL_MIN_NCHANNELS=2");
    CU_ASSERT_STRING_EQUAL(set[1], "NCCL_MAX_NCHANNELS=2");
    CU_ASSERT_STRING_EQUAL(set[2], "NCCL_IB_QPS_PER_CONNECTION=4");
    CU_ASSERT_TRUE(ms_bench_nccl_env_check(s, (const char *const *)set, &error));
    /* A rank whose process lacks a setting, or carries one the spec leaves to NCCL. */
    CU_ASSERT_FALSE(ms_bench_nccl_env_check(s, range, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC,
                    "environment: NCCL_MIN_NCHANNELS is '1' here but 2 in the benchmark: every "
                    "rank's process must carry the same NCCL settings");
    const char *const none[] = {NULL};
    CU_ASSERT_FALSE(ms_bench_nccl_env_check(s, none, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC,
                    "environment: NCCL_MIN_NCHANNELS is unset here but 2 in the benchmark");
    g_autoptr(MsBenchSpec) plain = ms_bench_spec_new();
    const char *const qps[] = {"NCCL_IB_QPS_PER_CONNECTION=4", NULL};
    CU_ASSERT_FALSE(ms_bench_nccl_env_check(plain, qps, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC,
                    "NCCL_IB_QPS_PER_CONNECTION is '4' here but unset (NCCL's own) in the "
                    "benchmark");
    const char *const rings[] = {"NCCL_MIN_NRINGS=2", NULL};
    CU_ASSERT_FALSE(ms_bench_nccl_env_check(plain, rings, &error));
    MS_ASSERT_ERROR(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC, "NCCL_MIN_NRINGS is '2' here");
    g_auto(GStrv) nothing = ms_bench_nccl_assignments(plain);
    CU_ASSERT_EQUAL(g_strv_length(nothing), 0);
}

/* Whether this machine can run the cuda backend (then the no-GPU refusals do not apply). */
static gboolean
have_gpu(void)
{
    const MsExecBackend *cuda = ms_backend_hooks(ms_backend_find("cuda", NULL), NULL);
    return cuda && cuda->devices(NULL) > 0;
}

static void
test_command_errors(void)
{
    const struct {
        const char *args[8];
        const char *needle;
    } cases[] = {
        {{"bench", "--backend", "cpu", NULL}, "backend 'cpu' has no microbenchmarks"},
        {{"bench", "--backend", "tpu", NULL}, "unknown backend 'tpu'"},
        {{"bench", "--what", "p2p,foo", NULL}, "--what: unknown benchmark 'foo'"},
        {{"bench", "--iters", "0", NULL},
         "--iters: '0' out of range (must be between 1 and 100000)"},
        {{"bench", "--ranks", "0", NULL}, "--ranks: 0 is not at least 1"},
        {{"bench", "--tokens", "8,4", NULL}, "--tokens: item 2, 4, does not increase after 8"},
        {{"bench", "--minbytes", "1x", NULL}, "--minbytes"},
        {{"bench", "--dtype", "fp32", NULL},
         "--dtype: 'fp32' is not one of: bf16, fp16, bfloat16, half"},
        {{"bench", "--topology", "no-such-topo", NULL}, "no-such-topo"},
        {{"bench", "--timeout", "5", NULL}, "--timeout: '5' is not a time above 0 with a unit"},
        {{"bench", "extra", NULL}, "unexpected argument 'extra'"},
        {{"bench", "--channels", "0", NULL},
         "--channels: '0' out of range (must be between 1 and 64)"},
        {{"bench", "--qps", "200", NULL}, "--qps: '200' out of range (must be between 1 and 128)"},
        {{"bench", "--concurrency-sizes", "4M,1M", NULL},
         "--concurrency-sizes: item 2, 1048576, does not increase after 4194304"},
        {{"bench", "--background", "1x", NULL}, "--background"},
        {{"bench", "--background", "1", NULL},
         "--background: '1' out of range (must be between 2 B"},
        {{"bench", "--what", "concurrency", "--concurrency-sizes", "", NULL},
         "--concurrency-sizes: no value in ''"},
    };
    for (guint k = 0; k < G_N_ELEMENTS(cases); k++) {
        g_autofree char *out = NULL, *err = NULL;
        int rc = ms_test_run_moesim(cases[k].args, &out, &err);
        CU_ASSERT_EQUAL(rc, 2);
        if (err == NULL || strstr(err, cases[k].needle) == NULL) {
            fprintf(stderr, "\n  case %u: stderr '%s' lacks '%s'\n", k, err, cases[k].needle);
            CU_FAIL("bench error message");
        }
    }
    /* A channel bound in the environment that a row could not record. */
    g_setenv("NCCL_MAX_NCHANNELS", "4", TRUE);
    const char *bound[] = {"bench", "--what", "concurrency", NULL};
    g_autofree char *bout = NULL, *berr = NULL;
    CU_ASSERT_EQUAL(ms_test_run_moesim(bound, &bout, &berr), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(berr, "NCCL_MAX_NCHANNELS=4 leave NCCL a range"));
    g_unsetenv("NCCL_MAX_NCHANNELS");
    if (have_gpu()) {
        return;
    }
    /* No GPU here: a clear message and exit 2, whether or not this moesim has the backend. */
    const char *args[] = {"bench", "--what", "gemm", NULL};
    g_autofree char *out = NULL, *err = NULL;
    CU_ASSERT_EQUAL(ms_test_run_moesim(args, &out, &err), 2);
    gboolean built = ms_backend_in_build(ms_backend_find("cuda", NULL));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(err, built ? "no CUDA device is visible" : "this moesim was built without it"));
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"defaults, --what and --tokens", test_defaults_and_parsing},
        {"spec checks", test_check_errors},
        {"JSON form", test_json},
        {"size sweeps", test_sizes},
        {"the concurrency benchmark's spec", test_concurrency_spec},
        {"NCCL's settings in the environment", test_nccl_env},
        {"point-to-point pairs per link class", test_pairs},
        {"expert kernels fit calibration's expert points", test_expert_kernels},
        {"nccl-tests bandwidths", test_bandwidth},
        {"moesim bench errors", test_command_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"executor bench", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
