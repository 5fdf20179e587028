/* network: flow lifecycle (pending during its latency, then active), completion order, and the
 * bridge to the max-min solver. Active flows are timed per bottleneck group with a virtual clock,
 * so a level change re-keys one group whatever its size; times in picoseconds, rates in bytes/s,
 * bytes as doubles while in flight (settled only when a flow changes group). */
#include "network.h"

#include <math.h>
#include <string.h>

#include "id_list.h"
#include "share.h"

G_DEFINE_QUARK(ms_network_error_quark, ms_network_error)

#define NONE G_MAXUINT32

enum { FLOW_FREE, FLOW_PENDING, FLOW_ACTIVE };

/* A pending flow waits for its activation time; an active one in a group for its tag, the
 * group's virtual time at which it finishes. */
typedef union {
    MsTime key;
    double tag;
} When;

/* A flow's fields, together: completions and moves touch most of them at once. */
typedef struct {
    When when;
    double weight;
    double bytes; /* a whole number but where a flow resumes what another had left */
    guint64 cookie;
    const guint32 *route; /* while pending */
    guint32 var;          /* solver variable once active, NONE before */
    guint32 grp;          /* bottleneck group once solved, NONE before */
    guint32 hpos;         /* position in the pending heap or in its group's heap */
    guint8 route_len, state;
    MsTime active_at; /* end of its latency */
} Flow;

/* One bottleneck group: the flows bottlenecked at one link, ordered by tag. */
typedef struct {
    guint32 *heap;
    guint32 len, cap;
    guint32 pos;  /* position in the group heap, NONE when empty */
    double level; /* bytes/s per unit weight since t0 */
    double vtime; /* bytes per unit weight moved by any member from the origin to t0 */
    MsTime t0;
    MsTime due;   /* completion time of the first member */
    double head;  /* tag of the first member (heap[0]), kept here so that a re-key, at every
                   * level change, reads no flow: the flows are scattered and large */
    guint32 mark; /* solve that last queued it for a re-key */
} Group;

struct _MsNetwork {
    guint n_links;
    double *bandwidth;
    guint32 *cnst_of_link; /* NONE for unlimited links */
    guint32 *link_of_cnst;
    guint32 *pending_on; /* per link: flows in their latency whose route crosses it */
    const MsShareClass *share;
    gpointer mm; /* the sharing model's solver */
    guint n_cnst;
    Group *groups; /* per constraint */

    /* flows, struct of arrays */
    guint n_flows, cap_flows, n_live;
    Flow *fl;
    MsIdList free_flows;
    guint32 *flow_of_var;
    guint cap_var_map;

    guint32 *pending; /* min-heap of pending flows on (key, id) */
    guint n_pending;
    guint32 *gheap; /* min-heap of non-empty groups on (due, id) */
    guint n_gheap;

    gboolean dirty;
    GArray *levels, *moved, *touched; /* the solver's reports */
    MsIdList scratch, rekeys;
    guint32 epoch;
    MsTime last_now;

    gboolean check;
    GError *violation;
    MsLinkObserverFn observer;
    gpointer observer_ctx;

    MsNetworkStats stats;
};

MsNetwork *
ms_network_new(guint n_links, const double *bandwidth)
{
    return ms_network_new_shared(n_links, bandwidth, ms_share_lookup(MS_SHARE_DEFAULT));
}

