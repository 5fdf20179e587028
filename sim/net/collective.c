/* collective: runs the phases built by coll_build.c on the simulation. A flow becomes "ready"
 * when its algorithmic predecessor is done (or its sender entered the phase); it starts when its
 * receiver has entered the phase too, else it waits parked at the receiver. Participants move to
 * the next phase when their own sends, receives and copies of the current one are done. */
#include "collective.h"

#include <math.h>

#include "coll_nvls.h"
#include "coll_private.h"
#include "coll_tree.h"

G_DEFINE_QUARK(ms_coll_error_quark, ms_coll_error)

double
ms_coll_busbw_factor(MsCollOp op, guint n)
{
    if (n < 2) {
        return 0;
    }
    return op == MS_COLL_ALLREDUCE ? 2.0 * (n - 1) / n : (double)(n - 1) / n;
}

static void enter_phase(MsColl *coll, guint ph_id, guint part);

static void
finish_participant(MsColl *coll, guint part)
{
    /* Finishing a phase can enter the next one, which may finish at once (nothing to move) and
     * finish the participant from inside; the outer call must not count it again. */
    if (coll->end[part] != MS_TIME_NEVER) {
        return;
    }
    for (guint q = 0; q < coll->plan.n_phases; q++) {
        const Phase *ph = &coll->plan.phases[q];
        if (ph->group_of[part] != NONE && !ph->finished[part]) {
            return;
        }
    }
    coll->end[part] = ms_sim_now(coll->sim);
    coll->n_finished++;
    g_array_append_val(coll->finished, part);
}

/* Runs the done callbacks of the participants that finished, as the very last step of every
 * event handler: the owner may free the collective from the last rank's callback (nothing
 * touches it afterwards), and a callback never sees the collective half-updated. */
static void
notify(MsColl *coll)
{
    while (coll->n_notified < coll->finished->len) {
        guint part = g_array_index(coll->finished, guint, coll->n_notified);
        coll->n_notified++;
        gboolean last = coll->n_notified == coll->n;
        if (coll->done) {
            coll->done(coll, part, coll->done_ctx);
        }
        if (last) {
            return;
        }
    }
}

static void
check_finished(MsColl *coll, guint ph_id, guint part)
{
    ms_coll_check_finished(coll, ph_id, part);
}

void
ms_coll_check_finished(MsColl *coll, guint ph_id, guint part)
{
    Phase *ph = &coll->plan.phases[ph_id];
    if (!ph->entered[part] || ph->pending[part] || ph->finished[part]) {
        return;
    }
    ph->finished[part] = 1;
    for (guint q = 0; q < coll->plan.n_phases; q++) {
        Phase *next = &coll->plan.phases[q];
        for (guint k = 0; k < next->n_preds; k++) {
            if (next->preds[k] == ph_id && next->group_of[part] != NONE &&
                --next->preds_left[part] == 0) {
                enter_phase(coll, q, part);
            }
        }
    }
    finish_participant(coll, part);
    if (coll->sym) {
        ms_coll_sym_finished(coll, part);
    }
}

/* How a flow of payload f crosses the network: the bytes on the wire, its share weight and its
 * latency (MS_TIME_NEVER: its route's). The flow model moves the payload at the collective's
 * weight after the route latency. The nccl model moves a ring step in the chosen protocol's
 * format after NCCL's step latency, and a point-to-point send as NCCL cuts it: a connection per
 * channel it spreads over (one flow of their summed weight: they start together on one route and
 * move equal pieces, which max-min shares exactly as it would the pieces), Simple or LL. A flow
 * between nodes crosses NICs, which serve connections by the bytes of their messages. */
/* Payload bytes times a protocol's wire factor (kept within [1/64, 64]: payloads stay below
 * 2^50 bytes, so the product fits 64 bits). */
static guint64
wire_bytes(guint64 bytes, double factor)
{
    return (guint64)floor((double)bytes * factor + 0.5);
}

