/* sweep: a grid of scenarios. Axes vary the policy, topology, model, mode, routing skew and shape,
 * cluster size and chunk size of a base scenario; every grid point is a scenario run on a pool of
 * worker threads, and rows come out in grid order whatever order they finish in. A grid can also
 * be split into shards (one per Slurm array task) whose rows are merged later into the same CSV. */
#pragma once

#include <glib.h>

#include "sim/out/result.h"
#include "sim/scenario.h"

G_BEGIN_DECLS

#define MS_SWEEP_ERROR (ms_sweep_error_quark())
GQuark ms_sweep_error_quark(void);
typedef enum {
    MS_SWEEP_ERROR_AXIS,  /* an unknown key, a repeated key, an empty or too long value list */
    MS_SWEEP_ERROR_VALUE, /* a value that does not fit its key */
    MS_SWEEP_ERROR_LIMIT, /* a grid with more points than MS_SWEEP_MAX_POINTS */
    MS_SWEEP_ERROR_IO,
    MS_SWEEP_ERROR_MERGE, /* shard files that do not make one grid */
} MsSweepError;

#define MS_SWEEP_MAX_POINTS 100000u

typedef struct _MsSweep MsSweep;

/* A sweep over base. Axes are added with ms_sweep_add_axis; generated variants of topologies and
 * models (nodes=, experts=) are written under work_dir. */
MsSweep *ms_sweep_new(const MsScenario *base, const char *work_dir);
void ms_sweep_free(MsSweep *sw);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsSweep, ms_sweep_free)

/* "KEY=V1,V2,..." (values separated by ';' instead when any contains a ','). Keys: policy,
 * topology, model, mode, nodes, experts, chunk, iterations, seed, and the generator's routing
 * keys zipf, hot, corr, drift, tokens. */
gboolean ms_sweep_add_axis(MsSweep *sw, const char *spec, GError **error);

guint ms_sweep_n_points(const MsSweep *sw);
guint ms_sweep_n_axes(const MsSweep *sw);
const char *ms_sweep_axis_key(const MsSweep *sw, guint axis);
/* The value of an axis at a point (the first axis varies slowest). */
const char *ms_sweep_value(const MsSweep *sw, guint point, guint axis);

typedef void (*MsSweepProgressFn)(guint done, guint total, gpointer ctx);

/* Runs the points with point % shards == shard on jobs threads (0: one per CPU). Stops starting
 * points when *cancel becomes non-zero; points already done are kept. Returns FALSE with the first
 * error of a point (the others still finish). */
gboolean ms_sweep_run(MsSweep *sw, guint jobs, guint shard, guint shards, const gint *cancel,
                      MsSweepProgressFn progress, gpointer ctx, GError **error);
/* The result of a point, NULL when it did not run (another shard, cancelled, failed). */
MsResult *ms_sweep_result(const MsSweep *sw, guint point);

/* CSV of the points that ran: point index, the axis values, then the metrics. */
gboolean ms_sweep_write_csv(const MsSweep *sw, const char *path, GError **error);
/* Merges shard CSVs written by ms_sweep_write_csv into one, in point order; refuses files with
 * different columns or a point given twice. Returns the number of rows. */
gboolean ms_sweep_merge_csv(const char *const *inputs, const char *output, guint *rows,
                            GError **error);
/* One plot per numeric axis: step time against the axis value, one line per value of the other
 * axes, from a sweep CSV. */
gboolean ms_sweep_plot_csv(const char *csv, const char *dir, GError **error);

G_END_DECLS