MsNetwork *
ms_network_new_shared(guint n_links, const double *bandwidth, const MsShareClass *share)
{
    g_return_val_if_fail(share != NULL, NULL);
    MsNetwork *net = g_new0(MsNetwork, 1);
    net->share = share;
    net->n_links = n_links;
    net->bandwidth = g_memdup2(bandwidth, n_links * sizeof(double));
    net->cnst_of_link = g_new(guint32, n_links);
    net->link_of_cnst = g_new(guint32, MAX(n_links, 1));
    net->pending_on = g_new0(guint32, MAX(n_links, 1));
    net->mm = share->create();
    guint n_cnst = 0;
    for (guint l = 0; l < n_links; l++) {
        if (isfinite(bandwidth[l])) {
            guint32 c = net->share->add_constraint(net->mm, bandwidth[l]);
            net->cnst_of_link[l] = c;
            net->link_of_cnst[c] = l;
            n_cnst++;
        } else {
            net->cnst_of_link[l] = NONE;
        }
    }
    net->n_cnst = n_cnst;
    net->groups = g_new0(Group, MAX(n_cnst, 1));
    net->gheap = g_new(guint32, MAX(n_cnst, 1));
    for (guint c = 0; c < n_cnst; c++) {
        net->groups[c].pos = NONE;
    }
    net->levels = g_array_new(FALSE, FALSE, sizeof(guint32));
    net->moved = g_array_new(FALSE, FALSE, sizeof(guint32));
    net->touched = g_array_new(FALSE, FALSE, sizeof(guint32));
    return net;
}

void
ms_network_free(MsNetwork *net)
{
    if (net == NULL) {
        return;
    }
    for (guint c = 0; c < net->n_cnst; c++) {
        g_free(net->groups[c].heap);
    }
    void *arrays[] = {net->bandwidth, net->cnst_of_link, net->link_of_cnst,
                      net->groups,    net->fl,           net->flow_of_var,
                      net->pending,   net->gheap,        net->pending_on};
    for (guint i = 0; i < G_N_ELEMENTS(arrays); i++) {
        g_free(arrays[i]);
    }
    net->share->destroy(net->mm);
    ms_id_list_clear(&net->free_flows);
    g_array_unref(net->levels);
    g_array_unref(net->moved);
    g_array_unref(net->touched);
    ms_id_list_clear(&net->scratch);
    ms_id_list_clear(&net->rekeys);
    g_clear_error(&net->violation);
    g_free(net);
}

/* --- the three heaps: pending flows on (key, id), a group's members on (tag, id), groups on
 * (due, id). Each is an array of ids with positions kept in hpos / Group.pos. --- */

static inline gboolean
pending_before(const MsNetwork *net, guint32 a, guint32 b)
{
    return net->fl[a].when.key < net->fl[b].when.key ||
           (net->fl[a].when.key == net->fl[b].when.key && a < b);
}

static inline gboolean
tag_before(const MsNetwork *net, guint32 a, guint32 b)
{
    return net->fl[a].when.tag < net->fl[b].when.tag ||
           (net->fl[a].when.tag == net->fl[b].when.tag && a < b);
}

static inline gboolean
due_before(const MsNetwork *net, guint32 a, guint32 b)
{
    MsTime x = net->groups[a].due, y = net->groups[b].due;
    return x < y || (x == y && a < b);
}

typedef gboolean (*BeforeFn)(const MsNetwork *net, guint32 a, guint32 b);

/* Sift of element i in heap h of length n; positions go to Group.pos or hpos. Always inlined so
 * that each heap gets its own comparison compiled in. */
G_ALWAYS_INLINE static inline void
sift(MsNetwork *net, guint32 *h, guint n, guint i, BeforeFn before, gboolean groups)
{
    guint32 x = h[i];
    while (i > 0 && before(net, x, h[(i - 1) / 2])) {
        guint p = (i - 1) / 2;
        h[i] = h[p];
        *(groups ? &net->groups[h[i]].pos : &net->fl[h[i]].hpos) = i;
        i = p;
    }
    for (;;) {
        guint l = 2 * i + 1;
        if (l >= n) {
            break;
        }
        guint m = (l + 1 < n && before(net, h[l + 1], h[l])) ? l + 1 : l;
        if (!before(net, h[m], x)) {
            break;
        }
        h[i] = h[m];
        *(groups ? &net->groups[h[i]].pos : &net->fl[h[i]].hpos) = i;
        i = m;
    }
    h[i] = x;
    *(groups ? &net->groups[x].pos : &net->fl[x].hpos) = i;
}

