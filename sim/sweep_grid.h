/* sweep_grid: the axes of a sweep and the points they span. An axis is a key (what varies) and
 * its values, checked when the axis is added; points are numbered in mixed radix with the first
 * axis varying slowest, so that point order is grid order. Knows nothing of what the keys mean
 * beyond the shape of their values (sweep_variants.h applies them). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define MS_SWEEP_GRID_ERROR (ms_sweep_grid_error_quark())
GQuark ms_sweep_grid_error_quark(void);
typedef enum {
    MS_SWEEP_GRID_ERROR_AXIS,  /* an unknown key, a repeated key, no value or an empty one */
    MS_SWEEP_GRID_ERROR_VALUE, /* a value that does not fit its key */
    MS_SWEEP_GRID_ERROR_LIMIT, /* a grid with more points than MS_SWEEP_MAX_POINTS */
} MsSweepGridError;

#define MS_SWEEP_MAX_POINTS 100000u

/* The keys an axis may vary, NULL-terminated: policy, topology, model, mode, nodes, experts,
 * chunk, iterations, seed, and the generated routing's zipf, hot, corr, drift, tokens. */
const char *const *ms_sweep_keys(void);
/* Whether key varies the generated routing (zipf, hot, corr, drift, tokens). */
gboolean ms_sweep_key_is_routing(const char *key);

typedef struct _MsSweepGrid MsSweepGrid;

MsSweepGrid *ms_sweep_grid_new(void);
void ms_sweep_grid_free(MsSweepGrid *grid);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsSweepGrid, ms_sweep_grid_free)

/* Adds "KEY=V1,V2,..." (values separated by ';' instead when any contains a ','). Counts
 * (nodes, experts, iterations, seed, tokens) must be whole numbers from 1 to 2^26, chunk a size
 * with a unit, the other routing keys non-negative numbers, mode train or infer. Errors: _AXIS,
 * _VALUE (naming key and value), _LIMIT; the grid is unchanged after an error. */
gboolean ms_sweep_grid_add_axis(MsSweepGrid *grid, const char *spec, GError **error);

guint ms_sweep_grid_n_points(const MsSweepGrid *grid);
guint ms_sweep_grid_n_axes(const MsSweepGrid *grid);
const char *ms_sweep_grid_key(const MsSweepGrid *grid, guint axis);
/* The axis of a key, or -1 when the grid does not vary it. */
gint ms_sweep_grid_find(const MsSweepGrid *grid, const char *key);
guint ms_sweep_grid_n_values(const MsSweepGrid *grid, guint axis);
const char *ms_sweep_grid_axis_value(const MsSweepGrid *grid, guint axis, guint index);
/* The index of a point's value on an axis, and the value itself. */
guint ms_sweep_grid_index(const MsSweepGrid *grid, guint point, guint axis);
const char *ms_sweep_grid_value(const MsSweepGrid *grid, guint point, guint axis);

G_END_DECLS
