/* gate: the regression gate for CI pipelines. A baseline (JSON, format "moesim-baseline") lists
 * scenarios by the names of their inputs and the figures each is expected to give; the gate
 * reruns them on the engine and flags every figure worse than expected by more than a tolerance.
 * All figures are times in microseconds, lower is better. Since runs are deterministic the
 * tolerance only absorbs deliberate model changes. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define MS_GATE_ERROR (ms_gate_error_quark())
GQuark ms_gate_error_quark(void);
typedef enum {
    MS_GATE_ERROR_FORMAT, /* not a baseline, or a scenario field that is not what it must be */
    MS_GATE_ERROR_EXPECT, /* expected figures missing, unknown, or not positive numbers */
} MsGateError;

/* The figures a baseline may expect, NULL-terminated: step_time_us, step_time_p95_us, a2a_us,
 * exposed_comm_us, allreduce_us. */
const char *const *ms_gate_metrics(void);

typedef struct _MsBaseline MsBaseline;

/* Reads a baseline and checks its form and every scenario's fields (name, topology, model, trace,
 * policy, mode, iterations, warmup, seed, expect); nothing is loaded or run. Errors name the file
 * (and line for JSON syntax, MS_JSON_INPUT_ERROR) and the scenario: MS_GATE_ERROR_FORMAT. */
MsBaseline *ms_baseline_load(const char *path, GError **error);
void ms_baseline_free(MsBaseline *baseline);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsBaseline, ms_baseline_free)

const char *ms_baseline_path(const MsBaseline *baseline);
guint ms_baseline_n_scenarios(const MsBaseline *baseline);
/* A scenario's "name", or "scenario N" without one. */
const char *ms_baseline_name(const MsBaseline *baseline, guint scenario);

typedef enum {
    MS_GATE_OK,
    MS_GATE_REGRESSED, /* worse than expected by more than the tolerance */
    MS_GATE_IMPROVED,  /* better by more than the tolerance: the baseline is out of date */
} MsGateVerdict;

/* One figure compared. */
typedef struct {
    guint scenario;
    const char *name;   /* the scenario's */
    gboolean first;     /* the scenario's first figure */
    const char *metric; /* one of ms_gate_metrics() */
    double expected_us, measured_us;
    double change; /* measured / expected - 1 */
    MsGateVerdict verdict;
} MsGateFigure;

typedef struct {
    guint scenarios, figures, regressed, improved;
} MsGateSummary;

typedef void (*MsGateFigureFn)(const MsGateFigure *figure, gpointer ctx);

/* Reruns every scenario (the engine on nominal figures) and compares the figures its expect holds
 * with tolerance (a fraction: 0.02 is 2%), calling each (may be NULL) per figure as it goes.
 * Fills summary. Fails before running anything when a scenario's expect is missing, not an
 * object, empty, or holds an unknown figure or one that is not a positive number
 * (MS_GATE_ERROR_EXPECT, "FILE: scenario N: ..."), or with the error of a scenario that does not
 * run. */
gboolean ms_gate_check(const MsBaseline *baseline, double tolerance, MsGateFigureFn each,
                       gpointer ctx, MsGateSummary *summary, GError **error);

typedef void (*MsGateScenarioFn)(guint scenario, const char *name, gpointer ctx);

/* Reruns every scenario and replaces its expect with every figure it gives (rounded to 1e-3
 * us) but those of 0, which cannot be expected, calling each (may be NULL) after each scenario.
 * Errors as ms_gate_check. */
gboolean ms_gate_update(MsBaseline *baseline, MsGateScenarioFn each, gpointer ctx, GError **error);
/* Writes the baseline (pretty JSON) to path. */
gboolean ms_baseline_write(const MsBaseline *baseline, const char *path, GError **error);

G_END_DECLS