/* Removes the element at position i of heap h (length *n). */
G_ALWAYS_INLINE static inline void
heap_delete(MsNetwork *net, guint32 *h, guint *n, guint i, BeforeFn before, gboolean groups)
{
    guint32 last = h[--*n];
    if (i < *n) {
        h[i] = last;
        sift(net, h, *n, i, before, groups);
    }
}

/* --- groups --- */

static void
group_sync(Group *g, MsTime now)
{
    if (now > g->t0) {
        g->vtime += g->level * (double)(now - g->t0) * 1e-12;
        g->t0 = now;
    }
}

static MsTime
finish_time(double remaining, double rate, MsTime now)
{
    if (remaining <= 0 || isinf(rate)) {
        return now;
    }
    if (!(rate > 0)) {
        return MS_TIME_NEVER;
    }
    double ps = ceil(remaining / rate * 1e12);
    if (ps >= (double)(MS_TIME_NEVER - now)) {
        return MS_TIME_NEVER - 1;
    }
    return now + (MsTime)ps;
}

/* Recomputes when the group's first member finishes and places the group in the group heap. */
static void
group_rekey(MsNetwork *net, guint32 c)
{
    Group *g = &net->groups[c];
    if (g->len == 0) {
        if (g->pos != NONE) {
            heap_delete(net, net->gheap, &net->n_gheap, g->pos, due_before, TRUE);
            g->pos = NONE;
        }
        g->vtime = 0;
        return;
    }
    g->due = finish_time(g->head - g->vtime, g->level, g->t0);
    if (g->pos == NONE) {
        net->gheap[net->n_gheap] = c;
        g->pos = net->n_gheap++;
    }
    sift(net, net->gheap, net->n_gheap, g->pos, due_before, TRUE);
}

static void
group_insert(MsNetwork *net, guint32 c, guint32 f)
{
    Group *g = &net->groups[c];
    if (g->len == g->cap) {
        g->cap = MAX(8, g->cap * 2);
        g->heap = g_renew(guint32, g->heap, g->cap);
    }
    g->heap[g->len] = f;
    net->fl[f].hpos = g->len++;
    net->fl[f].grp = c;
    sift(net, g->heap, g->len, net->fl[f].hpos, tag_before, FALSE);
    g->head = net->fl[g->heap[0]].when.tag;
}

static void
group_delete(MsNetwork *net, guint32 f)
{
    Group *g = &net->groups[net->fl[f].grp];
    heap_delete(net, g->heap, &g->len, net->fl[f].hpos, tag_before, FALSE);
    net->fl[f].grp = NONE;
    if (g->len) {
        g->head = net->fl[g->heap[0]].when.tag; /* compared by the sift just now: in cache */
    }
}

/* --- flows --- */

static guint32
alloc_flow(MsNetwork *net)
{
    if (net->free_flows.len) {
        return ms_id_list_pop(&net->free_flows);
    }
    if (net->n_flows == net->cap_flows) {
        guint n = net->cap_flows = MAX(256, net->cap_flows * 2);
        net->fl = g_renew(Flow, net->fl, n);
        net->pending = g_renew(guint32, net->pending, n);
    }
    return net->n_flows++;
}

guint32
ms_network_start(MsNetwork *net, MsTime now, MsTime latency, const guint32 *links, guint n_links,
                 guint64 bytes, double weight, guint64 cookie)
{
    return ms_network_resume(net, now, latency, links, n_links, (double)bytes, weight, cookie);
}

