/* placement: expert replicas per rank group, and the token traffic of one MoE layer under them.
 * Traffic is kept as a list of (source, expert, destination, token slots) shares so that chunks
 * and per-expert receive counts are exact integer cuts of the same numbers. */
#include "placement.h"

#include <string.h>

struct _MsPlacement {
    guint n_ranks, experts, group_size, n_groups;
    gboolean local_first; /* a source hosting the expert keeps its tokens */
    GArray **replicas;    /* [group * experts + expert]: guint ranks */
    GArray **local;       /* [rank]: guint experts hosted, in the order added */
};

MsPlacement *
ms_placement_new(guint n_ranks, guint experts, guint group_size)
{
    g_return_val_if_fail(n_ranks > 0 && experts > 0, NULL);
    g_return_val_if_fail(group_size > 0 && n_ranks % group_size == 0, NULL);
    MsPlacement *p = g_new0(MsPlacement, 1);
    p->n_ranks = n_ranks;
    p->experts = experts;
    p->group_size = group_size;
    p->n_groups = n_ranks / group_size;
    p->replicas = g_new(GArray *, (gsize)p->n_groups * experts);
    for (gsize i = 0; i < (gsize)p->n_groups * experts; i++) {
        p->replicas[i] = g_array_new(FALSE, FALSE, sizeof(guint));
    }
    p->local = g_new(GArray *, n_ranks);
    for (guint r = 0; r < n_ranks; r++) {
        p->local[r] = g_array_new(FALSE, FALSE, sizeof(guint));
    }
    return p;
}

MsPlacement *
ms_placement_new_ep(guint n_ranks, guint experts, guint ep)
{
    g_return_val_if_fail(ep > 0 && n_ranks % ep == 0 && experts % ep == 0, NULL);
    MsPlacement *p = ms_placement_new(n_ranks, experts, ep);
    guint per_rank = experts / ep;
    for (guint g = 0; g < p->n_groups; g++) {
        for (guint e = 0; e < experts; e++) {
            ms_placement_add(p, g, e, g * ep + e / per_rank);
        }
    }
    return p;
}

MsPlacement *
ms_placement_new_static(guint n_ranks, guint experts)
{
    MsPlacement *p = ms_placement_new(n_ranks, experts, n_ranks);
    for (guint e = 0; e < experts; e++) {
        ms_placement_add(p, 0, e, (guint)((guint64)e * n_ranks / experts));
    }
    return p;
}

MsPlacement *
ms_placement_copy(const MsPlacement *src)
{
    MsPlacement *p = ms_placement_new(src->n_ranks, src->experts, src->group_size);
    p->local_first = src->local_first;
    for (guint g = 0; g < src->n_groups; g++) {
        for (guint e = 0; e < src->experts; e++) {
            guint n = 0;
            const guint *r = ms_placement_replicas(src, g, e, &n);
            for (guint k = 0; k < n; k++) {
                ms_placement_add(p, g, e, r[k]);
            }
        }
    }
    return p;
}

void
ms_placement_free(MsPlacement *p)
{
    if (p == NULL) {
        return;
    }
    for (gsize i = 0; i < (gsize)p->n_groups * p->experts; i++) {
        g_array_unref(p->replicas[i]);
    }
    for (guint r = 0; r < p->n_ranks; r++) {
        g_array_unref(p->local[r]);
    }
    g_free(p->replicas);
    g_free(p->local);
    g_free(p);
}

void
ms_placement_add(MsPlacement *p, guint group, guint expert, guint rank)
{
    g_return_if_fail(group < p->n_groups && expert < p->experts);
    g_return_if_fail(rank / p->group_size == group);
    g_return_if_fail(!ms_placement_hosts(p, rank, expert));
    g_array_append_val(p->replicas[(gsize)group * p->experts + expert], rank);
    g_array_append_val(p->local[rank], expert);
}

void
ms_placement_set_local_first(MsPlacement *p, gboolean local_first)
{
    p->local_first = local_first;
}

gboolean
ms_placement_local_first(const MsPlacement *p)
{
    return p->local_first;
}

guint
ms_placement_n_ranks(const MsPlacement *p)
{
    return p->n_ranks;
}

guint
ms_placement_n_experts(const MsPlacement *p)
{
    return p->experts;
}

guint
ms_placement_group_size(const MsPlacement *p)
{
    return p->group_size;
}

guint
ms_placement_n_groups(const MsPlacement *p)
{
    return p->n_groups;
}

const guint *
ms_placement_replicas(const MsPlacement *p, guint group, guint expert, guint *n)
{
    g_return_val_if_fail(group < p->n_groups && expert < p->experts, NULL);
    GArray *a = p->replicas[(gsize)group * p->experts + expert];
    *n = a->len;
    return (const guint *)a->data;
}

