/* bench_report: the tables `moesim bench` prints from its measurement rows: nccl-tests columns
 * (size, count, type, redop, root, time, algbw, busbw) for communication, shapes, TFLOP/s and GB/s
 * for kernels, an all-to-all under an allreduce beside its time alone (the slowdown), one table
 * per kind. Times in microseconds, bandwidths in GB/s. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "sim/compute.h"
#include "validate/measurement.h"

G_BEGIN_DECLS

/* The rows as text tables, one per kind, in set order within a kind; with a compute model (of the
 * GPU measured), GEMM and elementwise rows show its time beside the measured one. Free with
 * g_free. */
char *ms_bench_report_format(const MsMeasurementSet *set, const MsComputeModel *model);

/* The rows as the JSON document `moesim bench --json` writes (schema moesim.bench/1,
 * docs/outputs.md): the backend's name and per row its kind, sizes, shape, dtype and label (null
 * when none), times in microseconds (null when the source has none) and NCCL settings (0: NCCL's
 * choice). Free with json_node_unref. */
JsonNode *ms_bench_report_to_json(const MsMeasurementSet *set, const char *backend);

G_END_DECLS
