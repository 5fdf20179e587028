/* schedule: building, validating and reading schedules. Ops are kept in creation order (their id
 * is their index); collectives own their participants' op ids and, for all-to-all, the byte
 * matrix. */
#include "schedule_private.h"

#include <math.h>
#include <string.h>

#include "sim/base/graph.h"

G_DEFINE_QUARK(ms_schedule_error_quark, ms_schedule_error)

static const char *const role_names[MS_ROLE_N + 1] = {
    "attention",  "dense_ffn", "gate",    "dispatch", "expert", "combine", "compress",
    "decompress", "allreduce", "weights", "replan",   "other",  "host",
};
static const char *const compute_names[MS_COMPUTE_N_KINDS + 1] = {"gemm", "expert", "attention",
                                                                  "elementwise"};
static const char *const phase_names[] = {"forward", "backward", "other", NULL};
/* MsOpKind and MsStreamKind: compute first, then communication. */
static const char *const kind_names[] = {"compute", "comm", NULL};
static const char *const order_names[MS_DISPATCH_ORDER_N + 1] = {"ready", "priority"};
static const char *const gate_names[MS_ALLREDUCE_GATE_N + 1] = {"none", "a2a"};
G_STATIC_ASSERT((int)MS_OP_COMPUTE == (int)MS_STREAM_COMPUTE);
G_STATIC_ASSERT((int)MS_OP_COMM == (int)MS_STREAM_COMM);

const char *
ms_role_name(MsRole role)
{
    return role < MS_ROLE_N ? role_names[role] : "?";
}

gboolean
ms_role_from_name(const char *name, MsRole *out)
{
    for (guint i = 0; i < MS_ROLE_N; i++) {
        if (g_strcmp0(name, role_names[i]) == 0) {
            *out = i;
            return TRUE;
        }
    }
    return FALSE;
}

const char *
ms_compute_kind_name(MsComputeKind kind)
{
    return kind < MS_COMPUTE_N_KINDS ? compute_names[kind] : "?";
}

const char *
ms_phase_name(MsPhase phase)
{
    return phase < G_N_ELEMENTS(phase_names) - 1 ? phase_names[phase] : "?";
}

const char *
ms_op_kind_name(MsOpKind kind)
{
    return kind < G_N_ELEMENTS(kind_names) - 1 ? kind_names[kind] : "?";
}

const char *
ms_stream_kind_name(MsStreamKind kind)
{
    return kind < G_N_ELEMENTS(kind_names) - 1 ? kind_names[kind] : "?";
}

const char *
ms_coll_kind_name(MsCollKind kind)
{
    return kind < MS_COLL_KIND_N ? ms_coll_op_name((MsCollOp)kind) : "?";
}

const char *
ms_dispatch_order_name(MsDispatchOrder order)
{
    return order < MS_DISPATCH_ORDER_N ? order_names[order] : "?";
}

const char *
ms_allreduce_gate_name(MsAllreduceGate gate)
{
    return gate < MS_ALLREDUCE_GATE_N ? gate_names[gate] : "?";
}

const char *const *
ms_dispatch_order_names(void)
{
    return order_names;
}

const char *const *
ms_allreduce_gate_names(void)
{
    return gate_names;
}

const char *const *
ms_role_names(void)
{
    return role_names;
}

const char *const *
ms_compute_kind_names(void)
{
    return compute_names;
}

const char *const *
ms_phase_names(void)
{
    return phase_names;
}

const char *const *
ms_kind_names(void)
{
    return kind_names;
}

static void
free_rank_ops(gpointer p)
{
    g_array_unref(p);
}

