/* topology_route: routes between devices and the load-time check that every GPU reaches every
 * other. A route is a fewest-hops path (at most TOPO_MAX_HOPS links); ties go to the larger
 * bottleneck bandwidth, then the lower latency, then the lower index of the previous device
 * (in a preset's fat tree, the spine its routing picks instead). GPUs never forward, and a NIC
 * forwards only between its host side and the network. Routes are computed per source on first
 * use and cached; the search ignores calibration changes (it uses the figures as loaded). In a
 * preset, routes between GPUs come from its shape (topology_shape.c), cached in blocks of
 * TOPO_BLOCK destinations, so memory follows the pairs used rather than sources x devices. */
#include "topology_private.h"

#include <string.h>

/* A NIC is entered from its host side or from the network; what it may forward to depends on
 * which, so the search runs over states (device, side): state = device * 2 + side. */
typedef struct {
    MsBandwidth bw; /* bottleneck so far */
    MsTime lat;     /* latency so far */
    guint32 pred;   /* label it extends, TOPO_NONE at the source */
    guint32 link;   /* link that reaches this state, TOPO_NONE at the source */
    guint32 next;   /* next label of the same state */
} Label;

struct _TopoScratch {
    gint32 *dist;   /* hops to each state, -1 when not reached */
    guint32 *queue; /* states in breadth-first order */
    guint32 *head;  /* first label of each state */
    GArray *labels;
};

/* Whether `other` is on the network side of NIC `nic` (outside its node). */
static inline gboolean
network_side(const MsTopology *topo, guint nic, guint other)
{
    return topo_dev(topo, other)->node != topo_dev(topo, nic)->node;
}

static inline guint32
arrival_state(const MsTopology *topo, const MsLink *l)
{
    gboolean side =
        topo_dev(topo, l->to)->kind == MS_DEVICE_NIC && network_side(topo, l->to, l->from);
    return l->to * 2 + side;
}

/* Forwarding rules: the source sends anywhere; GPUs never forward; a NIC forwards host traffic
 * to the network and network traffic to its host, never host to host or network to network. */
static inline gboolean
may_leave(const MsTopology *topo, guint32 state, guint src, const MsLink *l)
{
    guint d = state / 2;
    if (d == src) {
        return TRUE;
    }
    switch (topo_dev(topo, d)->kind) {
    case MS_DEVICE_GPU:
        return FALSE;
    case MS_DEVICE_NIC:
        return network_side(topo, d, l->to) != (gboolean)(state & 1);
    default:
        return TRUE;
    }
}

static TopoScratch *
scratch_get(MsTopology *topo)
{
    if (topo->scratch == NULL) {
        guint n_states = topo->devices->len * 2;
        TopoScratch *s = g_new0(TopoScratch, 1);
        s->dist = g_new(gint32, n_states);
        s->queue = g_new(guint32, n_states);
        s->head = g_new(guint32, n_states);
        s->labels = g_array_new(FALSE, FALSE, sizeof(Label));
        topo->scratch = s;
    }
    return topo->scratch;
}

static void
scratch_free(TopoScratch *s)
{
    if (s) {
        g_free(s->dist);
        g_free(s->queue);
        g_free(s->head);
        g_array_unref(s->labels);
        g_free(s);
    }
}

#define LABEL(s, i) (&g_array_index((s)->labels, Label, (i)))

/* Offers the extension of label `pred` over `link` to state w. Labels of a state form a Pareto
 * set (no label has both a smaller bottleneck and a larger latency than another); on an exact
 * tie the lower previous device wins, which makes the result independent of visiting order. */
static void
offer(const MsTopology *topo, TopoScratch *s, guint32 w, guint32 pred, guint32 link)
{
    const TopoLinkExtra *x = &g_array_index(topo->link_extra, TopoLinkExtra, link);
    MsBandwidth bw = MIN(LABEL(s, pred)->bw, x->select_bw);
    MsTime lat = LABEL(s, pred)->lat + x->select_lat;
    guint32 from = topo_link(topo, link)->from;
    guint32 prev = TOPO_NONE;
    for (guint32 i = s->head[w]; i != TOPO_NONE;) {
        Label *old = LABEL(s, i);
        guint32 next = old->next;
        if (old->bw >= bw && old->lat <= lat) {
            if (old->bw == bw && old->lat == lat && from < topo_link(topo, old->link)->from) {
                old->pred = pred;
                old->link = link;
            }
            return;
        }
        if (bw >= old->bw && lat <= old->lat) {
            if (prev == TOPO_NONE) {
                s->head[w] = next;
            } else {
                LABEL(s, prev)->next = next;
            }
        } else {
            prev = i;
        }
        i = next;
    }
    Label fresh = {bw, lat, pred, link, s->head[w]};
    g_array_append_val(s->labels, fresh);
    s->head[w] = s->labels->len - 1;
}

