/* bench_moe: speed and memory of whole MoE scenarios, from routing to results. One training step
 * of a 16-layer, 64-expert model on 256 GPUs (32 DGX A100 nodes) under each policy, and 10,000
 * inference batches of the default model on its 16-GPU testbed under static and Lina placement.
 * On request (--deepseek=NODES, not part of the default run), one training step of the shipped
 * deepseek-v3 (EP 64 x DP) on the shipped dgx-h100-NODESnode cluster. --net SPEC runs every point
 * under that network model (moesim run's specs and parser), and each point lists its first
 * iteration's collectives per kind (op, algorithm, and under nccl NCCL's choice of protocol);
 * --capacity F gives the training model a capacity factor, so that its all-to-alls are padded;
 * --jobs N executes N iterations at once (the inference replay's batches).
 * Each point runs in a child process so that its peak memory is its own. Prints wall and CPU time,
 * events, flows, peak resident memory and the simulated step time; asserts nothing about time. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ms_bench.h"
#include "sim/engine.h"
#include "sim/inputs.h"
#include "sim/scenario.h"

/* 16 layers, all MoE, 64 experts, top-2, bf16, 4096 tokens per GPU and step: a mid-size MoE
 * whose expert-parallel groups (64 GPUs) span 8 nodes, so all-to-alls and allreduces cross the
 * fabric. Routing is generated with the scenario's documented default skew. */
static const char model_ini[] = "[model]\nformat = 1\nname = bench-16l-64e\n"
                                "description = benchmark model: 16 MoE layers, 64 experts\n"
                                "layers = 16\nd_model = 2048\nd_ffn = 8192\nexperts = 64\n"
                                "top_k = 2\ndtype = bf16\nheads = 16\nseq_len = 2048\n"
                                "tokens_per_gpu = 4096\ntokens_per_gpu_infer = 512\n";

typedef struct {
    gboolean ok;
    char error[240];
    double wall_s, cpu_s, events, flows, step_ms, p95_ms;
    guint iterations;
    guint64 base_kib, peak_kib;
    char kinds[3072]; /* the first iteration's flows per collective kind, one line each */
} Point;

/* A point: the inputs by name and the scenario's mode and iterations. */
typedef struct {
    MsInputNames names;
    MsPlanMode mode;
    guint iterations;
    gboolean flow_by_flow; /* the reference engine */
    const MsNetSpec *net;  /* NULL: the flow model */
} Bench;

static guint workers; /* --jobs: iterations executed at once (moesim run --jobs) */

/* Loads the inputs and runs the scenario on the engine, timed together. */
static MsResult *
load_and_run(const Bench *b, GError **error)
{
    g_autoptr(MsInputs) in = ms_inputs_load(&b->names, error);
    if (in == NULL) {
        return NULL;
    }
    MsEngineOptions eo = {.flow_by_flow = b->flow_by_flow, .net = b->net};
    g_autoptr(MsRunner) runner = ms_engine_runner_new(&eo);
    MsScenario sc = {
        .runner = runner, .mode = b->mode, .iterations = b->iterations, .workers = workers};
    ms_inputs_fill(in, &sc);
    return ms_scenario_run(&sc, error);
}

/* The engine's per-kind stats of the detailed (first) iteration (sim/engine.c: "calls.KIND",
 * "bytes.KIND", "flows.KIND"), a line per kind: calls, mean buffer per rank, flows. */
static void
describe_kinds(const MsRecords *rec, char *out, gsize size)
{
    g_autoptr(GString) s = g_string_new(NULL);
    for (const char *const *k = rec ? ms_records_stat_keys(rec) : NULL; k && *k; k++) {
        if (!g_str_has_prefix(*k, "calls.")) {
            continue;
        }
        const char *kind = *k + strlen("calls.");
        g_autofree char *bytes_key = g_strconcat("bytes.", kind, NULL);
        g_autofree char *flows_key = g_strconcat("flows.", kind, NULL);
        double calls = 0, bytes = 0, flows = 0;
        ms_records_get_stat(rec, *k, &calls);
        ms_records_get_stat(rec, bytes_key, &bytes);
        ms_records_get_stat(rec, flows_key, &flows);
        g_string_append_printf(s, "  %-28s %8.0f calls %14.0f flows", kind, calls, flows);
        if (bytes > 0) {
            g_string_append_printf(s, "  %10.3f MiB per rank per call", bytes / calls / 1048576.0);
        }
        g_string_append_c(s, '\n');
    }
    g_strlcpy(out, s->str, size);
}

