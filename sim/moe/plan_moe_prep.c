/* plan_moe_prep: what the MoE parts of a plan need before any op is made (plan_private.h):
 * each MoE layer's placement (static, expert-parallel, shadowed or Lina's per-layer layout), its
 * traffic under the capacity limit, the policy's per-layer decisions, and the checks on size and
 * DeepEP's needs. */
#include "plan_private.h"

#include <math.h>

#include "sim/net/collective.h"

const MsLayerPlacement *
plan_moe_layer_placement(const Plan *p, guint m)
{
    return p->cfg->layers && p->mode == MS_PLAN_INFER ? &p->cfg->layers[m] : NULL;
}

const MsPlacement *
plan_moe_placement(const Plan *p, guint m)
{
    const MsLayerPlacement *lp = plan_moe_layer_placement(p, m);
    if (lp) {
        return lp->placement;
    }
    return p->shadowed && p->shadowed[m] ? p->shadowed[m] : p->base;
}

const gboolean *
plan_moe_shadow(const Plan *p, guint m)
{
    return p->mode == MS_PLAN_TRAIN && p->cfg->shadow ? p->cfg->shadow + (gsize)m * p->spec->experts
                                                      : NULL;
}

/* The training layout of layer m with its shadowed experts on every rank of each group. */
static MsPlacement *
shadow_placement(const Plan *p, guint m)
{
    const gboolean *sh = plan_moe_shadow(p, m);
    guint E = p->spec->experts, size = ms_placement_group_size(p->base);
    gboolean any = FALSE;
    for (guint e = 0; sh && e < E; e++) {
        any = any || sh[e];
    }
    if (!any) {
        return NULL;
    }
    MsPlacement *pl = ms_placement_copy(p->base);
    ms_placement_set_local_first(pl, TRUE);
    for (guint g = 0; g < ms_placement_n_groups(pl); g++) {
        for (guint e = 0; e < E; e++) {
            for (guint r = g * size; sh[e] && r < (g + 1) * size; r++) {
                if (!ms_placement_hosts(pl, r, e)) {
                    ms_placement_add(pl, g, e, r);
                }
            }
        }
    }
    return pl;
}

static gboolean
check_layers(Plan *p)
{
    const MsPlanConfig *cfg = p->cfg;
    if (cfg->n_layers != p->spec->n_moe) {
        g_set_error(p->error, MS_PLAN_ERROR, MS_PLAN_ERROR_INVALID,
                    "%u inference placements for %u MoE layers", cfg->n_layers, p->spec->n_moe);
        return FALSE;
    }
    for (guint m = 0; m < cfg->n_layers; m++) {
        const MsLayerPlacement *lp = &cfg->layers[m];
        if ((lp->loads_p1 || lp->loads_p2) &&
            (lp->moves_p1 || lp->moves_p2 || !(lp->host_bw > 0 && isfinite(lp->host_bw)))) {
            g_set_error(p->error, MS_PLAN_ERROR, MS_PLAN_ERROR_INVALID,
                        "MoE layer %u loads experts from host memory %s", m,
                        lp->host_bw > 0 ? "and moves them between GPUs"
                                        : "without a host link bandwidth");
            return FALSE;
        }
        const MsPlacement *pl = cfg->layers[m].placement;
        if (pl == NULL || ms_placement_n_ranks(pl) != p->n ||
            ms_placement_n_experts(pl) != p->spec->experts || ms_placement_group_size(pl) != p->n ||
            !ms_placement_complete(pl)) {
            g_set_error(p->error, MS_PLAN_ERROR, MS_PLAN_ERROR_INVALID,
                        "the inference placement of MoE layer %u does not give each of the %u "
                        "experts a replica on the %u GPUs",
                        m, p->spec->experts, p->n);
            return FALSE;
        }
    }
    return TRUE;
}

guint64
plan_moe_wire_bytes(const Plan *p, guint64 tokens)
{
    return (guint64)llround((double)tokens * (double)p->token_bytes * p->cfg->compress_ratio);
}