/* Breadth-first over states from src, carrying Pareto labels layer by layer: every label of a
 * state exists before the state is expanded, because its predecessors sit in earlier layers. */
static void
search(const MsTopology *topo, TopoScratch *s, guint src)
{
    guint n_states = topo->devices->len * 2;
    memset(s->dist, 0xff, sizeof(gint32) * n_states);
    memset(s->head, 0xff, sizeof(guint32) * n_states);
    g_array_set_size(s->labels, 0);
    Label root = {INFINITY, 0, TOPO_NONE, TOPO_NONE, TOPO_NONE};
    g_array_append_val(s->labels, root);
    s->dist[src * 2] = 0;
    s->head[src * 2] = 0;
    s->queue[0] = src * 2;
    guint qlen = 1;
    for (guint qi = 0; qi < qlen; qi++) {
        guint32 u = s->queue[qi];
        if (s->dist[u] >= TOPO_MAX_HOPS) {
            continue;
        }
        for (guint32 k = topo->out_start[u / 2]; k < topo->out_start[u / 2 + 1]; k++) {
            guint32 li = topo->out_links[k];
            const MsLink *l = topo_link(topo, li);
            if (!may_leave(topo, u, src, l)) {
                continue;
            }
            guint32 w = arrival_state(topo, l);
            if (s->dist[w] < 0) {
                s->dist[w] = s->dist[u] + 1;
                s->queue[qlen++] = w;
            }
            if (s->dist[w] != s->dist[u] + 1) {
                continue;
            }
            for (guint32 lab = s->head[u]; lab != TOPO_NONE; lab = LABEL(s, lab)->next) {
                offer(topo, s, w, lab, li);
            }
        }
    }
}

/* Whether label a beats label b (both at the same hop count). */
static gboolean
better(const MsTopology *topo, const Label *a, const Label *b)
{
    if (a->bw != b->bw) {
        return a->bw > b->bw;
    }
    if (a->lat != b->lat) {
        return a->lat < b->lat;
    }
    return topo_link(topo, a->link)->from < topo_link(topo, b->link)->from;
}

/* The chosen label for device d (over both of its states), TOPO_NONE when unreached. */
static guint32
best_label(const MsTopology *topo, const TopoScratch *s, guint d, guint32 *hops)
{
    guint32 best = TOPO_NONE, best_hops = 0;
    for (guint st = d * 2; st < d * 2 + 2; st++) {
        if (s->dist[st] < 0) {
            continue;
        }
        guint32 h = s->dist[st];
        for (guint32 lab = s->head[st]; lab != TOPO_NONE; lab = LABEL(s, lab)->next) {
            if (best == TOPO_NONE || h < best_hops ||
                (h == best_hops && better(topo, LABEL(s, lab), LABEL(s, best)))) {
                best = lab;
                best_hops = h;
            }
        }
    }
    *hops = best_hops;
    return best;
}

