/* plan: the step driver (forward through the layers, backward in reverse), the dense parts of
 * each layer (attention, dense FFN, output head) and the gradient buckets that turn backward's
 * gradients into allreduce collectives. Costs: flops and bytes per op, from model.h's formulas;
 * gradients are d_model-dtype elements. The MoE blocks are in plan_moe.c. */
#include "plan_private.h"

#include <string.h>

#include "sim/compute.h"
#include "sim/net/collective.h"

G_DEFINE_QUARK(ms_plan_error_quark, ms_plan_error)

static const char *const mode_names[] = {"train", "infer"};

const char *
ms_plan_mode_name(MsPlanMode mode)
{
    return mode < G_N_ELEMENTS(mode_names) ? mode_names[mode] : "?";
}

gboolean
ms_plan_mode_from_name(const char *name, MsPlanMode *out)
{
    for (guint i = 0; i < G_N_ELEMENTS(mode_names); i++) {
        if (g_strcmp0(name, mode_names[i]) == 0) {
            *out = i;
            return TRUE;
        }
    }
    return FALSE;
}

void
ms_plan_config_init(MsPlanConfig *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->policy = "fifo";
    cfg->spec = "fifo";
    cfg->rules = (MsDispatchRules){MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE};
    cfg->compress_ratio = 1.0;
    cfg->a2a_algo = MS_COLL_ALGO_DIRECT;
    cfg->allreduce_algo = MS_COLL_ALGO_RING;
}

void
ms_plan_config_clear(MsPlanConfig *cfg)
{
    for (guint m = 0; cfg->layers && m < cfg->n_layers; m++) {
        ms_placement_free(cfg->layers[m].placement);
        g_free(cfg->layers[m].moves_p1);
        g_free(cfg->layers[m].moves_p2);
        g_free(cfg->layers[m].loads_p1);
        g_free(cfg->layers[m].loads_p2);
    }
    g_free(cfg->layers);
    g_free(cfg->shadow);
    if (cfg->meta) {
        g_ptr_array_unref(cfg->meta);
    }
    /* Re-initialising allocates nothing, so a cleared configuration owns nothing. */
    ms_plan_config_init(cfg);
}

void
ms_plan_config_add_meta(MsPlanConfig *cfg, const char *key, const char *value)
{
    if (cfg->meta == NULL) {
        cfg->meta = g_ptr_array_new_with_free_func(g_free);
    }
    g_ptr_array_add(cfg->meta, g_strdup(key));
    g_ptr_array_add(cfg->meta, g_strdup(value));
}

guint64
ms_plan_chunks_for(guint64 most, guint64 chunk)
{
    return chunk ? MAX((most + chunk - 1) / chunk, 1) : 1;
}

static gboolean
mismatch(GError **error, const char *what, guint64 trace, const char *where, guint64 want)
{
    g_set_error(error, MS_PLAN_ERROR, MS_PLAN_ERROR_MISMATCH,
                "the trace has %" G_GUINT64_FORMAT " %s but %s has %" G_GUINT64_FORMAT, trace, what,
                where, want);
    return FALSE;
}

/* The first MoE layer of each layer group as text ("0 6"): the trace's, or the model's groups
 * that hold MoE layers. */
static char *
trace_groups_text(const MsTraceHeader *h)
{
    GString *s = g_string_new(NULL);
    for (guint32 g = 0; g < ms_trace_header_n_groups(h); g++) {
        g_string_append_printf(s, "%s%u", g ? " " : "", h->group_first[g]);
    }
    return g_string_free(s, FALSE);
}

/* A trace without groups routes the same tokens at every layer, which any model's groups take;
 * a trace with groups must split the MoE layers where the model's groups do. */
static gboolean
check_groups(const MsModel *model, const MsTraceHeader *h, GError **error)
{
    if (ms_trace_header_n_groups(h) <= 1) {
        return TRUE;
    }
    MsTraceHeader want;
    ms_trace_header_init(&want);
    for (guint g = 0; g < ms_model_n_groups(model); g++) {
        const MsModelGroup *gr = ms_model_group(model, g);
        if (gr->n_moe > 0 && want.n_groups < MS_TRACE_MAX_GROUPS) {
            want.group_first[want.n_groups++] = gr->first_moe;
        }
    }
    if (ms_trace_header_equal_groups(h, &want)) {
        return TRUE;
    }
    g_autofree char *have = trace_groups_text(h);
    g_autofree char *model_text = ms_model_n_groups(model) ? trace_groups_text(&want) : NULL;
    g_set_error(error, MS_PLAN_ERROR, MS_PLAN_ERROR_MISMATCH,
                "the trace's layer groups start at MoE layers %s but model %s %s%s "
                "(docs/models.md, \"Layer groups\")",
                have, ms_model_spec(model)->name,
                model_text ? "has groups with MoE layers starting at " : "has no layer groups",
                model_text ? model_text : "");
    return FALSE;
}

