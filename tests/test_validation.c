/* Tests of validation: Kendall's tau-b in closed form, pairing the ops of two results (ids,
 * labels, the min_us filter, step times), every result-file and mismatch error, and the plots (the
 * nccl-tests curves too). */
#include "ms_test.h"
#include "sim/out/plot.h"
#include "validate/validation.h"

static void
test_kendall_tau(void)
{
    const double a[] = {1, 2, 3, 4};
    const double same[] = {10, 20, 30, 40};
    const double reversed[] = {4, 3, 2, 1};
    const double swap[] = {1, 3, 2, 4}; /* one adjacent pair swapped: 5 concordant, 1 discordant */
    MS_ASSERT_REL(ms_kendall_tau(a, same, 4), 1.0, 1e-15);
    MS_ASSERT_REL(ms_kendall_tau(a, reversed, 4), -1.0, 1e-15);
    MS_ASSERT_REL(ms_kendall_tau(a, swap, 4), 2.0 / 3.0, 1e-15);
    /* Only monotone order matters, not the values. */
    const double squares[] = {1, 9, 4, 16};
    MS_ASSERT_REL(ms_kendall_tau(a, squares, 4), 2.0 / 3.0, 1e-15);
    /* Tie in b only: 5 concordant, 1 pair tied in b: tau-b = 5 / sqrt(6 * 5). */
    const double tie_b[] = {1, 1, 2, 3};
    MS_ASSERT_REL(ms_kendall_tau(a, tie_b, 4), 5.0 / sqrt(30.0), 1e-15);
    MS_ASSERT_REL(ms_kendall_tau(tie_b, a, 4), 5.0 / sqrt(30.0), 1e-15);
    /* Ties on both sides in the same pair: that pair counts for neither, tau-b stays 1. */
    MS_ASSERT_REL(ms_kendall_tau(tie_b, tie_b, 4), 1.0, 1e-15);
    /* Ties in different pairs: a = {1,1,2,3}, b = {1,2,2,3}: 4 concordant, one pair tied in a,
     * one in b: 4 / sqrt(5 * 5). */
    const double tie_b2[] = {1, 2, 2, 3};
    MS_ASSERT_REL(ms_kendall_tau(tie_b, tie_b2, 4), 0.8, 1e-15);
    /* Two items; everything tied: no ranking to agree on. */
    MS_ASSERT_REL(ms_kendall_tau(a, same, 2), 1.0, 1e-15);
    MS_ASSERT_REL(ms_kendall_tau(a, reversed + 2, 2), -1.0, 1e-15);
    const double flat[] = {5, 5, 5, 5};
    CU_ASSERT_EQUAL(ms_kendall_tau(a, flat, 4), 0.0);
    CU_ASSERT_EQUAL(ms_kendall_tau(a, same, 1), 0.0);
}

/* A result file with the given ops ("id:label:start:end" items, ';'-separated). */
static char *
result_json(const char *name, const char *policy, double step_us, const char *ops)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s,
                           "{\"format\": \"moesim-result\", \"version\": 1, \"policy\": \"%s\",\n"
                           " \"summary\": {\"step_time_us\": %g}, \"ops\": [",
                           policy, step_us);
    g_auto(GStrv) items = g_strsplit(ops, ";", -1);
    for (guint i = 0; items[i] && *items[i]; i++) {
        g_auto(GStrv) f = g_strsplit(items[i], ":", -1);
        g_string_append_printf(s,
                               "%s\n  {\"id\": %s, \"label\": \"%s\", \"role\": \"expert\", "
                               "\"start_us\": %s, \"end_us\": %s}",
                               i ? "," : "", f[0], f[1], f[2], f[3]);
    }
    g_string_append(s, "]}\n");
    char *path = ms_test_write_tmp(name, s->str);
    g_string_free(s, TRUE);
    return path;
}

