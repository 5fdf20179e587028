/* Tests of the max-min solver with no topology at all: textbook allocations, weights, incremental
 * solves against from-scratch solves, and the max-min optimality conditions on random instances. */
#include "ms_test.h"
#include "sim/net/maxmin.h"

static void
test_single_link(void)
{
    g_autoptr(MsMaxmin) mm = ms_maxmin_new();
    guint32 c = ms_maxmin_add_constraint(mm, 12.0);
    guint32 v[4];
    for (guint i = 0; i < 4; i++) {
        v[i] = ms_maxmin_add_variable(mm, 1.0, &c, 1);
    }
    ms_maxmin_solve(mm, NULL);
    for (guint i = 0; i < 4; i++) {
        MS_ASSERT_REL(ms_maxmin_rate(mm, v[i]), 3.0, 1e-12);
    }
    MS_ASSERT_REL(ms_maxmin_usage(mm, c), 12.0, 1e-12);
}

/* Bertsekas & Gallager's example: a long flow crosses three links, each also carrying one short
 * flow; capacities 1, 2, 3. The long flow is bottlenecked on the first link at 1/2; the short flows
 * take what is left: 1/2, 3/2, 5/2. */
static void
test_textbook_line(void)
{
    g_autoptr(MsMaxmin) mm = ms_maxmin_new();
    guint32 l[3];
    for (guint i = 0; i < 3; i++) {
        l[i] = ms_maxmin_add_constraint(mm, i + 1.0);
    }
    guint32 lng = ms_maxmin_add_variable(mm, 1.0, l, 3);
    guint32 s[3];
    for (guint i = 0; i < 3; i++) {
        s[i] = ms_maxmin_add_variable(mm, 1.0, &l[i], 1);
    }
    ms_maxmin_solve(mm, NULL);
    MS_ASSERT_REL(ms_maxmin_rate(mm, lng), 0.5, 1e-12);
    MS_ASSERT_REL(ms_maxmin_rate(mm, s[0]), 0.5, 1e-12);
    MS_ASSERT_REL(ms_maxmin_rate(mm, s[1]), 1.5, 1e-12);
    MS_ASSERT_REL(ms_maxmin_rate(mm, s[2]), 2.5, 1e-12);
}

/* Two links in sequence: A (cap 10) carries f1 and f2, B (cap 4) carries f2 and f3. B saturates
 * first at 2 each; f1 takes the 8 left on A. */
static void
test_two_bottlenecks(void)
{
    g_autoptr(MsMaxmin) mm = ms_maxmin_new();
    guint32 a = ms_maxmin_add_constraint(mm, 10.0);
    guint32 b = ms_maxmin_add_constraint(mm, 4.0);
    guint32 ab[2] = {a, b};
    guint32 f1 = ms_maxmin_add_variable(mm, 1.0, &a, 1);
    guint32 f2 = ms_maxmin_add_variable(mm, 1.0, ab, 2);
    guint32 f3 = ms_maxmin_add_variable(mm, 1.0, &b, 1);
    ms_maxmin_solve(mm, NULL);
    MS_ASSERT_REL(ms_maxmin_rate(mm, f1), 8.0, 1e-12);
    MS_ASSERT_REL(ms_maxmin_rate(mm, f2), 2.0, 1e-12);
    MS_ASSERT_REL(ms_maxmin_rate(mm, f3), 2.0, 1e-12);
}

static void
test_weights(void)
{
    g_autoptr(MsMaxmin) mm = ms_maxmin_new();
    guint32 c = ms_maxmin_add_constraint(mm, 9.0);
    guint32 v1 = ms_maxmin_add_variable(mm, 1.0, &c, 1);
    guint32 v2 = ms_maxmin_add_variable(mm, 2.0, &c, 1);
    ms_maxmin_solve(mm, NULL);
    MS_ASSERT_REL(ms_maxmin_rate(mm, v1), 3.0, 1e-12);
    MS_ASSERT_REL(ms_maxmin_rate(mm, v2), 6.0, 1e-12);
}

