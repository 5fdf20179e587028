/* Tests of what every command does with its outputs: each command run with an output on a full
 * device (/dev/full), and with standard output there, exits 2 naming the output; the same command
 * with a writable output exits 0 and writes it (so that the failures are the device's); an output
 * that is one of the command's inputs, by its name, by another spelling or by a hard link, and two
 * outputs on one file are refused with exit 2 and leave the input byte for byte as it was; a
 * failing command prints nothing on standard output. */
#include "ms_test.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <sys/wait.h>
#include <unistd.h>

/* Measurements that calibrate fits in no time: send/recv inside a node, 1 to 16 MiB. */
#define MEAS                                                                                       \
    "# moesim-measurements 1\nkind,bytes,ranks,ranks_per_node,time_us\n"                           \
    "sendrecv,1048576,2,2,14\nsendrecv,4194304,2,2,30\nsendrecv,16777216,2,2,93\n"
#define TOKENS_CSV "iteration,layer,rank,token,experts\n0,0,0,0,1 2\n0,0,1,1,0 3\n"
#define FLOWS "f1 gpu0 gpu8 25MB 0us\n"
/* A model small enough that the cpu backend executes its step at once. */
#define MODEL                                                                                      \
    "[model]\nformat = 1\nname = m\nlayers = 2\nd_model = 64\nd_ffn = 64\nexperts = 8\n"           \
    "top_k = 2\nheads = 1\nseq_len = 8\ntokens_per_gpu = 8\n"

/* The marker an argument list puts where the output path goes; each case substitutes it. */
#define OUT "@OUT@"

static const char *full_dev = "/dev/full";

/* The folder the commands run in, with their inputs. */
static char *dir;

static char *
in_dir(const char *name)
{
    return g_build_filename(dir, name, NULL);
}

static void
child_stdout_full(gpointer data)
{
    (void)data;
    int fd = open(full_dev, O_WRONLY);
    if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        close(fd);
    }
}

/* Runs moesim in dir with args (OUT replaced by out); stdout to the full device when
 * stdout_full, else captured and dropped. Returns the exit status (-1: a signal), stderr. */
static int
run(const char *const *args, const char *out, gboolean stdout_full, char **err)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)ms_test_moesim());
    for (guint i = 0; args[i]; i++) {
        g_ptr_array_add(argv, (gpointer)(strcmp(args[i], OUT) == 0 ? out : args[i]));
    }
    g_ptr_array_add(argv, NULL);
    int status = 0;
    g_autofree char *captured = NULL;
    gboolean ok = g_spawn_sync(dir, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT,
                               stdout_full ? child_stdout_full : NULL, NULL,
                               stdout_full ? NULL : &captured, err, &status, NULL);
    g_ptr_array_free(argv, TRUE);
    g_assert(ok);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int
suite_init(void)
{
    dir = g_build_filename(ms_test_tmpdir(), "cli-outputs", NULL);
    g_assert(g_mkdir_with_parents(dir, 0755) == 0);
    static const struct {
        const char *name, *text;
    } inputs[] = {{"meas.csv", MEAS}, {"in.csv", TOKENS_CSV}, {"f.txt", FLOWS}, {"m.ini", MODEL}};
    for (guint i = 0; i < G_N_ELEMENTS(inputs); i++) {
        g_autofree char *path = in_dir(inputs[i].name);
        g_assert(g_file_set_contents(path, inputs[i].text, -1, NULL));
    }
    /* A schedule and a trace written by moesim itself, and a copy of a shipped topology. */
    static const char *const plan[] = {"plan",  "-t", "dgx-a100",  "-m",
                                       "m.ini", "-o", "step.json", NULL};
    static const char *const gen[] = {"trace", "gen", "-o", "t.trace", NULL};
    g_autofree char *e1 = NULL, *e2 = NULL;
    if (run(plan, NULL, FALSE, &e1) != 0 || run(gen, NULL, FALSE, &e2) != 0) {
        return 1;
    }
    g_autofree char *topo_path = in_dir("t.ini");
    g_autofree char *src = g_build_filename(ms_test_srcdir(), "topologies", "dgx-a100.ini", NULL);
    g_autofree char *text = NULL;
    if (!g_file_get_contents(src, &text, NULL, NULL) ||
        !g_file_set_contents(topo_path, text, -1, NULL)) {
        return 1;
    }
    if (access(full_dev, W_OK) != 0) {
        full_dev = NULL;
    }
    return 0;
}

