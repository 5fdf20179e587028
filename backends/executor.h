/* executor: runs a schedule on real hardware and times every op. A backend implements a handful
 * of hooks (open, launch, wait, finish, close; per-rank backends also a session hook); one
 * generic driver loop owns the dispatcher, launches what it decides, collects completions and
 * records per-op start/end in picoseconds on the backend's common clock. Knows nothing of
 * threads, GPUs or sockets, nor of any backend by name: those live behind the hooks, and the
 * backends register themselves in registry.h. */
#pragma once

#include <glib.h>

#include "sim/schedule/schedule.h"
#include "sim/schedule/records.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

#define MS_EXECUTOR_ERROR (ms_executor_error_quark())
GQuark ms_executor_error_quark(void);
typedef enum {
    MS_EXECUTOR_ERROR_BACKEND,  /* unknown backend, or one this build does not have */
    MS_EXECUTOR_ERROR_OPTIONS,  /* an option out of range */
    MS_EXECUTOR_ERROR_TIMEOUT,  /* ops still running when the time limit passed */
    MS_EXECUTOR_ERROR_PROTOCOL, /* a backend reported an op that was not running, or bad times */
} MsExecutorError;

/* Default limit on one execution's wall time, and the largest accepted. */
#define MS_EXEC_DEFAULT_TIMEOUT_S 600.0
#define MS_EXEC_MAX_TIMEOUT_S (7 * 24 * 3600.0)

/* How an execution runs: what every backend reads. Zero-initialised fields take their defaults. */
typedef struct {
    double timeout_s; /* whole run (and each rendezvous wait); 0: MS_EXEC_DEFAULT_TIMEOUT_S */
    /* The cluster the schedule is for; the cpu backend sizes its busy work with its GPUs' compute
     * model. NULL: none. */
    const MsTopology *topology;
    /* Per-rank backends: the binary the single-node launcher starts per rank; NULL: this program
     * (see executor_remote.h). */
    const char *worker_command;
    /* The backend's own options: the record it declares (MsCpuOptions, MsCudaOptions), made from
     * the command line by its registry entry (registry.h) or filled by the caller; NULL: the
     * backend's defaults. Only that backend's hooks read it, and they check it. */
    gconstpointer backend;
} MsExecOptions;

/* Where a per-rank backend runs: its rank among world ranks, its GPU on the node, and the session
 * blob rank 0's backend made (e.g. NCCL unique ids), the same on every rank. */
typedef struct {
    guint rank, world, local_rank;
    GBytes *session;
} MsExecPlace;

/* One finished op as a backend reports it: start and end in picoseconds on a clock common to all
 * ranks (any origin; records are shifted so the earliest start is 0). */
typedef struct {
    guint32 op;
    MsTime start, end;
} MsExecDone;

/* The hooks of a backend. Every hook that can fail returns FALSE/NULL with a GError and never
 * prints. close is always called once open succeeded, after errors too, and must stop work in
 * flight without waiting for it. */
typedef struct {
    const char *name;
    /* TRUE: one process executes one rank's ops (run under executor_remote.h); FALSE: one
     * process executes every rank. */
    gboolean per_rank;
    /* Per-rank backends: the coordinator and the workers wait for each other's messages without
     * sleeping, so that no wake-up latency falls between an op's end and the launch of the next
     * (a GPU idles meanwhile); each costs a core while the job runs. */
    gboolean busy_poll;
    /* Per-rank backends: made once, by the coordinator, before any rank opens; handed to every
     * rank's open (e.g. one NCCL unique id per communicator). n_comms: communicators the job
     * needs; local_ranks: ranks about to start on this node (0 when unknown), so that a missing
     * device is reported before any rank starts. NULL hook: no session data. */
    GBytes *(*session)(const MsExecOptions *opts, guint n_comms, guint local_ranks, GError **error);
    /* Prepares to execute s (buffers, threads, streams, communicators). place is NULL for
     * all-rank backends. Returns the backend's state. */
    gpointer (*open)(const MsSchedule *s, const MsExecOptions *opts, const MsExecPlace *place,
                     GError **error);
    /* Starts op now and returns at once. The driver only launches what the dispatcher decided. */
    gboolean (*launch)(gpointer state, guint32 op, GError **error);
    /* Blocks up to timeout_us microseconds until at least one launched op finishes; appends the
     * finished ops (MsExecDone) to done. Returning TRUE with nothing appended means the time
     * passed. */
    gboolean (*wait)(gpointer state, gint64 timeout_us, GArray *done, GError **error);
    /* After the last op: the backend's own end-of-run checks, and its figures as record stats. */
    gboolean (*finish)(gpointer state, MsRecords *records, GError **error);
    void (*close)(gpointer state);
    /* Per-rank backends: runs the calibration microbenchmarks of spec (executor_bench.h) on this
     * rank, in step with the other ranks; rank 0's result is the measurement CSV. NULL hook: the
     * backend has none. */
    GBytes *(*bench)(GBytes *spec, const MsExecOptions *opts, const MsExecPlace *place,
                     GError **error);
    /* Devices (GPUs) this process can use, for commands that start one rank per device; 0 with an
     * error saying why when there is none. NULL hook: the backend uses none. */
    guint (*devices)(GError **error);
    /* Bytes of its options record (MsExecOptions.backend); 0: it takes none. A per-rank backend's
     * record travels to every rank as these bytes (executor_remote.h), so it holds no pointers. */
    gsize options_size;
} MsExecBackend;

/* Checks the common options (the timeout) and fills defaults into out; the backend's record is
 * copied as a pointer and checked by its hooks. FALSE with MS_EXECUTOR_ERROR_OPTIONS naming the
 * option and the bad value. */
gboolean ms_exec_options_resolve(const MsExecOptions *in, MsExecOptions *out, GError **error);

/* The driver loop: dispatcher poll -> backend launch -> backend wait -> dispatcher finished, until
 * every op has run. Returns the records (normalised to start at 0, backend named, stats "wall_s"
 * and the backend's), or NULL with an error: the dispatcher's (unknown policy, a schedule that
 * cannot progress), MS_EXECUTOR_ERROR_TIMEOUT naming ops still running, _PROTOCOL for a backend
 * reporting an op it was not given, or the backend's own. Works for all-rank backends and for
 * executor_remote's coordinator. */
MsRecords *ms_executor_run(const MsExecBackend *backend, const MsSchedule *s,
                           const MsExecOptions *opts, GError **error);

/* The loop alone, for a backend state the caller opened (and closes): executor_remote's
 * coordinator. Calls finish; the records are normalised. */
MsRecords *ms_executor_drive(const MsExecBackend *backend, gpointer state, const MsSchedule *s,
                             const MsExecOptions *opts, GError **error);

/* One call for commands: finds the backend in the registry (registry.h; loading its module the
 * first time), then runs s on it. topology, when not NULL, overrides opts->topology. A per-rank
 * backend is launched as executor_remote.h describes (forking ranks on this node, or joining a
 * Slurm/torchrun job); in a job every rank gets the same records back. NULL with an error: the
 * registry's (MS_EXECUTOR_ERROR_BACKEND for an unknown name or a backend this build lacks), the
 * module loader's (backend_module.h), or the run's. */
MsRecords *ms_backend_execute(const char *name, const MsSchedule *s, const MsTopology *topology,
                              const MsExecOptions *opts, GError **error);

G_END_DECLS