gboolean
ms_plan_check_routing(const MsModel *model, const MsRouting *routing, const MsTopology *topo,
                      MsPlanMode mode, GError **error)
{
    const MsTraceHeader *h = ms_routing_header(routing);
    const MsModelSpec *s = ms_model_spec(model);
    g_autofree char *m = g_strdup_printf("model %s", s->name);
    g_autofree char *t = g_strdup_printf("topology %s", ms_topology_name(topo));
    if (h->layers != s->n_moe) {
        return mismatch(error, "MoE layers", h->layers, m, s->n_moe);
    }
    if (h->experts != s->experts) {
        return mismatch(error, "experts", h->experts, m, s->experts);
    }
    if (!check_groups(model, h, error)) {
        return FALSE;
    }
    /* A routing of fewer ranks runs on the first GPUs (sim/rank_map.h): rank r is GPU r. */
    if (h->ranks > ms_topology_n_gpus(topo)) {
        g_autofree char *gpus = g_strdup_printf("%s (GPUs)", t);
        return mismatch(error, "ranks", h->ranks, gpus, ms_topology_n_gpus(topo));
    }
    MsFlops peak = 0;
    for (guint r = 0; r < ms_topology_n_gpus(topo); r++) {
        const MsGpuSpec *gpu = ms_topology_gpu_spec(topo, r);
        if (!ms_gpu_spec_peak(gpu, s->dtype, &peak)) {
            g_set_error(error, MS_PLAN_ERROR, MS_PLAN_ERROR_MISMATCH,
                        "model %s computes in %s but topology %s's GPU %s has no %s peak: add "
                        "peak_%s to its [gpu] group (docs/topology.md)",
                        s->name, ms_dtype_name(s->dtype), ms_topology_name(topo), gpu->model,
                        ms_dtype_name(s->dtype), ms_dtype_name(s->dtype));
            return FALSE;
        }
    }
    guint k = mode == MS_PLAN_TRAIN ? s->top_k : s->top_k_infer;
    if (h->top_k != k) {
        g_autofree char *which =
            g_strdup_printf("%s (%s in %s)", m, mode == MS_PLAN_TRAIN ? "top_k" : "top_k_infer",
                            mode == MS_PLAN_TRAIN ? "training" : "inference");
        return mismatch(error, "choices per token (top_k)", h->top_k, which, k);
    }
    return TRUE;
}

/* --- helpers shared with plan_moe.c --- */

void
plan_front_set(Plan *p, guint r, guint32 op)
{
    g_array_set_size(p->front[r], 0);
    g_array_append_val(p->front[r], op);
}

void
plan_deps_on_front(Plan *p, guint r, guint32 op)
{
    for (guint k = 0; k < p->front[r]->len; k++) {
        ms_schedule_add_dep(p->s, op, g_array_index(p->front[r], guint32, k));
    }
}

guint32
plan_compute(Plan *p, guint r, guint stream, MsRole role, MsPhase phase, gint layer, gint chunk,
             const char *label, MsComputeKind kind, double flops, double bytes, guint64 tokens)
{
    guint32 op = ms_schedule_add_compute(p->s, r, stream, role, phase, layer, chunk, label);
    ms_schedule_set_cost(p->s, op, kind, flops, bytes, (guint32)MIN(tokens, G_MAXUINT32));
    /* The framework's dispatch of every kernel it launches, on top of the GPU's launch. */
    ms_schedule_set_host(p->s, op, p->spec->framework.op_s);
    ms_schedule_set_priority(p->s, op, p->prio[r]++);
    if (stream == p->st_compute) {
        plan_deps_on_front(p, r, op);
        plan_front_set(p, r, op);
    }
    return op;
}

gint64
plan_comm_priority(Plan *p, MsRole role, gint layer)
{
    guint64 seq = p->comm_seq++;
    return p->cfg->comm_priority ? p->cfg->comm_priority(role, layer, seq) : (gint64)seq;
}

