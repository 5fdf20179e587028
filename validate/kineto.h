/* kineto: a PyTorch profiler trace (the Chrome trace-event JSON that torch.profiler's
 * export_chrome_trace writes, from Kineto) as measurements: per-layer figures (sim/out/layers.h)
 * for `validate --layers` and `calibrate --layers`, and per-op rows (GEMMs with their shapes,
 * NCCL collectives with their sizes, kernel launches) for `calibrate`. Layers are the
 * record_function ranges whose names match a pattern; iterations the ProfilerStep#N ranges;
 * the GPU work of a layer the kernels its ranges launched (cuda_runtime events joined to kernels
 * by their correlation id). Times in the trace are microseconds. docs/calibration.md. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "sim/out/layers.h"
#include "validate/layer_file.h"
#include "validate/measurement.h"

G_BEGIN_DECLS

#define MS_KINETO_ERROR (ms_kineto_error_quark())
GQuark ms_kineto_error_quark(void);
typedef enum {
    MS_KINETO_ERROR_FORMAT,  /* not a trace: no traceEvents array */
    MS_KINETO_ERROR_VALUE,   /* an event with a field of the wrong type or out of range */
    MS_KINETO_ERROR_PATTERN, /* a layer pattern that does not compile or has no layer group */
    MS_KINETO_ERROR_EMPTY,   /* no range matched the layer pattern */
} MsKinetoError;

/* The layer ranges moesim's own labels name: "L3.fwd", "L3.bwd" (also "L3.forward" ...), with
 * anything after (e.g. "L3.fwd.moe"). */
#define MS_KINETO_LAYER_PATTERN "^L([0-9]+)\\.(fwd|bwd|forward|backward)\\b"

struct _MsKinetoOptions {
    /* A regular expression (GRegex) on range names: group 1 the layer number, an optional group
     * 2 the phase (fwd/forward, bwd/backward; forward when absent). NULL: the default above. */
    const char *layer_pattern;
    gint gpu; /* the GPU of a trace without distributedInfo.rank; < 0: 0 */
};

/* Whether text looks like a profiler trace (a JSON object with "traceEvents"). */
gboolean ms_kineto_sniff(const char *data, gsize len);

/* Appends the trace's per-layer rows to t. For each range (ph "X", cat "user_annotation" or
 * "python_function") whose name matches: iteration = the ProfilerStep#N range it starts in (else
 * how many times the layer was seen before), the GPU = distributedInfo.rank; the layer's kernels
 * (cat "kernel", "gpu_memcpy", "gpu_memset") are those launched by cuda_runtime events inside
 * the range on its thread. start_us: the range's start from the trace's first event; layer_us:
 * from the range's start to the later of its end and its last kernel's end; parts by kernel
 * order: the gate (up to the first NCCL kernel, its projection GEMM included), the dispatch (NCCL
 * kernels before the first GEMM after them), the expert (from that GEMM to the next NCCL kernel;
 * without NCCL kernels, from the second GEMM), the combine (NCCL kernels after) and other (the
 * rest, and device copies); host_us: layer_us minus the
 * kernels' busy time (the GPU waiting for the framework); busy_us = layer_us. What the trace
 * holds and moesim does not model (device copies, host synchronisations) goes into t's
 * metadata as "unmodelled.NAME" = text. FALSE with MS_KINETO_ERROR naming source and event. */
gboolean ms_kineto_read_layers(JsonNode *root, const char *source, const MsKinetoOptions *opts,
                               MsLayerTable *t, GError **error);

/* Appends per-op measurement rows to set: "gemm" rows for aten::mm, aten::addmm, aten::bmm and
 * aten::linear ranges recorded with shapes (record_shapes=True: "Input Dims", "Input type"),
 * timed by the sum of their kernels; collective rows ("alltoall", "allreduce", "allgather",
 * "reducescatter") for record_param_comms ranges with "Collective name", "In msg nelems" and
 * "Group size", timed by their NCCL kernel; and one "launch" row per cudaLaunchKernel (its host
 * duration). ranks_per_node of a collective is at most the GPUs the trace's deviceProperties
 * lists (a process sees its node's GPUs). Returns the rows added; FALSE with an error for a
 * malformed event. */
gboolean ms_kineto_read_measurements(JsonNode *root, const char *source, MsMeasurementSet *set,
                                     guint *added, GError **error);

G_END_DECLS
