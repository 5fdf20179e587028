/* validation_report: what `moesim validate` reports, as data. Either pairs of results of the same
 * schedule (simulated against measured: op-by-op errors per pair, step times, and how well the
 * simulated step times rank the pairs, Kendall's tau-b) or measurement tables predicted on a
 * topology (errors per group of one kind and configuration); both end with the errors of every
 * item compared. Errors are relative: predicted / measured - 1 (validate/fit.h). */
#pragma once

#include <glib.h>

#include "sim/net/net_model.h"
#include <json-glib/json-glib.h>

#include "sim/calib/calibration.h"
#include "topologies/topology.h"
#include "validate/fit.h"
#include "validate/measurement.h"

G_BEGIN_DECLS

/* One line of the report. */
typedef struct {
    char *name;         /* runs: the policy; tables: "KIND RANKSxPER_NODE[ LABEL]" */
    MsErrorStats stats; /* over the pair's ops or the group's measurements */
    double step_simulated_us, step_measured_us; /* runs only (NAN for tables) */
    /* Runs only: the wait for peers (summary comm_wait_us, NAN when a result lacks it) and the
     * GPUs' compute paces (validate/pace_fit.h; MsGpuPace, NULL for tables). */
    double wait_simulated_us, wait_measured_us;
    GArray *paces;
} MsReportRow;

typedef struct _MsValidationReport MsValidationReport;

/* Compares simulated[i] with measured[i] (result files, NULL-terminated, as many of each) op by
 * op, leaving out ops measured not longer than min_us. Fails with the files' errors
 * (ms_result_file_load, ms_compare_runs, prefixed with the pair), MS_VALIDATION_ERROR_MISMATCH
 * when a pair has no op left to compare. */
MsValidationReport *ms_validation_report_runs(const char *const *simulated,
                                              const char *const *measured, double min_us,
                                              GError **error);
/* Predicts every row of the measurement tables files (NULL-terminated) on topo with cal (may be
 * NULL: nominal figures) under the network model net (NULL: the flow model), grouped by kind,
 * ranks, ranks per node and label in the order they appear; an alltoall_under_allreduce row by
 * its time under the allreduce (validate/nic_fit.h, without cal's per-collective figures). Fails
 * with a table's or a prediction's error, or MS_VALIDATION_ERROR_EMPTY when the tables hold
 * nothing. The tables are read with read (NULL: no options; measurement.h). */
MsValidationReport *ms_validation_report_tables(const char *const *files,
                                                const MsMeasurementReadOptions *read,
                                                const MsTopology *topo, const MsCalibration *cal,
                                                MsNetModel *net, GError **error);
void ms_validation_report_free(MsValidationReport *report);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsValidationReport, ms_validation_report_free)

/* TRUE for a report of runs, FALSE for tables. */
gboolean ms_validation_report_is_runs(const MsValidationReport *report);
guint ms_validation_report_n_rows(const MsValidationReport *report);
const MsReportRow *ms_validation_report_row(const MsValidationReport *report, guint i);
/* Kendall's tau-b of simulated against measured step times over the pairs; NAN with fewer than
 * two pairs or for tables. */
double ms_validation_report_tau(const MsValidationReport *report);
/* The errors of every item compared. */
const MsErrorStats *ms_validation_report_all(const MsValidationReport *report);
/* Every item's predicted and measured value (microseconds), for plots; n items. */
const double *ms_validation_report_predicted(const MsValidationReport *report, guint *n);
const double *ms_validation_report_measured(const MsValidationReport *report, guint *n);
/* Every item's size in bytes as nccl-tests counts it and its bus-bandwidth factor (nccl-tests'
 * busbw = size / time x factor), 0 for items without one (runs' ops, compute rows, one rank); n
 * items, in the order of the two above. */
const double *ms_validation_report_sizes(const MsValidationReport *report, guint *n);
const double *ms_validation_report_bus_factors(const MsValidationReport *report, guint *n);
/* The overall statistic named stat ("median", "p90" or "max"); FALSE for another name. */
gboolean ms_validation_report_stat(const MsValidationReport *report, const char *stat, double *out);

/* {"runs": [{"policy", "ops": STATS, "step_simulated_us", "step_measured_us"}...],
 * "kendall_tau" (two pairs or more), "all": STATS} or {"groups": {NAME: STATS...}, "all": STATS},
 * STATS being {"points", "median", "p90", "max"}. */
JsonNode *ms_validation_report_to_json(const MsValidationReport *report);

G_END_DECLS
