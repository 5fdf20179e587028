/* coll_sym: a flat ring run by representatives. When every participant launches at one instant,
 * every chunk has the same size, and translating the ring by a block of whole nodes (ring index
 * i to i + b: one node's ring indices, or several nodes' where only groups of nodes are alike,
 * as the leaves of a fat tree) maps each flow's route link by link onto its image's route, links
 * of equal bandwidth onto each other, with every link of limited bandwidth moving round an orbit
 * of d links, d dividing N = m / b (d < N: a link the flows of N / d blocks share, as a spine
 * every node's flow crosses, on which the first block's flows get d / N of its bandwidth), then
 * the flows of all blocks do at every instant what those of the first block do (max-min sharing
 * is unique, so it keeps the symmetry). Only the first block's ring indices are simulated, each
 * image counted with it; the links of the whole ring are watched, and the moment another
 * transfer comes onto one of them, every image becomes a flow of its own with the bytes its
 * representative has left, and the ring goes on flow by flow. */
#include <math.h>

#include "coll_private.h"

/* A link of an orbit of d < N links that the representatives cross: it carries N / d copies of
 * each of their flows on it. */
typedef struct {
    guint32 link, d;
    double bw; /* its own bandwidth, of which the representatives get d / N */
} Shared;

struct CollSym {
    guint b, N;     /* ring indices per block, blocks */
    guint *rep;     /* per participant: the representative it is an image of */
    guint *tau;     /* per participant: its image one block further round the ring */
    guint32 *links; /* the ring's links of limited bandwidth, watched */
    guint n_links;
    Shared *shared; /* divided while the ring is watched */
    guint n_shared;
    gboolean watching;
    guint32 *live;     /* per (channel, ring index of the first block): network id, or NONE */
    guint64 *live_idx; /* and the flow index it moves */
};

guint
ms_coll_sym_block(const MsColl *coll)
{
    return coll->sym->b;
}

guint
ms_coll_sym_rep(const MsColl *coll, guint part)
{
    return coll->sym ? coll->sym->rep[part] : part;
}

/* Starts or stops watching the ring's links (FALSE when they cannot be watched): while watched,
 * the representatives get d / N of each link they share with N / d - 1 of their images; after,
 * every such link has its own bandwidth back. */
static gboolean
set_watching(MsColl *coll, gboolean on)
{
    CollSym *y = coll->sym;
    MsNetwork *net = ms_sim_network(coll->sim);
    MsTime now = ms_sim_now(coll->sim);
    if (on && !ms_sim_watch(coll->sim, coll->handler, y->links, y->n_links)) {
        return FALSE;
    }
    if (!on) {
        ms_sim_unwatch(coll->sim, coll->handler, y->links, y->n_links);
    }
    for (guint k = 0; k < y->n_shared; k++) {
        const Shared *sh = &y->shared[k];
        ms_network_set_link_bandwidth(net, sh->link, now, on ? sh->bw * sh->d / y->N : sh->bw);
    }
    y->watching = on;
    return TRUE;
}

static void
sym_clear(MsColl *coll)
{
    CollSym *y = coll->sym;
    if (y == NULL) {
        return;
    }
    if (y->watching) {
        set_watching(coll, FALSE);
    }
    g_free(y->rep);
    g_free(y->tau);
    g_free(y->links);
    g_free(y->shared);
    g_free(y->live);
    g_free(y->live_idx);
    g_free(y);
    coll->sym = NULL;
}

void
ms_coll_sym_free(MsColl *coll)
{
    sym_clear(coll);
}

/* The latency a flow pays: its own, or its route's. */
static MsTime
flow_latency(MsColl *coll, MsTime latency, const guint32 *route, guint n)
{
    return latency != MS_TIME_NEVER
               ? latency
               : ms_topology_route_latency(ms_sim_topology(coll->sim), route, n);
}

/* The shape of a symmetric ring: one ring phase over every participant, chunks of one size per
 * channel, whole node blocks. b = 0 when it has none. */