void
ms_coll_flow_params(const MsColl *coll, const Phase *ph, const FlowInfo *f, guint64 *wire,
                    double *weight, MsTime *latency)
{
    *wire = f->bytes;
    *weight = coll->weight;
    *latency = coll->no_hop_latency ? 0 : MS_TIME_NEVER;
    if (coll->comm == NULL) {
        return;
    }
    gboolean same_node = coll->node_of[f->src] == coll->node_of[f->dst];
    if (ph->nvls) { /* its latency is paid up front (ms_coll_nccl_setup) */
        *wire = wire_bytes(f->bytes, coll->wire);
        *latency = 0;
        return;
    }
    if (ph->kind != PHASE_A2A) { /* ring steps, tree connections (f->conns of them) */
        *wire = wire_bytes(f->bytes, coll->wire);
        *weight *= f->conns * (same_node ? 1.0 : coll->net_weight);
        *latency = coll->lat_step;
        return;
    }
    MsNcclP2p p2p;
    ms_nccl_p2p(coll->comm, f->bytes, same_node, &p2p);
    const MsNetSpec *net = ms_net_model_spec(coll->net);
    /* An LL line carries 8 bytes of data and 8 of flags (NCCL's ncclLLFifoLine). */
    double factor = p2p.proto == MS_NCCL_PROTO_LL ? 2.0 : 1.0;
    *wire = wire_bytes(f->bytes, CLAMP(factor / net->proto_efficiency[p2p.proto], 1.0 / 64, 64.0));
    *weight *=
        p2p.channels * (same_node ? 1.0 : ms_net_model_message_weight(coll->net, p2p.message));
    *latency = ms_time_from_us(p2p.latency_us * net->latency_scale);
}

const guint32 *
ms_coll_route(MsColl *coll, guint ph_id, guint src_part, guint dst_part, guint *n)
{
    g_autoptr(GError) error = NULL;
    guint src = coll->device[src_part], dst = coll->device[dst_part];
    *n = 0;
    const guint32 *route = coll->net
                               ? (coll->plan.phases[ph_id].kind == PHASE_A2A
                                      ? ms_net_model_p2p_route(coll->net, src, dst, n, &error)
                                      : ms_net_model_route(coll->net, src, dst, n, &error))
                               : ms_topology_route(ms_sim_topology(coll->sim), src, dst, n, &error);
    if (route == NULL) {
        g_critical("collective transfer without a route: %s", error->message);
    }
    return route;
}

static void
start_flow(MsColl *coll, guint ph_id, guint64 idx, const FlowInfo *f)
{
    guint64 arg = ((guint64)ph_id << IDX_BITS) | idx;
    coll->n_flows++;
    coll->sent[f->src] += f->bytes;
    guint64 wire;
    double weight;
    MsTime latency;
    ms_coll_flow_params(coll, &coll->plan.phases[ph_id], f, &wire, &weight, &latency);
    guint n = 0;
    const guint32 *route = ms_coll_route(coll, ph_id, f->src, f->dst, &n);
    if (route && coll->sym) {
        route = ms_coll_sym_route(coll, idx, route, &n, &latency);
    }
    if (route) {
        guint32 id =
            ms_sim_transfer_route(coll->sim, route, n, wire, weight, latency, coll->handler, arg);
        if (coll->sym) {
            ms_coll_sym_started(coll, idx, f, id);
        }
    }
}

static void
delayed_start(MsSim *sim, gpointer ctx, guint64 arg)
{
    MsColl *coll = ctx;
    guint ph_id = arg >> IDX_BITS;
    guint64 idx = arg & IDX_MASK;
    FlowInfo f = flow_info(&coll->plan.phases[ph_id], idx);
    start_flow(coll, ph_id, idx, &f);
}

static void
launch_flow(MsColl *coll, guint ph_id, guint64 idx, const FlowInfo *f)
{
    const Phase *ph = &coll->plan.phases[ph_id];
    if (ph->kind == PHASE_RING && coll->step_delay) {
        ms_sim_after(coll->sim, coll->step_delay, delayed_start, coll,
                     ((guint64)ph_id << IDX_BITS) | idx);
    } else {
        start_flow(coll, ph_id, idx, f);
    }
}

/* A flow whose predecessor is done: start it, park it at its receiver, or (no bytes) count it
 * done at once. */