char *
plan_label(gint layer, MsPhase phase, const char *what, gint chunk, gint group)
{
    GString *s = g_string_new(NULL);
    if (layer >= 0) {
        g_string_append_printf(s, "L%d.", layer);
    }
    if (phase != MS_PHASE_OTHER) {
        g_string_append(s, phase == MS_PHASE_FORWARD ? "fwd." : "bwd.");
    }
    g_string_append(s, what);
    if (chunk >= 0) {
        g_string_append_printf(s, ".c%d", chunk);
    }
    if (group >= 0) {
        g_string_append_printf(s, ".g%d", group);
    }
    return g_string_free(s, FALSE);
}

/* --- gradient buckets --- */

static guint64
part(guint64 x, guint c, guint k)
{
    return x / k + (c < x % k ? 1 : 0);
}

static gboolean
emit_allreduce(Plan *p, const guint32 *ranks, guint n, guint64 bytes, gint layer, gint chunk,
               const char *label, const guint32 *last)
{
    ms_schedule_add_allreduce(p->s, p->st_ar, ranks, n, bytes, p->cfg->allreduce_algo,
                              MS_PHASE_BACKWARD, layer, chunk, label, p->cids);
    gint64 prio = plan_comm_priority(p, MS_ROLE_ALLREDUCE, layer);
    for (guint i = 0; i < n; i++) {
        ms_schedule_set_priority(p->s, p->cids[i], prio);
        ms_schedule_add_dep(p->s, p->cids[i], last[ranks[i]]);
    }
    return TRUE;
}

static gboolean
emit_bucket(Plan *p, Bucket *b, gboolean expert)
{
    guint k = 1;
    if (p->cfg->allreduce_chunk > 0) {
        guint64 want = (b->bytes + p->cfg->allreduce_chunk - 1) / p->cfg->allreduce_chunk;
        if (want > MS_PLAN_MAX_CHUNKS) {
            g_set_error(p->error, MS_PLAN_ERROR, MS_PLAN_ERROR_LIMIT,
                        "allreduce chunks of %" G_GUINT64_FORMAT " bytes cut a %" G_GUINT64_FORMAT
                        "-byte gradient bucket into %" G_GUINT64_FORMAT " chunks (at most %u): "
                        "use a larger chunk",
                        p->cfg->allreduce_chunk, b->bytes, want, MS_PLAN_MAX_CHUNKS);
            return FALSE;
        }
        k = (guint)MAX(want, 1);
    }
    guint groups = expert ? p->ep : 1, size = expert ? p->n / p->ep : p->n;
    g_autofree guint32 *ranks = g_new(guint32, size);
    for (guint g = 0; g < groups; g++) {
        for (guint i = 0; i < size; i++) {
            ranks[i] = expert ? g + i * p->ep : i;
        }
        for (guint c = 0; c < k; c++) {
            g_autofree char *what =
                g_strdup_printf("%s.b%u", expert ? "expert_grads" : "grads", b->count);
            g_autofree char *label =
                plan_label(-1, MS_PHASE_OTHER, what, k > 1 ? (gint)c : -1, expert ? (gint)g : -1);
            if (!emit_allreduce(p, ranks, size, part(b->bytes, c, k), b->layer,
                                k > 1 ? (gint)c : -1, label, b->last)) {
                return FALSE;
            }
        }
    }
    b->count++;
    b->bytes = 0;
    b->layer = G_MAXINT;
    return TRUE;
}

gboolean
plan_bucket_add(Plan *p, Bucket *b, gboolean expert, gint layer, guint64 bytes, const guint32 *ids)
{
    if (bytes == 0) {
        return TRUE;
    }
    b->bytes += bytes;
    b->layer = MIN(b->layer, MAX(layer, 0));
    memcpy(b->last, ids, sizeof(guint32) * p->n);
    guint64 size = p->cfg->grad_bucket ? p->cfg->grad_bucket : p->spec->grad_bucket;
    return b->bytes < size || emit_bucket(p, b, expert);
}

gboolean
plan_bucket_flush(Plan *p, Bucket *b, gboolean expert)
{
    return b->bytes == 0 || emit_bucket(p, b, expert);
}

/* --- dense parts --- */

void
plan_enter(Plan *p, guint layer)
{
    p->model = ms_model_layer(p->root, layer);
    p->spec = ms_model_spec(p->model);
    p->token_bytes = ms_model_token_bytes(p->model);
}

