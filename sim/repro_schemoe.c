/* repro_schemoe: the ScheMoE paper's experiments (Shi et al., EuroSys'24) on its testbed (8
 * nodes x 4 RTX 2080 Ti, 100 Gb/s InfiniBand per node): the ablation layer feature by feature
 * (ZFP compression at the measured rate, Pipe-A2A, OptSche's pipelining) beside its baselines
 * Tutel and FasterMoE, and the CT-MoE models against them, under both network models (NCCL's at
 * 2.10, the oldest release the model knows; the paper's is not stated). */
#include "repro_private.h"

#include <math.h>
#include <string.h>

#include "sim/inputs.h"

static const char *const schemoe_nets[] = {"flow", "nccl:version=2.10", NULL};

static char *
testbed_text(GError **error)
{
    g_autoptr(GBytes) text = ms_inputs_topology_text("schemoe-testbed", error);
    return text ? g_strndup(g_bytes_get_data(text, NULL), g_bytes_get_size(text)) : NULL;
}

/* Runs every policy on a shipped model under every network model (runs in that order). */
static void
add_runs(GPtrArray *runs, const char *model, guint index, const char *topo,
         const char *const *policies, const char *const *nets, guint steps)
{
    for (const char *const *net = nets; *net; net++) {
        for (const char *const *p = policies; *p; p++) {
            g_autofree char *label = g_strdup_printf("%s, %s, %s", model, *p, *net);
            ReproRun *run =
                repro_run_new(label, model, TRUE, topo, NULL, *p, *net, MS_PLAN_TRAIN, steps, 0);
            run->tag = g_strdup(model);
            run->experts = 32;
            run->index = index;
            g_ptr_array_add(runs, run);
        }
    }
}

/* The ablation's stages: ScheMoE without its features, then each added in the paper's order. */
static const char *const stages[] = {
    "schemoe:r=1",                    /* reference: one chunk, nothing else */
    "schemoe:r=1,zfp=true",           /* + ZFP compression */
    "schemoe:r=1,zfp=true,pipe=true", /* + Pipe-A2A */
    "schemoe:r=2,zfp=true,pipe=true", /* + OptSche with ScheMoE's default r = 2 */
    "schemoe:r=4,zfp=true,pipe=true", /* + OptSche with r = 4 */
    "tutel",
    "fastermoe",
    NULL,
};

gboolean
repro_schemoe_ablation(MsReproResult *res, const MsReproOptions *opts, GError **error)
{
    const char *const *nets = repro_nets(opts, schemoe_nets);
    static const char *const quick[] = {"schemoe:r=1", "schemoe:r=2,zfp=true,pipe=true", "tutel",
                                        NULL};
    const char *const *policies = opts->quick ? quick : stages;
    guint steps = opts->quick ? 1 : 5;
    g_autofree char *topo = testbed_text(error);
    if (topo == NULL) {
        return FALSE;
    }
    g_autoptr(GPtrArray) runs = g_ptr_array_new_with_free_func((GDestroyNotify)repro_run_free);
    add_runs(runs, "schemoe-ablation-layer", 0, topo, policies, nets, steps);
    if (!repro_run_all(runs, opts, error)) {
        return FALSE;
    }
    guint n_pol = g_strv_length((char **)policies);
    for (guint r = 0; r < runs->len; r++) {
        const ReproRun *run = runs->pdata[r], *ref = runs->pdata[r - r % n_pol];
        repro_row(res, run->tag, 32, 32, run->policy, ref->policy, repro_net_label(run->net));
        repro_row_set(res, "step_ms", repro_step_ms(run));
        repro_row_set(res, "gain", repro_step_ms(ref) / repro_step_ms(run));
        repro_row_set(res, "a2a_ms", repro_a2a_ms(run));
    }
    repro_setup(res,
                "schemoe-testbed (8 nodes x 4 RTX 2080 Ti, PCIe 3.0, one 100 Gb/s NIC per "
                "node), the ablation layer (B = 8, L = 2048, f = 1.2, H = M = 8192, 32 "
                "experts), one training step of it, %u steps per run",
                steps);
    repro_setup(res, "stages: `schemoe:r=1` (reference: no feature), + ZFP at ScheMoE's rate "
                     "(`zfp=true`: 8 bits per value, measured with libzfp), + Pipe-A2A "
                     "(`pipe=true`), + OptSche (`r=2`, ScheMoE's default, and `r=4`); the "
                     "baselines Tutel and FasterMoE; gain: the reference's step over the row's");
    repro_chart(res, "gain", "gain", "gain over schemoe:r=1");
    return TRUE;
}