static void
flow_ready(MsColl *coll, guint ph_id, guint64 idx)
{
    Phase *ph = &coll->plan.phases[ph_id];
    FlowInfo f = flow_info(ph, idx);
    if (f.bytes == 0) {
        guint64 v = ((guint64)ph_id << IDX_BITS) | idx;
        g_array_append_val(coll->zero, v);
    } else if (!ph->entered[f.dst]) {
        if (ph->parked[f.dst] == NULL) {
            ph->parked[f.dst] = g_array_new(FALSE, FALSE, sizeof(guint64));
        }
        g_array_append_val(ph->parked[f.dst], idx);
    } else {
        launch_flow(coll, ph_id, idx, &f);
    }
}

/* Ring flow (s, i) is done: its connection has moved s + 1 steps. Starts (s+1, i) if the chunk
 * for it has arrived from i - 1, and (s+1, i+1) if that connection has finished step s. */
static void
ring_done(MsColl *coll, guint ph_id, guint64 idx)
{
    Phase *ph = &coll->plan.phases[ph_id];
    guint m = ph->m, i = idx % m, s = (idx / m) % ph->steps;
    guint64 gc = idx / m / ph->steps;
    guint *done = &ph->done_steps[gc * m];
    done[i] = s + 1;
    if (s + 1 >= ph->steps) {
        return;
    }
    /* By representatives, the ring indices of one block stand for all: its first one's
     * neighbour before it is its last one. */
    guint w = coll->sym ? ms_coll_sym_block(coll) : m;
    if (done[(i + w - 1) % w] > s) {
        flow_ready(coll, ph_id, ring_index(ph, gc, s + 1, i));
    }
    if (w > 1 && done[(i + 1) % w] > s) { /* with one index, that was the flow above */
        flow_ready(coll, ph_id, ring_index(ph, gc, s + 1, (i + 1) % w));
    }
}

static void
flow_done(MsColl *coll, guint ph_id, guint64 idx, gboolean counted)
{
    Phase *ph = &coll->plan.phases[ph_id];
    if (ph->kind == PHASE_RING) {
        ring_done(coll, ph_id, idx);
    } else {
        guint64 next = a2a_successor(ph, idx);
        if (next != G_MAXUINT64) {
            flow_ready(coll, ph_id, next);
        }
    }
    if (counted) {
        FlowInfo f = flow_info(ph, idx);
        guint dst = coll->sym ? ms_coll_sym_rep(coll, f.dst) : f.dst;
        ph->pending[f.src]--;
        ph->pending[dst]--;
        check_finished(coll, ph_id, f.src);
        check_finished(coll, ph_id, dst);
    }
}

static void
drain_zero(MsColl *coll)
{
    while (coll->zero->len) {
        guint64 v = g_array_index(coll->zero, guint64, coll->zero->len - 1);
        g_array_set_size(coll->zero, coll->zero->len - 1);
        flow_done(coll, v >> IDX_BITS, v & IDX_MASK, FALSE);
    }
}

static void
on_transfer_done(MsSim *sim, gpointer ctx, guint64 arg)
{
    MsColl *coll = ctx;
    if (arg == MS_SIM_WATCH_ARG) {
        ms_coll_sym_expand(coll);
        return;
    }
    if (coll->sym) {
        ms_coll_sym_flow_done(coll, arg & IDX_MASK);
    }
    flow_done(coll, arg >> IDX_BITS, arg & IDX_MASK, TRUE);
    drain_zero(coll);
    notify(coll);
}

static void
copy_done(MsSim *sim, gpointer ctx, guint64 arg)
{
    MsColl *coll = ctx;
    guint ph_id = arg >> 32, part = arg & 0xffffffffu;
    if (coll->sym) {
        ms_coll_sym_copy_done(coll, part);
    }
    coll->plan.phases[ph_id].pending[part]--;
    check_finished(coll, ph_id, part);
    drain_zero(coll);
    notify(coll);
}

/* A device-local copy reads and writes every byte once. */
MsTime
ms_coll_copy_time(const MsColl *coll, guint part, guint64 bytes)
{
    return ms_time_from_s(2.0 * (double)bytes / coll->copy_bw[part]);
}

