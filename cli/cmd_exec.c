/* cmd_exec: `moesim exec --backend NAME SCHEDULE.json` executes a schedule written by
 * `moesim plan` on a real executor and reports it exactly as a simulated run is reported
 * (summary JSON, Chrome trace, per-op CSV). The backends and their own options come from the
 * registry (backends/registry.h). Under Slurm or torchrun every rank runs this command; rank 0
 * writes the outputs. */
#include <stdio.h>
#include <string.h>

#include "backends/executor.h"
#include "backends/executor_remote.h"
#include "backends/registry.h"
#include "cli.h"
#include "commands.h"
#include "sim/out/result.h"

/* Without --backend: the first registered (the cpu reference backend). */
#define DEFAULT_BACKEND (ms_backend_list()[0]->name)

typedef struct {
    char *backend, *topology, *json, *chrome, *csv, *timeout;
    gboolean worker;
    /* The backends' own options as given: names (distinct, over every backend) and values. */
    GPtrArray *names; /* const char * */
    char **values;    /* one per name, NULL when not given */
    gpointer record;  /* the chosen backend's options record */
} ExecArgs;

static void
exec_args_clear(ExecArgs *a)
{
    g_free(a->backend);
    g_free(a->topology);
    g_free(a->json);
    g_free(a->chrome);
    g_free(a->csv);
    g_free(a->timeout);
    for (guint k = 0; a->names && k < a->names->len; k++) {
        g_free(a->values[k]);
    }
    g_free(a->values);
    if (a->names) {
        g_ptr_array_unref(a->names);
    }
    g_free(a->record);
}

/* The value given for option name (NULL when not given). */
static const char *
value_of(const ExecArgs *a, const char *name)
{
    for (guint k = 0; k < a->names->len; k++) {
        if (strcmp(g_ptr_array_index(a->names, k), name) == 0) {
            return a->values[k];
        }
    }
    return NULL;
}

/* The chosen backend's options record from the values given; an option given that belongs only
 * to other backends is refused. */
static gboolean
backend_options(ExecArgs *a, const MsBackendInfo *info, GError **error)
{
    for (guint k = 0; k < a->names->len; k++) {
        const char *name = g_ptr_array_index(a->names, k);
        if (a->values[k] && ms_backend_option_index(info, name) < 0) {
            g_set_error(error, MS_EXECUTOR_ERROR, MS_EXECUTOR_ERROR_OPTIONS,
                        "--%s is not an option of backend '%s' (see 'moesim exec --help')", name,
                        info->name);
            return FALSE;
        }
    }
    guint n = 0;
    while (info->options && info->options[n].name) {
        n++;
    }
    g_autofree const char **values = g_new0(const char *, n + 1);
    for (guint k = 0; k < n; k++) {
        values[k] = value_of(a, info->options[k].name);
    }
    return ms_backend_parse_options(info, values, &a->record, error);
}

/* The common options, then the chosen backend's. */
static gboolean
parse_options(ExecArgs *a, const MsBackendInfo *info, MsExecOptions *o, GError **error)
{
    memset(o, 0, sizeof *o);
    if (!backend_options(a, info, error)) {
        return FALSE;
    }
    o->backend = a->record;
    if (a->timeout) {
        MsTime t = 0;
        if (!ms_parse_time(a->timeout, &t, error)) {
            g_prefix_error(error, "--timeout: ");
            return FALSE;
        }
        o->timeout_s = ms_time_to_s(t);
        if (o->timeout_s <= 0) {
            g_set_error(error, MS_EXECUTOR_ERROR, MS_EXECUTOR_ERROR_OPTIONS,
                        "--timeout: '%s' must be more than 0", a->timeout);
            return FALSE;
        }
    }
    return ms_exec_options_resolve(o, o, error);
}

/* The topology that sizes the cpu backend's busy work: --topology, else the one the schedule
 * names, which must be a shipped one: a schedule never makes moesim open a file (a hostile one
 * could name any file and have a line of it echoed in the error). */
static gboolean
load_topology(const ExecArgs *a, const char *path, const MsSchedule *s, MsTopology **out,
              GError **error)
{
    *out = NULL;
    if (a->topology) {
        *out = ms_topology_load(a->topology, error);
        return *out != NULL;
    }
    const char *name = ms_schedule_get_meta(s, "topology");
    if (name == NULL) {
        return TRUE;
    }
    g_autoptr(GBytes) shipped = ms_topology_shipped_data(name);
    if (shipped == NULL) {
        g_auto(GStrv) names = ms_topology_list_shipped();
        g_autofree char *list = g_strjoinv(", ", names);
        g_autofree char *shown = g_strescape(name, NULL);
        g_set_error(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_UNKNOWN,
                    "%s: meta 'topology': '%s' is not a shipped topology, and a schedule never "
                    "names a file to open: pass the cluster with --topology NAME|FILE "
                    "(shipped: %s)",
                    path, shown, list);
        return FALSE;
    }
    *out = ms_topology_load_shipped(name, error);
    return *out != NULL;
}