guint64
plan_layer_tokens(const Plan *p, guint layer, guint r)
{
    gint g = ms_model_layer_group(p->root, layer);
    if (g < 0) {
        return ms_routing_rank_tokens(p->routing, r);
    }
    const MsModelGroup *gr = ms_model_group(p->root, (guint)g);
    if (gr->n_moe == 0) {
        const MsModelSpec *s = ms_model_spec(ms_model_layer(p->root, layer));
        return p->mode == MS_PLAN_TRAIN ? s->tokens_per_gpu : s->tokens_per_gpu_infer;
    }
    return ms_routing_layer_tokens(p->routing, gr->first_moe, r);
}

static void
attention(Plan *p, guint layer, MsPhase phase)
{
    gboolean bwd = phase == MS_PHASE_BACKWARD;
    double f = bwd ? p->spec->backward_factor : 1.0;
    g_autofree char *label = plan_label((gint)layer, phase, "attn", -1, -1);
    for (guint r = 0; r < p->n; r++) {
        guint64 t = plan_layer_tokens(p, layer, r);
        p->ids[r] =
            plan_compute(p, r, p->st_compute, MS_ROLE_ATTENTION, phase, (gint)layer, -1, label,
                         MS_COMPUTE_ATTENTION, f * (double)t * ms_model_attention_flops(p->model),
                         f * ms_model_attention_bytes(p->model, t), t);
        ms_schedule_set_shape(p->s, p->ids[r], (guint32)t, (guint32)p->spec->d_model,
                              (guint32)p->spec->d_model, 4, 0);
    }
}

static void
dense_ffn(Plan *p, guint layer, MsPhase phase)
{
    const MsModelSpec *s = p->spec;
    double f = phase == MS_PHASE_BACKWARD ? s->backward_factor : 1.0;
    guint matrices = s->gated ? 3 : 2;
    g_autofree char *label = plan_label((gint)layer, phase, "ffn", -1, -1);
    for (guint r = 0; r < p->n; r++) {
        guint64 t = plan_layer_tokens(p, layer, r), bytes = 0;
        double flops = 0;
        ms_compute_expert_ffn_cost(t, s->d_model, s->d_ffn_dense, s->gated,
                                   ms_dtype_bytes(s->dtype), &flops, &bytes);
        p->ids[r] = plan_compute(
            p, r, p->st_compute, MS_ROLE_DENSE_FFN, phase, (gint)layer, -1, label, MS_COMPUTE_GEMM,
            f * (double)t * ms_model_dense_ffn_flops(p->model), f * (double)bytes, t);
        ms_schedule_set_shape(p->s, p->ids[r], (guint32)t, (guint32)s->d_ffn_dense,
                              (guint32)s->d_model, matrices, 0);
    }
}

static void
head(Plan *p, MsPhase phase)
{
    double f = phase == MS_PHASE_BACKWARD ? p->spec->backward_factor : 1.0;
    g_autofree char *label = plan_label(-1, phase, "head", -1, -1);
    for (guint r = 0; r < p->n; r++) {
        /* The output head reads the last layer's tokens (a decoder's). */
        guint64 t = plan_layer_tokens(p, p->spec->layers - 1, r);
        p->ids[r] = plan_compute(p, r, p->st_compute, MS_ROLE_OTHER, phase, -1, -1, label,
                                 MS_COMPUTE_GEMM, f * (double)t * ms_model_head_flops(p->model),
                                 f * ms_model_head_bytes(p->model, t), t);
        ms_schedule_set_shape(p->s, p->ids[r], (guint32)t, (guint32)p->spec->vocab,
                              (guint32)p->spec->d_model, 1, 0);
    }
}

static guint64
grad_bytes(const Plan *p, guint64 params)
{
    return params * ms_dtype_bytes(p->spec->dtype);
}

static gboolean
forward(Plan *p)
{
    for (guint l = 0; l < p->spec->layers; l++) {
        plan_enter(p, l);
        attention(p, l, MS_PHASE_FORWARD);
        if (ms_model_is_moe(p->model, l)) {
            if (!plan_moe_forward(p, l)) {
                return FALSE;
            }
        } else {
            dense_ffn(p, l, MS_PHASE_FORWARD);
        }
    }
    if (p->spec->vocab > 0) {
        plan_enter(p, p->spec->layers - 1);
        head(p, MS_PHASE_FORWARD);
    }
    return TRUE;
}