gboolean
ms_placement_hosts(const MsPlacement *p, guint rank, guint expert)
{
    g_return_val_if_fail(rank < p->n_ranks, FALSE);
    const GArray *a = p->local[rank];
    for (guint k = 0; k < a->len; k++) {
        if (g_array_index(a, guint, k) == expert) {
            return TRUE;
        }
    }
    return FALSE;
}

guint
ms_placement_n_local(const MsPlacement *p, guint rank)
{
    g_return_val_if_fail(rank < p->n_ranks, 0);
    return p->local[rank]->len;
}

gboolean
ms_placement_complete(const MsPlacement *p)
{
    for (gsize i = 0; i < (gsize)p->n_groups * p->experts; i++) {
        if (p->replicas[i]->len == 0) {
            return FALSE;
        }
    }
    return TRUE;
}

gboolean
ms_placement_equal(const MsPlacement *a, const MsPlacement *b)
{
    if (a->n_ranks != b->n_ranks || a->experts != b->experts || a->group_size != b->group_size) {
        return FALSE;
    }
    for (guint r = 0; r < a->n_ranks; r++) {
        if (a->local[r]->len != b->local[r]->len) {
            return FALSE;
        }
        for (guint k = 0; k < a->local[r]->len; k++) {
            if (!ms_placement_hosts(b, r, g_array_index(a->local[r], guint, k))) {
                return FALSE;
            }
        }
    }
    return TRUE;
}

/* --- traffic --- */

typedef struct {
    guint expert;
    guint src, dst;
    guint64 slots;
} Share;

struct _MsTraffic {
    const MsPlacement *p;
    guint64 dropped;
    GArray *shares;   /* Share, grouped by source rank */
    guint *src_first; /* [n_ranks + 1] index of each source's first share */
    guint *by_dst;    /* share indices grouped by destination rank */
    guint *dst_first; /* [n_ranks + 1] index into by_dst of each destination's first share */
};

/* Share j of x tokens over n replicas, rotated by the source so that remainders spread. */
static guint64
replica_share(guint64 x, guint n, guint j, guint src)
{
    guint pos = (j + n - src % n) % n;
    return x / n + (pos < x % n ? 1 : 0);
}

/* Counting sort of the shares by destination, so a rank's receive counts cost its own shares. */
static void
index_by_dst(MsTraffic *t)
{
    guint n = t->p->n_ranks, len = t->shares->len;
    t->dst_first = g_new0(guint, n + 1);
    t->by_dst = g_new(guint, MAX(len, 1));
    for (guint i = 0; i < len; i++) {
        t->dst_first[g_array_index(t->shares, Share, i).dst + 1]++;
    }
    for (guint r = 0; r < n; r++) {
        t->dst_first[r + 1] += t->dst_first[r];
    }
    g_autofree guint *fill = g_memdup2(t->dst_first, sizeof(guint) * (n + 1));
    for (guint i = 0; i < len; i++) {
        t->by_dst[fill[g_array_index(t->shares, Share, i).dst]++] = i;
    }
}

MsTraffic *
ms_traffic_new(const MsRouting *routing, guint moe_layer, const MsPlacement *p,
               const guint64 *capacity)
{
    const MsTraceHeader *h = ms_routing_header(routing);
    g_return_val_if_fail(h->ranks == p->n_ranks && h->experts == p->experts, NULL);
    g_return_val_if_fail(moe_layer < h->layers, NULL);
    MsTraffic *t = g_new0(MsTraffic, 1);
    t->p = p;
    t->shares = g_array_new(FALSE, FALSE, sizeof(Share));
    t->src_first = g_new0(guint, p->n_ranks + 1);
    for (guint src = 0; src < p->n_ranks; src++) {
        t->src_first[src] = t->shares->len;
        const guint32 *counts = ms_routing_counts(routing, moe_layer, src);
        guint group = src / p->group_size;
        for (guint e = 0; e < p->experts; e++) {
            guint64 x = counts[e];
            if (capacity && capacity[src] > 0) {
                t->dropped += x > capacity[src] ? x - capacity[src] : 0;
                x = capacity[src];
            }
            guint n = 0;
            const guint *reps = ms_placement_replicas(p, group, e, &n);
            if (p->local_first && ms_placement_hosts(p, src, e)) {
                Share s = {e, src, src, x};
                if (s.slots > 0) {
                    g_array_append_val(t->shares, s);
                }
                continue;
            }
            for (guint j = 0; j < n; j++) {
                Share s = {e, src, reps[j], replica_share(x, n, j, src)};
                if (s.slots > 0) {
                    g_array_append_val(t->shares, s);
                }
            }
        }
    }
    t->src_first[p->n_ranks] = t->shares->len;
    index_by_dst(t);
    return t;
}