/* The policy's decisions for MoE layer m (its hook, or whole all-to-alls), checked. */
static gboolean
layer_plan(Plan *p, guint m)
{
    MsMoeLayer layer = {.model = p->model,
                        .topo = p->topo,
                        .mode = p->mode,
                        .layer = ms_model_moe_layer(p->model, m),
                        .moe = m,
                        .traffic = p->traffic[m]};
    for (guint r = 0; r < p->n; r++) {
        layer.most_wire_bytes =
            MAX(layer.most_wire_bytes,
                plan_moe_wire_bytes(p, ms_traffic_sent_off_rank(p->traffic[m], r)));
    }
    MsMoeLayerPlan *lp = &p->layer_plans[m];
    *lp = (MsMoeLayerPlan){.chunks = 1, .order = MS_PLAN_ORDER_CHUNKED};
    if (p->cfg->moe_layer) {
        p->cfg->moe_layer(p->cfg->hook_data, &layer, lp);
    }
    if (lp->chunks > MS_PLAN_MAX_CHUNKS && lp->chunk_bytes > 0) {
        g_set_error(p->error, MS_PLAN_ERROR, MS_PLAN_ERROR_LIMIT,
                    "all-to-all chunks of %" G_GUINT64_FORMAT " bytes cut layer %u's all-to-all "
                    "into %" G_GUINT64_FORMAT " chunks (at most %u): use a larger chunk",
                    lp->chunk_bytes, layer.layer, lp->chunks, MS_PLAN_MAX_CHUNKS);
        return FALSE;
    }
    guint size = ms_placement_group_size(ms_traffic_placement(p->traffic[m]));
    if (lp->peers > 0 && (size % lp->peers != 0 || lp->chunks != size / lp->peers)) {
        g_set_error(p->error, MS_PLAN_ERROR, MS_PLAN_ERROR_INVALID,
                    "peer groups of %u ranks cut layer %u's expert-parallel group of %u into "
                    "%" G_GUINT64_FORMAT " chunks: the groups must divide it, one chunk per group",
                    lp->peers, layer.layer, size, lp->chunks);
        return FALSE;
    }
    if (lp->chunks == 0 || lp->chunks > MS_PLAN_MAX_CHUNKS) {
        g_set_error(p->error, MS_PLAN_ERROR, MS_PLAN_ERROR_LIMIT,
                    "the policy cut layer %u's all-to-all into %" G_GUINT64_FORMAT
                    " chunks (1 to %u)",
                    layer.layer, lp->chunks, MS_PLAN_MAX_CHUNKS);
        return FALSE;
    }
    return TRUE;
}

/* About how many ops a schedule of n ranks holds: per rank and direction three per layer, two
 * more, and moe_ops for the MoE layers' all-to-alls and experts; in training each direction, and
 * the gradients' allreduces (one per bucket, and one per ar_chunk bytes when the allreduce is
 * chunked, 0: not) twice per rank. */
static guint64
ops_estimate(const MsModel *model, guint n, gboolean train, guint64 moe_ops, guint64 ar_chunk)
{
    const MsModelSpec *s = ms_model_spec(model);
    guint64 per_rank = (3 * (guint64)s->layers + 2 + moe_ops) * (train ? 2 : 1);
    if (!train) {
        return per_rank * n;
    }
    guint64 params = 0;
    for (guint l = 0; l < s->layers; l++) {
        const MsModel *v = ms_model_layer(model, l);
        params += ms_model_attention_params(v) + ms_model_dense_ffn_params(v) +
                  ms_model_expert_params(v) + ms_model_shared_params(v);
    }
    guint64 bytes = params * ms_dtype_bytes(s->dtype), grads = bytes / s->grad_bucket + 2;
    guint64 ar = ar_chunk ? bytes / ar_chunk + grads : grads;
    return per_rank * n + 2 * ar * n;
}

/* An MoE layer's ops per rank and direction, cut into chunks: five, and three per chunk (seven
 * when the all-to-all is compressed). */
static guint64
moe_layer_ops(guint64 chunks, gboolean compressed)
{
    return 5 + chunks * (compressed ? 7 : 3);
}

gboolean
ms_plan_check_ops(const MsModel *model, guint ranks, MsPlanMode mode, GError **error)
{
    guint n_moe = ms_model_spec(model)->n_moe;
    guint64 ops =
        ops_estimate(model, ranks, mode == MS_PLAN_TRAIN, n_moe * moe_layer_ops(1, FALSE), 0);
    if (ops > MS_PLAN_MAX_OPS) {
        g_set_error(error, MS_PLAN_ERROR, MS_PLAN_ERROR_LIMIT,
                    "a %s schedule of %s on %u ranks would hold at least %" G_GUINT64_FORMAT
                    " ops (at most %u), even with one chunk per all-to-all: use fewer layers or "
                    "fewer GPUs",
                    ms_plan_mode_name(mode), ms_model_spec(model)->name, ranks, ops,
                    MS_PLAN_MAX_OPS);
        return FALSE;
    }
    return TRUE;
}

/* A first count of the ops, refused beyond MS_PLAN_MAX_OPS before any is made. */
static gboolean
check_size(Plan *p)
{
    gboolean comp = p->cfg->compress_ratio != 1.0;
    guint64 moe_ops = 0;
    for (guint m = 0; m < p->spec->n_moe; m++) {
        moe_ops += moe_layer_ops(p->layer_plans[m].chunks, comp);
    }
    guint64 ops =
        ops_estimate(p->root, p->n, p->mode == MS_PLAN_TRAIN, moe_ops, p->cfg->allreduce_chunk);
    if (ops > MS_PLAN_MAX_OPS) {
        g_set_error(p->error, MS_PLAN_ERROR, MS_PLAN_ERROR_LIMIT,
                    "the schedule would hold about %" G_GUINT64_FORMAT " ops (at most %u): use "
                    "larger chunks, fewer layers or fewer GPUs",
                    ops, MS_PLAN_MAX_OPS);
        return FALSE;
    }
    return TRUE;
}

gboolean
plan_moe_deepep(const Plan *p)
{
    return p->cfg->a2a_algo == MS_COLL_ALGO_DEEPEP;
}

