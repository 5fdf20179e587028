/* cmd_sweep: `moesim sweep`: a grid of scenarios on local worker threads, or as a Slurm array
 * job (a batch script and the manifest of the shards it must produce) whose shards are merged
 * afterwards; a task that failed is resubmitted alone and keeps the rows it had. */
#include "cli.h"
#include "commands.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "scenario_opts.h"
#include "sim/sweep.h"
#include "sim/sweep_csv.h"
#include "sim/sweep_shards.h"

/* Set by SIGINT: workers finish the iteration they are in and start nothing new. */
static volatile gint interrupted;

static void
on_sigint(int sig)
{
    (void)sig;
    g_atomic_int_set(&interrupted, 1);
}

static void
progress(guint done, guint total, gpointer ctx)
{
    double t0 = *(double *)ctx;
    fprintf(stderr, "\rsweep: %u/%u points (%3.0f%%), %.1f s", done, total, 100.0 * done / total,
            ms_cli_wall_seconds() - t0);
    if (done == total) {
        fputc('\n', stderr);
    }
    fflush(stderr);
}

/* Options of the command line that make or submit the job, left out of a task's. */
static gboolean
job_option(char **argv, int *i)
{
    static const char *const with_value[] = {"--slurm", "--slurm-opt", NULL};
    for (guint k = 0; with_value[k]; k++) {
        g_autofree char *eq = g_strconcat(with_value[k], "=", NULL);
        if (!strcmp(argv[*i], with_value[k])) {
            (*i)++;
            return TRUE;
        }
        if (g_str_has_prefix(argv[*i], eq)) {
            return TRUE;
        }
    }
    return !strcmp(argv[*i], "--resume");
}

/* A task's command line: this very binary (absolute path, on a shared file system), the options
 * of this one but the job's, the sweep's folder as an absolute path (given last, it wins over an
 * --out before it) and --resume, so that a resubmitted task runs only the points it lacks. */
static char *
task_command(int argc, char **argv, const char *abs_dir)
{
    g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
    g_autofree char *qself = g_shell_quote(self ? self : "moesim");
    GString *s = g_string_new(qself);
    g_string_append(s, " sweep");
    for (int i = 1; i < argc; i++) {
        if (job_option(argv, &i)) {
            continue;
        }
        g_autofree char *q = g_shell_quote(argv[i]);
        g_string_append_printf(s, " %s", q);
    }
    g_autofree char *q = g_shell_quote(abs_dir);
    g_string_append_printf(s, " --out %s --resume", q);
    return g_string_free(s, FALSE);
}

/* Removes the shard tables of an earlier job in dir: the new job's tasks resume from what
 * their shard holds, and rows of another job must not be taken for theirs. */
static gboolean
remove_shards(const char *dir, GError **error)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, error);
    const char *name;
    while (d && (name = g_dir_read_name(d)) != NULL) {
        if (g_str_has_prefix(name, "shard-") &&
            (g_str_has_suffix(name, ".csv") || g_str_has_suffix(name, ".csv.part"))) {
            g_autofree char *path = g_build_filename(dir, name, NULL);
            g_remove(path);
        }
    }
    return d != NULL;
}

