/* plan_moe: the MoE block of a layer, forward and backward: gate, all-to-all out (dispatch;
 * in backward the combine's gradient), expert FFN, all-to-all back (combine; in backward the
 * dispatch's gradient), with the policy's compression and its per-layer chunking, pipelining and
 * task order (its moe_layer hook), and
 * in inference the placement ops of Lina's two phases. Traffic in tokens from the routing,
 * bytes = tokens x d_model x dtype (x the compression ratio on the wire). */
#include "plan_private.h"

#include <string.h>

#include "sim/compute.h"
#include "sim/moe/dedup.h"
#include "sim/net/collective.h"

/* Per-chunk token sums of one section, per rank: what a rank sends and receives. */
typedef struct {
    guint k;
    guint64 *sent, *recv; /* [c * n + r] */
    guint64 **matrix;     /* [c * groups + g]: group_size^2 tokens */
    guint64 **rdma;       /* deepep: [c * groups + g]: the RDMA leg's tokens; else NULL */
} Chunks;

/* --- chunk bookkeeping --- */

static guint64
share_part(guint64 x, guint c, guint k)
{
    return x / k + (c < x % k ? 1 : 0);
}

static void
chunks_init(Plan *p, guint m, Chunks *ch)
{
    const MsTraffic *t = p->traffic[m];
    const MsPlacement *pl = ms_traffic_placement(t);
    guint groups = ms_placement_n_groups(pl), size = ms_placement_group_size(pl);
    ch->k = (guint)p->layer_plans[m].chunks;
    ch->sent = g_new0(guint64, (gsize)ch->k * p->n);
    ch->recv = g_new0(guint64, (gsize)ch->k * p->n);
    ch->matrix = g_new(guint64 *, (gsize)ch->k * groups);
    ch->rdma = NULL;
    g_autofree guint64 *pair = NULL, *rdma = NULL;
    if (plan_moe_deepep(p)) {
        ch->rdma = g_new(guint64 *, (gsize)ch->k * groups);
        pair = g_new(guint64, (gsize)groups * size * size);
        rdma = g_new(guint64, (gsize)groups * size * size);
        for (guint g = 0; g < groups; g++) {
            ms_dedup_matrices(p->routing, m, pl, g, p->node_of, pair + (gsize)g * size * size,
                              rdma + (gsize)g * size * size);
        }
    }
    for (guint c = 0; c < ch->k; c++) {
        for (guint g = 0; g < groups; g++) {
            guint64 *mat = g_new(guint64, (gsize)size * size);
            guint peers = p->layer_plans[m].peers;
            if (peers > 0) {
                ms_traffic_peer_matrix(t, g, c, peers, mat);
            } else {
                ms_traffic_chunk_matrix(t, g, c, ch->k, mat);
            }
            for (guint i = 0; i < size; i++) {
                for (guint j = 0; j < size; j++) {
                    ch->sent[(gsize)c * p->n + g * size + i] += mat[(gsize)i * size + j];
                    ch->recv[(gsize)c * p->n + g * size + j] += mat[(gsize)i * size + j];
                }
            }
            ch->matrix[(gsize)c * groups + g] = mat;
            if (plan_moe_deepep(p)) {
                /* What goes on the wire: each token once per GPU, and over RDMA once per node,
                 * cut into the chunks as the shares are. */
                guint64 *r = g_new(guint64, (gsize)size * size);
                for (gsize x = 0; x < (gsize)size * size; x++) {
                    mat[x] = share_part(pair[(gsize)g * size * size + x], c, ch->k);
                    r[x] = share_part(rdma[(gsize)g * size * size + x], c, ch->k);
                }
                ch->rdma[(gsize)c * groups + g] = r;
            }
        }
    }
}

static void
chunks_clear(Chunks *ch, guint groups)
{
    for (gsize i = 0; i < (gsize)ch->k * groups; i++) {
        g_free(ch->matrix[i]);
        if (ch->rdma) {
            g_free(ch->rdma[i]);
        }
    }
    g_free(ch->matrix);
    g_free(ch->rdma);
    g_free(ch->sent);
    g_free(ch->recv);
}

/* --- one section: all-to-all out, expert, all-to-all back --- */

