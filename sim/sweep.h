/* sweep: a grid of scenarios run on a pool of worker threads. Axes (sweep_grid.h) vary the
 * policy, topology, model, mode, routing skew and shape, cluster size and chunk size of a base
 * scenario; before any point runs, every input the points need is loaded once in the calling
 * thread (sweep_variants.h), so workers only plan and run. Rows come out in grid order whatever
 * order points finish in; a grid can also run as shards (sweep_shards.h) merged later. */
#pragma once

#include <glib.h>

#include "sim/inputs.h"
#include "sim/out/result.h"
#include "sim/scenario.h"
#include "sim/sweep_grid.h"

G_BEGIN_DECLS

#define MS_SWEEP_ERROR (ms_sweep_error_quark())
GQuark ms_sweep_error_quark(void);
typedef enum {
    MS_SWEEP_ERROR_IO,
    MS_SWEEP_ERROR_RESUME, /* rows to resume from that are not this sweep's */
} MsSweepError;

typedef struct _MsSweep MsSweep;

/* A sweep over the loaded inputs base (borrowed) with the runner, mode, iterations, warm-up and
 * seed of settings (its objects are ignored: base gives them). Axes are added with
 * ms_sweep_add_axis. */
MsSweep *ms_sweep_new(const MsInputs *base, const MsScenario *settings);
void ms_sweep_free(MsSweep *sw);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsSweep, ms_sweep_free)

/* ms_sweep_grid_add_axis on the sweep's grid. */
gboolean ms_sweep_add_axis(MsSweep *sw, const char *spec, GError **error);
const MsSweepGrid *ms_sweep_grid(const MsSweep *sw);
guint ms_sweep_n_points(const MsSweep *sw);

/* Loads and builds what the points need and checks every point's routing
 * (ms_sweep_variants_new, ms_sweep_variants_check: their errors); after this no axis may be
 * added. ms_sweep_run prepares when it was not done. */
gboolean ms_sweep_prepare(MsSweep *sw, GError **error);

/* Keeps the rows a previous run of this sweep wrote to the table (or journal) at path, so that
 * their points do not run again: rows of shard `shard` of `shards` whose axis values are this
 * grid's. A missing file keeps nothing. MS_SWEEP_ERROR_RESUME (naming file:line) for a table of
 * other columns, a row of another grid or shard, or two different rows of a point; _IO. Call
 * after ms_sweep_prepare, before ms_sweep_run; *kept: the rows kept so far. */
gboolean ms_sweep_resume(MsSweep *sw, const char *path, guint shard, guint shards, guint *kept,
                         GError **error);

/* Writes the table's header to path (created anew; with append, a file already there is kept and
 * added to) and then each row as its point finishes, in finishing order: a sweep that stops
 * early (a failed point, Ctrl-C, a killed process) keeps there what it finished.
 * MS_SWEEP_ERROR_IO when path cannot be written; a write that fails during the run is the run's
 * error. */
gboolean ms_sweep_open_journal(MsSweep *sw, const char *path, gboolean append, GError **error);
/* Closes the journal; FALSE with MS_SWEEP_ERROR_IO when it could not be written whole. */
gboolean ms_sweep_close_journal(MsSweep *sw, GError **error);

typedef void (*MsSweepProgressFn)(guint done, guint total, gpointer ctx);

/* Runs the points of shard `shard` of `shards` (sweep_shards.h) that have no row yet (see
 * ms_sweep_resume) on jobs threads (0: one per CPU); once per sweep.
 * Stops starting points when *cancel becomes non-zero; points already done are kept. Returns
 * FALSE with the preparation's error (nothing ran) or the first error of a point ("sweep point
 * N: ..."; the other points still finish). progress is called after each point, from the worker
 * that ran it, one call at a time. */
gboolean ms_sweep_run(MsSweep *sw, guint jobs, guint shard, guint shards, const gint *cancel,
                      MsSweepProgressFn progress, gpointer ctx, GError **error);
/* The table row of a point (sweep_csv.h, no newline), NULL when it did not run (another shard,
 * cancelled, failed). A point's result is made into its row as soon as the point finishes and
 * freed, so a sweep holds a row per point, never the points' schedules and records. */
const char *ms_sweep_row(const MsSweep *sw, guint point);
/* Points that ran. */
guint ms_sweep_n_done(const MsSweep *sw);

/* The table of the points that ran (sweep_csv.h), in point order, written to path (a temporary
 * file renamed into place, so path is never left half written); MS_SWEEP_ERROR_IO. */
gboolean ms_sweep_write_csv(const MsSweep *sw, const char *path, GError **error);

G_END_DECLS
