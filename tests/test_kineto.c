/* Tests of the profiler trace reader, the per-layer file reader and the per-layer comparison:
 * the fixture tests/data/kineto/moe-rank1.json (README there) read into layers and per-op rows
 * whose every figure has a closed form, every malformed input named, moesim-layers files read
 * back as written, comparisons that name what the simulation lacks, and validate --layers. */
#include "ms_test.h"
#include "sim/base/input_file.h"
#include "sim/base/json_input.h"
#include "validate/kineto.h"
#include "validate/layer_compare.h"
#include "validate/layer_file.h"

static char *
fixture(void)
{
    return g_build_filename(ms_test_srcdir(), "tests", "data", "kineto", "moe-rank1.json", NULL);
}

static MsLayerTable *
fixture_layers(void)
{
    g_autofree char *path = fixture();
    MsLayerTable *t = ms_layer_table_new();
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_layer_file_load(t, path, NULL, &error));
    g_assert_no_error(error);
    return t;
}

static void
test_layers(void)
{
    g_autoptr(MsLayerTable) t = fixture_layers();
    CU_ASSERT_EQUAL_FATAL(ms_layer_table_n_rows(t), 3);
    /* Step 3, layer 1 on rank 1: the range [1010, 1110]; kernels gate GEMM [1020,1024] and top-k
     * [1030,1036] (gate 10), a copy [1036,1038] (other 2), the dispatch [1046,1066] (20), expert
     * GEMMs and GELU [1066,1087] (21), the combine [1090,1105] (15); kernels busy 68 of 100. */
    const MsLayerRow *a = ms_layer_table_find(t, 3, 1, MS_PHASE_FORWARD, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    MS_ASSERT_REL(a->start_us, 10, 1e-12);
    MS_ASSERT_REL(a->layer_us, 100, 1e-12);
    MS_ASSERT_REL(a->busy_us, 100, 1e-12);
    MS_ASSERT_REL(a->part_us[MS_LAYER_GATE], 10, 1e-12);
    MS_ASSERT_REL(a->part_us[MS_LAYER_DISPATCH], 20, 1e-12);
    MS_ASSERT_REL(a->part_us[MS_LAYER_EXPERT], 21, 1e-12);
    MS_ASSERT_REL(a->part_us[MS_LAYER_COMBINE], 15, 1e-12);
    MS_ASSERT_REL(a->part_us[MS_LAYER_OTHER], 2, 1e-12);
    MS_ASSERT_REL(a->part_us[MS_LAYER_HOST], 32, 1e-12);
    /* Layer 3: no NCCL kernel, so the first GEMM is the gate's (5) and the others the experts'
     * (20); 25 of 50 waiting for the host. */
    const MsLayerRow *b = ms_layer_table_find(t, 3, 3, MS_PHASE_FORWARD, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    MS_ASSERT_REL(b->start_us, 200, 1e-12);
    MS_ASSERT_REL(b->layer_us, 50, 1e-12);
    MS_ASSERT_REL(b->part_us[MS_LAYER_GATE], 5, 1e-12);
    MS_ASSERT_REL(b->part_us[MS_LAYER_EXPERT], 20, 1e-12);
    MS_ASSERT_REL(b->part_us[MS_LAYER_HOST], 25, 1e-12);
    /* Step 4: the kernel ends at 1490, after the range's 1470: the layer runs 1410 to 1490. */
    const MsLayerRow *c = ms_layer_table_find(t, 4, 1, MS_PHASE_FORWARD, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    MS_ASSERT_REL(c->layer_us, 80, 1e-12);
    MS_ASSERT_REL(c->part_us[MS_LAYER_HOST], 70, 1e-12);
    CU_ASSERT_STRING_EQUAL(ms_layer_table_get_meta(t, "backend"), "pytorch-profiler");
    CU_ASSERT_PTR_NOT_NULL(strstr(ms_layer_table_get_meta(t, "unmodelled.device copies"),
                                  "0.667 us per layer of device copies"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ms_layer_table_get_meta(t, "measured.host synchronisations"),
                                  "0.333 per layer, 8.000 us each"));
}

static void
test_pattern_and_gpu(void)
{
    g_autofree char *path = fixture();
    g_autofree char *data = NULL;
    gsize len = 0;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &data, &len, NULL));
    CU_ASSERT_TRUE(ms_kineto_sniff(data, len));
    CU_ASSERT_FALSE(ms_kineto_sniff("[1, 2]", 6));
    GError *error = NULL;
    /* Layer 3 alone, by a pattern of the user's. */
    MsKinetoOptions only3 = {.layer_pattern = "^L(3)\\.(fwd)$", .gpu = 5};
    g_autoptr(MsLayerTable) t = ms_layer_table_new();
    CU_ASSERT_TRUE(ms_layer_file_read(t, data, len, "r.json", &only3, &error));
    CU_ASSERT_EQUAL(ms_layer_table_n_rows(t), 1);
    /* Without distributedInfo the GPU is the option's. */
    g_autofree char *norank = g_strdup(data);
    char *at = strstr(norank, "\"distributedInfo\"");
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    memcpy(at, "\"distributedInfX\"", strlen("\"distributedInfX\""));
    g_autoptr(MsLayerTable) u = ms_layer_table_new();
    CU_ASSERT_TRUE(ms_layer_file_read(u, norank, strlen(norank), "r.json", &only3, &error));
    CU_ASSERT_EQUAL(ms_layer_table_row(u, 0)->gpu, 5);
    static const struct {
        const char *pattern;
        int code;
        const char *needle;
    } bad[] = {
        {"^L(", MS_KINETO_ERROR_PATTERN, "r.json: layer pattern '^L(':"},
        {"^L3", MS_KINETO_ERROR_PATTERN, "needs a group (...) for the layer number"},
        {"^nothing(\\d)", MS_KINETO_ERROR_EMPTY,
         "r.json: no range matches the layer pattern '^nothing(\\d)': annotate each layer"},
        {"^L(\\d+)\\.(f)wd", MS_KINETO_ERROR_VALUE,
         "the pattern's groups give layer '1' and phase 'f' (a layer is 0 to 4095"},
        {"^(ProfilerStep)#", MS_KINETO_ERROR_VALUE, "give layer 'ProfilerStep'"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        MsKinetoOptions o = {.layer_pattern = bad[i].pattern};
        g_autoptr(MsLayerTable) v = ms_layer_table_new();
        CU_ASSERT_FALSE(ms_layer_file_read(v, data, len, "r.json", &o, &error));
        MS_ASSERT_ERROR(error, MS_KINETO_ERROR, bad[i].code, bad[i].needle);
    }
}

static void
test_measurements(void)
{
    g_autofree char *path = fixture();
    g_autoptr(JsonParser) p = json_parser_new();
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_json_input_load_file(p, path, MS_INPUT_MEASUREMENT, &error));
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    guint added = 0;
    CU_ASSERT_TRUE(
        ms_kineto_read_measurements(json_parser_get_root(p), "r.json", set, &added, &error));
    g_assert_no_error(error);
    /* 3 GEMMs, 2 all-to-alls, 11 cudaLaunchKernel. */
    CU_ASSERT_EQUAL(added, 16);
    guint gemm = 0, a2a = 0, launch = 0;
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        const MsMeasurement *r = ms_measurement_set_get(set, i);
        if (r->kind == MS_MEASUREMENT_GEMM) {
            static const guint64 shapes[3][4] = {
                {64, 8, 768, 4}, {40, 3072, 768, 10}, {40, 768, 3072, 9}};
            CU_ASSERT_EQUAL(r->m, shapes[gemm][0]);
            CU_ASSERT_EQUAL(r->n, shapes[gemm][1]);
            CU_ASSERT_EQUAL(r->k, shapes[gemm][2]);
            MS_ASSERT_REL(r->seconds, shapes[gemm][3] * 1e-6, 1e-12);
            CU_ASSERT_STRING_EQUAL(r->dtype, "bf16");
            gemm++;
        } else if (r->kind == MS_MEASUREMENT_ALLTOALL) {
            /* 49152 bf16 elements per rank, 2 ranks on one node (the trace sees 2 GPUs). */
            CU_ASSERT_EQUAL(r->bytes, 98304);
            CU_ASSERT_EQUAL(r->ranks, 2);
            CU_ASSERT_EQUAL(r->ranks_per_node, 2);
            MS_ASSERT_REL(r->seconds, (a2a == 0 ? 20 : 15) * 1e-6, 1e-12);
            a2a++;
        } else if (r->kind == MS_MEASUREMENT_LAUNCH) {
            launch++;
        }
    }
    CU_ASSERT_EQUAL(gemm, 3);
    CU_ASSERT_EQUAL(a2a, 2);
    CU_ASSERT_EQUAL(launch, 11);
    /* Through the measurement loader, as calibrate reads it. */
    g_autoptr(MsMeasurementSet) loaded = ms_measurement_set_load(path, &error);
    g_assert_no_error(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(loaded);
    CU_ASSERT_EQUAL(ms_measurement_set_size(loaded), 16);
}

static void
test_malformed(void)
{
    static const struct {
        const char *text;
        GQuark (*domain)(void);
        int code;
        const char *needle;
    } cases[] = {
        {"{\"traceEvents\": 3}", ms_kineto_error_quark, MS_KINETO_ERROR_FORMAT,
         "t.json: not a PyTorch profiler trace: no traceEvents array"},
        {"{\"traceEvents\": [7]}", ms_kineto_error_quark, MS_KINETO_ERROR_VALUE,
         "t.json: traceEvents[0] is not an object"},
        {"{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"L1.fwd\", \"ts\": 1}]}",
         ms_kineto_error_quark, MS_KINETO_ERROR_VALUE,
         "t.json: traceEvents[0]: a complete event (ph X) needs a string name and finite ts "
         "and dur >= 0"},
        {"{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1, \"dur\": -2}]}",
         ms_kineto_error_quark, MS_KINETO_ERROR_VALUE, "traceEvents[0]: a complete event"},
        {"{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"ts\": \"1\", \"dur\": 2}]}",
         ms_kineto_error_quark, MS_KINETO_ERROR_VALUE, "traceEvents[0]: a complete event"},
        {"{\"format\": \"moesim-result\"}", ms_layer_file_error_quark, MS_LAYER_FILE_ERROR_FORMAT,
         "t.json: neither a moesim-layers file (write one with `moesim run --layers`) nor a "
         "PyTorch profiler trace"},
        {"{\"format\": \"moesim-layers\", \"version\": 2}", ms_layer_file_error_quark,
         MS_LAYER_FILE_ERROR_FORMAT, "t.json: moesim-layers version 2 is not one this moesim"},
        {"{\"format\": \"moesim-layers\", \"version\": 1, \"layers\": [{\"iteration\": 0, "
         "\"layer\": 1, \"phase\": \"sideways\", \"gpus\": []}]}",
         ms_layer_file_error_quark, MS_LAYER_FILE_ERROR_VALUE,
         "t.json: layers[0]: 'phase' is missing or not forward or backward"},
        {"{\"format\": \"moesim-layers\", \"version\": 1, \"layers\": [{\"iteration\": 0, "
         "\"layer\": 1, \"phase\": \"forward\", \"gpus\": [{\"gpu\": 0, \"layer_us\": -1}]}]}",
         ms_layer_file_error_quark, MS_LAYER_FILE_ERROR_VALUE,
         "t.json: layers[0].gpus[0]: 'layer_us' is missing or not a number in [0, 3.6e+09]"},
        {"# moesim-layers 2\n", ms_layer_file_error_quark, MS_LAYER_FILE_ERROR_FORMAT,
         "t.json: the first line is not '# moesim-layers 1'"},
        {"# moesim-layers 1\niteration,layer,phase,gpu,layer_us\n0,1,forward,0\n",
         ms_measurement_error_quark, MS_MEASUREMENT_ERROR_SYNTAX,
         "t.json:3: 4 fields, but the header names 5"},
        {"# moesim-layers 1\niteration,layer,phase,gpu,layer_us\n0,1,up,0,5\n",
         ms_measurement_error_quark, MS_MEASUREMENT_ERROR_VALUE,
         "t.json:3: phase: 'up' is not forward or backward"},
        {"# moesim-layers 1\niteration,layer,phase,gpu\n0,1,forward,0\n",
         ms_measurement_error_quark, MS_MEASUREMENT_ERROR_MISSING, "t.json:3: layer_us: required"},
        {"# moesim-layers 1\niteration,layer,phase,gpu,layer_us\n0,4096,forward,0,5\n",
         ms_measurement_error_quark, MS_MEASUREMENT_ERROR_VALUE, "t.json:3: layer:"},
        {"# moesim-layers 1\niteration,layer,phase,gpu,layer_us\n0.5,1,forward,0,5\n",
         ms_measurement_error_quark, MS_MEASUREMENT_ERROR_VALUE,
         "t.json:3: iteration, layer and gpu must be whole numbers"},
        {"not json", ms_layer_file_error_quark, MS_LAYER_FILE_ERROR_FORMAT,
         "t.json: neither a moesim-layers file (JSON or CSV) nor a profiler trace:"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(MsLayerTable) t = ms_layer_table_new();
        GError *error = NULL;
        CU_ASSERT_FALSE(
            ms_layer_file_read(t, cases[i].text, strlen(cases[i].text), "t.json", NULL, &error));
        MS_ASSERT_ERROR(error, cases[i].domain(), cases[i].code, cases[i].needle);
    }
    GError *error = NULL;
    g_autoptr(MsLayerTable) t = ms_layer_table_new();
    CU_ASSERT_FALSE(ms_layer_file_load(t, "/nonexistent/l.json", NULL, &error));
    MS_ASSERT_ERROR(error, MS_INPUT_FILE_ERROR, MS_INPUT_FILE_ERROR_NOENT, "/nonexistent/l.json");
}

/* A table written by the writers reads back row for row. */
static void
test_round_trip(void)
{
    g_autoptr(MsLayerTable) t = fixture_layers();
    GError *error = NULL;
    for (guint f = 0; f < 2; f++) {
        g_autofree char *path =
            g_build_filename(ms_test_tmpdir(), f ? "back.csv" : "back.json", NULL);
        CU_ASSERT_TRUE_FATAL(ms_layer_table_save(t, path, &error));
        g_autoptr(MsLayerTable) back = ms_layer_table_new();
        CU_ASSERT_TRUE(ms_layer_file_load(back, path, NULL, &error));
        g_assert_no_error(error);
        CU_ASSERT_EQUAL_FATAL(ms_layer_table_n_rows(back), 3);
        for (guint i = 0; i < 3; i++) {
            const MsLayerRow *a = ms_layer_table_row(t, i), *b = ms_layer_table_row(back, i);
            CU_ASSERT_EQUAL(a->iteration, b->iteration);
            CU_ASSERT_EQUAL(a->layer, b->layer);
            CU_ASSERT_EQUAL(a->gpu, b->gpu);
            MS_ASSERT_REL(b->layer_us, a->layer_us, 1e-9);
            MS_ASSERT_REL(b->part_us[MS_LAYER_HOST], a->part_us[MS_LAYER_HOST], 1e-9);
        }
        if (f == 0) {
            CU_ASSERT_STRING_EQUAL(ms_layer_table_get_meta(back, "backend"), "pytorch-profiler");
        }
    }
}

/* The simulation without host work against the fixture: its host time is named, the device
 * copies too; layer errors in closed form. */
static void
test_compare(void)
{
    g_autoptr(MsLayerTable) meas = fixture_layers();
    g_autoptr(MsLayerTable) sim = ms_layer_table_new();
    for (guint i = 0; i < ms_layer_table_n_rows(meas); i++) {
        MsLayerRow r = *ms_layer_table_row(meas, i);
        r.part_us[MS_LAYER_HOST] = 0;
        r.part_us[MS_LAYER_OTHER] = 0;
        r.layer_us = r.busy_us = r.layer_us / 2;
        ms_layer_table_append(sim, &r);
    }
    MsLayerRow extra = *ms_layer_table_row(meas, 0);
    extra.gpu = 0;
    ms_layer_table_append(sim, &extra);
    MsLayerSelect sel;
    ms_layer_select_init(&sel);
    MsLayerComparison c;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_layer_compare(sim, meas, &sel, &c, &error));
    CU_ASSERT_EQUAL(c.pairs, 3);
    CU_ASSERT_EQUAL(c.sim_only, 1);
    CU_ASSERT_EQUAL(c.meas_only, 0);
    const MsLayerMetric *layer = ms_layer_comparison_metric(&c, "layer");
    CU_ASSERT_EQUAL(layer->stats.n, 3);
    MS_ASSERT_REL(layer->stats.median, 0.5, 1e-12);
    MS_ASSERT_REL(layer->meas_mean_us, (100 + 50 + 80) / 3.0, 1e-12);
    /* The slowest GPU per layer: the simulation's GPU 0 copy of step 3's layer 1 (100 us) is its
     * slowest there. */
    const MsLayerMetric *slowest = ms_layer_comparison_metric(&c, "slowest");
    CU_ASSERT_EQUAL(slowest->stats.n, 3);
    MS_ASSERT_REL(ms_layer_comparison_metric(&c, "gate")->stats.median, 0, 1e-12);
    const MsLayerMetric *host = ms_layer_comparison_metric(&c, "host_total");
    MS_ASSERT_REL(host->meas_mean_us, (32 + 25 + 70) / 3.0, 1e-12);
    CU_ASSERT_EQUAL(host->sim_mean_us, 0);
    CU_ASSERT_PTR_NULL(ms_layer_comparison_metric(&c, "optimizer"));
    gboolean named_host = FALSE, named_copies = FALSE, named_other = FALSE;
    for (guint i = 0; i < c.unmodelled->len; i++) {
        const char *s = c.unmodelled->pdata[i];
        named_host |= strstr(s, "host time (framework work and time between ops): measured "
                                "42.333 us per layer (55.2% of the layer time), simulated "
                                "0.000 us") != NULL;
        named_copies |= g_str_has_prefix(s, "device copies: 0.667 us per layer");
        named_other |= g_str_has_prefix(s, "other: measured 0.667 us per layer");
    }
    CU_ASSERT_TRUE(named_host);
    CU_ASSERT_TRUE(named_copies);
    /* Other (the copy) is 0.667 of 76.667 us: under 1% of the layer, not worth a line. */
    CU_ASSERT_FALSE(named_other);
    g_autoptr(JsonNode) j = ms_layer_comparison_to_json(&c);
    CU_ASSERT_EQUAL(json_object_get_int_member(json_node_get_object(j), "pairs"), 3);
    ms_layer_comparison_clear(&c);
    /* Iteration 4 alone; an iteration nobody ran. */
    CU_ASSERT_TRUE(ms_layer_select_parse(&sel, "4-"));
    CU_ASSERT_TRUE_FATAL(ms_layer_compare(sim, meas, &sel, &c, &error));
    CU_ASSERT_EQUAL(c.pairs, 1);
    ms_layer_comparison_clear(&c);
    CU_ASSERT_TRUE(ms_layer_select_parse(&sel, "9"));
    CU_ASSERT_FALSE(ms_layer_compare(sim, meas, &sel, &c, &error));
    MS_ASSERT_ERROR(error, MS_LAYER_COMPARE_ERROR, MS_LAYER_COMPARE_ERROR_EMPTY,
                    "no layer of the measurement (0 rows in the selected iterations)");
    CU_ASSERT_FALSE(ms_layer_select_parse(&sel, "x-3"));
    CU_ASSERT_FALSE(ms_layer_select_parse(&sel, "5-3"));
    CU_ASSERT_TRUE(ms_layer_select_parse(&sel, "3-4"));
    CU_ASSERT_EQUAL(sel.first, 3);
    CU_ASSERT_EQUAL(sel.last, 4);
}

/* validate --layers between a table and the trace, and its usage errors. */
static void
test_cli(void)
{
    g_autoptr(MsLayerTable) meas = fixture_layers();
    g_autofree char *sim = g_build_filename(ms_test_tmpdir(), "sim.csv", NULL);
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_layer_table_save(meas, sim, &error));
    g_autofree char *trace = fixture();
    const char *same[] = {"validate", "--layers",    "--simulated", sim, "--measured",
                          trace,      "--max-error", "1%",          NULL};
    char *out = NULL, *err = NULL;
    CU_ASSERT_EQUAL(ms_test_run_moesim(same, &out, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "layers: 3 pairs (0 simulated only, 0 measured only)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "device copies: 0.667 us per layer"));
    g_free(out);
    g_free(err);
    const char *it[] = {"validate", "--layers",     "--simulated", sim, "--measured",
                        trace,      "--iterations", "4",           NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(it, &out, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "layers: 1 pairs"));
    g_free(out);
    g_free(err);
    const char *bad_it[] = {"validate", "--layers",     "--simulated", sim, "--measured",
                            trace,      "--iterations", "two",         NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(bad_it, &out, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--iterations 'two': expected A-B"));
    g_free(out);
    g_free(err);
    /* The trace's per-op rows: GEMMs of any shape fit the curve, kernel times (launch 0). */
    g_autofree char *cal = g_build_filename(ms_test_tmpdir(), "kineto.ini", NULL);
    const char *fit[] = {"calibrate", trace, "--topology", "dgx-a100", "--out", cal, NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(fit, &out, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "gemm (3 bf16 rows, kernel times, launch 0): 2 row counts"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "collective alltoall        2x2      2 points  not fitted"));
    g_free(out);
    g_free(err);
    const char *tables[] = {"validate", "--measured", trace, "--topology", "dgx-a100", NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(tables, &out, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "all: 16 compared"));
    g_free(out);
    g_free(err);
    const char *no_layers[] = {"validate", "--simulated",  sim, "--measured",
                               trace,      "--iterations", "4", NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(no_layers, &out, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--iterations, --layer-pattern and --gpu go with"));
    g_free(out);
    g_free(err);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"per-layer figures of a trace", test_layers},
        {"layer patterns and the GPU", test_pattern_and_gpu},
        {"per-op rows of a trace", test_measurements},
        {"malformed traces and layer files", test_malformed},
        {"layer files round trip", test_round_trip},
        {"comparison and what the simulation lacks", test_compare},
        {"validate --layers", test_cli},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"kineto", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
