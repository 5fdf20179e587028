/* coll_build: turns a collective algorithm into phases (see coll_phase.h): which participants
 * exchange how many bytes with whom, in which order, after which copies. */
#include "coll_phase.h"

#include <string.h>

static guint
gcd(guint a, guint b)
{
    while (b) {
        guint t = a % b;
        a = b;
        b = t;
    }
    return a;
}

void
ms_coll_phase_init(Phase *ph, PhaseKind kind, guint n, guint n_groups, guint m)
{
    memset(ph, 0, sizeof *ph);
    ph->kind = kind;
    ph->n_groups = n_groups;
    ph->m = m;
    ph->members = g_new(guint, (gsize)n_groups * m);
    ph->group_of = g_new(guint, n);
    ph->pos_of = g_new(guint, n);
    for (guint i = 0; i < n; i++) {
        ph->group_of[i] = G_MAXUINT;
    }
    ph->entered = g_new0(guint8, n);
    ph->finished = g_new0(guint8, n);
    ph->pending = g_new0(guint, n);
    ph->preds_left = g_new0(guint, n);
    ph->parked = g_new0(GArray *, n);
}

void
ms_coll_phase_clear(Phase *ph, guint n)
{
    for (guint i = 0; ph->parked && i < n; i++) {
        if (ph->parked[i]) {
            g_array_unref(ph->parked[i]);
        }
    }
    g_free(ph->parked);
    g_free(ph->members);
    g_free(ph->group_of);
    g_free(ph->pos_of);
    g_free(ph->pair_bytes);
    g_free(ph->flow_src);
    g_free(ph->flow_dst);
    g_free(ph->flow_conns);
    g_free(ph->sender_first);
    g_free(ph->self_bytes);
    g_free(ph->order);
    g_free(ph->index_of);
    g_free(ph->done_steps);
    g_free(ph->copy_bytes);
    g_free(ph->entered);
    g_free(ph->finished);
    g_free(ph->pending);
    g_free(ph->preds_left);
    memset(ph, 0, sizeof *ph);
}

/* Where each participant sits: nodes in ascending id order, then local index. */
typedef struct {
    guint n, N, G;      /* participants, nodes, participants per node (0 if uneven) */
    guint *node_idx;    /* per participant: index of its node among the nodes, 0..N-1 */
    const guint *local; /* per participant: local index within its node */
    guint *table;       /* [a * G + k]: participant at node a, local k (only when G != 0) */
    const guint64 *matrix;
    const guint64 *rdma; /* deepep: the RDMA leg's bytes, per pair */
} Layout;

static void
layout_clear(Layout *l)
{
    g_free(l->node_idx);
    g_free(l->table);
}

static gint
cmp_uint(gconstpointer a, gconstpointer b)
{
    guint x = *(const guint *)a, y = *(const guint *)b;
    return x < y ? -1 : x > y;
}