static guint
block_size(const MsColl *coll)
{
    const Phase *ph = &coll->plan.phases[0];
    if (coll->plan.n_phases != 1 || ph->kind != PHASE_RING || ph->n_groups != 1 ||
        ph->m != coll->n || ph->m < 2 || ph->steps == 0 || coll->step_delay) {
        return 0;
    }
    guint m = ph->m;
    for (guint c = 0; c < ph->channels; c++) {
        guint64 chunk = ms_coll_ring_chunk(ph, c, 0, 0);
        for (guint i = 0; i < m; i++) {
            if (chunk == 0 || ms_coll_ring_chunk(ph, c, 0, i) != chunk) {
                return 0;
            }
        }
    }
    const guint *order = ph->order;
    guint node = coll->node_of ? coll->node_of[ph->members[order[0]]] : 0;
    guint b = 0;
    if (coll->node_of == NULL) {
        /* The flow model keeps no node table: ask the topology. */
        const MsTopology *topo = ms_sim_topology(coll->sim);
        node = (guint)ms_topology_device_node(topo, coll->device[ph->members[order[0]]]);
        while (b < m &&
               (guint)ms_topology_device_node(topo, coll->device[ph->members[order[b]]]) == node) {
            b++;
        }
    } else {
        while (b < m && coll->node_of[ph->members[order[b]]] == node) {
            b++;
        }
    }
    return b < m && m % b == 0 ? b : 0;
}

/* Participant translation: ring index i to i + b in every channel, the same map in all. */
static gboolean
find_translation(const MsColl *coll, CollSym *y)
{
    const Phase *ph = &coll->plan.phases[0];
    guint m = ph->m, n = coll->n;
    for (guint p = 0; p < n; p++) {
        y->tau[p] = NONE;
        y->rep[p] = NONE;
    }
    for (guint c = 0; c < ph->channels; c++) {
        const guint *order = &ph->order[(gsize)c * m];
        for (guint i = 0; i < m; i++) {
            guint p = ph->members[order[i]], q = ph->members[order[(i + y->b) % m]];
            if (y->tau[p] != NONE && y->tau[p] != q) {
                return FALSE;
            }
            y->tau[p] = q;
        }
    }
    /* The first block of channel 0 is the representatives; every channel's first block must be
     * the same participants, and the images of each must cover the others once. */
    for (guint i = 0; i < y->b; i++) {
        guint p = ph->members[ph->order[i]], q = p;
        for (guint j = 0; j < y->N; j++, q = y->tau[q]) {
            if (y->rep[q] != NONE) {
                return FALSE;
            }
            y->rep[q] = p;
        }
        if (q != p) {
            return FALSE;
        }
    }
    for (guint c = 0; c < ph->channels; c++) {
        for (guint i = 0; i < y->b; i++) {
            guint p = ph->members[ph->order[(gsize)c * m + i]];
            if (y->rep[p] != p) {
                return FALSE;
            }
        }
    }
    return TRUE;
}

/* What map_links found. */
typedef enum { MAP_OK, MAP_ASYMMETRIC, MAP_BUSY } MapResult;

/* Links: each flow's route maps position by position onto its image's (same length, latency,
 * wire bytes and weight; links of limited bandwidth onto links of the same bandwidth, the same
 * link always onto the same one), every such link's orbit has d links, d dividing N, and the
 * representatives touch one link of each orbit; then nothing else may be on them now. Collects
 * the links into y->links, and those of orbits of d < N links into y->shared: such a link
 * carries each flow the representatives send over it and N / d - 1 of its images (the images
 * one, two ... N / d - 1 times d blocks further), which by symmetry move at its rate, so the
 * representatives alone on 1 / (N / d) of its bandwidth share it as all of them would share all
 * of it (a spine that every node's flow of a channel crosses: d = 1). tl, orbit and period hold
 * NONE for every link on entry and on return. */
