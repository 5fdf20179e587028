/* repro_lina: the Lina paper's experiments (Li et al., USENIX ATC'23): its training evaluation
 * (12 models, GPUs = experts, DeepSpeed-MoE with hierarchical all-to-all against Lina with the
 * packing it found), its inference evaluation (Transformer-XL on Enwik8 and BERT-Large on WMT,
 * routing generated to the published statistics) and its motivation runs (DeepSpeed's all-to-all
 * time and share at 12, 24 and 36 layers), each under both network models, the NCCL one at the
 * testbed's NCCL 2.10. */
#include "repro_private.h"

#include <math.h>
#include <string.h>

/* The testbed runs NCCL 2.10 (section 6): both network models, NCCL's at that release. */
static const char *const lina_nets[] = {"flow", "nccl:version=2.10", NULL};

static const char *const train_families[] = {"transformer-xl", "gpt2", "bert2gpt2"};
static const guint train_experts[] = {2, 4, 8, 16};

/* The packing Lina found (section 7): 2 experts per GPU, 4 for Transformer-XL with 16. */
static guint
paper_pack(const char *family, guint experts)
{
    return strcmp(family, "transformer-xl") == 0 && experts == 16 ? 4 : 2;
}

/* The runs of one model on one testbed: every policy under every network model, in that order;
 * tag and experts name the model in rows, index is the experiment's. */
static void
add_runs(GPtrArray *runs, const char *tag, guint experts, guint index, const char *model,
         const char *topo, const char *trace, MsPlanMode mode, const char *const *policies,
         const char *const *nets, guint iterations, guint warmup)
{
    for (const char *const *net = nets; *net; net++) {
        for (const char *const *p = policies; *p; p++) {
            g_autofree char *label = g_strdup_printf("%s %ue, %s, %s", tag, experts, *p, *net);
            ReproRun *run =
                repro_run_new(label, model, FALSE, topo, trace, *p, *net, mode, iterations, warmup);
            run->tag = g_strdup(tag);
            run->experts = experts;
            run->index = index;
            g_ptr_array_add(runs, run);
        }
    }
}

/* Mean, smallest and largest of the figure key over the rows of policy under net (NAN, INFINITY
 * and -INFINITY when none). */
static void
span_of(const MsReproResult *res, const char *policy, const char *net, const char *key, double *lo,
        double *mean, double *hi)
{
    double sum = 0;
    guint n = 0;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (guint r = 0; r < ms_repro_result_n_rows(res); r++) {
        double v = ms_repro_result_figure(res, r, key);
        if (strcmp(ms_repro_result_text(res, r, "policy"), policy) == 0 &&
            strcmp(ms_repro_result_text(res, r, "net"), repro_net_label(net)) == 0 && isfinite(v)) {
            sum += v;
            n++;
            *lo = MIN(*lo, v);
            *hi = MAX(*hi, v);
        }
    }
    *mean = n ? sum / n : NAN;
}