static const TopoGivenRoute *
given_first(const MsTopology *topo, guint src)
{
    guint lo = 0, hi = topo->given->len;
    while (lo < hi) {
        guint mid = (lo + hi) / 2;
        if (g_array_index(topo->given, TopoGivenRoute, mid).src < src) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < topo->given->len ? &g_array_index(topo->given, TopoGivenRoute, lo) : NULL;
}

/* Lays the routes from src out in one block: given routes as given, the others from labels. */
static TopoRouteTable *
build_table(MsTopology *topo, guint src)
{
    TopoScratch *s = scratch_get(topo);
    search(topo, s, src);
    guint n = topo->devices->len;
    const TopoGivenRoute *given = given_first(topo, src);
    /* Without given routes the array's data is NULL, and NULL + 0 is undefined in C. */
    const TopoGivenRoute *given_end =
        given ? (const TopoGivenRoute *)topo->given->data + topo->given->len : NULL;
    g_autofree guint32 *best = g_new(guint32, n);
    g_autofree guint32 *hops = g_new0(guint32, n);
    guint64 total = 0;
    const TopoGivenRoute *g = given;
    for (guint d = 0; d < n; d++) {
        if (g && g < given_end && g->src == src && g->dst == d) {
            best[d] = TOPO_NONE;
            hops[d] = g->n;
            g++;
        } else {
            best[d] = best_label(topo, s, d, &hops[d]);
        }
        total += hops[d];
    }
    gsize size = sizeof(TopoRouteTable) + sizeof(guint32) * (n + 1 + total) + n;
    TopoRouteTable *t = g_malloc(size);
    t->start = (guint32 *)(t + 1);
    t->links = t->start + n + 1;
    t->reach = (guint8 *)(t->links + total);
    guint32 at = 0;
    g = given;
    for (guint d = 0; d < n; d++) {
        t->start[d] = at;
        if (g && g < given_end && g->src == src && g->dst == d) {
            memcpy(t->links + at, g->links, sizeof(guint32) * g->n);
            t->reach[d] = 1;
            g++;
        } else {
            t->reach[d] = best[d] != TOPO_NONE;
            guint32 i = at + hops[d];
            for (guint32 lab = best[d]; lab != TOPO_NONE && LABEL(s, lab)->link != TOPO_NONE;
                 lab = LABEL(s, lab)->pred) {
                t->links[--i] = LABEL(s, lab)->link;
            }
            topo_shape_respine(topo, src, d, t->links + at, hops[d]);
        }
        at += hops[d];
    }
    t->start[n] = at;
    return t;
}

/* The hot path reads the published table without locking; the lock only serialises builds. The
 * cache is the one mutable part of a topology, hence the cast. */
static const TopoRouteTable *
table_for(const MsTopology *ctopo, guint src)
{
    MsTopology *topo = (MsTopology *)ctopo;
    TopoRouteTable *t = g_atomic_pointer_get(&topo->routes[src]);
    if (t != NULL) {
        return t;
    }
    g_mutex_lock(&topo->route_lock);
    t = topo->routes[src];
    if (t == NULL) {
        t = build_table(topo, src);
        g_atomic_pointer_set(&topo->routes[src], t);
    }
    g_mutex_unlock(&topo->route_lock);
    return t;
}

/* The given route from src to dst, or NULL. */
static const TopoGivenRoute *
given_find(const MsTopology *topo, guint src, guint dst)
{
    guint lo = 0, hi = topo->given->len;
    while (lo < hi) {
        guint mid = (lo + hi) / 2;
        const TopoGivenRoute *g = &g_array_index(topo->given, TopoGivenRoute, mid);
        if (g->src < src || (g->src == src && g->dst < dst)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    const TopoGivenRoute *g =
        lo < topo->given->len ? &g_array_index(topo->given, TopoGivenRoute, lo) : NULL;
    return g && g->src == src && g->dst == dst ? g : NULL;
}

/* Routes from rank src to the ranks of block b: given ones as given, the others from the shape. */
static TopoRouteBlock *
build_block(const MsTopology *topo, guint src, guint b)
{
    guint first = b * TOPO_BLOCK, count = MIN(TOPO_BLOCK, topo->n_gpus - first);
    guint32 buf[TOPO_BLOCK * TOPO_SHAPE_HOPS], len[TOPO_BLOCK];
    const TopoGivenRoute *given[TOPO_BLOCK];
    guint32 total = 0, used = 0;
    for (guint i = 0; i < count; i++) {
        given[i] = topo->given->len
                       ? given_find(topo, topo->gpu_devices[src], topo->gpu_devices[first + i])
                       : NULL;
        len[i] = given[i] ? given[i]->n : topo_shape_gpu_route(topo, src, first + i, buf + used);
        used += given[i] ? 0 : len[i];
        total += len[i];
    }
    TopoRouteBlock *blk = g_malloc(sizeof(TopoRouteBlock) + sizeof(guint32) * MAX(total, 1));
    guint32 at = 0;
    used = 0;
    for (guint i = 0; i < count; i++) {
        blk->start[i] = at;
        memcpy(blk->links + at, given[i] ? given[i]->links : buf + used, sizeof(guint32) * len[i]);
        used += given[i] ? 0 : len[i];
        at += len[i];
    }
    for (guint i = count; i <= TOPO_BLOCK; i++) {
        blk->start[i] = at;
    }
    return blk;
}

/* A preset's route between two GPU ranks; the same lock-free publication as table_for. */
static const guint32 *
gpu_route(const MsTopology *ctopo, guint src, guint dst, guint *n_links)
{
    MsTopology *topo = (MsTopology *)ctopo;
    guint b = dst / TOPO_BLOCK, i = dst % TOPO_BLOCK;
    TopoRouteBlock **blocks = g_atomic_pointer_get(&topo->gpu_blocks[src]);
    TopoRouteBlock *blk = blocks ? g_atomic_pointer_get(&blocks[b]) : NULL;
    if (blk == NULL) {
        g_mutex_lock(&topo->route_lock);
        blocks = topo->gpu_blocks[src];
        if (blocks == NULL) {
            blocks = g_new0(TopoRouteBlock *, (topo->n_gpus + TOPO_BLOCK - 1) / TOPO_BLOCK);
            g_atomic_pointer_set(&topo->gpu_blocks[src], blocks);
        }
        blk = blocks[b];
        if (blk == NULL) {
            blk = build_block(topo, src, b);
            g_atomic_pointer_set(&blocks[b], blk);
        }
        g_mutex_unlock(&topo->route_lock);
    }
    *n_links = blk->start[i + 1] - blk->start[i];
    return blk->links + blk->start[i];
}

const guint32 *
ms_topology_route(const MsTopology *topo, guint src, guint dst, guint *n_links, GError **error)
{
    g_return_val_if_fail(src < topo->devices->len && dst < topo->devices->len, NULL);
    if (topo->shape && topo_dev(topo, src)->kind == MS_DEVICE_GPU &&
        topo_dev(topo, dst)->kind == MS_DEVICE_GPU) {
        return gpu_route(topo, topo_dev(topo, src)->rank, topo_dev(topo, dst)->rank, n_links);
    }
    const TopoRouteTable *t = table_for(topo, src);
    if (!t->reach[dst]) {
        g_set_error(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_UNREACHABLE,
                    "%s: no route from %s to %s (routes have at most %d links and never pass "
                    "through a GPU)",
                    topo->name, topo_dev(topo, src)->name, topo_dev(topo, dst)->name,
                    TOPO_MAX_HOPS);
        return NULL;
    }
    *n_links = t->start[dst + 1] - t->start[dst];
    return t->links + t->start[dst];
}

const guint32 *
ms_topology_gpu_route(const MsTopology *topo, guint src_rank, guint dst_rank, guint *n_links,
                      GError **error)
{
    g_return_val_if_fail(src_rank < topo->n_gpus && dst_rank < topo->n_gpus, NULL);
    return ms_topology_route(topo, topo->gpu_devices[src_rank], topo->gpu_devices[dst_rank],
                             n_links, error);
}

MsTime
ms_topology_route_latency(const MsTopology *topo, const guint32 *route, guint n_links)
{
    MsTime sum = 0;
    for (guint i = 0; i < n_links; i++) {
        sum += topo_link(topo, route[i])->latency;
    }
    return sum;
}

MsBandwidth
ms_topology_route_bandwidth(const MsTopology *topo, const guint32 *route, guint n_links)
{
    MsBandwidth bw = INFINITY;
    for (guint i = 0; i < n_links; i++) {
        bw = MIN(bw, topo_link(topo, route[i])->bandwidth);
    }
    return bw;
}

void
topo_routes_clear(MsTopology *topo)
{
    if (topo->gpu_blocks) {
        guint n_blocks = (topo->n_gpus + TOPO_BLOCK - 1) / TOPO_BLOCK;
        for (guint r = 0; r < topo->n_gpus; r++) {
            for (guint b = 0; topo->gpu_blocks[r] && b < n_blocks; b++) {
                g_free(topo->gpu_blocks[r][b]);
            }
            g_free(topo->gpu_blocks[r]);
        }
        g_clear_pointer(&topo->gpu_blocks, g_free);
    }
    if (topo->routes) {
        for (guint d = 0; d < topo->devices->len; d++) {
            g_free(topo->routes[d]);
        }
        g_clear_pointer(&topo->routes, g_free);
    }
    g_clear_pointer(&topo->scratch, scratch_free);
}

/* Connectivity, 64 source GPUs at a time: each state carries a bit mask of the sources that
 * reached it, expanded level by level up to TOPO_MAX_HOPS, under the same forwarding rules as
 * routes. GPUs record what reaches them and forward nothing. */
typedef struct {
    guint64 *seen, *front, *next;
    guint32 *active, *touched;
    guint64 *reached; /* per rank */
} Reach;

static void
reach_batch(const MsTopology *topo, Reach *r, guint base, guint count)
{
    guint n_states = topo->devices->len * 2, n_active = 0;
    memset(r->seen, 0, sizeof(guint64) * n_states);
    memset(r->reached, 0, sizeof(guint64) * topo->n_gpus);
    for (guint b = 0; b < count; b++) {
        guint32 st = topo->gpu_devices[base + b] * 2;
        r->seen[st] = r->front[st] = G_GUINT64_CONSTANT(1) << b;
        r->active[n_active++] = st;
    }
    for (guint level = 0; level < TOPO_MAX_HOPS && n_active > 0; level++) {
        guint n_touched = 0;
        for (guint a = 0; a < n_active; a++) {
            guint32 u = r->active[a];
            guint src = level == 0 ? u / 2 : G_MAXUINT;
            for (guint32 k = topo->out_start[u / 2]; k < topo->out_start[u / 2 + 1]; k++) {
                const MsLink *l = topo_link(topo, topo->out_links[k]);
                if (!may_leave(topo, u, src, l)) {
                    continue;
                }
                guint32 w = arrival_state(topo, l);
                if (topo_dev(topo, l->to)->kind == MS_DEVICE_GPU) {
                    r->reached[topo_dev(topo, l->to)->rank] |= r->front[u];
                    continue;
                }
                if (r->next[w] == 0) {
                    r->touched[n_touched++] = w;
                }
                r->next[w] |= r->front[u];
            }
            r->front[u] = 0;
        }
        n_active = 0;
        for (guint t = 0; t < n_touched; t++) {
            guint32 w = r->touched[t];
            guint64 fresh = r->next[w] & ~r->seen[w];
            r->next[w] = 0;
            if (fresh) {
                r->seen[w] |= fresh;
                r->front[w] = fresh;
                r->active[n_active++] = w;
            }
        }
    }
    for (guint a = 0; a < n_active; a++) {
        r->front[r->active[a]] = 0;
    }
}

/* Marks the pairs of the batch that a given route joins. */
static void
reach_given(const MsTopology *topo, Reach *r, guint base, guint count)
{
    for (guint i = 0; i < topo->given->len; i++) {
        const TopoGivenRoute *g = &g_array_index(topo->given, TopoGivenRoute, i);
        gint sr = topo_dev(topo, g->src)->rank, dr = topo_dev(topo, g->dst)->rank;
        if (sr >= (gint)base && sr < (gint)(base + count) && dr >= 0) {
            r->reached[dr] |= G_GUINT64_CONSTANT(1) << (sr - base);
        }
    }
}

/* The first (lowest source, then lowest destination) pair of the batch left unreached. */
static gboolean
reach_verdict(const MsTopology *topo, const Reach *r, guint base, guint count, guint *src,
              guint *dst)
{
    guint64 all = count == 64 ? G_MAXUINT64 : (G_GUINT64_CONSTANT(1) << count) - 1;
    guint64 missing = 0;
    for (guint d = 0; d < topo->n_gpus; d++) {
        guint64 self = d >= base && d < base + count ? G_GUINT64_CONSTANT(1) << (d - base) : 0;
        missing |= all & ~self & ~r->reached[d];
    }
    if (missing == 0) {
        return TRUE;
    }
    guint b = g_bit_nth_lsf(missing, -1);
    *src = base + b;
    for (guint d = 0; d < topo->n_gpus; d++) {
        if (d != *src && !(r->reached[d] & (G_GUINT64_CONSTANT(1) << b))) {
            *dst = d;
            break;
        }
    }
    return FALSE;
}

gboolean
topo_check_connected(MsTopology *topo, guint *src, guint *dst)
{
    if (topo->shape) {
        /* A preset joins every GPU pair by construction (topo_shape_gpu_route), and at 16384
         * GPUs the search below would be most of the load time. */
        return TRUE;
    }
    guint n_states = topo->devices->len * 2;
    Reach r = {
        g_new(guint64, n_states), g_new0(guint64, n_states), g_new0(guint64, n_states),
        g_new(guint32, n_states), g_new(guint32, n_states),  g_new(guint64, topo->n_gpus),
    };
    gboolean ok = TRUE;
    for (guint base = 0; ok && base < topo->n_gpus; base += 64) {
        guint count = MIN(64, topo->n_gpus - base);
        reach_batch(topo, &r, base, count);
        reach_given(topo, &r, base, count);
        ok = reach_verdict(topo, &r, base, count, src, dst);
    }
    g_free(r.seen);
    g_free(r.front);
    g_free(r.next);
    g_free(r.active);
    g_free(r.touched);
    g_free(r.reached);
    return ok;
}
