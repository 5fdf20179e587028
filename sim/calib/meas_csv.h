/* meas_csv: moesim's own measurement file, "# moesim-measurements 1" (docs/calibration-format.md):
 * the measured row it carries (MsMeasurement, the row every measurement source yields), its version
 * line, its columns and its writer. What writes measurements (the cuda backend's microbenchmarks)
 * needs nothing more; the reader, which validates rows into a set, is validate/moesim_csv.h.
 * Times are microseconds in the file, seconds in rows; sizes bytes. */
#pragma once

#include <glib.h>

#include "sim/calib/meas_kind.h"

G_BEGIN_DECLS

/* The version this moesim writes and reads, and the line that opens a file. */
#define MS_MOESIM_CSV_VERSION 1
#define MS_MOESIM_CSV_PREFIX "# moesim-measurements"

/* One measured row: a plain value record. Its strings are borrowed: a MsMeasurementSet
 * (validate/measurement.h) owns those of the rows it holds. */
typedef struct {
    MsMeasurementKind kind;
    /* Collectives: the buffer size as nccl-tests prints it (all_gather: the gathered output,
     * reduce_scatter: the input). Elementwise: bytes read plus written. Else 0. */
    guint64 bytes;
    guint32 ranks;          /* GPUs taking part; 1 for compute kinds */
    guint32 ranks_per_node; /* < ranks when the operation crossed nodes */
    /* GEMM (m x k) . (k x n) with m = tokens; elementwise: m rows of n elements; else 0. */
    guint64 m, n, k;
    const char *dtype; /* a name ms_dtype_size knows (validate/measurement.h); required for gemm */
    const char *label; /* e.g. "mlp_up_proj"; "" when none */
    double seconds;    /* the time fits use: the median when the source has one */
    double min_s, median_s, mean_s; /* NAN when the source does not give them */
    const char *source;             /* file (or resource) name */
    guint line;                     /* 1-based line in source; 0 when the row was built in memory */
} MsMeasurement;

/* The columns, in the order the writer puts them. */
typedef enum {
    MS_MEAS_COL_KIND,
    MS_MEAS_COL_BYTES,
    MS_MEAS_COL_RANKS,
    MS_MEAS_COL_RANKS_PER_NODE,
    MS_MEAS_COL_M,
    MS_MEAS_COL_N,
    MS_MEAS_COL_K,
    MS_MEAS_COL_DTYPE,
    MS_MEAS_COL_LABEL,
    MS_MEAS_COL_TIME,
    MS_MEAS_COL_MIN,
    MS_MEAS_COL_MEDIAN,
    MS_MEAS_COL_MEAN,
    MS_MEAS_N_COLS,
} MsMeasColumn;

/* "kind", "bytes", "ranks", "ranks_per_node", "m", "n", "k", "dtype", "label", "time_us",
 * "min_us", "median_us", "mean_us"; from_name returns FALSE for anything else. */
const char *ms_meas_csv_column_name(MsMeasColumn column);
gboolean ms_meas_csv_column_from_name(const char *name, MsMeasColumn *out);

/* Appends the version line and the header naming every column. */
void ms_meas_csv_write_header(GString *out);
/* Appends row as one line. The bytes depend only on the row (times with 12 significant digits,
 * shapes only for gemm and elementwise rows). The row is written as it is: readers validate. */
void ms_meas_csv_write_row(GString *out, const MsMeasurement *row);

G_END_DECLS