MsSchedule *
ms_schedule_new(guint n_ranks)
{
    g_return_val_if_fail(n_ranks > 0 && n_ranks <= MS_SCHEDULE_MAX_RANKS, NULL);
    MsSchedule *s = g_new0(MsSchedule, 1);
    s->n_ranks = n_ranks;
    s->ops = g_array_new(FALSE, FALSE, sizeof(Op));
    s->colls = g_array_new(FALSE, FALSE, sizeof(Coll));
    s->streams = g_array_new(FALSE, FALSE, sizeof(Stream));
    s->rank_ops = g_ptr_array_new_with_free_func(free_rank_ops);
    for (guint r = 0; r < n_ranks; r++) {
        g_ptr_array_add(s->rank_ops, g_array_new(FALSE, FALSE, sizeof(guint32)));
    }
    s->meta_keys = g_ptr_array_new_with_free_func(g_free);
    s->meta = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    s->policy = g_strdup("fifo");
    s->rules = (MsDispatchRules){MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE};
    s->strings = g_string_chunk_new(4096);
    return s;
}

void
ms_schedule_free(MsSchedule *s)
{
    if (s == NULL) {
        return;
    }
    for (guint i = 0; i < s->ops->len; i++) {
        if (SCHED_OP(s, i)->deps) {
            g_array_unref(SCHED_OP(s, i)->deps);
        }
    }
    for (guint i = 0; i < s->colls->len; i++) {
        Coll *c = SCHED_COLL(s, i);
        g_free(c->ranks);
        g_free(c->ops);
        g_free(c->matrix);
        g_free(c->rdma);
    }
    for (guint i = 0; i < s->streams->len; i++) {
        g_free(g_array_index(s->streams, Stream, i).name);
    }
    g_array_unref(s->ops);
    g_array_unref(s->colls);
    g_array_unref(s->streams);
    g_ptr_array_unref(s->rank_ops);
    g_hash_table_unref(s->meta);
    g_ptr_array_unref(s->meta_keys);
    g_free(s->policy);
    g_string_chunk_free(s->strings);
    g_free(s);
}

guint
ms_schedule_add_stream(MsSchedule *s, const char *name, MsStreamKind kind)
{
    g_return_val_if_fail(s->streams->len < MS_SCHEDULE_MAX_STREAMS, 0);
    Stream st = {g_strdup(name), kind};
    g_array_append_val(s->streams, st);
    return s->streams->len - 1;
}

void
ms_schedule_set_meta(MsSchedule *s, const char *key, const char *value)
{
    if (!g_hash_table_contains(s->meta, key)) {
        g_ptr_array_add(s->meta_keys, g_strdup(key));
    }
    guint i;
    for (i = 0; i < s->meta_keys->len && strcmp(s->meta_keys->pdata[i], key) != 0; i++) {
    }
    g_hash_table_insert(s->meta, s->meta_keys->pdata[i], g_strdup(value ? value : ""));
}

const char *
ms_schedule_get_meta(const MsSchedule *s, const char *key)
{
    return g_hash_table_lookup(s->meta, key);
}

void
ms_schedule_set_policy(MsSchedule *s, const char *policy)
{
    g_free(s->policy);
    s->policy = g_strdup(policy);
}

const char *
ms_schedule_policy(const MsSchedule *s)
{
    return s->policy;
}

void
ms_schedule_set_rules(MsSchedule *s, const MsDispatchRules *rules)
{
    s->rules = *rules;
}

MsDispatchRules
ms_schedule_rules(const MsSchedule *s)
{
    return s->rules;
}

static guint32
add_op(MsSchedule *s, guint rank, guint stream, MsOpKind kind, MsRole role, MsPhase phase,
       gint layer, gint chunk, const char *label)
{
    g_return_val_if_fail(rank < s->n_ranks, G_MAXUINT32);
    Op op = {
        .rank = rank,
        .stream = (guint8)stream,
        .kind = kind,
        .role = role,
        .phase = phase,
        .layer = layer,
        .chunk = chunk,
        .label = g_string_chunk_insert_const(s->strings, label ? label : ""),
        .coll = G_MAXUINT32,
        .priority = s->ops->len,
    };
    g_array_append_val(s->ops, op);
    guint32 id = s->ops->len - 1;
    g_array_append_val((GArray *)s->rank_ops->pdata[rank], id);
    return id;
}

guint32
ms_schedule_add_compute(MsSchedule *s, guint rank, guint stream, MsRole role, MsPhase phase,
                        gint layer, gint chunk, const char *label)
{
    return add_op(s, rank, stream, MS_OP_COMPUTE, role, phase, layer, chunk, label);
}

