/* Tests of the max-min solver with no topology at all: textbook allocations, weights, the
 * max-min optimality conditions on random instances, and incremental solves (random additions,
 * removals and capacity changes; a draining all-to-all-v) against solves from scratch. */
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

/* --- incremental solves against solves from scratch --- */

/* A live variable of a randomized instance, as the test remembers it. */
typedef struct {
    guint32 id;
    double weight;
    guint n;
    guint32 cnsts[4];
    double left; /* bytes still to move (drain tests) */
} Var;

/* Solves the same live variables once in a fresh solver and compares every rate: the incremental
 * allocation must equal the from-scratch one within 1e-6 relative (the solver's boundary checks
 * hold capacities and levels to 1e-9; chains of bottlenecks can amplify that a little). Returns
 * the largest relative difference seen. */
static double
compare_with_scratch(MsMaxmin *mm, const double *caps, guint n_cnst, GArray *vars)
{
    g_autoptr(MsMaxmin) ref = ms_maxmin_new();
    ms_maxmin_set_budget(ref, 0); /* progressive filling from scratch: not the path under test */
    for (guint c = 0; c < n_cnst; c++) {
        ms_maxmin_add_constraint(ref, caps[c]);
    }
    g_autofree guint32 *ids = g_new(guint32, MAX(vars->len, 1));
    for (guint i = 0; i < vars->len; i++) {
        const Var *v = &g_array_index(vars, Var, i);
        ids[i] = ms_maxmin_add_variable(ref, v->weight, v->cnsts, v->n);
    }
    ms_maxmin_solve(ref, NULL);
    /* The usage the solver keeps by adding deltas matches a recount. */
    for (guint c = 0; c < n_cnst; c++) {
        CU_ASSERT(fabs(ms_maxmin_load(mm, c) - ms_maxmin_usage(mm, c)) <= 1e-9 * caps[c]);
    }
    double worst = 0;
    for (guint i = 0; i < vars->len; i++) {
        const Var *v = &g_array_index(vars, Var, i);
        double a = ms_maxmin_rate(mm, v->id), b = ms_maxmin_rate(ref, ids[i]);
        double rel = fabs(a - b) / b;
        worst = MAX(worst, rel);
        /* Bottleneck and level must describe the rate. */
        guint32 bn = ms_maxmin_var_bottleneck(mm, v->id);
        CU_ASSERT_FATAL(bn < n_cnst);
        MS_ASSERT_REL(a, v->weight * ms_maxmin_level(mm, bn), 1e-12);
    }
    CU_ASSERT(worst <= 1e-6);
    return worst;
}

static Var
random_var(GRand *rng, guint n_cnst)
{
    Var v = {0};
    v.n = g_rand_int_range(rng, 1, MIN(4, n_cnst) + 1);
    for (guint j = 0; j < v.n; j++) {
        v.cnsts[j] = g_rand_int_range(rng, 0, n_cnst);
    }
    guint kind = g_rand_int_range(rng, 0, 3);
    v.weight = kind == 0 ? 1.0 : kind == 1 ? 2.0 : g_rand_double_range(rng, 0.2, 5);
    return v;
}

/* Random additions, removals and capacity changes, several per solve or one at a time, with a
 * propagation budget (0: fill repair only; 1: the propagation gives up often and must leave the
 * state as it found it; the default). Returns the solver's counters summed over instances. */