void
ms_coll_copy_after(MsColl *coll, guint ph_id, guint part, MsTime delay)
{
    ms_sim_after(coll->sim, delay, copy_done, coll, ((guint64)ph_id << 32) | part);
}

static void
start_copy(MsColl *coll, guint ph_id, guint part, guint64 bytes)
{
    ms_coll_copy_after(coll, ph_id, part, ms_coll_copy_time(coll, part, bytes));
}

static void
enter_phase(MsColl *coll, guint ph_id, guint part)
{
    Phase *ph = &coll->plan.phases[ph_id];
    ph->entered[part] = 1;
    guint g = ph->group_of[part], p = ph->pos_of[part], m = ph->m;
    if (ph->kind == PHASE_TREE) {
        for (guint k = ph->sender_first[part]; k < ph->sender_first[part + 1]; k++) {
            flow_ready(coll, ph_id, k);
        }
    } else if (ph->kind == PHASE_A2A) {
        if (ph->self_bytes && ph->self_bytes[part]) {
            start_copy(coll, ph_id, part, ph->self_bytes[part]);
        }
        guint rounds = m > 1 ? m - 1 : 0;
        if (ph->window && ph->window < rounds) {
            rounds = ph->window;
        }
        for (guint r = 1; r <= rounds; r++) {
            flow_ready(coll, ph_id, ((guint64)g * m + p) * (m - 1) + (r - 1));
        }
    } else if (ph->kind == PHASE_RING) {
        for (guint c = 0; c < ph->channels && m > 1; c++) {
            guint i = ph->index_of[((gsize)g * ph->channels + c) * m + p];
            flow_ready(coll, ph_id, (((guint64)g * ph->channels + c) * ph->steps) * m + i);
        }
    } else if (ph->copy_bytes[part]) {
        start_copy(coll, ph_id, part, ph->copy_bytes[part]);
    }
    GArray *parked = ph->parked[part];
    if (parked) {
        ph->parked[part] = NULL;
        for (guint k = 0; k < parked->len; k++) {
            guint64 idx = g_array_index(parked, guint64, k);
            FlowInfo f = flow_info(ph, idx);
            launch_flow(coll, ph_id, idx, &f);
        }
        g_array_unref(parked);
    }
    check_finished(coll, ph_id, part);
}

static void
count_pending(Phase *ph, guint n)
{
    guint m = ph->m;
    if (ph->kind == PHASE_TREE) {
        for (guint k = 0; k < ph->n_flows; k++) {
            guint inc = ph->pair_bytes[k] ? 1 : 0;
            ph->pending[ph->flow_src[k]] += inc;
            ph->pending[ph->flow_dst[k]] += inc;
        }
        return;
    }
    for (guint part = 0; part < n; part++) {
        if (ph->group_of[part] == NONE) {
            continue;
        }
        guint g = ph->group_of[part], p = ph->pos_of[part];
        guint count = 0;
        if (ph->kind == PHASE_A2A) {
            count += ph->self_bytes && ph->self_bytes[part] ? 1 : 0;
            for (guint r = 1; r < m; r++) {
                count += phase_pair_bytes(ph, g, p, r) ? 1 : 0;
                count += phase_pair_bytes(ph, g, (p + m - r) % m, r) ? 1 : 0;
            }
        } else if (ph->kind == PHASE_RING) {
            for (guint c = 0; c < ph->channels && m > 1; c++) {
                guint i = ph->index_of[((gsize)g * ph->channels + c) * m + p];
                if (ph->buffer / ph->channels >= m) {
                    count += 2 * ph->steps; /* every chunk of a channel's slice has a byte */
                    continue;
                }
                for (guint s = 0; s < ph->steps; s++) {
                    count += ms_coll_ring_chunk(ph, c, s, i) ? 1 : 0;
                    count += ms_coll_ring_chunk(ph, c, s, (i + m - 1) % m) ? 1 : 0;
                }
            }
        } else {
            count = ph->copy_bytes[part] ? 1 : 0;
        }
        ph->pending[part] = count;
        ph->preds_left[part] = ph->n_preds;
    }
}

/* Sets the module's one error code and evaluates to FALSE. */
#define INVALID(...) (g_set_error(error, MS_COLL_ERROR, MS_COLL_ERROR_INVALID, __VA_ARGS__), FALSE)