void
ms_schedule_set_cost(MsSchedule *s, guint32 op, MsComputeKind kind, double flops, double bytes,
                     guint32 tokens)
{
    g_return_if_fail(op < s->ops->len);
    Op *o = SCHED_OP(s, op);
    o->compute = kind;
    o->flops = flops;
    o->bytes = bytes;
    o->tokens = tokens;
}

void
ms_schedule_set_shape(MsSchedule *s, guint32 op, guint32 m, guint32 n, guint32 k, guint32 count,
                      guint32 experts)
{
    g_return_if_fail(op < s->ops->len);
    Op *o = SCHED_OP(s, op);
    o->m = m;
    o->n = n;
    o->k = k;
    o->count = count;
    o->experts = experts;
}

void
ms_schedule_set_host(MsSchedule *s, guint32 op, double seconds)
{
    g_return_if_fail(op < s->ops->len);
    SCHED_OP(s, op)->host = seconds;
}

guint32
ms_schedule_new_coll(MsSchedule *s, MsCollKind kind, guint8 algo, guint32 window,
                     const guint32 *ranks, guint n, const char *label)
{
    Coll c = {
        .kind = kind,
        .algo = algo,
        .window = window,
        .n = n,
        .ranks = g_memdup2(ranks, n * sizeof(guint32)),
        .ops = g_new(guint32, n),
        .label = g_string_chunk_insert_const(s->strings, label ? label : ""),
    };
    for (guint i = 0; i < n; i++) {
        c.ops[i] = G_MAXUINT32;
    }
    g_array_append_val(s->colls, c);
    return s->colls->len - 1;
}

guint32
ms_schedule_add_comm_op(MsSchedule *s, guint32 coll, guint rank, guint stream, MsRole role,
                        MsPhase phase, gint layer, gint chunk, const char *label)
{
    guint32 id = add_op(s, rank, stream, MS_OP_COMM, role, phase, layer, chunk, label);
    if (id != G_MAXUINT32) {
        SCHED_OP(s, id)->coll = coll;
    }
    return id;
}

static guint32
add_coll_ops(MsSchedule *s, guint32 c, guint stream, MsRole role, MsPhase phase, gint layer,
             gint chunk, const char *label, guint32 *ops_out)
{
    Coll *coll = SCHED_COLL(s, c);
    for (guint i = 0; i < coll->n; i++) {
        guint32 op =
            ms_schedule_add_comm_op(s, c, coll->ranks[i], stream, role, phase, layer, chunk, label);
        SCHED_COLL(s, c)->ops[i] = op;
        if (ops_out) {
            ops_out[i] = op;
        }
        coll = SCHED_COLL(s, c);
    }
    return c;
}

guint32
ms_schedule_add_alltoall(MsSchedule *s, guint stream, const guint32 *ranks, guint n_ranks,
                         const guint64 *matrix, guint8 algo, guint32 window, MsRole role,
                         MsPhase phase, gint layer, gint chunk, const char *label, guint32 *ops_out)
{
    guint32 c = ms_schedule_new_coll(s, MS_COLL_KIND_ALLTOALL, algo, window, ranks, n_ranks, label);
    SCHED_COLL(s, c)->matrix = g_memdup2(matrix, (gsize)n_ranks * n_ranks * sizeof(guint64));
    return add_coll_ops(s, c, stream, role, phase, layer, chunk, label, ops_out);
}

void
ms_schedule_set_relay(MsSchedule *s, guint32 coll, const guint64 *rdma, gboolean returning)
{
    g_return_if_fail(coll < s->colls->len);
    Coll *c = SCHED_COLL(s, coll);
    g_return_if_fail(c->kind == MS_COLL_KIND_ALLTOALL);
    g_free(c->rdma);
    c->rdma = g_memdup2(rdma, (gsize)c->n * c->n * sizeof(guint64));
    c->returning = returning;
}