typedef struct {
    guint layer, m;
    MsPhase phase;
    Chunks ch;
    const MsPlacement *pl;
    GArray **in;            /* per rank: the section's input ops */
    const guint32 *w1, *w2; /* per rank: weight movements the first all-to-all waits for */
    const guint32 *wx;      /* per rank: weight movements the expert ops wait for (shadows) */
    guint32 *out1, *out2;   /* [c * n + r]: participant ops of each chunk's all-to-alls */
    guint32 *c1;            /* [c * n + r]: first compression ops */
    guint32 *c2;            /* [c * n + r]: second compression ops */
} Section;

static gboolean
compressing(const Plan *p)
{
    return p->cfg->compress_ratio != 1.0;
}

/* (De)compression of `tokens` tokens (their uncompressed size) on rank r. */
static guint32
codec(Plan *p, Section *sec, guint r, gboolean decompress, const char *what, gint chunk,
      guint64 tokens)
{
    double orig = (double)tokens * (double)p->token_bytes;
    double bytes = orig * (1.0 + p->cfg->compress_ratio);
    if (p->cfg->compress_cost_s > 0) {
        /* Memory traffic that takes exactly cost x bytes at the GPU's memory bandwidth. */
        bytes = orig * p->cfg->compress_cost_s * ms_topology_gpu_spec(p->topo, r)->hbm_bandwidth;
    }
    g_autofree char *label = plan_label((gint)sec->layer, sec->phase, what, chunk, -1);
    return plan_compute(p, r, p->st_compute, decompress ? MS_ROLE_DECOMPRESS : MS_ROLE_COMPRESS,
                        sec->phase, (gint)sec->layer, chunk, label, MS_COMPUTE_ELEMENTWISE, 0,
                        bytes, tokens);
}

static void
flag_imminent(Plan *p, guint32 op)
{
    MsOpInfo i;
    ms_schedule_op(p->s, op, &i);
    if (i.kind == MS_OP_COMPUTE) {
        ms_schedule_set_flags(p->s, op, i.flags | MS_OP_FLAG_A2A_IMMINENT);
    }
}

/* The all-to-alls of chunk c, first (out) or second (back), one per group. Each participant
 * depends on its producer ops (one per rank in prod, or the rank's section input when prod is
 * NULL) and on the weight movements. */
static void
alltoall(Plan *p, Section *sec, guint c, gboolean back, const guint32 *prod)
{
    gboolean fwd = sec->phase == MS_PHASE_FORWARD;
    MsRole role = fwd == !back ? MS_ROLE_DISPATCH : MS_ROLE_COMBINE;
    guint groups = ms_placement_n_groups(sec->pl), size = ms_placement_group_size(sec->pl);
    gint chunk = sec->ch.k > 1 ? (gint)c : -1;
    g_autofree guint64 *bytes = g_new(guint64, (gsize)size * size);
    guint32 *out = (back ? sec->out2 : sec->out1) + (gsize)c * p->n;
    for (guint g = 0; g < groups; g++) {
        const guint64 *tok = sec->ch.matrix[(gsize)c * groups + g];
        for (guint i = 0; i < size; i++) {
            for (guint j = 0; j < size; j++) {
                /* The way back carries the same tokens in the other direction. */
                bytes[(gsize)i * size + j] = plan_moe_wire_bytes(
                    p, back ? tok[(gsize)j * size + i] : tok[(gsize)i * size + j]);
            }
        }
        g_autofree char *label = plan_label((gint)sec->layer, sec->phase,
                                            role == MS_ROLE_DISPATCH ? "dispatch" : "combine",
                                            chunk, groups > 1 ? (gint)g : -1);
        guint32 cid = ms_schedule_add_alltoall(p->s, p->st_a2a, p->ranks + g * size, size, bytes,
                                               p->cfg->a2a_algo, p->cfg->window, role, sec->phase,
                                               (gint)sec->layer, chunk, label, out + g * size);
        if (sec->ch.rdma) {
            const guint64 *rt = sec->ch.rdma[(gsize)c * groups + g];
            for (guint i = 0; i < size; i++) {
                for (guint j = 0; j < size; j++) {
                    /* The way back crosses the network between the same GPUs, reversed. */
                    bytes[(gsize)i * size + j] = plan_moe_wire_bytes(
                        p, back ? rt[(gsize)j * size + i] : rt[(gsize)i * size + j]);
                }
            }
            ms_schedule_set_relay(p->s, cid, bytes, back);
        }
        gint64 prio = plan_comm_priority(p, role, (gint)sec->layer);
        for (guint i = 0; i < size; i++) {
            guint r = g * size + i;
            ms_schedule_set_priority(p->s, out[r], prio);
            GArray *deps = sec->in[r];
            guint n_deps = prod ? 1 : deps->len;
            for (guint d = 0; d < n_deps; d++) {
                guint32 dep = prod ? prod[r] : g_array_index(deps, guint32, d);
                ms_schedule_add_dep(p->s, out[r], dep);
                if (!fwd && p->cfg->imminent_flags) {
                    flag_imminent(p, dep);
                }
            }
            if (!back && sec->w1 && sec->w1[r] != NO_OP) {
                ms_schedule_add_dep(p->s, out[r], sec->w1[r]);
            }
            if (!back && sec->w2 && sec->w2[r] != NO_OP) {
                ms_schedule_add_dep(p->s, out[r], sec->w2[r]);
            }
        }
    }
}

