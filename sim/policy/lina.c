/* lina: the training scheduler's static part (partitioning, priorities, the imminent flags,
 * pipelining per MoE layer) and expert packing, decided with the compute model (sim/compute.h,
 * nominal GPU figures) and an all-to-all estimate from the topology. Inference is delegated to
 * lina_infer.c. Estimates are seconds and are used for decisions only; the simulation times what is
 * planned. */
#include "lina.h"

#include <math.h>
#include <string.h>

#include "lina_infer.h"
#include "priority.h"
#include "sim/compute.h"

/* Each GPU's fair share of its node's NICs (a max-flow per GPU: computed once per decision). */
static double *
injection(const MsTopology *topo)
{
    guint n = ms_topology_n_gpus(topo);
    double *inj = g_new(double, n);
    for (guint r = 0; r < n; r++) {
        inj[r] = ms_topology_injection_bandwidth(topo, r);
    }
    return inj;
}

static double
a2a_estimate(const MsTopology *topo, const double *inj, const MsTraffic *t, guint64 token_bytes,
             guint k)
{
    const MsPlacement *pl = ms_traffic_placement(t);
    guint size = ms_placement_group_size(pl), n = ms_placement_n_ranks(pl);
    double worst = 0;
    for (guint src = 0; src < n; src++) {
        guint first = src / size * size;
        double inter = 0, intra = 0, latency = 0;
        for (guint dst = first; dst < first + size; dst++) {
            guint64 tok = ms_traffic_tokens(t, src, dst);
            double bytes = (double)(tok / k + (tok % k ? 1 : 0)) * (double)token_bytes;
            if (dst == src || bytes == 0) {
                continue;
            }
            guint hops = 0;
            const guint32 *route = ms_topology_gpu_route(topo, src, dst, &hops, NULL);
            if (route == NULL) {
                continue;
            }
            latency = MAX(latency, ms_time_to_s(ms_topology_route_latency(topo, route, hops)));
            if (ms_topology_gpu_node(topo, src) != ms_topology_gpu_node(topo, dst)) {
                inter += bytes / inj[src];
            } else {
                intra += bytes / ms_topology_route_bandwidth(topo, route, hops);
            }
        }
        worst = MAX(worst, MAX(inter, intra) + latency);
    }
    return worst;
}

double
ms_lina_a2a_estimate(const MsTopology *topo, const MsTraffic *t, guint64 token_bytes, guint k)
{
    g_autofree double *inj = injection(topo);
    return a2a_estimate(topo, inj, t, token_bytes, k);
}

double
ms_lina_compute_estimate(const MsModel *model, const MsTopology *topo, const MsTraffic *t, guint k)
{
    const MsModelSpec *s = ms_model_spec(model);
    guint n = ms_placement_n_ranks(ms_traffic_placement(t));
    g_autofree guint64 *per = g_new(guint64, s->experts);
    double worst = 0;
    for (guint r = 0; r < n; r++) {
        guint64 tokens = ms_traffic_chunk_received(t, r, 0, k, per), bytes = 0;
        for (guint e = 0; e < s->experts; e++) {
            double fl = 0;
            guint64 by = 0;
            ms_compute_expert_ffn_cost(per[e], s->d_model, s->d_ffn, s->gated,
                                       ms_dtype_bytes(s->dtype), &fl, &by);
            bytes += by;
        }
        g_autoptr(MsComputeModel) cm = ms_compute_model_new(ms_topology_gpu_spec(topo, r), NULL);
        /* At the model's datatype's peak, as the engine prices it (a GPU without that peak
         * keeps the fp16 figure here; the engine refuses the run). */
        ms_compute_model_set_dtype(cm, s->dtype, NULL);
        double flops = (double)tokens * ms_model_expert_flops(model);
        worst = MAX(worst, ms_time_to_s(ms_compute_time(cm, flops, bytes, tokens)));
    }
    return worst;
}

/* Per-chunk compute and all-to-all estimates at expert-parallel degree ep, summed over the MoE
 * layers, with the chunk count the plan would use. */
