/* Tests of sweep: every point's row equal to its scenario run alone whatever the number of
 * workers, grid order, shards that merge into the table of one run, the cancel flag, a failing
 * point (the others still run), progress calls, and `moesim sweep` end to end (table, plots,
 * array job script, merge). */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <malloc.h>
#include <sys/wait.h>

#if defined(__SANITIZE_ADDRESS__)
#define MS_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MS_TEST_ASAN 1
#endif
#endif
#ifndef MS_TEST_ASAN
#define MS_TEST_ASAN 0
#endif
#if MS_TEST_ASAN
#include <sanitizer/allocator_interface.h>
#endif

#include "sim/engine.h"
#include "sim/sweep.h"
#include "sim/sweep_csv.h"
#include "sim/sweep_shards.h"
#include "sim/sweep_variants.h"
#include "sweep_fixture.h"

typedef struct {
    MsInputs *in;
    MsRunner *runner;
    MsSweep *sw;
} Fixture;

static void
fixture_clear(Fixture *f)
{
    ms_sweep_free(f->sw);
    ms_runner_free(f->runner);
    ms_inputs_free(f->in);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Fixture, fixture_clear)

static void
setup(Fixture *f, const char *trace, const char *const *axes)
{
    f->in = sfx_inputs(NULL, trace);
    f->runner = ms_engine_runner_new(&(MsEngineOptions){.check_invariants = TRUE});
    MsScenario settings = {.runner = f->runner, .seed = 1};
    f->sw = ms_sweep_new(f->in, &settings);
    for (guint i = 0; axes[i]; i++) {
        GError *error = NULL;
        ms_sweep_add_axis(f->sw, axes[i], &error);
        g_assert_no_error(error);
    }
}

static const char *const axes[] = {"policy=fifo;lina;schemoe", "nodes=1,2", "hot=0.2,0.4", NULL};

static char *
read_text(const char *path)
{
    char *text = NULL;
    g_assert(g_file_get_contents(path, &text, NULL, NULL));
    return text;
}

static void
test_rows(void)
{
    g_auto(Fixture) one = {0}, many = {0};
    setup(&one, NULL, axes);
    setup(&many, NULL, axes);
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_sweep_run(one.sw, 1, 0, 1, NULL, NULL, NULL, &error));
    CU_ASSERT_TRUE(ms_sweep_run(many.sw, 4, 0, 1, NULL, NULL, NULL, &error));
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(ms_sweep_n_points(many.sw), 12);
    CU_ASSERT_EQUAL(ms_sweep_n_done(many.sw), 12);
    /* Each row is its point's scenario run alone. */
    g_autoptr(MsSweepVariants) v =
        ms_sweep_variants_new(one.in, ms_sweep_grid(one.sw), NULL, &error);
    g_assert_no_error(error);
    for (guint p = 0; p < 12; p++) {
        MsScenario settings = {.runner = one.runner, .seed = 1}, sc;
        g_autoptr(MsRoutingSource) r = NULL;
        g_assert(ms_sweep_variants_point(v, p, &settings, &sc, &r, &error));
        g_autoptr(MsResult) alone = ms_scenario_run(&sc, &error);
        g_assert_no_error(error);
        g_autofree char *want = ms_sweep_csv_row(ms_sweep_grid(one.sw), p, alone);
        CU_ASSERT_STRING_EQUAL(ms_sweep_row(many.sw, p), want);
    }
    /* The same table, in grid order, with 1 worker or 4. */
    g_autofree char *a = g_build_filename(ms_test_tmpdir(), "one.csv", NULL);
    g_autofree char *b = g_build_filename(ms_test_tmpdir(), "many.csv", NULL);
    CU_ASSERT_TRUE(ms_sweep_write_csv(one.sw, a, &error));
    CU_ASSERT_TRUE(ms_sweep_write_csv(many.sw, b, &error));
    g_autofree char *ta = read_text(a), *tb = read_text(b);
    CU_ASSERT_STRING_EQUAL(ta, tb);
    g_auto(GStrv) lines = g_strsplit(tb, "\n", -1);
    CU_ASSERT_EQUAL(g_strv_length(lines), 14); /* header, 12 rows, the last newline */
    CU_ASSERT_TRUE(g_str_has_prefix(lines[0], "point,policy,nodes,hot,iterations,"));
    CU_ASSERT_TRUE(g_str_has_prefix(lines[12], "11,schemoe,2,0.4,1,"));
}