static MsMaxminStats
incremental_vs_scratch(guint budget)
{
    g_autoptr(GRand) rng = g_rand_new_with_seed(7);
    MsMaxminStats sum = {0};
    double worst = 0;
    for (guint inst = 0; inst < 60; inst++) {
        g_autoptr(MsMaxmin) mm = ms_maxmin_new();
        ms_maxmin_set_budget(mm, budget);
        guint n_cnst = g_rand_int_range(rng, 1, 24);
        double caps[24];
        for (guint c = 0; c < n_cnst; c++) {
            /* Few distinct capacities make ties, the hard case for incremental solvers. */
            caps[c] = g_rand_boolean(rng) ? 10.0 : g_rand_double_range(rng, 0.5, 20);
            ms_maxmin_add_constraint(mm, caps[c]);
        }
        g_autoptr(GArray) vars = g_array_new(FALSE, FALSE, sizeof(Var));
        for (guint step = 0; step < 40; step++) {
            guint ops = g_rand_boolean(rng) ? 1 : g_rand_int_range(rng, 1, 12);
            for (guint o = 0; o < ops; o++) {
                guint what = g_rand_int_range(rng, 0, 10);
                if (what < 5 || vars->len == 0) {
                    Var v = random_var(rng, n_cnst);
                    v.id = ms_maxmin_add_variable(mm, v.weight, v.cnsts, v.n);
                    g_array_append_val(vars, v);
                } else if (what < 9) {
                    guint i = g_rand_int_range(rng, 0, vars->len);
                    ms_maxmin_remove_variable(mm, g_array_index(vars, Var, i).id);
                    g_array_remove_index(vars, i);
                } else {
                    guint c = g_rand_int_range(rng, 0, n_cnst);
                    caps[c] = g_rand_double_range(rng, 0.5, 20);
                    ms_maxmin_set_capacity(mm, c, caps[c]);
                }
            }
            ms_maxmin_solve(mm, NULL);
            worst = MAX(worst, compare_with_scratch(mm, caps, n_cnst, vars));
        }
        MsMaxminStats st;
        ms_maxmin_stats(mm, &st);
        sum.solves += st.solves;
        sum.propagations += st.propagations;
        sum.fallbacks += st.fallbacks;
        sum.pivots += st.pivots;
        sum.repairs += st.repairs;
    }
    CU_ASSERT(worst <= 1e-6);
    return sum;
}

static void
test_incremental_matches_scratch(void)
{
    MsMaxminStats fill = incremental_vs_scratch(0);
    CU_ASSERT_EQUAL(fill.propagations, 0);
    CU_ASSERT_EQUAL(fill.fallbacks, 0);
    CU_ASSERT(fill.repairs > 0);
    MsMaxminStats tight = incremental_vs_scratch(1);
    CU_ASSERT(tight.fallbacks > 0);
    CU_ASSERT(tight.propagations > 0);
    MsMaxminStats dflt = incremental_vs_scratch(24);
    CU_ASSERT(dflt.propagations > tight.propagations);
    CU_ASSERT(dflt.pivots > 0);
    CU_ASSERT_EQUAL(dflt.solves, fill.solves);
}

/* Time-stepped draining: all flows start at once with skewed sizes on a bipartite network of
 * source and destination links (the all-to-all-v shape), and the ones that finish first leave,
 * together when they finish together. Every step must match a solve from scratch. */
static void
test_drain_matches_scratch(void)
{
    g_autoptr(GRand) rng = g_rand_new_with_seed(11);
    for (guint inst = 0; inst < 8; inst++) {
        guint n = 6 + 4 * (inst / 2);
        g_autoptr(MsMaxmin) mm = ms_maxmin_new();
        /* Every other instance runs on the fill repair alone. */
        ms_maxmin_set_budget(mm, inst % 2 ? 0 : 24);
        double caps[64];
        for (guint c = 0; c < 2 * n; c++) {
            caps[c] = c % 7 == 3 ? 12.5 : 25.0;
            ms_maxmin_add_constraint(mm, caps[c]);
        }
        g_autoptr(GArray) vars = g_array_new(FALSE, FALSE, sizeof(Var));
        for (guint i = 0; i < n; i++) {
            for (guint j = 0; j < n; j++) {
                if (i == j) {
                    continue;
                }
                Var v = {0};
                v.n = 2;
                v.cnsts[0] = i;
                v.cnsts[1] = n + j;
                v.weight = (i + j) % 5 == 0 ? 2.0 : 1.0;
                /* Popular destinations get more bytes; small integer sizes make ties. */
                v.left = (double)(g_rand_int_range(rng, 1, 4) * (n / (j + 1) + 1));
                v.id = ms_maxmin_add_variable(mm, v.weight, v.cnsts, v.n);
                g_array_append_val(vars, v);
            }
        }
        while (vars->len) {
            ms_maxmin_solve(mm, NULL);
            compare_with_scratch(mm, caps, 2 * n, vars);
            double dt = INFINITY;
            for (guint i = 0; i < vars->len; i++) {
                const Var *v = &g_array_index(vars, Var, i);
                dt = MIN(dt, v->left / ms_maxmin_rate(mm, v->id));
            }
            for (guint i = vars->len; i-- > 0;) {
                Var *v = &g_array_index(vars, Var, i);
                v->left -= ms_maxmin_rate(mm, v->id) * dt;
                if (v->left <= 1e-9 * dt * ms_maxmin_rate(mm, v->id) + 1e-12) {
                    ms_maxmin_remove_variable(mm, v->id);
                    g_array_remove_index(vars, i);
                }
            }
        }
    }
}

