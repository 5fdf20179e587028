/* nccl_tests: reader of the standard output of NVIDIA nccl-tests (all_reduce_perf, alltoall_perf,
 * all_gather_perf, reduce_scatter_perf, sendrecv_perf), one row per data line with its
 * out-of-place time (printed in microseconds, the mean over the iterations). The '#  Rank' lines
 * give the ranks and, by hostname, the ranks per node (or the caller gives them, for logs that
 * lack them); the "# nThread T nGpus G" line gives each row its threads per process and GPUs
 * per thread, and NCCL's "NCCL version X.Y.Z" line (where NCCL printed it, alone or in an NCCL
 * INFO line) the release of the rows after it; several runs may be concatenated. Errors
 * are MS_MEASUREMENT_ERROR as "SOURCE:LINE: field: problem". */
#pragma once

#include <glib.h>

#include "validate/measurement.h"

G_BEGIN_DECLS

/* Every number moesim reads from an nccl-tests log, with its range (sim/base/ranges.h). */
const MsRangeTable *ms_nccl_tests_ranges(void);

/* The collective a test binary, log file name or "# Collective test starting:" name refers to:
 * a case-insensitive search for all_reduce/allreduce, alltoall/all_to_all,
 * all_gather/allgather, reduce_scatter/reducescatter, sendrecv/send_recv. FALSE for anything
 * else, including alltoallv (its per-pair sizes have no single size). */
gboolean ms_nccl_tests_kind_from_name(const char *name, MsMeasurementKind *out);

/* TRUE when the text has nccl-tests' "# Using devices" or "# nThread" preamble or its
 * "size count type" column header (after any srun label or mpirun tag). */
gboolean ms_nccl_tests_sniff(const char *data, gsize len);

/* The NCCL release a line prints ("NCCL version 2.18.3+cuda12.2" anywhere in it) as
 * MS_NCCL_VERSION codes it; 0 when it prints none in that form. */
guint ms_nccl_tests_release(const char *line);

/* Appends a row per data line to set. The collective of a run comes from its
 * "# Collective test starting: NAME" line (newer nccl-tests), else from hint
 * (MS_MEASUREMENT_N_KINDS for none). Lines prefixed by mpirun's "[1,0]<stdout>:" tag are read
 * through it; lines that are neither comments nor data (NCCL INFO, launcher noise) are skipped.
 * Lines prefixed by srun --label's "TASK: " are read through it, those of one task only: the
 * lowest that printed data lines (a note in opts->notes names it when several tasks printed
 * nccl-tests lines). A run without '#  Rank' lines takes opts' shape (ranks, ranks per node); one
 * with them must agree with a shape given. opts may be NULL (no shape, no notes).
 * Returns FALSE with MS_MEASUREMENT_ERROR: _MISSING for a data line before any column header, or
 * before any '#  Rank' line without a shape, or when the collective is unknown; _SYNTAX for a
 * data line with the wrong number of fields, a '# nThread' line without 'nGpus G', or a log whose
 * nccl-tests lines are srun-labelled on some lines and not on others; _VALUE for a bad number, a
 * time <= 0, a nonzero #wrong (the run failed its check), an unknown type, a shape the rank lines
 * contradict or an inconsistent shape, an nThread or nGpus below 1, or nThread x nGpus not dividing
 * the ranks; _FORMAT when no data line is found. Rows read before an error stay in set. */
gboolean ms_nccl_tests_read(MsMeasurementSet *set, const char *data, gsize len, const char *source,
                            MsMeasurementKind hint, const MsMeasurementReadOptions *opts,
                            GError **error);

G_END_DECLS