static void
test_shards(void)
{
    g_auto(Fixture) whole = {0};
    setup(&whole, NULL, axes);
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_sweep_run(whole.sw, 2, 0, 1, NULL, NULL, NULL, &error));
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "shards", NULL);
    g_mkdir_with_parents(dir, 0755);
    g_autofree char *full = g_build_filename(dir, "whole.csv", NULL);
    CU_ASSERT_TRUE(ms_sweep_write_csv(whole.sw, full, &error));
    g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func(g_free);
    for (guint s = 0; s < 5; s++) {
        g_auto(Fixture) part = {0};
        setup(&part, NULL, axes);
        CU_ASSERT_TRUE(ms_sweep_run(part.sw, 2, s, 5, NULL, NULL, NULL, &error));
        CU_ASSERT_EQUAL(ms_sweep_n_done(part.sw), ms_sweep_shard_size(12, s, 5));
        CU_ASSERT_PTR_NULL(ms_sweep_row(part.sw, (s + 1) % 5));
        g_autofree char *name = ms_sweep_shard_file(s);
        char *path = g_build_filename(dir, name, NULL);
        CU_ASSERT_TRUE(ms_sweep_write_csv(part.sw, path, &error));
        g_ptr_array_add(files, path);
    }
    g_assert_no_error(error);
    g_ptr_array_add(files, NULL);
    g_autofree char *merged = g_build_filename(dir, "merged.csv", NULL);
    guint rows = 0;
    CU_ASSERT_TRUE(ms_sweep_merge_csv((const char *const *)files->pdata, merged, &rows, &error));
    CU_ASSERT_EQUAL(rows, 12);
    g_autofree char *tw = read_text(full), *tm = read_text(merged);
    CU_ASSERT_STRING_EQUAL(tm, tw);
}

typedef struct {
    guint calls, last, total;
} Progress;

static void
count_progress(guint done, guint total, gpointer ctx)
{
    Progress *p = ctx;
    CU_ASSERT_EQUAL(done, p->last + 1);
    p->calls++;
    p->last = done;
    p->total = total;
}

/* Runs the engine (data), except on a machine of 4 GPUs. */
static MsRecords *
picky_execute(gpointer data, const MsSchedule *s, const MsTopology *topo, gboolean detail,
              const MsRunWhatIf *what_if, GError **error)
{
    if (ms_topology_n_gpus(topo) == 4) {
        g_set_error(error, MS_SCENARIO_ERROR, MS_SCENARIO_ERROR_INVALID, "no 4-GPU machine today");
        return NULL;
    }
    return ms_runner_execute(data, s, topo, detail, what_if, error);
}

static void
test_cancel_and_failure(void)
{
    GError *error = NULL;
    g_auto(Fixture) stopped = {0};
    setup(&stopped, NULL, axes);
    gint stop = 1;
    Progress pr = {0};
    CU_ASSERT_TRUE(ms_sweep_run(stopped.sw, 2, 0, 1, &stop, count_progress, &pr, &error));
    CU_ASSERT_EQUAL(ms_sweep_n_done(stopped.sw), 0);
    CU_ASSERT_EQUAL(pr.calls, 12);
    /* A runner that fails on the 2-node machine: that point fails, the others still run. */
    g_auto(Fixture) bad = {0};
    setup(&bad, NULL, (const char *[]){"nodes=1,2,3", NULL});
    g_autoptr(MsRunner) picky = ms_runner_new("picky", picky_execute, bad.runner, NULL);
    g_autoptr(MsSweep) sw = NULL;
    MsScenario settings = {.runner = picky, .seed = 1};
    sw = ms_sweep_new(bad.in, &settings);
    g_assert(ms_sweep_add_axis(sw, "nodes=1,2,3", &error));
    g_autofree char *journal = g_build_filename(ms_test_tmpdir(), "journal.csv", NULL);
    CU_ASSERT_TRUE(ms_sweep_open_journal(sw, journal, FALSE, &error));
    Progress pb = {0};
    CU_ASSERT_FALSE(ms_sweep_run(sw, 2, 0, 1, NULL, count_progress, &pb, &error));
    MS_ASSERT_ERROR(error, MS_SCENARIO_ERROR, MS_SCENARIO_ERROR_INVALID,
                    "sweep point 1: no 4-GPU machine today");
    CU_ASSERT_TRUE(ms_sweep_close_journal(sw, &error));
    CU_ASSERT_EQUAL(ms_sweep_n_done(sw), 2);
    CU_ASSERT_PTR_NULL(ms_sweep_row(sw, 1));
    CU_ASSERT_EQUAL(pb.calls, 3);
    CU_ASSERT_EQUAL(pb.total, 3);
    /* The journal holds the header and the finished rows, in the order they finished. */
    g_autofree char *text = read_text(journal);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    CU_ASSERT_EQUAL_FATAL(g_strv_length(lines), 4);
    g_autofree char *head = ms_sweep_csv_header(ms_sweep_grid(sw));
    CU_ASSERT_STRING_EQUAL(lines[0], head);
    CU_ASSERT_TRUE(
        (!strcmp(lines[1], ms_sweep_row(sw, 0)) && !strcmp(lines[2], ms_sweep_row(sw, 2))) ||
        (!strcmp(lines[2], ms_sweep_row(sw, 0)) && !strcmp(lines[1], ms_sweep_row(sw, 2))));
    CU_ASSERT_FALSE(ms_sweep_open_journal(bad.sw, "no/such/dir/j.csv", FALSE, &error));
    MS_ASSERT_ERROR(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_IO, "no/such/dir/j.csv: cannot write");
    /* A preparation error: nothing runs. */
    g_auto(Fixture) traced = {0};
    setup(&traced, "sample:default", (const char *[]){"zipf=1", NULL});
    CU_ASSERT_FALSE(ms_sweep_prepare(traced.sw, &error));
    MS_ASSERT_ERROR(error, MS_SWEEP_VARIANTS_ERROR, MS_SWEEP_VARIANTS_ERROR_AXIS, "zipf");
}