static void
print_summary(const MsResult *res, const char *path)
{
    MsMetrics m;
    ms_result_mean(res, &m);
    const MsSchedule *s = ms_result_schedule(res);
    const MsRecords *r = ms_result_records(res);
    printf("executed   %s: %u ops on %u ranks, policy %s, backend %s\n", path, ms_schedule_n_ops(s),
           ms_schedule_n_ranks(s), ms_schedule_policy(s), ms_records_backend(r));
    /* Milliseconds, as run prints them: a real step is tens to thousands of them. */
    char bytes[32];
    printf("step       %.3f ms\n", m.step_us / 1e3);
    printf("compute    %.3f ms per GPU\n", m.compute_us / 1e3);
    printf("all-to-all %.3f ms per GPU (%s in all)\n", m.a2a_us / 1e3,
           ms_format_bytes(m.a2a_bytes, bytes, sizeof bytes));
    printf("allreduce  %.3f ms per GPU\n", m.allreduce_us / 1e3);
    printf("exposed    %.3f ms of communication per GPU with no compute running\n",
           m.exposed_comm_us / 1e3);
    printf("waiting    %.3f ms per GPU with collectives ready, waiting for a later GPU\n",
           m.comm_wait_us / 1e3);
}

static int
write_outputs(const ExecArgs *a, MsResult *res, const char *path)
{
    g_autoptr(GError) error = NULL;
    if (a->json) {
        g_autoptr(JsonNode) node = ms_result_to_json(res);
        if (!ms_cli_write_json(a->json, node, &error)) {
            return ms_cli_fail(error);
        }
    }
    if ((a->chrome && !ms_result_write_chrome(res, a->chrome, &error)) ||
        (a->csv && !ms_result_write_csv(res, a->csv, &error))) {
        return ms_cli_fail(error);
    }
    if (a->json == NULL || strcmp(a->json, "-") != 0) {
        print_summary(res, path);
    }
    /* Wall-clock figures go to standard error, as in every command. */
    double wall = 0;
    ms_records_get_stat(ms_result_records(res), "wall_s", &wall);
    fprintf(stderr, "# executed in %.3f s of wall time\n", wall);
    return MS_EXIT_OK;
}

static int
execute(ExecArgs *a, const char *path)
{
    g_autoptr(GError) error = NULL;
    const char *outs[] = {a->json, a->chrome, a->csv};
    if (!ms_cli_claim_outputs(outs, G_N_ELEMENTS(outs), &error)) {
        return ms_cli_fail(error);
    }
    MsExecOptions o;
    const char *backend = a->backend ? a->backend : DEFAULT_BACKEND;
    const MsBackendInfo *info = ms_backend_find(backend, &error);
    /* The backend is loaded (its module, if it has one) before the schedule is read, so that a
     * backend this machine cannot run is reported first. */
    if (info == NULL || !parse_options(a, info, &o, &error) ||
        ms_backend_hooks(info, &error) == NULL) {
        return ms_cli_fail(error);
    }
    g_autoptr(MsSchedule) s = ms_schedule_load(path, &error);
    g_autoptr(MsTopology) topo = NULL;
    if (s == NULL || !load_topology(a, path, s, &topo, &error)) {
        return ms_cli_fail(error);
    }
    g_autoptr(MsRecords) rec = ms_backend_execute(backend, s, topo, &o, &error);
    if (rec == NULL) {
        return ms_cli_fail(error);
    }
    if (!ms_remote_is_primary()) {
        return MS_EXIT_OK;
    }
    g_autoptr(MsResult) res = ms_result_new(ms_records_backend(rec));
    ms_result_add(res, s, rec);
    for (const char *const *k = ms_records_stat_keys(rec); *k; k++) {
        double v = 0;
        ms_records_get_stat(rec, *k, &v);
        ms_result_set_stat(res, *k, v);
    }
    g_autofree char *note = ms_backend_describe(info, o.backend);
    ms_result_add_note(res, note);
    ms_result_set_detail(res, g_steal_pointer(&s), g_steal_pointer(&rec));
    return write_outputs(a, res, path);
}

/* A worker of a multi-process run: the coordinator sends the schedule and the options. */
static int
work(ExecArgs *a)
{
    g_autoptr(GError) error = NULL;
    if (a->backend == NULL) {
        return ms_cli_usage("exec --worker: --backend names the backend of the run");
    }
    MsExecOptions o;
    const MsExecBackend *b = NULL;
    const MsBackendInfo *info = ms_backend_find(a->backend, &error);
    if (info == NULL || !parse_options(a, info, &o, &error) ||
        (b = ms_backend_hooks(info, &error)) == NULL) {
        return ms_cli_fail(error);
    }
    if (!b->per_rank) {
        return ms_cli_usage("exec --worker: backend '%s' runs every rank in one process", b->name);
    }
    g_autoptr(MsRecords) own = ms_remote_worker_main(b, &o, &error);
    return own ? MS_EXIT_OK : ms_cli_fail(error);
}

/* One entry per distinct option name over every backend, its help that of the first backend
 * with it. Names that are the command's own are a mistake of a backend's registration. */