/* Every command whose output can be named, the output where OUT is. */
static const char *const named_outputs[][12] = {
    {"calibrate", "-t", "dgx-a100", "-o", OUT, "meas.csv", NULL},
    {"calibrate", "-t", "dgx-a100", "--json", OUT, "meas.csv", NULL},
    {"exec", "--backend", "cpu", "step.json", "--json", OUT, NULL},
    {"exec", "--backend", "cpu", "step.json", "--csv", OUT, NULL},
    {"exec", "--backend", "cpu", "step.json", "--chrome-trace", OUT, NULL},
    {"topo", "show", "dgx-a100", "--json", OUT, NULL},
    {"model", "show", "lina-gpt2-16e", "--json", OUT, NULL},
    {"trace", "info", "t.trace", "--json", OUT, NULL},
    {"collective", "--topology", "dgx-a100-2node", "--op", "alltoall", "-b", "1M", "-e", "2M",
     "--json", OUT, NULL},
    {"flows", "--topology", "dgx-a100-2node", "f.txt", "--json", OUT, NULL},
    {"plan", "-o", OUT, NULL},
    {"run", "--json", OUT, NULL},
    {"run", "--csv", OUT, NULL},
    {"run", "--chrome-trace", OUT, NULL},
    {"run", "--layers", OUT, NULL},
    {"trace", "gen", "-o", OUT, NULL},
    {"trace", "import", "--from", "csv", "in.csv", "-o", OUT, NULL},
    {NULL},
};

/* Commands that write their result to standard output. */
static const char *const stdout_outputs[][12] = {
    {"topo", "list", NULL},
    {"topo", "show", "dgx-a100", NULL},
    {"model", "show", "lina-gpt2-16e", NULL},
    {"trace", "info", "t.trace", NULL},
    {"trace", "gen", "-o", "-", NULL},
    {"plan", "-o", "-", NULL},
    {"run", NULL},
    {"exec", "--backend", "cpu", "step.json", "--json", "-", NULL},
    {"calibrate", "-t", "dgx-a100", "meas.csv", NULL},
    {"collective", "--topology", "dgx-a100-2node", "--op", "alltoall", "-b", "1M", "-e", "2M",
     NULL},
    {NULL},
};

static void
report(const char *const *args, int rc, const char *err, const char *why)
{
    g_autofree char *cmd = g_strjoinv(" ", (char **)args);
    fprintf(stderr, "\n  moesim %s: exit %d, %s; stderr:\n%s\n", cmd, rc, why, err);
}

static void
test_full_device(void)
{
    if (full_dev == NULL) {
        fprintf(stderr, " (no writable /dev/full: skipped) ");
        return;
    }
    g_autofree char *expect = g_strdup_printf("moesim: %s: cannot write", full_dev);
    for (guint i = 0; named_outputs[i][0]; i++) {
        g_autofree char *err = NULL;
        int rc = run(named_outputs[i], full_dev, FALSE, &err);
        if (rc != 2 || strstr(err, expect) == NULL) {
            report(named_outputs[i], rc, err, "expected exit 2 naming the full device");
            CU_FAIL("an output on a full device was not refused");
        }
        /* The same command to a file: it works, and the file is there and not empty. */
        g_autofree char *path = in_dir("ok.out");
        g_unlink(path);
        g_autofree char *err2 = NULL;
        rc = run(named_outputs[i], "ok.out", FALSE, &err2);
        GStatBuf st;
        if (rc != 0 || g_stat(path, &st) != 0 || st.st_size == 0) {
            report(named_outputs[i], rc, err2, "expected exit 0 and the file written");
            CU_FAIL("a command did not write its output");
        }
        CU_ASSERT_FALSE(ms_test_output_temp_exists(path));
    }
}

static void
test_full_stdout(void)
{
    if (full_dev == NULL) {
        fprintf(stderr, " (no writable /dev/full: skipped) ");
        return;
    }
    for (guint i = 0; stdout_outputs[i][0]; i++) {
        g_autofree char *err = NULL;
        int rc = run(stdout_outputs[i], NULL, TRUE, &err);
        if (rc != 2 || strstr(err, "moesim: standard output: cannot write") == NULL) {
            report(stdout_outputs[i], rc, err, "expected exit 2 naming standard output");
            CU_FAIL("a full standard output was not refused");
        }
        g_autofree char *err2 = NULL;
        rc = run(stdout_outputs[i], NULL, FALSE, &err2);
        if (rc != 0) {
            report(stdout_outputs[i], rc, err2, "expected exit 0 with a standard output");
            CU_FAIL("a command failed with a working standard output");
        }
    }
}

