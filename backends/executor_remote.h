/* executor_remote: runs a per-rank backend (one process per GPU) as one job. A coordinator owns
 * the dispatcher (through the executor's driver loop): it gathers the rank workers over TCP
 * (executor_wire.h), hands every rank the job (the schedule, the options and the backend's
 * session, e.g. NCCL unique ids), sends each launch decision to the op's rank and takes their
 * completion reports with start/end times (picoseconds, on the backend's common clock). On one
 * node the coordinator forks the workers; under Slurm or torchrun (executor_launch.h) rank 0 runs
 * it in a thread beside its own worker. Every wait ends at the run's timeout with a clear error. */
#pragma once

#include <glib.h>

#include "backends/executor.h"

G_BEGIN_DECLS

#define MS_REMOTE_ERROR (ms_remote_error_quark())
GQuark ms_remote_error_quark(void);
typedef enum {
    MS_REMOTE_ERROR_JOB,     /* the job does not fit the launch (world size), or a bad job */
    MS_REMOTE_ERROR_RANK,    /* a rank failed; the message is "rank N: its error" */
    MS_REMOTE_ERROR_PEER,    /* a peer broke the protocol: a wrong rank, op or message */
    MS_REMOTE_ERROR_ABORTED, /* the coordinator ended the run (its reason follows) */
} MsRemoteError;

/* The protocol this moesim speaks; a worker of another version is refused. */
#define MS_REMOTE_PROTOCOL 2

/* FALSE in a worker started by the local launcher and in ranks other than 0 of a Slurm or
 * torchrun job: the processes that must not write the run's outputs. */
gboolean ms_remote_is_primary(void);

/* Runs s on backend (per_rank) as the launch environment says. Local: forks one worker per
 * rank (opts->worker_command, or this program, with "exec --worker --backend NAME"). In a job:
 * the job's world must equal the schedule's ranks. Returns, on the coordinator, the records of
 * every op; on other ranks of a job, the records of their own ops (others MS_TIME_NEVER), on the
 * same time origin. NULL with an error: the backend's (as "rank N: ..."), executor_launch's,
 * executor_wire's (timeouts, closed connections), the driver loop's, or MS_REMOTE_ERROR_*. */
MsRecords *ms_remote_execute(const MsExecBackend *backend, const MsSchedule *s,
                             const MsExecOptions *opts, GError **error);

/* Runs the backend's microbenchmarks (its bench hook) on world ranks (local launch) or on the
 * job's ranks; make_spec builds the spec once every rank has joined, from their host names
 * (hosts[rank]). Returns rank 0's result on the coordinator, an empty result elsewhere. */
typedef GBytes *(*MsRemoteSpecFunc)(const char *const *hosts, guint world, gpointer data,
                                    GError **error);
GBytes *ms_remote_bench(const MsExecBackend *backend, guint world, MsRemoteSpecFunc make_spec,
                        gpointer data, const MsExecOptions *opts, GError **error);

/* The worker side: joins the coordinator named by the environment (MASTER_ADDR, MASTER_PORT),
 * runs the job it is sent on backend and returns when the coordinator says the run is over.
 * Returns the records of this rank's ops (a bench job: empty records), NULL with an error (also
 * sent to the coordinator when the connection still stands). */
MsRecords *ms_remote_worker_main(const MsExecBackend *backend, const MsExecOptions *opts,
                                 GError **error);

G_END_DECLS