/* Compress chunk c's outgoing tokens on every rank, then launch its first all-to-all. */
static void
first_out(Plan *p, Section *sec, guint c)
{
    gint chunk = sec->ch.k > 1 ? (gint)c : -1;
    if (compressing(p)) {
        for (guint r = 0; r < p->n; r++) {
            sec->c1[(gsize)c * p->n + r] =
                codec(p, sec, r, FALSE, "compress", chunk, sec->ch.sent[(gsize)c * p->n + r]);
        }
    }
    alltoall(p, sec, c, FALSE, compressing(p) ? sec->c1 + (gsize)c * p->n : NULL);
}

/* The expert op of body b (chunks lo..hi-1) on every rank. */
static void
expert(Plan *p, Section *sec, guint b, guint lo, guint hi)
{
    const MsModelSpec *s = p->spec;
    guint k = sec->ch.k, E = s->experts, dtype = ms_dtype_bytes(s->dtype);
    gboolean piped = hi - lo < k || k == 1;
    double f = sec->phase == MS_PHASE_BACKWARD ? s->backward_factor : 1.0;
    g_autofree guint64 *per = g_new(guint64, E);
    g_autofree char *label =
        plan_label((gint)sec->layer, sec->phase, "expert", k > 1 && piped ? (gint)b : -1, -1);
    guint peers = p->layer_plans[sec->m].peers;
    for (guint r = 0; r < p->n; r++) {
        guint64 tokens = piped && peers > 0
                             ? ms_traffic_peer_received(p->traffic[sec->m], r, b, peers, per)
                             : ms_traffic_chunk_received(p->traffic[sec->m], r, piped ? b : 0,
                                                         piped ? k : 1, per);
        double bytes = 0;
        guint busy = 0;
        for (guint e = 0; e < E; e++) {
            if (per[e] > 0) {
                double fl = 0;
                guint64 by = 0;
                ms_compute_expert_ffn_cost(per[e], s->d_model, s->d_ffn, s->gated, dtype, &fl, &by);
                bytes += (double)by;
                busy++;
            }
        }
        if (!compressing(p)) {
            /* Without compression the expert reads what its chunks' all-to-alls delivered; with
             * it, the decompressions just before it on the stream did. */
            g_array_set_size(p->front[r], 0);
            for (guint c = lo; c < hi; c++) {
                g_array_append_val(p->front[r], sec->out1[(gsize)c * p->n + r]);
            }
        }
        guint32 op =
            plan_compute(p, r, p->st_compute, MS_ROLE_EXPERT, sec->phase, (gint)sec->layer,
                         k > 1 && piped ? (gint)b : -1, label, MS_COMPUTE_EXPERT,
                         f * (double)tokens * ms_model_expert_flops(p->model), f * bytes, tokens);
        if (sec->wx && sec->wx[r] != NO_OP) {
            ms_schedule_add_dep(p->s, op, sec->wx[r]);
        }
        guint n_local = ms_placement_n_local(sec->pl, r);
        guint32 m = (guint32)((tokens + MAX(busy, 1) - 1) / MAX(busy, 1));
        ms_schedule_set_shape(p->s, op, m, (guint32)s->d_ffn, (guint32)s->d_model, s->gated ? 3 : 2,
                              n_local);
        p->expert_ops[r] = op;
    }
}

