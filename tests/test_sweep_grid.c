/* Tests of sweep_grid: the keys, points in mixed radix (first axis slowest), value lists split
 * on ',' or ';', and every refused axis, after which the grid is unchanged. */
#include "ms_test.h"
#include "sim/sweep_grid.h"

static void
test_points(void)
{
    GError *error = NULL;
    g_autoptr(MsSweepGrid) g = ms_sweep_grid_new();
    CU_ASSERT_EQUAL(ms_sweep_grid_n_points(g), 1);
    CU_ASSERT_TRUE(ms_sweep_grid_add_axis(g, "policy = fifo, lina", &error));
    CU_ASSERT_TRUE(ms_sweep_grid_add_axis(g, "hot=0.1,0.2,0.4", &error));
    CU_ASSERT_TRUE(ms_sweep_grid_add_axis(g, "nodes=2,4", &error));
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(ms_sweep_grid_n_points(g), 12);
    CU_ASSERT_EQUAL(ms_sweep_grid_n_axes(g), 3);
    CU_ASSERT_STRING_EQUAL(ms_sweep_grid_key(g, 0), "policy");
    CU_ASSERT_EQUAL(ms_sweep_grid_find(g, "nodes"), 2);
    CU_ASSERT_EQUAL(ms_sweep_grid_find(g, "seed"), -1);
    CU_ASSERT_EQUAL(ms_sweep_grid_n_values(g, 1), 3);
    CU_ASSERT_STRING_EQUAL(ms_sweep_grid_axis_value(g, 0, 1), "lina");
    /* point = (policy * 3 + hot) * 2 + nodes */
    for (guint p = 0; p < 12; p++) {
        CU_ASSERT_EQUAL(ms_sweep_grid_index(g, p, 0), p / 6);
        CU_ASSERT_EQUAL(ms_sweep_grid_index(g, p, 1), (p / 2) % 3);
        CU_ASSERT_EQUAL(ms_sweep_grid_index(g, p, 2), p % 2);
    }
    CU_ASSERT_STRING_EQUAL(ms_sweep_grid_value(g, 7, 0), "lina");
    CU_ASSERT_STRING_EQUAL(ms_sweep_grid_value(g, 7, 1), "0.1");
    CU_ASSERT_STRING_EQUAL(ms_sweep_grid_value(g, 7, 2), "4");
    /* Values holding a ',' are separated by ';'. */
    g_autoptr(MsSweepGrid) h = ms_sweep_grid_new();
    CU_ASSERT_TRUE(ms_sweep_grid_add_axis(h, "policy=lina:chunk=8MB,pack=1;fifo", &error));
    CU_ASSERT_EQUAL(ms_sweep_grid_n_points(h), 2);
    CU_ASSERT_STRING_EQUAL(ms_sweep_grid_value(h, 0, 0), "lina:chunk=8MB,pack=1");
}

static void
test_keys(void)
{
    const char *const *keys = ms_sweep_keys();
    CU_ASSERT_EQUAL(g_strv_length((char **)keys), 17);
    CU_ASSERT_TRUE(g_strv_contains(keys, "net"));
    CU_ASSERT_TRUE(g_strv_contains(keys, "chunk"));
    CU_ASSERT_TRUE(g_strv_contains(keys, "straggler"));
    CU_ASSERT_TRUE(g_strv_contains(keys, "slow-link"));
    CU_ASSERT_FALSE(ms_sweep_key_is_routing("straggler"));
    CU_ASSERT_FALSE(ms_sweep_key_is_routing("slow-link"));
    CU_ASSERT_TRUE(ms_sweep_key_is_routing("hot"));
    CU_ASSERT_TRUE(ms_sweep_key_is_routing("tokens"));
    CU_ASSERT_FALSE(ms_sweep_key_is_routing("nodes"));
    CU_ASSERT_FALSE(ms_sweep_key_is_routing("seed"));
}

static void
refused(MsSweepGrid *g, const char *spec, gint code, const char *needle)
{
    GError *error = NULL;
    guint before = ms_sweep_grid_n_axes(g);
    CU_ASSERT_FALSE(ms_sweep_grid_add_axis(g, spec, &error));
    MS_ASSERT_ERROR(error, MS_SWEEP_GRID_ERROR, code, needle);
    CU_ASSERT_EQUAL(ms_sweep_grid_n_axes(g), before);
}

static void
test_errors(void)
{
    g_autoptr(MsSweepGrid) g = ms_sweep_grid_new();
    g_assert(ms_sweep_grid_add_axis(g, "seed=1,2", NULL));
    refused(g, "polcy=fifo", MS_SWEEP_GRID_ERROR_AXIS, "with KEY one of policy, topology");
    refused(g, "policy", MS_SWEEP_GRID_ERROR_AXIS, "'policy' is not KEY=V1,V2");
    refused(g, "seed=3", MS_SWEEP_GRID_ERROR_AXIS, "seed varied twice");
    refused(g, "policy=fifo,,lina", MS_SWEEP_GRID_ERROR_AXIS, "policy has an empty value");
    /* Regression: an empty list gave a grid of no points, and a sweep of nothing exited 0. */
    refused(g, "policy=", MS_SWEEP_GRID_ERROR_AXIS, "sweep: policy= lists no value");
    refused(g, "policy= ", MS_SWEEP_GRID_ERROR_AXIS, "policy has an empty value");
    refused(g, "nodes=0", MS_SWEEP_GRID_ERROR_VALUE, "nodes=0: expected a whole number");
    refused(g, "nodes=2.5", MS_SWEEP_GRID_ERROR_VALUE, "nodes=2.5");
    refused(g, "experts=67108865", MS_SWEEP_GRID_ERROR_VALUE, "from 1 to 67108864");
    refused(g, "chunk=8", MS_SWEEP_GRID_ERROR_VALUE, "chunk=8: expected a size with a unit");
    refused(g, "chunk=0MB", MS_SWEEP_GRID_ERROR_VALUE, "chunk=0MB");
    refused(g, "hot=-0.1", MS_SWEEP_GRID_ERROR_VALUE, "hot=-0.1: expected a non-negative number");
    refused(g, "mode=serve", MS_SWEEP_GRID_ERROR_VALUE, "mode=serve: expected train or infer");
    /* 2 x 317 x 158 = 100172 points, beyond the limit. */
    GString *many = g_string_new("iterations=1");
    for (guint i = 2; i <= 317; i++) {
        g_string_append_printf(many, ",%u", i);
    }
    g_assert(ms_sweep_grid_add_axis(g, many->str, NULL));
    g_string_free(many, TRUE);
    GString *more = g_string_new("tokens=1");
    for (guint i = 2; i <= 158; i++) {
        g_string_append_printf(more, ",%u", i);
    }
    refused(g, more->str, MS_SWEEP_GRID_ERROR_LIMIT, "100172 grid points, more than 100000");
    g_string_free(more, TRUE);
    CU_ASSERT_EQUAL(ms_sweep_grid_n_points(g), 634);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"points in grid order", test_points},
        {"keys", test_keys},
        {"refused axes", test_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"sweep_grid", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