/* Water filling of a link with more flows than the insertion sort takes (40 > 24): flow i
 * (i = 1 .. 40) crosses its own link P_i of capacity i, shared with a blocker, and a common link
 * L of capacity 500, which holds the 410 they get at first. When the blockers leave (one solve,
 * removals only: the propagation) the flows want 820 and L overflows: at the water level y
 * where 1 + ... + 15 + 25 y = 500, y = 15.2, flows 1 to 15 keep i at P_i and 16 to 40 share L.
 * Flows are added in a shuffled order, so that the sort by (level, variable) has work to do. */
static void
test_water_fill_many_flows(void)
{
    g_autoptr(MsMaxmin) mm = ms_maxmin_new();
    enum { N = 40 };
    double caps[N + 1];
    guint32 p[N + 1], flow[N + 1], blocker[N + 1];
    caps[0] = 500.0;
    guint32 l = ms_maxmin_add_constraint(mm, caps[0]);
    for (guint i = 1; i <= N; i++) {
        caps[i] = i;
        p[i] = ms_maxmin_add_constraint(mm, caps[i]);
    }
    g_autoptr(GArray) vars = g_array_new(FALSE, FALSE, sizeof(Var));
    for (guint k = 0; k < N; k++) {
        guint i = 1 + (7 * k) % N; /* 7 is prime to 40: every i once */
        Var v = {.n = 2, .weight = 1.0, .cnsts = {p[i], l}};
        v.id = flow[i] = ms_maxmin_add_variable(mm, 1.0, v.cnsts, 2);
        g_array_append_val(vars, v);
        blocker[i] = ms_maxmin_add_variable(mm, 1.0, &p[i], 1);
    }
    ms_maxmin_solve(mm, NULL);
    MS_ASSERT_REL(ms_maxmin_load(mm, l), 410.0, 1e-12);
    CU_ASSERT_TRUE(isinf(ms_maxmin_level(mm, l)));
    MsMaxminStats before, after;
    ms_maxmin_stats(mm, &before);
    for (guint i = 1; i <= N; i++) {
        ms_maxmin_remove_variable(mm, blocker[i]);
    }
    ms_maxmin_solve(mm, NULL);
    ms_maxmin_stats(mm, &after);
    CU_ASSERT_EQUAL(after.propagations, before.propagations + 1);
    CU_ASSERT_EQUAL(after.fallbacks, before.fallbacks);
    /* The answer is exact whatever the order of the water filling (the propagation repairs a
     * wrong water level), so the path tells a good sort from a bad one: L overflows once P_1 ..
     * P_19 have risen, is filled at 18.2 (flows 19 and 37 .. 40 above it move to L), and 27
     * moves in all reach the answer in this order (golden count of the deterministic path;
     * skipping the merge step of the sort took 41). */
    CU_ASSERT_EQUAL(after.pivots - before.pivots, 27);
    MS_ASSERT_REL(ms_maxmin_level(mm, l), 15.2, 1e-12);
    for (guint i = 1; i <= N; i++) {
        MS_ASSERT_REL(ms_maxmin_rate(mm, flow[i]), i <= 15 ? (double)i : 15.2, 1e-12);
        CU_ASSERT_EQUAL(ms_maxmin_var_bottleneck(mm, flow[i]), i <= 15 ? p[i] : l);
    }
    compare_with_scratch(mm, caps, N + 1, vars);
}

