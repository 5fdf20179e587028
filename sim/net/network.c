/* network: flow lifecycle (pending during its latency, then active), the completion heap, and the
 * bridge to the max-min solver. Only flows whose rate changed are re-timed after a solve: each
 * keeps the bytes left at its last re-timing, so progress is settled lazily. */
#include "network.h"

#include <math.h>
#include <string.h>

#include "maxmin.h"

G_DEFINE_QUARK(ms-network-error-quark, ms_network_error)

#define NONE G_MAXUINT32

enum { FLOW_FREE, FLOW_PENDING, FLOW_ACTIVE };

struct _MsNetwork {
    guint n_links;
    double *bandwidth;
    guint32 *cnst_of_link; /* NONE for unlimited links */
    guint32 *link_of_cnst;
    double *link_rate;     /* maintained only when tracking usage */
    MsMaxmin *mm;

    /* flows, struct of arrays */
    guint n_flows, cap_flows, n_live;
    double *remaining, *rate, *weight;
    guint64 *bytes, *cookie;
    MsTime *last, *key;
    const guint32 **route;
    guint8 *route_len, *state;
    guint32 *var, *hpos;
    GArray *free_flows;
    guint32 *flow_of_var;
    guint cap_var_map;

    /* min-heap of flow ids on (key, id) */
    guint32 *heap;
    guint heap_len;

    gboolean dirty;
    GArray *changed;
    GArray *scratch_cnsts;
    MsTime last_now;

    gboolean check;
    GError *violation;
    MsLinkObserverFn observer;
    gpointer observer_ctx;
    guint32 *link_mark;
    guint32 mark_epoch;
    GArray *touched_links;

    MsNetworkStats stats;
};

MsNetwork *
ms_network_new(guint n_links, const double *bandwidth)
{
    MsNetwork *net = g_new0(MsNetwork, 1);
    net->n_links = n_links;
    net->bandwidth = g_memdup2(bandwidth, n_links * sizeof(double));
    net->cnst_of_link = g_new(guint32, n_links);
    net->link_of_cnst = g_new(guint32, MAX(n_links, 1));
    net->link_rate = g_new0(double, MAX(n_links, 1));
    net->link_mark = g_new0(guint32, MAX(n_links, 1));
    net->mm = ms_maxmin_new();
    for (guint l = 0; l < n_links; l++) {
        if (isfinite(bandwidth[l])) {
            guint32 c = ms_maxmin_add_constraint(net->mm, bandwidth[l]);
            net->cnst_of_link[l] = c;
            net->link_of_cnst[c] = l;
        } else {
            net->cnst_of_link[l] = NONE;
        }
    }
    net->free_flows = g_array_new(FALSE, FALSE, sizeof(guint32));
    net->changed = g_array_new(FALSE, FALSE, sizeof(guint32));
    net->scratch_cnsts = g_array_new(FALSE, FALSE, sizeof(guint32));
    net->touched_links = g_array_new(FALSE, FALSE, sizeof(guint32));
    net->mark_epoch = 1;
    return net;
}

void
ms_network_free(MsNetwork *net)
{
    if (net == NULL) {
        return;
    }
    g_free(net->bandwidth);
    g_free(net->cnst_of_link);
    g_free(net->link_of_cnst);
    g_free(net->link_rate);
    g_free(net->link_mark);
    ms_maxmin_free(net->mm);
    g_free(net->remaining);
    g_free(net->rate);
    g_free(net->weight);
    g_free(net->bytes);
    g_free(net->cookie);
    g_free(net->last);
    g_free(net->key);
    g_free(net->route);
    g_free(net->route_len);
    g_free(net->state);
    g_free(net->var);
    g_free(net->hpos);
    g_free(net->flow_of_var);
    g_free(net->heap);
    g_array_unref(net->free_flows);
    g_array_unref(net->changed);
    g_array_unref(net->scratch_cnsts);
    g_array_unref(net->touched_links);
    g_clear_error(&net->violation);
    g_free(net);
}

/* --- completion heap --- */

static inline gboolean
earlier(const MsNetwork *net, guint32 a, guint32 b)
{
    return net->key[a] < net->key[b] || (net->key[a] == net->key[b] && a < b);
}

static inline void
hplace(MsNetwork *net, guint i, guint32 f)
{
    net->heap[i] = f;
    net->hpos[f] = i;
}

static void
hup(MsNetwork *net, guint i)
{
    guint32 f = net->heap[i];
    while (i > 0) {
        guint p = (i - 1) / 2;
        if (!earlier(net, f, net->heap[p])) {
            break;
        }
        hplace(net, i, net->heap[p]);
        i = p;
    }
    hplace(net, i, f);
}

static void
hdown(MsNetwork *net, guint i)
{
    guint32 f = net->heap[i];
    for (;;) {
        guint l = 2 * i + 1;
        if (l >= net->heap_len) {
            break;
        }
        guint m = (l + 1 < net->heap_len && earlier(net, net->heap[l + 1], net->heap[l])) ? l + 1 : l;
        if (!earlier(net, net->heap[m], f)) {
            break;
        }
        hplace(net, i, net->heap[m]);
        i = m;
    }
    hplace(net, i, f);
}