/* An output that is an input, or two outputs on one file: refused, the input untouched. */
static const struct {
    const char *input; /* the file that must be left as it was, or NULL */
    const char *args[12];
    const char *expect;
} clashes[] = {
    {"meas.csv",
     {"calibrate", "-t", "dgx-a100", "-o", "meas.csv", "meas.csv", NULL},
     "meas.csv: is both an input and an output"},
    {"meas.csv",
     {"calibrate", "-t", "dgx-a100", "--json", "./meas.csv", "meas.csv", NULL},
     "meas.csv: is both an input and an output of this command (also named ./meas.csv)"},
    {"in.csv",
     {"trace", "import", "--from", "csv", "-o", "in.csv", "in.csv", NULL},
     "in.csv: is both an input and an output"},
    {"t.trace",
     {"run", "-T", "t.trace", "--json", "t.trace", NULL},
     "t.trace: is both an input and an output"},
    {"step.json",
     {"exec", "--backend", "cpu", "step.json", "--json", "step.json", NULL},
     "step.json: is both an input and an output"},
    {"step.json",
     {"exec", "--backend", "cpu", "step.json", "--chrome-trace", "link.json", NULL},
     "step.json: is both an input and an output of this command (also named link.json)"},
    {"t.ini",
     {"topo", "show", "t.ini", "--json", "t.ini", NULL},
     "t.ini: is both an input and an output"},
    {"t.ini",
     {"topo", "show", "t.ini", "--json", "../cli-outputs/t.ini", NULL},
     "also named t.ini"},
    {NULL, {"run", "--json", "X", "--csv", "X", NULL}, "X: is already an output"},
    {NULL, {"run", "--json", "X", "--chrome-trace", "./X", NULL}, "is already an output"},
    {NULL,
     {"exec", "--backend", "cpu", "step.json", "--json", "-", "--csv", "-", NULL},
     "standard output: is already an output"},
};

static void
test_clashes(void)
{
    /* link.json is step.json under another name (a hard link): the same file. */
    g_autofree char *step = in_dir("step.json");
    g_autofree char *link_path = in_dir("link.json");
    g_unlink(link_path);
    CU_ASSERT_EQUAL_FATAL(link(step, link_path), 0);
    for (guint i = 0; i < G_N_ELEMENTS(clashes); i++) {
        g_autofree char *before = NULL, *after = NULL;
        g_autofree char *input = clashes[i].input ? in_dir(clashes[i].input) : NULL;
        if (input) {
            CU_ASSERT_TRUE_FATAL(g_file_get_contents(input, &before, NULL, NULL));
        }
        g_autofree char *err = NULL;
        int rc = run(clashes[i].args, NULL, FALSE, &err);
        if (rc != 2 || strstr(err, clashes[i].expect) == NULL) {
            report(clashes[i].args, rc, err, clashes[i].expect);
            CU_FAIL("an output clashing with an input or another output was not refused");
        }
        if (input) {
            CU_ASSERT_TRUE_FATAL(g_file_get_contents(input, &after, NULL, NULL));
            CU_ASSERT_STRING_EQUAL(before, after);
            CU_ASSERT_FALSE(ms_test_output_temp_exists(input));
        }
        g_autofree char *x = in_dir("X");
        CU_ASSERT_FALSE(g_file_test(x, G_FILE_TEST_EXISTS));
    }
}

/* A command that fails prints its message alone: no table head or note before it on standard
 * output (validate used to print its "no --calibration" note first). */
static void
test_failure_prints_nothing(void)
{
    g_autofree char *meas = in_dir("far.csv");
    CU_ASSERT_TRUE_FATAL(
        g_file_set_contents(meas,
                            "# moesim-measurements 1\nkind,bytes,ranks,ranks_per_node,time_us\n"
                            "allreduce,1048576,8,8,40\nallreduce,1048576,70000,8,40\n",
                            -1, NULL));
    const char *args[] = {"validate", "--measured", meas, "--topology", "dgx-a100", NULL};
    g_autofree char *out = NULL, *err = NULL;
    CU_ASSERT_EQUAL(ms_test_run_moesim(args, &out, &err), 2);
    CU_ASSERT_STRING_EQUAL(out, "");
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "far.csv:4: allreduce 70000x8"));
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"every named output on a full device exits 2 naming it", test_full_device},
        {"a full standard output exits 2", test_full_stdout},
        {"an output that is an input, or two outputs on one file, are refused", test_clashes},
        {"a failing command prints nothing on standard output", test_failure_prints_nothing},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"cli_outputs", suite_init, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
