/* scenario: one point of a what-if study, end to end. A topology (optionally calibrated), a
 * model, a routing source, a policy, a mode and a number of iterations: each iteration's routing
 * is planned into a schedule by the policy and executed (simulated by default), and the result
 * collects the metrics of every iteration and the per-op records of the first. `moesim run`,
 * `compare`, `sweep` and `check` are all made of scenarios. */
#pragma once

#include <glib.h>

#include "sim/moe/plan.h"
#include "sim/out/result.h"

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

typedef struct {
    const char *topology; /* name or file; NULL: MS_SCENARIO_TOPOLOGY */
    const char *model;    /* name or file; NULL: MS_SCENARIO_MODEL */
    /* A trace file, "sample:NAME", or "gen:KEY=VALUE,..." whose keys override the generator's
     * defaults for this model and topology (see ms_scenario_gen_spec); NULL: "gen:". */
    const char *trace;
    const char *policy; /* "NAME[:key=value,...]"; NULL: MS_SCENARIO_POLICY */
    MsPlanMode mode;
    guint iterations;        /* measured iterations; 0: 1 for generated traces, else the trace's */
    guint warmup;            /* iterations read first only to teach Lina's path profile */
    guint64 seed;            /* generated traces */
    const char *calibration; /* NULL: the topology's nominal figures */
    const char *backend;     /* NULL or "sim": simulate; "cpu" or "cuda": execute */
    gboolean check_invariants;
    gboolean record_links; /* link-utilisation series in the detail records */
    const gint *cancel;    /* stop between iterations when *cancel != 0 (may be NULL) */
} MsScenario;

/* Runs the scenario. Returns NULL with the error of whatever failed (a file, the trace shape
 * against the model and topology, the policy, the plan, the execution). */
MsResult *ms_scenario_run(const MsScenario *sc, GError **error);

/* The generator spec used for "gen:OVERRIDES" (or no trace): ranks = the topology's GPUs,
 * experts, MoE layers and top-k (training or inference) of the model, tokens = the model's tokens
 * per GPU (training step or inference batch), iterations = warmup + iterations, seed, and the
 * documented default skew (hottest expert at 1.5x the mean load, corr = 0.5, drift = 0.02), then
 * the overrides. */
char *ms_scenario_gen_spec(const MsScenario *sc, GError **error);

G_END_DECLS
