/* cmd_bench: `moesim bench` runs the calibration microbenchmarks of a backend that has them (the
 * registry's, backends/registry.h) on real GPUs: point-to-point per link class, all-to-all and
 * allreduce sweeps, expert GEMM sweeps, launch overhead, all-to-alls under a looping allreduce.
 * It prints them with nccl-tests columns and writes the moesim measurement CSV that calibration
 * reads. On one node it forks one rank per device; under srun or torchrun every process runs it
 * and rank 0 reports. NCCL's channel and queue pair settings go into this process's environment
 * before any rank starts, where NCCL reads them. Short options are nccl-tests' where the meaning is
 * the same (-b -e -f -g -n -w -d); its other letters are taken for nothing else here. */
#include <stdio.h>
#include <string.h>

#include "backends/executor.h"
#include "backends/executor_bench.h"
#include "backends/bench_options.h"
#include "backends/executor_launch.h"
#include "backends/executor_remote.h"
#include "backends/registry.h"
#include "sim/calib/meas_csv.h"
#include "cli.h"
#include "commands.h"
#include "validate/bench_report.h"
#include "validate/moesim_csv.h"

/* The options whose values bench_options.h parses against its ranges, by index. */
enum {
    V_ITERS,
    V_WARMUP,
    V_MINBYTES,
    V_MAXBYTES,
    V_TOKENS,
    V_D_MODEL,
    V_D_FFN,
    V_CONC_SIZES,
    V_BACKGROUND,
    V_CHANNELS,
    V_QPS,
    V_DTYPE,
    N_VALUES
};
static const char *const value_options[N_VALUES] = {
    "--iters",      "--warmup",   "--minbytes", "--maxbytes",
    "--tokens",     "--d-model",  "--d-ffn",    "--concurrency-sizes",
    "--background", "--channels", "--qps",      "--dtype",
};

typedef struct {
    char *backend, *topology, *out, *json, *what, *timeout;
    char *values[N_VALUES];
    double stepfactor;
    gint ranks;
    gboolean plain;
} BenchArgs;

static void
bench_args_clear(BenchArgs *a)
{
    char *strs[] = {a->backend, a->topology, a->out, a->json, a->what, a->timeout};
    for (guint k = 0; k < G_N_ELEMENTS(strs); k++) {
        g_free(strs[k]);
    }
    for (guint k = 0; k < N_VALUES; k++) {
        g_free(a->values[k]);
    }
}

static gboolean
fill_spec(const BenchArgs *a, MsBenchSpec *spec, GError **error)
{
    if (a->what && !ms_bench_parse_what(a->what, &spec->what, error)) {
        return FALSE;
    }
    for (guint k = 0; k < N_VALUES; k++) {
        if (a->values[k] && !ms_bench_option_set(spec, value_options[k], a->values[k], error)) {
            return FALSE;
        }
    }
    if (a->ranks == 0 || a->ranks < -1) {
        g_set_error(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC, "--ranks: %d is not at least 1",
                    a->ranks);
        return FALSE;
    }
    /* Settings the options leave to the environment are read from it, so that the rows say what
     * NCCL ran with. */
    if (!ms_bench_nccl_env(spec, NULL, error)) {
        return FALSE;
    }
    spec->step_factor = a->stepfactor ? a->stepfactor : spec->step_factor;
    spec->gated = !a->plain;
    return ms_bench_spec_check(spec, error);
}

typedef struct {
    MsBenchSpec *spec;
    MsTopology *topo;
} SpecData;

/* Once every rank joined: the pairs from their hosts (and the topology), the spec's bytes. */
static GBytes *
make_spec(const char *const *hosts, guint world, gpointer data, GError **error)
{
    SpecData *d = data;
    if (!ms_bench_plan_pairs(d->spec, d->topo, hosts, world, error) ||
        !ms_bench_spec_check(d->spec, error)) {
        return NULL;
    }
    return ms_bench_spec_to_bytes(d->spec);
}

/* Ranks of the run: the job's, or on one node --ranks or every device the backend sees. */
static gboolean
world_size(const BenchArgs *a, const MsExecBackend *b, guint *world, GError **error)
{
    MsLaunchEnv env;
    if (!ms_launch_env_read(NULL, &env, error)) {
        return FALSE;
    }
    *world = env.mode != MS_LAUNCH_LOCAL ? env.world : (guint)MAX(a->ranks, 0);
    ms_launch_env_clear(&env);
    if (*world == 0 && b->devices) {
        *world = b->devices(error);
        return *world > 0;
    }
    *world = MAX(*world, 1);
    return TRUE;
}

/* Without --backend: the first registered backend with microbenchmarks. */
static const char *
default_backend(void)
{
    for (const MsBackendInfo *const *b = ms_backend_list(); *b; b++) {
        if ((*b)->bench_summary) {
            return (*b)->name;
        }
    }
    return ms_backend_list()[0]->name;
}