/* DeepEP counts each token once per GPU and node: that takes token paths, routed (not padded)
 * tokens, and one home per expert in each group. */
static gboolean
check_deepep(Plan *p)
{
    if (!plan_moe_deepep(p)) {
        return TRUE;
    }
    const char *why = NULL;
    if (!ms_routing_has_paths(p->routing)) {
        why = "needs token paths (a trace of token records, or gen:records=tokens): it sends a "
              "token once per GPU and node, which counts per expert cannot tell";
    } else if (p->spec->capacity_factor > 0) {
        why = "sends the routed tokens (dropless), but the model pads to a capacity";
    }
    for (guint m = 0; why == NULL && m < p->spec->n_moe; m++) {
        const MsPlacement *pl = plan_moe_placement(p, m);
        for (guint g = 0; why == NULL && g < ms_placement_n_groups(pl); g++) {
            for (guint e = 0; e < p->spec->experts; e++) {
                guint k = 0;
                ms_placement_replicas(pl, g, e, &k);
                if (k != 1) {
                    why = "needs one home per expert, but the placement replicates experts";
                    break;
                }
            }
        }
    }
    if (why) {
        g_set_error(p->error, MS_PLAN_ERROR, MS_PLAN_ERROR_INVALID, "a2a=deepep %s", why);
        return FALSE;
    }
    p->node_of = g_new(guint, p->n);
    for (guint r = 0; r < p->n; r++) {
        p->node_of[r] = ms_topology_gpu_node(p->topo, r);
    }
    return TRUE;
}

/* The largest (rank, expert) count of a layer: what DeepSpeed all-reduces (max) for its
 * capacity when it drops nothing. */
static guint64
largest_count(const MsRouting *routing, guint moe)
{
    const MsTraceHeader *h = ms_routing_header(routing);
    guint64 most = 0;
    for (guint r = 0; r < h->ranks; r++) {
        const guint32 *counts = ms_routing_counts(routing, moe, r);
        for (guint e = 0; e < h->experts; e++) {
            most = MAX(most, counts[e]);
        }
    }
    return most;
}

guint64
ms_plan_capacity(const MsPlanConfig *cfg, const MsModel *model, const MsRouting *routing, guint moe,
                 guint64 tokens, guint top_k)
{
    guint E = ms_model_spec(model)->experts;
    switch (cfg->capacity) {
    case MS_CAPACITY_MODEL:
        return ms_model_capacity(model, tokens, top_k);
    case MS_CAPACITY_DEEPSPEED: {
        /* deepspeed/moe/sharded_moe.py, _capacity: top-2 gating passes capacity_factor x 2. */
        double c = ceil((double)tokens / E * top_k * cfg->capacity_factor);
        return MAX((guint64)c, (guint64)MAX(cfg->capacity_min, 1));
    }
    case MS_CAPACITY_MAX:
        return MAX(largest_count(routing, moe), 1);
    case MS_CAPACITY_NONE:
        return 0;
    }
    g_return_val_if_reached(0);
}

gboolean
plan_moe_prepare(Plan *p)
{
    guint E = p->spec->experts, n_moe = p->spec->n_moe;
    if (p->mode == MS_PLAN_INFER && p->cfg->layers && !check_layers(p)) {
        return FALSE;
    }
    if (p->mode == MS_PLAN_TRAIN && p->cfg->shadow && p->cfg->n_shadow_layers != n_moe) {
        g_set_error(p->error, MS_PLAN_ERROR, MS_PLAN_ERROR_INVALID,
                    "shadowed experts given for %u MoE layers, the model has %u",
                    p->cfg->n_shadow_layers, n_moe);
        return FALSE;
    }
    p->base = p->mode == MS_PLAN_TRAIN ? ms_placement_new_ep(p->n, E, p->ep)
                                       : ms_placement_new_static(p->n, E);
    if (plan_moe_shadow(p, 0)) {
        p->shadowed = g_new0(MsPlacement *, n_moe);
        for (guint m = 0; m < n_moe; m++) {
            p->shadowed[m] = shadow_placement(p, m);
        }
    }
    g_autofree guint64 *caps = g_new(guint64, p->n);
    p->traffic = g_new0(MsTraffic *, n_moe);
    p->layer_plans = g_new0(MsMoeLayerPlan, n_moe);
    for (guint m = 0; m < n_moe; m++) {
        guint layer = ms_model_moe_layer(p->root, m);
        plan_enter(p, layer);
        gboolean capped = FALSE;
        for (guint r = 0; r < p->n; r++) {
            caps[r] = ms_plan_capacity(p->cfg, p->model, p->routing, m,
                                       plan_layer_tokens(p, layer, r), p->top_k);
            capped = capped || caps[r] > 0;
        }
        p->traffic[m] =
            ms_traffic_new(p->routing, m, plan_moe_placement(p, m), capped ? caps : NULL);
        p->dropped += ms_traffic_dropped(p->traffic[m]);
        if (!layer_plan(p, m)) {
            return FALSE;
        }
    }
    return check_deepep(p) && check_size(p);
}