gboolean
repro_lina_train(MsReproResult *res, const MsReproOptions *opts, GError **error)
{
    const char *const *nets = repro_nets(opts, lina_nets);
    guint n_fam = opts->quick ? 1 : G_N_ELEMENTS(train_families);
    /* The paper averages 50 steps after 10 warm-up steps; moesim's steps differ only by the
     * routing's sampling and drift (the summary gives their spread), so 10 steps carry the same
     * mean within it, and warm-up has nothing to warm. */
    guint steps = opts->quick ? 2 : 10, warmup = 0;
    g_autoptr(GPtrArray) runs = g_ptr_array_new_with_free_func((GDestroyNotify)repro_run_free);
    g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func(g_free);
    guint per_model = 0;
    for (guint f = 0; f < n_fam; f++) {
        const char *fam = opts->quick ? "gpt2" : train_families[f];
        for (guint i = 0; i < G_N_ELEMENTS(train_experts); i++) {
            guint e = train_experts[i];
            if (opts->quick && e != 4 && e != 16) {
                continue;
            }
            char *model = repro_lina_model(fam, e, 0, FALSE);
            char *topo = repro_lina_testbed(e, error);
            g_ptr_array_add(keep, model);
            g_ptr_array_add(keep, topo);
            if (topo == NULL) {
                return FALSE;
            }
            g_autofree char *mf = g_strdup_printf("lina-%s-%ue.ini", fam, e);
            g_autofree char *tf = g_strdup_printf("lina-testbed-%ugpu.ini", e);
            repro_setup_file(res, mf, model);
            repro_setup_file(res, tf, topo);
            g_autofree char *paper = g_strdup_printf("lina:a2a=2dh,pack=%u", paper_pack(fam, e));
            const char *policies[] = {"deepspeed",           paper,   "lina:a2a=2dh",
                                      "lina:a2a=2dh,pack=1", "tutel", NULL};
            guint before = runs->len;
            add_runs(runs, fam, e, 0, model, topo, NULL, MS_PLAN_TRAIN, policies, nets, steps,
                     warmup);
            per_model = runs->len - before;
            for (guint k = before; k < runs->len; k++) {
                /* DeepSpeed on GPT-2 with 16 experts under NCCL 2.10: every flow on node 0's NIC,
                 * for its first backward all-to-all beside the allreduce (read in
                 * docs/collectives.md, "Per connection"). */
                ReproRun *run = runs->pdata[k];
                if (!strcmp(fam, "gpt2") && e == 16 && !strcmp(run->policy, "deepspeed") &&
                    !strcmp(run->net, lina_nets[1])) {
                    run->timeline_link = "n0.nic0->fabric";
                }
            }
        }
    }
    if (!repro_run_all(runs, opts, error)) {
        return FALSE;
    }
    guint n_pol = per_model / g_strv_length((char **)nets);
    for (guint r = 0; r < runs->len; r++) {
        const ReproRun *run = runs->pdata[r], *base = runs->pdata[r - r % n_pol];
        repro_row(res, run->tag, run->experts, run->experts, run->policy, base->policy,
                  repro_net_label(run->net));
        if (r % n_pol == 1) {
            repro_row_column(res, "Lina, the paper's packing");
        }
        repro_row_set(res, "step_ms", repro_step_ms(run));
        repro_row_set(res, "speedup", repro_step_ms(base) / repro_step_ms(run));
        if (run->timeline) {
            g_autofree char *title =
                g_strdup_printf("lina-train: %s %ue, %s, %s: every flow on n0.nic0->fabric",
                                run->tag, run->experts, run->policy, repro_net_label(run->net));
            repro_link_timeline(res, runs->pdata[r], title);
        }
        double bwd = repro_a2a_bwd_ms(run);
        repro_row_set(res, "a2a_backward_speedup", bwd > 0 ? repro_a2a_bwd_ms(base) / bwd : NAN);
        repro_row_set(res, "moe_forward_speedup", base->moe_fwd_us / run->moe_fwd_us);
        repro_row_set(res, "moe_backward_speedup", base->moe_bwd_us / run->moe_bwd_us);
        repro_row_set(res, "a2a_share", repro_a2a_ms(run) / repro_step_ms(run));
        repro_row_set(res, "memory_gib", run->state_bytes / (1u << 30));
    }
    repro_setup(res,
                "testbed: lina-testbed with as many GPUs as experts (2 and 4 on one node, 8 on "
                "two, 16 on four), one 100 Gb/s NIC per node");
    repro_setup(res,
                "models: every FFN an MoE layer, top-2, capacity factor 1.0, %u tokens per "
                "GPU (repro_setup.c)",
                REPRO_LINA_TOKENS);
    repro_setup(res,
                "policies: `deepspeed` (baseline: capacity padding, hierarchical all-to-all), "
                "Lina with the packing the paper found (`pack=2`, 4 for Transformer-XL with 16 "
                "experts), with moesim's packing rule (`pack=0`) and without packing "
                "(`pack=1`), all with the hierarchical all-to-all; `tutel` for reference");
    repro_setup(res,
                "%u steps per run after %u warm-up steps, routing generated with the default "
                "skew; memory_gib: model states per GPU at 16 bytes per parameter",
                steps, warmup);
    static const char *const what[] = {"Lina with the paper's packing", "Lina with moesim's rule",
                                       "Lina without packing", "Tutel"};
    for (const char *const *net = nets; *net; net++) {
        for (guint k = 1; k < n_pol; k++) {
            double lo = INFINITY, hi = -INFINITY, sum = 0;
            guint n = 0;
            for (guint r = k; r < runs->len; r += n_pol) {
                const ReproRun *run = runs->pdata[r], *base = runs->pdata[r - k];
                if (strcmp(run->net, *net) == 0) {
                    double x = repro_step_ms(base) / repro_step_ms(run);
                    lo = MIN(lo, x);
                    hi = MAX(hi, x);
                    sum += x;
                    n++;
                }
            }
            repro_summary(res, "%s: %s over DeepSpeed %.2fx to %.2fx, mean %.2fx%s",
                          repro_net_label(*net), what[k - 1], lo, hi, sum / MAX(n, 1),
                          k == 1 ? " (the paper: up to 1.73x)" : "");
        }
    }
    double spread = 0;
    for (guint r = 0; r < runs->len; r++) {
        spread = MAX(spread, repro_step_spread(runs->pdata[r]));
    }
    repro_summary(res,
                  "step times vary from step to step by at most %.2f%% (standard deviation "
                  "over mean, any run)",
                  100 * spread);
    repro_pivot(res, "speedup", "Step-time speedup over `deepspeed`");
    repro_pivot(res, "a2a_backward_speedup", "Backward all-to-all speedup over `deepspeed`");
    repro_chart(res, "speedup", "speedup", "step-time speedup over deepspeed");
    return TRUE;
}