guint32
ms_network_resume(MsNetwork *net, MsTime now, MsTime latency, const guint32 *links, guint n_links,
                  double bytes, double weight, guint64 cookie)
{
    g_return_val_if_fail(weight > 0 && isfinite(weight), NONE);
    g_return_val_if_fail(bytes >= 0 && isfinite(bytes), NONE);
    g_return_val_if_fail(n_links <= 255, NONE);
    guint32 f = alloc_flow(net);
    net->fl[f].bytes = bytes;
    net->fl[f].weight = weight;
    net->fl[f].cookie = cookie;
    net->fl[f].route = links;
    net->fl[f].route_len = (guint8)n_links;
    net->fl[f].state = FLOW_PENDING;
    net->fl[f].var = NONE;
    net->fl[f].grp = NONE;
    net->fl[f].when.key = now + latency;
    net->fl[f].active_at = now + latency;
    for (guint i = 0; i < n_links; i++) {
        net->pending_on[links[i]]++;
    }
    net->pending[net->n_pending] = f;
    net->fl[f].hpos = net->n_pending++;
    sift(net, net->pending, net->n_pending, net->fl[f].hpos, pending_before, FALSE);
    net->n_live++;
    net->stats.flows_started++;
    net->stats.peak_live_flows = MAX(net->stats.peak_live_flows, net->n_live);
    return f;
}

static void
map_var(MsNetwork *net, guint32 v, guint32 f)
{
    if (v >= net->cap_var_map) {
        guint n = MAX(v + 1, MAX(256, net->cap_var_map * 2));
        net->flow_of_var = g_renew(guint32, net->flow_of_var, n);
        net->cap_var_map = n;
    }
    net->flow_of_var[v] = f;
}

static void violation(MsNetwork *net, const char *format, ...) G_GNUC_PRINTF(2, 3);

static void
violation(MsNetwork *net, const char *format, ...)
{
    if (net->violation) {
        return;
    }
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    net->violation =
        g_error_new(MS_NETWORK_ERROR, MS_NETWORK_ERROR_INVARIANT, "invariant violated: %s", msg);
}

static void
release(MsNetwork *net, guint32 f)
{
    if (net->fl[f].var != NONE) {
        net->share->remove_variable(net->mm, net->fl[f].var);
        net->dirty = TRUE;
    }
    net->fl[f].state = FLOW_FREE;
    net->n_live--;
    ms_id_list_push(&net->free_flows, f);
}

/* A pending flow whose latency has elapsed joins the sharing; it gets its group at the next
 * solve. Returns FALSE when it has nothing to share (no bytes, or only unlimited links) and
 * completes at once. */
static gboolean
activate(MsNetwork *net, guint32 f)
{
    for (guint i = 0; i < net->fl[f].route_len; i++) {
        net->pending_on[net->fl[f].route[i]]--;
    }
    if (net->fl[f].bytes == 0) {
        return FALSE;
    }
    net->scratch.len = 0;
    for (guint i = 0; i < net->fl[f].route_len; i++) {
        guint32 c = net->cnst_of_link[net->fl[f].route[i]];
        if (c != NONE) {
            ms_id_list_push(&net->scratch, c);
        }
    }
    if (net->scratch.len == 0) {
        return FALSE;
    }
    guint32 v =
        net->share->add_variable(net->mm, net->fl[f].weight, net->scratch.v, net->scratch.len);
    map_var(net, v, f);
    net->fl[f].var = v;
    net->fl[f].state = FLOW_ACTIVE;
    net->fl[f].route = NULL;
    net->dirty = TRUE;
    return TRUE;
}

/* Bytes a grouped flow still has to move at time now. */
static double
remaining(MsNetwork *net, guint32 f, MsTime now)
{
    Group *g = &net->groups[net->fl[f].grp];
    double v = g->vtime + g->level * (double)(now - g->t0) * 1e-12;
    return net->fl[f].weight * (net->fl[f].when.tag - v);
}

static void
check_bytes(MsNetwork *net, guint32 f, MsTime now)
{
    double left = remaining(net, f, now);
    double rate = net->fl[f].weight * net->groups[net->fl[f].grp].level;
    double slack = 1e-6 * net->fl[f].bytes + 1.0 + rate * (MS_NETWORK_TIME_SLACK + 1) * 1e-12;
    if (fabs(left) > slack) {
        violation(net, "flow %u finished with %.6g of %.17g bytes not moved", f, left,
                  net->fl[f].bytes);
    }
}

