/* measurement: tables of measured times (collectives, send/recv, GEMMs, elementwise kernels,
 * launches) with where each row came from, read from nccl-tests logs, Vidur profile CSVs or
 * moesim's own versioned CSV (docs/calibration-format.md), and written as that CSV. Times are
 * seconds (double), sizes bytes. Rows carry no topology: ranks and ranks per node say what the run
 * spanned; the fits decide what to make of it. */
#pragma once

#include <glib.h>

#include "sim/base/csv.h"
#include "sim/base/ranges.h"
#include "sim/calib/meas_csv.h"
#include <stdio.h>

#include "validate/fit.h"

G_BEGIN_DECLS

#define MS_MEASUREMENT_ERROR (ms_measurement_error_quark())
GQuark ms_measurement_error_quark(void);
typedef enum {
    MS_MEASUREMENT_ERROR_IO,      /* the file could not be read or written */
    MS_MEASUREMENT_ERROR_FORMAT,  /* not a format moesim knows, or a wrong version */
    MS_MEASUREMENT_ERROR_SYNTAX,  /* a malformed line: wrong number of fields, stray text */
    MS_MEASUREMENT_ERROR_MISSING, /* a required column, header or rank list is absent */
    MS_MEASUREMENT_ERROR_VALUE,   /* a field that does not parse or is out of range */
} MsMeasurementError;

/* Bytes per element of a dtype name ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8_e4m3",
 * "fp8_e5m2", "int8", "uint8", "int32", "uint32", "int64", "uint64"); 0 when unknown. */
guint ms_dtype_size(const char *dtype);

/* One measured row (MsMeasurement) is a plain value record of sim/calib/meas_csv.h; a set owns the
 * strings of the rows it holds. */

typedef struct _MsMeasurementSet MsMeasurementSet;

/* Every number a measurement row carries, with its range (sim/base/ranges.h). */
const MsRangeTable *ms_measurement_ranges(void);

MsMeasurementSet *ms_measurement_set_new(void);
void ms_measurement_set_free(MsMeasurementSet *set);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsMeasurementSet, ms_measurement_set_free)

guint ms_measurement_set_size(const MsMeasurementSet *set);
/* Row i (< size), owned by the set; valid until the set is freed (adding rows may move it). */
const MsMeasurement *ms_measurement_set_get(const MsMeasurementSet *set, guint i);

/* Validates row for its kind and appends a copy (strings copied). On failure returns FALSE with
 * MS_MEASUREMENT_ERROR_VALUE naming row->source:row->line, the field and the bad value, and the
 * set is unchanged. Rules: seconds > 0 and finite; ranks in [1, 2^20] and ranks_per_node in
 * [1, ranks]; gemm needs m, n, k in [1, 2^32] and a known dtype; elementwise needs bytes;
 * sizes at most MS_BYTES_MAX; label without control characters; an
 * alltoall_under_allreduce row needs bytes, at least 2 ranks and background_bytes; a gemm or
 * elementwise row may have background_bytes (it was timed under a looping allreduce,
 * ms_measurement_overlapped), no other kind; channels (at most MS_MEAS_MAX_CHANNELS) and qps (at
 * most MS_MEAS_MAX_QPS) only on the kinds that run NCCL. */
gboolean ms_measurement_set_add(MsMeasurementSet *set, const MsMeasurement *row, GError **error);

/* TRUE for a gemm or elementwise row timed while an allreduce of background_bytes looped on
 * another communicator and stream of its GPU (moesim bench --what overlap): what NCCL's kernels
 * cost the kernel. Fits of kernels alone leave such rows out; validate/overlap_fit.h pairs them
 * with their kernel alone. */
gboolean ms_measurement_overlapped(const MsMeasurement *row);

/* The formats ms_measurement_set_load recognises. */
typedef enum {
    MS_MEASUREMENT_FORMAT_UNKNOWN,
    MS_MEASUREMENT_FORMAT_MOESIM,        /* "# moesim-measurements N" CSV */
    MS_MEASUREMENT_FORMAT_NCCL_TESTS,    /* stdout of nccl-tests *_perf */
    MS_MEASUREMENT_FORMAT_VIDUR_NETWORK, /* Vidur time_stats.<op>.* with num_workers, size */
    MS_MEASUREMENT_FORMAT_VIDUR_COMPUTE, /* Vidur per-operator MLP profile with num_tokens */
    MS_MEASUREMENT_FORMAT_KINETO,        /* a PyTorch profiler trace (validate/kineto.h) */
} MsMeasurementFormat;

const char *ms_measurement_format_name(MsMeasurementFormat format);
/* Recognises the format from the text (the first line of a CSV; nccl-tests' '#' preamble or
 * column header anywhere). */