/* Writes DIR/sweep.sbatch and DIR/sweep.manifest. */
static int
write_job(MsSweep *sw, const char *dir, guint shards, guint cpus, char **options, int argc,
          char **argv, FILE *text)
{
    g_autoptr(GError) error = NULL;
    guint points = ms_sweep_n_points(sw);
    if (shards > points) {
        return ms_cli_usage("sweep: --slurm %u: more tasks than the %u point%s of the grid", shards,
                            points, points == 1 ? "" : "s");
    }
    for (guint i = 0; options && options[i]; i++) {
        if (!ms_sweep_slurm_option_check(options[i], &error)) {
            return ms_cli_fail(error);
        }
    }
    g_autofree char *cwd = g_get_current_dir();
    g_autofree char *abs_dir = g_canonicalize_filename(dir, cwd);
    if (strpbrk(abs_dir, " \t") || strpbrk(cwd, " \t")) {
        return ms_cli_usage("sweep: --slurm: #SBATCH lines cannot hold a path with blanks (%s)",
                            strpbrk(cwd, " \t") ? cwd : abs_dir);
    }
    g_autofree char *script = g_build_filename(abs_dir, "sweep.sbatch", NULL);
    g_autofree char *manifest_path = g_build_filename(abs_dir, "sweep.manifest", NULL);
    g_autofree char *command = task_command(argc, argv, abs_dir);
    g_autofree char *header = ms_sweep_csv_header(ms_sweep_grid(sw));
    MsSweepSlurmJob job = {script, abs_dir, cwd, shards, cpus, (const char *const *)options,
                           command};
    MsSweepManifest manifest = {shards, points, header};
    g_autofree char *body = ms_sweep_slurm_script(&job);
    if (!ms_output_file_set_contents(script, MS_OUTPUT_REPLACE, body, strlen(body), &error) ||
        !ms_sweep_manifest_write(manifest_path, &manifest, &error) ||
        !remove_shards(abs_dir, &error)) {
        return ms_cli_fail(error);
    }
    fprintf(text,
            "wrote %s (%u tasks) and its manifest: submit it with `sbatch %s`, then run "
            "`moesim sweep --merge %s`\n",
            script, shards, script, abs_dir);
    return MS_EXIT_OK;
}

/* The finished table as JSON, when asked for. */
static gboolean
write_json(const char *csv, const char *json, GError **error)
{
    if (json == NULL) {
        return TRUE;
    }
    g_autoptr(JsonNode) root = ms_sweep_csv_to_json(csv, error);
    return root && ms_cli_write_json(json, root, error);
}

/* The shards of the job in dir merged, or the tasks to resubmit named (exit 1). */
static int
merge(const char *dir, FILE *text, const char *json)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *manifest_path = g_build_filename(dir, "sweep.manifest", NULL);
    MsSweepManifest m;
    if (!ms_sweep_manifest_load(manifest_path, &m, &error)) {
        return ms_cli_fail(error);
    }
    g_autofree char *out = g_build_filename(dir, "sweep.csv", NULL);
    g_autoptr(GArray) failed = g_array_new(FALSE, FALSE, sizeof(guint));
    guint rows = 0;
    gboolean ok = ms_sweep_merge_job(dir, &m, out, &rows, failed, &error);
    guint shards = m.shards;
    ms_sweep_manifest_clear(&m);
    if (!ok && g_error_matches(error, MS_SWEEP_SHARDS_ERROR, MS_SWEEP_SHARDS_ERROR_INCOMPLETE)) {
        GString *list = g_string_new(NULL);
        for (guint i = 0; i < failed->len; i++) {
            g_string_append_printf(list, "%s%u", i ? "," : "", g_array_index(failed, guint, i));
        }
        g_autofree char *cwd = g_get_current_dir();
        g_autofree char *abs_dir = g_canonicalize_filename(dir, cwd);
        g_autofree char *script = g_build_filename(abs_dir, "sweep.sbatch", NULL);
        fprintf(stderr,
                "moesim: %s\nmoesim: nothing merged; resubmit those tasks alone (each keeps the "
                "rows it has): sbatch --array=%s %s\n",
                error->message, list->str, script);
        g_string_free(list, TRUE);
        return MS_EXIT_BOUND;
    }
    if (!ok || !ms_sweep_csv_plot(out, dir, &error) || !write_json(out, json, &error)) {
        return ms_cli_fail(error);
    }
    fprintf(text, "merged %u shards into %s (%u rows) and its plots\n", shards, out, rows);
    return MS_EXIT_OK;
}

