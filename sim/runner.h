/* runner: what executes a schedule and reports its per-op records. The engine (modelled time,
 * sim/engine.h) is one runner; the cpu and cuda backends become others through an adapter of the
 * command line, the only layer above backends/. A scenario runs every iteration through one
 * runner and never knows which kind it has. */
#pragma once

#include <glib.h>

#include "sim/net/net_model.h"
#include "sim/schedule/records.h"
#include "sim/schedule/schedule.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

typedef struct _MsRunner MsRunner;

/* What one execution asks beyond the runner's own settings: a sweep point's straggler what-if
 * and network model. A runner that cannot honour it (a real GPU is as slow as it is, a real
 * network as it is) refuses the execution. */
typedef struct {
    const double *pace; /* per GPU (sim/engine.h MsEngineOptions.pace); NULL: the runner's own */
    guint n_pace;
    const MsNetSpec *net; /* the simulator's network model; NULL: the runner's own */
} MsRunWhatIf;

/* Executes s on topo and returns its records, or NULL with the runner's error. detail: the
 * records will be kept whole (a run's first iteration), so the runner may record what only the
 * detailed outputs use (link utilisation series). A sweep's workers share one runner, so the
 * function may be called from several threads at once. what_if may be NULL (nothing asked). */
typedef MsRecords *(*MsRunnerFn)(gpointer data, const MsSchedule *s, const MsTopology *topo,
                                 gboolean detail, const MsRunWhatIf *what_if, GError **error);

/* A runner called name (what results give as their "backend": "sim", "cpu", "cuda") that calls
 * execute with data; free_data (may be NULL) releases data with the runner. */
MsRunner *ms_runner_new(const char *name, MsRunnerFn execute, gpointer data,
                        GDestroyNotify free_data);
void ms_runner_free(MsRunner *runner);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsRunner, ms_runner_free)

const char *ms_runner_name(const MsRunner *runner);
/* A pure runner's records are a function of the schedule's work (ms_schedule_work_digest), the
 * topology, the detail flag and the what-if: the simulator is, a real GPU is not. A scenario
 * reuses a pure runner's records for an iteration whose work repeats the one before it. FALSE
 * unless set. */
void ms_runner_set_pure(MsRunner *runner, gboolean pure);
gboolean ms_runner_pure(const MsRunner *runner);
/* Runs the execute function; its errors are returned as they are. */
MsRecords *ms_runner_execute(const MsRunner *runner, const MsSchedule *s, const MsTopology *topo,
                             gboolean detail, const MsRunWhatIf *what_if, GError **error);

G_END_DECLS
