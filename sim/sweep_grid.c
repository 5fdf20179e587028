/* sweep_grid: axes as key and value lists, points in mixed radix. */
#include "sweep_grid.h"

#include <string.h>

#include "sim/base/units.h"
#include "sim/moe/plan.h"

G_DEFINE_QUARK(ms_sweep_grid_error_quark, ms_sweep_grid_error)

/* The largest count an axis takes: as large as the model's tokens per GPU may be. */
#define MAX_COUNT (1u << 26)

static const char *const keys[] = {"policy",    "topology", "model",      "mode",   "nodes",
                                   "experts",   "chunk",    "iterations", "seed",   "zipf",
                                   "hot",       "corr",     "drift",      "tokens", "straggler",
                                   "slow-link", "net",      NULL};
static const char *const routing_keys[] = {"zipf", "hot", "corr", "drift", "tokens", NULL};
static const char *const count_keys[] = {"nodes", "experts", "iterations", "seed", "tokens", NULL};

typedef struct {
    char *key;
    GPtrArray *values; /* char* */
} Axis;

struct _MsSweepGrid {
    GPtrArray *axes; /* Axis* */
};

const char *const *
ms_sweep_keys(void)
{
    return keys;
}

gboolean
ms_sweep_key_is_routing(const char *key)
{
    return g_strv_contains(routing_keys, key);
}

static void
axis_free(gpointer p)
{
    Axis *a = p;
    g_free(a->key);
    g_ptr_array_unref(a->values);
    g_free(a);
}

MsSweepGrid *
ms_sweep_grid_new(void)
{
    MsSweepGrid *g = g_new0(MsSweepGrid, 1);
    g->axes = g_ptr_array_new_with_free_func(axis_free);
    return g;
}

void
ms_sweep_grid_free(MsSweepGrid *g)
{
    if (g == NULL) {
        return;
    }
    g_ptr_array_unref(g->axes);
    g_free(g);
}

static const Axis *
axis_at(const MsSweepGrid *g, guint axis)
{
    return g->axes->pdata[axis];
}

guint
ms_sweep_grid_n_points(const MsSweepGrid *g)
{
    guint n = 1;
    for (guint a = 0; a < g->axes->len; a++) {
        n *= axis_at(g, a)->values->len;
    }
    return n;
}

guint
ms_sweep_grid_n_axes(const MsSweepGrid *g)
{
    return g->axes->len;
}

const char *
ms_sweep_grid_key(const MsSweepGrid *g, guint axis)
{
    return axis_at(g, axis)->key;
}

gint
ms_sweep_grid_find(const MsSweepGrid *g, const char *key)
{
    for (guint a = 0; a < g->axes->len; a++) {
        if (!strcmp(axis_at(g, a)->key, key)) {
            return (gint)a;
        }
    }
    return -1;
}

guint
ms_sweep_grid_n_values(const MsSweepGrid *g, guint axis)
{
    return axis_at(g, axis)->values->len;
}

const char *
ms_sweep_grid_axis_value(const MsSweepGrid *g, guint axis, guint index)
{
    return axis_at(g, axis)->values->pdata[index];
}

guint
ms_sweep_grid_index(const MsSweepGrid *g, guint point, guint axis)
{
    /* Mixed radix with the first axis slowest. */
    for (guint a = g->axes->len; a-- > axis + 1;) {
        point /= axis_at(g, a)->values->len;
    }
    return point % axis_at(g, axis)->values->len;
}

const char *
ms_sweep_grid_value(const MsSweepGrid *g, guint point, guint axis)
{
    return ms_sweep_grid_axis_value(g, axis, ms_sweep_grid_index(g, point, axis));
}

