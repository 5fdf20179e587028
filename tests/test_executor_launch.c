/* Tests of the launch environment (local, Slurm, torchrun, and each malformed variable) and of the
 * local worker group: the environment workers see, exit statuses, stragglers at the deadline,
 * a program that cannot start. */
#include "backends/executor_launch.h"
#include "ms_test.h"

static gboolean
read_env(const char *const *vars, MsLaunchEnv *env, GError **error)
{
    return ms_launch_env_read(vars, env, error);
}

static void
test_modes(void)
{
    MsLaunchEnv e;
    GError *error = NULL;
    const char *local[] = {"HOME=/tmp", NULL};
    CU_ASSERT_TRUE_FATAL(read_env(local, &e, &error));
    CU_ASSERT_EQUAL(e.mode, MS_LAUNCH_LOCAL);
    CU_ASSERT_FALSE(e.worker);
    CU_ASSERT_PTR_NULL(e.master_addr);
    ms_launch_env_clear(&e);

    const char *torch[] = {
        "RANK=3", "WORLD_SIZE=8", "LOCAL_RANK=1", "MASTER_ADDR=node-a", "MASTER_PORT=29500", NULL};
    CU_ASSERT_TRUE_FATAL(read_env(torch, &e, &error));
    CU_ASSERT_EQUAL(e.mode, MS_LAUNCH_TORCHRUN);
    CU_ASSERT_EQUAL(e.rank, 3);
    CU_ASSERT_EQUAL(e.world, 8);
    CU_ASSERT_EQUAL(e.local_rank, 1);
    CU_ASSERT_STRING_EQUAL(e.master_addr, "node-a");
    CU_ASSERT_EQUAL(e.master_port, 29500);
    ms_launch_env_clear(&e);

    const char *slurm[] = {"SLURM_PROCID=5",       "SLURM_NTASKS=16",  "SLURM_LOCALID=5",
                           "MASTER_ADDR=10.0.0.1", "MASTER_PORT=6000", NULL};
    CU_ASSERT_TRUE_FATAL(read_env(slurm, &e, &error));
    CU_ASSERT_EQUAL(e.mode, MS_LAUNCH_SLURM);
    CU_ASSERT_EQUAL(e.rank, 5);
    CU_ASSERT_EQUAL(e.world, 16);
    CU_ASSERT_EQUAL(e.local_rank, 5);
    CU_ASSERT_STRING_EQUAL(ms_launch_mode_name(e.mode), "slurm");
    ms_launch_env_clear(&e);

    /* torchrun's variables win; LOCAL_RANK defaults to RANK; the local launcher's flag. */
    const char *both[] = {
        "SLURM_PROCID=9",        "SLURM_NTASKS=16", "RANK=2",          "WORLD_SIZE=4",
        "MASTER_ADDR=127.0.0.1", "MASTER_PORT=1",   "MOESIM_WORKER=1", NULL};
    CU_ASSERT_TRUE_FATAL(read_env(both, &e, &error));
    CU_ASSERT_EQUAL(e.mode, MS_LAUNCH_TORCHRUN);
    CU_ASSERT_EQUAL(e.rank, 2);
    CU_ASSERT_EQUAL(e.local_rank, 2);
    CU_ASSERT_TRUE(e.worker);
    ms_launch_env_clear(&e);
    CU_ASSERT_PTR_NULL(error);
}

static void
test_env_errors(void)
{
    const struct {
        const char *vars[8];
        const char *needle;
    } cases[] = {
        {{"RANK=0", "MASTER_ADDR=a", "MASTER_PORT=1", NULL}, "environment: WORLD_SIZE is not set"},
        {{"WORLD_SIZE=2", "MASTER_ADDR=a", "MASTER_PORT=1", NULL}, "environment: RANK is not set"},
        {{"RANK=abc", "WORLD_SIZE=2", NULL}, "environment: RANK='abc': "},
        {{"RANK=-1", "WORLD_SIZE=2", NULL}, "environment: RANK='-1': "},
        {{"RANK=4", "WORLD_SIZE=4", NULL}, "environment: RANK=4 is not below WORLD_SIZE=4"},
        {{"RANK=0", "WORLD_SIZE=70000", NULL}, "environment: WORLD_SIZE='70000': "},
        {{"RANK=0", "WORLD_SIZE=2", "LOCAL_RANK=x", NULL}, "environment: LOCAL_RANK='x': "},
        {{"RANK=0", "WORLD_SIZE=2", "MASTER_PORT=1", NULL},
         "environment: MASTER_ADDR is not set: a torchrun job needs the host of rank 0"},
        {{"SLURM_PROCID=0", "SLURM_NTASKS=2", "MASTER_PORT=1", NULL},
         "a slurm job needs the host of rank 0 (under Slurm e.g. MASTER_ADDR=$(scontrol show "
         "hostnames"},
        {{"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=a", NULL}, "environment: MASTER_PORT is not set"},
        {{"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=a", "MASTER_PORT=0", NULL},
         "environment: MASTER_PORT='0' is not a port (1 to 65535)"},
        {{"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=a", "MASTER_PORT=65536", NULL},
         "environment: MASTER_PORT='65536': "},
        {{"SLURM_PROCID=3", "SLURM_NTASKS=2", "MASTER_ADDR=a", "MASTER_PORT=5", NULL},
         "environment: SLURM_PROCID=3 is not below SLURM_NTASKS=2"},
        {{"SLURM_PROCID=0", NULL}, "environment: SLURM_NTASKS is not set"},
    };
    for (guint k = 0; k < G_N_ELEMENTS(cases); k++) {
        MsLaunchEnv e;
        GError *error = NULL;
        CU_ASSERT_FALSE(read_env(cases[k].vars, &e, &error));
        MS_ASSERT_ERROR(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_ENV, cases[k].needle);
    }
}

