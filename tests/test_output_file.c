/* Tests of output_file: a file written whole and exactly, an earlier file replaced only when the
 * output is complete (and kept, with no temporary file left, when it is abandoned or fails), its
 * permissions kept and a link to it left a link, a full device written in place and its failure
 * reported at the write or at the close naming the path, journals written in place, folders
 * refused, standard output's failures; then file_claims: an output that is an input (by name,
 * by another spelling, by a hard link) and two outputs on one file refused, in either order. */
#include "ms_test.h"

#include <fcntl.h>
#include <gio/gio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sim/base/file_claims.h"
#include "sim/base/input_file.h"
#include "sim/base/output_file.h"

static char *
tmp_path(const char *name)
{
    char *path = g_build_filename(ms_test_tmpdir(), name, NULL);
    unlink(path);
    return path;
}

static char *
contents(const char *path)
{
    char *text = NULL;
    return g_file_get_contents(path, &text, NULL, NULL) ? text : NULL;
}

/* A device that refuses every write as a full disk does: its own node under the test folder
 * when this process may make one (so that nothing can replace the system's), else /dev/full. */
static char *
full_device(void)
{
    char *path = tmp_path("full");
    if (mknod(path, S_IFCHR | 0666, makedev(1, 7)) == 0) {
        return path;
    }
    g_free(path);
    return g_strdup("/dev/full");
}