static void
hpush(MsNetwork *net, guint32 f)
{
    hplace(net, net->heap_len++, f);
    hup(net, net->heap_len - 1);
}

static void
hrekey(MsNetwork *net, guint32 f, MsTime key)
{
    MsTime old = net->key[f];
    net->key[f] = key;
    if (key < old) {
        hup(net, net->hpos[f]);
    } else if (key > old) {
        hdown(net, net->hpos[f]);
    }
}

static void
hpop(MsNetwork *net)
{
    guint32 last = net->heap[--net->heap_len];
    if (net->heap_len) {
        hplace(net, 0, last);
        hdown(net, 0);
    }
}

/* --- flows --- */

static guint32
alloc_flow(MsNetwork *net)
{
    if (net->free_flows->len) {
        guint32 f = g_array_index(net->free_flows, guint32, net->free_flows->len - 1);
        g_array_set_size(net->free_flows, net->free_flows->len - 1);
        return f;
    }
    if (net->n_flows == net->cap_flows) {
        guint n = net->cap_flows = MAX(256, net->cap_flows * 2);
        net->remaining = g_renew(double, net->remaining, n);
        net->rate = g_renew(double, net->rate, n);
        net->weight = g_renew(double, net->weight, n);
        net->bytes = g_renew(guint64, net->bytes, n);
        net->cookie = g_renew(guint64, net->cookie, n);
        net->last = g_renew(MsTime, net->last, n);
        net->key = g_renew(MsTime, net->key, n);
        net->route = g_renew(const guint32 *, net->route, n);
        net->route_len = g_renew(guint8, net->route_len, n);
        net->state = g_renew(guint8, net->state, n);
        net->var = g_renew(guint32, net->var, n);
        net->hpos = g_renew(guint32, net->hpos, n);
        net->heap = g_renew(guint32, net->heap, n);
    }
    return net->n_flows++;
}

guint32
ms_network_start(MsNetwork *net, MsTime now, MsTime latency, const guint32 *links, guint n_links,
                 guint64 bytes, double weight, guint64 cookie)
{
    g_return_val_if_fail(weight > 0 && isfinite(weight), NONE);
    g_return_val_if_fail(n_links <= 255, NONE);
    guint32 f = alloc_flow(net);
    net->remaining[f] = (double)bytes;
    net->bytes[f] = bytes;
    net->rate[f] = 0;
    net->weight[f] = weight;
    net->cookie[f] = cookie;
    net->route[f] = links;
    net->route_len[f] = (guint8)n_links;
    net->state[f] = FLOW_PENDING;
    net->var[f] = NONE;
    net->last[f] = now;
    net->key[f] = now + latency;
    hpush(net, f);
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

static gboolean
tracking(const MsNetwork *net)
{
    return net->check || net->observer;
}

static void
add_link_rate(MsNetwork *net, guint32 f, double delta)
{
    guint32 v = net->var[f];
    guint k = ms_maxmin_var_n_constraints(net->mm, v);
    for (guint i = 0; i < k; i++) {
        guint32 l = net->link_of_cnst[ms_maxmin_var_constraint(net->mm, v, i)];
        net->link_rate[l] += delta;
        if (net->link_mark[l] != net->mark_epoch) {
            net->link_mark[l] = net->mark_epoch;
            g_array_append_val(net->touched_links, l);
        }
    }
}

static void
violation(MsNetwork *net, const char *format, ...) G_GNUC_PRINTF(2, 3);

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
    net->violation = g_error_new(MS_NETWORK_ERROR, MS_NETWORK_ERROR_INVARIANT,
                                 "invariant violated: %s", msg);
}

static void
release(MsNetwork *net, guint32 f)
{
    if (net->var[f] != NONE) {
        if (tracking(net)) {
            add_link_rate(net, f, -net->rate[f]);
        }
        ms_maxmin_remove_variable(net->mm, net->var[f]);
        net->dirty = TRUE;
    }
    net->state[f] = FLOW_FREE;
    net->n_live--;
    g_array_append_val(net->free_flows, f);
}

/* A pending flow whose latency has elapsed joins the sharing. Returns FALSE when it has nothing to
 * share (no bytes, or only unlimited links) and completes at once. */
static gboolean
activate(MsNetwork *net, guint32 f, MsTime now)
{
    net->last[f] = now;
    if (net->bytes[f] == 0) {
        return FALSE;
    }
    g_array_set_size(net->scratch_cnsts, 0);
    for (guint i = 0; i < net->route_len[f]; i++) {
        guint32 c = net->cnst_of_link[net->route[f][i]];
        if (c != NONE) {
            g_array_append_val(net->scratch_cnsts, c);
        }
    }
    if (net->scratch_cnsts->len == 0) {
        return FALSE;
    }
    guint32 v = ms_maxmin_add_variable(net->mm, net->weight[f],
                                       (const guint32 *)net->scratch_cnsts->data,
                                       net->scratch_cnsts->len);
    map_var(net, v, f);
    net->var[f] = v;
    net->state[f] = FLOW_ACTIVE;
    net->route[f] = NULL;
    net->dirty = TRUE;
    return TRUE;
}