void
ms_traffic_free(MsTraffic *t)
{
    if (t == NULL) {
        return;
    }
    g_array_unref(t->shares);
    g_free(t->src_first);
    g_free(t->by_dst);
    g_free(t->dst_first);
    g_free(t);
}

const MsPlacement *
ms_traffic_placement(const MsTraffic *t)
{
    return t->p;
}

guint64
ms_traffic_dropped(const MsTraffic *t)
{
    return t->dropped;
}

static const Share *
share_at(const MsTraffic *t, guint i)
{
    return &g_array_index(t->shares, Share, i);
}

guint64
ms_traffic_tokens(const MsTraffic *t, guint src, guint dst)
{
    g_return_val_if_fail(src < t->p->n_ranks, 0);
    guint64 sum = 0;
    for (guint i = t->src_first[src]; i < t->src_first[src + 1]; i++) {
        sum += share_at(t, i)->dst == dst ? share_at(t, i)->slots : 0;
    }
    return sum;
}

guint64
ms_traffic_sent_off_rank(const MsTraffic *t, guint src)
{
    g_return_val_if_fail(src < t->p->n_ranks, 0);
    guint64 sum = 0;
    for (guint i = t->src_first[src]; i < t->src_first[src + 1]; i++) {
        sum += share_at(t, i)->dst != src ? share_at(t, i)->slots : 0;
    }
    return sum;
}

static guint64
part(guint64 x, guint c, guint k)
{
    return x / k + (c < x % k ? 1 : 0);
}

void
ms_traffic_chunk_matrix(const MsTraffic *t, guint group, guint c, guint k, guint64 *matrix)
{
    g_return_if_fail(k > 0 && c < k && group < t->p->n_groups);
    guint n = t->p->group_size, first = group * n;
    memset(matrix, 0, sizeof(guint64) * n * n);
    for (guint src = first; src < first + n; src++) {
        for (guint i = t->src_first[src]; i < t->src_first[src + 1]; i++) {
            const Share *s = share_at(t, i);
            matrix[(gsize)(src - first) * n + (s->dst - first)] += part(s->slots, c, k);
        }
    }
}

guint64
ms_traffic_chunk_received(const MsTraffic *t, guint rank, guint c, guint k, guint64 *per_expert)
{
    g_return_val_if_fail(k > 0 && c < k && rank < t->p->n_ranks, 0);
    memset(per_expert, 0, sizeof(guint64) * t->p->experts);
    guint64 total = 0;
    for (guint i = t->dst_first[rank]; i < t->dst_first[rank + 1]; i++) {
        const Share *s = share_at(t, t->by_dst[i]);
        guint64 x = part(s->slots, c, k);
        per_expert[s->expert] += x;
        total += x;
    }
    return total;
}

/* Whether a share between group-local ranks i and j belongs to peer chunk c. */
static gboolean
in_peer_chunk(guint i, guint j, guint c, guint peers, guint n_peer_groups)
{
    return (j / peers + n_peer_groups - i / peers) % n_peer_groups == c;
}

void
ms_traffic_peer_matrix(const MsTraffic *t, guint group, guint c, guint peers, guint64 *matrix)
{
    guint n = t->p->group_size, first = group * n;
    g_return_if_fail(peers > 0 && n % peers == 0 && c < n / peers && group < t->p->n_groups);
    memset(matrix, 0, sizeof(guint64) * n * n);
    for (guint src = first; src < first + n; src++) {
        for (guint i = t->src_first[src]; i < t->src_first[src + 1]; i++) {
            const Share *s = share_at(t, i);
            if (in_peer_chunk(src - first, s->dst - first, c, peers, n / peers)) {
                matrix[(gsize)(src - first) * n + (s->dst - first)] += s->slots;
            }
        }
    }
}

guint64
ms_traffic_peer_received(const MsTraffic *t, guint rank, guint c, guint peers, guint64 *per_expert)
{
    guint n = t->p->group_size, first = rank / n * n;
    g_return_val_if_fail(peers > 0 && n % peers == 0 && c < n / peers && rank < t->p->n_ranks, 0);
    memset(per_expert, 0, sizeof(guint64) * t->p->experts);
    guint64 total = 0;
    for (guint i = t->dst_first[rank]; i < t->dst_first[rank + 1]; i++) {
        const Share *s = share_at(t, t->by_dst[i]);
        if (in_peer_chunk(s->src - first, rank - first, c, peers, n / peers)) {
            per_expert[s->expert] += s->slots;
            total += s->slots;
        }
    }
    return total;
}
