/* bench_report: the tables `moesim bench` prints from its measurement rows: nccl-tests columns
 * (size, count, type, redop, root, time, algbw, busbw) for communication, shapes, TFLOP/s and GB/s
 * for kernels, an all-to-all under an allreduce beside its time alone (the slowdown), one table
 * per kind. Times in microseconds, bandwidths in GB/s. */
#pragma once

#include <glib.h>

#include "sim/compute.h"
#include "validate/measurement.h"

G_BEGIN_DECLS

/* The rows as text tables, one per kind, in set order within a kind; with a compute model (of the
 * GPU measured), GEMM and elementwise rows show its time beside the measured one. Free with
 * g_free. */
char *ms_bench_report_format(const MsMeasurementSet *set, const MsComputeModel *model);

G_END_DECLS