static void
layout_init(Layout *l, guint n, const guint *node_of, const guint *local_of, const guint64 *matrix)
{
    memset(l, 0, sizeof *l);
    l->n = n;
    l->local = local_of;
    l->matrix = matrix;
    l->node_idx = g_new(guint, n);
    /* Distinct node ids, ascending; a participant's node index is found by binary search. */
    g_autoptr(GArray) ids = g_array_sized_new(FALSE, FALSE, sizeof(guint), n);
    g_array_append_vals(ids, node_of, n);
    g_array_sort(ids, cmp_uint);
    guint N = 0;
    guint *u = (guint *)ids->data;
    for (guint i = 0; i < n; i++) {
        if (N == 0 || u[N - 1] != u[i]) {
            u[N++] = u[i];
        }
    }
    l->N = N;
    for (guint i = 0; i < n; i++) {
        guint lo = 0, hi = N;
        while (hi - lo > 1) {
            guint mid = (lo + hi) / 2;
            if (u[mid] <= node_of[i]) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        l->node_idx[i] = lo;
    }
    guint G = n / N;
    if (G * N != n) {
        return;
    }
    l->table = g_new(guint, n);
    memset(l->table, 0xff, n * sizeof(guint));
    for (guint i = 0; i < n; i++) {
        gsize slot = (gsize)l->node_idx[i] * G + local_of[i];
        if (local_of[i] >= G || l->table[slot] != G_MAXUINT) {
            g_clear_pointer(&l->table, g_free);
            return;
        }
        l->table[slot] = i;
    }
    l->G = G;
}

static guint64
mat(const Layout *l, guint src, guint dst)
{
    return l->matrix[(gsize)src * l->n + dst];
}

typedef guint64 (*PairBytesFn)(const Layout *l, guint src, guint dst);

static guint64
direct_bytes(const Layout *l, guint src, guint dst)
{
    return mat(l, src, dst);
}

static guint64
intra_bytes(const Layout *l, guint src, guint dst)
{
    return l->node_idx[src] == l->node_idx[dst] ? mat(l, src, dst) : 0;
}

static guint64
cross_node_bytes(const Layout *l, guint src, guint dst)
{
    return l->node_idx[src] == l->node_idx[dst] ? 0 : mat(l, src, dst);
}

/* 2DH step 1: (a,j) -> (a,k) carries everything (a,j) has for local rank k of any node. */
static guint64
dh_intra_bytes(const Layout *l, guint src, guint dst)
{
    guint64 sum = 0;
    for (guint b = 0; b < l->N; b++) {
        sum += mat(l, src, l->table[b * l->G + l->local[dst]]);
    }
    return sum;
}

/* DeepEP's RDMA leg (a,j) -> (b,j): the tokens counted once per node (the plan's rdma). */
static guint64
rdma_bytes(const Layout *l, guint src, guint dst)
{
    return l->rdma[(gsize)src * l->n + dst];
}

/* DeepEP dispatch, NVLink leg (b,j) -> (b,k): what every GPU (a,j) of local index j, on any
 * node a, has for (b,k): its own tokens (a = b) and those (b,j) received over RDMA to forward.
 * Also what (b,j) keeps (k = j). */
static guint64
deepep_forward_bytes(const Layout *l, guint src, guint dst)
{
    guint64 sum = 0;
    for (guint a = 0; a < l->N; a++) {
        sum += mat(l, l->table[a * l->G + l->local[src]], dst);
    }
    return sum;
}

/* 2DH step 2: (a,k) -> (b,k) carries what every GPU of node a has for (b,k). */
static guint64
dh_inter_bytes(const Layout *l, guint src, guint dst)
{
    guint64 sum = 0;
    for (guint j = 0; j < l->G; j++) {
        sum += mat(l, l->table[l->node_idx[src] * l->G + j], dst);
    }
    return sum;
}

static void
set_member(Phase *ph, guint g, guint p, guint part)
{
    ph->members[(gsize)g * ph->m + p] = part;
    ph->group_of[part] = g;
    ph->pos_of[part] = p;
}

/* Groups: ALL (one group, participants in node-major order), NODES (one group per node),
 * LOCALS (one group per local index, one member per node). */
typedef enum { GROUPS_ALL, GROUPS_NODES, GROUPS_LOCALS } Grouping;

static void
phase_groups(Phase *ph, PhaseKind kind, const Layout *l, Grouping grouping)
{
    guint n = l->n;
    switch (grouping) {
    case GROUPS_ALL:
        ms_coll_phase_init(ph, kind, n, 1, n);
        if (l->table) {
            for (guint i = 0; i < n; i++) {
                set_member(ph, 0, i, l->table[i]);
            }
        } else {
            for (guint i = 0; i < n; i++) {
                set_member(ph, 0, i, i);
            }
        }
        break;
    case GROUPS_NODES:
        ms_coll_phase_init(ph, kind, n, l->N, l->G);
        for (guint a = 0; a < l->N; a++) {
            for (guint k = 0; k < l->G; k++) {
                set_member(ph, a, k, l->table[a * l->G + k]);
            }
        }
        break;
    case GROUPS_LOCALS:
        ms_coll_phase_init(ph, kind, n, l->G, l->N);
        for (guint k = 0; k < l->G; k++) {
            for (guint a = 0; a < l->N; a++) {
                set_member(ph, k, a, l->table[a * l->G + k]);
            }
        }
        break;
    }
}

static void
fill_a2a(Phase *ph, const Layout *l, PairBytesFn fn, guint window, gboolean self_copy)
{
    guint m = ph->m;
    ph->window = window;
    if (self_copy) {
        ph->self_bytes = g_new0(guint64, l->n);
        for (guint i = 0; i < l->n; i++) {
            ph->self_bytes[i] = mat(l, i, i);
        }
    }
    if (m < 2) {
        return;
    }
    ph->pair_bytes = g_new(guint64, (gsize)ph->n_groups * m * (m - 1));
    for (guint g = 0; g < ph->n_groups; g++) {
        for (guint p = 0; p < m; p++) {
            guint src = ph->members[(gsize)g * m + p];
            for (guint r = 1; r < m; r++) {
                guint dst = ph->members[(gsize)g * m + (p + r) % m];
                ph->pair_bytes[((gsize)g * m + p) * (m - 1) + (r - 1)] = fn(l, src, dst);
            }
        }
    }
}

/* Block orders: channel c visits a node's block starting at position c mod b with a stride
 * coprime to b chosen by c / b, so that channel c enters a node at a different GPU (and leaves
 * through a different NIC) than channel c + 1, and channels beyond the node size use other
 * NVLink neighbours. */
void
ms_coll_block_order(guint b, guint c, guint *out)
{
    guint strides[64], n_strides = 0;
    for (guint s = 1; s < MAX(b, 2) && n_strides < G_N_ELEMENTS(strides); s++) {
        if (gcd(s, b) == 1) {
            strides[n_strides++] = s;
        }
    }
    guint stride = b > 1 ? strides[(c / b) % n_strides] : 1;
    for (guint t = 0; t < b; t++) {
        out[t] = (c + t * stride) % b;
    }
}

/* Ring orders: members are node-major; each node's block is visited in its block order. */
static void
fill_ring(Phase *ph, const Layout *l, guint channels, guint steps, guint64 buffer)
{
    guint m = ph->m;
    ph->channels = channels;
    ph->steps = steps;
    ph->buffer = buffer;
    ph->order = g_new(guint, (gsize)ph->n_groups * channels * m);
    ph->index_of = g_new(guint, (gsize)ph->n_groups * channels * m);
    ph->done_steps = g_new0(guint, (gsize)ph->n_groups * channels * m);
    g_autofree guint *block = g_new(guint, MAX(m, 1));
    for (guint g = 0; g < ph->n_groups; g++) {
        for (guint c = 0; c < channels; c++) {
            guint *order = &ph->order[((gsize)g * channels + c) * m];
            guint i = 0;
            for (guint p0 = 0; p0 < m;) {
                guint node = l->node_idx[ph->members[(gsize)g * m + p0]];
                guint b = 0;
                while (p0 + b < m && l->node_idx[ph->members[(gsize)g * m + p0 + b]] == node) {
                    b++;
                }
                ms_coll_block_order(b, c, block);
                for (guint t = 0; t < b; t++) {
                    order[i++] = p0 + block[t];
                }
                p0 += b;
            }
            for (guint k = 0; k < m; k++) {
                ph->index_of[((gsize)g * channels + c) * m + order[k]] = k;
            }
        }
    }
}

guint64
ms_coll_ring_chunk(const Phase *ph, guint c, guint s, guint i)
{
    guint64 slice = ph->buffer / ph->channels + (c < ph->buffer % ph->channels ? 1 : 0);
    guint m = ph->m;
    guint k = (i + m - s % m) % m;
    return slice / m + (k < slice % m ? 1 : 0);
}

/* DeepEP's two legs as concurrent phases. RDMA among the GPUs of each local index; NVLink within
 * each node: in the dispatch (b,j) forwards to (b,k) what local index j of every node has for
 * (b,k) (deepep_forward_bytes), in the combine (b,k) gathers to (b,j) what it returns to local
 * index j of every node (dh_intra_bytes), each keeping its own share as a local copy. */
static gboolean
build_deepep(PhasePlan *plan, const MsCollSpec *spec, const Layout *l, GError **error)
{
    guint n = l->n;
    for (guint i = 0; i < n; i++) {
        for (guint j = 0; j < n; j++) {
            if (l->rdma[(gsize)i * n + j] > 0 &&
                (l->node_idx[i] == l->node_idx[j] || l->local[i] != l->local[j])) {
                g_set_error(error, MS_COLL_ERROR, MS_COLL_ERROR_INVALID,
                            "deepep: %" G_GUINT64_FORMAT " RDMA bytes from participant %u to %u, "
                            "which are not GPUs of the same local index on two nodes",
                            l->rdma[(gsize)i * n + j], i, j);
                return FALSE;
            }
        }
    }
    Phase *ph = plan->phases;
    PairBytesFn nvl = spec->returning ? dh_intra_bytes : deepep_forward_bytes;
    phase_groups(&ph[0], PHASE_A2A, l, GROUPS_LOCALS);
    fill_a2a(&ph[0], l, rdma_bytes, spec->window, FALSE);
    phase_groups(&ph[1], PHASE_A2A, l, GROUPS_NODES);
    fill_a2a(&ph[1], l, nvl, spec->window, FALSE);
    ph[1].self_bytes = g_new0(guint64, n);
    for (guint i = 0; i < n; i++) {
        ph[1].self_bytes[i] = nvl(l, i, i);
    }
    plan->n_phases = 2;
    return TRUE;
}

static void
chain(Phase *ph, guint pred)
{
    ph->n_preds = 1;
    ph->preds[0] = pred;
}

static gboolean
need_uniform(const Layout *l, const char *algo, GError **error)
{
    if (l->G == 0) {
        g_set_error(error, MS_COLL_ERROR, MS_COLL_ERROR_INVALID,
                    "%s needs the same number of ranks on every node (%u ranks on %u nodes)", algo,
                    l->n, l->N);
        return FALSE;
    }
    return TRUE;
}

gboolean
ms_coll_build_phases(PhasePlan *plan, const MsCollSpec *spec, const guint64 *matrix,
                     const guint *node_of, const guint *local_of, GError **error)
{
    Layout l;
    layout_init(&l, spec->n_ranks, node_of, local_of, matrix);
    memset(plan, 0, sizeof *plan);
    Phase *ph = plan->phases;
    gboolean ok = TRUE;
    guint n = spec->n_ranks, C = spec->channels;
    /* A hierarchy of one level is none: on one node (or one GPU per node) 2DH is the direct
     * all-to-all, as Tutel's and ScheMoE's implementations fall back to it (ScheMoE's
     * dd_comm.cpp: hierarchical only when neither ngpus nor nnodes is 1). */
    gboolean flat = spec->algo == MS_COLL_ALGO_2DH && l.G != 0 && (l.N == 1 || l.G == 1);
    switch (spec->op) {
    case MS_COLL_ALLTOALL:
        if (spec->algo == MS_COLL_ALGO_DIRECT || flat) {
            phase_groups(&ph[0], PHASE_A2A, &l, GROUPS_ALL);
            fill_a2a(&ph[0], &l, direct_bytes, spec->window, TRUE);
            plan->n_phases = 1;
        } else if (spec->algo == MS_COLL_ALGO_DEEPEP) {
            l.rdma = spec->rdma;
            ok = need_uniform(&l, "deepep", error) && build_deepep(plan, spec, &l, error);
        } else if (spec->algo == MS_COLL_ALGO_PIPE) {
            if (!(ok = need_uniform(&l, "pipe", error))) {
                break;
            }
            phase_groups(&ph[0], PHASE_A2A, &l, GROUPS_NODES);
            fill_a2a(&ph[0], &l, intra_bytes, spec->window, TRUE);
            phase_groups(&ph[1], PHASE_A2A, &l, GROUPS_ALL);
            fill_a2a(&ph[1], &l, cross_node_bytes, spec->window, FALSE);
            plan->n_phases = 2;
        } else {
            if (!(ok = need_uniform(&l, "2dh", error))) {
                break;
            }
            phase_groups(&ph[0], PHASE_A2A, &l, GROUPS_NODES);
            fill_a2a(&ph[0], &l, dh_intra_bytes, 0, FALSE);
            phase_groups(&ph[1], PHASE_COPY, &l, GROUPS_ALL);
            phase_groups(&ph[2], PHASE_A2A, &l, GROUPS_LOCALS);
            fill_a2a(&ph[2], &l, dh_inter_bytes, 0, FALSE);
            phase_groups(&ph[3], PHASE_COPY, &l, GROUPS_ALL);
            ph[1].copy_bytes = g_new0(guint64, n);
            ph[3].copy_bytes = g_new0(guint64, n);
            for (guint src = 0; src < n; src++) {
                for (guint dst = 0; dst < n; dst++) {
                    guint64 b = mat(&l, src, dst);
                    /* Step 1 leaves at (a, local(dst)) all of node a's data for local(dst). */
                    ph[1].copy_bytes[l.table[l.node_idx[src] * l.G + l.local[dst]]] += b;
                    ph[3].copy_bytes[dst] += b;
                }
            }
            chain(&ph[1], 0);
            chain(&ph[2], 1);
            chain(&ph[3], 2);
            plan->n_phases = 4;
        }
        break;
    case MS_COLL_ALLREDUCE:
        if (spec->algo == MS_COLL_ALGO_HIER) {
            if (!(ok = need_uniform(&l, "hier", error))) {
                break;
            }
            phase_groups(&ph[0], PHASE_RING, &l, GROUPS_NODES);
            fill_ring(&ph[0], &l, C, l.G - 1, spec->bytes);
            phase_groups(&ph[1], PHASE_RING, &l, GROUPS_LOCALS);
            fill_ring(&ph[1], &l, C, 2 * (l.N - 1), spec->bytes / l.G);
            phase_groups(&ph[2], PHASE_RING, &l, GROUPS_NODES);
            fill_ring(&ph[2], &l, C, l.G - 1, spec->bytes);
            chain(&ph[1], 0);
            chain(&ph[2], 1);
            plan->n_phases = 3;
        } else {
            phase_groups(&ph[0], PHASE_RING, &l, GROUPS_ALL);
            fill_ring(&ph[0], &l, C, 2 * (n - 1), spec->bytes);
            plan->n_phases = 1;
        }
        break;
    case MS_COLL_REDUCESCATTER:
    case MS_COLL_ALLGATHER:
        phase_groups(&ph[0], PHASE_RING, &l, GROUPS_ALL);
        fill_ring(&ph[0], &l, C, n - 1, spec->bytes);
        plan->n_phases = 1;
        break;
    }
    layout_clear(&l);
    return ok;
}