static gboolean
backward(Plan *p)
{
    if (p->spec->vocab > 0) {
        plan_enter(p, p->spec->layers - 1);
        head(p, MS_PHASE_BACKWARD);
        /* The head (tied: also the embedding) is needed first by the next forward when tied:
         * its bucket counts as layer 0. */
        if (!plan_bucket_add(p, &p->dense, FALSE, 0, grad_bytes(p, ms_model_head_params(p->model)),
                             p->ids)) {
            return FALSE;
        }
    }
    for (guint l = p->spec->layers; l-- > 0;) {
        plan_enter(p, l);
        if (ms_model_is_moe(p->model, l)) {
            if (!plan_moe_backward(p, l)) {
                return FALSE;
            }
        } else {
            dense_ffn(p, l, MS_PHASE_BACKWARD);
            if (!plan_bucket_add(p, &p->dense, FALSE, (gint)l,
                                 grad_bytes(p, ms_model_dense_ffn_params(p->model)), p->ids)) {
                return FALSE;
            }
        }
        attention(p, l, MS_PHASE_BACKWARD);
        if (!plan_bucket_add(p, &p->dense, FALSE, (gint)l,
                             grad_bytes(p, ms_model_attention_params(p->model)), p->ids)) {
            return FALSE;
        }
    }
    /* An untied input embedding's gradient comes last (the lookup's backward, after layer 0). */
    if (ms_model_embedding_params(p->model) > 0 &&
        !plan_bucket_add(p, &p->dense, FALSE, 0, grad_bytes(p, ms_model_embedding_params(p->model)),
                         p->ids)) {
        return FALSE;
    }
    return plan_bucket_flush(p, &p->dense, FALSE) && plan_bucket_flush(p, &p->expert, TRUE);
}

/* --- setup --- */

static void
add_streams(Plan *p)
{
    const MsPlanConfig *cfg = p->cfg;
    p->st_compute = ms_schedule_add_stream(p->s, "compute", MS_STREAM_COMPUTE);
    p->st_a2a = ms_schedule_add_stream(p->s, cfg->split_allreduce ? "a2a" : "comm", MS_STREAM_COMM);
    p->st_ar = p->st_a2a;
    if (cfg->split_allreduce && p->mode == MS_PLAN_TRAIN) {
        p->st_ar = ms_schedule_add_stream(p->s, "allreduce", MS_STREAM_COMM);
    }
    p->st_weights = p->st_planner = p->st_host = NO_STREAM;
    if (cfg->shadow && p->mode == MS_PLAN_TRAIN) {
        p->st_weights = ms_schedule_add_stream(p->s, "weights", MS_STREAM_COMM);
    }
    for (guint m = 0; cfg->layers && m < cfg->n_layers; m++) {
        const MsLayerPlacement *lp = &cfg->layers[m];
        if ((lp->moves_p1 || lp->moves_p2) && p->st_weights == NO_STREAM) {
            p->st_weights = ms_schedule_add_stream(p->s, "weights", MS_STREAM_COMM);
        }
        if ((lp->loads_p1 || lp->loads_p2) && p->st_host == NO_STREAM) {
            p->st_host = ms_schedule_add_stream(p->s, "host", MS_STREAM_COMPUTE);
        }
        if (lp->plan_bytes > 0 && p->st_planner == NO_STREAM) {
            p->st_planner = ms_schedule_add_stream(p->s, "planner", MS_STREAM_COMPUTE);
        }
    }
}

static void
set_meta(Plan *p)
{
    char buf[32];
    ms_schedule_set_policy(p->s, p->cfg->policy);
    ms_schedule_set_rules(p->s, &p->cfg->rules);
    ms_schedule_set_meta(p->s, "model", p->spec->name);
    ms_schedule_set_meta(p->s, "topology", ms_topology_name(p->topo));
    ms_schedule_set_meta(p->s, "policy", p->cfg->spec);
    ms_schedule_set_meta(p->s, "mode", ms_plan_mode_name(p->mode));
    /* The executors price compute at this datatype's peak (ms_compute_model_apply_schedule). */
    ms_schedule_set_meta(p->s, "dtype", ms_dtype_name(p->spec->dtype));
    g_snprintf(buf, sizeof buf, "%" G_GUINT64_FORMAT, ms_routing_iteration(p->routing));
    ms_schedule_set_meta(p->s, "iteration", buf);
    g_snprintf(buf, sizeof buf, "%u", p->ep);
    ms_schedule_set_meta(p->s, "ep", buf);
    g_snprintf(buf, sizeof buf, "%" G_GUINT64_FORMAT, p->dropped);
    ms_schedule_set_meta(p->s, "dropped_tokens", buf);
    for (guint i = 0; p->cfg->meta && i + 1 < p->cfg->meta->len; i += 2) {
        ms_schedule_set_meta(p->s, g_ptr_array_index(p->cfg->meta, i),
                             g_ptr_array_index(p->cfg->meta, i + 1));
    }
}