/* Inference workloads (section 7): a dataset's routing on a model, as a shipped sample. */
typedef struct {
    const char *dataset, *family;
    guint layers;
} Workload;

static const Workload workloads[] = {
    {"enwik8", "transformer-xl", 12},
    {"wmt", "bert-large", 24},
};

gboolean
repro_lina_infer(MsReproResult *res, const MsReproOptions *opts, GError **error)
{
    const char *const *nets = repro_nets(opts, lina_nets);
    guint batches = opts->quick ? 4 : 50, warmup = opts->quick ? 2 : 10;
    static const guint experts[] = {4, 16};
    /* DeepSpeed drops no token in inference (drop_tokens=false: every buffer as large as the
     * hottest expert's), as Lina's inference analysis of stragglers presumes; concurrent is the
     * static placement sending tokens as routed, to tell padding from balancing. */
    static const char *const policies[] = {"deepspeed:drop_tokens=false", "lina:a2a=2dh",
                                           "concurrent:a2a=2dh", NULL};
    g_autoptr(GPtrArray) runs = g_ptr_array_new_with_free_func((GDestroyNotify)repro_run_free);
    g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func(g_free);
    for (guint w = 0; w < (opts->quick ? 1 : G_N_ELEMENTS(workloads)); w++) {
        for (guint i = 0; i < (opts->quick ? 1 : G_N_ELEMENTS(experts)); i++) {
            guint e = experts[i];
            char *model = repro_lina_model(workloads[w].family, e, workloads[w].layers, TRUE);
            char *topo = repro_lina_testbed(e, error);
            g_ptr_array_add(keep, model);
            g_ptr_array_add(keep, topo);
            if (topo == NULL) {
                return FALSE;
            }
            g_autofree char *mf =
                g_strdup_printf("lina-%s-%ue-%ul.ini", workloads[w].family, e, workloads[w].layers);
            g_autofree char *tf = g_strdup_printf("lina-testbed-%ugpu.ini", e);
            repro_setup_file(res, mf, model);
            repro_setup_file(res, tf, topo);
            g_autofree char *trace = g_strdup_printf("sample:lina-%s-%ue", workloads[w].dataset, e);
            g_autofree char *tag =
                g_strdup_printf("%s %s", workloads[w].family, workloads[w].dataset);
            add_runs(runs, tag, e, 0, model, topo, trace, MS_PLAN_INFER, policies, nets, batches,
                     warmup);
        }
    }
    if (!repro_run_all(runs, opts, error)) {
        return FALSE;
    }
    guint n_pol = g_strv_length((char **)policies);
    for (guint r = 0; r < runs->len; r++) {
        const ReproRun *run = runs->pdata[r], *base = runs->pdata[r - r % n_pol];
        repro_row(res, run->tag, run->experts, run->experts, run->policy, base->policy,
                  repro_net_label(run->net));
        repro_row_set(res, "p50_ms", repro_percentile_ms(run, 50));
        repro_row_set(res, "p95_ms", repro_percentile_ms(run, 95));
        repro_row_set(res, "p50_speedup",
                      repro_percentile_ms(base, 50) / repro_percentile_ms(run, 50));
        repro_row_set(res, "p95_speedup",
                      repro_percentile_ms(base, 95) / repro_percentile_ms(run, 95));
    }
    repro_setup(res,
                "workloads: Transformer-XL (12 layers) on Enwik8 and BERT-Large (24) on WMT "
                "En-De, every FFN MoE, top-1, %u tokens per GPU, 4 and 16 experts on as many "
                "GPUs",
                REPRO_LINA_TOKENS);
    repro_setup(res, "routing: `sample:lina-{enwik8,wmt}-{4,16}e`, generated to the paper's "
                     "popularity ratio (4.02x, 5.56x) and persistence (41.94%% on a group's top-1 "
                     "expert) (traces/samples)");
    repro_setup(res,
                "policies: DeepSpeed without dropping (baseline), Lina (path 3, at most 4 "
                "experts per GPU), the static placement with all-to-all-v; hierarchical "
                "all-to-all for all; %u batches after %u warm-up batches",
                batches, warmup);
    for (const char *const *net = nets; *net; net++) {
        double lo, p50, hi, p95;
        span_of(res, "lina:a2a=2dh", *net, "p50_speedup", &lo, &p50, &hi);
        span_of(res, "lina:a2a=2dh", *net, "p95_speedup", &lo, &p95, &hi);
        repro_summary(res,
                      "%s: Lina over DeepSpeed, mean over the workloads: median %.2fx (the paper: "
                      "1.45x), p95 %.2fx (the paper: 1.63x)",
                      repro_net_label(*net), p50, p95);
    }
    repro_pivot(res, "p50_speedup", "Median batch latency speedup over DeepSpeed");
    repro_pivot(res, "p95_speedup", "95th-percentile batch latency speedup over DeepSpeed");
    repro_chart(res, "p95", "p95_speedup", "p95 batch latency speedup over deepspeed");
    return TRUE;
}