guint32
ms_schedule_add_allreduce(MsSchedule *s, guint stream, const guint32 *ranks, guint n_ranks,
                          guint64 bytes, guint8 algo, MsPhase phase, gint layer, gint chunk,
                          const char *label, guint32 *ops_out)
{
    guint32 c = ms_schedule_new_coll(s, MS_COLL_KIND_ALLREDUCE, algo, 0, ranks, n_ranks, label);
    SCHED_COLL(s, c)->bytes = bytes;
    return add_coll_ops(s, c, stream, MS_ROLE_ALLREDUCE, phase, layer, chunk, label, ops_out);
}

void
ms_schedule_add_dep(MsSchedule *s, guint32 op, guint32 dep)
{
    g_return_if_fail(op < s->ops->len);
    Op *o = SCHED_OP(s, op);
    if (o->deps == NULL) {
        o->deps = g_array_new(FALSE, FALSE, sizeof(guint32));
    }
    g_array_append_val(o->deps, dep);
}

void
ms_schedule_set_priority(MsSchedule *s, guint32 op, gint64 priority)
{
    g_return_if_fail(op < s->ops->len);
    SCHED_OP(s, op)->priority = priority;
}

void
ms_schedule_set_flags(MsSchedule *s, guint32 op, guint32 flags)
{
    g_return_if_fail(op < s->ops->len);
    SCHED_OP(s, op)->flags = flags;
}

/* --- validation --- */

static gboolean invalid(GError **error, const char *format, ...) G_GNUC_PRINTF(2, 3);

static gboolean
invalid(GError **error, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, MS_SCHEDULE_ERROR, MS_SCHEDULE_ERROR_INVALID, "%s", msg);
    return FALSE;
}

static gboolean
validate_op(const MsSchedule *s, guint32 i, GError **error)
{
    const Op *o = SCHED_OP(s, i);
    if (o->rank >= s->n_ranks) {
        return invalid(error, "op %u (%s): rank %u out of range (%u ranks)", i, o->label, o->rank,
                       s->n_ranks);
    }
    if (o->stream >= s->streams->len) {
        return invalid(error, "op %u (%s): stream %u does not exist", i, o->label, o->stream);
    }
    MsStreamKind sk = g_array_index(s->streams, Stream, o->stream).kind;
    if ((o->kind == MS_OP_COMM) != (sk == MS_STREAM_COMM)) {
        return invalid(error, "op %u (%s): a %s op on %s stream '%s'", i, o->label,
                       o->kind == MS_OP_COMM ? "communication" : "compute",
                       sk == MS_STREAM_COMM ? "communication" : "compute",
                       g_array_index(s->streams, Stream, o->stream).name);
    }
    if (!isfinite(o->flops) || o->flops < 0 || !isfinite(o->bytes) || o->bytes < 0 ||
        o->flops > 1e21 || o->bytes > 1e18) {
        return invalid(error, "op %u (%s): cost out of range (flops %g, bytes %g)", i, o->label,
                       o->flops, o->bytes);
    }
    /* An hour of host time for one op is a unit mistake, not a framework. */
    if (!isfinite(o->host) || o->host < 0 || o->host > 3600) {
        return invalid(error, "op %u (%s): host time %g s out of range [0, 3600]", i, o->label,
                       o->host);
    }
    if (o->kind == MS_OP_COMM && o->coll >= s->colls->len) {
        return invalid(error, "op %u (%s): collective %u does not exist", i, o->label, o->coll);
    }
    for (guint k = 0; o->deps && k < o->deps->len; k++) {
        guint32 d = g_array_index(o->deps, guint32, k);
        if (d >= s->ops->len || d == i) {
            return invalid(error, "op %u (%s): dependency %u %s", i, o->label, d,
                           d == i ? "is the op itself" : "does not exist");
        }
    }
    return TRUE;
}