static gboolean
validate_ranks(const MsTopology *topo, const MsCollSpec *spec, GError **error)
{
    guint n_gpus = ms_topology_n_gpus(topo);
    if (spec->n_ranks == 0 || spec->n_ranks > n_gpus) {
        return INVALID("%s over %u ranks: the topology '%s' has %u GPUs", ms_coll_op_name(spec->op),
                       spec->n_ranks, ms_topology_name(topo), n_gpus);
    }
    g_autofree guint8 *seen = g_new0(guint8, n_gpus);
    for (guint i = 0; spec->ranks && i < spec->n_ranks; i++) {
        guint r = spec->ranks[i];
        if (r >= n_gpus) {
            return INVALID("rank %u is out of range (the topology '%s' has %u GPUs)", r,
                           ms_topology_name(topo), n_gpus);
        }
        if (seen[r]) {
            return INVALID("rank %u is listed twice", r);
        }
        seen[r] = 1;
    }
    return TRUE;
}

static gboolean
validate_algo(const MsCollSpec *spec, GError **error)
{
    if ((guint)spec->op > MS_COLL_ALLGATHER) {
        return INVALID("unknown operation %u", (guint)spec->op);
    }
    gboolean a2a_algo = spec->algo == MS_COLL_ALGO_DIRECT || spec->algo == MS_COLL_ALGO_2DH ||
                        spec->algo == MS_COLL_ALGO_PIPE || spec->algo == MS_COLL_ALGO_DEEPEP;
    gboolean ok = spec->algo == MS_COLL_ALGO_AUTO ||
                  (spec->op == MS_COLL_ALLTOALL
                       ? a2a_algo
                       : spec->algo == MS_COLL_ALGO_RING ||
                             (spec->algo == MS_COLL_ALGO_HIER && spec->op == MS_COLL_ALLREDUCE));
    if (!ok) {
        return INVALID("algorithm '%s' does not apply to %s (alltoall: direct, 2dh, pipe, deepep; "
                       "allreduce: ring, hier; reducescatter, allgather: ring)",
                       ms_coll_algo_name(spec->algo), ms_coll_op_name(spec->op));
    }
    return TRUE;
}

/* Every rank's row (bytes it sends, its local copy included) and column (bytes it receives) of
 * a per-pair matrix stay within MS_BYTES_MAX, so that no sum over the matrix can overflow. */
static gboolean
validate_matrix(const MsCollSpec *spec, const guint64 *matrix, const char *what, GError **error)
{
    guint n = spec->n_ranks;
    for (guint i = 0; i < n; i++) {
        guint64 row = 0, col = 0;
        for (guint j = 0; j < n; j++) {
            guint64 out = matrix[(gsize)i * n + j], in = matrix[(gsize)j * n + i];
            row = out > MS_BYTES_MAX - row ? MS_BYTES_MAX + 1 : row + out;
            col = in > MS_BYTES_MAX - col ? MS_BYTES_MAX + 1 : col + in;
        }
        if (row > MS_BYTES_MAX) {
            return INVALID("alltoall %s: rank %u sends more than 1 PiB in total", what, i);
        }
        if (col > MS_BYTES_MAX) {
            return INVALID("alltoall %s: rank %u receives more than 1 PiB in total", what, i);
        }
    }
    return TRUE;
}

/* The most flows the collective can generate: n(n-1) pairs for an all-to-all, channels x steps
 * x n for the rings (hierarchical allreduce has fewer than the flat ring). */
static guint64
max_flows(const MsCollSpec *spec, guint channels)
{
    guint64 n = spec->n_ranks;
    if (spec->op == MS_COLL_ALLTOALL) {
        return n * (n - 1);
    }
    guint64 steps = spec->op == MS_COLL_ALLREDUCE ? 2 * (n - 1) : n - 1;
    return channels * steps * n;
}

