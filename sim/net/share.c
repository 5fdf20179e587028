/* share: the registry of sharing models, and the exact weighted max-min solver (maxmin.h) behind
 * the interface. Adding a model: a file with its class, one line in the table below. */
#include "share.h"

#include "maxmin.h"

static gpointer
mm_create(void)
{
    return ms_maxmin_new();
}

static void
mm_destroy(gpointer s)
{
    ms_maxmin_free(s);
}

static guint32
mm_add_constraint(gpointer s, double capacity)
{
    return ms_maxmin_add_constraint(s, capacity);
}

static void
mm_set_capacity(gpointer s, guint32 c, double capacity)
{
    ms_maxmin_set_capacity(s, c, capacity);
}

static guint32
mm_add_variable(gpointer s, double weight, const guint32 *cnsts, guint n)
{
    return ms_maxmin_add_variable(s, weight, cnsts, n);
}

static void
mm_remove_variable(gpointer s, guint32 v)
{
    ms_maxmin_remove_variable(s, v);
}

static void
mm_solve(gpointer s, GArray *levels, GArray *moved, GArray *touched)
{
    ms_maxmin_solve_groups(s, levels, moved, touched);
}

static double
mm_level(gconstpointer s, guint32 c)
{
    return ms_maxmin_level(s, c);
}

static guint32
mm_bottleneck(gconstpointer s, guint32 v)
{
    return ms_maxmin_var_bottleneck(s, v);
}

static double
mm_load(gconstpointer s, guint32 c)
{
    return ms_maxmin_load(s, c);
}

static void
mm_set_budget(gpointer s, guint budget)
{
    ms_maxmin_set_budget(s, budget);
}

static void
mm_stats(gconstpointer s, MsShareStats *out)
{
    MsMaxminStats st;
    ms_maxmin_stats(s, &st);
    *out = (MsShareStats){
        .solves = st.solves,
        .component_vars = st.component_vars,
        .component_elems = st.component_elems,
        .repairs = st.repairs,
        .rescans = st.rescans,
        .propagations = st.propagations,
    };
}

static guint
mm_crossings(gconstpointer s, guint32 c)
{
    return ms_maxmin_n_crossings(s, c);
}

static guint32
mm_crossing(gconstpointer s, guint32 c, guint k)
{
    return ms_maxmin_crossing(s, c, k);
}

static gsize
mm_memory(gconstpointer s)
{
    return ms_maxmin_memory(s);
}

static const MsShareClass maxmin_class = {
    .name = "maxmin",
    .summary = "exact weighted max-min fairness per flow (SimGrid's CM02 sharing)",
    .create = mm_create,
    .destroy = mm_destroy,
    .add_constraint = mm_add_constraint,
    .set_capacity = mm_set_capacity,
    .add_variable = mm_add_variable,
    .remove_variable = mm_remove_variable,
    .solve = mm_solve,
    .level = mm_level,
    .bottleneck = mm_bottleneck,
    .load = mm_load,
    .crossings = mm_crossings,
    .crossing = mm_crossing,
    .set_budget = mm_set_budget,
    .stats = mm_stats,
    .memory = mm_memory,
};

static const MsShareClass *const models[] = {&maxmin_class};

const MsShareClass *
ms_share_lookup(const char *name)
{
    for (guint i = 0; i < G_N_ELEMENTS(models); i++) {
        if (g_strcmp0(models[i]->name, name) == 0) {
            return models[i];
        }
    }
    return NULL;
}

const MsShareClass *
ms_share_nth(guint i)
{
    return i < G_N_ELEMENTS(models) ? models[i] : NULL;
}