static void
add_backend_entries(ExecArgs *a, GArray *entries)
{
    a->names = g_ptr_array_new();
    GPtrArray *helps = g_ptr_array_new();
    GPtrArray *args = g_ptr_array_new();
    const GOptionEntry *own = (const GOptionEntry *)(gpointer)entries->data;
    guint n_own = entries->len;
    for (const MsBackendInfo *const *b = ms_backend_list(); *b; b++) {
        for (const MsBackendOption *opt = (*b)->options; opt && opt->name; opt++) {
            gboolean seen = FALSE;
            for (guint k = 0; k < a->names->len && !seen; k++) {
                seen = strcmp(g_ptr_array_index(a->names, k), opt->name) == 0;
            }
            for (guint k = 0; k < n_own && !seen; k++) {
                if (g_strcmp0(own[k].long_name, opt->name) == 0) {
                    g_critical("backend '%s': option --%s is one of moesim exec's own", (*b)->name,
                               opt->name);
                    seen = TRUE;
                }
            }
            if (!seen) {
                g_ptr_array_add(a->names, (gpointer)opt->name);
                g_ptr_array_add(helps, (gpointer)opt->help);
                g_ptr_array_add(args, (gpointer)opt->arg);
            }
        }
    }
    a->values = g_new0(char *, a->names->len + 1);
    for (guint k = 0; k < a->names->len; k++) {
        GOptionEntry e = {g_ptr_array_index(a->names, k),
                          0,
                          0,
                          G_OPTION_ARG_STRING,
                          &a->values[k],
                          g_ptr_array_index(helps, k),
                          g_ptr_array_index(args, k)};
        g_array_append_val(entries, e);
    }
    g_ptr_array_unref(helps);
    g_ptr_array_unref(args);
}

/* The help's list of backends, from the registry. */
static char *
backends_help(void)
{
    GString *s = g_string_new("Backends:\n");
    for (const MsBackendInfo *const *b = ms_backend_list(); *b; b++) {
        g_auto(GStrv) lines = g_strsplit((*b)->summary, "\n", -1);
        for (guint k = 0; lines[k] && *lines[k]; k++) {
            g_string_append_printf(s, "  %-5s %s\n", k == 0 ? (*b)->name : "", lines[k]);
        }
        if (!ms_backend_in_build(*b)) {
            g_string_append_printf(s, "        (not in this build: %s)\n", (*b)->missing);
        }
    }
    g_string_append(s, "Outputs have the format of a simulated run (see docs/backends.md).");
    return g_string_free(s, FALSE);
}

int
ms_cmd_exec(int argc, char **argv)
{
    ExecArgs a = {0};
    g_autofree char *backend_help = NULL;
    {
        g_autoptr(GString) names = g_string_new(NULL);
        for (const MsBackendInfo *const *b = ms_backend_list(); *b; b++) {
            g_string_append_printf(names, "%s%s", names->len ? ", " : "", (*b)->name);
        }
        backend_help = g_strdup_printf("%s (default %s)", names->str, DEFAULT_BACKEND);
    }
    const GOptionEntry own[] = {
        {"backend", 'B', 0, G_OPTION_ARG_STRING, &a.backend, backend_help, "NAME"},
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &a.json, "Write the summary JSON (- for stdout)",
         "FILE"},
        {"chrome-trace", 0, 0, G_OPTION_ARG_FILENAME, &a.chrome,
         "Write a Chrome trace-event file (Perfetto)", "FILE"},
        {"csv", 0, 0, G_OPTION_ARG_FILENAME, &a.csv, "Write the per-op CSV", "FILE"},
        {"topology", 't', 0, G_OPTION_ARG_STRING, &a.topology,
         "GPUs whose modelled compute time sizes the cpu backend's busy work (default: the "
         "schedule's)",
         "NAME|FILE"},
        {"timeout", 0, 0, G_OPTION_ARG_STRING, &a.timeout,
         "Give up when the run (or a rendezvous wait) takes longer (default 600s)", "TIME"},
        {"worker", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &a.worker,
         "Run as one rank's worker for a coordinator (set by the launcher)", NULL},
    };
    g_autoptr(GArray) entries = g_array_new(TRUE, TRUE, sizeof(GOptionEntry));
    g_array_append_vals(entries, own, G_N_ELEMENTS(own));
    add_backend_entries(&a, entries);
    g_autofree char *description = backends_help();
    if (!ms_cli_parse(&argc, &argv, (const GOptionEntry *)(gpointer)entries->data, "SCHEDULE.json",
                      "Execute a schedule written by 'moesim plan' on a real executor.",
                      description)) {
        exec_args_clear(&a);
        return MS_EXIT_USAGE;
    }
    int rc;
    if (a.worker) {
        rc = argc == 1 ? work(&a)
                       : ms_cli_usage("exec --worker takes no schedule (the coordinator sends it)");
    } else if (argc != 2) {
        rc = ms_cli_usage("exec: expected one SCHEDULE.json (see 'moesim exec --help')");
    } else {
        rc = execute(&a, argv[1]);
    }
    exec_args_clear(&a);
    return rc;
}
