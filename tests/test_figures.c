/* Tests of the figures' gnuplot scripts: the settings that keep labels and legends readable,
 * and the data rows each figure writes. */
#include <string.h>

#include "ms_test.h"
#include "sim/out/figures.h"
#include "sim/out/plot.h"

/* Draws with the figure function and returns its script (PATH.gp). */
static char *
script_of(const char *name,
          gboolean (*draw)(const char *, const char *, const char *const *, MsResult *const *,
                           guint, GError **),
          const char *const *names, guint n)
{
    g_autofree char *path = g_build_filename(ms_test_tmpdir(), name, NULL);
    g_autofree char *gp = g_strconcat(path, ".gp", NULL);
    g_autoptr(MsResult) res = ms_result_new("sim");
    MsResult *results[8];
    for (guint k = 0; k < n; k++) {
        results[k] = res;
    }
    GError *error = NULL;
    if (!draw(path, "t", names, results, n, &error)) {
        /* Without gnuplot the script is still written. */
        MS_ASSERT_ERROR(error, MS_PLOT_ERROR, MS_PLOT_ERROR_GNUPLOT, "gnuplot");
    }
    char *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(gp, &text, NULL, NULL));
    return text;
}

static void
test_compare_labels(void)
{
    const char *const few[] = {"fifo", "concurrent", "lina"};
    g_autofree char *plain = script_of("short.png", ms_figure_compare, few, 3);
    CU_ASSERT_PTR_NULL(strstr(plain, "rotate"));
    CU_ASSERT_PTR_NOT_NULL(strstr(plain, "\"concurrent\""));
    /* 5 names of 34 characters: 238 px each against 170 px per group. */
    const char *const many[] = {
        "schemoe:r=4,compress=0.5,pipe=true", "schemoe:r=4,compress=0.5,pipe=fals",
        "schemoe:r=2,compress=0.5,pipe=true", "schemoe:r=2,compress=0.5,pipe=fals", "fifo"};
    g_autofree char *tilted = script_of("long.png", ms_figure_compare, many, 5);
    CU_ASSERT_PTR_NOT_NULL(strstr(tilted, "set xtics rotate by 20 right"));
    /* 4 names of 24 characters: 168 px against 212 px per group stay level. */
    const char *const fit[] = {"lina:chunk=8MB,pack=1abc", "lina:chunk=8MB,pack=1abd",
                               "lina:chunk=8MB,pack=1abe", "lina:chunk=8MB,pack=1abf"};
    g_autofree char *level = script_of("fit.png", ms_figure_compare, fit, 4);
    CU_ASSERT_PTR_NULL(strstr(level, "rotate"));
}

static void
test_latency_cdf_key(void)
{
    const char *const names[] = {"concurrent", "lina"};
    g_autofree char *text = script_of("cdf.png", ms_figure_latency_cdf, names, 2);
    /* Inside the plot the legend sat on the slowest policy's curve; on the right, long names
     * squeezed it. */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "set key below"));
    CU_ASSERT_PTR_NULL(strstr(text, "set key bottom right"));
}

/* A result of one GPU whose iterations take steps_us (a compute op each, an all-to-all of
 * a2a_us beside it when a2a_us > 0), planned in mode ("train" or "infer") with expert-parallel
 * degree ep. */
static MsResult *
result_of(const char *mode, const char *ep, const double *steps_us, guint n, double a2a_us)
{
    MsResult *res = ms_result_new("sim");
    for (guint k = 0; k <= n; k++) {
        MsSchedule *s = ms_schedule_new(1);
        ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
        ms_schedule_add_stream(s, "comm", MS_STREAM_COMM);
        ms_schedule_set_meta(s, "mode", mode);
        ms_schedule_set_meta(s, "ep", ep);
        guint32 c = ms_schedule_add_compute(s, 0, 0, MS_ROLE_EXPERT, MS_PHASE_FORWARD, 0, -1, "e");
        guint32 r0 = 0, x = 0;
        guint64 m = 8;
        if (a2a_us > 0) {
            ms_schedule_add_alltoall(s, 1, &r0, 1, &m, 0, 0, MS_ROLE_DISPATCH, MS_PHASE_FORWARD, 0,
                                     -1, "d", &x);
        }
        MsRecords *r = ms_records_new(ms_schedule_n_ops(s), "sim");
        double step = steps_us[MIN(k, n - 1)];
        ms_records_set(r, c, 0, ms_time_from_us(step));
        if (a2a_us > 0) {
            ms_records_set(r, x, 0, ms_time_from_us(a2a_us));
        }
        if (k < n) {
            ms_result_add(res, s, r);
            ms_schedule_free(s);
            ms_records_free(r);
        } else {
            ms_result_set_detail(res, s, r);
        }
    }
    return res;
}