/* Counters of one solve. */
static MsMaxminStats
solve_counted(MsMaxmin *mm)
{
    MsMaxminStats before, after;
    ms_maxmin_stats(mm, &before);
    ms_maxmin_solve(mm, NULL);
    ms_maxmin_stats(mm, &after);
    return (MsMaxminStats){.propagations = after.propagations - before.propagations,
                           .fallbacks = after.fallbacks - before.fallbacks};
}

/* Adds v to the solver and to the remembered variables; returns its id. */
static guint32
add_var(MsMaxmin *mm, GArray *vars, Var *v)
{
    v->id = ms_maxmin_add_variable(mm, v->weight, v->cnsts, v->n);
    g_array_append_val(vars, *v);
    return v->id;
}

/* A solve the propagation must have done on its own. */
static void
solve_propagated(MsMaxmin *mm)
{
    MsMaxminStats st = solve_counted(mm);
    CU_ASSERT_EQUAL(st.propagations, 1);
    CU_ASSERT_EQUAL(st.fallbacks, 0);
}

/* Additions are propagated as removals are: a new flow joins the slowest group on its route, or
 * starts one where it would fill a link first, and the rules make room for it. Each case is a
 * closed form, solved by the propagation (or, the last, given to the fill repair), and then
 * checked from scratch. */