/* Takes the next event due at or before limit: a pending flow or a group's first member. */
static guint32
next_due(MsNetwork *net, MsTime limit)
{
    guint32 p = net->n_pending ? net->pending[0] : NONE;
    guint32 c = net->n_gheap ? net->gheap[0] : NONE;
    MsTime tp = p != NONE ? net->fl[p].when.key : MS_TIME_NEVER;
    MsTime tg = c != NONE ? net->groups[c].due : MS_TIME_NEVER;
    if (MIN(tp, tg) > limit) {
        return NONE;
    }
    if (tp <= tg) {
        heap_delete(net, net->pending, &net->n_pending, 0, pending_before, FALSE);
        return p;
    }
    return net->groups[c].heap[0];
}

guint
ms_network_advance(MsNetwork *net, MsTime now, MsFlowDoneFn done, gpointer ctx)
{
    if (net->check && now < net->last_now) {
        violation(net, "time went backwards from %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT " ps",
                  net->last_now, now);
    }
    net->last_now = MAX(net->last_now, now);
    guint events = 0;
    guint32 f;
    while ((f = next_due(net, now + MS_NETWORK_TIME_SLACK)) != NONE) {
        events++;
        if (net->fl[f].state == FLOW_PENDING) {
            if (activate(net, f)) {
                continue;
            }
        } else {
            guint32 c = net->fl[f].grp;
            if (net->check) {
                check_bytes(net, f, now);
            }
            group_delete(net, f);
            group_rekey(net, c);
        }
        guint64 cookie = net->fl[f].cookie;
        release(net, f);
        net->stats.flows_completed++;
        done(ctx, cookie, now);
    }
    net->stats.events += events;
    return events;
}

static void
check_capacities(MsNetwork *net)
{
    for (guint i = 0; i < net->touched->len; i++) {
        guint32 c = g_array_index(net->touched, guint32, i);
        guint32 l = net->link_of_cnst[c];
        /* The solver's kept sum: exact recounts here would cost every flow on the link at every
         * solve (tests/test_maxmin.c checks the kept sums against recounts). */
        double used = net->share->load(net->mm, c);
        if (used > net->bandwidth[l] * (1 + 1e-9)) {
            violation(net, "link %u carries %.9g B/s, above its capacity %.9g B/s", l, used,
                      net->bandwidth[l]);
        }
    }
}

/* Applies a solve: new levels first (each group's clock runs at its old level up to now), then
 * flows that changed group carry their remaining bytes over. */
static void
want_rekey(MsNetwork *net, guint32 c)
{
    if (net->groups[c].mark != net->epoch) {
        net->groups[c].mark = net->epoch;
        ms_id_list_push(&net->rekeys, c);
    }
}

static void
apply(MsNetwork *net, MsTime now)
{
    if (++net->epoch == 0) {
        for (guint c = 0; c < net->n_cnst; c++) {
            net->groups[c].mark = 0;
        }
        net->epoch = 1;
    }
    net->rekeys.len = 0;
    const guint32 *cs = (const guint32 *)net->levels->data;
    for (guint i = 0; i < net->levels->len; i++) {
        Group *g = &net->groups[cs[i]];
        group_sync(g, now);
        double lv = net->share->level(net->mm, cs[i]);
        g->level = isfinite(lv) ? lv : 0;
        net->stats.rate_changes += g->len;
        want_rekey(net, cs[i]);
    }
    const guint32 *vs = (const guint32 *)net->moved->data;
    for (guint i = 0; i < net->moved->len; i++) {
        guint32 c = net->share->bottleneck(net->mm, vs[i]);
        if (c == NONE) {
            continue; /* unconstrained: never reaches the solver (see activate) */
        }
        guint32 f = net->flow_of_var[vs[i]];
        double left = net->fl[f].bytes;
        if (net->fl[f].grp != NONE) {
            guint32 old = net->fl[f].grp;
            group_sync(&net->groups[old], now);
            left = remaining(net, f, now);
            group_delete(net, f);
            want_rekey(net, old);
        }
        Group *g = &net->groups[c];
        group_sync(g, now);
        net->fl[f].when.tag = g->vtime + left / net->fl[f].weight;
        group_insert(net, c, f);
        want_rekey(net, c);
        net->stats.rate_changes++;
    }
    for (guint i = 0; i < net->rekeys.len; i++) {
        group_rekey(net, net->rekeys.v[i]);
    }
}

