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
#include "backends/registry.h"

G_BEGIN_DECLS

#define MS_CPU_BACKEND_ERROR (ms_cpu_backend_error_quark())
GQuark ms_cpu_backend_error_quark(void);
typedef enum {
    MS_CPU_BACKEND_ERROR_SETUP,     /* no topology, too many workers, buffers over the limit */
    MS_CPU_BACKEND_ERROR_VIOLATION, /* the execution broke the schedule's semantics */
    MS_CPU_BACKEND_ERROR_OPTIONS,   /* an option or a field of the options record out of range */
} MsCpuBackendError;

/* Rank buffers (send + receive per rank and communication stream) allowed by default. */
#define MS_CPU_DEFAULT_MAX_MEMORY (G_GUINT64_CONSTANT(4) << 30)
/* Worker threads (ranks x streams that hold ops) at most. */
#define MS_CPU_MAX_WORKERS 1024u

/* Deliberate faults (MsCpuOptions.faults), so that the backend's own tests can watch each check
 * fire. Never set by commands. */
enum {
    MS_CPU_FAULT_SHORT_COPY = 1 << 0,  /* an all-to-all copies one byte less of its first pair */
    MS_CPU_FAULT_BAD_REDUCE = 1 << 1,  /* an allreduce leaves one rank out of element 0 */
    MS_CPU_FAULT_BAD_PATTERN = 1 << 2, /* an all-to-all corrupts the first byte it delivers */
};

/* The backend's own options (MsExecOptions.backend): a plain value record; zero fields take their
 * defaults. From the command line: --time-scale X, --max-memory SIZE. */
typedef struct {
    /* Compute ops are busy work lasting the compute model's time for the op on its rank's GPU
     * (MsExecOptions.topology) times this; 0: 1. Must be finite and in [0, 1e6]. */
    double time_scale;
    guint64 max_memory; /* bytes of rank buffers allowed; 0: MS_CPU_DEFAULT_MAX_MEMORY */
    guint32 faults;     /* MS_CPU_FAULT_* */
} MsCpuOptions;

/* Checks a record (time_scale in range) and fills its defaults into out (record NULL: all the
 * defaults). FALSE with MS_CPU_BACKEND_ERROR_OPTIONS naming the field and its value. */
gboolean ms_cpu_options_resolve(const MsCpuOptions *record, MsCpuOptions *out, GError **error);

/* Its registration (registry.h): built in, options --time-scale and --max-memory. */
extern const MsBackendInfo ms_cpu_backend_info;

/* The backend's hooks (executor.h). open checks the options record (ms_cpu_options_resolve),
 * needs opts->topology with at least the schedule's ranks (MS_CPU_BACKEND_ERROR_SETUP otherwise)
 * and refuses, before allocating, buffers beyond the record's max_memory and more than
 * MS_CPU_MAX_WORKERS workers. launch, wait and finish report broken semantics as
 * MS_CPU_BACKEND_ERROR_VIOLATION naming the op, its rank and what went wrong. finish sets the
 * stats "transfer_bytes" (bytes copied between rank buffers), "checked_bytes" (all-to-all bytes
 * verified at their receiver), "checked_elements" (allreduce results verified) and "workers". */
extern const MsExecBackend ms_cpu_backend;

G_END_DECLS