static void
test_write_and_replace(void)
{
    g_autofree char *path = tmp_path("out.txt");
    GError *error = NULL;
    MsOutputFile *f = ms_output_file_open(path, MS_OUTPUT_REPLACE, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    ms_output_file_printf(f, "a %d\n", 1);
    /* Larger than the buffer: written in several pieces. */
    g_autofree char *big = g_strnfill(200000, 'x');
    ms_output_file_write(f, big, 200000);
    /* Until closed, the file is not there under its name. */
    CU_ASSERT_FALSE(g_file_test(path, G_FILE_TEST_EXISTS));
    CU_ASSERT_TRUE(ms_test_output_temp_exists(path));
    CU_ASSERT_TRUE(ms_output_file_close(f, &error));
    CU_ASSERT_FALSE(ms_test_output_temp_exists(path));
    g_autofree char *text = contents(path);
    CU_ASSERT_EQUAL(strlen(text), 4 + 200000);
    CU_ASSERT_TRUE(g_str_has_prefix(text, "a 1\nxxx"));
    /* An earlier file is replaced only when the new one is complete; its mode is kept. */
    CU_ASSERT_EQUAL(chmod(path, 0640), 0);
    f = ms_output_file_open(path, MS_OUTPUT_REPLACE, &error);
    ms_output_file_printf(f, "new\n");
    g_autofree char *before = contents(path);
    CU_ASSERT_EQUAL(strlen(before), 4 + 200000);
    ms_output_file_free(f);
    g_autofree char *kept = contents(path);
    CU_ASSERT_EQUAL(strlen(kept), 4 + 200000);
    CU_ASSERT_FALSE(ms_test_output_temp_exists(path));
    CU_ASSERT_TRUE(ms_output_file_set_contents(path, MS_OUTPUT_REPLACE, "new\n", 4, &error));
    g_autofree char *now = contents(path);
    CU_ASSERT_STRING_EQUAL(now, "new\n");
    struct stat st;
    CU_ASSERT_EQUAL(stat(path, &st), 0);
    CU_ASSERT_EQUAL(st.st_mode & 0777, 0640);
    /* Through a link: the file it names is replaced, the link stays a link. */
    g_autofree char *link = tmp_path("link.txt");
    CU_ASSERT_EQUAL(symlink(path, link), 0);
    CU_ASSERT_TRUE(ms_output_file_set_contents(link, MS_OUTPUT_REPLACE, "linked\n", 7, &error));
    CU_ASSERT_EQUAL(lstat(link, &st), 0);
    CU_ASSERT_TRUE(S_ISLNK(st.st_mode));
    g_autofree char *through = contents(path);
    CU_ASSERT_STRING_EQUAL(through, "linked\n");
}

static void
test_errors(void)
{
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_output_file_open("/nonexistent/x.json", MS_OUTPUT_REPLACE, &error));
    MS_ASSERT_ERROR(error, MS_OUTPUT_FILE_ERROR, MS_OUTPUT_FILE_ERROR_IO,
                    "/nonexistent/x.json: cannot write: No such file or directory");
    CU_ASSERT_PTR_NULL(ms_output_file_open(ms_test_tmpdir(), MS_OUTPUT_REPLACE, &error));
    MS_ASSERT_ERROR(error, MS_OUTPUT_FILE_ERROR, MS_OUTPUT_FILE_ERROR_IO, ": cannot write: Is a");
    /* A full device: written in place (it stays a device), the failure named at the close when
     * the write fitted in the buffer, at the flush after a large write. */
    g_autofree char *full = full_device();
    MsOutputFile *f = ms_output_file_open(full, MS_OUTPUT_REPLACE, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    ms_output_file_printf(f, "{}\n");
    CU_ASSERT_FALSE(ms_output_file_close(f, &error));
    g_autofree char *expect = g_strdup_printf("%s: cannot write: No space left on device", full);
    MS_ASSERT_ERROR(error, MS_OUTPUT_FILE_ERROR, MS_OUTPUT_FILE_ERROR_IO, expect);
    struct stat st;
    CU_ASSERT_EQUAL(stat(full, &st), 0);
    CU_ASSERT_TRUE(S_ISCHR(st.st_mode));
    f = ms_output_file_open(full, MS_OUTPUT_REPLACE, &error);
    g_autofree char *big = g_strnfill(100000, 'x');
    ms_output_file_write(f, big, 100000);
    CU_ASSERT_FALSE(ms_output_file_flush(f, &error));
    MS_ASSERT_ERROR(error, MS_OUTPUT_FILE_ERROR, MS_OUTPUT_FILE_ERROR_IO, expect);
    ms_output_file_free(f);
    CU_ASSERT_FALSE(ms_output_file_set_contents(full, MS_OUTPUT_REPLACE, "x", 1, &error));
    MS_ASSERT_ERROR(error, MS_OUTPUT_FILE_ERROR, MS_OUTPUT_FILE_ERROR_IO, expect);
    /* /dev/null takes anything, in place. */
    CU_ASSERT_TRUE(ms_output_file_set_contents("/dev/null", MS_OUTPUT_REPLACE, "x", 1, &error));
    CU_ASSERT_EQUAL(stat("/dev/null", &st), 0);
    CU_ASSERT_TRUE(S_ISCHR(st.st_mode));
}

static void
test_in_place(void)
{
    g_autofree char *path = tmp_path("journal.csv");
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_set_contents(path, "stale\n", -1, NULL));
    MsOutputFile *f = ms_output_file_open(path, MS_OUTPUT_IN_PLACE, &error);
    ms_output_file_printf(f, "head\n");
    CU_ASSERT_TRUE(ms_output_file_flush(f, &error));
    /* Flushed rows are in the file under its own name while it is written. */
    g_autofree char *mid = contents(path);
    CU_ASSERT_STRING_EQUAL(mid, "head\n");
    CU_ASSERT_TRUE(ms_output_file_close(f, &error));
    f = ms_output_file_open(path, MS_OUTPUT_APPEND, &error);
    ms_output_file_printf(f, "row\n");
    CU_ASSERT_TRUE(ms_output_file_close(f, &error));
    g_autofree char *end = contents(path);
    CU_ASSERT_STRING_EQUAL(end, "head\nrow\n");
}

/* Standard output: a child whose standard output is the full device reports it. */
static void
test_stdout(void)
{
    g_autofree char *full = full_device();
    const char *argv[] = {ms_test_moesim(), "topo", "list", NULL};
    g_autoptr(GSubprocessLauncher) l = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDERR_PIPE);
    int fd = open(full, O_WRONLY);
    CU_ASSERT_TRUE_FATAL(fd >= 0);
    g_subprocess_launcher_take_stdout_fd(l, fd);
    GError *error = NULL;
    g_autoptr(GSubprocess) p = g_subprocess_launcher_spawnv(l, argv, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    g_autofree char *err = NULL;
    CU_ASSERT_TRUE(g_subprocess_communicate_utf8(p, NULL, NULL, NULL, &err, &error));
    CU_ASSERT_EQUAL(g_subprocess_get_exit_status(p), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "moesim: standard output: cannot write: No space left"));
}