static gboolean
validate_coll(const MsSchedule *s, guint32 c, GError **error)
{
    const Coll *coll = SCHED_COLL(s, c);
    if (coll->n == 0) {
        return invalid(error, "collective %u (%s) has no participants", c, coll->label);
    }
    g_autofree guint8 *seen = g_new0(guint8, s->n_ranks);
    guint8 stream = 0;
    for (guint p = 0; p < coll->n; p++) {
        guint32 r = coll->ranks[p], op = coll->ops[p];
        if (r >= s->n_ranks || seen[r]) {
            return invalid(error, "collective %u (%s): rank %u out of range or repeated", c,
                           coll->label, r);
        }
        seen[r] = 1;
        if (op >= s->ops->len || SCHED_OP(s, op)->coll != c || SCHED_OP(s, op)->rank != r) {
            return invalid(error, "collective %u (%s): participant %u has no matching op", c,
                           coll->label, p);
        }
        if (p == 0) {
            stream = SCHED_OP(s, op)->stream;
        } else if (SCHED_OP(s, op)->stream != stream) {
            return invalid(error, "collective %u (%s): participants on different streams", c,
                           coll->label);
        }
    }
    if (coll->kind == MS_COLL_KIND_ALLTOALL && coll->matrix == NULL) {
        return invalid(error, "collective %u (%s): all-to-all without a byte matrix", c,
                       coll->label);
    }
    if (coll->kind == MS_COLL_KIND_ALLTOALL && coll->algo == MS_COLL_ALGO_DEEPEP &&
        coll->rdma == NULL) {
        return invalid(error, "collective %u (%s): deepep all-to-all without its RDMA bytes", c,
                       coll->label);
    }
    return TRUE;
}

/* The graph the dispatcher really waits on: a collective starts only when every participant's
 * dependencies are done, so it is a node of its own that depends on all of them, and each of its
 * ops depends on it alone. A cycle through a collective (op a waits for op b, whose collective
 * has a participant waiting for a) is then a cycle here too. */
typedef struct {
    const MsSchedule *s;
    guint32 *coll_node; /* per op: its collective's node, for a comm op */
    GArray **coll_deps; /* per collective: its participants' dependencies */
} WaitGraph;

static const guint32 *
wait_deps(gconstpointer data, guint32 node, guint *n)
{
    const WaitGraph *w = data;
    guint n_ops = w->s->ops->len;
    if (node >= n_ops) {
        const GArray *d = w->coll_deps[node - n_ops];
        *n = d->len;
        return (const guint32 *)d->data;
    }
    const Op *op = SCHED_OP(w->s, node);
    if (op->kind == MS_OP_COMM) {
        *n = 1;
        return &w->coll_node[node];
    }
    return ms_schedule_op_deps(w->s, node, n);
}

/* A cycle would leave the dispatcher stuck forever: the message names an op on it. */
static gboolean
validate_acyclic(const MsSchedule *s, GError **error)
{
    guint n_ops = s->ops->len, n_colls = s->colls->len;
    WaitGraph w = {s, g_new0(guint32, n_ops), g_new0(GArray *, n_colls)};
    for (guint c = 0; c < n_colls; c++) {
        w.coll_deps[c] = g_array_new(FALSE, FALSE, sizeof(guint32));
    }
    for (guint32 i = 0; i < n_ops; i++) {
        const Op *op = SCHED_OP(s, i);
        if (op->kind != MS_OP_COMM) {
            continue;
        }
        w.coll_node[i] = n_ops + op->coll;
        guint nd = 0;
        const guint32 *d = ms_schedule_op_deps(s, i, &nd);
        g_array_append_vals(w.coll_deps[op->coll], d, nd);
    }
    g_autoptr(MsGraph) g = ms_graph_new(n_ops + n_colls, wait_deps, &w);
    g_autoptr(GArray) cycle = NULL;
    gboolean ok = ms_graph_sort(g, NULL, &cycle);
    for (guint c = 0; c < n_colls; c++) {
        g_array_free(w.coll_deps[c], TRUE);
    }
    g_free(w.coll_deps);
    g_free(w.coll_node);
    if (ok) {
        return TRUE;
    }
    /* Name an op of the cycle (a collective's node is named by one of its ops). */
    guint32 i = g_array_index(cycle, guint32, 0);
    for (guint k = 0; k < cycle->len && i >= n_ops; k++) {
        i = g_array_index(cycle, guint32, k);
    }
    if (i >= n_ops) {
        i = SCHED_COLL(s, i - n_ops)->ops[0];
    }
    return invalid(error, "op %u (%s) is part of a dependency cycle (through deps and collectives)",
                   i, SCHED_OP(s, i)->label);
}