/* Draws figure draw for results and returns its script. */
static char *
script_for(const char *name,
           gboolean (*draw)(const char *, const char *, const char *const *, MsResult *const *,
                            guint, GError **),
           const char *const *names, MsResult *const *results, guint n)
{
    g_autofree char *path = g_build_filename(ms_test_tmpdir(), name, NULL);
    g_autofree char *gp = g_strconcat(path, ".gp", NULL);
    GError *error = NULL;
    if (!draw(path, "t", names, results, n, &error)) {
        MS_ASSERT_ERROR(error, MS_PLOT_ERROR, MS_PLOT_ERROR_GNUPLOT, "gnuplot");
    }
    char *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(gp, &text, NULL, NULL));
    return text;
}

/* The plot command's series: one line each after "plot ", as "using ... with STYLE title T". */
static char **
plot_series(const char *script)
{
    const char *plot = strstr(script, "\nplot ");
    g_assert(plot);
    return g_strsplit(plot + 6, ", \\\n     ", -1);
}

/* In inference the bars were "step time" and an empty "allreduce": the latency percentiles and
 * the all-to-all instead. */
static void
test_compare_inference_bars(void)
{
    const double steps[] = {1000, 2000, 3000, 4000};
    g_autoptr(MsResult) a = result_of("infer", "1", steps, 4, 500);
    g_autoptr(MsResult) b = result_of("infer", "1", steps, 3, 400);
    MsResult *results[] = {a, b};
    const char *const names[] = {"fifo", "lina"};
    g_autofree char *text = script_for("infer.png", ms_figure_compare, names, results, 2);
    CU_ASSERT_PTR_NULL(strstr(text, "'step time'"));
    CU_ASSERT_PTR_NULL(strstr(text, "'allreduce'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "title 'p50 batch latency'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "title 'p95 batch latency'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "title 'p99 batch latency'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "time per batch (ms)"));
    /* fifo's p95 of 1, 2, 3, 4 ms: 3.85 ms */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n0 3.85 \"fifo\"\n"));
    /* Training keeps its bars, less the allreduce when no run has one (a note says so). */
    g_autoptr(MsResult) t = result_of("train", "1", steps, 1, 500);
    MsResult *one[] = {t};
    g_autofree char *train = script_for("train.png", ms_figure_compare, names, one, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(train, "title 'step time'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(train, "title 'all-to-all'"));
    CU_ASSERT_PTR_NULL(strstr(train, "title 'allreduce'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(train, "no exposed communication or allreduce in these runs"));
    /* A policy planned with another expert-parallel degree than the first says so (Lina's packing
     * made its all-to-all bar look 100 times shorter for exchanges 4 times narrower). */
    g_autoptr(MsResult) packed = result_of("infer", "4", steps, 2, 100);
    MsResult *two[] = {a, packed};
    g_autofree char *eps = script_for("ep.png", ms_figure_compare, names, two, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(eps, "\"fifo\"\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(eps, "\"lina (ep 4)\"\n"));
}

/* Three identical curves of five drew over each other (2 of 3 invisible) and the slowest ran into
 * the right edge: identical curves share one legend entry, every curve has its own dash type,
 * and the x range holds every curve with room on both sides. */
static void
test_latency_cdf_curves(void)
{
    const double same[] = {6500, 6600, 6700}, slow[] = {6600, 6800, 7000};
    g_autoptr(MsResult) f = result_of("infer", "1", same, 3, 0);
    g_autoptr(MsResult) c = result_of("infer", "1", same, 3, 0);
    g_autoptr(MsResult) l = result_of("infer", "1", slow, 3, 0);
    MsResult *results[] = {f, c, l};
    const char *const names[] = {"fifo", "concurrent", "lina"};
    g_autofree char *text = script_for("cdf3.png", ms_figure_latency_cdf, names, results, 3);
    g_auto(GStrv) series = plot_series(text);
    CU_ASSERT_EQUAL(g_strv_length(series), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "title 'fifo = concurrent (identical)'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(series[0], " dt 1 "));
    CU_ASSERT_PTR_NOT_NULL(strstr(series[1], " dt 2 "));
    /* 6.5 to 7.0 ms, 5% of the span on each side */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "set xrange [6.475:7.025]"));
    /* Each curve starts from 0 at its fastest batch. */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "$d1 << EOD\n6.6 0\n6.6 0.333"));
}