static void
test_command(void)
{
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "cli", NULL);
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = {"sweep", "-t",       sfx_topology(), "-m", sfx_model(), "-V", "nodes=1,2",
                          "-V",    "seed=1,2", "--out",        dir,  "-j",        "2",  NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(args, &out, &err), 0);
    /* Wall-clock figures go to standard error: the same sweep prints the same lines. */
    g_autofree char *line = g_strdup_printf("sweep: 4 points, rows in %s/sweep.csv\n", dir);
    CU_ASSERT_STRING_EQUAL(out, line);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "s of wall time"));
    g_autofree char *csv = g_build_filename(dir, "sweep.csv", NULL);
    g_autofree char *plot = g_build_filename(dir, "sweep-nodes.png.gp", NULL);
    CU_ASSERT_TRUE(g_file_test(csv, G_FILE_TEST_EXISTS));
    CU_ASSERT_TRUE(g_file_test(plot, G_FILE_TEST_EXISTS));
    /* Nothing is written besides the table and the plots. */
    g_autofree char *variants = g_build_filename(dir, "variants", NULL);
    CU_ASSERT_FALSE(g_file_test(variants, G_FILE_TEST_EXISTS));
    g_autofree char *local = read_text(csv);
    /* The same sweep as an array job of 3 tasks, each run as its script would, then merged. */
    g_autofree char *jdir = g_build_filename(ms_test_tmpdir(), "job", NULL);
    const char *job[] = {"sweep", "-t",       sfx_topology(), "-m", sfx_model(), "-V", "nodes=1,2",
                         "-V",    "seed=1,2", "--out",        jdir, "--slurm",   "3",  NULL};
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(ms_test_run_moesim(job, &out, &err), 0);
    g_autofree char *sbatch = g_build_filename(jdir, "sweep.sbatch", NULL);
    g_autofree char *script = read_text(sbatch);
    CU_ASSERT_PTR_NOT_NULL(strstr(script, "#SBATCH --array=0-2\n"));
    CU_ASSERT_PTR_NULL(strstr(script, "--slurm"));
    for (guint s = 0; s < 3; s++) {
        g_autofree char *shard = g_strdup_printf("%u/3", s);
        const char *task[] = {"sweep", "-t",        sfx_topology(), "-m",       sfx_model(),
                              "-V",    "nodes=1,2", "-V",           "seed=1,2", "--out",
                              jdir,    "--shard",   shard,          NULL};
        g_free(out);
        g_free(err);
        CU_ASSERT_EQUAL(ms_test_run_moesim(task, &out, &err), 0);
    }
    const char *merge[] = {"sweep", "--merge", jdir, NULL};
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(ms_test_run_moesim(merge, &out, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "merged 3 shards into "));
    g_autofree char *jcsv = g_build_filename(jdir, "sweep.csv", NULL);
    g_autofree char *merged = read_text(jcsv);
    CU_ASSERT_STRING_EQUAL(merged, local);
    /* The table as JSON, alone on standard output. */
    g_autofree char *jsdir = g_build_filename(ms_test_tmpdir(), "json", NULL);
    const char *js[] = {"sweep", "-t",       sfx_topology(), "-m",  sfx_model(), "-V", "nodes=1,2",
                        "-V",    "seed=1,2", "--out",        jsdir, "--json",    "-",  NULL};
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(ms_test_run_moesim(js, &out, &err), 0);
    g_autoptr(JsonParser) jp = json_parser_new();
    CU_ASSERT_TRUE_FATAL(json_parser_load_from_data(jp, out, -1, NULL));
    CU_ASSERT_PTR_NOT_NULL_FATAL(json_parser_get_root(jp));
    JsonObject *jo = json_node_get_object(json_parser_get_root(jp));
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(jo, "format"), "moesim-sweep");
    JsonArray *jrows = json_object_get_array_member(jo, "rows");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(jrows), 4);
    JsonObject *r3 = json_array_get_object_element(jrows, 3);
    CU_ASSERT_EQUAL(json_object_get_int_member(r3, "point"), 3);
    CU_ASSERT_STRING_EQUAL(
        json_object_get_string_member(json_object_get_object_member(r3, "axes"), "nodes"), "2");
    CU_ASSERT_TRUE(json_object_get_double_member(json_object_get_object_member(r3, "metrics"),
                                                 "step_time_us") > 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "sweep: 4 points"));
    /* Bad values are refused before anything runs or is written. */
    g_autofree char *bdir = g_build_filename(ms_test_tmpdir(), "bad", NULL);
    const char *bad[] = {"sweep", "-V", "nodes=1,40000", "--out", bdir, NULL};
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(ms_test_run_moesim(bad, &out, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "nodes=40000"));
    g_autofree char *bcsv = g_build_filename(bdir, "sweep.csv", NULL);
    CU_ASSERT_FALSE(g_file_test(bcsv, G_FILE_TEST_EXISTS));
}

