/* meas_csv: moesim's own measurement file, "# moesim-measurements N" (docs/calibration-format.md):
 * the measured row it carries (MsMeasurement, the row every measurement source yields), its version
 * line, its columns and its writer. What writes measurements (the cuda backend's microbenchmarks)
 * needs nothing more; the reader, which validates rows into a set, is validate/moesim_csv.h.
 * Times are microseconds in the file, seconds in rows; sizes bytes.
 * Versions: a reader reads every version from MS_MOESIM_CSV_OLDEST to MS_MOESIM_CSV_VERSION and
 * refuses the others; a writer writes the oldest version that holds its rows, so a file without
 * what a newer version added stays readable by an older moesim. Version 2 added the kind
 * alltoall_under_allreduce and the columns background_bytes, channels and qps. */
#pragma once

#include <glib.h>

#include "sim/calib/meas_kind.h"

G_BEGIN_DECLS

/* The newest version this moesim writes and reads, the oldest it reads, and the line that opens a
 * file. */
#define MS_MOESIM_CSV_VERSION 2
#define MS_MOESIM_CSV_OLDEST 1
#define MS_MOESIM_CSV_PREFIX "# moesim-measurements"

/* The largest channel count and queue pairs per connection NCCL takes: MAXCHANNELS (64 since
 * 2.19, src/include/device.h; 32 before) and NCCL_IB_MAX_QPS (128, src/transport/net_ib). */
#define MS_MEAS_MAX_CHANNELS 64u
#define MS_MEAS_MAX_QPS 128u

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
    /* alltoall_under_allreduce: the size of the allreduce looping meanwhile (its buffer, as
     * nccl-tests counts it); 0 for other kinds. */
    guint64 background_bytes;
    /* How NCCL was configured, for the kinds that move bytes over it; 0 where NCCL chose:
     * channels forced by NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS (1 to MS_MEAS_MAX_CHANNELS),
     * queue pairs per network connection by NCCL_IB_QPS_PER_CONNECTION (1 to MS_MEAS_MAX_QPS). */
    guint32 channels, qps;
    /* How the run drove its GPUs: nccl-tests' nThread (threads per process) and nGpus (GPUs per
     * thread); 0 where the source does not say, read as 1 (one process per GPU). One thread
     * driving several GPUs pays their NCCL calls in turn (sim/net/host_loop.h). Not a column of
     * the moesim CSV. */
    guint32 threads, gpus_per_thread;
    /* The NCCL release the run printed ("NCCL version 2.18.3+cuda12.2"), as MS_NCCL_VERSION
     * codes it (21803); 0 where the source does not say. Not a column of the moesim CSV. */
    guint32 nccl_version;
    const char *source; /* file (or resource) name */
    guint line;         /* 1-based line in source; 0 when the row was built in memory */
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
    MS_MEAS_COL_BACKGROUND_BYTES, /* version 2 */
    MS_MEAS_COL_CHANNELS,         /* version 2 */
    MS_MEAS_COL_QPS,              /* version 2 */
    MS_MEAS_N_COLS,
} MsMeasColumn;

/* "kind", "bytes", "ranks", "ranks_per_node", "m", "n", "k", "dtype", "label", "time_us",
 * "min_us", "median_us", "mean_us", "background_bytes", "channels", "qps"; from_name returns
 * FALSE for anything else. */
const char *ms_meas_csv_column_name(MsMeasColumn column);
gboolean ms_meas_csv_column_from_name(const char *name, MsMeasColumn *out);
/* The version a column, or a kind, first appeared in. */
guint ms_meas_csv_column_version(MsMeasColumn column);
guint ms_meas_csv_kind_version(MsMeasurementKind kind);
/* The oldest version that holds row: its kind's, or 2 when it has background_bytes, channels or
 * qps. */
guint ms_meas_csv_row_version(const MsMeasurement *row);

/* Appends the version line and the header naming every column of version (OLDEST to VERSION). */
void ms_meas_csv_write_header(GString *out, guint version);
/* Appends row as one line of a file of version (at least ms_meas_csv_row_version(row)). The bytes
 * depend only on the row and the version (times with 12 significant digits, shapes only for gemm
 * and elementwise rows, the version 2 columns empty where 0). The row is written as it is: readers
 * validate. */
void ms_meas_csv_write_row(GString *out, const MsMeasurement *row, guint version);

G_END_DECLS
