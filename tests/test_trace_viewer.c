/* moesim's Chrome traces loaded in a real trace viewer: Chrome DevTools' trace engine (the parser
 * of its Performance panel, npm @paulirish/trace_engine, pinned by tests/trace_viewer/), driven by
 * tests/trace_viewer/check.mjs, which checks that the engine's model of each file is the file's:
 * processes and threads named, every op on its thread, every flow bound to its ops. Exits 77
 * (skipped) without node or the engine; `./quickstart test` installs the engine when npm is
 * there (MOESIM_TRACE_VIEWER names its folder). */
#include "ms_test.h"

#include <sys/wait.h>

#include "chrome_trace_fixture.h"
#include "sim/out/chrome_trace.h"

static const char *
viewer_dir(void)
{
    return g_getenv("MOESIM_TRACE_VIEWER");
}

static int view(const char *path, char **out);

/* Whether node and the engine are there, and the engine loads in that node. */
static gboolean
viewer_present(void)
{
    g_autofree char *node = g_find_program_in_path("node");
    const char *dir = viewer_dir();
    g_autofree char *engine = dir ? g_build_filename(dir, "node_modules", "@paulirish",
                                                     "trace_engine", "package.json", NULL)
                                  : NULL;
    g_autofree char *out = NULL;
    return node && engine && g_file_test(engine, G_FILE_TEST_EXISTS) && view("--probe", &out) == 0;
}

/* Loads path in the viewer (--probe: only loads the viewer); returns the exit status and its
 * line of counts in *out. */
static int
view(const char *path, char **out)
{
    g_autofree char *script =
        g_build_filename(ms_test_srcdir(), "tests", "trace_viewer", "check.mjs", NULL);
    const char *argv[] = {"node", script, viewer_dir(), path, NULL};
    g_autofree char *err = NULL;
    int status = 0;
    g_autoptr(GError) error = NULL;
    if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, out, &err,
                      &status, &error)) {
        fprintf(stderr, "\n  cannot run node: %s\n", error->message);
        return -1;
    }
    if (err && *err) {
        fprintf(stderr, "\n  %s", err);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The number before what in the viewer's line ("... 5 of 10 flows bound ..."). */
static guint
figure(const char *line, const char *what)
{
    const char *at = strstr(line, what);
    if (at == NULL) {
        return G_MAXUINT;
    }
    while (at > line && at[-1] == ' ') {
        at--;
    }
    while (at > line && g_ascii_isdigit(at[-1])) {
        at--;
    }
    return (guint)g_ascii_strtoull(at, NULL, 10);
}

/* The fixture, two iterations: the odd stream name survives, 12 ops and 2 iteration slices,
 * and of the 10 flows the 8 that touch two timestamps bind: the engine keeps one event per
 * timestamp of a flow, and the allreduce starts at 30 us on both GPUs. */
static void
test_fixture_loads(void)
{
    MsSchedule *s;
    MsRecords *r;
    fx_trace_build(&s, &r);
    g_autofree char *path = g_build_filename(ms_test_tmpdir(), "fixture.json", NULL);
    GError *error = NULL;
    g_autoptr(MsChromeTrace) t = ms_chrome_trace_open(path, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE(ms_chrome_trace_add(t, 0, s, r, &error));
    CU_ASSERT_TRUE(ms_chrome_trace_add(t, 1, s, r, &error));
    CU_ASSERT_TRUE_FATAL(ms_chrome_trace_close(t, &error));
    ms_schedule_free(s);
    ms_records_free(r);
    g_autofree char *out = NULL;
    CU_ASSERT_EQUAL_FATAL(view(path, &out), 0);
    CU_ASSERT_EQUAL(figure(out, "processes"), 3);
    CU_ASSERT_EQUAL(figure(out, "threads"), 5);
    CU_ASSERT_EQUAL(figure(out, "slices"), 20); /* 6 ops, 3 waits, an iteration, twice */
    CU_ASSERT_EQUAL(figure(out, "of 10 flows bound"), 8);
    CU_ASSERT_TRUE(figure(out, "counter events") > 0);
}

/* What moesim run writes, training and several inference batches. */
static void
test_run_traces_load(void)
{
    static const char *const modes[][4] = {{"train", "1", "lina", "t.json"},
                                           {"infer", "4", "schemoe", "i.json"}};
    for (guint k = 0; k < G_N_ELEMENTS(modes); k++) {
        g_autofree char *path = g_build_filename(ms_test_tmpdir(), modes[k][3], NULL);
        const char *args[] = {"run",      "--mode",    modes[k][0],      "-n", modes[k][1],
                              "--policy", modes[k][2], "--chrome-trace", path, NULL};
        g_autofree char *o = NULL, *e = NULL;
        CU_ASSERT_EQUAL_FATAL(ms_test_run_moesim(args, &o, &e), 0);
        g_autofree char *out = NULL;
        CU_ASSERT_EQUAL(view(path, &out), 0);
        /* 16 GPUs and the run's process; flows and counters are there and bound */
        CU_ASSERT_EQUAL(figure(out, "processes"), 17);
        CU_ASSERT_TRUE(figure(out, "flows bound") > 0);
        CU_ASSERT_TRUE(figure(out, "counter events") > 0);
    }
}

int
main(int argc, char **argv)
{
    if (!viewer_present()) {
        fprintf(stderr,
                "skipped: no node or no trace engine in MOESIM_TRACE_VIEWER (%s); "
                "./quickstart test installs it with npm\n",
                viewer_dir() ? viewer_dir() : "unset");
        return 77;
    }
    static const MsTestCase tests[] = {
        {"the fixture's trace loads whole", test_fixture_loads},
        {"moesim run's traces load whole", test_run_traces_load},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"trace viewer", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
