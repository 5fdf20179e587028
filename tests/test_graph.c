/* Tests of the graph helper: successor lists (sorted, repeated edges kept), Kahn's order on
 * hand-checked graphs, and the cycle it names: a self-loop, a cycle behind a node that only waits
 * for it, the first of two cycles. */
#include "ms_test.h"
#include "sim/base/graph.h"

/* A graph given as dependency lists: deps of node i are list[i], terminated by -1. */
typedef struct {
    guint n;
    const gint *lists[16];
    guint32 flat[16][8];
    guint len[16];
} Deps;

static const guint32 *
deps_of(gconstpointer data, guint32 node, guint *n)
{
    const Deps *d = data;
    *n = d->len[node];
    return d->len[node] ? d->flat[node] : NULL;
}

static void
deps_init(Deps *d)
{
    for (guint i = 0; i < d->n; i++) {
        d->len[i] = 0;
        for (const gint *p = d->lists[i]; p && *p >= 0; p++) {
            d->flat[i][d->len[i]++] = (guint32)*p;
        }
    }
}

static const gint none[] = {-1};

#define CHAIN 100000u

static guint criticals;

static void
count_critical(const char *domain, GLogLevelFlags level, const char *message, gpointer data)
{
    criticals++;
}

static void
test_successors(void)
{
    /* 0 <- 1, 0 <- 2 twice, 1 <- 2, 3 alone */
    Deps d = {.n = 4, .lists = {none, (const gint[]){0, -1}, (const gint[]){1, 0, 0, -1}, none}};
    deps_init(&d);
    g_autoptr(MsGraph) g = ms_graph_new(d.n, deps_of, &d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(ms_graph_n_nodes(g), 4);
    CU_ASSERT_EQUAL(ms_graph_n_edges(g), 4);
    guint n = 0;
    const guint32 *s = ms_graph_successors(g, 0, &n);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT_EQUAL(s[0], 1);
    CU_ASSERT_EQUAL(s[1], 2);
    CU_ASSERT_EQUAL(s[2], 2);
    s = ms_graph_successors(g, 1, &n);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_EQUAL(s[0], 2);
    ms_graph_successors(g, 2, &n);
    CU_ASSERT_EQUAL(n, 0);
    ms_graph_successors(g, 3, &n);
    CU_ASSERT_EQUAL(n, 0);
}

static void
test_kahn_order(void)
{
    /* 4 and 1 are free; 0 waits for 4; 2 for 0 and 1; 3 for 2 and 4. Kahn takes the free nodes in
     * id order, then each node as its last dependency is placed: 1 4 0 2 3. */
    Deps d = {.n = 5,
              .lists = {(const gint[]){4, -1}, none, (const gint[]){0, 1, -1},
                        (const gint[]){2, 4, -1}, none}};
    deps_init(&d);
    g_autoptr(MsGraph) g = ms_graph_new(d.n, deps_of, &d);
    guint32 order[5];
    GArray *cycle = NULL;
    CU_ASSERT_TRUE(ms_graph_sort(g, order, &cycle));
    CU_ASSERT_PTR_NULL(cycle);
    const guint32 want[] = {1, 4, 0, 2, 3};
    for (guint i = 0; i < 5; i++) {
        CU_ASSERT_EQUAL(order[i], want[i]);
    }
    CU_ASSERT_TRUE(ms_graph_sort(g, NULL, NULL));
    /* No nodes at all. */
    g_autoptr(MsGraph) empty = ms_graph_new(0, deps_of, &d);
    CU_ASSERT_TRUE(ms_graph_sort(empty, NULL, NULL));
    CU_ASSERT_EQUAL(ms_graph_n_edges(empty), 0);
}

static const guint32 *
chain_deps(gconstpointer data, guint32 node, guint *n)
{
    const guint32 *next = data;
    *n = node + 1 < CHAIN ? 1 : 0;
    return next + node;
}

/* A long chain, each node waiting for the next: Kahn places it from the end. */
static void
test_chain(void)
{
    const guint n = CHAIN;
    g_autofree guint32 *next = g_new(guint32, n);
    for (guint i = 0; i < n; i++) {
        next[i] = i + 1;
    }
    g_autoptr(MsGraph) g = ms_graph_new(n, chain_deps, next);
    g_autofree guint32 *order = g_new(guint32, n);
    CU_ASSERT_TRUE_FATAL(ms_graph_sort(g, order, NULL));
    guint bad = 0;
    for (guint i = 0; i < n; i++) {
        bad += order[i] != n - 1 - i;
    }
    CU_ASSERT_EQUAL(bad, 0);
}

static GArray *
cycle_of(const Deps *d)
{
    g_autoptr(MsGraph) g = ms_graph_new(d->n, deps_of, d);
    guint32 order[16];
    GArray *cycle = NULL;
    CU_ASSERT_FALSE(ms_graph_sort(g, order, &cycle));
    CU_ASSERT_FALSE(ms_graph_sort(g, NULL, NULL));
    CU_ASSERT_PTR_NOT_NULL_FATAL(cycle);
    return cycle;
}

static void
test_cycles(void)
{
    /* A self-loop: node 1 waits for itself. */
    Deps self = {.n = 3, .lists = {none, (const gint[]){0, 1, -1}, (const gint[]){1, -1}}};
    deps_init(&self);
    g_autoptr(GArray) c1 = cycle_of(&self);
    CU_ASSERT_EQUAL_FATAL(c1->len, 1);
    CU_ASSERT_EQUAL(g_array_index(c1, guint32, 0), 1);
    /* Node 0 only waits for the cycle 2 -> 3 -> 4 -> 2 (2 waits for 3, ...): the cycle is named,
     * not node 0, starting from the first of its nodes the walk from 0 reaches. */
    Deps behind = {.n = 5,
                   .lists = {(const gint[]){1, 3, -1}, none, (const gint[]){3, -1},
                             (const gint[]){4, -1}, (const gint[]){1, 2, -1}}};
    deps_init(&behind);
    g_autoptr(GArray) c2 = cycle_of(&behind);
    CU_ASSERT_EQUAL_FATAL(c2->len, 3);
    CU_ASSERT_EQUAL(g_array_index(c2, guint32, 0), 3);
    CU_ASSERT_EQUAL(g_array_index(c2, guint32, 1), 4);
    CU_ASSERT_EQUAL(g_array_index(c2, guint32, 2), 2);
    /* Two cycles, 3 <-> 4 and 1 <-> 2: the walk starts at the lowest unplaced node, 1. */
    Deps two = {.n = 5,
                .lists = {none, (const gint[]){2, -1}, (const gint[]){1, 0, -1},
                          (const gint[]){4, -1}, (const gint[]){3, -1}}};
    deps_init(&two);
    g_autoptr(GArray) c3 = cycle_of(&two);
    CU_ASSERT_EQUAL_FATAL(c3->len, 2);
    CU_ASSERT_EQUAL(g_array_index(c3, guint32, 0), 1);
    CU_ASSERT_EQUAL(g_array_index(c3, guint32, 1), 2);
}

/* A dependency on a node that does not exist is the caller's bug: refused with a critical. */
static void
test_out_of_range(void)
{
    Deps d = {.n = 2, .lists = {none, (const gint[]){2, -1}}};
    deps_init(&d);
    /* The suite runs with criticals fatal (G_DEBUG=fatal-criticals): this one is expected. */
    GLogLevelFlags fatal = g_log_set_always_fatal(G_LOG_FATAL_MASK);
    guint handler = g_log_set_handler(NULL, G_LOG_LEVEL_CRITICAL, count_critical, NULL);
    criticals = 0;
    CU_ASSERT_PTR_NULL(ms_graph_new(d.n, deps_of, &d));
    CU_ASSERT_EQUAL(criticals, 1);
    g_log_remove_handler(NULL, handler);
    g_log_set_always_fatal(fatal);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"successor lists", test_successors},
        {"Kahn's order", test_kahn_order},
        {"a long chain", test_chain},
        {"the cycle named", test_cycles},
        {"a dependency out of range", test_out_of_range},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"graph", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