static MapResult
map_links(MsColl *coll, CollSym *y, guint32 *tl, guint32 *orbit, guint32 *period)
{
    const Phase *ph = &coll->plan.phases[0];
    MsNetwork *net = ms_sim_network(coll->sim);
    guint m = ph->m;
    GArray *used = g_array_new(FALSE, FALSE, sizeof(guint32));
    gboolean ok = TRUE;
    for (guint c = 0; ok && c < ph->channels; c++) {
        for (guint i = 0; ok && i < m; i++) {
            FlowInfo f = flow_info(ph, ring_index(ph, c, 0, i));
            FlowInfo g = flow_info(ph, ring_index(ph, c, 0, (i + y->b) % m));
            guint64 wf, wg;
            double kf, kg;
            MsTime lf, lg;
            ms_coll_flow_params(coll, ph, &f, &wf, &kf, &lf);
            ms_coll_flow_params(coll, ph, &g, &wg, &kg, &lg);
            guint nf = 0, ng = 0;
            const guint32 *rf = ms_coll_route(coll, 0, f.src, f.dst, &nf);
            const guint32 *rg = ms_coll_route(coll, 0, g.src, g.dst, &ng);
            ok = rf && rg && nf == ng && wf == wg && kf == kg &&
                 flow_latency(coll, lf, rf, nf) == flow_latency(coll, lg, rg, ng);
            for (guint k = 0; ok && k < nf; k++) {
                double bw = ms_network_link_bandwidth(net, rf[k]);
                if (!isfinite(bw)) {
                    continue;
                }
                if (tl[rf[k]] == NONE) {
                    tl[rf[k]] = rg[k];
                    g_array_append_val(used, rf[k]);
                }
                ok = tl[rf[k]] == rg[k] && ms_network_link_bandwidth(net, rg[k]) == bw;
            }
        }
    }
    /* Orbits of d links, d dividing N, named by their smallest link. */
    for (guint u = 0; ok && u < used->len; u++) {
        guint32 l = g_array_index(used, guint32, u), x = l, least = l;
        guint d = 0;
        for (guint j = 1; d == 0 && j <= y->N && x != NONE; j++) {
            x = tl[x];
            least = MIN(least, x);
            d = x == l ? j : 0;
        }
        ok = d > 0 && y->N % d == 0;
        orbit[l] = least;
        period[l] = d;
    }
    /* One link of each orbit for the representatives: tl is reused to hold it. */
    for (guint u = 0; u < used->len; u++) {
        tl[g_array_index(used, guint32, u)] = NONE;
    }
    for (guint c = 0; ok && c < ph->channels; c++) {
        for (guint i = 0; ok && i < y->b; i++) {
            FlowInfo f = flow_info(ph, ring_index(ph, c, 0, i));
            guint nf = 0;
            const guint32 *rf = ms_coll_route(coll, 0, f.src, f.dst, &nf);
            for (guint k = 0; ok && k < nf; k++) {
                guint32 o = orbit[rf[k]];
                if (o != NONE) {
                    ok = tl[o] == NONE || tl[o] == rf[k];
                    tl[o] = rf[k];
                }
            }
        }
    }
    GArray *shared = g_array_new(FALSE, FALSE, sizeof(Shared));
    for (guint u = 0; ok && u < used->len; u++) {
        guint32 l = g_array_index(used, guint32, u);
        if (tl[orbit[l]] == l && period[l] < y->N) {
            Shared sh = {l, period[l], ms_network_link_bandwidth(net, l)};
            g_array_append_val(shared, sh);
        }
    }
    y->n_shared = shared->len;
    y->shared = (Shared *)g_array_free(shared, FALSE);
    /* Every link tl, orbit or period names an entry of is in used (an orbit's name is one of its
     * links, and every link of an orbit is used). */
    for (guint u = 0; u < used->len; u++) {
        guint32 l = g_array_index(used, guint32, u);
        tl[l] = NONE;
        orbit[l] = NONE;
        period[l] = NONE;
    }
    MapResult r = ok ? MAP_OK : MAP_ASYMMETRIC;
    /* Nothing else on them now. */
    for (guint u = 0; r == MAP_OK && u < used->len; u++) {
        r = ms_network_link_flows(net, g_array_index(used, guint32, u)) == 0 ? MAP_OK : MAP_BUSY;
    }
    y->n_links = used->len;
    y->links = (guint32 *)g_array_free(used, FALSE);
    return r;
}

/* The smallest block, whole node blocks of b0 ring indices at a time, whose translation is a
 * symmetry of the ring and its links: one node where the links from every node to the next are
 * alike (a switch, or a ring inside one leaf), several where they are alike only between groups
 * of nodes (a ring over one GPU in each of several leaves of a fat tree crosses the spine only
 * from the last node of a leaf to the next leaf's first). FALSE when none is, or when another
 * transfer is on the ring's links now. */
static gboolean
find_block(MsColl *coll, CollSym *y, guint b0)
{
    MsNetwork *net = ms_sim_network(coll->sim);
    guint m = coll->plan.phases[0].m, n_links = MAX(ms_network_n_links(net), 1);
    g_autofree guint32 *tl = g_new(guint32, n_links);
    g_autofree guint32 *orbit = g_new(guint32, n_links);
    g_autofree guint32 *period = g_new(guint32, n_links);
    for (guint l = 0; l < n_links; l++) {
        tl[l] = NONE;
        orbit[l] = NONE;
        period[l] = NONE;
    }
    for (guint b = b0; b <= m / 2; b += b0) {
        if (m % b != 0) {
            continue;
        }
        y->b = b;
        y->N = m / b;
        if (!find_translation(coll, y)) {
            continue;
        }
        MapResult r = map_links(coll, y, tl, orbit, period);
        if (r == MAP_OK) {
            return TRUE;
        }
        g_clear_pointer(&y->links, g_free);
        g_clear_pointer(&y->shared, g_free);
        y->n_links = 0;
        y->n_shared = 0;
        if (r == MAP_BUSY) {
            return FALSE; /* a larger block has the same links */
        }
    }
    return FALSE;
}

