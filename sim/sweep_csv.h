/* sweep_csv: the table a sweep writes: a header (point, the axes, then the metrics), one row per
 * point with its axis values and its result's metrics (means over iterations, step percentiles),
 * CSV quoting and splitting, and the plots drawn from a finished table (step time against each
 * numeric axis). The metrics begin at the table's last iterations column: an iterations axis
 * comes before the metric of the same name. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "sim/out/result.h"
#include "sim/sweep_grid.h"

G_BEGIN_DECLS

#define MS_SWEEP_CSV_ERROR (ms_sweep_csv_error_quark())
GQuark ms_sweep_csv_error_quark(void);
typedef enum {
    MS_SWEEP_CSV_ERROR_IO,
    MS_SWEEP_CSV_ERROR_FORMAT, /* not a sweep table */
} MsSweepCsvError;

/* The metric columns, in order, NULL-terminated: iterations, step_time_us, step_p50_us,
 * step_p95_us, step_p99_us, compute_us, a2a_us, a2a_forward_us, a2a_backward_us, allreduce_us,
 * exposed_comm_us, comm_wait_us, a2a_bytes, dropped_tokens. */
const char *const *ms_sweep_csv_metrics(void);

/* "point,AXIS...,METRIC..." without a newline. Free with g_free. */
char *ms_sweep_csv_header(const MsSweepGrid *grid);
/* A point's row without a newline: its index, axis values (quoted when needed) and metrics
 * (times with 3 decimals in microseconds). Free with g_free. */
char *ms_sweep_csv_row(const MsSweepGrid *grid, guint point, const MsResult *res);

/* Appends v as one CSV field: as it is, or quoted (quotes doubled, newlines dropped) when it
 * holds a ',', '"' or newline. */
void ms_sweep_csv_field(GString *s, const char *v);
/* The fields of one CSV line (quoted fields with doubled quotes; a '\r' outside quotes dropped).
 * Free with g_ptr_array_unref. */
GPtrArray *ms_sweep_csv_split(const char *line);

/* One plot per numeric axis of the sweep CSV at path: DIR/sweep-KEY.png, step time against the
 * axis value, one line per combination of the other axes. MS_SWEEP_CSV_ERROR_IO when the file
 * cannot be read, or the plot's error. */
gboolean ms_sweep_csv_plot(const char *path, const char *dir, GError **error);

/* The sweep table at path as JSON: {"format": "moesim-sweep", "version": 1, "axes": [...],
 * "metrics": [...], "rows": [{"point": N, "axes": {AXIS: "VALUE"...}, "metrics": {METRIC:
 * NUMBER...}}]}: axis values as the strings they are in the table, counts as integers, times as
 * numbers (an iterations axis and the iterations metric each in their object).
 * MS_SWEEP_CSV_ERROR_IO when the file cannot be read, _FORMAT for a table that is not a sweep's
 * (naming file:line). */
JsonNode *ms_sweep_csv_to_json(const char *path, GError **error);

G_END_DECLS