MsMeasurementFormat ms_measurement_sniff(const char *data, gsize len);

/* What a caller knows of a measurement file beyond its text. ranks and ranks_per_node: the shape
 * of nccl-tests runs whose logs print no '#  Rank' lines (srun --label excerpts; 0 and 0 when
 * unknown, and such a log is refused); a log that prints them must agree. notes, when not NULL,
 * receives owned strings the caller should show (e.g. which srun task's lines were read). */
typedef struct {
    guint ranks, ranks_per_node;
    GPtrArray *notes;
} MsMeasurementReadOptions;

/* Reads path, or, when no such file exists and name_or_path is the name of a shipped data file
 * (see ms_measurement_list_shipped), that file; sniffs the format and parses every row. Returns
 * NULL with MS_MEASUREMENT_ERROR: _IO when unreadable (or over 256 MiB), _FORMAT when the format
 * is none of the above (the message lists what is accepted), else the reader's error with
 * FILE:LINE, the field and the bad value. */
MsMeasurementSet *ms_measurement_set_load(const char *name_or_path, GError **error);
/* Same with options (NULL: none, as ms_measurement_set_load). */
MsMeasurementSet *ms_measurement_set_load_with(const char *name_or_path,
                                               const MsMeasurementReadOptions *opts,
                                               GError **error);
/* Same for text in memory, appended to set; source names it in messages and rows, and also serves
 * nccl-tests logs as the hint for which collective was run (see nccl_tests.h). On failure the set
 * keeps the rows it had before the call. */
gboolean ms_measurement_set_read_data(MsMeasurementSet *set, const char *data, gsize len,
                                      const char *source, GError **error);
gboolean ms_measurement_set_read_data_with(MsMeasurementSet *set, const char *data, gsize len,
                                           const char *source, const MsMeasurementReadOptions *opts,
                                           GError **error);

/* Shipped data files (validate/data, compiled in), sorted; free with g_strfreev. */
char **ms_measurement_list_shipped(void);

/* GEMM cost from a row's shape: 2 m n k flops; bytes = dtype size x (m k + k n + m n). */
void ms_measurement_gemm_cost(const MsMeasurement *row, double *flops, double *bytes);

/* Appends (bytes, seconds) of every row of kind with the given ranks and ranks_per_node (0 = any)
 * to the arrays (of double), in set order; returns how many were appended. */
guint ms_measurement_set_series(const MsMeasurementSet *set, MsMeasurementKind kind, guint ranks,
                                guint ranks_per_node, GArray *bytes, GArray *seconds);

/* Builds expert FFN points (one per token count, increasing) from the rows labelled
 * mlp_up_proj, mlp_act and mlp_down_proj whose shapes are those of an expert with d_model,
 * d_ffn (gated: the up projection is gate and up fused, n = 2 d_ffn; the activation has n = d_ffn
 * and bytes = dtype size x m x (up width + d_ffn)): time = up + act + down
 * (rows repeated at one token count are averaged first), flops and bytes from
 * ms_compute_expert_ffn_cost with the rows' dtype. Token counts lacking one of the three are
 * skipped. Appends MsGemmPoint to points; returns FALSE with MS_MEASUREMENT_ERROR_MISSING when no
 * token count has all three, or _VALUE when the rows disagree on the dtype. */
gboolean ms_measurement_set_expert_points(const MsMeasurementSet *set, guint64 d_model,
                                          guint64 d_ffn, gboolean gated, GArray *points,
                                          GError **error);

/* Helpers shared by the format readers (moesim_csv.c, nccl_tests.c, vidur.c). ms_measurement_fail
 * sets error to "SOURCE:LINE: MESSAGE" (domain MS_MEASUREMENT_ERROR) and returns FALSE. */
gboolean ms_measurement_fail(GError **error, MsMeasurementError code, const char *source,
                             guint line, const char *format, ...) G_GNUC_PRINTF(5, 6);
/* The parsers set
 * MS_MEASUREMENT_ERROR_VALUE as "SOURCE:LINE: FIELD: 'TEXT' problem". */
gboolean ms_measurement_parse_double(const char *source, guint line, const char *field,
                                     const char *text, double min, double max, double *out,
                                     GError **error);
gboolean ms_measurement_parse_uint(const char *source, guint line, const char *field,
                                   const char *text, guint64 min, guint64 max, guint64 *out,
                                   GError **error);
/* Splits one line of a CSV format into fields (sim/base/csv.h: quotes, blanks, a final CR);
 * FALSE with MS_MEASUREMENT_ERROR_SYNTAX as "SOURCE:LINE: what is wrong at column N". */
gboolean ms_measurement_split_csv(MsCsvFields *fields, const char *source, guint line,
                                  const char *text, GError **error);

G_END_DECLS