static gboolean
resolve_ep(Plan *p, GError **error)
{
    if (p->mode == MS_PLAN_INFER) {
        p->ep = p->n;
        return TRUE;
    }
    if (p->cfg->ep == 0) {
        return ms_model_resolve_ep(p->model, p->n, &p->ep, error);
    }
    p->ep = p->cfg->ep;
    if (p->n % p->ep != 0 || p->spec->experts % p->ep != 0) {
        g_set_error(error, MS_PLAN_ERROR, MS_PLAN_ERROR_INVALID,
                    "expert-parallel degree %u must divide both the %u GPUs and the %u experts",
                    p->ep, p->n, p->spec->experts);
        return FALSE;
    }
    return TRUE;
}

static void
plan_clear(Plan *p)
{
    for (guint r = 0; p->front && r < p->n; r++) {
        g_array_unref(p->front[r]);
    }
    for (guint m = 0; p->traffic && m < p->spec->n_moe; m++) {
        ms_traffic_free(p->traffic[m]);
    }
    for (guint m = 0; p->shadowed && m < p->spec->n_moe; m++) {
        ms_placement_free(p->shadowed[m]);
    }
    g_free(p->shadowed);
    g_free(p->traffic);
    g_free(p->node_of);
    g_free(p->layer_plans);
    g_free(p->front);
    g_free(p->prio);
    g_free(p->gate);
    g_free(p->dense.last);
    g_free(p->expert.last);
    g_free(p->ids);
    g_free(p->cids);
    g_free(p->expert_ops);
    g_free(p->ranks);
    ms_placement_free(p->base);
    ms_schedule_free(p->s);
}

static void
plan_init(Plan *p)
{
    p->s = ms_schedule_new(p->n);
    p->prio = g_new0(gint64, p->n);
    p->front = g_new(GArray *, p->n);
    for (guint r = 0; r < p->n; r++) {
        p->front[r] = g_array_new(FALSE, FALSE, sizeof(guint32));
    }
    p->gate = g_new(guint32, p->n);
    p->ids = g_new(guint32, p->n);
    p->cids = g_new(guint32, p->n);
    p->expert_ops = g_new(guint32, p->n);
    p->ranks = g_new(guint32, p->n);
    for (guint r = 0; r < p->n; r++) {
        p->gate[r] = NO_OP;
        p->ranks[r] = r;
    }
    p->dense.last = g_new(guint32, p->n);
    p->expert.last = g_new(guint32, p->n);
    p->dense.layer = p->expert.layer = G_MAXINT;
    p->token_bytes = ms_model_token_bytes(p->model);
}

MsSchedule *
ms_plan_build(const MsModel *model, const MsRouting *routing, const MsTopology *topo,
              MsPlanMode mode, const MsPlanConfig *cfg, GError **error)
{
    if (!ms_plan_check_routing(model, routing, topo, mode, error)) {
        return NULL;
    }
    const MsModelSpec *spec = ms_model_spec(model);
    Plan p = {.root = model,
              .model = model,
              .spec = spec,
              .routing = routing,
              .topo = topo,
              .cfg = cfg,
              .mode = mode,
              .n = ms_routing_header(routing)->ranks,
              .error = error};
    p.top_k = mode == MS_PLAN_TRAIN ? spec->top_k : spec->top_k_infer;
    if (!resolve_ep(&p, error)) {
        return NULL;
    }
    plan_init(&p);
    add_streams(&p);
    gboolean ok = plan_moe_prepare(&p) && forward(&p) && (mode == MS_PLAN_INFER || backward(&p));
    if (ok) {
        set_meta(&p);
        ok = ms_schedule_validate(p.s, error);
    }
    MsSchedule *s = ok ? g_steal_pointer(&p.s) : NULL;
    plan_clear(&p);
    return s;
}