/* Body b: decompress its chunks, run the expert, compress and send each chunk back. */
static void
body(Plan *p, Section *sec, guint b, guint lo, guint hi)
{
    guint k = sec->ch.k;
    if (compressing(p)) {
        for (guint c = lo; c < hi; c++) {
            for (guint r = 0; r < p->n; r++) {
                plan_front_set(p, r, sec->out1[(gsize)c * p->n + r]);
                codec(p, sec, r, TRUE, "decompress", k > 1 ? (gint)c : -1,
                      sec->ch.recv[(gsize)c * p->n + r]);
            }
        }
    }
    expert(p, sec, b, lo, hi);
    g_autofree guint32 *ex = g_memdup2(p->expert_ops, sizeof(guint32) * p->n);
    for (guint c = lo; c < hi; c++) {
        if (compressing(p)) {
            for (guint r = 0; r < p->n; r++) {
                sec->c2[(gsize)c * p->n + r] =
                    codec(p, sec, r, FALSE, "compress", k > 1 ? (gint)c : -1,
                          sec->ch.recv[(gsize)c * p->n + r]);
            }
        }
        alltoall(p, sec, c, TRUE, compressing(p) ? sec->c2 + (gsize)c * p->n : ex);
    }
}

/* The section's final decompressions (or none), and the frontier it leaves. */
static void
finish(Plan *p, Section *sec)
{
    guint k = sec->ch.k;
    for (guint r = 0; r < p->n; r++) {
        g_array_set_size(p->front[r], 0);
    }
    g_autofree guint32 *d2 = g_new(guint32, (gsize)k * p->n);
    for (guint c = 0; c < k; c++) {
        for (guint r = 0; r < p->n; r++) {
            guint32 a2 = sec->out2[(gsize)c * p->n + r];
            if (!compressing(p)) {
                d2[(gsize)c * p->n + r] = a2;
                continue;
            }
            plan_front_set(p, r, a2);
            d2[(gsize)c * p->n + r] = codec(p, sec, r, TRUE, "decompress", k > 1 ? (gint)c : -1,
                                            sec->ch.sent[(gsize)c * p->n + r]);
        }
    }
    for (guint r = 0; r < p->n; r++) {
        g_array_set_size(p->front[r], 0);
        for (guint c = 0; c < k; c++) {
            g_array_append_val(p->front[r], d2[(gsize)c * p->n + r]);
        }
    }
}

static void
section(Plan *p, Section *sec)
{
    guint k = sec->ch.k;
    const MsMoeLayerPlan *lp = &p->layer_plans[sec->m];
    gboolean pipe = lp->pipeline && k > 1;
    gsize cells = (gsize)k * p->n;
    sec->out1 = g_new(guint32, cells);
    sec->out2 = g_new(guint32, cells);
    sec->c1 = g_new(guint32, cells);
    sec->c2 = g_new(guint32, cells);
    sec->in = g_new(GArray *, p->n);
    for (guint r = 0; r < p->n; r++) {
        sec->in[r] = g_array_copy(p->front[r]);
    }
    gboolean all_first = !pipe || lp->order == MS_PLAN_ORDER_OPTSCHE;
    if (all_first) {
        /* OptSche: every first compression (and so every first all-to-all) before any body. */
        for (guint c = 0; c < k; c++) {
            first_out(p, sec, c);
        }
    }
    if (pipe) {
        for (guint c = 0; c < k; c++) {
            if (!all_first) {
                first_out(p, sec, c);
            }
            body(p, sec, c, c, c + 1);
        }
    } else {
        body(p, sec, 0, 0, k);
    }
    finish(p, sec);
    for (guint r = 0; r < p->n; r++) {
        g_array_unref(sec->in[r]);
    }
    g_free(sec->in);
    g_free(sec->out1);
    g_free(sec->out2);
    g_free(sec->c1);
    g_free(sec->c2);
}

/* --- gate and Lina's placement phases --- */

static void
gate(Plan *p, guint layer, MsPhase phase)
{
    double f = phase == MS_PHASE_BACKWARD ? p->spec->backward_factor : 1.0;
    g_autofree char *label = plan_label((gint)layer, phase, "gate", -1, -1);
    for (guint r = 0; r < p->n; r++) {
        guint64 t = plan_layer_tokens(p, layer, r);
        p->ids[r] =
            plan_compute(p, r, p->st_compute, MS_ROLE_GATE, phase, (gint)layer, -1, label,
                         MS_COMPUTE_ELEMENTWISE, f * (double)t * ms_model_gate_flops(p->model),
                         f * ms_model_gate_bytes(p->model, t, p->top_k), t);
        ms_schedule_set_shape(p->s, p->ids[r], (guint32)t, p->spec->experts,
                              (guint32)p->spec->d_model, 1, 0);
    }
}

