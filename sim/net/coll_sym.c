/* coll_sym: a collective run by representatives. A flat ring, or an all-to-all of one group
 * whose pair sizes repeat from block to block (a padded one: every pair the same), qualifies when
 * every participant launches at one instant, every chunk of a ring has the same size, and
 * translating the participants by a block of whole nodes (ring index or all-to-all position i to
 * i + b: one node's participants, or several nodes' where only groups of nodes are alike, as the
 * leaves of a fat tree) maps each flow's route link by link onto its image's route, links of
 * equal bandwidth onto each other, with every link of limited bandwidth moving round an orbit of
 * d links, d dividing N = m / b. Then the flows of all blocks do at every instant what those of
 * the first block do (max-min sharing is unique, so it keeps the symmetry), and only the first
 * block's participants are simulated, each image counted with its representative. A link of an
 * orbit carries N / d flows for each crossing of the orbit by a representative's flow, all at
 * that flow's rate: a ring's representatives cross one link of each orbit, and where d < N (a
 * spine every node's flow crosses) they get d / N of its bandwidth; an all-to-all's cross
 * several links of an orbit (a node's flows go into every other node's NICs), so they run on one
 * link of each orbit standing for it, with d / N of its bandwidth. The links of the whole
 * collective are watched, and the moment another transfer comes onto one of them, every image
 * becomes a flow of its own with the bytes its representative has left (an all-to-all's
 * representatives move back onto their own routes), and the collective goes on flow by flow. */
#include <math.h>

#include "coll_private.h"

/* A link of an orbit of d < N links that the representatives cross: it carries N / d copies of
 * each of their flows on it. */
typedef struct {
    guint32 link, d;
    double bw; /* its own bandwidth, of which the representatives get d / N */
} Shared;

