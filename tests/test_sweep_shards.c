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
    g_autofree char *s =
        ms_sweep_slurm_script("sw/sweep.sbatch", "sw", 4, "'/opt/moesim' sweep '--vary' 'x=1'");
    CU_ASSERT_STRING_EQUAL(s, "#!/bin/sh\n"
                              "# moesim sweep as a Slurm array job: each task runs one shard of "
                              "the grid.\n"
                              "# Submit with: sbatch sw/sweep.sbatch\n"
                              "# When all tasks are done: moesim sweep --merge 'sw'\n"
                              "#SBATCH --job-name=moesim-sweep\n"
                              "#SBATCH --array=0-3\n"
                              "#SBATCH --ntasks=1\n"
                              "#SBATCH --output=sw/slurm-%a.log\n"
                              "exec '/opt/moesim' sweep '--vary' 'x=1' --shard "
                              "\"$SLURM_ARRAY_TASK_ID/4\"\n");
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
        {"merging shard files", test_merge},
        {"refused shard files", test_merge_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"sweep_shards", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