/* Runs the points (of a shard), resuming from what an earlier run of it kept; writes the table
 * when every point has run. */
static int
run(MsSweep *sw, const char *dir, guint jobs, guint shard, guint shards, gboolean resume,
    const char *json, FILE *text)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *file = shards > 1 ? ms_sweep_shard_file(shard) : g_strdup("sweep.csv");
    g_autofree char *csv = g_build_filename(dir, file, NULL);
    /* Rows go to TABLE.part as points finish; the table itself is written only when the sweep is
     * complete, so that a failed or stopped sweep leaves an earlier table and its plots alone. */
    g_autofree char *part = g_strconcat(csv, ".part", NULL);
    guint kept = 0;
    if (resume && (!ms_sweep_resume(sw, csv, shard, shards, &kept, &error) ||
                   !ms_sweep_resume(sw, part, shard, shards, &kept, &error))) {
        return ms_cli_fail(error);
    }
    if (!ms_sweep_open_journal(sw, part, resume, &error)) {
        return ms_cli_fail(error);
    }
    double t0 = ms_cli_wall_seconds();
    signal(SIGINT, on_sigint);
    gboolean ok = ms_sweep_run(
        sw, jobs, shard, shards, (const gint *)&interrupted,
        isatty(STDERR_FILENO) || g_getenv("MOESIM_PROGRESS") ? progress : NULL, &t0, &error);
    signal(SIGINT, SIG_DFL);
    g_autoptr(GError) werr = NULL;
    if (!ms_sweep_close_journal(sw, &werr)) {
        return ms_cli_fail(werr);
    }
    guint n = ms_sweep_shard_size(ms_sweep_n_points(sw), shard, shards);
    guint done = ms_sweep_n_done(sw);
    if (!ok) {
        fprintf(stderr, "moesim: %s (kept %u finished rows in %s)\n", error->message, done, part);
        return MS_EXIT_USAGE;
    }
    if (g_atomic_int_get(&interrupted)) {
        fprintf(stderr, "moesim: interrupted: kept %u of %u rows in %s\n", done, n, part);
        return 130;
    }
    if (!ms_sweep_write_csv(sw, csv, &werr)) {
        return ms_cli_fail(werr);
    }
    g_remove(part);
    if (shards == 1 && (!ms_sweep_csv_plot(csv, dir, &error) || !write_json(csv, json, &error))) {
        return ms_cli_fail(error);
    }
    g_autofree char *resumed =
        kept ? g_strdup_printf(" (%u kept from an earlier run)", kept) : g_strdup("");
    fprintf(text, "sweep: %u point%s%s%s, rows in %s\n", done, done == 1 ? "" : "s",
            shards > 1 ? " of this shard" : "", resumed, csv);
    /* Wall-clock figures go to standard error: the same sweep prints the same lines. */
    fprintf(stderr, "# swept in %.1f s of wall time\n", ms_cli_wall_seconds() - t0);
    return MS_EXIT_OK;
}