struct CollSym {
    gboolean a2a;   /* an all-to-all; else a ring */
    guint b, N;     /* ring indices (all-to-all positions) per block, blocks */
    guint *rep;     /* per participant: the representative it is an image of */
    guint *tau;     /* per participant: its image one block further on */
    guint32 *links; /* the collective's links of limited bandwidth, watched */
    guint n_links;
    Shared *shared; /* divided while the collective is watched */
    guint n_shared;
    gboolean watching;
    /* Per slot, a ring's (channel, ring index of the first block) or an all-to-all's flow of a
     * representative (its index): network id, or NONE, and the flow index it moves. */
    guint32 *live;
    guint64 *live_idx;
    /* All-to-all: each representative flow's route over the links standing for their orbits
     * (route_len[k] links from routes + route_at[k]), when the representatives entered, and per
     * participant whether its local copy is still running. */
    guint32 *routes;
    guint *route_at;
    guint8 *route_len;
    MsTime entered;
    guint8 *copy_left;
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

/* Starts or stops watching the collective's links (FALSE when they cannot be watched): while
 * watched, the representatives get d / N of each link that stands for an orbit of d < N links;
 * after, every such link has its own bandwidth back. */
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
    g_free(y->routes);
    g_free(y->route_at);
    g_free(y->route_len);
    g_free(y->copy_left);
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

/* The node of a participant: the flow model keeps no node table, so it asks the topology. */
static guint
part_node(const MsColl *coll, guint part)
{
    return coll->node_of
               ? coll->node_of[part]
               : (guint)ms_topology_device_node(ms_sim_topology(coll->sim), coll->device[part]);
}

/* The shape of a symmetric collective: one ring phase (chunks of one size per channel) or one
 * all-to-all phase over every participant, whole node blocks in the ring's order (the
 * all-to-all's positions). b = 0 when it has none. */
static guint
block_size(const MsColl *coll)
{
    const Phase *ph = &coll->plan.phases[0];
    if (coll->plan.n_phases != 1 || ph->n_groups != 1 || ph->m != coll->n || ph->m < 2) {
        return 0;
    }
    guint m = ph->m;
    if (ph->kind == PHASE_RING) {
        if (ph->steps == 0 || coll->step_delay) {
            return 0;
        }
        for (guint c = 0; c < ph->channels; c++) {
            guint64 chunk = ms_coll_ring_chunk(ph, c, 0, 0);
            for (guint i = 0; i < m; i++) {
                if (chunk == 0 || ms_coll_ring_chunk(ph, c, 0, i) != chunk) {
                    return 0;
                }
            }
        }
    } else if (ph->kind != PHASE_A2A || ph->nvls) {
        return 0;
    }
    const guint *order = ph->kind == PHASE_RING ? ph->order : NULL;
    guint node = part_node(coll, ph->members[order ? order[0] : 0]);
    guint b = 0;
    while (b < m && part_node(coll, ph->members[order ? order[b] : b]) == node) {
        b++;
    }
    return b < m && m % b == 0 ? b : 0;
}

/* An all-to-all's translation, position p to p + b: the same pair sizes, local copies and copy
 * rates one block on. */
static gboolean
find_a2a_translation(const MsColl *coll, CollSym *y)
{
    const Phase *ph = &coll->plan.phases[0];
    guint m = ph->m, b = y->b;
    for (guint p = 0; p < m; p++) {
        guint q = (p + b) % m, a = ph->members[p], c = ph->members[q];
        y->tau[a] = c;
        y->rep[a] = ph->members[p % b];
        guint64 sa = ph->self_bytes ? ph->self_bytes[a] : 0;
        guint64 sc = ph->self_bytes ? ph->self_bytes[c] : 0;
        if (sa != sc || coll->copy_bw[a] != coll->copy_bw[c]) {
            return FALSE;
        }
        for (guint r = 1; r < m; r++) {
            if (phase_pair_bytes(ph, 0, p, r) != phase_pair_bytes(ph, 0, q, r)) {
                return FALSE;
            }
        }
    }
    return TRUE;
}

/* Participant translation: ring index i to i + b in every channel, the same map in all (an
 * all-to-all's: position p to p + b). */
static gboolean
find_translation(const MsColl *coll, CollSym *y)
{
    const Phase *ph = &coll->plan.phases[0];
    guint m = ph->m, n = coll->n;
    if (y->a2a) {
        return find_a2a_translation(coll, y);
    }
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

/* The flows whose routes the translation must map: a ring's first step (every step moves over
 * the same connections), or every pair of an all-to-all. Flow k of them and its image one block
 * on. */
static guint64
n_mapped(const Phase *ph)
{
    return ph->kind == PHASE_RING ? (guint64)ph->channels * ph->m : (guint64)ph->m * (ph->m - 1);
}

static void
mapped_flow(const Phase *ph, guint b, guint64 k, guint64 *idx, guint64 *img)
{
    guint m = ph->m;
    if (ph->kind == PHASE_RING) {
        guint64 c = k / m;
        guint i = k % m;
        *idx = ring_index(ph, c, 0, i);
        *img = ring_index(ph, c, 0, (i + b) % m);
    } else {
        guint p = k / (m - 1), r1 = k % (m - 1);
        *idx = k;
        *img = (guint64)((p + b) % m) * (m - 1) + r1;
    }
}

/* The representatives' flows of n_mapped: a ring's first step of its first block in every
 * channel, an all-to-all's pairs from the first block (their flow indices are 0 .. k - 1). */
static guint64
n_rep_flows(const Phase *ph, guint b)
{
    return ph->kind == PHASE_RING ? (guint64)ph->channels * b : (guint64)b * (ph->m - 1);
}

static guint64
rep_flow(const Phase *ph, guint b, guint64 k)
{
    return ph->kind == PHASE_RING ? ring_index(ph, k / b, 0, k % b) : k;
}

/* An all-to-all's representatives: each flow's route with every link of limited bandwidth
 * replaced by the link standing for its orbit (stand[orbit name]); FALSE when a route crosses one
 * orbit twice (its images would load a link twice, which the stand-in cannot say). */
static gboolean
stand_in_routes(MsColl *coll, CollSym *y, const guint32 *stand, const guint32 *orbit)
{
    const Phase *ph = &coll->plan.phases[0];
    guint64 n = n_rep_flows(ph, y->b);
    GArray *routes = g_array_new(FALSE, FALSE, sizeof(guint32));
    y->route_at = g_new(guint, n);
    y->route_len = g_new(guint8, n);
    gboolean ok = TRUE;
    for (guint64 k = 0; ok && k < n; k++) {
        FlowInfo f = flow_info(ph, k);
        guint nf = 0;
        const guint32 *rf = ms_coll_route(coll, 0, f.src, f.dst, &nf);
        y->route_at[k] = routes->len;
        y->route_len[k] = (guint8)nf;
        for (guint j = 0; ok && j < nf; j++) {
            guint32 l = orbit[rf[j]] != NONE ? stand[orbit[rf[j]]] : rf[j];
            for (guint i = y->route_at[k]; ok && i < routes->len; i++) {
                ok = g_array_index(routes, guint32, i) != l;
            }
            g_array_append_val(routes, l);
        }
    }
    y->routes = (guint32 *)g_array_free(routes, FALSE);
    return ok;
}

/* Links: each flow's route maps position by position onto its image's (same length, latency,
 * wire bytes and weight; links of limited bandwidth onto links of the same bandwidth, the same
 * link always onto the same one), and every such link's orbit has d links, d dividing N; then
 * nothing else may be on them now. Collects the links into y->links. A ring's representatives
 * must touch one link of each orbit; an all-to-all's may touch several, and the first they touch
 * stands for the orbit in their routes (y->routes). Such a link, of an orbit of d links, carries
 * N / d copies of each crossing of its orbit by a representative's flow (the crossing's images,
 * which by symmetry move at its rate: a spine that every node's flow of a ring's channel crosses
 * has d = 1, a NIC that every other node's flows of an all-to-all enter has d = N), so the
 * representatives alone on d / N of its bandwidth share it as all of them would share all of
 * it; those of d < N go to y->shared. tl, orbit and period hold NONE for every link on entry and
 * on return. */
static MapResult
map_links(MsColl *coll, CollSym *y, guint32 *tl, guint32 *orbit, guint32 *period)
{
    const Phase *ph = &coll->plan.phases[0];
    MsNetwork *net = ms_sim_network(coll->sim);
    GArray *used = g_array_new(FALSE, FALSE, sizeof(guint32));
    gboolean ok = TRUE;
    for (guint64 k = 0, n = n_mapped(ph); ok && k < n; k++) {
        guint64 fi, gi;
        mapped_flow(ph, y->b, k, &fi, &gi);
        FlowInfo f = flow_info(ph, fi);
        FlowInfo g = flow_info(ph, gi);
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
        for (guint j = 0; ok && j < nf; j++) {
            double bw = ms_network_link_bandwidth(net, rf[j]);
            if (!isfinite(bw)) {
                continue;
            }
            if (tl[rf[j]] == NONE) {
                tl[rf[j]] = rg[j];
                g_array_append_val(used, rf[j]);
            }
            ok = tl[rf[j]] == rg[j] && ms_network_link_bandwidth(net, rg[j]) == bw;
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
    /* The link standing for each orbit: tl is reused to hold it. */
    for (guint u = 0; u < used->len; u++) {
        tl[g_array_index(used, guint32, u)] = NONE;
    }
    for (guint64 k = 0, n = n_rep_flows(ph, y->b); ok && k < n; k++) {
        FlowInfo f = flow_info(ph, rep_flow(ph, y->b, k));
        guint nf = 0;
        const guint32 *rf = ms_coll_route(coll, 0, f.src, f.dst, &nf);
        for (guint j = 0; ok && j < nf; j++) {
            guint32 o = orbit[rf[j]];
            if (o != NONE && tl[o] == NONE) {
                tl[o] = rf[j];
            } else if (o != NONE) {
                ok = tl[o] == rf[j] || y->a2a;
            }
        }
    }
    if (ok && y->a2a) {
        ok = stand_in_routes(coll, y, tl, orbit);
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

/* The smallest block, whole node blocks of b0 participants at a time, whose translation is a
 * symmetry of the collective and its links: one node where the links from every node to the next
 * are alike (a switch, or a ring inside one leaf), several where they are alike only between
 * groups of nodes (a ring over one GPU in each of several leaves of a fat tree crosses the spine
 * only from the last node of a leaf to the next leaf's first). FALSE when none is, or when
 * another transfer is on the collective's links now. */
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
        g_clear_pointer(&y->routes, g_free);
        g_clear_pointer(&y->route_at, g_free);
        g_clear_pointer(&y->route_len, g_free);
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
    Phase *ph = &coll->plan.phases[0];
    CollSym *y = g_new0(CollSym, 1);
    y->a2a = ph->kind == PHASE_A2A;
    y->rep = g_new(guint, coll->n);
    y->tau = g_new(guint, coll->n);
    coll->sym = y;
    if (!find_block(coll, y, b) || !set_watching(coll, TRUE)) {
        sym_clear(coll);
        return FALSE;
    }
    gsize slots = n_rep_flows(ph, y->b);
    y->live = g_new(guint32, slots);
    y->live_idx = g_new0(guint64, slots);
    for (gsize k = 0; k < slots; k++) {
        y->live[k] = NONE;
    }
    y->entered = ms_sim_now(coll->sim);
    if (y->a2a && ph->self_bytes) {
        y->copy_left = g_new0(guint8, coll->n);
    }
    /* The images enter with their representatives: their flows are never started, so they only
     * need to be counted in. */
    for (guint p = 0; p < coll->n; p++) {
        if (y->rep[p] != p) {
            ph->entered[p] = 1;
        } else if (y->copy_left) {
            y->copy_left[p] = ph->self_bytes[p] != 0;
        }
    }
    return TRUE;
}

/* Slot of a flow of the first block: a ring's channel x b + ring index, an all-to-all's index. */
static gsize
slot_of(const MsColl *coll, guint64 idx)
{
    const Phase *ph = &coll->plan.phases[0];
    if (coll->sym->a2a) {
        return idx;
    }
    guint i = idx % ph->m;
    guint64 c = idx / ph->m / ph->steps;
    return c * coll->sym->b + i;
}

const guint32 *
ms_coll_sym_route(MsColl *coll, guint64 idx, const guint32 *route, guint *n, MsTime *latency)
{
    CollSym *y = coll->sym;
    if (!y->a2a || !y->watching) {
        return route;
    }
    *latency = flow_latency(coll, *latency, route, *n);
    *n = y->route_len[idx];
    return y->routes + y->route_at[idx];
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
ms_coll_sym_copy_done(MsColl *coll, guint part)
{
    if (coll->sym->copy_left) {
        coll->sym->copy_left[part] = 0;
    }
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

/* Flow index of image j of a representative's flow idx (j blocks on): a ring's ring index, an
 * all-to-all's sender position moves by j x b. */
static guint64
image_index(const Phase *ph, guint b, guint64 idx, guint j)
{
    return idx + (guint64)j * b * (ph->kind == PHASE_A2A ? ph->m - 1 : 1);
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
    for (guint c = 0; !y->a2a && c < ph->channels; c++) {
        guint *done = &ph->done_steps[(gsize)c * m];
        for (guint i = b; i < m; i++) {
            done[i] = done[i % b];
        }
    }
    MsNetwork *net = ms_sim_network(coll->sim);
    MsTime now = ms_sim_now(coll->sim);
    for (gsize k = 0, slots = n_rep_flows(ph, b); k < slots; k++) {
        double left;
        MsTime active_at;
        /* An all-to-all's representative leaves the stand-in links for its own route, as a new
         * flow with what it has left; a ring's stays where it is. */
        if (y->live[k] == NONE ||
            !(y->a2a ? ms_network_cancel(net, y->live[k], now, &left, &active_at)
                     : ms_network_flow_left(net, y->live[k], now, &left, &active_at))) {
            continue;
        }
        guint64 idx = y->live_idx[k];
        for (guint j = y->a2a ? 0 : 1; j < y->N; j++) {
            guint64 idx_j = image_index(ph, b, idx, j);
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
            /* The bytes its representative has left, after what is left of the latency. */
            ms_sim_resume_route(coll->sim, route, n, MIN(left, (double)wire), weight,
                                active_at > now ? active_at - now : 0, coll->handler, idx_j);
            coll->n_flows += j > 0;
        }
    }
    /* An image's local copy ends when its representative's does. */
    for (guint p = 0; y->copy_left && p < coll->n; p++) {
        guint r = y->rep[p];
        if (r != p && y->copy_left[r]) {
            MsTime end = y->entered + ms_coll_copy_time(coll, r, ph->self_bytes[r]);
            ms_coll_copy_after(coll, 0, p, end > now ? end - now : 0);
        }
    }
    sym_clear(coll);
}
