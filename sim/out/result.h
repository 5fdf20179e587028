/* result: what a run reports. Metrics of each iteration (step time, compute, all-to-all and
 * allreduce time, exposed communication), summaries over iterations (means; latency percentiles
 * for inference), and the per-op records of the first iteration in three forms: the summary JSON
 * (which `moesim validate` compares), a Chrome trace-event file (sim/out/chrome_trace.h) and a
 * CSV. The same code serves simulated and measured runs. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "sim/out/layers.h"
#include "sim/schedule/schedule.h"
#include "sim/schedule/records.h"

G_BEGIN_DECLS

/* Per-iteration metrics in microseconds. Busy times are per GPU (union of the intervals of the
 * ops of that kind on the GPU), averaged over GPUs. Exposed communication is the time a GPU has
 * communication in flight and no compute running. The wait for peers is the time a GPU has a
 * collective ready that waits for another participant to reach it (sim/out/peer_wait.h): rank
 * skew (a straggler's longer compute, an imbalanced expert's GEMM) made visible. */
typedef struct {
    double step_us;
    double compute_us;
    double a2a_us, a2a_fwd_us, a2a_bwd_us;
    double allreduce_us;
    double exposed_comm_us;
    double comm_wait_us;
    guint64 a2a_bytes; /* bytes sent by all ranks in all-to-alls */
    guint64 dropped_tokens;
} MsMetrics;

void ms_metrics_compute(const MsSchedule *s, const MsRecords *r, MsMetrics *out);

typedef struct _MsResult MsResult;

MsResult *ms_result_new(const char *backend);
void ms_result_free(MsResult *res);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsResult, ms_result_free)

/* Makes the result keep the per-layer figures of every iteration added from now on (layers.h),
 * numbered by the schedule's "iteration" (the trace's) when it has one. */
void ms_result_keep_layers(MsResult *res);
/* The per-layer table, NULL unless kept. */
const MsLayerTable *ms_result_layers(const MsResult *res);
/* Adds one iteration's metrics. */
void ms_result_add(MsResult *res, const MsSchedule *s, const MsRecords *r);
/* Hands over (takes ownership of) the schedule and records whose per-op details the outputs
 * show, usually the first iteration's. */
void ms_result_set_detail(MsResult *res, MsSchedule *s, MsRecords *r);
/* Run-level figures (wall time, peak memory ...) and notes shown in the summary. */
void ms_result_set_stat(MsResult *res, const char *key, double value);
/* A figure set so; FALSE (and *value untouched) when there is none of that name. */
gboolean ms_result_get_stat(const MsResult *res, const char *key, double *value);
void ms_result_add_note(MsResult *res, const char *note);

guint ms_result_n_iterations(const MsResult *res);
const MsMetrics *ms_result_iteration(const MsResult *res, guint i);
/* Mean of every metric over the iterations. */
void ms_result_mean(const MsResult *res, MsMetrics *out);
/* Percentile (0..100) of the step (batch) time over iterations, linear interpolation. */
double ms_result_step_percentile(const MsResult *res, double p);

JsonNode *ms_result_to_json(const MsResult *res);
/* The detailed iteration as a Chrome trace (sim/out/chrome_trace.h); a run streams every
 * iteration it is asked for through chrome_trace.h itself. */
gboolean ms_result_write_chrome(const MsResult *res, const char *path, GError **error);
gboolean ms_result_write_csv(const MsResult *res, const char *path, GError **error);

/* The bytes of an op as the outputs give them: what a comm op's rank sends to the others (an
 * all-to-all's row less the diagonal) or its buffer (allreduce); a compute op's memory traffic. */
guint64 ms_result_op_bytes(const MsSchedule *s, const MsOpInfo *i);

/* The detailed iteration's schedule and records (NULL when none was set). */
const MsSchedule *ms_result_schedule(const MsResult *res);
const MsRecords *ms_result_records(const MsResult *res);

G_END_DECLS