static void
test_additions_propagate(void)
{
    /* Joining a saturated group: a link of 12 with three flows at 4 takes a fourth: 3 each. */
    {
        g_autoptr(MsMaxmin) mm = ms_maxmin_new();
        double caps[] = {12.0};
        guint32 c = ms_maxmin_add_constraint(mm, caps[0]);
        g_autoptr(GArray) vars = g_array_new(FALSE, FALSE, sizeof(Var));
        for (guint i = 0; i < 4; i++) {
            add_var(mm, vars, &(Var){.weight = 1.0, .n = 1, .cnsts = {c}});
            solve_propagated(mm);
        }
        for (guint i = 0; i < 4; i++) {
            MS_ASSERT_REL(ms_maxmin_rate(mm, g_array_index(vars, Var, i).id), 3.0, 1e-12);
        }
        compare_with_scratch(mm, caps, 1, vars);
    }
    /* A group of its own where the flow fills a link first, and the faster flows it claims: P (8)
     * holds f1 alone at 8, L (10) carries f1 with 2 to spare; f2 over L alone starts a group at
     * 2, f1 joins it, and L's group rises to 5 each (f1 under P's 8). */
    {
        g_autoptr(MsMaxmin) mm = ms_maxmin_new();
        double caps[] = {8.0, 10.0};
        guint32 p = ms_maxmin_add_constraint(mm, caps[0]);
        guint32 l = ms_maxmin_add_constraint(mm, caps[1]);
        g_autoptr(GArray) vars = g_array_new(FALSE, FALSE, sizeof(Var));
        guint32 f1 = add_var(mm, vars, &(Var){.weight = 1.0, .n = 2, .cnsts = {p, l}});
        solve_propagated(mm);
        MS_ASSERT_REL(ms_maxmin_rate(mm, f1), 8.0, 1e-12);
        CU_ASSERT_EQUAL(ms_maxmin_var_bottleneck(mm, f1), p);
        guint32 f2 = add_var(mm, vars, &(Var){.weight = 1.0, .n = 1, .cnsts = {l}});
        solve_propagated(mm);
        MS_ASSERT_REL(ms_maxmin_rate(mm, f1), 5.0, 1e-12);
        MS_ASSERT_REL(ms_maxmin_rate(mm, f2), 5.0, 1e-12);
        CU_ASSERT_EQUAL(ms_maxmin_var_bottleneck(mm, f1), l);
        CU_ASSERT_TRUE(isinf(ms_maxmin_level(mm, p)));
        compare_with_scratch(mm, caps, 2, vars);
    }
    /* A flow removed and its id taken again in the same solve is listed twice as new, and must
     * be placed once: a (10) shared by x (weight 1, also on b of 6) and y (weight 2) at level
     * 10/3. */
    {
        g_autoptr(MsMaxmin) mm = ms_maxmin_new();
        double caps[] = {10.0, 6.0};
        guint32 a = ms_maxmin_add_constraint(mm, caps[0]);
        guint32 b = ms_maxmin_add_constraint(mm, caps[1]);
        g_autoptr(GArray) vars = g_array_new(FALSE, FALSE, sizeof(Var));
        guint32 x = add_var(mm, vars, &(Var){.weight = 1.0, .n = 2, .cnsts = {a, b}});
        guint32 gone = ms_maxmin_add_variable(mm, 1.0, &b, 1);
        ms_maxmin_remove_variable(mm, gone);
        guint32 y = add_var(mm, vars, &(Var){.weight = 2.0, .n = 1, .cnsts = {a}});
        CU_ASSERT_EQUAL(y, gone);
        solve_propagated(mm);
        MS_ASSERT_REL(ms_maxmin_rate(mm, x), 10.0 / 3, 1e-12);
        MS_ASSERT_REL(ms_maxmin_rate(mm, y), 20.0 / 3, 1e-12);
        MS_ASSERT_REL(ms_maxmin_usage(mm, a), 10.0, 1e-12);
        compare_with_scratch(mm, caps, 2, vars);
    }
    /* A new flow that fits nowhere gives the solve to the fill repair, the state untouched: v1
     * joins P's group (p1 at 4) and overfills U (u1 at 7 under Q), so v2, over U alone, finds it
     * over capacity. From scratch: P's 4 split 2 and 2, U's other 8 split 4 and 4. */
    {
        g_autoptr(MsMaxmin) mm = ms_maxmin_new();
        double caps[] = {4.0, 10.0, 7.0};
        guint32 p = ms_maxmin_add_constraint(mm, caps[0]);
        guint32 u = ms_maxmin_add_constraint(mm, caps[1]);
        guint32 q = ms_maxmin_add_constraint(mm, caps[2]);
        g_autoptr(GArray) vars = g_array_new(FALSE, FALSE, sizeof(Var));
        guint32 p1 = add_var(mm, vars, &(Var){.weight = 1.0, .n = 1, .cnsts = {p}});
        guint32 u1 = add_var(mm, vars, &(Var){.weight = 1.0, .n = 2, .cnsts = {u, q}});
        solve_counted(mm);
        MS_ASSERT_REL(ms_maxmin_rate(mm, u1), 7.0, 1e-12);
        guint32 v1 = add_var(mm, vars, &(Var){.weight = 1.0, .n = 2, .cnsts = {p, u}});
        guint32 v2 = add_var(mm, vars, &(Var){.weight = 1.0, .n = 1, .cnsts = {u}});
        MsMaxminStats st = solve_counted(mm);
        CU_ASSERT_EQUAL(st.propagations, 0);
        CU_ASSERT_EQUAL(st.fallbacks, 1);
        MS_ASSERT_REL(ms_maxmin_rate(mm, p1), 2.0, 1e-12);
        MS_ASSERT_REL(ms_maxmin_rate(mm, v1), 2.0, 1e-12);
        MS_ASSERT_REL(ms_maxmin_rate(mm, u1), 4.0, 1e-12);
        MS_ASSERT_REL(ms_maxmin_rate(mm, v2), 4.0, 1e-12);
        compare_with_scratch(mm, caps, 3, vars);
    }
}

/* The per-group report: which levels changed, which variables moved, which constraints' usage
 * changed. */