/* Lina's figure 2 and section 2 (DeepSpeed-MoE Transformer-XL, training and inference at the
 * same batch): all-to-all time and share of the step; parameters. */
typedef struct {
    guint experts, layers;
    double params_m, train_ms, train_share, infer_ms, infer_share;
} Motivation;

static const Motivation motivation[] = {
    {4, 12, 117, 259, 0.367, 73, 0.274},   {4, 24, 233, 589, 0.354, 103, 0.262},
    {4, 36, 349, 979, 0.382, 153, 0.283},  {16, 12, 419, 333, 0.395, 102, 0.325},
    {16, 24, 838, 715, 0.376, 177, 0.317}, {16, 36, 1200, 1145, 0.368, 243, 0.274},
};

gboolean
repro_lina_motivation(MsReproResult *res, const MsReproOptions *opts, GError **error)
{
    const char *const *nets = repro_nets(opts, lina_nets);
    guint steps = opts->quick ? 1 : 10;
    const char *train[] = {"deepspeed", NULL}, *infer[] = {"deepspeed:drop_tokens=false", NULL};
    g_autoptr(GPtrArray) runs = g_ptr_array_new_with_free_func((GDestroyNotify)repro_run_free);
    g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < G_N_ELEMENTS(motivation); i++) {
        const Motivation *m = &motivation[i];
        if (opts->quick && m->layers != 12) {
            continue;
        }
        char *model = repro_lina_model("transformer-xl", m->experts, m->layers, FALSE);
        char *topo = repro_lina_testbed(m->experts, error);
        g_ptr_array_add(keep, model);
        g_ptr_array_add(keep, topo);
        if (topo == NULL) {
            return FALSE;
        }
        g_autofree char *mf =
            g_strdup_printf("lina-transformer-xl-%ue-%ul.ini", m->experts, m->layers);
        g_autofree char *tf = g_strdup_printf("lina-testbed-%ugpu.ini", m->experts);
        repro_setup_file(res, mf, model);
        repro_setup_file(res, tf, topo);
        g_autofree char *tt = g_strdup_printf("transformer-xl %ul train", m->layers);
        g_autofree char *ti = g_strdup_printf("transformer-xl %ul infer", m->layers);
        guint first = runs->len;
        add_runs(runs, tt, m->experts, i, model, topo, NULL, MS_PLAN_TRAIN, train, nets, steps, 0);
        for (guint k = first; k < runs->len; k++) {
            ((ReproRun *)runs->pdata[k])->overlap = TRUE;
        }
        if (!opts->quick) {
            add_runs(runs, ti, m->experts, i, model, topo, NULL, MS_PLAN_INFER, infer, nets, steps,
                     0);
        }
    }
    if (!repro_run_all(runs, opts, error)) {
        return FALSE;
    }
    for (guint r = 0; r < runs->len; r++) {
        const ReproRun *run = runs->pdata[r];
        gboolean inf = run->mode == MS_PLAN_INFER;
        const Motivation *m = &motivation[run->index];
        repro_row(res, run->tag, m->experts, m->experts, run->policy, run->policy,
                  repro_net_label(run->net));
        repro_row_set(res, "step_ms", repro_step_ms(run));
        repro_row_set(res, "a2a_ms", repro_a2a_ms(run));
        repro_row_set(res, "paper_a2a_ms", inf ? m->infer_ms : m->train_ms);
        repro_row_set(res, "a2a_share", repro_a2a_ms(run) / repro_step_ms(run));
        repro_row_set(res, "paper_a2a_share", inf ? m->infer_share : m->train_share);
        MsMetrics mm;
        ms_result_mean(run->result, &mm);
        repro_row_set(res, "moe_a2a_share", mm.a2a_fwd_us / run->moe_fwd_us);
        if (!inf && m->experts == 16 && m->layers == 12) {
            repro_row_set(res, "paper_moe_a2a_share", 0.749);
        }
        if (!inf && run->slowdowns->len) {
            GArray *s = run->slowdowns;
            g_array_sort(s, repro_compare_double);
            repro_row_set(res, "a2a_backward_slowdown_p50",
                          g_array_index(s, double, (s->len - 1) / 2));
            repro_row_set(res, "a2a_backward_slowdown_max", g_array_index(s, double, s->len - 1));
            if (m->experts == 16) {
                repro_row_set(res, "paper_a2a_backward_slowdown_p50", 1.83);
                repro_row_set(res, "paper_a2a_backward_slowdown_max", 4.14);
            }
        }
        repro_row_set(res, "params_m", run->params / 1e6);
        repro_row_set(res, "paper_params_m", m->params_m);
    }
    repro_setup(res,
                "DeepSpeed-MoE (`deepspeed`, hierarchical all-to-all; inference without "
                "dropping) on Transformer-XL of 12, 24 and 36 layers with 4 experts on 4 GPUs "
                "and 16 on 16, training and inference at the same batch (%u tokens per GPU), "
                "%u steps or batches each",
                REPRO_LINA_TOKENS, steps);
    repro_setup(res, "a2a_share: the step's share with an all-to-all in flight (per GPU); "
                     "moe_a2a_share: all-to-all time over the MoE blocks' forward time; slowdown: "
                     "backward all-to-alls overlapping an allreduce, time in the run over time "
                     "alone (the paper: median above 1.83x, at worst 4.14x)");
    repro_chart(res, "a2a", "a2a_ms", "all-to-all time per step (ms)");
    return TRUE;
}