/* A flow that starts while others run gets its fair share, and the others give it up. */
static void
test_arrival_and_departure(void)
{
    g_autoptr(MsMaxmin) mm = ms_maxmin_new();
    guint32 c = ms_maxmin_add_constraint(mm, 10.0);
    guint32 v1 = ms_maxmin_add_variable(mm, 1.0, &c, 1);
    g_autoptr(GArray) changed = g_array_new(FALSE, FALSE, sizeof(guint32));
    ms_maxmin_solve(mm, changed);
    MS_ASSERT_REL(ms_maxmin_rate(mm, v1), 10.0, 1e-12);
    CU_ASSERT_EQUAL(changed->len, 1);
    g_array_set_size(changed, 0);
    guint32 v2 = ms_maxmin_add_variable(mm, 1.0, &c, 1);
    ms_maxmin_solve(mm, changed);
    MS_ASSERT_REL(ms_maxmin_rate(mm, v1), 5.0, 1e-12);
    MS_ASSERT_REL(ms_maxmin_rate(mm, v2), 5.0, 1e-12);
    CU_ASSERT_EQUAL(changed->len, 2);
    g_array_set_size(changed, 0);
    ms_maxmin_remove_variable(mm, v1);
    ms_maxmin_solve(mm, changed);
    MS_ASSERT_REL(ms_maxmin_rate(mm, v2), 10.0, 1e-12);
    CU_ASSERT_EQUAL(changed->len, 1);
    CU_ASSERT_EQUAL(g_array_index(changed, guint32, 0), v2);
    CU_ASSERT_EQUAL(ms_maxmin_n_variables(mm), 1);
}

/* Solving only touches the components that changed. */
static void
test_components_are_independent(void)
{
    g_autoptr(MsMaxmin) mm = ms_maxmin_new();
    guint32 a = ms_maxmin_add_constraint(mm, 1.0);
    guint32 b = ms_maxmin_add_constraint(mm, 1.0);
    for (guint i = 0; i < 100; i++) {
        ms_maxmin_add_variable(mm, 1.0, &a, 1);
    }
    guint32 vb = ms_maxmin_add_variable(mm, 1.0, &b, 1);
    ms_maxmin_solve(mm, NULL);
    MsMaxminStats before, after;
    ms_maxmin_stats(mm, &before);
    guint32 vb2 = ms_maxmin_add_variable(mm, 1.0, &b, 1);
    g_autoptr(GArray) changed = g_array_new(FALSE, FALSE, sizeof(guint32));
    ms_maxmin_solve(mm, changed);
    ms_maxmin_stats(mm, &after);
    CU_ASSERT_EQUAL(after.component_vars - before.component_vars, 2);
    CU_ASSERT_EQUAL(changed->len, 2);
    MS_ASSERT_REL(ms_maxmin_rate(mm, vb), 0.5, 1e-12);
    MS_ASSERT_REL(ms_maxmin_rate(mm, vb2), 0.5, 1e-12);
    /* Nothing touched: a solve does nothing. */
    ms_maxmin_solve(mm, NULL);
    MsMaxminStats idle;
    ms_maxmin_stats(mm, &idle);
    CU_ASSERT_EQUAL(idle.solves, after.solves);
}

static void
test_unconstrained_and_capacity_change(void)
{
    g_autoptr(MsMaxmin) mm = ms_maxmin_new();
    guint32 c = ms_maxmin_add_constraint(mm, 4.0);
    guint32 free_var = ms_maxmin_add_variable(mm, 1.0, NULL, 0);
    guint32 v = ms_maxmin_add_variable(mm, 1.0, &c, 1);
    ms_maxmin_solve(mm, NULL);
    CU_ASSERT_TRUE(isinf(ms_maxmin_rate(mm, free_var)));
    MS_ASSERT_REL(ms_maxmin_rate(mm, v), 4.0, 1e-12);
    ms_maxmin_set_capacity(mm, c, 6.0);
    ms_maxmin_solve(mm, NULL);
    MS_ASSERT_REL(ms_maxmin_rate(mm, v), 6.0, 1e-12);
    MS_ASSERT_REL(ms_maxmin_capacity(mm, c), 6.0, 1e-12);
}

/* A route that crosses the same link twice uses it twice. */
static void
test_repeated_constraint(void)
{
    g_autoptr(MsMaxmin) mm = ms_maxmin_new();
    guint32 c = ms_maxmin_add_constraint(mm, 6.0);
    guint32 twice[2] = {c, c};
    guint32 v1 = ms_maxmin_add_variable(mm, 1.0, twice, 2);
    guint32 v2 = ms_maxmin_add_variable(mm, 1.0, &c, 1);
    ms_maxmin_solve(mm, NULL);
    MS_ASSERT_REL(ms_maxmin_rate(mm, v1), 2.0, 1e-12);
    MS_ASSERT_REL(ms_maxmin_rate(mm, v2), 2.0, 1e-12);
}

