/* fastermoe: FasterMoE (He et al., "FasterMoE: Modeling and Optimizing Training of Large-Scale
 * Dynamic Pre-Trained Models", PPoPP'22), one of ScheMoE's baselines, as its public code (the
 * fastmoe repository: fmoe/fastermoe/shadow_policy.py, cuda/fastermoe/smart_schedule.h,
 * fmoe/distributed.py) runs an MoE layer:
 * - dropless routing: tokens are exchanged as routed (no capacity), E / n experts on every
 *   worker (smart scheduling's code asserts one; moesim's group-wise exchange takes several);
 * - dynamic shadowing: per layer, experts sorted by load are shadowed one by one while the
 *   paper's latency model improves: 3 x comp x B + 4 x feature x B (+ the shadows' model
 *   transfers), B the largest remaining expert load; a shadowed expert's parameters are broadcast
 *   to every worker, its tokens computed where they are, its gradients reduced back;
 * - smart scheduling: the group-wise exchange, workers in groups of `group` (pipeline_gran,
 *   FMOE_FASTER_GROUP_SIZE, default 4); step s exchanges with the group s further on; every
 *   step's exchange is issued first, then per step the experts and the way back;
 * - dense gradients: DistributedGroupedDataParallel's allreduce_params, coalesced and allreduced
 *   once backward is done.
 * docs/policies.md. */
#include "policy.h"

#include <math.h>
#include <string.h>

static const MsParamSpec params[] = {
    {"shadow", MS_PARAM_BOOL, "true", 0, 0, NULL,
     "dynamic shadowing of popular experts (FMOE_FASTER_SHADOW_ENABLE)"},
    {"smart", MS_PARAM_BOOL, "true", 0, 0, NULL,
     "smart scheduling: the group-wise exchange pipelined with the experts"},
    {"group", MS_PARAM_UINT, "4", 1, 65536, NULL,
     "workers per group of the group-wise exchange (FMOE_FASTER_GROUP_SIZE, default 4)"},
    {"net_bw", MS_PARAM_DOUBLE, "0", 0, 1e6, NULL,
     "shadowing model's network bandwidth in GB/s (FMOE_FASTER_GLBPLC_NETBW); 0 = each GPU's "
     "share of its node's NICs"},
    {"gemm_tflops", MS_PARAM_DOUBLE, "0", 0, 1e6, NULL,
     "shadowing model's GEMM throughput in TFLOPS (FMOE_FASTER_GLBPLC_GPUTP); 0 = the GPU's "
     "peak"},
    {NULL},
};

typedef struct {
    guint expert;
    guint64 load;
} Load;

static int
by_load(const void *a, const void *b)
{
    const Load *x = a, *y = b;
    if (x->load != y->load) {
        return x->load > y->load ? -1 : 1;
    }
    return x->expert < y->expert ? -1 : x->expert > y->expert;
}

/* shadow_policy.py's global_policy for one layer: shadows the most loaded experts while the
 * modelled latency falls. Loads are per expert, summed over the sources (the code sums the
 * other axis, each worker's tokens, which are equal for equal batches and never shadow: the
 * paper's intent is taken). Returns how many experts it shadowed. */
static guint
shadow_layer(const MsModel *model, const MsRouting *routing, guint moe, double net_bw, double gemm,
             gboolean *out)
{
    const MsModelSpec *s = ms_model_spec(model);
    const MsTraceHeader *h = ms_routing_header(routing);
    g_autofree Load *loads = g_new0(Load, s->experts);
    for (guint e = 0; e < s->experts; e++) {
        loads[e].expert = e;
    }
    for (guint r = 0; r < h->ranks; r++) {
        const guint32 *counts = ms_routing_counts(routing, moe, r);
        for (guint e = 0; e < s->experts; e++) {
            loads[e].load += counts[e];
        }
    }
    qsort(loads, s->experts, sizeof(Load), by_load);
    double d = (double)s->d_model, alpha_h2 = (double)s->d_ffn * d, size = ms_dtype_bytes(s->dtype);
    double feature = d * size / net_bw, model_time = 2 * alpha_h2 * size / net_bw;
    double comp = 4 * alpha_h2 / gemm;
    double best = 3 * comp * (double)loads[0].load + 4 * feature * (double)loads[0].load;
    double shadow_time = 0;
    guint shadowed = 0;
    for (guint i = 0; i + 1 < s->experts; i++) {
        double next = (double)loads[i + 1].load;
        shadow_time += model_time;
        double t = 3 * comp * next + 4 * feature * next + shadow_time;
        if (!(t < best)) {
            break;
        }
        best = t;
        out[loads[i].expert] = TRUE;
        shadowed++;
    }
    return shadowed;
}

static gboolean
configure(const MsPolicy *policy, const MsPolicyInput *in, MsPlanConfig *cfg, GError **error)
{
    const MsModelSpec *s = ms_model_spec(in->model);
    guint n = ms_topology_n_gpus(in->topo);
    if (s->experts % n != 0) {
        g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_INPUT,
                    "policy fastermoe puts the same number of experts on every GPU: the model's %u "
                    "experts do not divide over %u GPUs",
                    s->experts, n);
        return FALSE;
    }
    cfg->ep = n;
    cfg->capacity = MS_CAPACITY_NONE;
    cfg->split_allreduce = TRUE;
    cfg->grad_bucket = G_MAXUINT64;
    if (ms_policy_get_bool(policy, "shadow")) {
        double net = ms_policy_get_double(policy, "net_bw") * 1e9;
        double gemm = ms_policy_get_double(policy, "gemm_tflops") * 1e12;
        net = net > 0 ? net : ms_topology_injection_bandwidth(in->topo, 0);
        gemm = gemm > 0 ? gemm : ms_topology_gpu_spec(in->topo, 0)->peak_flops;
        cfg->shadow = g_new0(gboolean, (gsize)s->n_moe * s->experts);
        cfg->n_shadow_layers = s->n_moe;
        GString *counts = g_string_new(NULL);
        for (guint m = 0; m < s->n_moe; m++) {
            guint k = shadow_layer(in->model, in->routing, m, net, gemm,
                                   cfg->shadow + (gsize)m * s->experts);
            g_string_append_printf(counts, "%s%u", m ? "," : "", k);
        }
        ms_plan_config_add_meta(cfg, "fastermoe.shadowed", counts->str);
        g_string_free(counts, TRUE);
    }
    return TRUE;
}

/* Smart scheduling: one chunk per group of workers, when the groups divide the workers. */
static void
moe_layer(const MsPolicy *policy, const MsMoeLayer *layer, MsMoeLayerPlan *out)
{
    guint n = ms_topology_n_gpus(layer->topo);
    guint group = MIN((guint)ms_policy_get_uint(policy, "group"), n);
    if (!ms_policy_get_bool(policy, "smart") || n % group != 0 || n / group < 2) {
        return;
    }
    out->peers = group;
    out->chunks = n / group;
    out->pipeline = TRUE;
    out->order = MS_PLAN_ORDER_OPTSCHE;
}

const MsPolicyClass ms_fastermoe_policy = {
    .name = "fastermoe",
    .summary = "FasterMoE: dynamic shadowing of popular experts, smart scheduling of the "
               "group-wise exchange",
    .params = params,
    .modes = MS_POLICY_MODE(MS_PLAN_TRAIN),
    .rules = {MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE},
    .configure = configure,
    .moe_layer = moe_layer,
};