static int
cmp_u32(gconstpointer a, gconstpointer b)
{
    guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
    return x < y ? -1 : x > y;
}

static void
solve(MsNetwork *net, MsTime now)
{
    g_array_set_size(net->levels, 0);
    g_array_set_size(net->moved, 0);
    g_array_set_size(net->touched, 0);
    MsShareStats before, after;
    net->share->stats(net->mm, &before);
    net->share->solve(net->mm, net->levels, net->moved, net->touched);
    net->share->stats(net->mm, &after);
    net->stats.solves += after.solves - before.solves;
    net->stats.solver_elements += after.component_elems - before.component_elems;
    net->stats.solver_vars += after.component_vars - before.component_vars;
    net->stats.solver_repairs += after.repairs - before.repairs;
    net->stats.solver_rescans += after.rescans - before.rescans;
    net->stats.solver_propagations += after.propagations - before.propagations;
    net->stats.group_changes += net->levels->len;
    net->dirty = FALSE;
    apply(net, now);
    if (net->check) {
        check_capacities(net);
    }
    if (net->observer && net->touched->len) {
        /* Report links, not solver constraints. */
        guint32 *ts = (guint32 *)net->touched->data;
        for (guint i = 0; i < net->touched->len; i++) {
            ts[i] = net->link_of_cnst[ts[i]];
        }
        g_array_sort(net->touched, cmp_u32);
        net->observer(net->observer_ctx, now, ts, net->touched->len);
    }
}

MsTime
ms_network_next_time(MsNetwork *net, MsTime now)
{
    if (net->dirty) {
        solve(net, now);
    }
    MsTime tp = net->n_pending ? net->fl[net->pending[0]].when.key : MS_TIME_NEVER;
    MsTime tg = net->n_gheap ? net->groups[net->gheap[0]].due : MS_TIME_NEVER;
    return MIN(tp, tg);
}

const MsShareClass *
ms_network_share(const MsNetwork *net)
{
    return net->share;
}

guint
ms_network_n_links(const MsNetwork *net)
{
    return net->n_links;
}

guint
ms_network_n_live_flows(const MsNetwork *net)
{
    return net->n_live;
}

double
ms_network_link_rate(const MsNetwork *net, guint link)
{
    g_return_val_if_fail(link < net->n_links, 0);
    guint32 c = net->cnst_of_link[link];
    return c == NONE ? 0 : net->share->load(net->mm, c);
}

double
ms_network_link_bandwidth(const MsNetwork *net, guint link)
{
    g_return_val_if_fail(link < net->n_links, 0);
    return net->bandwidth[link];
}

guint
ms_network_link_flows(const MsNetwork *net, guint link)
{
    g_return_val_if_fail(link < net->n_links, 0);
    guint32 c = net->cnst_of_link[link];
    guint active = c == NONE ? 0 : net->share->crossings(net->mm, c);
    return net->pending_on[link] + active;
}

guint
ms_network_link_sharing(const MsNetwork *net, guint link, GArray *out)
{
    g_return_val_if_fail(link < net->n_links && out != NULL, 0);
    guint32 c = net->cnst_of_link[link];
    if (c == NONE) {
        return 0;
    }
    guint n = net->share->crossings(net->mm, c);
    for (guint k = 0; k < n; k++) {
        guint32 id = net->flow_of_var[net->share->crossing(net->mm, c, k)];
        const Flow *f = &net->fl[id];
        MsLinkFlow x = {
            .id = id,
            .cookie = f->cookie,
            .active_at = f->active_at,
            .rate = f->grp == NONE ? 0 : f->weight * net->groups[f->grp].level,
            .weight = f->weight,
        };
        g_array_append_val(out, x);
    }
    return n;
}

