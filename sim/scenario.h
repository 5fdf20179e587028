/* scenario: one point of a what-if study, end to end. Loaded inputs (a topology, optionally
 * calibrated, a model, a policy and a routing source), a mode, a number of iterations and a
 * runner: each iteration's routing is planned into a schedule by the policy (sim/policy/planner.h)
 * and executed by the runner (the engine, or a backend the command line adapts), and the result
 * collects the metrics of every iteration and the per-op records of the first, and the engine's
 * counters (events, flows) summed; no wall-clock figure, so identical inputs give identical
 * results. `moesim run`,
 * `compare`, `sweep` and `check` are all made of scenarios; sim/inputs.h loads their inputs. */
#pragma once

#include <glib.h>

#include "sim/moe/model.h"
#include "sim/moe/plan.h"
#include "sim/out/result.h"
#include "sim/policy/policy.h"
#include "sim/rank_map.h"
#include "sim/routing_source.h"
#include "sim/runner.h"

G_BEGIN_DECLS

#define MS_SCENARIO_ERROR (ms_scenario_error_quark())
GQuark ms_scenario_error_quark(void);
typedef enum {
    MS_SCENARIO_ERROR_INVALID,   /* options that do not fit together */
    MS_SCENARIO_ERROR_CANCELLED, /* stopped by the cancel flag */
} MsScenarioError;

/* Defaults of a scenario without options: the README's "shows the point" study. */
#define MS_SCENARIO_TOPOLOGY "lina-testbed"
#define MS_SCENARIO_MODEL "lina-gpt2-16e"
#define MS_SCENARIO_POLICY "fifo"

typedef struct _MsCalibration MsCalibration; /* sim/calib/calibration.h */

/* Where a run can hand each measured iteration's schedule and records as it finishes (a Chrome
 * trace written as the run goes, sim/out/chrome_trace.h), so that nothing needs to keep them all.
 * wants says whether an iteration (measured, from 0) goes to each; the runner then records it in
 * detail (link series). each returning FALSE with an error stops the run with that error. */
typedef struct {
    gboolean (*wants)(gpointer data, guint iteration);
    gboolean (*each)(gpointer data, guint iteration, const MsSchedule *s, const MsRecords *r,
                     GError **error);
    gpointer data;
} MsIterationSink;

/* Everything is borrowed for the run. Several scenarios may run at once on the same objects. */
typedef struct {
    const MsTopology *topology; /* calibrated already when calibration is given */
    const MsModel *model;
    const MsCalibration *calibration; /* what the inputs were calibrated with (NULL: nominal
                                       * figures); the result notes which */
    const MsPolicy *policy;
    const MsRoutingSource *routing; /* NULL: generated with the defaults */
    const MsRunner *runner;         /* executes every planned iteration */
    MsPlanMode mode;
    guint iterations;   /* measured iterations; 0: 1 for generated routing, else the trace's */
    guint warmup;       /* iterations read first only to teach Lina's path profile */
    guint64 seed;       /* generated routing (0: 1) */
    gboolean layers;    /* keep per-layer figures of every iteration (ms_result_layers) */
    MsRankMap ranks;    /* the routing's ranks on the topology's GPUs (zero: one to one) */
    const gint *cancel; /* stop between iterations when *cancel != 0 (may be NULL) */
    const MsIterationSink *sink; /* NULL: none */
    const char *const *notes;    /* more notes for the result (a what-if's), NULL-terminated */
    const double *pace;          /* a straggler what-if's pace per GPU for the runner (NULL: none,
                                  * the runner's own; MsRunWhatIf) */
    guint n_pace;
    const MsNetSpec *net; /* a network model for the runner (NULL: the runner's own) */
    /* Iterations a pure runner (the simulator) executes at once on worker threads, planned in
     * order on the calling thread and added to the result in order, so that the result is the
     * same for any count; 0 or 1: one at a time on the calling thread. */
    guint workers;
} MsScenario;

/* Runs the scenario. Returns NULL with the error of whatever failed (the routing, its shape
 * against the model and topology, the policy, the plan, the runner), MS_SCENARIO_ERROR_CANCELLED,
 * or MS_SCENARIO_ERROR_INVALID when no iteration is left after the warm-up or the trace holds
 * fewer than the iterations asked for. */
MsResult *ms_scenario_run(const MsScenario *sc, GError **error);

G_END_DECLS