static JsonNode *
load(const char *path)
{
    GError *error = NULL;
    JsonNode *node = ms_result_file_load(path, &error);
    if (error) {
        fprintf(stderr, "\n  %s\n", error->message);
        g_clear_error(&error);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(node);
    return node;
}

static void
test_compare_runs(void)
{
    g_autofree char *sp = result_json("sim.json", "lina", 1000,
                                      "0:a2a:0:100;1:ffn:100:150;"
                                      "2:tiny:150:151;3:combine:151:251");
    g_autofree char *mp = result_json("meas.json", "lina", 1250,
                                      "0:a2a:0:80;1:ffn:90:190;"
                                      "2:tiny:190:191.5;3:combine:0:2");
    g_autoptr(JsonNode) s = load(sp);
    g_autoptr(JsonNode) m = load(mp);
    MsRunComparison cmp;
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(ms_compare_runs(s, m, 2.0, &cmp, &error));
    /* Op 2 measured 1.5 us and op 3 exactly 2 us: not above min_us, left out. */
    CU_ASSERT_EQUAL_FATAL(cmp.ops->len, 2);
    const MsOpPair *p0 = &g_array_index(cmp.ops, MsOpPair, 0);
    const MsOpPair *p1 = &g_array_index(cmp.ops, MsOpPair, 1);
    CU_ASSERT_EQUAL(p0->op, 0);
    CU_ASSERT_STRING_EQUAL(p0->label, "a2a");
    CU_ASSERT_STRING_EQUAL(p0->role, "expert");
    MS_ASSERT_REL(p0->predicted_us, 100, 1e-12);
    MS_ASSERT_REL(p0->measured_us, 80, 1e-12);
    CU_ASSERT_EQUAL(p1->op, 1);
    MS_ASSERT_REL(p1->predicted_us, 50, 1e-12);
    MS_ASSERT_REL(p1->measured_us, 100, 1e-12);
    MS_ASSERT_REL(cmp.step_predicted_us, 1000, 1e-12);
    MS_ASSERT_REL(cmp.step_measured_us, 1250, 1e-12);
    CU_ASSERT_STRING_EQUAL(cmp.policy, "lina");
    ms_run_comparison_clear(&cmp);
    CU_ASSERT_PTR_NULL(cmp.ops);
    /* A lower bound keeps the short ops. */
    CU_ASSERT_TRUE(ms_compare_runs(s, m, 1.0, &cmp, &error));
    CU_ASSERT_EQUAL(cmp.ops->len, 4);
    ms_run_comparison_clear(&cmp);
    /* A run against itself. */
    CU_ASSERT_TRUE(ms_compare_runs(s, s, 0, &cmp, &error));
    for (guint i = 0; i < cmp.ops->len; i++) {
        const MsOpPair *p = &g_array_index(cmp.ops, MsOpPair, i);
        CU_ASSERT_EQUAL(p->predicted_us, p->measured_us);
    }
    ms_run_comparison_clear(&cmp);
}

static void
test_compare_mismatch(void)
{
    g_autofree char *ap = result_json("a.json", "fifo", 10, "0:x:0:5;1:y:5:9");
    g_autofree char *fewer = result_json("fewer.json", "fifo", 10, "0:x:0:5");
    g_autofree char *ids = result_json("ids.json", "fifo", 10, "0:x:0:5;7:y:5:9");
    g_autofree char *labels = result_json("labels.json", "fifo", 10, "0:x:0:5;1:z:5:9");
    g_autoptr(JsonNode) a = load(ap);
    const struct {
        const char *path, *needle;
    } cases[] = {
        {fewer, "the results have 2 and 1 ops: they come from different schedules"},
        {ids, "op 1 differs (id 1 'y' against id 7 'y'): the results come from different "
              "schedules"},
        {labels, "op 1 differs (id 1 'y' against id 1 'z')"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(JsonNode) b = load(cases[i].path);
        MsRunComparison cmp = {.ops = (GArray *)&cmp};
        GError *error = NULL;
        CU_ASSERT_FALSE(ms_compare_runs(a, b, 0, &cmp, &error));
        MS_ASSERT_ERROR(error, MS_VALIDATION_ERROR, MS_VALIDATION_ERROR_MISMATCH, cases[i].needle);
        CU_ASSERT_PTR_NULL(cmp.ops);
    }
}

static void
test_load_errors(void)
{
#define OP(rest)                                                                                   \
    "{\"format\": \"moesim-result\", \"ops\": [{\"id\": 0, \"label\": \"x\", " rest "}]}"
    static const struct {
        const char *text, *needle;
    } cases[] = {
        {"{\"format\": \"moesim-result\", \"ops\": [", "r.json: "},
        {"[1, 2]", "r.json: not a moesim result (write one with `moesim run --json`"},
        {"{\"format\": \"moesim-schedule\", \"ops\": []}", "r.json: not a moesim result"},
        {"{\"format\": 1, \"ops\": []}", "r.json: not a moesim result"},
        {"{\"format\": \"moesim-result\"}", "r.json: the result has no per-op records"},
        {"{\"format\": \"moesim-result\", \"ops\": {}}",
         "r.json: the result has no per-op records"},
        {"{\"format\": \"moesim-result\", \"ops\": [3]}", "r.json: op 0 is not an object"},
        {"{\"format\": \"moesim-result\", \"ops\": [{\"label\": \"x\", \"start_us\": 0, "
         "\"end_us\": 1}]}",
         "r.json: op 0: 'id' is missing or not an integer"},
        {"{\"format\": \"moesim-result\", \"ops\": [{\"id\": 1.5, \"label\": \"x\", "
         "\"start_us\": 0, \"end_us\": 1}]}",
         "r.json: op 0: 'id' is missing or not an integer"},
        {"{\"format\": \"moesim-result\", \"ops\": [{\"id\": 0, \"start_us\": 0, \"end_us\": 1}]}",
         "r.json: op 0: 'label' is missing or not a string"},
        {OP("\"role\": 3, \"start_us\": 0, \"end_us\": 1"), "r.json: op 0: 'role' is not a string"},
        {OP("\"end_us\": 1"), "r.json: op 0: 'start_us' is missing or not a finite number"},
        {OP("\"start_us\": 0, \"end_us\": \"1\""),
         "r.json: op 0: 'end_us' is missing or not a finite number"},
        {OP("\"start_us\": 0, \"end_us\": null"), "op 0: 'end_us' is missing"},
        {OP("\"start_us\": 5, \"end_us\": 4"), "r.json: op 0: end_us 4 is before start_us 5"},
        {"{\"format\": \"moesim-result\", \"policy\": 2, \"ops\": []}",
         "r.json: 'policy' is not a string"},
        {"{\"format\": \"moesim-result\", \"summary\": 5, \"ops\": []}",
         "r.json: 'summary' has no numeric step_time_us"},
        {"{\"format\": \"moesim-result\", \"summary\": {\"step_time_us\": \"fast\"}, \"ops\": []}",
         "r.json: 'summary' has no numeric step_time_us"},
        {"{\"format\": \"moesim-result\", \"summary\": {\"step_time_us\": 1, \"comm_wait_us\": "
         "\"long\"}, \"ops\": []}",
         "r.json: 'summary' has a comm_wait_us that is not a number"},
        {OP("\"rank\": -1, \"start_us\": 0, \"end_us\": 1"),
         "r.json: op 0: 'rank' is not a GPU number"},
        {OP("\"rank\": 1.5, \"start_us\": 0, \"end_us\": 1"),
         "r.json: op 0: 'rank' is not a GPU number"},
        {OP("\"kind\": \"gemm\", \"start_us\": 0, \"end_us\": 1"),
         "r.json: op 0: 'kind' is neither \"compute\" nor \"comm\""},
    };
#undef OP
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *path = ms_test_write_tmp("r.json", cases[i].text);
        GError *error = NULL;
        CU_ASSERT_PTR_NULL(ms_result_file_load(path, &error));
        MS_ASSERT_ERROR(error, MS_VALIDATION_ERROR, MS_VALIDATION_ERROR_FORMAT, cases[i].needle);
    }
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_result_file_load("/nonexistent-dir/r.json", &error));
    MS_ASSERT_ERROR(error, MS_VALIDATION_ERROR, MS_VALIDATION_ERROR_FORMAT,
                    "/nonexistent-dir/r.json: ");
    /* The smallest valid result: no policy, no summary, no ops. */
    g_autofree char *bare = ms_test_write_tmp("bare.json", "{\"format\": \"moesim-result\", "
                                                           "\"ops\": []}");
    g_autoptr(JsonNode) node = load(bare);
    MsRunComparison cmp;
    CU_ASSERT_TRUE(ms_compare_runs(node, node, 0, &cmp, &error));
    CU_ASSERT_EQUAL(cmp.ops->len, 0);
    CU_ASSERT_STRING_EQUAL(cmp.policy, "?");
    CU_ASSERT_EQUAL(cmp.step_predicted_us, 0);
    ms_run_comparison_clear(&cmp);
}

