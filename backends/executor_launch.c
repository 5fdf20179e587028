/* executor_launch: the launch environment (Slurm, torchrun, local) and the local worker group
 * (g_spawn, waitpid with a deadline, SIGTERM then SIGKILL for stragglers). */
#include "executor_launch.h"

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "sim/base/units.h"

G_DEFINE_QUARK(ms_launch_error_quark, ms_launch_error)

const char *
ms_launch_mode_name(MsLaunchMode mode)
{
    switch (mode) {
    case MS_LAUNCH_SLURM:
        return "slurm";
    case MS_LAUNCH_TORCHRUN:
        return "torchrun";
    default:
        return "local";
    }
}

static gboolean
env_uint(char **envp, const char *name, guint64 max, guint *out, GError **error)
{
    const char *text = g_environ_getenv(envp, name);
    g_autoptr(GError) local = NULL;
    guint64 v = 0;
    if (text == NULL) {
        g_set_error(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_ENV, "environment: %s is not set",
                    name);
        return FALSE;
    }
    if (!ms_parse_uint(text, 0, max, &v, &local)) {
        g_set_error(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_ENV, "environment: %s='%s': %s", name,
                    text, local->message);
        return FALSE;
    }
    *out = (guint)v;
    return TRUE;
}

static gboolean
read_master(char **envp, MsLaunchEnv *out, GError **error)
{
    const char *addr = g_environ_getenv(envp, "MASTER_ADDR");
    if (addr == NULL || *addr == '\0') {
        g_set_error(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_ENV,
                    "environment: MASTER_ADDR is not set: a %s job needs the host of rank 0 "
                    "(under Slurm e.g. MASTER_ADDR=$(scontrol show hostnames "
                    "\"$SLURM_JOB_NODELIST\" | head -n1))",
                    ms_launch_mode_name(out->mode));
        return FALSE;
    }
    guint port = 0;
    if (!env_uint(envp, "MASTER_PORT", 65535, &port, error)) {
        return FALSE;
    }
    if (port == 0) {
        g_set_error(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_ENV,
                    "environment: MASTER_PORT='0' is not a port (1 to 65535)");
        return FALSE;
    }
    out->master_addr = g_strdup(addr);
    out->master_port = (guint16)port;
    return TRUE;
}

static gboolean
read_ranks(char **envp, const char *rank, const char *world, const char *local, MsLaunchEnv *out,
           GError **error)
{
    if (!env_uint(envp, rank, MS_LAUNCH_MAX_WORLD - 1, &out->rank, error) ||
        !env_uint(envp, world, MS_LAUNCH_MAX_WORLD, &out->world, error)) {
        return FALSE;
    }
    if (out->rank >= out->world) {
        g_set_error(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_ENV,
                    "environment: %s=%u is not below %s=%u", rank, out->rank, world, out->world);
        return FALSE;
    }
    out->local_rank = out->rank;
    if (g_environ_getenv(envp, local) && !env_uint(envp, local, 1023, &out->local_rank, error)) {
        return FALSE;
    }
    return read_master(envp, out, error);
}