static Point
run_point(const Bench *b)
{
    Point pt = {0};
    g_autoptr(GError) error = NULL;
    double cpu0 = ms_bench_cpu_seconds();
    gint64 t0 = g_get_monotonic_time();
    g_autoptr(MsResult) res = load_and_run(b, &error);
    pt.wall_s = (g_get_monotonic_time() - t0) * 1e-6;
    pt.cpu_s = ms_bench_cpu_seconds() - cpu0;
    if (res == NULL) {
        g_strlcpy(pt.error, error->message, sizeof pt.error);
        return pt;
    }
    /* The figures themselves, not the result's JSON: that holds every op of the detailed
     * iteration (gigabytes for 2,048 GPUs) and would be the point's peak memory. */
    ms_result_get_stat(res, "events", &pt.events);
    ms_result_get_stat(res, "flows", &pt.flows);
    MsMetrics mean;
    ms_result_mean(res, &mean);
    pt.step_ms = mean.step_us * 1e-3;
    pt.p95_ms = ms_result_step_percentile(res, 95) * 1e-3;
    pt.iterations = ms_result_n_iterations(res);
    describe_kinds(ms_result_records(res), pt.kinds, sizeof pt.kinds);
    pt.ok = TRUE;
    return pt;
}

/* Runs one scenario in a child process and returns what it reports through a pipe. */
static Point
in_child(const Bench *b)
{
    Point pt = {0};
    int fds[2];
    if (pipe(fds) != 0) {
        g_strlcpy(pt.error, "pipe failed", sizeof pt.error);
        return pt;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        guint64 base = ms_bench_status_kib("VmRSS:");
        Point r = run_point(b);
        r.base_kib = base;
        r.peak_kib = ms_bench_status_kib("VmHWM:");
        ssize_t n = write(fds[1], &r, sizeof r);
        _exit(n == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fds[1]);
    if (pid < 0 || read(fds[0], &pt, sizeof pt) != (ssize_t)sizeof pt) {
        pt.ok = FALSE;
        g_strlcpy(pt.error, "the child process died", sizeof pt.error);
    }
    close(fds[0]);
    if (pid > 0) {
        int status = 0;
        waitpid(pid, &status, 0);
    }
    return pt;
}

static void
print_point(const char *what, const char *policy, const Point *p)
{
    if (!p->ok) {
        printf("%-26s %-11s failed: %s\n", what, policy, p->error);
        return;
    }
    printf("%-26s %-11s %8.2f %8.2f %6u %12.0f %11.0f %9.0f %9.0f %14.6f %13.6f\n", what, policy,
           p->wall_s, p->cpu_s, p->iterations, p->events, p->flows, p->base_kib / 1024.0,
           p->peak_kib / 1024.0, p->step_ms, p->p95_ms);
    fputs(p->kinds, stdout);
}

static double capacity; /* --capacity: the training model's capacity factor, 0 = dropless */

static char *
write_inputs(const char *dir, guint nodes, char **model_path)
{
    g_autofree char *topo = ms_bench_dgx_a100_ini(nodes);
    char *topo_path = g_build_filename(dir, "topology.ini", NULL);
    *model_path = g_build_filename(dir, "model.ini", NULL);
    char factor[G_ASCII_DTOSTR_BUF_SIZE];
    g_autofree char *model = g_strconcat(
        model_ini, "capacity_factor = ", g_ascii_dtostr(factor, sizeof factor, capacity), "\n",
        NULL);
    if (!g_file_set_contents(topo_path, topo, -1, NULL) ||
        !g_file_set_contents(*model_path, model, -1, NULL)) {
        g_free(topo_path);
        g_clear_pointer(model_path, g_free);
        return NULL;
    }
    return topo_path;
}

static gboolean flow_by_flow;
static const MsNetSpec *net_spec; /* --net, NULL: the flow model */

static int
bench_train(const char *dir, guint nodes, char **policies)
{
    g_autofree char *model = NULL;
    g_autofree char *topo = write_inputs(dir, nodes, &model);
    if (topo == NULL) {
        fprintf(stderr, "bench_moe: cannot write the inputs under %s\n", dir);
        return 1;
    }
    g_autofree char *what = g_strdup_printf("train step, %u GPUs", nodes * 8);
    int rc = 0;
    for (guint i = 0; policies[i]; i++) {
        Bench b = {{.topology = topo, .model = model, .policy = policies[i]},
                   MS_PLAN_TRAIN,
                   1,
                   flow_by_flow,
                   net_spec};
        Point p = in_child(&b);
        print_point(what, policies[i], &p);
        rc |= !p.ok;
    }
    g_remove(model);
    g_remove(topo);
    return rc;
}

static int
bench_infer(guint batches, char **policies)
{
    g_autofree char *what = g_strdup_printf("infer x%u, 16 GPUs", batches);
    int rc = 0;
    for (guint i = 0; policies[i]; i++) {
        Bench b = {{.policy = policies[i]}, MS_PLAN_INFER, batches, flow_by_flow, net_spec};
        Point p = in_child(&b);
        print_point(what, policies[i], &p);
        rc |= !p.ok;
    }
    return rc;
}

/* One training step of deepseek-v3 on the shipped DGX H100 cluster of that many nodes. */
static int
bench_deepseek(guint nodes, char **policies)
{
    g_autofree char *topo = g_strdup_printf("dgx-h100-%unode", nodes);
    g_autofree char *what = g_strdup_printf("deepseek-v3, %u H100s", nodes * 8);
    int rc = 0;
    for (guint i = 0; policies[i]; i++) {
        /* Counts only: NCCL's all-to-all needs no token paths, and paths of 2,048 GPUs x 4096
         * tokens x 58 layers x top-8 would be 7.3 GiB. */
        Bench b = {{.topology = topo,
                    .model = "deepseek-v3",
                    .policy = policies[i],
                    .trace = "gen:records=counts"},
                   MS_PLAN_TRAIN,
                   1,
                   flow_by_flow,
                   net_spec};
        Point p = in_child(&b);
        print_point(what, policies[i], &p);
        rc |= !p.ok;
    }
    return rc;
}

int
main(int argc, char **argv)
{
    g_autofree char *train = g_strdup("fifo,concurrent,priority,lina,schemoe");
    g_autofree char *infer = g_strdup("concurrent,lina");
    gint nodes = 32, batches = 10000, deepseek = 0, jobs = 1;
    g_autofree char *deepseek_policies = g_strdup("fifo");
    g_autofree char *net = NULL;
    GOptionEntry entries[] = {
        {"train", 0, 0, G_OPTION_ARG_STRING, &train, "Policies of the training step ('' = none)",
         "LIST"},
        {"infer", 0, 0, G_OPTION_ARG_STRING, &infer, "Policies of the inference replay", "LIST"},
        {"nodes", 0, 0, G_OPTION_ARG_INT, &nodes, "DGX A100 nodes of the training cluster", "N"},
        {"batches", 0, 0, G_OPTION_ARG_INT, &batches, "Inference batches", "N"},
        {"deepseek", 0, 0, G_OPTION_ARG_INT, &deepseek,
         "Also one deepseek-v3 training step on the shipped dgx-h100-Nnode (32, 256 or 2048)", "N"},
        {"deepseek-policies", 0, 0, G_OPTION_ARG_STRING, &deepseek_policies,
         "Policies of the deepseek-v3 step (default fifo)", "LIST"},
        {"net", 0, 0, G_OPTION_ARG_STRING, &net,
         "Network model of every point, as moesim run --net: flow (default) or "
         "nccl[:key=value,...]",
         "SPEC"},
        {"capacity", 0, 0, G_OPTION_ARG_DOUBLE, &capacity,
         "Capacity factor of the training model (0, the default: dropless; > 0: every "
         "all-to-all padded to the capacity)",
         "F"},
        {"jobs", 0, 0, G_OPTION_ARG_INT, &jobs,
         "Iterations executed at once on worker threads, as moesim run --jobs (default 1)", "N"},
        {"flows", 0, 0, G_OPTION_ARG_NONE, &flow_by_flow,
         "Every flow on its own (the reference engine) instead of symmetric classes", NULL},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("- whole-scenario benchmark");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_autoptr(GError) error = NULL;
    if (!g_option_context_parse(ctx, &argc, &argv, &error) || nodes < 1 || nodes > 4096 ||
        batches < 1 || !(capacity >= 0 && capacity <= 64) || jobs < 1 || jobs > 1024) {
        fprintf(stderr, "bench_moe: %s\n",
                error ? error->message : "bad --nodes, --batches, --capacity or --jobs");
        return 2;
    }
    MsNetSpec spec;
    ms_net_spec_init(&spec);
    if (net && !ms_net_spec_parse(net, &spec, &error)) {
        fprintf(stderr, "bench_moe: --net: %s\n", error->message);
        return 2;
    }
    net_spec = net ? &spec : NULL;
    workers = (guint)jobs;
    g_autofree char *net_text = ms_net_spec_to_string(&spec);
    g_autofree char *dir = g_dir_make_tmp("moesim-bench-XXXXXX", NULL);
    if (dir == NULL) {
        fprintf(stderr, "bench_moe: cannot make a temporary folder\n");
        return 1;
    }
    printf("train: 16 MoE layers x 64 experts, top-2, 4096 tokens per GPU, %s, on %d DGX A100 "
           "nodes; infer: %s on %s, generated routing; engine: %s; network: %s\n",
           capacity > 0 ? "padded to capacity" : "dropless", nodes, MS_SCENARIO_MODEL,
           MS_SCENARIO_TOPOLOGY, flow_by_flow ? "flow by flow" : "symmetric classes", net_text);
    printf("%-26s %-11s %8s %8s %6s %12s %11s %9s %9s %14s %13s\n", "point", "policy", "wall(s)",
           "cpu(s)", "iters", "events", "flows", "base MiB", "peak MiB", "step(ms)", "p95(ms)");
    g_auto(GStrv) tp = g_strsplit(train, ",", -1);
    g_auto(GStrv) ip = g_strsplit(infer, ",", -1);
    int rc = 0;
    if (*train) {
        rc |= bench_train(dir, (guint)nodes, tp);
    }
    if (*infer) {
        rc |= bench_infer((guint)batches, ip);
    }
    if (deepseek > 0) {
        g_auto(GStrv) dp = g_strsplit(deepseek_policies, ",", -1);
        rc |= bench_deepseek((guint)deepseek, dp);
    }
    g_rmdir(dir);
    printf("wall and cpu are the whole scenario (routing generation, planning, simulation); base\n"
           "MiB is the child's resident memory before it (the program and its shared libraries),\n"
           "peak MiB its VmHWM after; step is the mean simulated step or batch.\n");
    return rc;
}
