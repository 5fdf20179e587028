/* cmd_sweep: `moesim sweep`: a grid of scenarios on local worker threads, or as a Slurm array
 * job whose shards are merged afterwards. */
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

/* The command line again, without --slurm, for the array tasks. */
static char *
task_command(int argc, char **argv, const char *dir, gboolean has_out)
{
    /* The tasks run this very binary (absolute path), on a shared file system. */
    g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
    g_autofree char *qself = g_shell_quote(self ? self : "moesim");
    GString *s = g_string_new(qself);
    g_string_append(s, " sweep");
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--slurm")) {
            i++;
            continue;
        }
        if (g_str_has_prefix(argv[i], "--slurm=")) {
            continue;
        }
        g_autofree char *q = g_shell_quote(argv[i]);
        g_string_append_printf(s, " %s", q);
    }
    if (!has_out) {
        g_autofree char *q = g_shell_quote(dir);
        g_string_append_printf(s, " --out %s", q);
    }
    return g_string_free(s, FALSE);
}

static int
write_slurm(const char *dir, guint shards, const char *command)
{
    g_autofree char *path = g_build_filename(dir, "sweep.sbatch", NULL);
    g_autofree char *text = ms_sweep_slurm_script(path, dir, shards, command);
    g_autoptr(GError) error = NULL;
    if (!g_file_set_contents(path, text, -1, &error)) {
        return ms_cli_fail(error);
    }
    printf("wrote %s: submit it with `sbatch %s`, then run `moesim sweep --merge %s`\n", path, path,
           dir);
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

static int
merge(const char *dir, FILE *text, const char *json)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) inputs = ms_sweep_shard_files(dir, &error);
    if (inputs == NULL) {
        return ms_cli_fail(error);
    }
    if (inputs->len == 0) {
        return ms_cli_usage("sweep: no shard-*.csv files in %s", dir);
    }
    g_ptr_array_add(inputs, NULL);
    g_autofree char *out = g_build_filename(dir, "sweep.csv", NULL);
    guint rows = 0;
    if (!ms_sweep_merge_csv((const char *const *)inputs->pdata, out, &rows, &error) ||
        !ms_sweep_csv_plot(out, dir, &error) || !write_json(out, json, &error)) {
        return ms_cli_fail(error);
    }
    fprintf(text, "merged %u shard files into %s (%u rows) and its plots\n", inputs->len - 1, out,
            rows);
    return MS_EXIT_OK;
}

int
ms_cmd_sweep(int argc, char **argv)
{
    g_auto(MsScenarioOpts) o = {0};
    g_auto(GStrv) vary = NULL;
    g_autofree char *out = NULL, *shard_text = NULL, *merge_dir = NULL, *json = NULL;
    gint jobs = 0, slurm = 0;
    g_auto(GStrv) saved = g_strdupv(argv);
    int saved_argc = argc;
    const GOptionEntry own[] = {
        {"vary", 'V', 0, G_OPTION_ARG_STRING_ARRAY, &vary,
         "An axis: KEY=V1,V2,... (repeat for a grid)", "KEY=VALUES"},
        {"jobs", 'j', 0, G_OPTION_ARG_INT, &jobs, "Worker threads (default: one per CPU)", "N"},
        {"out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
         "Folder for sweep.csv and the plots (default moesim-out/sweep)", "DIR"},
        {"slurm", 0, 0, G_OPTION_ARG_INT, &slurm,
         "Write a Slurm array job of N tasks instead of running", "N"},
        {"shard", 0, 0, G_OPTION_ARG_STRING, &shard_text,
         "Run only shard I of N (Slurm array tasks)", "I/N"},
        {"merge", 0, 0, G_OPTION_ARG_FILENAME, &merge_dir,
         "Merge DIR/shard-*.csv into DIR/sweep.csv and plot it", "DIR"},
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &json,
         "Also write the table as JSON (- for standard output, the text going to standard error)",
         "FILE"},
        {NULL},
    };
    g_autofree GOptionEntry *entries = ms_scenario_opts_with(&o, TRUE, own);
    if (!ms_cli_parse(
            &argc, &argv, entries, NULL, "Run a grid of scenarios.",
            "Axis keys: policy, topology, model, mode, nodes, experts, chunk, "
            "iterations, seed, and the generated routing's zipf, hot, corr, drift, "
            "tokens. Values are separated by ',' or, when one contains a ',', by ';'. "
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
    if (merge_dir) {
        return merge(merge_dir, text, json);
    }
    if (vary == NULL) {
        return ms_cli_usage("sweep: give at least one axis with --vary KEY=V1,V2,...");
    }
    if (jobs < 0 || jobs > 1024 || slurm < 0 || slurm > (gint)MS_SWEEP_MAX_SHARDS) {
        return ms_cli_usage("sweep: --jobs must be 0..1024 and --slurm 0..%u", MS_SWEEP_MAX_SHARDS);
    }
    g_autoptr(GError) error = NULL;
    guint shard = 0, shards = 1;
    if (shard_text && !ms_sweep_shard_parse(shard_text, &shard, &shards, &error)) {
        return ms_cli_fail(error);
    }
    const char *dir = out ? out : "moesim-out/sweep";
    if (g_mkdir_with_parents(dir, 0755) != 0) {
        return ms_cli_usage("sweep: cannot create %s", dir);
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
    if (json && (slurm || shards > 1)) {
        return ms_cli_usage("sweep: --json reports a whole table: give it to --merge");
    }
    if (slurm) {
        g_autofree char *cmd = task_command(saved_argc, saved, dir, out != NULL);
        return write_slurm(dir, (guint)slurm, cmd);
    }
    g_autofree char *file = shards > 1 ? ms_sweep_shard_file(shard) : g_strdup("sweep.csv");
    g_autofree char *csv = g_build_filename(dir, file, NULL);
    /* Rows go to TABLE.part as points finish; the table itself is written only when the sweep is
     * complete, so that a failed or stopped sweep leaves an earlier table and its plots alone. */
    g_autofree char *part = g_strconcat(csv, ".part", NULL);
    if (!ms_sweep_open_journal(sw, part, &error)) {
        return ms_cli_fail(error);
    }
    double t0 = ms_cli_wall_seconds();
    signal(SIGINT, on_sigint);
    gboolean ok = ms_sweep_run(
        sw, (guint)jobs, shard, shards, (const gint *)&interrupted,
        isatty(STDERR_FILENO) || g_getenv("MOESIM_PROGRESS") ? progress : NULL, &t0, &error);
    signal(SIGINT, SIG_DFL);
    g_autoptr(GError) werr = NULL;
    if (!ms_sweep_close_journal(sw, &werr)) {
        return ms_cli_fail(werr);
    }
    guint n = ms_sweep_n_points(sw), done = ms_sweep_n_done(sw);
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
    fprintf(text, "sweep: %u points%s, rows in %s\n", done, shards > 1 ? " of this shard" : "",
            csv);
    /* Wall-clock figures go to standard error: the same sweep prints the same lines. */
    fprintf(stderr, "# swept in %.1f s of wall time\n", ms_cli_wall_seconds() - t0);
    return MS_EXIT_OK;
}