static gboolean
validate(const MsSim *sim, const MsCollSpec *spec, guint channels, GError **error)
{
    if (!validate_ranks(ms_sim_topology(sim), spec, error) || !validate_algo(spec, error)) {
        return FALSE;
    }
    gboolean uses_matrix = spec->op == MS_COLL_ALLTOALL && spec->matrix;
    if (!uses_matrix && spec->bytes > MS_BYTES_MAX) {
        return INVALID("size %" G_GUINT64_FORMAT " B is larger than 1 PiB", spec->bytes);
    }
    if (!(spec->weight >= 0) || !isfinite(spec->weight)) {
        return INVALID("weight %g is not a finite number >= 0 (0 means 1)", spec->weight);
    }
    if (spec->channels > MS_COLL_MAX_CHANNELS) {
        return INVALID("%u channels: at most %u", spec->channels, MS_COLL_MAX_CHANNELS);
    }
    guint64 flows = max_flows(spec, channels);
    if (flows > MS_COLL_MAX_FLOWS) {
        return INVALID("%s over %u ranks with %u channel%s would make %" G_GUINT64_FORMAT
                       " flows, more than %" G_GUINT64_FORMAT,
                       ms_coll_op_name(spec->op), spec->n_ranks, channels, channels == 1 ? "" : "s",
                       flows, MS_COLL_MAX_FLOWS);
    }
    if (spec->op == MS_COLL_ALLTOALL && spec->algo == MS_COLL_ALGO_DEEPEP &&
        (spec->rdma == NULL || spec->matrix == NULL)) {
        return INVALID("deepep needs the per-pair matrix and the deduplicated RDMA bytes, which "
                       "the plan counts from token paths (a2a=deepep of a policy)");
    }
    if (spec->op == MS_COLL_ALLTOALL && spec->algo == MS_COLL_ALGO_DEEPEP &&
        !validate_matrix(spec, spec->rdma, "rdma matrix", error)) {
        return FALSE;
    }
    return !uses_matrix || validate_matrix(spec, spec->matrix, "matrix", error);
}