static void
estimate_layout(const MsModel *model, const MsRouting *routing, const MsTopology *topo,
                const double *inj, guint64 a2a_chunk, guint ep, double *compute_s, double *a2a_s)
{
    const MsModelSpec *s = ms_model_spec(model);
    guint n = ms_routing_header(routing)->ranks; /* the first GPUs (sim/rank_map.h) */
    g_autoptr(MsPlacement) pl = ms_placement_new_ep(n, s->experts, ep);
    g_autofree guint64 *caps = g_new(guint64, n);
    *compute_s = *a2a_s = 0;
    for (guint m = 0; m < s->n_moe; m++) {
        /* Each layer in its layer group's dimensions and tokens. */
        const MsModel *v = ms_model_moe(model, m);
        for (guint r = 0; r < n; r++) {
            caps[r] = ms_model_capacity(v, ms_routing_layer_tokens(routing, m, r), s->top_k);
        }
        g_autoptr(MsTraffic) t = ms_traffic_new(routing, m, pl, caps);
        guint64 most = 0;
        for (guint r = 0; r < n; r++) {
            most = MAX(most, ms_traffic_sent_off_rank(t, r) * ms_model_token_bytes(v));
        }
        guint k = (guint)ms_plan_chunks_for(most, a2a_chunk);
        *compute_s += ms_lina_compute_estimate(v, topo, t, k);
        *a2a_s += a2a_estimate(topo, inj, t, ms_model_token_bytes(v), k);
    }
}

/* Whether the model's states fit one GPU when it holds experts / ep experts of every MoE layer. */
static gboolean
fits_memory(const MsModel *model, const MsTopology *topo, guint ep)
{
    const MsModelSpec *s = ms_model_spec(model);
    double dense = ms_model_dense_params(model);
    double experts = (double)(s->experts / ep) * ms_model_layer_expert_params(model);
    double bytes = MS_LINA_BYTES_PER_PARAM * (dense + experts);
    return bytes <= (double)ms_topology_gpu_spec(topo, 0)->memory_bytes;
}

gboolean
ms_lina_pack(const MsModel *model, const MsRouting *routing, const MsTopology *topo,
             guint64 a2a_chunk, guint factor, MsLinaPack *out, GError **error)
{
    guint n = ms_routing_header(routing)->ranks, ep = 0;
    if (!ms_model_resolve_ep(model, n, &ep, error)) {
        return FALSE;
    }
    out->factor = 1;
    out->why = "packing off (pack=1)";
    if (factor > 1) {
        if (ep % factor != 0) {
            g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE,
                        "policy lina: pack=%u does not divide the expert-parallel degree %u",
                        factor, ep);
            return FALSE;
        }
        ep /= factor;
        out->factor = factor;
        out->why = "forced";
    }
    g_autofree double *inj = injection(topo);
    estimate_layout(model, routing, topo, inj, a2a_chunk, ep, &out->compute_s, &out->a2a_s);
    while (factor == 0) {
        if (out->compute_s >= out->a2a_s) {
            out->why = "one chunk's expert compute outlasts its all-to-all";
            break;
        }
        if (ep % 2 != 0) {
            out->why = ep == 1 ? "all experts on every GPU" : "odd expert-parallel degree";
            break;
        }
        if (!fits_memory(model, topo, ep / 2)) {
            out->why = "twice the experts would not fit the GPU memory";
            break;
        }
        ep /= 2;
        out->factor *= 2;
        estimate_layout(model, routing, topo, inj, a2a_chunk, ep, &out->compute_s, &out->a2a_s);
    }
    out->ep = ep;
    return TRUE;
}

static const MsParamSpec params[] = {
    {"chunk", MS_PARAM_BYTES, "30MB", 65536, 1e12, NULL,
     "micro-op size: allreduce buckets (and all-to-alls, unless a2a_chunk) are cut into chunks "
     "of this size"},
    {"a2a_chunk", MS_PARAM_BYTES, "0B", 0, 1e12, NULL,
     "all-to-all micro-op size for pipelining expert compute (0B = chunk)"},
    {"pack", MS_PARAM_UINT, "0", 0, 65536, NULL,
     "expert packing: 0 = decide (double experts per GPU until compute outlasts all-to-all), "
     "1 = off, N = N times the experts per GPU"},
    {"path", MS_PARAM_UINT, "3", 1, 4, NULL,
     "inference: previous MoE layers of each token's path used to estimate popularity"},
    {"max_pack", MS_PARAM_UINT, "4", 1, 64, NULL,
     "inference: most unpopular experts packed on one GPU"},
    {"placement", MS_PARAM_CHOICE, "dynamic", 0, 0, "dynamic|static",
     "inference: dynamic (Lina's two-phase scheduling) or static (one copy of each expert)"},
    {"weights", MS_PARAM_CHOICE, "auto", 0, 0, "auto|move|resident|host",
     "inference: replicas' weights move over the network (move), every GPU holds every expert "
     "(resident), or the experts live in host memory behind a cache per GPU (host); auto = "
     "resident when the whole model fits half a GPU's memory, else host"},
    {"cache", MS_PARAM_BYTES, "0B", 0, 1e15, NULL,
     "inference, weights=host: expert weights each GPU keeps (LRU); 0B = half its memory less "
     "the dense weights"},
    {"host_bw", MS_PARAM_BANDWIDTH, "auto", 1e6, 1e13, NULL,
     "inference, weights=host: a GPU's link to host memory; auto = the topology's, else the "
     "GPU model's PCIe (docs/policies.md)"},
    {NULL},
};

