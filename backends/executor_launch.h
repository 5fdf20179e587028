/* executor_launch: where this process stands in a multi-process run and how a single node's ranks
 * are started. A run is local (this process will fork one worker per rank), part of a Slurm step
 * (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID) or of a torchrun-style job (RANK, WORLD_SIZE,
 * LOCAL_RANK); the latter two need MASTER_ADDR and MASTER_PORT, where rank 0 listens. Workers
 * forked by the local launcher carry MOESIM_WORKER=1 with torchrun-style variables. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define MS_LAUNCH_ERROR (ms_launch_error_quark())
GQuark ms_launch_error_quark(void);
typedef enum {
    MS_LAUNCH_ERROR_ENV,   /* a missing, malformed or inconsistent environment variable */
    MS_LAUNCH_ERROR_SPAWN, /* a worker could not be started, or ended badly */
} MsLaunchError;

/* The most ranks one run may have (the schedule's limit). */
#define MS_LAUNCH_MAX_WORLD 65536u

typedef enum {
    MS_LAUNCH_LOCAL,
    MS_LAUNCH_SLURM,
    MS_LAUNCH_TORCHRUN,
} MsLaunchMode;

typedef struct {
    MsLaunchMode mode;
    gboolean worker; /* started by the local launcher */
    guint rank, world, local_rank;
    char *master_addr; /* NULL in local mode */
    guint16 master_port;
} MsLaunchEnv;

/* Reads the environment envp (NULL: this process's). torchrun variables win over Slurm's. FALSE
 * with MS_LAUNCH_ERROR_ENV naming the variable and its value when one is malformed (not a whole
 * number, RANK >= WORLD_SIZE, a port outside 1..65535, a world over MS_LAUNCH_MAX_WORLD), when
 * RANK comes without WORLD_SIZE, or when MASTER_ADDR or MASTER_PORT is missing in a job. */
gboolean ms_launch_env_read(const char *const *envp, MsLaunchEnv *out, GError **error);
void ms_launch_env_clear(MsLaunchEnv *env);

/* The GPU (index among the visible ones) a rank of local rank local_rank uses when visible GPUs
 * are visible to its process: its local rank when every GPU of the node is visible (a plain
 * srun or torchrun), the one GPU when the scheduler bound a single GPU to the task (srun
 * --gpus-per-task=1, --gpu-bind, or CUDA_VISIBLE_DEVICES set per task). FALSE with
 * MS_LAUNCH_ERROR_ENV when no GPU is visible, or when the task sees several GPUs but fewer than
 * its local rank needs (which of them is ambiguous: bind one GPU per task). */
gboolean ms_launch_device(guint local_rank, guint visible, guint *device, GError **error);
const char *ms_launch_mode_name(MsLaunchMode mode);

/* Workers started on this node: one process per rank running argv (argv[0] the program) with
 * the environment of this process plus RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR=127.0.0.1,
 * MASTER_PORT and MOESIM_WORKER=1. Standard input is closed; output goes to ours. */
typedef struct _MsLaunchGroup MsLaunchGroup;

/* Starts world workers; NULL with MS_LAUNCH_ERROR_SPAWN when one cannot start (those started
 * are killed). */
MsLaunchGroup *ms_launch_group_spawn(const char *const *argv, guint world, guint16 port,
                                     GError **error);
/* Waits until every worker exited, at most until deadline (monotonic us); FALSE with
 * MS_LAUNCH_ERROR_SPAWN naming the first rank that exited with a non-zero status or a signal,
 * or that was still running at the deadline (it is then killed). */
gboolean ms_launch_group_wait(MsLaunchGroup *g, gint64 deadline, GError **error);
/* Kills the workers still running and reaps them; then frees. */
void ms_launch_group_free(MsLaunchGroup *g);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsLaunchGroup, ms_launch_group_free)

G_END_DECLS