static void
check_bytes(MsNetwork *net, guint32 f, MsTime now)
{
    double moved_late = net->rate[f] * (double)(now - net->last[f]) * 1e-12;
    double left = net->remaining[f] - moved_late;
    double slack = 1e-6 * (double)net->bytes[f] + 1.0 +
                   (isfinite(net->rate[f]) ? net->rate[f] * (MS_NETWORK_TIME_SLACK + 1) * 1e-12 : 0);
    if (fabs(left) > slack) {
        violation(net, "flow %u finished with %.6g of %" G_GUINT64_FORMAT " bytes not moved", f,
                  left, net->bytes[f]);
    }
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
    while (net->heap_len && net->key[net->heap[0]] <= now + MS_NETWORK_TIME_SLACK) {
        guint32 f = net->heap[0];
        events++;
        if (net->state[f] == FLOW_PENDING && activate(net, f, now)) {
            /* Active flows wait in the heap for their first rate; the next solve keys them. */
            hrekey(net, f, MS_TIME_NEVER);
            continue;
        }
        hpop(net);
        if (net->check && net->state[f] == FLOW_ACTIVE) {
            check_bytes(net, f, now);
        }
        guint64 cookie = net->cookie[f];
        release(net, f);
        net->stats.flows_completed++;
        done(ctx, cookie, now);
    }
    net->stats.events += events;
    return events;
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

static void
check_capacities(MsNetwork *net)
{
    for (guint i = 0; i < net->touched_links->len; i++) {
        guint32 l = g_array_index(net->touched_links, guint32, i);
        if (net->link_rate[l] > net->bandwidth[l] * (1 + 1e-9)) {
            violation(net, "link %u carries %.9g B/s, above its capacity %.9g B/s", l,
                      net->link_rate[l], net->bandwidth[l]);
        }
    }
}

static void
solve(MsNetwork *net, MsTime now)
{
    g_array_set_size(net->changed, 0);
    MsMaxminStats before, after;
    ms_maxmin_stats(net->mm, &before);
    ms_maxmin_solve(net->mm, net->changed);
    ms_maxmin_stats(net->mm, &after);
    net->stats.solves += after.solves - before.solves;
    net->stats.solver_elements += after.component_elems - before.component_elems;
    net->dirty = FALSE;
    gboolean track = tracking(net);
    const guint32 *vs = (const guint32 *)net->changed->data;
    for (guint i = 0; i < net->changed->len; i++) {
        guint32 f = net->flow_of_var[vs[i]];
        double nr = ms_maxmin_rate(net->mm, vs[i]);
        if (net->rate[f] > 0) {
            net->remaining[f] -= net->rate[f] * (double)(now - net->last[f]) * 1e-12;
        }
        if (track) {
            add_link_rate(net, f, nr - net->rate[f]);
        }
        net->last[f] = now;
        net->rate[f] = nr;
        hrekey(net, f, finish_time(net->remaining[f], nr, now));
    }
    net->stats.rate_changes += net->changed->len;
    if (track && net->touched_links->len) {
        if (net->check) {
            check_capacities(net);
        }
        if (net->observer) {
            net->observer(net->observer_ctx, now, (const guint32 *)net->touched_links->data,
                          net->touched_links->len);
        }
    }
    g_array_set_size(net->touched_links, 0);
    if (++net->mark_epoch == 0) {
        memset(net->link_mark, 0, net->n_links * sizeof(guint32));
        net->mark_epoch = 1;
    }
}

MsTime
ms_network_next_time(MsNetwork *net, MsTime now)
{
    if (net->dirty) {
        solve(net, now);
    }
    return net->heap_len ? net->key[net->heap[0]] : MS_TIME_NEVER;
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
    if (c == NONE) {
        return 0;
    }
    return tracking(net) ? net->link_rate[link] : ms_maxmin_usage(net->mm, c);
}

double
ms_network_link_bandwidth(const MsNetwork *net, guint link)
{
    g_return_val_if_fail(link < net->n_links, 0);
    return net->bandwidth[link];
}

void
ms_network_set_link_bandwidth(MsNetwork *net, guint link, MsTime now, double bandwidth)
{
    g_return_if_fail(link < net->n_links && bandwidth > 0 && isfinite(bandwidth));
    g_return_if_fail(net->cnst_of_link[link] != NONE);
    /* Settle nothing here: the solve at now re-times every flow whose rate changes. */
    (void)now;
    net->bandwidth[link] = bandwidth;
    ms_maxmin_set_capacity(net->mm, net->cnst_of_link[link], bandwidth);
    net->dirty = TRUE;
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
    gsize per_flow = 3 * sizeof(double) + 4 * 8 + sizeof(gpointer) + 2 + 3 * sizeof(guint32);
    return sizeof *net + net->cap_flows * per_flow + net->cap_var_map * sizeof(guint32) +
           net->n_links * (2 * sizeof(double) + 3 * sizeof(guint32)) + ms_maxmin_memory(net->mm);
}