/* Checks the definition of weighted max-min fairness: feasible, and every variable has a
 * saturated constraint on which its normalised rate is the largest. */
static void
check_maxmin_conditions(MsMaxmin *mm, guint n_cnst, GArray *vars, GPtrArray *routes)
{
    for (guint c = 0; c < n_cnst; c++) {
        CU_ASSERT_TRUE(ms_maxmin_usage(mm, c) <= ms_maxmin_capacity(mm, c) * (1 + 1e-9));
    }
    for (guint i = 0; i < vars->len; i++) {
        guint32 v = g_array_index(vars, guint32, i);
        GArray *route = routes->pdata[i];
        if (route == NULL) {
            continue;
        }
        double rho = ms_maxmin_rate(mm, v) / ((double *)route->data)[0];
        gboolean has_bottleneck = FALSE;
        for (guint k = 1; k < route->len; k++) {
            guint32 c = (guint32)((double *)route->data)[k];
            if (ms_maxmin_usage(mm, c) < ms_maxmin_capacity(mm, c) * (1 - 1e-9)) {
                continue;
            }
            gboolean is_max = TRUE;
            for (guint j = 0; j < vars->len && is_max; j++) {
                GArray *r2 = routes->pdata[j];
                if (r2 == NULL) {
                    continue;
                }
                for (guint k2 = 1; k2 < r2->len; k2++) {
                    if ((guint32)((double *)r2->data)[k2] == c) {
                        double rho2 = ms_maxmin_rate(mm, g_array_index(vars, guint32, j)) /
                                      ((double *)r2->data)[0];
                        if (rho2 > rho * (1 + 1e-9)) {
                            is_max = FALSE;
                        }
                        break;
                    }
                }
            }
            has_bottleneck |= is_max;
        }
        CU_ASSERT_TRUE(has_bottleneck);
    }
}

static void
test_random_instances_are_maxmin_fair(void)
{
    g_autoptr(GRand) rng = g_rand_new_with_seed(42);
    for (guint inst = 0; inst < 40; inst++) {
        g_autoptr(MsMaxmin) mm = ms_maxmin_new();
        guint n_cnst = g_rand_int_range(rng, 1, 12);
        for (guint c = 0; c < n_cnst; c++) {
            ms_maxmin_add_constraint(mm, g_rand_double_range(rng, 0.5, 10));
        }
        g_autoptr(GArray) vars = g_array_new(FALSE, FALSE, sizeof(guint32));
        g_autoptr(GPtrArray) routes = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
        /* Grow, solve, shrink, solve: each solve must satisfy the conditions. */
        for (guint round = 0; round < 6; round++) {
            guint adds = g_rand_int_range(rng, 1, 15);
            for (guint a = 0; a < adds; a++) {
                guint k = g_rand_int_range(rng, 1, MIN(4, n_cnst) + 1);
                guint32 cs[4];
                GArray *route = g_array_new(FALSE, FALSE, sizeof(double));
                double w = g_rand_boolean(rng) ? 1.0 : g_rand_double_range(rng, 0.2, 5);
                g_array_append_val(route, w);
                for (guint j = 0; j < k; j++) {
                    cs[j] = g_rand_int_range(rng, 0, n_cnst);
                    double d = cs[j];
                    g_array_append_val(route, d);
                }
                guint32 v = ms_maxmin_add_variable(mm, w, cs, k);
                g_array_append_val(vars, v);
                g_ptr_array_add(routes, route);
            }
            guint removes = g_rand_int_range(rng, 0, vars->len / 2 + 1);
            for (guint r = 0; r < removes; r++) {
                guint i = g_rand_int_range(rng, 0, vars->len);
                ms_maxmin_remove_variable(mm, g_array_index(vars, guint32, i));
                g_array_remove_index(vars, i);
                g_ptr_array_remove_index(routes, i);
            }
            ms_maxmin_solve(mm, NULL);
            check_maxmin_conditions(mm, n_cnst, vars, routes);
        }
    }
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"one link shared equally", test_single_link},
        {"textbook line network", test_textbook_line},
        {"two bottlenecks", test_two_bottlenecks},
        {"weighted shares", test_weights},
        {"arrival gets its fair share", test_arrival_and_departure},
        {"components solved independently", test_components_are_independent},
        {"unconstrained and capacity change", test_unconstrained_and_capacity_change},
        {"route using a link twice", test_repeated_constraint},
        {"random instances satisfy max-min", test_random_instances_are_maxmin_fair},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"maxmin", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
