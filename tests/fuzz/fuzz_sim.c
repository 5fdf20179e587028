/* Fuzz target: past parsing. The input is four parts separated by lines "%%": a topology, a model,
 * a calibration and a policy spec (an empty part takes a small default: an 8-GPU DGX A100, a
 * two-layer model, no calibration, fifo). What loads is run: a collective of each kind on the
 * topology with the calibration applied (the first byte picks the size), then a training step,
 * and with the first byte's low bit an inference batch, under the policy, with the engine's
 * invariant checks. Every run ends in a result with finite times or in an error with a message,
 * never in a broken invariant; under the sanitizers an overflow anywhere is a finding. Inputs that
 * load but would make long runs (over 16 GPUs, large models) are skipped, so that the fuzzer's
 * time goes to many short runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "sim/calib/calibration.h"
#include "sim/engine.h"
#include "sim/net/collective.h"
#include "sim/policy/policy.h"
#include "sim/scenario.h"
#include "sim/sim.h"

static const char default_model[] = "[model]\nformat = 1\nname = fuzz\nlayers = 2\nmoe_every = 2\n"
                                    "d_model = 256\nd_ffn = 512\nexperts = 8\ntop_k = 2\n"
                                    "heads = 4\nseq_len = 64\ntokens_per_gpu = 64\n"
                                    "tokens_per_gpu_infer = 16\ngrad_bucket = 1MiB\n";

/* Each part written to its own file, read as a user's files are read. */
static char *paths[3];

static void
remove_files(void)
{
    for (guint i = 0; i < G_N_ELEMENTS(paths); i++) {
        unlink(paths[i]);
    }
}

static const char *
write_part(guint i, const char *text, gsize len)
{
    static const char *const names[] = {"topology", "model", "calibration"};
    if (paths[0] == NULL) {
        for (guint k = 0; k < G_N_ELEMENTS(paths); k++) {
            paths[k] = g_strdup_printf("%s/moesim-fuzz-sim-%d-%s.ini", g_get_tmp_dir(),
                                       (int)getpid(), names[k]);
        }
        atexit(remove_files);
    }
    if (!g_file_set_contents(paths[i], text, (gssize)len, NULL)) {
        abort();
    }
    return paths[i];
}

/* Small enough for a run of well under a second under the sanitizers: the bytes a policy cuts
 * into chunks of 64 KiB or more (a GPU's all-to-all in a layer, the gradients), the buckets those
 * are allreduced in, the layers and experts that multiply the ops. */
static gboolean
small_model(const MsModel *m)
{
    const MsModelSpec *s = ms_model_spec(m);
    double grad = (double)ms_model_total_params(m) * ms_dtype_bytes(s->dtype);
    double a2a = (double)MAX(s->tokens_per_gpu, s->tokens_per_gpu_infer) *
                 MAX(s->top_k, s->top_k_infer) * (double)ms_model_token_bytes(m);
    return s->layers <= 4 && s->experts <= 32 && a2a <= 8.0 * (1 << 20) &&
           grad <= 8.0 * (1 << 20) && grad / (double)s->grad_bucket <= 64;
}

static int
skipped(const char *what)
{
    if (g_getenv("MOESIM_FUZZ_VERBOSE")) {
        fprintf(stderr, "skipped: the %s would make a long run\n", what);
    }
    return 0;
}

static void
check_metrics(const MsMetrics *mt)
{
    const double v[] = {mt->step_us,      mt->compute_us,      mt->a2a_us,
                        mt->allreduce_us, mt->exposed_comm_us, mt->comm_wait_us};
    for (guint i = 0; i < G_N_ELEMENTS(v); i++) {
        if (!isfinite(v[i]) || v[i] < 0) {
            abort();
        }
    }
}

/* A collective of each kind on the first min(8, GPUs) ranks; errors are fine, broken invariants
 * and times past the clock without an error are not. */