/* Regression: a value the generator cannot reach (hot=2: a share above 1) passed the up-front
 * check and failed its point only when it ran. Every point's routing is now made and checked
 * with its model and topology before any point runs. */
static void
test_routing_checked_first(void)
{
    g_auto(Fixture) f = {0};
    setup(&f, NULL, (const char *[]){"policy=fifo;lina", "hot=0.2,2", NULL});
    GError *error = NULL;
    CU_ASSERT_FALSE(ms_sweep_prepare(f.sw, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE,
                    "sweep: point 1 (policy=fifo hot=2): ");
}

/* Regression: a sweep that failed replaced an earlier sweep.csv with the rows it had (a header
 * alone when the first point failed) and left that sweep's plots beside it. The table is now
 * written only when the sweep is complete; until then its rows go to sweep.csv.part. */
static void
test_table_only_when_complete(void)
{
    g_autofree char *dir = g_build_filename(ms_test_tmpdir(), "kept", NULL);
    g_autofree char *out = NULL, *err = NULL;
    const char *ok[] = {"sweep", "-t",          sfx_topology(), "-m", sfx_model(),
                        "-V",    "hot=0.2,0.3", "--out",        dir,  NULL};
    CU_ASSERT_EQUAL_FATAL(ms_test_run_moesim(ok, &out, &err), 0);
    g_autofree char *csv = g_build_filename(dir, "sweep.csv", NULL);
    g_autofree char *gp = g_build_filename(dir, "sweep-hot.png.gp", NULL);
    g_autofree char *part = g_build_filename(dir, "sweep.csv.part", NULL);
    g_autofree char *table = read_text(csv), *plot = read_text(gp);
    CU_ASSERT_FALSE(g_file_test(part, G_FILE_TEST_EXISTS));
    /* Every point fails when it runs (its generated trace holds fewer iterations than asked
     * for), after the up-front checks. */
    const char *failing[] = {"sweep",       "-t", sfx_topology(),     "-m", sfx_model(), "-V",
                             "hot=0.2,0.3", "-T", "gen:iterations=1", "-n", "3",         "--out",
                             dir,           NULL};
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(ms_test_run_moesim(failing, &out, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "sweep.csv.part"));
    g_autofree char *table2 = read_text(csv), *plot2 = read_text(gp);
    CU_ASSERT_STRING_EQUAL(table2, table);
    CU_ASSERT_STRING_EQUAL(plot2, plot);
    CU_ASSERT_TRUE_FATAL(g_file_test(part, G_FILE_TEST_EXISTS));
    g_autofree char *partial = read_text(part);
    CU_ASSERT_TRUE(g_str_has_prefix(partial, "point,hot,iterations,"));
    /* A value refused up front touches nothing either. */
    const char *refused[] = {"sweep", "-t",        sfx_topology(), "-m", sfx_model(),
                             "-V",    "hot=0.2,2", "--out",        dir,  NULL};
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(ms_test_run_moesim(refused, &out, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "hot=2"));
    g_autofree char *table3 = read_text(csv);
    CU_ASSERT_STRING_EQUAL(table3, table);
}

/* A sweep that failed at one point, resumed: only that point runs again, and the table is the
 * one a single run gives. Rows that are not this sweep's are refused, naming file and line. */
static void
test_resume(void)
{
    GError *error = NULL;
    g_auto(Fixture) f = {0};
    setup(&f, NULL, (const char *[]){"nodes=1,2,3", NULL});
    g_autoptr(MsRunner) picky = ms_runner_new("sim", picky_execute, f.runner, NULL);
    MsScenario settings = {.runner = picky, .seed = 1};
    g_autoptr(MsSweep) first = ms_sweep_new(f.in, &settings);
    g_assert(ms_sweep_add_axis(first, "nodes=1,2,3", &error));
    g_autofree char *journal = g_build_filename(ms_test_tmpdir(), "resume.csv.part", NULL);
    CU_ASSERT_TRUE(ms_sweep_open_journal(first, journal, FALSE, &error));
    CU_ASSERT_FALSE(ms_sweep_run(first, 2, 0, 1, NULL, NULL, NULL, &error));
    g_clear_error(&error);
    CU_ASSERT_TRUE(ms_sweep_close_journal(first, &error));
    /* The second run keeps the two rows and runs point 1 alone. */
    MsScenario engine = {.runner = f.runner, .seed = 1};
    g_autoptr(MsSweep) second = ms_sweep_new(f.in, &engine);
    g_assert(ms_sweep_add_axis(second, "nodes=1,2,3", &error));
    g_assert(ms_sweep_prepare(second, &error));
    guint kept = 0;
    CU_ASSERT_TRUE(ms_sweep_resume(second, journal, 0, 1, &kept, &error));
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(kept, 2);
    CU_ASSERT_TRUE(ms_sweep_open_journal(second, journal, TRUE, &error));
    Progress pr = {0};
    CU_ASSERT_TRUE(ms_sweep_run(second, 2, 0, 1, NULL, count_progress, &pr, &error));
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(pr.total, 1);
    CU_ASSERT_EQUAL(ms_sweep_n_done(second), 3);
    CU_ASSERT_TRUE(ms_sweep_close_journal(second, &error));
    /* The journal now holds all three rows after its header; the table is a single run's. */
    g_autofree char *jt = read_text(journal);
    g_auto(GStrv) jl = g_strsplit(jt, "\n", -1);
    CU_ASSERT_EQUAL(g_strv_length(jl), 5);
    g_auto(Fixture) whole = {0};
    setup(&whole, NULL, (const char *[]){"nodes=1,2,3", NULL});
    CU_ASSERT_TRUE(ms_sweep_run(whole.sw, 2, 0, 1, NULL, NULL, NULL, &error));
    for (guint p = 0; p < 3; p++) {
        CU_ASSERT_STRING_EQUAL(ms_sweep_row(second, p), ms_sweep_row(whole.sw, p));
    }
    /* Rows of another sweep. */
    static const struct {
        const char *text, *needle;
    } bad[] = {
        {"point,seed,iterations\n", "bad.part:1: its columns are not this grid's"},
        {NULL, "bad.part:2: point 0 has nodes=5, this grid nodes=1"},
        {NULL, "bad.part:2: not a row of this grid's points"},
    };
    g_autofree char *head = ms_sweep_csv_header(ms_sweep_grid(whole.sw));
    g_autofree char *row0 = g_strdup(ms_sweep_row(whole.sw, 0));
    char *comma = strchr(row0, ',');
    g_autofree char *other = g_strdup_printf("%s\n0,5%s\n", head, strchr(comma + 1, ','));
    g_autofree char *beyond = g_strdup_printf("%s\n9%s\n", head, comma);
    const char *texts[] = {bad[0].text, other, beyond};
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *path = ms_test_write_tmp("bad.part", texts[i]);
        g_auto(Fixture) g = {0};
        setup(&g, NULL, (const char *[]){"nodes=1,2,3", NULL});
        g_assert(ms_sweep_prepare(g.sw, &error));
        guint k = 0;
        CU_ASSERT_FALSE(ms_sweep_resume(g.sw, path, 0, 1, &k, &error));
        MS_ASSERT_ERROR(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_RESUME, bad[i].needle);
    }
    /* A row of another shard, and a missing file (nothing to keep). */
    g_autofree char *mine = g_strdup_printf("%s\n%s\n", head, ms_sweep_row(whole.sw, 1));
    g_autofree char *path = ms_test_write_tmp("shard.part", mine);
    g_auto(Fixture) h = {0};
    setup(&h, NULL, (const char *[]){"nodes=1,2,3", NULL});
    g_assert(ms_sweep_prepare(h.sw, &error));
    guint k = 0;
    CU_ASSERT_FALSE(ms_sweep_resume(h.sw, path, 0, 2, &k, &error));
    MS_ASSERT_ERROR(error, MS_SWEEP_ERROR, MS_SWEEP_ERROR_RESUME,
                    "point 1 is not one of shard 0 of 2");
    CU_ASSERT_TRUE(ms_sweep_resume(h.sw, "no/such.part", 0, 1, &k, &error));
    CU_ASSERT_EQUAL(k, 0);
}