/* The backend of the run, loaded; a usage error for one without microbenchmarks. */
static const MsExecBackend *
bench_backend(const BenchArgs *a, GError **error)
{
    const MsBackendInfo *info = ms_backend_find(a->backend ? a->backend : default_backend(), error);
    if (info == NULL) {
        return NULL;
    }
    if (info->bench_summary == NULL) {
        g_set_error(error, MS_BENCH_ERROR, MS_BENCH_ERROR_SPEC,
                    "bench: backend '%s' has no microbenchmarks (they need GPUs: --backend %s)",
                    info->name, default_backend());
        return NULL;
    }
    return ms_backend_hooks(info, error);
}

static int
report(const BenchArgs *a, GBytes *result, const MsTopology *topo)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    gsize len = 0;
    const char *text = g_bytes_get_data(result, &len);
    if (!ms_moesim_csv_read(set, text ? text : "", len, "rank 0's measurements", &error)) {
        return ms_cli_fail(error);
    }
    if (a->out && !ms_moesim_csv_save(set, a->out, &error)) {
        return ms_cli_fail(error);
    }
    g_autoptr(MsComputeModel) model =
        topo ? ms_compute_model_new(ms_topology_gpu_spec(topo, 0), &error) : NULL;
    if (topo && model == NULL) {
        return ms_cli_fail(error);
    }
    /* "--json -": standard output holds the JSON alone, the table goes to standard error. */
    FILE *text_out = a->json && strcmp(a->json, "-") == 0 ? stderr : stdout;
    g_autofree char *table = ms_bench_report_format(set, model);
    fputs(table, text_out);
    if (a->out) {
        fprintf(text_out, "# %u rows written to %s\n", ms_measurement_set_size(set), a->out);
    }
    if (a->json) {
        g_autoptr(JsonNode) root =
            ms_bench_report_to_json(set, a->backend ? a->backend : default_backend());
        if (!ms_cli_write_json(a->json, root, &error)) {
            return ms_cli_fail(error);
        }
    }
    return MS_EXIT_OK;
}

static int
bench(const BenchArgs *a)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(MsBenchSpec) spec = ms_bench_spec_new();
    if (!fill_spec(a, spec, &error)) {
        return ms_cli_fail(error);
    }
    MsExecOptions o = {0};
    if (a->timeout) {
        MsTime t = 0;
        if (!ms_parse_time(a->timeout, &t, &error) || t == 0) {
            return ms_cli_usage("bench: --timeout: '%s' is not a time above 0 with a unit",
                                a->timeout);
        }
        o.timeout_s = ms_time_to_s(t);
    }
    g_autoptr(MsTopology) topo = a->topology ? ms_topology_load(a->topology, &error) : NULL;
    if (a->topology && topo == NULL) {
        return ms_cli_fail(error);
    }
    const MsExecBackend *b = bench_backend(a, &error);
    if (b == NULL) {
        return ms_cli_fail(error);
    }
    /* Before any rank (and any thread) starts: the local launcher's workers inherit this
     * environment, and under srun every task sets its own from the same options. */
    g_auto(GStrv) assignments = ms_bench_nccl_assignments(spec);
    for (guint k = 0; assignments[k]; k++) {
        char *eq = strchr(assignments[k], '=');
        *eq = '\0';
        g_setenv(assignments[k], eq + 1, TRUE);
    }
    guint world = 0;
    if (!world_size(a, b, &world, &error)) {
        return ms_cli_fail(error);
    }
    SpecData d = {spec, topo};
    g_autoptr(GBytes) result = ms_remote_bench(b, world, make_spec, &d, &o, &error);
    if (result == NULL) {
        return ms_cli_fail(error);
    }
    return ms_remote_is_primary() ? report(a, result, topo) : MS_EXIT_OK;
}