gboolean
ms_coll_sym_try_start(MsColl *coll)
{
    guint b = block_size(coll);
    if (b == 0) {
        return FALSE;
    }
    const Phase *ph0 = &coll->plan.phases[0];
    CollSym *y = g_new0(CollSym, 1);
    y->rep = g_new(guint, coll->n);
    y->tau = g_new(guint, coll->n);
    coll->sym = y;
    if (!find_block(coll, y, b) || !set_watching(coll, TRUE)) {
        sym_clear(coll);
        return FALSE;
    }
    gsize slots = (gsize)ph0->channels * y->b;
    y->live = g_new(guint32, slots);
    y->live_idx = g_new0(guint64, slots);
    for (gsize k = 0; k < slots; k++) {
        y->live[k] = NONE;
    }
    /* The images enter with their representatives: their flows are never started, so they only
     * need to be counted in. */
    Phase *ph = &coll->plan.phases[0];
    for (guint p = 0; p < coll->n; p++) {
        if (y->rep[p] != p) {
            ph->entered[p] = 1;
        }
    }
    return TRUE;
}

/* Slot of a flow of the first block: channel x b + ring index. */
static gsize
slot_of(const MsColl *coll, guint64 idx)
{
    const Phase *ph = &coll->plan.phases[0];
    guint i = idx % ph->m;
    guint64 c = idx / ph->m / ph->steps;
    return c * coll->sym->b + i;
}

void
ms_coll_sym_started(MsColl *coll, guint64 idx, const FlowInfo *f, guint32 id)
{
    CollSym *y = coll->sym;
    gsize k = slot_of(coll, idx);
    y->live[k] = id;
    y->live_idx[k] = idx;
    for (guint j = 1, q = y->tau[f->src]; j < y->N; j++, q = y->tau[q]) {
        coll->sent[q] += f->bytes;
    }
}

void
ms_coll_sym_flow_done(MsColl *coll, guint64 idx)
{
    coll->sym->live[slot_of(coll, idx)] = NONE;
}

void
ms_coll_sym_finished(MsColl *coll, guint part)
{
    CollSym *y = coll->sym;
    Phase *ph = &coll->plan.phases[0];
    MsTime now = ms_sim_now(coll->sim);
    for (guint j = 1, q = y->tau[part]; j < y->N; j++, q = y->tau[q]) {
        ph->pending[q] = 0;
        ph->finished[q] = 1;
        coll->end[q] = now;
        coll->n_finished++;
        g_array_append_val(coll->finished, q);
    }
    if (coll->n_finished == coll->n && y->watching) {
        set_watching(coll, FALSE);
    }
}

void
ms_coll_sym_expand(MsColl *coll)
{
    CollSym *y = coll->sym;
    if (y == NULL || !y->watching) {
        return;
    }
    set_watching(coll, FALSE);
    Phase *ph = &coll->plan.phases[0];
    guint m = ph->m, b = y->b;
    /* Each image stands where its representative stands. */
    for (guint p = 0; p < coll->n; p++) {
        if (y->rep[p] != p && !ph->finished[p]) {
            ph->pending[p] = ph->pending[y->rep[p]];
        }
    }
    for (guint c = 0; c < ph->channels; c++) {
        guint *done = &ph->done_steps[(gsize)c * m];
        for (guint i = b; i < m; i++) {
            done[i] = done[i % b];
        }
    }
    MsNetwork *net = ms_sim_network(coll->sim);
    MsTime now = ms_sim_now(coll->sim);
    for (gsize k = 0; k < (gsize)ph->channels * b; k++) {
        double left;
        MsTime active_at;
        if (y->live[k] == NONE || !ms_network_flow_left(net, y->live[k], now, &left, &active_at)) {
            continue;
        }
        guint64 idx = y->live_idx[k];
        guint i = idx % m;
        guint64 base = idx - i;
        for (guint j = 1; j < y->N; j++) {
            guint64 idx_j = base + i + (guint64)j * b;
            FlowInfo f = flow_info(ph, idx_j);
            guint64 wire;
            double weight;
            MsTime latency;
            ms_coll_flow_params(coll, ph, &f, &wire, &weight, &latency);
            guint n = 0;
            const guint32 *route = ms_coll_route(coll, 0, f.src, f.dst, &n);
            if (route == NULL) {
                continue;
            }
            /* The bytes its representative has left (within half a byte), after what is left of
             * the latency. */
            guint64 bytes = (guint64)llround(MIN(left, (double)wire));
            ms_sim_transfer_route(coll->sim, route, n, bytes, weight,
                                  active_at > now ? active_at - now : 0, coll->handler, idx_j);
            coll->n_flows++;
        }
    }
    sym_clear(coll);
}