gboolean
ms_schedule_validate(const MsSchedule *s, GError **error)
{
    if (s->streams->len == 0) {
        return invalid(error, "schedule has no streams");
    }
    for (guint i = 0; i < s->ops->len; i++) {
        if (!validate_op(s, i, error)) {
            return FALSE;
        }
    }
    for (guint c = 0; c < s->colls->len; c++) {
        if (!validate_coll(s, c, error)) {
            return FALSE;
        }
    }
    return validate_acyclic(s, error);
}

/* --- reading --- */

guint
ms_schedule_n_ranks(const MsSchedule *s)
{
    return s->n_ranks;
}

guint
ms_schedule_n_streams(const MsSchedule *s)
{
    return s->streams->len;
}

const char *
ms_schedule_stream_name(const MsSchedule *s, guint stream)
{
    g_return_val_if_fail(stream < s->streams->len, NULL);
    return g_array_index(s->streams, Stream, stream).name;
}

MsStreamKind
ms_schedule_stream_kind(const MsSchedule *s, guint stream)
{
    g_return_val_if_fail(stream < s->streams->len, MS_STREAM_COMPUTE);
    return g_array_index(s->streams, Stream, stream).kind;
}

guint
ms_schedule_n_ops(const MsSchedule *s)
{
    return s->ops->len;
}

guint
ms_schedule_n_colls(const MsSchedule *s)
{
    return s->colls->len;
}

void
ms_schedule_op(const MsSchedule *s, guint32 op, MsOpInfo *info)
{
    g_return_if_fail(op < s->ops->len);
    const Op *o = SCHED_OP(s, op);
    *info = (MsOpInfo){
        .id = op,
        .rank = o->rank,
        .stream = o->stream,
        .kind = o->kind,
        .role = o->role,
        .phase = o->phase,
        .flags = o->flags,
        .priority = o->priority,
        .layer = o->layer,
        .chunk = o->chunk,
        .label = o->label,
        .deps = o->deps ? (const guint32 *)o->deps->data : NULL,
        .n_deps = o->deps ? o->deps->len : 0,
        .compute = o->compute,
        .flops = o->flops,
        .bytes = o->bytes,
        .tokens = o->tokens,
        .gemm_m = o->m,
        .gemm_n = o->n,
        .gemm_k = o->k,
        .gemm_count = o->count,
        .experts = o->experts,
        .host_s = o->host,
        .coll = o->coll,
    };
}

void
ms_schedule_coll(const MsSchedule *s, guint32 coll, MsCollInfo *info)
{
    g_return_if_fail(coll < s->colls->len);
    const Coll *c = SCHED_COLL(s, coll);
    *info = (MsCollInfo){
        .id = coll,
        .kind = c->kind,
        .algo = c->algo,
        .window = c->window,
        .n_ranks = c->n,
        .ranks = c->ranks,
        .ops = c->ops,
        .bytes = c->bytes,
        .matrix = c->matrix,
        .rdma = c->rdma,
        .returning = c->returning,
        .label = c->label,
    };
}

const guint32 *
ms_schedule_op_deps(const MsSchedule *s, guint32 op, guint *n)
{
    g_return_val_if_fail(op < s->ops->len, NULL);
    const Op *o = SCHED_OP(s, op);
    *n = o->deps ? o->deps->len : 0;
    return o->deps ? (const guint32 *)o->deps->data : NULL;
}

const guint32 *
ms_schedule_rank_ops(const MsSchedule *s, guint rank, guint *n)
{
    g_return_val_if_fail(rank < s->n_ranks, NULL);
    GArray *a = s->rank_ops->pdata[rank];
    *n = a->len;
    return (const guint32 *)a->data;
}