int
ms_cmd_bench(int argc, char **argv)
{
    BenchArgs a = {.ranks = -1};
    g_autoptr(GString) names = g_string_new(NULL);
    g_autoptr(GString) description = g_string_new(
        "Communication rows follow nccl-tests: size (B), count, type, redop, root, time (us,\n"
        "the mean of --iters calls on the slowest rank), algbw and busbw (GB/s). Point-to-\n"
        "point runs rank 0 to one rank per link class. GEMM rows time the up projection,\n"
        "activation and down projection of one expert at each token count on rank 0.\n"
        "Concurrency times each --concurrency-sizes all-to-all alone and while a\n"
        "--background allreduce loops on a second communicator and stream (calibrate\n"
        "--net nccl fits NIC arbitration on them). Overlap times each expert kernel\n"
        "alone and while that allreduce loops over every rank on a second communicator\n"
        "and stream (calibrate fits the compute slowdown under NCCL on them; with one\n"
        "rank, alone only). --channels and --qps set\n"
        "NCCL_MIN/MAX_NCHANNELS and NCCL_IB_QPS_PER_CONNECTION for the whole run (NCCL\n"
        "reads them once per process: one value per run).\n"
        "The CSV is 'moesim-measurements 1', or 2 with concurrency, overlap or NCCL settings\n"
        "(docs/calibration-format.md).\n"
        "Backends with microbenchmarks:\n");
    for (const MsBackendInfo *const *b = ms_backend_list(); *b; b++) {
        if ((*b)->bench_summary == NULL) {
            continue;
        }
        g_string_append_printf(names, "%s%s", names->len ? ", " : "", (*b)->name);
        g_auto(GStrv) lines = g_strsplit((*b)->bench_summary, "\n", -1);
        for (guint k = 0; lines[k] && *lines[k]; k++) {
            g_string_append_printf(description, "  %-5s %s\n", k == 0 ? (*b)->name : "", lines[k]);
        }
    }
    g_string_truncate(description, description->len - 1);
    g_autofree char *backend_help =
        g_strdup_printf("%s (default %s)", names->str, default_backend());
    const GOptionEntry entries[] = {
        {"backend", 'B', 0, G_OPTION_ARG_STRING, &a.backend, backend_help, "NAME"},
        {"out", 0, 0, G_OPTION_ARG_FILENAME, &a.out, "Write the measurement CSV to FILE", "FILE"},
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &a.json,
         "Also write the rows as JSON (- for standard output, the tables going to standard error)",
         "FILE"},
        {"what", 0, 0, G_OPTION_ARG_STRING, &a.what,
         "p2p,alltoall,allreduce,gemm,launch,concurrency,overlap or all (default all)", "LIST"},
        {"ranks", 'g', 0, G_OPTION_ARG_INT, &a.ranks,
         "GPUs on this node (default: all visible; a job: its ranks; nccl-tests' --ngpus)", "N"},
        {"ngpus", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT, &a.ranks, NULL, "N"},
        {"topology", 0, 0, G_OPTION_ARG_STRING, &a.topology,
         "Label point-to-point pairs by its link classes; show its GPU's modelled kernel times",
         "NAME|FILE"},
        {"minbytes", 'b', 0, G_OPTION_ARG_STRING, &a.values[V_MINBYTES],
         "Smallest size (default 8)", "SIZE"},
        {"maxbytes", 'e', 0, G_OPTION_ARG_STRING, &a.values[V_MAXBYTES],
         "Largest size (default 128M)", "SIZE"},
        {"stepfactor", 'f', 0, G_OPTION_ARG_DOUBLE, &a.stepfactor,
         "Multiply the size by this each step (default 2)", "F"},
        {"iters", 'n', 0, G_OPTION_ARG_STRING, &a.values[V_ITERS], "Timed iterations (default 20)",
         "N"},
        {"warmup", 'w', 0, G_OPTION_ARG_STRING, &a.values[V_WARMUP],
         "Warm-up iterations (default 5)", "N"},
        {"warmup_iters", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &a.values[V_WARMUP], NULL,
         "N"},
        {"dtype", 'd', 0, G_OPTION_ARG_STRING, &a.values[V_DTYPE],
         "bf16 (default) or fp16 (nccl-tests' bfloat16, half)", "T"},
        {"datatype", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &a.values[V_DTYPE], NULL, "T"},
        {"d-model", 0, 0, G_OPTION_ARG_STRING, &a.values[V_D_MODEL],
         "Expert input width (default 4096)", "N"},
        {"d-ffn", 0, 0, G_OPTION_ARG_STRING, &a.values[V_D_FFN],
         "Expert hidden width (default 14336)", "N"},
        {"no-gated", 0, 0, G_OPTION_ARG_NONE, &a.plain,
         "Plain expert MLP (the default is gated, SwiGLU)", NULL},
        {"tokens", 0, 0, G_OPTION_ARG_STRING, &a.values[V_TOKENS],
         "Token counts of the GEMM sweep (default 1,2,4,...,8192)", "LIST"},
        {"concurrency-sizes", 0, 0, G_OPTION_ARG_STRING, &a.values[V_CONC_SIZES],
         "All-to-all sizes of the concurrency benchmark (default 1M,4M,16M,64M)", "LIST"},
        {"background", 0, 0, G_OPTION_ARG_STRING, &a.values[V_BACKGROUND],
         "Size of the allreduce looping under them and under the overlap kernels (default 25M)",
         "SIZE"},
        {"channels", 0, 0, G_OPTION_ARG_STRING, &a.values[V_CHANNELS],
         "Run NCCL on N channels (NCCL_MIN/MAX_NCHANNELS; default NCCL's choice)", "N"},
        {"qps", 0, 0, G_OPTION_ARG_STRING, &a.values[V_QPS],
         "Queue pairs per network connection (NCCL_IB_QPS_PER_CONNECTION; default NCCL's)", "N"},
        {"timeout", 0, 0, G_OPTION_ARG_STRING, &a.timeout, "Give up after this long (default 600s)",
         "TIME"},
        {NULL},
    };
    if (!ms_cli_parse(&argc, &argv, entries, NULL,
                      "Run the calibration microbenchmarks on GPUs and write the measurement CSV.",
                      description->str)) {
        bench_args_clear(&a);
        return MS_EXIT_USAGE;
    }
    int rc = argc > 1 ? ms_cli_usage("bench: unexpected argument '%s'", argv[1]) : bench(&a);
    bench_args_clear(&a);
    return rc;
}
