/* cpu_backend: the reference executor. Every rank's streams are worker threads running one op at a
 * time; all-to-alls copy the real bytes of their matrix between per-rank buffers and allreduces
 * really sum floats across ranks; compute ops are busy work lasting the compute model's time
 * (picoseconds) times a scale factor. It checks the schedule's semantics as it runs: every op
 * once, after its dependencies, a stream never given two ops at once, compute streams in program
 * order, every transfer byte-exact. Times are the host's monotonic clock; they say nothing of a
 * GPU's speed. */
#pragma once

#include <glib.h>

#include "backends/executor.h"

G_BEGIN_DECLS

#define MS_CPU_BACKEND_ERROR (ms_cpu_backend_error_quark())
GQuark ms_cpu_backend_error_quark(void);
typedef enum {
    MS_CPU_BACKEND_ERROR_SETUP,     /* no topology, too many workers, buffers over the limit */
    MS_CPU_BACKEND_ERROR_VIOLATION, /* the execution broke the schedule's semantics */
} MsCpuBackendError;

/* Rank buffers (send + receive per rank and communication stream) allowed by default. */
#define MS_CPU_DEFAULT_MAX_MEMORY (G_GUINT64_CONSTANT(4) << 30)
/* Worker threads (ranks x streams that hold ops) at most. */
#define MS_CPU_MAX_WORKERS 1024u

/* Deliberate faults (MsExecOptions.faults), so that the backend's own tests can watch each check
 * fire. Never set by commands. */
enum {
    MS_CPU_FAULT_SHORT_COPY = 1 << 0,  /* an all-to-all copies one byte less of its first pair */
    MS_CPU_FAULT_BAD_REDUCE = 1 << 1,  /* an allreduce leaves one rank out of element 0 */
    MS_CPU_FAULT_BAD_PATTERN = 1 << 2, /* an all-to-all corrupts the first byte it delivers */
};

/* The backend's hooks (executor.h). open needs opts->topology with at least the schedule's ranks
 * (MS_CPU_BACKEND_ERROR_SETUP otherwise) and refuses, before allocating, buffers beyond
 * opts->max_memory and more than MS_CPU_MAX_WORKERS workers. launch, wait and finish report
 * broken semantics as MS_CPU_BACKEND_ERROR_VIOLATION naming the op, its rank and what went
 * wrong. finish sets the stats "transfer_bytes" (bytes copied between rank buffers),
 * "checked_bytes" (all-to-all bytes verified at their receiver), "checked_elements" (allreduce
 * results verified) and "workers". */
extern const MsExecBackend ms_cpu_backend;

G_END_DECLS