int
ms_cmd_sweep(int argc, char **argv)
{
    g_auto(MsScenarioOpts) o = {0};
    g_auto(GStrv) vary = NULL, slurm_opts = NULL;
    g_autofree char *out = NULL, *shard_text = NULL, *merge_dir = NULL, *json = NULL;
    gint jobs = 0, slurm = -1;
    gboolean resume = FALSE;
    g_auto(GStrv) saved = g_strdupv(argv);
    int saved_argc = argc;
    const GOptionEntry own[] = {
        {"vary", 'V', 0, G_OPTION_ARG_STRING_ARRAY, &vary,
         "An axis: KEY=V1,V2,... (repeat for a grid)", "KEY=VALUES"},
        {"jobs", 'j', 0, G_OPTION_ARG_INT, &jobs,
         "Worker threads (default: one per CPU; with --slurm, each task's CPUs)", "N"},
        {"out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
         "Folder for sweep.csv and the plots (default moesim-out/sweep)", "DIR"},
        {"resume", 0, 0, G_OPTION_ARG_NONE, &resume,
         "Keep the rows an earlier run of this sweep finished; run only the other points", NULL},
        {"slurm", 0, 0, G_OPTION_ARG_INT, &slurm,
         "Write a Slurm array job of N tasks (and its manifest) instead of running", "N"},
        {"slurm-opt", 0, 0, G_OPTION_ARG_STRING_ARRAY, &slurm_opts,
         "An sbatch option for the job, e.g. --time=02:00:00 (repeat)", "OPT"},
        {"shard", 0, 0, G_OPTION_ARG_STRING, &shard_text,
         "Run only shard I of N (Slurm array tasks)", "I/N"},
        {"merge", 0, 0, G_OPTION_ARG_FILENAME, &merge_dir,
         "Merge the shards of the array job in DIR into DIR/sweep.csv and plot it", "DIR"},
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &json,
         "Also write the table as JSON (- for standard output, the text going to standard error)",
         "FILE"},
        {NULL},
    };
    g_autofree GOptionEntry *entries = ms_scenario_opts_with(&o, TRUE, own);
    if (!ms_cli_parse(
            &argc, &argv, entries, NULL, "Run a grid of scenarios.",
            "Axis keys: policy, topology, model, mode, nodes, experts, chunk, "
            "iterations, seed, straggler (a --straggler value: GPU=FACTOR, several joined "
            "by ',' and the values then by ';'), slow-link (a --slow-link value: LINK=FACTOR, "
            "likewise), net (a --net value: flow or nccl[:key=value,...], the values by ';'), "
            "and the generated routing's zipf, hot, corr, "
            "drift, tokens. Values are separated by ',' or, when one contains a ',', by ';'. "
            "Example: moesim sweep --vary policy=fifo,lina --vary nodes=2,4,8 "
            "--vary hot=0.1,0.2. Rows come out in grid order; sweep.csv is written when "
            "every point has run, DIR/sweep.csv.part meanwhile. Ctrl-C stops cleanly "
            "and keeps the finished rows there (exit status 130). See docs/running.md.")) {
        return MS_EXIT_USAGE;
    }
    if (argc > 1) {
        return ms_cli_usage("sweep: unexpected argument '%s'", argv[1]);
    }
    /* With the JSON on standard output, the text goes to standard error. */
    FILE *text = json && !strcmp(json, "-") ? stderr : stdout;
    {
        g_autoptr(GError) claim = NULL;
        const char *outs[] = {json};
        if (!ms_cli_claim_outputs(outs, G_N_ELEMENTS(outs), &claim)) {
            return ms_cli_fail(claim);
        }
    }
    if (merge_dir) {
        return merge(merge_dir, text, json);
    }
    if (vary == NULL) {
        return ms_cli_usage("sweep: give at least one axis with --vary KEY=V1,V2,...");
    }
    if (jobs < 0 || jobs > 1024) {
        return ms_cli_usage("sweep: --jobs must be 0..1024");
    }
    /* -1: no --slurm; an explicit 0 would silently run locally. */
    if (slurm == 0 || slurm < -1 || slurm > (gint)MS_SWEEP_MAX_SHARDS) {
        return ms_cli_usage("sweep: --slurm %d: give 1 to %u tasks", slurm, MS_SWEEP_MAX_SHARDS);
    }
    if (slurm_opts && slurm < 0) {
        return ms_cli_usage("sweep: --slurm-opt goes with --slurm N");
    }
    g_autoptr(GError) error = NULL;
    guint shard = 0, shards = 1;
    if (shard_text && !ms_sweep_shard_parse(shard_text, &shard, &shards, &error)) {
        return ms_cli_fail(error);
    }
    if (json && (slurm > 0 || shards > 1)) {
        return ms_cli_usage("sweep: --json reports a whole table: give it to --merge");
    }
    const char *dir = out ? out : "moesim-out/sweep";
    if (g_mkdir_with_parents(dir, 0755) != 0) {
        return ms_cli_usage("sweep: cannot create %s", dir);
    }
    /* A what-if names GPUs and links of one topology: the points must all run on it. */
    gboolean vary_straggler = FALSE, vary_slow = FALSE, vary_net = FALSE;
    for (guint i = 0; vary[i]; i++) {
        vary_straggler = vary_straggler || g_str_has_prefix(vary[i], "straggler=");
        vary_slow = vary_slow || g_str_has_prefix(vary[i], "slow-link=");
        vary_net = vary_net || g_str_has_prefix(vary[i], "net=");
    }
    if (vary_net && o.net) {
        return ms_cli_usage("sweep: --net and --vary net both choose the network model: give "
                            "the baseline as a value of the axis (e.g. net=flow;nccl)");
    }
    if (vary_net && o.backend && strcmp(o.backend, "sim") != 0) {
        return ms_cli_usage("sweep: --vary net chooses the simulator's network model: it does "
                            "not go with --backend %s",
                            o.backend);
    }
    if (vary_straggler && o.straggler) {
        return ms_cli_usage("sweep: --straggler and --vary straggler both set the GPUs' pace: give "
                            "the baseline as a value of the axis (e.g. 4=1)");
    }
    if (vary_slow && o.slow_link) {
        return ms_cli_usage("sweep: --slow-link and --vary slow-link both slow links: give the "
                            "baseline as a value of the axis (e.g. n0.nic0->fabric=1)");
    }
    if ((vary_straggler || vary_slow) && o.backend && strcmp(o.backend, "sim") != 0) {
        return ms_cli_usage("sweep: --vary %s slows the simulator's %s: it does not go with "
                            "--backend %s",
                            vary_straggler ? "straggler" : "slow-link",
                            vary_straggler ? "GPUs" : "links", o.backend);
    }
    /* The what-if the message names: a GPU's before a link's. */
    const char *what = o.straggler      ? "--straggler"
                       : vary_straggler ? "--vary straggler"
                       : o.slow_link    ? "--slow-link"
                       : vary_slow      ? "--vary slow-link"
                                        : NULL;
    /* A slow-link axis reads its links on each nodes variant of the preset (they keep their
     * names); the other what-ifs are read once, on the topology given. */
    gboolean per_variant = what && strcmp(what, "--vary slow-link") == 0;
    for (guint i = 0; vary[i] && what; i++) {
        if (g_str_has_prefix(vary[i], "topology=") ||
            (g_str_has_prefix(vary[i], "nodes=") && !per_variant)) {
            return ms_cli_usage("sweep: %s names %s of one topology: it does not go with "
                                "--vary %.*s",
                                what, strstr(what, "slow-link") ? "links" : "GPUs",
                                (int)(strchr(vary[i], '=') - vary[i]), vary[i]);
        }
    }
    g_auto(MsCliScenario) cs = {0};
    int rc = ms_scenario_opts_setup(&o, FALSE, &cs);
    if (rc != MS_EXIT_OK) {
        return rc;
    }
    g_autoptr(MsSweep) sw = ms_sweep_new(cs.inputs, &cs.sc);
    for (guint i = 0; vary[i]; i++) {
        if (!ms_sweep_add_axis(sw, vary[i], &error)) {
            return ms_cli_fail(error);
        }
    }
    /* Everything the points need is loaded now, so that a bad value stops the sweep (or the
     * array job) before anything runs. */
    if (!ms_sweep_prepare(sw, &error)) {
        return ms_cli_fail(error);
    }
    if (slurm > 0) {
        return write_job(sw, dir, (guint)slurm, (guint)jobs, slurm_opts, saved_argc, saved, text);
    }
    return run(sw, dir, (guint)jobs, shard, shards, resume, json, text);
}