/* Runs moesim with args in the folder cwd; returns its exit status, stdout and stderr. */
static int
moesim_in(const char *cwd, const char *const *args, char **out, char **err)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)ms_test_moesim());
    for (guint i = 0; args[i]; i++) {
        g_ptr_array_add(argv, (gpointer)args[i]);
    }
    g_ptr_array_add(argv, NULL);
    int status = 0;
    g_assert(g_spawn_sync(cwd, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err,
                          &status, NULL));
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* What sbatch does with one task of the array job in script: the #SBATCH --chdir folder as the
 * working directory, SLURM_ARRAY_JOB_ID and SLURM_ARRAY_TASK_ID set, standard output and error
 * into the --output file (%A the job, %a the task). Returns the task's exit status and its log. */
static int
sbatch_task(const char *script, guint job, guint task, char **log_path)
{
    g_autofree char *text = read_text(script);
    g_autofree char *chdir = NULL, *output = NULL;
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (guint i = 0; lines[i]; i++) {
        if (g_str_has_prefix(lines[i], "#SBATCH --chdir=")) {
            chdir = g_strdup(lines[i] + strlen("#SBATCH --chdir="));
        } else if (g_str_has_prefix(lines[i], "#SBATCH --output=")) {
            output = g_strdup(lines[i] + strlen("#SBATCH --output="));
        }
    }
    g_assert(chdir && output);
    g_autofree char *a = g_strdup_printf("%u", job), *t = g_strdup_printf("%u", task);
    g_auto(GStrv) by_job = g_strsplit(output, "%A", -1);
    g_autofree char *with_job = g_strjoinv(a, by_job);
    g_auto(GStrv) by_task = g_strsplit(with_job, "%a", -1);
    *log_path = g_strjoinv(t, by_task);
    g_auto(GStrv) env = g_get_environ();
    env = g_environ_setenv(env, "SLURM_ARRAY_JOB_ID", a, TRUE);
    env = g_environ_setenv(env, "SLURM_ARRAY_TASK_ID", t, TRUE);
    g_autofree char *out = NULL, *err = NULL;
    const char *argv[] = {"/bin/sh", script, NULL};
    int status = 0;
    g_assert(g_spawn_sync(chdir, (char **)argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                          &status, NULL));
    g_autofree char *log = g_strconcat(out, err, NULL);
    g_assert(g_file_set_contents(*log_path, log, -1, NULL));
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Regression: the batch script kept relative paths and no --chdir (a job submitted from another
 * folder died with no log), named logs by task alone (a resubmission overwrote them) and carried
 * no sbatch options; --slurm 0 ran locally and --slurm 10 on 6 points made 4 idle tasks; --merge
 * merged whatever shards there were and exited 0. Here a job is written with relative paths, its
 * tasks run as sbatch would from elsewhere, one of them is cut short, --merge names it, it alone
 * is resubmitted and runs only its missing points, and the merged table is a local run's. */
static void
test_job(void)
{
    const char *tmp = ms_test_tmpdir();
    g_autofree char *topo = g_path_get_basename(sfx_topology());
    g_autofree char *model = g_path_get_basename(sfx_model());
    g_autofree char *out = NULL, *err = NULL;
    const char *zero[] = {"sweep", "-t",  topo,      "-m", model, "-V", "seed=1,2,3,4,5,6",
                          "--out", "job", "--slurm", "0",  NULL};
    CU_ASSERT_EQUAL(moesim_in(tmp, zero, &out, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--slurm 0: give 1 to"));
    const char *ten[] = {"sweep", "-t",  topo,      "-m", model, "-V", "seed=1,2,3,4,5,6",
                         "--out", "job", "--slurm", "10", NULL};
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(moesim_in(tmp, ten, &out, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--slurm 10: more tasks than the 6 points"));
    const char *array[] = {"sweep", "-V", "seed=1", "--slurm", "1", "--slurm-opt=--array=0-9",
                           NULL};
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(moesim_in(tmp, array, &out, &err), 2);
    const char *write[] = {"sweep",
                           "-t",
                           topo,
                           "-m",
                           model,
                           "-V",
                           "seed=1,2,3,4,5,6",
                           "--out",
                           "job",
                           "-j",
                           "2",
                           "--slurm",
                           "3",
                           "--slurm-opt=--time=00:10:00",
                           "--slurm-opt",
                           "--partition=debug",
                           NULL};
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL_FATAL(moesim_in(tmp, write, &out, &err), 0);
    g_autofree char *dir = g_build_filename(tmp, "job", NULL);
    g_autofree char *script = g_build_filename(dir, "sweep.sbatch", NULL);
    g_autofree char *text = read_text(script);
    g_autofree char *chdir = g_strdup_printf("#SBATCH --chdir=%s\n", tmp);
    g_autofree char *logs = g_strdup_printf("#SBATCH --output=%s/slurm-%%A_%%a.log\n", dir);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, chdir));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, logs));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "#SBATCH --cpus-per-task=2\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "#SBATCH --time=00:10:00\n#SBATCH --partition=debug\n"));
    g_autofree char *qdir = g_shell_quote(dir);
    g_autofree char *tail = g_strdup_printf(" --out %s --resume --shard", qdir);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, tail));
    CU_ASSERT_PTR_NULL(strstr(text, "--slurm"));
    g_autofree char *manifest = g_build_filename(dir, "sweep.manifest", NULL);
    CU_ASSERT_TRUE(g_file_test(manifest, G_FILE_TEST_EXISTS));
    /* The tasks, as sbatch runs them; task 1 is then cut short: one row of its two in its .part,
     * no table, as a task killed at its time limit leaves it. */
    for (guint t = 0; t < 3; t++) {
        g_autofree char *log = NULL;
        CU_ASSERT_EQUAL(sbatch_task(script, 41, t, &log), 0);
        g_autofree char *l = read_text(log);
        CU_ASSERT_PTR_NOT_NULL(strstr(l, "sweep: 2 points of this shard, rows in "));
    }
    g_autofree char *s1 = g_build_filename(dir, "shard-1.csv", NULL);
    g_autofree char *p1 = g_strconcat(s1, ".part", NULL);
    g_autofree char *t1 = read_text(s1);
    g_auto(GStrv) l1 = g_strsplit(t1, "\n", -1);
    g_autofree char *cut = g_strdup_printf("%s\n%s\n", l1[0], l1[1]);
    g_assert(g_file_set_contents(p1, cut, -1, NULL));
    g_remove(s1);
    const char *merge[] = {"sweep", "--merge", "job", NULL};
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(moesim_in(tmp, merge, &out, &err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "1 of 3 shards did not finish: shard 1: no shard-1.csv; "
                                       "shard-1.csv.part holds 1 of its 2 points"));
    g_autofree char *again = g_strdup_printf("sbatch --array=1 %s", script);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, again));
    g_autofree char *csv = g_build_filename(dir, "sweep.csv", NULL);
    CU_ASSERT_FALSE(g_file_test(csv, G_FILE_TEST_EXISTS));
    /* Resubmitted alone (a new job id): it keeps its row and runs the other point; the first
     * attempt's log is still there. */
    g_autofree char *log = NULL;
    CU_ASSERT_EQUAL(sbatch_task(script, 42, 1, &log), 0);
    g_autofree char *l = read_text(log);
    CU_ASSERT_PTR_NOT_NULL(strstr(l, "sweep: 2 points of this shard (1 kept from an earlier run)"));
    g_autofree char *first = g_build_filename(dir, "slurm-41_1.log", NULL);
    CU_ASSERT_TRUE(g_file_test(first, G_FILE_TEST_EXISTS));
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(moesim_in(tmp, merge, &out, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "merged 3 shards into job/sweep.csv (6 rows)"));
    /* The table of one local run. */
    const char *local[] = {"sweep", "-t",    topo, "-m", model, "-V", "seed=1,2,3,4,5,6",
                           "--out", "local", NULL};
    g_free(out);
    g_free(err);
    CU_ASSERT_EQUAL(moesim_in(tmp, local, &out, &err), 0);
    g_autofree char *local_csv = g_build_filename(tmp, "local", "sweep.csv", NULL);
    g_autofree char *want = read_text(local_csv), *got = read_text(csv);
    CU_ASSERT_STRING_EQUAL(got, want);
}