/* A PNG starts with its 8-byte signature. */
static void
assert_png(const char *dir, const char *name)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_autofree char *data = NULL;
    gsize len = 0;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &data, &len, NULL));
    CU_ASSERT_TRUE(len > 1000);
    CU_ASSERT_EQUAL(memcmp(data, "\x89PNG\r\n\x1a\n", 8), 0);
    g_autofree char *script = g_strconcat(path, ".gp", NULL);
    CU_ASSERT_TRUE(g_file_test(script, G_FILE_TEST_IS_REGULAR));
}

static void
test_plots(void)
{
    const double pred[] = {10, 20, 45, 1000, 2.5}, meas[] = {11, 20, 40, 1200, 2};
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "plots", "deep", NULL);
    GError *error = NULL;
    gboolean ok = ms_validation_plots(dir, "test", NULL, 0, pred, meas, 5, &error);
    /* The scripts are written whether or not gnuplot can render them. */
    g_autofree char *gp = g_build_filename(dir, "scatter.png.gp", NULL);
    g_autofree char *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(gp, &text, NULL, NULL));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "set logscale xy"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "1200 1000\n"));
    g_autofree char *hist = g_build_filename(dir, "errors.png.gp", NULL);
    if (!ms_plot_available()) {
        CU_ASSERT_FALSE(ok);
        MS_ASSERT_ERROR(error, MS_PLOT_ERROR, MS_PLOT_ERROR_GNUPLOT, "gnuplot");
        return;
    }
    CU_ASSERT_TRUE_FATAL(ok);
    assert_png(dir, "scatter.png");
    assert_png(dir, "errors.png");
    /* Errors of -9.1, 0, 12.5, -16.7 and 25 percent land in the bins centred on -10, 0, 12,
     * -16 and 26 (bin c holds [c - 1, c + 1)). */
    g_autofree char *htext = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(hist, &htext, NULL, NULL));
    static const char *const rows[] = {"\n-10 1\n", "\n0 1\n",   "\n12 1\n", "\n-16 1\n",
                                       "\n26 1\n",  "\n-50 0\n", "\n50 0\n"};
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
        CU_ASSERT_PTR_NOT_NULL(strstr(htext, rows[i]));
    }
    /* A folder that cannot be created. */
    g_autofree char *file = ms_test_write_tmp("plain-file", "x");
    g_autofree char *under = g_build_filename(file, "sub", NULL);
    CU_ASSERT_FALSE(ms_validation_plots(under, "t", NULL, 0, pred, meas, 5, &error));
    CU_ASSERT_PTR_NOT_NULL_FATAL(error);
    CU_ASSERT_EQUAL(error->domain, G_FILE_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(error->message, "cannot create"));
    g_clear_error(&error);
}