gboolean
repro_schemoe_ct_moe(MsReproResult *res, const MsReproOptions *opts, GError **error)
{
    const char *const *nets = repro_nets(opts, schemoe_nets);
    static const char *const policies[] = {"tutel", "fastermoe", "schemoe",
                                           "schemoe:r=4,zfp=true,pipe=true", NULL};
    static const char *const quick[] = {"tutel", "fastermoe", "schemoe", NULL};
    static const guint layers[] = {12, 16, 20, 24};
    guint steps = opts->quick ? 1 : 5;
    const char *const *pol = opts->quick ? quick : policies;
    g_autofree char *topo = testbed_text(error);
    if (topo == NULL) {
        return FALSE;
    }
    g_autoptr(GPtrArray) runs = g_ptr_array_new_with_free_func((GDestroyNotify)repro_run_free);
    for (guint i = 0; i < (opts->quick ? 1 : G_N_ELEMENTS(layers)); i++) {
        g_autofree char *model = g_strdup_printf("schemoe-ct-moe-%u", layers[i]);
        add_runs(runs, model, i, topo, pol, nets, steps);
    }
    if (!repro_run_all(runs, opts, error)) {
        return FALSE;
    }
    guint n_pol = g_strv_length((char **)pol);
    for (guint r = 0; r < runs->len; r++) {
        const ReproRun *run = runs->pdata[r], *tutel = runs->pdata[r - r % n_pol];
        const ReproRun *faster = runs->pdata[r - r % n_pol + 1];
        repro_row(res, run->tag, 32, 32, run->policy, tutel->policy, repro_net_label(run->net));
        repro_row_set(res, "step_ms", repro_step_ms(run));
        repro_row_set(res, "speedup", repro_step_ms(tutel) / repro_step_ms(run));
        repro_row_set(res, "speedup_over_fastermoe", repro_step_ms(faster) / repro_step_ms(run));
    }
    repro_setup(res,
                "schemoe-testbed, CT-MoE with 12, 16, 20 and 24 layers (every layer MoE, 32 "
                "experts, top-2, capacity 1.2, docs/models.md), %u training steps per run",
                steps);
    repro_setup(res, "policies: Tutel (baseline), FasterMoE, ScheMoE as it ships (`r=2`, "
                     "OptSche) and with everything (`r=4`, ZFP, Pipe-A2A)");
    for (const char *const *net = nets; *net; net++) {
        double lo = INFINITY, hi = -INFINITY, lo2 = INFINITY, hi2 = -INFINITY;
        for (guint r = 0; r < ms_repro_result_n_rows(res); r++) {
            if (strcmp(ms_repro_result_text(res, r, "policy"), "schemoe") == 0 &&
                strcmp(ms_repro_result_text(res, r, "net"), repro_net_label(*net)) == 0) {
                double a = ms_repro_result_figure(res, r, "speedup");
                double b = ms_repro_result_figure(res, r, "speedup_over_fastermoe");
                lo = MIN(lo, a);
                hi = MAX(hi, a);
                lo2 = MIN(lo2, b);
                hi2 = MAX(hi2, b);
            }
        }
        repro_summary(res,
                      "%s: ScheMoE over Tutel %.2fx to %.2fx, over FasterMoE %.2fx to %.2fx (the "
                      "paper: 9%% to 30%% faster than both)",
                      repro_net_label(*net), lo, hi, lo2, hi2);
    }
    repro_pivot(res, "speedup", "Step-time speedup over `tutel`");
    repro_pivot(res, "speedup_over_fastermoe", "Step-time speedup over `fastermoe`");
    repro_chart(res, "speedup", "speedup", "step-time speedup over tutel");
    return TRUE;
}