/* Bytes of heap in use (every arena). AddressSanitizer replaces malloc, and its mallinfo2 reports
 * nothing: its allocator's own count stands in. */
static gsize
heap_in_use(void)
{
#if MS_TEST_ASAN
    return __sanitizer_get_current_allocated_bytes();
#else
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
#endif
}

/* Threads of this process. */
static guint
n_threads(void)
{
    guint threads = 0;
    GDir *dir = g_dir_open("/proc/self/task", 0, NULL);
    while (dir && g_dir_read_name(dir)) {
        threads++;
    }
    if (dir) {
        g_dir_close(dir);
    }
    return threads;
}

/* Threads of the process before any test ran. */
static guint main_threads;

/* Waits until the process runs no more threads than it did before any test: a sweep's workers
 * return from the pool's wait before they have exited, and until they have, the chunks their
 * malloc caches hold count as in use, so a heap figure taken then depends on timing (a point's
 * result once measured under 20 kB while an earlier test's workers were exiting).
 * The wait is scaled like every timeout of the suite; a thread still there after it fails. */
static void
wait_for_threads(void)
{
    guint threads = main_threads;
    gint64 deadline = g_get_monotonic_time() + (gint64)(10e6 * ms_test_time_factor());
    while (n_threads() > threads && g_get_monotonic_time() <= deadline) {
        g_usleep(1000);
    }
    CU_ASSERT_TRUE(n_threads() <= threads);
}

