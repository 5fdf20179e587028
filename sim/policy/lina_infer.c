/* lina_infer: the replicate-and-pack placement and the two phases of Lina's inference
 * scheduling, as plan configuration. Loads are expected token-expert assignments (doubles);
 * weights are bytes. The popularity estimate is path_profile.c's. */
#include "lina_infer.h"

#include <math.h>
#include <string.h>

/* --- placement --- */

static double
sum(const double *load, guint experts)
{
    double total = 0;
    for (guint e = 0; e < experts; e++) {
        total += load[e];
    }
    return total;
}

gboolean
ms_lina_same_popular(const double *a, const double *b, guint experts, guint n_ranks)
{
    double ta = sum(a, experts) / n_ranks, tb = sum(b, experts) / n_ranks;
    for (guint e = 0; e < experts; e++) {
        if ((a[e] > ta) != (b[e] > tb)) {
            return FALSE;
        }
    }
    return TRUE;
}

guint64 *
ms_lina_moves(const MsPlacement *to, const MsPlacement *home, const MsPlacement *also,
              guint64 expert_bytes, guint64 *total)
{
    guint n = ms_placement_n_ranks(to), E = ms_placement_n_experts(to);
    g_autofree guint64 *m = g_new0(guint64, (gsize)n * n);
    *total = 0;
    for (guint e = 0; e < E; e++) {
        guint n_to = 0, n_home = 0;
        const guint *dst = ms_placement_replicas(to, 0, e, &n_to);
        const guint *src = ms_placement_replicas(home, 0, e, &n_home);
        for (guint k = 0; k < n_to; k++) {
            guint d = dst[k];
            if (ms_placement_hosts(home, d, e) || (also && ms_placement_hosts(also, d, e))) {
                continue;
            }
            m[(gsize)src[0] * n + d] += expert_bytes;
            *total += expert_bytes;
        }
    }
    return *total ? g_steal_pointer(&m) : NULL;
}

/* --- the policy in inference mode --- */

typedef struct {
    guint replans;
    guint64 weight_bytes;
    double error_sum;
} Report;

/* Whether replicas' weights must cross the network: weights=move, or weights=auto when the whole
 * model (every expert of every layer, and the dense part) does not fit half of a GPU's memory
 * (the other half is left to activations and the KV cache). */
static gboolean
weights_move(const MsPolicy *policy, const MsPolicyInput *in)
{
    const char *w = ms_policy_get_choice(policy, "weights");
    if (strcmp(w, "auto") != 0) {
        return strcmp(w, "move") == 0;
    }
    const MsModelSpec *s = ms_model_spec(in->model);
    double params = (double)s->layers * (double)ms_model_attention_params(in->model) +
                    (double)(s->layers - s->n_moe) * (double)ms_model_dense_ffn_params(in->model) +
                    (double)s->n_moe * ((double)ms_model_gate_params(in->model) +
                                        (double)s->experts * ms_model_expert_params(in->model)) +
                    (double)ms_model_head_params(in->model);
    double bytes = params * ms_dtype_bytes(s->dtype);
    return bytes > 0.5 * (double)ms_topology_gpu_spec(in->topo, 0)->memory_bytes;
}

static void
plan_layer(const MsPolicy *policy, const MsPolicyInput *in, guint m, const MsPlacement *home,
           MsLayerPlacement *lp, Report *rep)
{
    const MsModelSpec *s = ms_model_spec(in->model);
    guint E = s->experts, n = ms_routing_header(in->routing)->ranks;
    guint depth = (guint)ms_policy_get_uint(policy, "path");
    guint max_pack = (guint)ms_policy_get_uint(policy, "max_pack");
    gboolean move = weights_move(policy, in);
    guint64 eb = ms_model_expert_params(in->model) * ms_dtype_bytes(s->dtype), w = 0;
    g_autofree double *est = g_new(double, E);
    g_autofree double *real = g_new(double, E);
    ms_path_profile_estimate(in->profile, in->routing, m, depth, est);
    double diff = 0, sum = 0;
    for (guint e = 0; e < E; e++) {
        real[e] = (double)ms_routing_expert_load(in->routing, m, e);
        diff += fabs(est[e] - real[e]);
        sum += real[e];
    }
    rep->error_sum += sum > 0 ? diff / sum : 0;
    g_autoptr(MsPlacement) p1 = ms_lina_place(est, E, n, max_pack, home);
    g_autoptr(MsPlacement) p2 = ms_lina_place(real, E, n, max_pack, home);
    gboolean same = ms_lina_same_popular(est, real, E, n);
    guint64 tmax = 0;
    for (guint r = 0; r < n; r++) {
        tmax = MAX(tmax, ms_routing_rank_tokens(in->routing, r));
    }
    /* Phase 1 reads each token's path ids and writes the estimate; phase 2 reads the gate's
     * choices and the load vector (4-byte ids, 8-byte loads). */
    lp->plan_bytes = (double)tmax * (depth + s->top_k_infer) * 4.0 + E * 8.0;
    lp->replan = TRUE;
    lp->replan_bytes = (double)tmax * s->top_k_infer * 4.0 + E * 8.0;
    if (move) {
        lp->moves_p1 = ms_lina_moves(p1, home, NULL, eb, &w);
        rep->weight_bytes += w;
        if (!same) {
            lp->moves_p2 = ms_lina_moves(p2, home, p1, eb, &w);
            rep->weight_bytes += w;
        }
    }
    rep->replans += !same;
    lp->placement = same ? g_steal_pointer(&p1) : g_steal_pointer(&p2);
}

gboolean
ms_lina_infer_configure(const MsPolicy *policy, const MsPolicyInput *in, MsPlanConfig *cfg,
                        GError **error)
{
    if (strcmp(ms_policy_get_choice(policy, "placement"), "static") == 0) {
        ms_plan_config_add_meta(cfg, "lina.placement", "static");
        return TRUE;
    }
    if (!ms_routing_has_paths(in->routing)) {
        g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_INPUT,
                    "policy lina: batch %" G_GUINT64_FORMAT " has count records only, but "
                    "Lina's inference estimate follows token paths (use a trace with token "
                    "records, or lina:placement=static)",
                    ms_routing_iteration(in->routing));
        return FALSE;
    }
    const MsModelSpec *s = ms_model_spec(in->model);
    guint n = ms_routing_header(in->routing)->ranks; /* the first GPUs (sim/rank_map.h) */
    g_autoptr(MsPlacement) home = ms_placement_new_static(n, s->experts);
    cfg->n_layers = s->n_moe;
    cfg->layers = g_new0(MsLayerPlacement, s->n_moe);
    Report rep = {0};
    for (guint m = 0; m < s->n_moe; m++) {
        plan_layer(policy, in, m, home, &cfg->layers[m], &rep);
    }
    char buf[64];
    ms_plan_config_add_meta(cfg, "lina.placement", "dynamic");
    g_snprintf(buf, sizeof buf, "%u", rep.replans);
    ms_plan_config_add_meta(cfg, "lina.replans", buf);
    g_snprintf(buf, sizeof buf, "%" G_GUINT64_FORMAT, rep.weight_bytes);
    ms_plan_config_add_meta(cfg, "lina.weight_bytes", buf);
    g_snprintf(buf, sizeof buf, "%.4f", rep.error_sum / s->n_moe);
    ms_plan_config_add_meta(cfg, "lina.estimate_error", buf);
    return TRUE;
}