gboolean
ms_launch_env_read(const char *const *envp, MsLaunchEnv *out, GError **error)
{
    g_auto(GStrv) own = envp ? NULL : g_get_environ();
    char **env = envp ? (char **)envp : own;
    MsLaunchEnv e = {MS_LAUNCH_LOCAL};
    e.worker = g_strcmp0(g_environ_getenv(env, "MOESIM_WORKER"), "1") == 0;
    gboolean ok = TRUE;
    if (g_environ_getenv(env, "RANK") || g_environ_getenv(env, "WORLD_SIZE")) {
        e.mode = MS_LAUNCH_TORCHRUN;
        ok = read_ranks(env, "RANK", "WORLD_SIZE", "LOCAL_RANK", &e, error);
    } else if (g_environ_getenv(env, "SLURM_PROCID")) {
        e.mode = MS_LAUNCH_SLURM;
        ok = read_ranks(env, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", &e, error);
    }
    if (!ok) {
        ms_launch_env_clear(&e);
        return FALSE;
    }
    *out = e;
    return TRUE;
}

void
ms_launch_env_clear(MsLaunchEnv *env)
{
    g_clear_pointer(&env->master_addr, g_free);
}

/* --- the local group --- */

struct _MsLaunchGroup {
    guint n;
    GPid *pids;
    gboolean *reaped;
};

MsLaunchGroup *
ms_launch_group_spawn(const char *const *argv, guint world, guint16 port, GError **error)
{
    MsLaunchGroup *g = g_new0(MsLaunchGroup, 1);
    g->pids = g_new0(GPid, MAX(world, 1));
    g->reaped = g_new0(gboolean, MAX(world, 1));
    char num[32];
    for (guint r = 0; r < world; r++) {
        g_auto(GStrv) env = g_get_environ();
        g_snprintf(num, sizeof num, "%u", r);
        env = g_environ_setenv(env, "RANK", num, TRUE);
        env = g_environ_setenv(env, "LOCAL_RANK", num, TRUE);
        g_snprintf(num, sizeof num, "%u", world);
        env = g_environ_setenv(env, "WORLD_SIZE", num, TRUE);
        g_snprintf(num, sizeof num, "%u", port);
        env = g_environ_setenv(env, "MASTER_PORT", num, TRUE);
        env = g_environ_setenv(env, "MASTER_ADDR", "127.0.0.1", TRUE);
        env = g_environ_setenv(env, "MOESIM_WORKER", "1", TRUE);
        g_autoptr(GError) local = NULL;
        if (!g_spawn_async(NULL, (char **)argv, env, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                           &g->pids[r], &local)) {
            g_set_error(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_SPAWN,
                        "cannot start the worker of rank %u (%s): %s", r, argv[0], local->message);
            ms_launch_group_free(g);
            return NULL;
        }
        g->n = r + 1;
    }
    return g;
}

static gboolean
exit_error(guint rank, int status, GError **error)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        return TRUE;
    }
    if (WIFEXITED(status)) {
        g_set_error(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_SPAWN,
                    "the worker of rank %u exited with status %d", rank, WEXITSTATUS(status));
    } else {
        g_set_error(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_SPAWN,
                    "the worker of rank %u was killed by signal %d", rank,
                    WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    }
    return FALSE;
}

gboolean
ms_launch_group_wait(MsLaunchGroup *g, gint64 deadline, GError **error)
{
    gboolean ok = TRUE;
    guint left = 0;
    for (guint r = 0; r < g->n; r++) {
        left += !g->reaped[r];
    }
    while (left) {
        for (guint r = 0; r < g->n; r++) {
            int status = 0;
            if (g->reaped[r] || waitpid(g->pids[r], &status, WNOHANG) != g->pids[r]) {
                continue;
            }
            g->reaped[r] = TRUE;
            left--;
            ok = exit_error(r, status, ok ? error : NULL) && ok;
        }
        if (left && g_get_monotonic_time() >= deadline) {
            for (guint r = 0; r < g->n && ok; r++) {
                if (!g->reaped[r]) {
                    g_set_error(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_SPAWN,
                                "the worker of rank %u was still running at the deadline", r);
                    ok = FALSE;
                }
            }
            return FALSE;
        }
        if (left) {
            g_usleep(10000);
        }
    }
    return ok;
}

void
ms_launch_group_free(MsLaunchGroup *g)
{
    if (g == NULL) {
        return;
    }
    for (guint r = 0; r < g->n; r++) {
        if (!g->reaped[r]) {
            kill(g->pids[r], SIGTERM);
        }
    }
    for (guint r = 0; r < g->n; r++) {
        for (guint k = 0; !g->reaped[r] && k < 200; k++) {
            g->reaped[r] = waitpid(g->pids[r], NULL, WNOHANG) == g->pids[r];
            if (!g->reaped[r]) {
                g_usleep(5000);
            }
        }
        if (!g->reaped[r]) {
            kill(g->pids[r], SIGKILL);
            waitpid(g->pids[r], NULL, 0);
        }
        g_spawn_close_pid(g->pids[r]);
    }
    g_free(g->pids);
    g_free(g->reaped);
    g_free(g);
}

gboolean
ms_launch_device(guint local_rank, guint visible, guint *device, GError **error)
{
    if (visible == 0) {
        g_set_error(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_ENV,
                    "no GPU is visible to local rank %u", local_rank);
        return FALSE;
    }
    if (local_rank < visible || visible == 1) {
        *device = local_rank < visible ? local_rank : 0;
        return TRUE;
    }
    g_set_error(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_ENV,
                "local rank %u sees %u GPUs: give every task all of the node's GPUs or exactly one "
                "(srun --gpus-per-task=1)",
                local_rank, visible);
    return FALSE;
}