static void
test_group_environment(void)
{
    g_autofree char *pattern = g_build_filename(ms_test_tmpdir(), "env-", NULL);
    g_autofree char *script = g_strdup_printf(
        "echo \"$RANK $WORLD_SIZE $LOCAL_RANK $MASTER_ADDR $MASTER_PORT $MOESIM_WORKER\" > %s$RANK",
        pattern);
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    GError *error = NULL;
    MsLaunchGroup *g = ms_launch_group_spawn(argv, 3, 4242, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_TRUE(ms_launch_group_wait(g, g_get_monotonic_time() + 10 * G_USEC_PER_SEC, &error));
    CU_ASSERT_PTR_NULL(error);
    ms_launch_group_free(g);
    for (guint r = 0; r < 3; r++) {
        g_autofree char *path = g_strdup_printf("%s%u", pattern, r);
        g_autofree char *text = NULL;
        CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &text, NULL, NULL));
        g_autofree char *expect = g_strdup_printf("%u 3 %u 127.0.0.1 4242 1\n", r, r);
        CU_ASSERT_STRING_EQUAL(text, expect);
    }
}

static void
test_group_failures(void)
{
    GError *error = NULL;
    const char *fails[] = {"/bin/sh", "-c", "test \"$RANK\" != 2 || exit 3", NULL};
    MsLaunchGroup *g = ms_launch_group_spawn(fails, 4, 1, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_FALSE(ms_launch_group_wait(g, g_get_monotonic_time() + 10 * G_USEC_PER_SEC, &error));
    MS_ASSERT_ERROR(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_SPAWN,
                    "the worker of rank 2 exited with status 3");
    ms_launch_group_free(g);

    const char *killed[] = {"/bin/sh", "-c", "kill -9 $$", NULL};
    g = ms_launch_group_spawn(killed, 1, 1, &error);
    CU_ASSERT_FALSE(ms_launch_group_wait(g, g_get_monotonic_time() + 10 * G_USEC_PER_SEC, &error));
    MS_ASSERT_ERROR(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_SPAWN,
                    "the worker of rank 0 was killed by signal 9");
    ms_launch_group_free(g);

    /* Stragglers: reported at the deadline, killed when the group is freed. */
    const char *sleeper[] = {"/bin/sh", "-c", "test \"$RANK\" = 0 || exec sleep 30", NULL};
    g = ms_launch_group_spawn(sleeper, 2, 1, &error);
    gint64 t0 = g_get_monotonic_time();
    CU_ASSERT_FALSE(ms_launch_group_wait(g, t0 + 200000, &error));
    MS_ASSERT_ERROR(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_SPAWN,
                    "the worker of rank 1 was still running at the deadline");
    ms_launch_group_free(g);
    CU_ASSERT_TRUE(g_get_monotonic_time() - t0 < 5 * ms_test_time_factor() * G_USEC_PER_SEC);

    const char *missing[] = {"/nonexistent/moesim", "exec", NULL};
    CU_ASSERT_PTR_NULL(ms_launch_group_spawn(missing, 2, 1, &error));
    MS_ASSERT_ERROR(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_SPAWN,
                    "cannot start the worker of rank 0 (/nonexistent/moesim)");
}

/* Which visible GPU a local rank takes: its own when all are visible, the only one when the
 * scheduler bound one to the task (srun --gpus-per-task=1), and a refusal when it is ambiguous. */
static void
test_device_choice(void)
{
    guint d = 99;
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_launch_device(3, 8, &d, &error));
    CU_ASSERT_EQUAL(d, 3);
    CU_ASSERT_TRUE(ms_launch_device(5, 1, &d, &error));
    CU_ASSERT_EQUAL(d, 0);
    CU_ASSERT_TRUE(ms_launch_device(0, 1, &d, &error));
    CU_ASSERT_EQUAL(d, 0);
    CU_ASSERT_FALSE(ms_launch_device(4, 2, &d, &error));
    MS_ASSERT_ERROR(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_ENV, "local rank 4 sees 2 GPUs");
    CU_ASSERT_FALSE(ms_launch_device(0, 0, &d, &error));
    MS_ASSERT_ERROR(error, MS_LAUNCH_ERROR, MS_LAUNCH_ERROR_ENV, "no GPU is visible");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"local, Slurm and torchrun environments", test_modes},
        {"the GPU of a local rank, all GPUs or one per task visible", test_device_choice},
        {"malformed environments", test_env_errors},
        {"workers see their rank and the coordinator", test_group_environment},
        {"failed, killed, straggling and missing workers", test_group_failures},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"executor launch", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
