/* Tests of sweep_shards: shard specs, which points a shard holds and how many (every point in
 * exactly one shard), the batch script, listing shard files, and merging them back into point
 * order with every refused input. */
#include <glib/gstdio.h>

#include "ms_test.h"
#include "sim/sweep_shards.h"

static void
test_parse(void)
{
    GError *error = NULL;
    guint i = 9, n = 9;
    CU_ASSERT_TRUE(ms_sweep_shard_parse("2/5", &i, &n, &error));
    CU_ASSERT_EQUAL(i, 2);
    CU_ASSERT_EQUAL(n, 5);
    const char *bad[] = {"5/5", "1", "a/2", "1/0", "-1/3", "0/100001", "1/2/3", NULL};
    for (guint k = 0; bad[k]; k++) {
        CU_ASSERT_FALSE(ms_sweep_shard_parse(bad[k], &i, &n, &error));
        MS_ASSERT_ERROR(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_VALUE,
                        "expected I/N with 0 <= I < N");
    }
    g_autofree char *f = ms_sweep_shard_file(12);
    CU_ASSERT_STRING_EQUAL(f, "shard-12.csv");
}

static void
test_membership(void)
{
    for (guint n = 0; n < 12; n++) {
        for (guint shards = 1; shards < 6; shards++) {
            guint total = 0;
            for (guint s = 0; s < shards; s++) {
                guint held = 0;
                for (guint p = 0; p < n; p++) {
                    held += ms_sweep_shard_has(p, s, shards);
                }
                CU_ASSERT_EQUAL(ms_sweep_shard_size(n, s, shards), held);
                total += held;
            }
            CU_ASSERT_EQUAL(total, n);
        }
    }
    CU_ASSERT_TRUE(ms_sweep_shard_has(7, 1, 3));
    CU_ASSERT_FALSE(ms_sweep_shard_has(7, 2, 3));
}

static void
test_script(void)
{
    const char *options[] = {"--time=01:30:00", "--partition=debug", NULL};
    MsSweepSlurmJob job = {"/data/sw/sweep.sbatch",
                           "/data/sw",
                           "/home/u/study",
                           4,
                           8,
                           options,
                           "'/opt/moesim' sweep '--vary' 'x=1' --out '/data/sw' --resume"};
    g_autofree char *s = ms_sweep_slurm_script(&job);
    CU_ASSERT_STRING_EQUAL(s, "#!/bin/sh\n"
                              "# moesim sweep as a Slurm array job: each task runs one shard of "
                              "the grid.\n"
                              "# Submit with: sbatch '/data/sw/sweep.sbatch'\n"
                              "# When all tasks are done: moesim sweep --merge '/data/sw'\n"
                              "# It names the tasks that did not finish; resubmit only those "
                              "with\n"
                              "#   sbatch --array=I,J,... '/data/sw/sweep.sbatch'\n"
                              "# (a task keeps the rows its shard already has and runs the "
                              "rest).\n"
                              "#SBATCH --job-name=moesim-sweep\n"
                              "#SBATCH --array=0-3\n"
                              "#SBATCH --ntasks=1\n"
                              "#SBATCH --chdir=/home/u/study\n"
                              "#SBATCH --output=/data/sw/slurm-%A_%a.log\n"
                              "#SBATCH --cpus-per-task=8\n"
                              "#SBATCH --time=01:30:00\n"
                              "#SBATCH --partition=debug\n"
                              "exec '/opt/moesim' sweep '--vary' 'x=1' --out '/data/sw' --resume "
                              "--shard \"$SLURM_ARRAY_TASK_ID/4\"\n");
    /* Without CPUs or options asked for, no line for them. */
    MsSweepSlurmJob plain = {"/s/x.sbatch", "/s", "/w", 1, 0, NULL, "moesim sweep"};
    g_autofree char *p = ms_sweep_slurm_script(&plain);
    CU_ASSERT_PTR_NULL(strstr(p, "--cpus-per-task"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p, "#SBATCH --output=/s/slurm-%A_%a.log\nexec moesim sweep"));
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_sweep_slurm_option_check("--time=2:00:00", &error));
    CU_ASSERT_TRUE(ms_sweep_slurm_option_check("-p gpu", &error));
    const char *bad[] = {"time=2:00:00", "--array=0-3", "-a 1", "--time=1\n#SBATCH -x", NULL};
    for (guint i = 0; bad[i]; i++) {
        CU_ASSERT_FALSE(ms_sweep_slurm_option_check(bad[i], &error));
        MS_ASSERT_ERROR(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_OPTION, "--slurm-opt");
    }
}