/* The all-to-all micro-op size: a2a_chunk, or chunk when a2a_chunk is 0B. */
static guint64
a2a_micro_op(const MsPolicy *policy)
{
    guint64 a2a_chunk = ms_policy_get_bytes(policy, "a2a_chunk");
    return a2a_chunk ? a2a_chunk : ms_policy_get_bytes(policy, "chunk");
}

static gboolean
configure_train(const MsPolicy *policy, const MsPolicyInput *in, MsPlanConfig *cfg, GError **error)
{
    guint64 a2a_chunk = ms_policy_get_bytes(policy, "a2a_chunk");
    if (ms_policy_given(policy, "a2a_chunk") && a2a_chunk < 65536) {
        g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE,
                    "policy lina: a2a_chunk=%" G_GUINT64_FORMAT "B is below 64 KiB", a2a_chunk);
        return FALSE;
    }
    cfg->allreduce_chunk = ms_policy_get_bytes(policy, "chunk");
    cfg->comm_priority = ms_priority_comm;
    cfg->imminent_flags = TRUE;
    MsLinaPack pack;
    if (!ms_lina_pack(in->model, in->routing, in->topo, a2a_micro_op(policy),
                      (guint)ms_policy_get_uint(policy, "pack"), &pack, error)) {
        return FALSE;
    }
    cfg->ep = pack.ep;
    char buf[64];
    g_snprintf(buf, sizeof buf, "%u", pack.factor);
    ms_plan_config_add_meta(cfg, "lina.pack", buf);
    ms_plan_config_add_meta(cfg, "lina.pack_reason", pack.why);
    g_snprintf(buf, sizeof buf, "%.6g", pack.compute_s);
    ms_plan_config_add_meta(cfg, "lina.chunk_compute_s", buf);
    g_snprintf(buf, sizeof buf, "%.6g", pack.a2a_s);
    ms_plan_config_add_meta(cfg, "lina.chunk_a2a_s", buf);
    return TRUE;
}

static gboolean
configure(const MsPolicy *policy, const MsPolicyInput *in, MsPlanConfig *cfg, GError **error)
{
    if (in->mode == MS_PLAN_INFER) {
        cfg->comm_priority = ms_priority_comm;
        return ms_lina_infer_configure(policy, in, cfg, error);
    }
    return configure_train(policy, in, cfg, error);
}

/* Training: every MoE layer's all-to-all in micro-ops, expert compute pipelined per micro-op.
 * Inference: whole all-to-alls (the placement is what Lina plans there). */
static void
moe_layer(const MsPolicy *policy, const MsMoeLayer *layer, MsMoeLayerPlan *out)
{
    if (layer->mode == MS_PLAN_INFER) {
        return;
    }
    out->chunk_bytes = a2a_micro_op(policy);
    out->chunks = ms_plan_chunks_for(layer->most_wire_bytes, out->chunk_bytes);
    out->pipeline = TRUE;
}

/* Dynamic inference estimates each layer's popularity from `path` earlier layers of each token's
 * path, learned from earlier batches. */
static guint
path_history(const MsPolicy *policy, MsPlanMode mode)
{
    gboolean dynamic = strcmp(ms_policy_get_choice(policy, "placement"), "dynamic") == 0;
    return mode == MS_PLAN_INFER && dynamic ? (guint)ms_policy_get_uint(policy, "path") : 0;
}

const MsPolicyClass ms_lina_policy = {
    .name = "lina",
    .summary = "Lina: prioritised micro-ops, allreduce gate, pipelining, packing; dynamic "
               "inference placement",
    .params = params,
    .modes = MS_POLICY_ALL_MODES,
    .rules = {MS_DISPATCH_ORDER_PRIORITY, MS_ALLREDUCE_GATE_A2A},
    .configure = configure,
    .moe_layer = moe_layer,
    .path_history = path_history,
};