MsColl *
ms_coll_new(MsSim *sim, const MsCollSpec *spec_in, MsCollRankDoneFn done, gpointer ctx,
            GError **error)
{
    const MsTopology *topo = ms_sim_topology(sim);
    MsCollSpec spec = *spec_in;
    guint default_channels = MAX(1, ms_topology_nics_per_node(topo));
    if (!validate(sim, spec_in, spec.channels ? spec.channels : default_channels, error)) {
        return NULL;
    }
    MsNcclChoice choice = {0};
    GError *nccl_error = NULL;
    const MsNcclComm *comm = ms_coll_nccl_comm(&spec, &choice, &nccl_error);
    if (nccl_error) {
        g_propagate_error(error, nccl_error);
        return NULL;
    }
    if (spec.channels == 0) {
        spec.channels = comm && spec.op != MS_COLL_ALLTOALL ? choice.channels : default_channels;
    }
    guint n = spec.n_ranks;
    if (spec.algo == MS_COLL_ALGO_AUTO) {
        spec.algo = spec.op == MS_COLL_ALLTOALL ? MS_COLL_ALGO_DIRECT : MS_COLL_ALGO_RING;
    }
    MsColl *coll = g_new0(MsColl, 1);
    coll->sim = sim;
    coll->op = spec.op;
    coll->algo = spec.algo;
    coll->n = n;
    coll->weight = spec.weight > 0 ? spec.weight : 1.0;
    coll->alpha = spec.alpha;
    coll->step_delay = spec.step_delay;
    coll->no_hop_latency = spec.no_hop_latency;
    coll->symmetric = spec.symmetric;
    coll->device = g_new(guint, n);
    coll->copy_bw = g_new(double, n);
    g_autofree guint *node_of = g_new(guint, n);
    g_autofree guint *local_of = g_new(guint, n);
    GHashTable *per_node = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < n; i++) {
        guint rank = spec.ranks ? spec.ranks[i] : i;
        coll->device[i] = ms_topology_gpu_device(topo, rank);
        coll->copy_bw[i] = ms_topology_gpu_spec(topo, rank)->hbm_bandwidth;
        node_of[i] = ms_topology_gpu_node(topo, rank);
        gpointer key = GUINT_TO_POINTER(node_of[i] + 1);
        guint k = GPOINTER_TO_UINT(g_hash_table_lookup(per_node, key));
        local_of[i] = k;
        g_hash_table_insert(per_node, key, GUINT_TO_POINTER(k + 1));
    }
    g_hash_table_unref(per_node);
    g_autofree guint64 *uniform = NULL;
    const guint64 *matrix = spec.matrix;
    if (spec.op == MS_COLL_ALLTOALL && matrix == NULL) {
        uniform = g_new(guint64, (gsize)n * n);
        for (gsize i = 0; i < (gsize)n * n; i++) {
            uniform[i] = spec.bytes / n;
        }
        matrix = uniform;
    }
    if (comm && spec.op == MS_COLL_ALLTOALL && spec.window == 0) {
        spec.window = ms_coll_nccl_window(comm, n);
    }
    if (comm && choice.algo == MS_NCCL_ALGO_NVLS && spec.algo == MS_COLL_ALGO_RING) {
        ms_coll_nvls_build(&coll->plan, &spec);
    } else if (comm && choice.algo == MS_NCCL_ALGO_NVLS_TREE && spec.algo == MS_COLL_ALGO_RING) {
        ms_coll_nvls_tree_build(&coll->plan, n, spec.bytes, comm, node_of, local_of);
    } else if (comm && spec.op == MS_COLL_ALLREDUCE && choice.algo == MS_NCCL_ALGO_TREE &&
               spec.algo == MS_COLL_ALGO_RING && !ms_net_model_spec(spec.net)->tree_ring_flows) {
        /* Under the nccl model a tree allreduce moves on the tree's connections unless the
         * spec asks for the ring's flows (tree=ring-flows). */
        ms_coll_tree_build(&coll->plan, n, spec.bytes, spec.channels, comm, node_of, local_of);
    } else if (!ms_coll_build_phases(&coll->plan, &spec, matrix, node_of, local_of, error)) {
        ms_coll_free(coll);
        return NULL;
    }
    for (guint q = 0; q < coll->plan.n_phases; q++) {
        count_pending(&coll->plan.phases[q], n);
    }
    if (comm) {
        ms_coll_nccl_setup(coll, &spec, comm, &choice, node_of);
    }
    coll->handler = ms_sim_add_handler(sim, on_transfer_done, coll);
    coll->launched = g_new0(guint8, n);
    coll->end = g_new(MsTime, n);
    for (guint i = 0; i < n; i++) {
        coll->end[i] = MS_TIME_NEVER;
    }
    coll->sent = g_new0(guint64, n);
    coll->zero = g_array_new(FALSE, FALSE, sizeof(guint64));
    coll->finished = g_array_sized_new(FALSE, FALSE, sizeof(guint), n);
    coll->done = done;
    coll->done_ctx = ctx;
    return coll;
}

void
ms_coll_free(MsColl *coll)
{
    if (coll == NULL) {
        return;
    }
    for (guint q = 0; q < coll->plan.n_phases; q++) {
        ms_coll_phase_clear(&coll->plan.phases[q], coll->n);
    }
    ms_coll_sym_free(coll);
    if (coll->launched) {
        ms_sim_remove_handler(coll->sim, coll->handler);
    }
    g_free(coll->device);
    g_free(coll->copy_bw);
    g_free(coll->node_of);
    g_free(coll->launched);
    g_free(coll->end);
    g_free(coll->sent);
    if (coll->zero) {
        g_array_unref(coll->zero);
    }
    if (coll->finished) {
        g_array_unref(coll->finished);
    }
    g_free(coll);
}

/* After the per-call overhead, the participant enters the phases that wait for nothing. */
static void
enter_roots(MsSim *sim, gpointer ctx, guint64 part)
{
    MsColl *coll = ctx;
    /* The first participant to enter may take every participant in with it, by
     * representatives (which alone start flows); the others then find their phase entered. */
    if (coll->symmetric) {
        coll->symmetric = FALSE;
        if (coll->n_launched == coll->n && ms_coll_sym_try_start(coll)) {
            for (guint p = 0; p < coll->n; p++) {
                if (ms_coll_sym_rep(coll, p) == p) {
                    enter_phase(coll, 0, p);
                }
            }
        }
    }
    for (guint q = 0; q < coll->plan.n_phases; q++) {
        const Phase *ph = &coll->plan.phases[q];
        if (ph->n_preds == 0 && ph->group_of[part] != NONE && !ph->entered[part]) {
            enter_phase(coll, q, part);
        }
    }
    drain_zero(coll);
    notify(coll);
}