/* The framework's host work of a forward MoE layer, after its gate (where dropless frameworks
 * read the counts back and Python loops over the local experts): a host op on the compute
 * stream, which the dispatch waits for. None when the framework has no such time. */
static void
host_work(Plan *p, guint layer, const MsPlacement *pl)
{
    const MsFramework *f = &p->spec->framework;
    if (!(f->layer_s > 0 || f->expert_s > 0 || f->token_s > 0 || (f->syncs && f->sync_s > 0))) {
        return;
    }
    g_autofree char *label = plan_label((gint)layer, MS_PHASE_FORWARD, "host", -1, -1);
    for (guint r = 0; r < p->n; r++) {
        guint64 t = plan_layer_tokens(p, layer, r);
        guint32 op = plan_compute(p, r, p->st_compute, MS_ROLE_HOST, MS_PHASE_FORWARD, (gint)layer,
                                  -1, label, MS_COMPUTE_ELEMENTWISE, 0, 0, t);
        ms_schedule_set_host(p->s, op, ms_framework_layer_s(f, ms_placement_n_local(pl, r), t));
        ms_schedule_set_shape(p->s, op, 0, 0, 0, 0, ms_placement_n_local(pl, r));
    }
}

/* The shared experts of an MoE layer (DeepSeekMoE) on every rank's own tokens: a dense FFN of
 * shared_experts x d_ffn on the compute stream, placed before the section so that it runs while
 * the dispatch is in flight (the expert op follows it in stream order), while the dispatch itself
 * waits only for what it waited for before. */
static void
shared_experts(Plan *p, guint layer, MsPhase phase)
{
    const MsModelSpec *s = p->spec;
    if (s->shared_experts == 0) {
        return;
    }
    double f = phase == MS_PHASE_BACKWARD ? s->backward_factor : 1.0;
    guint64 width = (guint64)s->shared_experts * s->d_ffn;
    g_autofree char *label = plan_label((gint)layer, phase, "shared", -1, -1);
    for (guint r = 0; r < p->n; r++) {
        g_autoptr(GArray) before = g_array_copy(p->front[r]);
        guint64 t = plan_layer_tokens(p, layer, r), bytes = 0;
        double flops = 0;
        ms_compute_expert_ffn_cost(t, s->d_model, width, s->gated, ms_dtype_bytes(s->dtype), &flops,
                                   &bytes);
        p->ids[r] = plan_compute(
            p, r, p->st_compute, MS_ROLE_DENSE_FFN, phase, (gint)layer, -1, label, MS_COMPUTE_GEMM,
            f * (double)t * ms_model_shared_flops(p->model), f * (double)bytes, t);
        ms_schedule_set_shape(p->s, p->ids[r], (guint32)t, (guint32)width, (guint32)s->d_model,
                              s->gated ? 3 : 2, 0);
        g_array_set_size(p->front[r], 0);
        g_array_append_vals(p->front[r], before->data, before->len);
    }
}

/* Moves expert weights (an n x n byte matrix) on the weights stream; out gets each rank's op. */
static void
weights(Plan *p, guint layer, MsPhase phase, guint8 algo, const guint64 *moves, const char *what,
        const guint32 *deps, guint32 *out)
{
    g_autofree char *label = plan_label((gint)layer, phase, what, -1, -1);
    /* Weights are not tokens: DeepEP has nothing to deduplicate, NCCL sends them. */
    if (plan_moe_deepep(p)) {
        algo = MS_COLL_ALGO_DIRECT;
    }
    ms_schedule_add_alltoall(p->s, p->st_weights, p->ranks, p->n, moves, algo, 0, MS_ROLE_WEIGHTS,
                             phase, (gint)layer, -1, label, out);
    gint64 prio = plan_comm_priority(p, MS_ROLE_WEIGHTS, (gint)layer);
    for (guint r = 0; r < p->n; r++) {
        ms_schedule_set_priority(p->s, out[r], prio);
        if (deps && deps[r] != NO_OP) {
            ms_schedule_add_dep(p->s, out[r], deps[r]);
        }
    }
}