static void
test_manifest(void)
{
    GError *error = NULL;
    g_autofree char *path = g_build_filename(ms_test_tmpdir(), "m.manifest", NULL);
    MsSweepManifest m = {3, 10, "point,seed,iterations"};
    CU_ASSERT_TRUE(ms_sweep_manifest_write(path, &m, &error));
    MsSweepManifest back;
    CU_ASSERT_TRUE_FATAL(ms_sweep_manifest_load(path, &back, &error));
    CU_ASSERT_EQUAL(back.shards, 3);
    CU_ASSERT_EQUAL(back.points, 10);
    CU_ASSERT_STRING_EQUAL(back.header, "point,seed,iterations");
    ms_sweep_manifest_clear(&back);
    CU_ASSERT_FALSE(ms_sweep_manifest_load("no/such.manifest", &back, &error));
    MS_ASSERT_ERROR(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_MANIFEST,
                    "no/such.manifest: no manifest: --merge joins the shards of an array job");
    const char *bad[] = {"{\"format\": \"moesim-result\"}",
                         "{\"format\": \"moesim-sweep-manifest\", \"shards\": 4, \"points\": 3, "
                         "\"header\": \"point,x\"}",
                         "{\"format\": \"moesim-sweep-manifest\", \"shards\": 0, \"points\": 3, "
                         "\"header\": \"point,x\"}",
                         "[", NULL};
    for (guint i = 0; bad[i]; i++) {
        g_autofree char *p = ms_test_write_tmp("bad.manifest", bad[i]);
        CU_ASSERT_FALSE(ms_sweep_manifest_load(p, &back, &error));
        MS_ASSERT_ERROR(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_MANIFEST,
                        "bad.manifest");
    }
}

/* Merging a job: every shard complete, or nothing written and each missing shard named. */
static void
test_merge_job(void)
{
    GError *error = NULL;
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "job", NULL);
    g_mkdir_with_parents(dir, 0755);
    MsSweepManifest m = {3, 7, "point,x"};
    g_autofree char *out = g_build_filename(dir, "sweep.csv", NULL);
    g_autofree char *s0 = g_build_filename(dir, "shard-0.csv", NULL);
    g_autofree char *s1 = g_build_filename(dir, "shard-1.csv", NULL);
    g_autofree char *s2 = g_build_filename(dir, "shard-2.csv", NULL);
    g_assert(g_file_set_contents(s0, "point,x\n0,a\n3,d\n6,g\n", -1, NULL));
    g_assert(g_file_set_contents(s1, "point,x\n4,e\n", -1, NULL));
    g_autofree char *part = g_strconcat(s2, ".part", NULL);
    g_assert(g_file_set_contents(part, "point,x\n5,f\n", -1, NULL));
    g_autoptr(GArray) failed = g_array_new(FALSE, FALSE, sizeof(guint));
    guint rows = 0;
    CU_ASSERT_FALSE(ms_sweep_merge_job(dir, &m, out, &rows, failed, &error));
    MS_ASSERT_ERROR(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_INCOMPLETE,
                    "2 of 3 shards did not finish: shard 1: shard-1.csv holds 1 of its 2 points; "
                    "shard 2: no shard-2.csv; shard-2.csv.part holds 1 of its 2 points");
    CU_ASSERT_EQUAL_FATAL(failed->len, 2);
    CU_ASSERT_EQUAL(g_array_index(failed, guint, 0), 1);
    CU_ASSERT_EQUAL(g_array_index(failed, guint, 1), 2);
    CU_ASSERT_FALSE(g_file_test(out, G_FILE_TEST_EXISTS));
    /* Without even a .part: the task did not run. */
    g_remove(part);
    g_array_set_size(failed, 0);
    CU_ASSERT_FALSE(ms_sweep_merge_job(dir, &m, out, &rows, failed, &error));
    MS_ASSERT_ERROR(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_INCOMPLETE,
                    "shard 2: no shard-2.csv (the task did not run or did not start)");
    /* A point of another shard is not a missing one: the tables are not this job's. */
    g_assert(g_file_set_contents(s1, "point,x\n1,b\n4,e\n5,f\n", -1, NULL));
    CU_ASSERT_FALSE(ms_sweep_merge_job(dir, &m, out, &rows, NULL, &error));
    MS_ASSERT_ERROR(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_MERGE,
                    "shard-1.csv: point 5 is not one of shard 1 of 3");
    g_assert(g_file_set_contents(s1, "point,y\n1,b\n4,e\n", -1, NULL));
    CU_ASSERT_FALSE(ms_sweep_merge_job(dir, &m, out, &rows, NULL, &error));
    MS_ASSERT_ERROR(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_MERGE,
                    "shard-1.csv:1: columns differ from the manifest's");
    /* Complete: merged in point order. */
    g_assert(g_file_set_contents(s1, "point,x\n4,e\n1,b\n", -1, NULL));
    g_assert(g_file_set_contents(s2, "point,x\n2,c\n5,f\n", -1, NULL));
    CU_ASSERT_TRUE(ms_sweep_merge_job(dir, &m, out, &rows, NULL, &error));
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(rows, 7);
    g_autofree char *text = NULL;
    g_assert(g_file_get_contents(out, &text, NULL, NULL));
    CU_ASSERT_STRING_EQUAL(text, "point,x\n0,a\n1,b\n2,c\n3,d\n4,e\n5,f\n6,g\n");
}

