/* validation: simulated against measured. Per-op comparison of two result files of the same
 * schedule (what `moesim run` and `moesim exec` write), agreement of policy rankings (Kendall's
 * tau-b), and error statistics; plots of predicted against measured. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "validate/fit.h"

G_BEGIN_DECLS

#define MS_VALIDATION_ERROR (ms_validation_error_quark())
GQuark ms_validation_error_quark(void);
typedef enum {
    MS_VALIDATION_ERROR_FORMAT,   /* not a moesim result */
    MS_VALIDATION_ERROR_MISMATCH, /* results of different schedules */
    MS_VALIDATION_ERROR_EMPTY,    /* measurements with nothing to compare */
} MsValidationError;

typedef struct {
    guint32 op;
    const char *label; /* owned by the simulated result's JSON */
    const char *role;
    double predicted_us, measured_us; /* op durations */
    gint64 rank;                      /* its GPU, -1 when the result does not say */
    gboolean compute;                 /* a compute op (its "kind"; FALSE when not given) */
} MsOpPair;

typedef struct {
    GArray *ops;              /* MsOpPair, ops with a measured duration above min_us */
    double step_predicted_us; /* summary step (batch) time */
    double step_measured_us;
    double wait_predicted_us, wait_measured_us; /* summary comm_wait_us, NAN when absent */
    const char *policy;
} MsRunComparison;

/* Loads a result file (format moesim-result); the root node is returned (caller unrefs). Fails
 * with _FORMAT ("FILE: problem") for unreadable JSON, another format, no "ops" array, an op that
 * is not an object with an integer id, a string label (and role, when given) and finite start_us
 * <= end_us, a policy that is not a string, or a summary without a numeric step_time_us. */
JsonNode *ms_result_file_load(const char *path, GError **error);
/* The same checks on a parsed document (root may be NULL); path names it in messages. Returns a
 * copy of root. */
JsonNode *ms_result_check(JsonNode *root, const char *path, GError **error);

/* Pairs the ops of two loaded results of the same schedule (same op ids and labels); ops whose
 * measured duration is not above min_us are left out (timer resolution dominates them). Fills
 * cmp (free with ms_run_comparison_clear). Fails with _MISMATCH when op counts, ids or labels
 * differ. */
gboolean ms_compare_runs(JsonNode *simulated, JsonNode *measured, double min_us,
                         MsRunComparison *cmp, GError **error);
void ms_run_comparison_clear(MsRunComparison *cmp);

/* Kendall's tau-b between two rankings (n >= 2; ties handled); 1 = same order. */
double ms_kendall_tau(const double *a, const double *b, guint n);

/* A configuration of the plots (a pair of runs, a group of a table): its legend entry and how
 * many of the items, taken in order, are its. */
typedef struct {
    const char *name;
    guint n;
} MsPlotGroup;

/* Writes DIR/scatter.png (predicted against measured, log-log, with y = x) and DIR/errors.png
 * (histogram of relative errors in percent, stacked by configuration), a colour and a legend
 * entry per group (n_groups of them, their n adding up to n; none: one unnamed group). */
gboolean ms_validation_plots(const char *dir, const char *title, const MsPlotGroup *groups,
                             guint n_groups, const double *predicted, const double *measured,
                             guint n, GError **error);

/* A prediction drawn on curves.png: its legend name and every item's predicted time (us). */
typedef struct {
    const char *name;
    const double *predicted;
} MsPlotModel;

/* Writes DIR/curves.png: bus bandwidth (GB/s: size / time x factor, the times in microseconds)
 * against size (log2 x), nccl-tests' curves: per group a colour, its measured items as points and
 * a line per model (a dash type each, n_models of them). Items without a size or factor (0) are
 * left out; a group left with none draws nothing. Fails as ms_validation_plots. */
gboolean ms_validation_curves(const char *dir, const char *title, const MsPlotGroup *groups,
                              guint n_groups, const double *size, const double *factor,
                              const double *measured, const MsPlotModel *models, guint n_models,
                              guint n, GError **error);

G_END_DECLS