void
ms_coll_launch(MsColl *coll, guint part)
{
    g_return_if_fail(part < coll->n && !coll->launched[part]);
    coll->launched[part] = 1;
    MsTime now = ms_sim_now(coll->sim);
    if (coll->n_launched++ == 0) {
        coll->first_launch = now;
    } else if (now != coll->first_launch) {
        coll->symmetric = FALSE; /* launched at different times: no symmetry to use */
    }
    ms_sim_after(coll->sim, coll->alpha, enter_roots, coll, part);
}

gboolean
ms_coll_run_alone(const MsTopology *topo, const MsCollSpec *spec, MsTime *end, GError **error)
{
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    if (spec->net) {
        ms_net_model_apply(spec->net, sim);
    }
    g_autoptr(MsColl) coll = ms_coll_new(sim, spec, NULL, NULL, error);
    if (coll == NULL) {
        return FALSE;
    }
    ms_coll_launch_all(coll);
    if (!ms_sim_run(sim, error)) {
        return FALSE;
    }
    *end = 0;
    for (guint i = 0; i < coll->n; i++) {
        *end = MAX(*end, coll->end[i]);
    }
    return TRUE;
}

void
ms_coll_launch_all(MsColl *coll)
{
    for (guint i = 0; i < coll->n; i++) {
        ms_coll_launch(coll, i);
    }
}

gboolean
ms_coll_finished(const MsColl *coll)
{
    return coll->n_finished == coll->n;
}

guint
ms_coll_n_ranks(const MsColl *coll)
{
    return coll->n;
}

MsTime
ms_coll_rank_end(const MsColl *coll, guint part)
{
    g_return_val_if_fail(part < coll->n, MS_TIME_NEVER);
    return coll->end[part];
}

guint64
ms_coll_bytes_sent(const MsColl *coll, guint part)
{
    g_return_val_if_fail(part < coll->n, 0);
    return coll->sent[part];
}

guint64
ms_coll_n_flows(const MsColl *coll)
{
    return coll->n_flows;
}

guint32
ms_coll_handler(const MsColl *coll)
{
    return coll->handler;
}

gboolean
ms_coll_flow_label(const MsColl *coll, guint64 arg, MsCollFlowLabel *out)
{
    guint ph_id = (guint)(arg >> IDX_BITS);
    guint64 idx = arg & IDX_MASK;
    if (ph_id >= coll->plan.n_phases) {
        return FALSE;
    }
    const Phase *ph = &coll->plan.phases[ph_id];
    if (ph->kind == PHASE_COPY) {
        return FALSE;
    }
    FlowInfo f = flow_info(ph, idx);
    *out = (MsCollFlowLabel){
        .phase = ph_id,
        .pattern = ph->nvls                 ? "nvls"
                   : ph->kind == PHASE_A2A  ? "a2a"
                   : ph->kind == PHASE_TREE ? "tree"
                                            : "ring",
        .src = coll->device[f.src],
        .dst = coll->device[f.dst],
        .channel = -1,
        .conns = f.conns,
    };
    if (ph->kind == PHASE_RING) {
        out->channel = (gint)(idx / ph->m / ph->steps % ph->channels);
        out->step = (guint)(idx / ph->m % ph->steps);
    }
    if (ph->kind == PHASE_A2A && coll->comm) {
        /* The channels NCCL spreads the send over (ms_coll_flow_params gives them its weight). */
        MsNcclP2p p2p;
        ms_nccl_p2p(coll->comm, f.bytes, coll->node_of[f.src] == coll->node_of[f.dst], &p2p);
        out->conns = p2p.channels;
    }
    return TRUE;
}

const MsNcclChoice *
ms_coll_nccl_choice(const MsColl *coll)
{
    return coll->comm && coll->op != MS_COLL_ALLTOALL ? &coll->choice : NULL;
}