#define HEAD "point,policy,iterations,step_time_us\n"

static char *
write_in(const char *dir, const char *name, const char *text)
{
    char *path = g_build_filename(dir, name, NULL);
    g_assert(g_file_set_contents(path, text, -1, NULL));
    return path;
}

static void
test_merge(void)
{
    GError *error = NULL;
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "merge", NULL);
    g_mkdir_with_parents(dir, 0755);
    g_autofree char *a = write_in(dir, "shard-0.csv", HEAD "0,fifo,1,10\n2,fifo,1,30\n");
    g_autofree char *b = write_in(dir, "shard-1.csv", HEAD "1,lina,1,20\n\n3,lina,1,40\n");
    g_autofree char *other = write_in(dir, "notes.csv", "x\n");
    g_autoptr(GPtrArray) files = ms_sweep_shard_files(dir, &error);
    g_assert_no_error(error);
    CU_ASSERT_EQUAL_FATAL(files->len, 2);
    CU_ASSERT_STRING_EQUAL(files->pdata[0], a);
    CU_ASSERT_STRING_EQUAL(files->pdata[1], b);
    g_autofree char *out = g_build_filename(dir, "sweep.csv", NULL);
    const char *inputs[] = {b, a, NULL};
    guint rows = 0;
    CU_ASSERT_TRUE(ms_sweep_merge_csv(inputs, out, &rows, &error));
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(rows, 4);
    g_autofree char *text = NULL;
    g_assert(g_file_get_contents(out, &text, NULL, NULL));
    CU_ASSERT_STRING_EQUAL(text, HEAD "0,fifo,1,10\n1,lina,1,20\n2,fifo,1,30\n3,lina,1,40\n");
    CU_ASSERT_PTR_NULL(ms_sweep_shard_files("no/such/dir", &error));
    MS_ASSERT_ERROR(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_IO, "no/such/dir");
}

static void
merge_refused(const char *first, const char *second, gint code, const char *needle)
{
    GError *error = NULL;
    g_autofree char *a = ms_test_write_tmp("m0.csv", first);
    g_autofree char *b = ms_test_write_tmp("m1.csv", second);
    g_autofree char *out = g_build_filename(ms_test_tmpdir(), "refused.csv", NULL);
    const char *inputs[] = {a, b, NULL};
    guint rows = 0;
    CU_ASSERT_FALSE(ms_sweep_merge_csv(inputs, out, &rows, &error));
    MS_ASSERT_ERROR(error, MS_SWEEP_SHARDS_ERROR, code, needle);
    CU_ASSERT_FALSE(g_file_test(out, G_FILE_TEST_EXISTS));
}

static void
test_merge_errors(void)
{
    merge_refused(HEAD "0,fifo,1,1\n", "nope\n", MS_SWEEP_SHARDS_ERROR_MERGE,
                  "m1.csv:1: not a sweep CSV");
    merge_refused(HEAD "0,fifo,1,1\n", "point,seed,iterations,step_time_us\n",
                  MS_SWEEP_SHARDS_ERROR_MERGE, "m1.csv:1: columns differ from");
    merge_refused(HEAD "0,fifo,1,1\n", HEAD "1,lina,1,1\nx,lina,1,1\n", MS_SWEEP_SHARDS_ERROR_MERGE,
                  "m1.csv:3: bad point index 'x'");
    merge_refused(HEAD "0,fifo,1,1\n", HEAD "0,fifo,1,1\n", MS_SWEEP_SHARDS_ERROR_MERGE,
                  "point 0 is in two shard files");
    GError *error = NULL;
    const char *missing[] = {"no/such.csv", NULL};
    guint rows = 0;
    CU_ASSERT_FALSE(ms_sweep_merge_csv(missing, "out.csv", &rows, &error));
    MS_ASSERT_ERROR(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_IO, "no/such.csv");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"shard specs", test_parse},
        {"every point in one shard", test_membership},
        {"the batch script", test_script},
        {"the manifest", test_manifest},
        {"merging a job's shards", test_merge_job},
        {"merging shard files", test_merge},
        {"refused shard files", test_merge_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"sweep_shards", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