/* Runs moesim and returns the script of a figure it wrote into dir. */
static char *
cli_script(const char *dir, const char *figure)
{
    g_autofree char *gp = g_strdup_printf("%s/%s.gp", dir, figure);
    char *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(gp, &text, NULL, NULL));
    return text;
}

/* run's CDF of every iteration was titled "(first iteration)"; links.png did not say what a
 * class's line is; "other" in the timeline was unexplained. */
static void
test_run_figures_say_what_they_show(void)
{
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "runplots", NULL);
    const char *args[] = {"run",     "--mode",        "infer",  "-n", "3",
                          "--model", "lina-gpt2-16e", "--plot", dir,  NULL};
    g_autofree char *out = NULL, *err = NULL;
    CU_ASSERT_EQUAL_FATAL(ms_test_run_moesim(args, &out, &err), 0);
    g_autofree char *cdf = cli_script(dir, "latency-cdf.png");
    CU_ASSERT_PTR_NULL(strstr(cdf, "first iteration"));
    CU_ASSERT_PTR_NOT_NULL(strstr(cdf, "3 batches"));
    g_autofree char *timeline = cli_script(dir, "timeline.png");
    CU_ASSERT_PTR_NOT_NULL(strstr(timeline, "first of 3 batches"));
    /* lina-gpt2-16e has an output head (vocab), planned as role "other" */
    CU_ASSERT_PTR_NOT_NULL(strstr(timeline, "title 'other: head'"));
    g_autofree char *links = cli_script(dir, "links.png");
    CU_ASSERT_PTR_NOT_NULL(strstr(links, "all links of the class together"));
    CU_ASSERT_PTR_NOT_NULL(strstr(links, "not the busiest link"));
}

/* The timeline draws a wait for peers where it is: rank 0 ready at 10 us for an all-to-all that
 * rank 1 reaches at 30 us waits on its comm stream (row 1) from 10 to 30 us. */
static void
test_timeline_waits(void)
{
    g_autoptr(MsSchedule) s = ms_schedule_new(2);
    ms_schedule_add_stream(s, "compute", MS_STREAM_COMPUTE);
    ms_schedule_add_stream(s, "comm", MS_STREAM_COMM);
    guint32 c[2], x[2], ranks[2] = {0, 1};
    guint64 m[4] = {0, 100, 100, 0};
    for (guint p = 0; p < 2; p++) {
        c[p] = ms_schedule_add_compute(s, p, 0, MS_ROLE_EXPERT, MS_PHASE_FORWARD, 0, -1, "e");
    }
    ms_schedule_add_alltoall(s, 1, ranks, 2, m, 1, 0, MS_ROLE_COMBINE, MS_PHASE_FORWARD, 0, -1, "x",
                             x);
    g_autoptr(MsRecords) r = ms_records_new(ms_schedule_n_ops(s), "test");
    for (guint p = 0; p < 2; p++) {
        ms_schedule_add_dep(s, x[p], c[p]);
        ms_records_set(r, c[p], 0, ms_time_from_us(p ? 30 : 10));
        ms_records_set(r, x[p], ms_time_from_us(30), ms_time_from_us(40));
    }
    g_autofree char *png = g_build_filename(ms_test_tmpdir(), "waits.png", NULL);
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_figure_timeline(png, "waits", s, r, 0, &error));
    g_assert_no_error(error);
    g_autofree char *gp = g_strconcat(png, ".gp", NULL);
    g_autofree char *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(gp, &text, NULL, NULL));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "title 'waiting for peers'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "$d2 << EOD\n0.02 1 0.01 0.12\nEOD\n")); /* one wait */
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"comparison labels tilt only when they would collide", test_compare_labels},
        {"latency CDF legend outside the plot", test_latency_cdf_key},
        {"inference comparison: latency percentiles, no empty allreduce",
         test_compare_inference_bars},
        {"latency CDF: identical curves named together, every curve inside",
         test_latency_cdf_curves},
        {"run's figures say what they show", test_run_figures_say_what_they_show},
        {"the timeline draws waits for peers", test_timeline_waits},
        {NULL},
    };
    static const MsTestSuite suites[] = {{"figures", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
