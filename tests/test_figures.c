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
    /* Inside the plot the legend sat on the slowest policy's curve. */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "set key outside right top"));
    CU_ASSERT_PTR_NULL(strstr(text, "set key bottom right"));
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"comparison labels tilt only when they would collide", test_compare_labels},
        {"latency CDF legend outside the plot", test_latency_cdf_key},
        {NULL},
    };
    static const MsTestSuite suites[] = {{"figures", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