gboolean
ms_network_flow_left(const MsNetwork *net, guint32 id, MsTime now, double *bytes, MsTime *active_at)
{
    if (id >= net->n_flows || net->fl[id].state == FLOW_FREE) {
        return FALSE;
    }
    const Flow *f = &net->fl[id];
    *active_at = f->active_at;
    *bytes = f->bytes;
    if (f->state == FLOW_ACTIVE && f->grp != NONE) {
        const Group *g = &net->groups[f->grp];
        double v = g->vtime + g->level * (double)(MAX(now, g->t0) - g->t0) * 1e-12;
        *bytes = MAX(0.0, f->weight * (f->when.tag - v));
    }
    return TRUE;
}

gboolean
ms_network_cancel(MsNetwork *net, guint32 id, MsTime now, double *bytes, MsTime *active_at)
{
    if (!ms_network_flow_left(net, id, now, bytes, active_at)) {
        return FALSE;
    }
    Flow *f = &net->fl[id];
    if (f->state == FLOW_PENDING) {
        for (guint i = 0; i < f->route_len; i++) {
            net->pending_on[f->route[i]]--;
        }
        heap_delete(net, net->pending, &net->n_pending, f->hpos, pending_before, FALSE);
    } else if (f->grp != NONE) {
        guint32 c = f->grp;
        group_delete(net, id);
        group_rekey(net, c);
    }
    release(net, id);
    return TRUE;
}

void
ms_network_set_link_bandwidth(MsNetwork *net, guint link, MsTime now, double bandwidth)
{
    g_return_if_fail(link < net->n_links && bandwidth > 0 && isfinite(bandwidth));
    g_return_if_fail(net->cnst_of_link[link] != NONE);
    /* Settle nothing here: the solve at now re-times every group whose level changes. */
    (void)now;
    net->bandwidth[link] = bandwidth;
    net->share->set_capacity(net->mm, net->cnst_of_link[link], bandwidth);
    net->dirty = TRUE;
}

void
ms_network_set_solver_budget(MsNetwork *net, guint reprocess)
{
    if (net->share->set_budget) {
        net->share->set_budget(net->mm, reprocess);
    }
}

void
ms_network_set_check_invariants(MsNetwork *net, gboolean on)
{
    g_return_if_fail(net->n_live == 0);
    net->check = on;
}

gboolean
ms_network_check(const MsNetwork *net, GError **error)
{
    if (net->violation) {
        g_propagate_error(error, g_error_copy(net->violation));
        return FALSE;
    }
    return TRUE;
}

void
ms_network_set_link_observer(MsNetwork *net, MsLinkObserverFn fn, gpointer ctx)
{
    g_return_if_fail(net->n_live == 0);
    net->observer = fn;
    net->observer_ctx = ctx;
}

void
ms_network_stats(const MsNetwork *net, MsNetworkStats *out)
{
    *out = net->stats;
}

gsize
ms_network_memory(const MsNetwork *net)
{
    gsize per_flow = sizeof(Flow) + sizeof(guint32); /* and its pending-heap slot */
    guint n_cnst = net->n_cnst;
    gsize members = 0;
    for (guint c = 0; c < n_cnst; c++) {
        members += net->groups[c].cap;
    }
    return sizeof *net + net->cap_flows * per_flow + net->cap_var_map * sizeof(guint32) +
           net->n_links * (sizeof(double) + 2 * sizeof(guint32)) +
           n_cnst * (sizeof(Group) + sizeof(guint32)) + members * sizeof(guint32) +
           net->share->memory(net->mm);
}
