/* cmd_exec: `moesim exec --backend cpu|cuda SCHEDULE.json` executes a schedule written by
 * `moesim plan` on a real executor and reports it exactly as a simulated run is reported
 * (summary JSON, Chrome trace, per-op CSV). Under Slurm or torchrun every rank runs this command;
 * rank 0 writes the outputs. */
#include <stdio.h>
#include <string.h>

#include "backends/executor.h"
#include "backends/executor_remote.h"
#include "cli.h"
#include "commands.h"
#include "sim/out/result.h"

typedef struct {
    char *backend, *topology, *json, *chrome, *csv, *timeout, *max_memory, *dtype;
    double time_scale;
    gboolean worker;
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
    g_free(a->max_memory);
    g_free(a->dtype);
}

static gboolean
parse_options(const ExecArgs *a, MsExecOptions *o, GError **error)
{
    memset(o, 0, sizeof *o);
    o->time_scale = a->time_scale;
    o->dtype = a->dtype;
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
    if (a->max_memory && !ms_cli_parse_size("--max-memory", a->max_memory, &o->max_memory, error)) {
        return FALSE;
    }
    if (a->max_memory && o->max_memory == 0) {
        g_set_error(error, MS_EXECUTOR_ERROR, MS_EXECUTOR_ERROR_OPTIONS,
                    "--max-memory: '%s' must be more than 0", a->max_memory);
        return FALSE;
    }
    return ms_exec_options_resolve(o, o, error);
}

/* The topology that sizes the cpu backend's busy work: --topology, else the schedule's own. */
static gboolean
load_topology(const ExecArgs *a, const MsSchedule *s, MsTopology **out, GError **error)
{
    const char *name = a->topology ? a->topology : ms_schedule_get_meta(s, "topology");
    *out = NULL;
    if (name == NULL) {
        return TRUE;
    }
    *out = ms_topology_load(name, error);
    if (*out == NULL && a->topology == NULL) {
        g_prefix_error(error, "the schedule's topology (meta 'topology'): ");
    }
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
    printf("step       %.3f us\n", m.step_us);
    printf("compute    %.3f us per GPU\n", m.compute_us);
    printf("all-to-all %.3f us per GPU (%" G_GUINT64_FORMAT " bytes in all)\n", m.a2a_us,
           m.a2a_bytes);
    printf("allreduce  %.3f us per GPU\n", m.allreduce_us);
    printf("exposed    %.3f us of communication per GPU with no compute running\n",
           m.exposed_comm_us);
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

static const char *
backend_note(const char *backend, const MsExecOptions *o)
{
    static char note[200];
    if (strcmp(backend, "cpu") == 0) {
        g_snprintf(note, sizeof note,
                   "cpu backend: compute ops are busy work of the modelled time x %g and "
                   "transfers host memory copies; times do not measure a GPU",
                   o->time_scale);
        return note;
    }
    return "cuda backend: per-op times from CUDA events on each GPU, aligned across GPUs by a "
           "collective at start";
}

static int
execute(const ExecArgs *a, const char *path)
{
    g_autoptr(GError) error = NULL;
    MsExecOptions o;
    if (!parse_options(a, &o, &error)) {
        return ms_cli_fail(error);
    }
    const char *backend = a->backend ? a->backend : "cpu";
    if (ms_executor_backend(backend, &error) == NULL) {
        return ms_cli_fail(error);
    }
    g_autoptr(MsSchedule) s = ms_schedule_load(path, &error);
    g_autoptr(MsTopology) topo = NULL;
    if (s == NULL || !load_topology(a, s, &topo, &error)) {
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
    ms_result_add_note(res, backend_note(backend, &o));
    ms_result_set_detail(res, g_steal_pointer(&s), g_steal_pointer(&rec));
    return write_outputs(a, res, path);
}

/* A worker of a multi-process run: the coordinator sends the schedule and the options. */
static int
work(const ExecArgs *a)
{
    g_autoptr(GError) error = NULL;
    MsExecOptions o;
    const MsExecBackend *b = NULL;
    if (!parse_options(a, &o, &error) ||
        (b = ms_executor_backend(a->backend ? a->backend : "cuda", &error)) == NULL) {
        return ms_cli_fail(error);
    }
    if (!b->per_rank) {
        return ms_cli_usage("exec --worker: backend '%s' runs every rank in one process", b->name);
    }
    g_autoptr(MsRecords) own = ms_remote_worker_main(b, &o, &error);
    return own ? MS_EXIT_OK : ms_cli_fail(error);
}

int
ms_cmd_exec(int argc, char **argv)
{
    ExecArgs a = {0};
    const GOptionEntry entries[] = {
        {"backend", 'b', 0, G_OPTION_ARG_STRING, &a.backend, "cpu (default) or cuda", "NAME"},
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &a.json, "Write the summary JSON (- for stdout)",
         "FILE"},
        {"chrome-trace", 0, 0, G_OPTION_ARG_FILENAME, &a.chrome,
         "Write a Chrome trace-event file (Perfetto)", "FILE"},
        {"csv", 0, 0, G_OPTION_ARG_FILENAME, &a.csv, "Write the per-op CSV", "FILE"},
        {"topology", 't', 0, G_OPTION_ARG_STRING, &a.topology,
         "cpu: GPUs whose modelled compute time sizes the busy work (default: the schedule's)",
         "NAME|FILE"},
        {"time-scale", 0, 0, G_OPTION_ARG_DOUBLE, &a.time_scale,
         "cpu: busy work lasts the modelled time x this (default 1)", "X"},
        {"max-memory", 0, 0, G_OPTION_ARG_STRING, &a.max_memory,
         "cpu: limit on rank buffers (default 4GiB)", "SIZE"},
        {"dtype", 0, 0, G_OPTION_ARG_STRING, &a.dtype,
         "cuda: element type of GEMMs and allreduces, bf16 (default) or fp16", "T"},
        {"timeout", 0, 0, G_OPTION_ARG_STRING, &a.timeout,
         "Give up when the run (or a rendezvous wait) takes longer (default 600s)", "TIME"},
        {"worker", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &a.worker,
         "Run as one rank's worker for a coordinator (set by the launcher)", NULL},
        {NULL},
    };
    if (!ms_cli_parse(
            &argc, &argv, entries, "SCHEDULE.json",
            "Execute a schedule written by 'moesim plan' on a real executor.",
            "Backends:\n"
            "  cpu   every rank a thread: all-to-alls copy their real bytes between rank buffers,\n"
            "        allreduces sum floats, compute is busy work of the modelled time; checks\n"
            "        that every op runs once, after its dependencies, in the dispatcher's order\n"
            "  cuda  one process per GPU: cuBLAS GEMMs of the ops' shapes, NCCL all-to-all-v and\n"
            "        allreduce, CUDA-event times. On one node the ranks are forked; under srun\n"
            "        (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID) or torchrun (RANK, WORLD_SIZE,\n"
            "        LOCAL_RANK) with MASTER_ADDR and MASTER_PORT every process runs this\n"
            "        command and rank 0 coordinates and writes the outputs.\n"
            "Outputs have the format of a simulated run (see docs/backends.md).")) {
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