static gboolean
check_value(const char *key, const char *v, GError **error)
{
    guint64 u;
    double d;
    if (g_strv_contains(count_keys, key)) {
        if (!ms_parse_uint(v, 1, MAX_COUNT, &u, NULL)) {
            g_set_error(error, MS_SWEEP_GRID_ERROR, MS_SWEEP_GRID_ERROR_VALUE,
                        "sweep: %s=%s: expected a whole number from 1 to %u", key, v, MAX_COUNT);
            return FALSE;
        }
    } else if (!strcmp(key, "chunk")) {
        if (!ms_parse_bytes(v, &u, NULL) || u == 0) {
            g_set_error(error, MS_SWEEP_GRID_ERROR, MS_SWEEP_GRID_ERROR_VALUE,
                        "sweep: chunk=%s: expected a size with a unit, e.g. 8MB", v);
            return FALSE;
        }
    } else if (ms_sweep_key_is_routing(key)) {
        if (!ms_parse_double(v, 0, 1e6, &d, NULL)) {
            g_set_error(error, MS_SWEEP_GRID_ERROR, MS_SWEEP_GRID_ERROR_VALUE,
                        "sweep: %s=%s: expected a non-negative number", key, v);
            return FALSE;
        }
    } else if (!strcmp(key, "mode")) {
        MsPlanMode m;
        if (!ms_plan_mode_from_name(v, &m)) {
            g_set_error(error, MS_SWEEP_GRID_ERROR, MS_SWEEP_GRID_ERROR_VALUE,
                        "sweep: mode=%s: expected train or infer", v);
            return FALSE;
        }
    }
    return TRUE;
}

gboolean
ms_sweep_grid_add_axis(MsSweepGrid *g, const char *spec, GError **error)
{
    const char *eq = strchr(spec, '=');
    g_autofree char *key = eq ? g_strstrip(g_strndup(spec, eq - spec)) : NULL;
    if (key == NULL || !g_strv_contains(keys, key)) {
        g_autofree char *list = g_strjoinv(", ", (char **)keys);
        g_set_error(error, MS_SWEEP_GRID_ERROR, MS_SWEEP_GRID_ERROR_AXIS,
                    "sweep: '%s' is not KEY=V1,V2,... with KEY one of %s", spec, list);
        return FALSE;
    }
    if (ms_sweep_grid_find(g, key) >= 0) {
        g_set_error(error, MS_SWEEP_GRID_ERROR, MS_SWEEP_GRID_ERROR_AXIS, "sweep: %s varied twice",
                    key);
        return FALSE;
    }
    const char *list = eq + 1;
    if (*list == '\0') {
        g_set_error(error, MS_SWEEP_GRID_ERROR, MS_SWEEP_GRID_ERROR_AXIS,
                    "sweep: %s= lists no value", key);
        return FALSE;
    }
    g_auto(GStrv) vals = g_strsplit(list, strchr(list, ';') ? ";" : ",", -1);
    Axis *ax = g_new0(Axis, 1);
    ax->key = g_steal_pointer(&key);
    ax->values = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; vals[i]; i++) {
        g_strstrip(vals[i]);
        if (vals[i][0] == '\0') {
            g_set_error(error, MS_SWEEP_GRID_ERROR, MS_SWEEP_GRID_ERROR_AXIS,
                        "sweep: %s has an empty value", ax->key);
            axis_free(ax);
            return FALSE;
        }
        if (!check_value(ax->key, vals[i], error)) {
            axis_free(ax);
            return FALSE;
        }
        g_ptr_array_add(ax->values, g_strdup(vals[i]));
    }
    guint64 total = (guint64)ms_sweep_grid_n_points(g) * ax->values->len;
    if (total > MS_SWEEP_MAX_POINTS) {
        g_set_error(error, MS_SWEEP_GRID_ERROR, MS_SWEEP_GRID_ERROR_LIMIT,
                    "sweep: %" G_GUINT64_FORMAT " grid points, more than %u", total,
                    MS_SWEEP_MAX_POINTS);
        axis_free(ax);
        return FALSE;
    }
    g_ptr_array_add(g->axes, ax);
    return TRUE;
}