/* Heap a sweep of the given axes holds after its run, on one worker (no thread caches). */
static gsize
held_by(const char *const *sweep_axes)
{
    wait_for_threads();
    gsize before = heap_in_use();
    g_auto(Fixture) f = {0};
    setup(&f, NULL, sweep_axes);
    GError *error = NULL;
    g_assert(ms_sweep_run(f.sw, 1, 0, 1, NULL, NULL, NULL, &error));
    wait_for_threads();
    gsize after = heap_in_use();
    return after > before ? after - before : 0;
}

/* Regression: a sweep kept every point's whole result (the first iteration's schedule and
 * records) to the end: 3.6 MB a point on 128 GPUs, 3.6 GB for 1000 points. A point's result here
 * is measured, and 32 points must hold less than 4 such results more than 1 point does (their
 * rows are some hundred bytes each). */
static void
test_memory(void)
{
    g_auto(Fixture) f = {0};
    setup(&f, NULL, (const char *[]){"policy=lina", NULL});
    GError *error = NULL;
    MsScenario sc = {.runner = f.runner, .seed = 1};
    ms_inputs_fill(f.in, &sc);
    g_autoptr(MsPolicy) lina = ms_policy_parse("lina", &error);
    sc.policy = lina;
    wait_for_threads();
    gsize before = heap_in_use();
    g_autoptr(MsResult) res = ms_scenario_run(&sc, &error); /* held while measured */
    g_assert_no_error(error);
    CU_ASSERT_PTR_NOT_NULL(res);
    gsize one_result = heap_in_use() - before;
    CU_ASSERT_TRUE(one_result > 20000);
    gsize one = held_by((const char *[]){"policy=lina", "seed=1", NULL});
    GString *seeds = g_string_new("seed=1");
    for (guint i = 2; i <= 32; i++) {
        g_string_append_printf(seeds, ",%u", i);
    }
    gsize many = held_by((const char *[]){"policy=lina", seeds->str, NULL});
    g_string_free(seeds, TRUE);
    if (many > one + 4 * one_result) {
        fprintf(stderr, "\n  a result: %zu bytes; a sweep of 1 point holds %zu, of 32: %zu\n",
                one_result, one, many);
    }
    CU_ASSERT_TRUE(many < one + 4 * one_result);
}

int
main(int argc, char **argv)
{
    main_threads = n_threads();
    /* A freed pool's threads would wait, caches and all, for the next pool: let them exit. */
    g_thread_pool_set_max_unused_threads(0);
    static const MsTestCase tests[] = {
        {"rows equal to their scenarios, in grid order", test_rows},
        {"shards merge into the whole table", test_shards},
        {"cancel flag and a failing point", test_cancel_and_failure},
        {"memory does not grow with the points' results", test_memory},
        {"every point's routing checked before any runs", test_routing_checked_first},
        {"the table written only when complete", test_table_only_when_complete},
        {"an array job, a task resubmitted", test_job},
        {"a sweep resumed", test_resume},
        {"moesim sweep", test_command},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"sweep", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