/* Loads expert weights from host memory: per rank an op on the host stream that takes
 * bytes / host_bw, as a memory-bound op whose traffic is scaled by hbm / host_bw (the GPU's copy
 * engine works beside its kernels; loads of different GPUs do not share a link). out gets each
 * rank's op (NO_OP where nothing loads). */
static void
loads(Plan *p, guint layer, const MsLayerPlacement *lp, const guint64 *bytes, const char *what,
      const guint32 *deps, guint32 *out)
{
    g_autofree char *label = plan_label((gint)layer, MS_PHASE_OTHER, what, -1, -1);
    for (guint r = 0; r < p->n; r++) {
        if (bytes[r] == 0) {
            continue;
        }
        double hbm = ms_topology_gpu_spec(p->topo, r)->hbm_bandwidth;
        out[r] =
            plan_compute(p, r, p->st_host, MS_ROLE_WEIGHTS, MS_PHASE_OTHER, (gint)layer, -1, label,
                         MS_COMPUTE_ELEMENTWISE, 0, (double)bytes[r] * hbm / lp->host_bw, 0);
        if (deps && deps[r] != NO_OP) {
            ms_schedule_add_dep(p->s, out[r], deps[r]);
        }
    }
}

/* Phase 1: planned from the paths up to the previous MoE layer's gate, off the critical path. */
static void
phase1(Plan *p, guint layer, const MsLayerPlacement *lp, guint32 *w1)
{
    g_autofree guint32 *dep = g_memdup2(p->gate, sizeof(guint32) * p->n);
    if (lp->plan_bytes > 0) {
        g_autofree char *label = plan_label((gint)layer, MS_PHASE_OTHER, "plan", -1, -1);
        for (guint r = 0; r < p->n; r++) {
            guint32 op =
                plan_compute(p, r, p->st_planner, MS_ROLE_REPLAN, MS_PHASE_OTHER, (gint)layer, -1,
                             label, MS_COMPUTE_ELEMENTWISE, 0, lp->plan_bytes, 0);
            if (dep[r] != NO_OP) {
                ms_schedule_add_dep(p->s, op, dep[r]);
            }
            dep[r] = op;
        }
    }
    if (lp->moves_p1) {
        weights(p, layer, MS_PHASE_OTHER, p->cfg->a2a_algo, lp->moves_p1, "weights.p1", dep, w1);
    }
    if (lp->loads_p1) {
        loads(p, layer, lp, lp->loads_p1, "host.p1", dep, w1);
    }
}

/* Phase 2: after the gate, check the real top experts; re-plan and move weights if needed. */
static void
phase2(Plan *p, guint layer, const MsLayerPlacement *lp, guint32 *w2)
{
    /* Without a check, what loads after the gate waits for the gate (p->ids holds it). */
    if (lp->replan) {
        g_autofree char *label = plan_label((gint)layer, MS_PHASE_OTHER, "replan", -1, -1);
        for (guint r = 0; r < p->n; r++) {
            p->ids[r] =
                plan_compute(p, r, p->st_compute, MS_ROLE_REPLAN, MS_PHASE_OTHER, (gint)layer, -1,
                             label, MS_COMPUTE_ELEMENTWISE, 0, lp->replan_bytes, 0);
        }
    }
    if (lp->replan && lp->moves_p2) {
        weights(p, layer, MS_PHASE_OTHER, p->cfg->a2a_algo, lp->moves_p2, "weights.p2", p->ids, w2);
    }
    if (lp->loads_p2) {
        loads(p, layer, lp, lp->loads_p2, "host.p2", p->ids, w2);
    }
}

/* The shadowed experts' weights (or, back, their gradients) along a ring of each group starting
 * at the expert's home rank: NCCL's ring broadcast (reduce), every link carrying the bytes once.
 * NULL when layer m shadows nothing. */
static guint64 *
shadow_moves(const Plan *p, guint m, gboolean back)
{
    const gboolean *sh = plan_moe_shadow(p, m);
    if (sh == NULL || p->shadowed[m] == NULL) {
        return NULL;
    }
    guint size = ms_placement_group_size(p->base);
    guint64 bytes = ms_model_expert_params(p->model) * ms_dtype_bytes(p->spec->dtype);
    guint64 *moves = g_new0(guint64, (gsize)p->n * p->n);
    for (guint g = 0; g < ms_placement_n_groups(p->base); g++) {
        for (guint e = 0; e < p->spec->experts; e++) {
            guint n = 0;
            const guint *home = ms_placement_replicas(p->base, g, e, &n);
            for (guint i = 0; sh[e] && i + 1 < size; i++) {
                guint a = g * size + (home[0] - g * size + i) % size;
                guint b = g * size + (home[0] - g * size + i + 1) % size;
                moves[back ? (gsize)b * p->n + a : (gsize)a * p->n + b] += bytes;
            }
        }
    }
    return moves;
}