static void
test_group_reports(void)
{
    g_autoptr(MsMaxmin) mm = ms_maxmin_new();
    guint32 a = ms_maxmin_add_constraint(mm, 10.0);
    guint32 b = ms_maxmin_add_constraint(mm, 4.0);
    guint32 idle = ms_maxmin_add_constraint(mm, 1.0);
    guint32 ab[2] = {a, b};
    guint32 f1 = ms_maxmin_add_variable(mm, 1.0, &a, 1);
    guint32 f2 = ms_maxmin_add_variable(mm, 1.0, ab, 2);
    guint32 f3 = ms_maxmin_add_variable(mm, 1.0, &b, 1);
    g_autoptr(GArray) levels = g_array_new(FALSE, FALSE, sizeof(guint32));
    g_autoptr(GArray) moved = g_array_new(FALSE, FALSE, sizeof(guint32));
    g_autoptr(GArray) touched = g_array_new(FALSE, FALSE, sizeof(guint32));
    ms_maxmin_solve_groups(mm, levels, moved, touched);
    /* b saturates first (f2, f3 at 2); a then gives f1 the 8 left. */
    CU_ASSERT_EQUAL(ms_maxmin_var_bottleneck(mm, f1), a);
    CU_ASSERT_EQUAL(ms_maxmin_var_bottleneck(mm, f2), b);
    CU_ASSERT_EQUAL(ms_maxmin_var_bottleneck(mm, f3), b);
    MS_ASSERT_REL(ms_maxmin_level(mm, a), 8.0, 1e-12);
    MS_ASSERT_REL(ms_maxmin_level(mm, b), 2.0, 1e-12);
    CU_ASSERT_TRUE(isinf(ms_maxmin_level(mm, idle)));
    CU_ASSERT_EQUAL(levels->len, 2);
    CU_ASSERT_EQUAL(moved->len, 3);
    CU_ASSERT_EQUAL(touched->len, 2);
    MS_ASSERT_REL(ms_maxmin_load(mm, a), 10.0, 1e-12);
    /* f3 leaves: b's group (f2) rises to 4 and a's group (f1) falls to 6; nobody moves. */
    g_array_set_size(levels, 0);
    g_array_set_size(moved, 0);
    g_array_set_size(touched, 0);
    ms_maxmin_remove_variable(mm, f3);
    ms_maxmin_solve_groups(mm, levels, moved, touched);
    MS_ASSERT_REL(ms_maxmin_rate(mm, f1), 6.0, 1e-12);
    MS_ASSERT_REL(ms_maxmin_rate(mm, f2), 4.0, 1e-12);
    CU_ASSERT_EQUAL(levels->len, 2);
    CU_ASSERT_EQUAL(moved->len, 0);
    CU_ASSERT_EQUAL(touched->len, 2);
    /* b doubles: f2 would get 5 on a, 8 on b: it moves to a, where f1 and f2 share 5 each; b
     * keeps no group. */
    g_array_set_size(levels, 0);
    ms_maxmin_set_capacity(mm, b, 8.0);
    ms_maxmin_solve_groups(mm, levels, moved, NULL);
    MS_ASSERT_REL(ms_maxmin_rate(mm, f1), 5.0, 1e-12);
    MS_ASSERT_REL(ms_maxmin_rate(mm, f2), 5.0, 1e-12);
    CU_ASSERT_EQUAL(ms_maxmin_var_bottleneck(mm, f2), a);
    CU_ASSERT_TRUE(isinf(ms_maxmin_level(mm, b)));
    CU_ASSERT_EQUAL(moved->len, 1);
    CU_ASSERT_EQUAL(g_array_index(moved, guint32, 0), f2);
    CU_ASSERT_EQUAL(levels->len, 2);
    MS_ASSERT_REL(ms_maxmin_load(mm, b), 5.0, 1e-12);
    MS_ASSERT_REL(ms_maxmin_usage(mm, b), 5.0, 1e-12);
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
        {"incremental solves match solves from scratch", test_incremental_matches_scratch},
        {"draining a skewed all-to-all matches scratch", test_drain_matches_scratch},
        {"water filling of a link with 40 flows", test_water_fill_many_flows},
        {"per-group reports", test_group_reports},
        {"additions propagate", test_additions_propagate},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"maxmin", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