/* Every configuration had the one colour and no name: each has its own colour and legend
 * entry, in the scatter and stacked in the histogram. */
static void
test_plots_per_configuration(void)
{
    const double pred[] = {10, 20, 45, 1000, 2.5}, meas[] = {11, 20, 40, 1200, 2};
    const MsPlotGroup groups[] = {{"allreduce 8x8", 2}, {"alltoall 16x8", 3}};
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "groups", NULL);
    GError *error = NULL;
    if (!ms_validation_plots(dir, "moesim validate: a.csv on t", groups, 2, pred, meas, 5,
                             &error)) {
        MS_ASSERT_ERROR(error, MS_PLOT_ERROR, MS_PLOT_ERROR_GNUPLOT, "gnuplot");
    }
    g_autofree char *sc = g_build_filename(dir, "scatter.png.gp", NULL);
    g_autofree char *hist = g_build_filename(dir, "errors.png.gp", NULL);
    g_autofree char *text = NULL, *htext = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(sc, &text, NULL, NULL));
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(hist, &htext, NULL, NULL));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "set title 'moesim validate: a.csv on t'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "lc rgb '#1f77b4' title 'allreduce 8x8'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "lc rgb '#ff7f0e' title 'alltoall 16x8'"));
    /* the first two items are the first group's, the other three the second's */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "$d0 << EOD\n11 10\n20 20\nEOD"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "$d1 << EOD\n40 45\n1200 1000\n2 2.5\nEOD"));
    CU_ASSERT_PTR_NOT_NULL(strstr(htext, "title 'allreduce 8x8'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(htext, "title 'alltoall 16x8'"));
    /* Stacked: the second group (drawn first) reaches the total of a bin, the first its own:
     * 0% (20 against 20) is the first group's, 12.5% the second's. */
    CU_ASSERT_PTR_NOT_NULL(strstr(htext, "$d0 << EOD\n"));
    g_autofree char *d0 = g_strndup(strstr(htext, "$d0 << EOD\n"),
                                    strstr(htext, "$d1 << EOD") - strstr(htext, "$d0 << EOD"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d0, "\n0 1\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d0, "\n12 1\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(htext, "$d0 using 1:2 with boxes lc rgb '#ff7f0e'"));
    const char *d1 = strstr(htext, "$d1 << EOD\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(d1);
    CU_ASSERT_PTR_NOT_NULL(strstr(d1, "\n0 1\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d1, "\n12 0\n"));
}

/* curves.png: nccl-tests' bus bandwidth (size / time x factor, GB/s from bytes and
 * microseconds) against size, the items of a group in size order, measured as points and a line
 * per model; items without a factor (a GEMM) and predictions of no time are left out. */
static void
test_curves(void)
{
    const MsPlotGroup groups[] = {{"allreduce 8x8", 3}, {"gemm 1x1", 1}};
    const double size[] = {1024, 4096, 2048, 1e9}, factor[] = {1.75, 1.75, 1.75, 0};
    const double meas[] = {1, 2, 4, 5}, flow[] = {1, 1, 2, 5}, nccl[] = {0, 2, 2, 5};
    const MsPlotModel models[] = {{"flow", flow}, {"nccl", nccl}};
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "curves", NULL);
    GError *error = NULL;
    gboolean ok =
        ms_validation_curves(dir, "t", groups, 2, size, factor, meas, models, 2, 4, &error);
    g_autofree char *gp = g_build_filename(dir, "curves.png.gp", NULL);
    g_autofree char *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(gp, &text, NULL, NULL));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "set logscale x 2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "set ylabel 'bus bandwidth (GB/s"));
    /* 1024 B in 1 us is 1.024 GB/s of algbw, 1.792 of busbw over 8 ranks. */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "$d0 << EOD\n1024 1.792\n2048 0.896\n4096 3.584\nEOD"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "$d1 << EOD\n1024 1.792\n2048 1.792\n4096 7.168\nEOD"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "$d2 << EOD\n2048 1.792\n4096 3.584\nEOD"));
    CU_ASSERT_PTR_NULL(strstr(text, "$d3 << EOD"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "title 'allreduce 8x8 measured'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "dt 1 lc rgb '#1f77b4' title 'allreduce 8x8 flow'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "dt 2 lc rgb '#1f77b4' title 'allreduce 8x8 nccl'"));
    CU_ASSERT_PTR_NULL(strstr(text, "gemm"));
    if (!ms_plot_available()) {
        CU_ASSERT_FALSE(ok);
        MS_ASSERT_ERROR(error, MS_PLOT_ERROR, MS_PLOT_ERROR_GNUPLOT, "gnuplot");
        return;
    }
    CU_ASSERT_TRUE_FATAL(ok);
    assert_png(dir, "curves.png");
    g_autofree char *file = ms_test_write_tmp("curves-file", "x");
    g_autofree char *under = g_build_filename(file, "sub", NULL);
    CU_ASSERT_FALSE(
        ms_validation_curves(under, "t", groups, 2, size, factor, meas, models, 2, 4, &error));
    CU_ASSERT_PTR_NOT_NULL_FATAL(error);
    CU_ASSERT_EQUAL(error->domain, G_FILE_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(error->message, "cannot create"));
    g_clear_error(&error);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"Kendall tau closed forms", test_kendall_tau},
        {"op pairing and min_us", test_compare_runs},
        {"mismatched results", test_compare_mismatch},
        {"result file errors", test_load_errors},
        {"plots", test_plots},
        {"plots: a colour and a name per configuration", test_plots_per_configuration},
        {"curves: bus bandwidth against size", test_curves},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"validation", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