gboolean
plan_moe_forward(Plan *p, guint layer)
{
    guint m = (guint)ms_model_moe_index(p->model, layer);
    const MsLayerPlacement *lp = plan_moe_layer_placement(p, m);
    g_autofree guint32 *w1 = NULL, *w2 = NULL;
    if (lp) {
        w1 = g_new(guint32, p->n);
        w2 = g_new(guint32, p->n);
        for (guint r = 0; r < p->n; r++) {
            w1[r] = w2[r] = NO_OP;
        }
        phase1(p, layer, lp, w1);
    }
    gate(p, layer, MS_PHASE_FORWARD);
    memcpy(p->gate, p->ids, sizeof(guint32) * p->n);
    host_work(p, layer, plan_moe_placement(p, m));
    if (lp) {
        phase2(p, layer, lp, w2);
    }
    /* Shadowed experts: their weights follow the gate's decision, beside the dispatch. */
    g_autofree guint64 *moves = shadow_moves(p, m, FALSE);
    g_autofree guint32 *wx = moves ? g_new(guint32, p->n) : NULL;
    if (moves) {
        weights(p, layer, MS_PHASE_FORWARD, MS_COLL_ALGO_DIRECT, moves, "shadow", p->ids, wx);
    }
    shared_experts(p, layer, MS_PHASE_FORWARD);
    Section sec = {.layer = layer,
                   .m = m,
                   .phase = MS_PHASE_FORWARD,
                   .pl = plan_moe_placement(p, m),
                   .w1 = w1,
                   .w2 = w2,
                   .wx = wx};
    chunks_init(p, m, &sec.ch);
    section(p, &sec);
    chunks_clear(&sec.ch, ms_placement_n_groups(sec.pl));
    return TRUE;
}

gboolean
plan_moe_backward(Plan *p, guint layer)
{
    guint m = (guint)ms_model_moe_index(p->model, layer);
    shared_experts(p, layer, MS_PHASE_BACKWARD);
    g_autofree guint32 *shared = g_memdup2(p->ids, sizeof(guint32) * p->n);
    Section sec = {
        .layer = layer, .m = m, .phase = MS_PHASE_BACKWARD, .pl = plan_moe_placement(p, m)};
    chunks_init(p, m, &sec.ch);
    section(p, &sec);
    chunks_clear(&sec.ch, ms_placement_n_groups(sec.pl));
    /* Shadowed experts' gradients go back to their home ranks once the experts are done. */
    g_autofree guint64 *moves = shadow_moves(p, m, TRUE);
    if (moves) {
        g_autofree guint32 *out = g_new(guint32, p->n);
        weights(p, layer, MS_PHASE_BACKWARD, MS_COLL_ALGO_DIRECT, moves, "shadow_grads",
                p->expert_ops, out);
    }
    /* Expert gradients, among the replicas of each expert (the other expert-parallel groups). */
    if (p->n / p->ep > 1) {
        guint64 bytes = (guint64)ms_placement_n_local(p->base, 0) *
                        ms_model_expert_params(p->model) * ms_dtype_bytes(p->spec->dtype);
        if (!plan_bucket_add(p, &p->expert, TRUE, (gint)layer, bytes, p->expert_ops)) {
            return FALSE;
        }
    }
    /* The shared experts' gradients are replicated like the attention's (data parallel). */
    if (p->spec->shared_experts > 0 &&
        !plan_bucket_add(p, &p->dense, FALSE, (gint)layer,
                         ms_model_shared_params(p->model) * ms_dtype_bytes(p->spec->dtype),
                         shared)) {
        return FALSE;
    }
    gate(p, layer, MS_PHASE_BACKWARD);
    return plan_bucket_add(p, &p->dense, FALSE, (gint)layer,
                           ms_model_gate_params(p->model) * ms_dtype_bytes(p->spec->dtype), p->ids);
}