static void
test_claims(void)
{
    ms_file_claims_enable(TRUE);
    GError *error = NULL;
    g_autofree char *in = ms_test_write_tmp("in.ini", "[model]\n");
    char *data = NULL;
    CU_ASSERT_TRUE_FATAL(ms_input_file_read(in, MS_INPUT_MODEL, &data, NULL, &error));
    g_free(data);
    /* An input, by its name, by another spelling and by a hard link, is no output. */
    g_autofree char *dir = g_path_get_dirname(in);
    g_autofree char *other = g_strdup_printf("%s/./in.ini", dir);
    g_autofree char *hard = tmp_path("hard.ini");
    CU_ASSERT_EQUAL(link(in, hard), 0);
    const char *spellings[] = {in, other, hard};
    for (guint i = 0; i < G_N_ELEMENTS(spellings); i++) {
        CU_ASSERT_PTR_NULL(ms_output_file_open(spellings[i], MS_OUTPUT_REPLACE, &error));
        MS_ASSERT_ERROR(error, MS_FILE_CLAIMS_ERROR, MS_FILE_CLAIMS_ERROR_INPUT,
                        "is both an input and an output of this command");
        CU_ASSERT_FALSE(ms_file_claims_output(spellings[i], FALSE, &error));
        MS_ASSERT_ERROR(error, MS_FILE_CLAIMS_ERROR, MS_FILE_CLAIMS_ERROR_INPUT, "an output never");
    }
    g_autofree char *left = contents(in);
    CU_ASSERT_STRING_EQUAL(left, "[model]\n");
    /* Unless the command updates its own earlier output. */
    CU_ASSERT_TRUE(ms_output_file_set_contents(in, MS_OUTPUT_UPDATE, "[model]\n", 8, &error));
    /* Two outputs on one file: claimed first, then opened once; a second claim or open is refused,
     * also after the first was complete. */
    g_autofree char *out = tmp_path("out.json");
    CU_ASSERT_TRUE(ms_file_claims_output(out, FALSE, &error));
    CU_ASSERT_FALSE(ms_file_claims_output(out, FALSE, &error));
    MS_ASSERT_ERROR(error, MS_FILE_CLAIMS_ERROR, MS_FILE_CLAIMS_ERROR_OUTPUT,
                    "is already an output of this command");
    /* An input opened later that is a claimed output is refused before it is read. */
    CU_ASSERT_TRUE_FATAL(g_file_set_contents(out, "{}", -1, NULL));
    CU_ASSERT_FALSE(ms_input_file_read(out, MS_INPUT_MODEL, &data, NULL, &error));
    MS_ASSERT_ERROR(error, MS_FILE_CLAIMS_ERROR, MS_FILE_CLAIMS_ERROR_OUTPUT,
                    "is both an input and an output of this command");
    CU_ASSERT_TRUE(ms_output_file_set_contents(out, MS_OUTPUT_REPLACE, "{}\n", 3, &error));
    CU_ASSERT_FALSE(ms_output_file_set_contents(out, MS_OUTPUT_REPLACE, "{}\n", 3, &error));
    MS_ASSERT_ERROR(error, MS_FILE_CLAIMS_ERROR, MS_FILE_CLAIMS_ERROR_OUTPUT, "already an output");
    /* Complete, it may be read back (a table then plotted). */
    CU_ASSERT_TRUE(ms_input_file_read(out, MS_INPUT_MODEL, &data, NULL, &error));
    g_free(data);
    /* Standard output twice; devices any number of times. */
    CU_ASSERT_TRUE(ms_file_claims_output("-", FALSE, &error));
    CU_ASSERT_FALSE(ms_file_claims_output("-", FALSE, &error));
    MS_ASSERT_ERROR(error, MS_FILE_CLAIMS_ERROR, MS_FILE_CLAIMS_ERROR_OUTPUT, "standard output");
    CU_ASSERT_TRUE(ms_file_claims_output("/dev/null", FALSE, &error));
    CU_ASSERT_TRUE(ms_file_claims_output("/dev/null", FALSE, &error));
    /* Off (a library's own use): nothing is refused. */
    ms_file_claims_enable(FALSE);
    CU_ASSERT_TRUE(ms_file_claims_output(out, FALSE, &error));
    CU_ASSERT_TRUE(ms_file_claims_output(out, FALSE, &error));
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"written whole, replaced when complete", test_write_and_replace},
        {"errors name the path", test_errors},
        {"journals in place", test_in_place},
        {"standard output", test_stdout},
        {"outputs are not inputs, nor each other", test_claims},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"output_file", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
