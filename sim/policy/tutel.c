/* tutel: Tutel (Hwang et al., "Tutel: Adaptive Mixture-of-Experts at Scale", MLSys'23), one of
 * ScheMoE's baselines, as its public code runs an MoE layer (tutel/impls/moe_layer.py,
 * overlap.py, communicate.py):
 * - gating: capacity top_k x floor(capacity_factor x ceil(T / E)) per (rank, expert) buffer
 *   (the model file's rule, ms_model_capacity); capacity_factor 0 pads every buffer to the
 *   largest count over the ranks and drops nothing (Tutel's dynamic capacity);
 * - 2D-hierarchical all-to-all (use_2dh): intra-node, layout copy, inter-node;
 * - pipelining (a2a_ffn_overlap_forward): the dispatched buffer cut into r chunks along the
 *   capacity, every chunk's dispatch issued first, then per chunk the experts and its combine;
 * - adaptive degree: Tutel picks r per layer at run time from measured iteration times; moesim
 *   picks it per MoE layer from its estimates (the compute model and Lina's all-to-all estimate)
 *   among 1, 2, 4 and 8, as the fastest of the pipeline those estimates give.
 * Dense gradients are allreduced beside the all-to-alls, as PyTorch DDP does. docs/policies.md. */
#include "policy.h"

#include <string.h>

#include "lina.h"
#include "sim/compute.h"
#include "sim/net/collective.h"

static const guint candidates[] = {1, 2, 4, 8};

static const MsParamSpec params[] = {
    {"r", MS_PARAM_UINT, "0", 0, 64, NULL,
     "pipelining degree of every MoE layer; 0 = adaptive (1, 2, 4 or 8, per layer)"},
    {"use_2dh", MS_PARAM_BOOL, "true", 0, 0, NULL,
     "2D-hierarchical all-to-all (a2a=2dh) unless a2a is given"},
    {NULL},
};

/* The section Tutel runs with r chunks of all-to-all time a and expert time c each: the
 * dispatches back to back, each chunk's experts once its dispatch and the previous experts are
 * done, each combine once its experts are done and the all-to-all stream is free. */
static double
section_time(double a, double c, guint r)
{
    double comm = r * a, comp = 0;
    for (guint i = 0; i < r; i++) {
        comp = MAX(comp, (i + 1) * a) + c;
        comm = MAX(comm, comp) + a;
    }
    return comm;
}

/* The degree among the candidates whose estimated layer time is shortest (the smaller on ties). */
static guint
adaptive_degree(const MsModel *model, const MsTopology *topo, const MsTraffic *t, MsPlanMode mode)
{
    const MsModelSpec *s = ms_model_spec(model);
    guint best = 1;
    double best_s = G_MAXDOUBLE;
    for (guint i = 0; i < G_N_ELEMENTS(candidates); i++) {
        guint r = candidates[i];
        double a = ms_lina_a2a_estimate(topo, t, ms_model_token_bytes(model), r);
        double c = ms_lina_compute_estimate(model, topo, t, r);
        double time = section_time(a, c, r);
        if (mode == MS_PLAN_TRAIN) {
            time += section_time(a, s->backward_factor * c, r);
        }
        if (time < best_s) {
            best_s = time;
            best = r;
        }
    }
    return best;
}

static guint
degree(const MsPolicy *policy, const MsModel *model, const MsTopology *topo, const MsTraffic *t,
       MsPlanMode mode)
{
    guint r = (guint)ms_policy_get_uint(policy, "r");
    return r ? r : adaptive_degree(model, topo, t, mode);
}

/* The degrees the layers will get, for the schedule's metadata (the hook decides the same from
 * the same traffic). */
static char *
degrees(const MsPolicy *policy, const MsPolicyInput *in, const MsPlanConfig *cfg, guint ep)
{
    const MsModelSpec *s = ms_model_spec(in->model);
    guint n = ms_topology_n_gpus(in->topo);
    guint top_k = in->mode == MS_PLAN_TRAIN ? s->top_k : s->top_k_infer;
    g_autoptr(MsPlacement) pl = in->mode == MS_PLAN_TRAIN ? ms_placement_new_ep(n, s->experts, ep)
                                                          : ms_placement_new_static(n, s->experts);
    g_autofree guint64 *caps = g_new(guint64, n);
    GString *out = g_string_new(NULL);
    for (guint m = 0; m < s->n_moe; m++) {
        gboolean capped = FALSE;
        for (guint r = 0; r < n; r++) {
            caps[r] = ms_plan_capacity(cfg, in->model, in->routing, m,
                                       ms_routing_rank_tokens(in->routing, r), top_k);
            capped = capped || caps[r] > 0;
        }
        g_autoptr(MsTraffic) t = ms_traffic_new(in->routing, m, pl, capped ? caps : NULL);
        g_string_append_printf(out, "%s%u", m ? "," : "",
                               degree(policy, in->model, in->topo, t, in->mode));
    }
    return g_string_free(out, FALSE);
}

static gboolean
configure(const MsPolicy *policy, const MsPolicyInput *in, MsPlanConfig *cfg, GError **error)
{
    if (ms_policy_given(policy, "a2a") && ms_policy_given(policy, "use_2dh")) {
        g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE,
                    "policy tutel: give either a2a or use_2dh, not both");
        return FALSE;
    }
    if (ms_policy_get_bool(policy, "use_2dh") && !ms_policy_given(policy, "a2a")) {
        cfg->a2a_algo = MS_COLL_ALGO_2DH;
    }
    cfg->split_allreduce = TRUE;
    /* Tutel's capacity_factor 0: every buffer as large as the largest count, nothing dropped. */
    cfg->capacity =
        ms_model_spec(in->model)->capacity_factor > 0 ? MS_CAPACITY_MODEL : MS_CAPACITY_MAX;
    guint ep = 0;
    if (!ms_model_resolve_ep(in->model, ms_topology_n_gpus(in->topo), &ep, error)) {
        return FALSE;
    }
    g_autofree char *r = degrees(policy, in, cfg, ep);
    ms_plan_config_add_meta(cfg, "tutel.r", r);
    return TRUE;
}

static void
moe_layer(const MsPolicy *policy, const MsMoeLayer *layer, MsMoeLayerPlan *out)
{
    out->chunks = degree(policy, layer->model, layer->topo, layer->traffic, layer->mode);
    out->pipeline = TRUE;
    /* Every dispatch first, then chunk by chunk the experts and the combine. */
    out->order = MS_PLAN_ORDER_OPTSCHE;
}

const MsPolicyClass ms_tutel_policy = {
    .name = "tutel",
    .summary = "Tutel: adaptive pipelining degree per layer, 2D-hierarchical all-to-all",
    .params = params,
    .modes = MS_POLICY_ALL_MODES,
    .rules = {MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE},
    .configure = configure,
    .moe_layer = moe_layer,
};