static void
run_collectives(const MsTopology *topo, const MsCalibration *cal, guint64 bytes)
{
    static const MsCollOp ops[] = {MS_COLL_ALLTOALL, MS_COLL_ALLREDUCE, MS_COLL_ALLGATHER,
                                   MS_COLL_REDUCESCATTER};
    guint n = MIN(ms_topology_n_gpus(topo), 8);
    for (guint i = 0; n >= 2 && i < G_N_ELEMENTS(ops); i++) {
        MsCollSpec spec = {.op = ops[i], .n_ranks = n, .bytes = bytes};
        g_autofree guint64 *scaled =
            cal ? ms_calibration_adjust_collective(cal, topo, &spec) : NULL;
        (void)scaled; /* only holds memory to free */
        g_autoptr(MsSim) sim = ms_sim_new(topo);
        ms_sim_set_check_invariants(sim, TRUE);
        GError *error = NULL;
        g_autoptr(MsColl) coll = ms_coll_new(sim, &spec, NULL, NULL, &error);
        if (coll == NULL) {
            fuzz_refused(&error);
            continue;
        }
        ms_coll_launch_all(coll);
        if (!ms_sim_run(sim, &error)) {
            fuzz_refused(&error);
            continue;
        }
        for (guint r = 0; r < n; r++) {
            if (ms_coll_rank_end(coll, r) >= MS_SIM_CLOCK_END) {
                abort();
            }
        }
    }
}

static void
run_step(const MsScenario *sc)
{
    GError *error = NULL;
    g_autoptr(MsResult) result = ms_scenario_run(sc, &error);
    /* The engine's invariant checks fail a run with MS_ENGINE_ERROR_INVARIANT: a finding. */
    if (result == NULL) {
        if (error == NULL || g_error_matches(error, MS_ENGINE_ERROR, MS_ENGINE_ERROR_INVARIANT)) {
            abort();
        }
        fuzz_refused(&error);
        return;
    }
    for (guint i = 0; i < ms_result_n_iterations(result); i++) {
        check_metrics(ms_result_iteration(result, i));
    }
}

int
LLVMFuzzerTestOneInput(const guint8 *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    /* Parts after the first byte: topology, model, calibration, policy. */
    g_autofree char *text = g_strndup((const char *)data + 1, size - 1);
    g_auto(GStrv) parts = g_strsplit(text, "\n%%\n", 4);
    const char *part[4] = {NULL, NULL, NULL, NULL};
    for (guint i = 0; i < 4 && parts[i]; i++) {
        part[i] = *parts[i] ? parts[i] : NULL;
    }
    GError *error = NULL;
    const char *topo_path = part[0] ? write_part(0, part[0], strlen(part[0])) : "dgx-a100";
    const char *model_path =
        write_part(1, part[1] ? part[1] : default_model, strlen(part[1] ? part[1] : default_model));
    const char *cal_path = part[2] ? write_part(2, part[2], strlen(part[2])) : NULL;
    g_autoptr(MsTopology) topo = ms_topology_load(topo_path, &error);
    if (topo == NULL) {
        fuzz_refused(&error);
        return 0;
    }
    if (ms_topology_n_gpus(topo) > 16 || ms_topology_n_devices(topo) > 256) {
        return skipped("topology");
    }
    g_autoptr(MsModel) model = ms_model_load(model_path, &error);
    if (model == NULL) {
        fuzz_refused(&error);
        return 0;
    }
    if (!small_model(model)) {
        return skipped("model");
    }
    g_autoptr(MsCalibration) cal = cal_path ? ms_calibration_load(cal_path, &error) : NULL;
    if (cal_path && cal == NULL) {
        fuzz_refused(&error);
        return 0;
    }
    if (cal && !ms_calibration_apply_topology(cal, topo, &error)) {
        fuzz_refused(&error);
        return 0;
    }
    /* 1 KiB to 1 GiB by powers of two. */
    run_collectives(topo, cal, G_GUINT64_CONSTANT(1) << (10 + (data[0] >> 4) * 2 % 21));
    g_autoptr(MsPolicy) policy = ms_policy_parse(part[3] ? g_strstrip(parts[3]) : "fifo", &error);
    if (policy == NULL) {
        fuzz_refused(&error);
        return 0;
    }
    /* The scenario runs on the objects loaded above (the topology calibrated), with routing
     * generated for them, through the engine with the calibration and its invariant checks. */
    g_autoptr(MsRunner) runner =
        ms_engine_runner_new(&(MsEngineOptions){.check_invariants = TRUE, .calibration = cal});
    MsScenario sc = {
        .topology = topo,
        .model = model,
        .calibration = cal,
        .policy = policy,
        .runner = runner,
        .mode = MS_PLAN_TRAIN,
        .seed = 1,
    };
    run_step(&sc);
    if (data[0] & 1) {
        sc.mode = MS_PLAN_INFER;
        run_step(&sc);
    }
    return 0;
}
