/* sim: the event loop. At each instant it runs every queued event due, then every network event
 * due, and repeats until nothing more happens at that instant; only then does the network re-solve
 * bandwidth shares, once for all the changes of the instant. */
#include "sim.h"

/* clang-format off */
G_DEFINE_QUARK(ms_sim_error_quark, ms_sim_error)
/* clang-format on */

typedef struct {
    MsTime time;
    guint64 seq;
    MsSimFn fn;
    gpointer ctx;
    guint64 arg;
} Event;

typedef struct {
    MsSimFn fn;
    gpointer ctx;
} Handler;

#define ARG_BITS 40
#define ARG_MASK ((G_GUINT64_CONSTANT(1) << ARG_BITS) - 1)

struct _MsSim {
    const MsTopology *topo;
    MsNetwork *net;
    MsTime now;
    GArray *events; /* binary heap of Event */
    guint64 seq;
    GArray *handlers;
    GArray *free_handlers;
    guint64 queue_events;
    /* Watched links: per link the handler that watches it (MS_SIM_NO_WATCH: none), and how many
     * links are watched, so that transfers look only while some are. */
    guint32 *watch;
    guint n_watched;
    /* The call asked for when the current instant has nothing left to run (NULL: none). */
    MsSimFn settle;
    gpointer settle_ctx;
};

MsSim *
ms_sim_new(const MsTopology *topo)
{
    MsSim *sim = g_new0(MsSim, 1);
    sim->topo = topo;
    guint n = ms_topology_n_links(topo);
    g_autofree double *bw = g_new(double, MAX(n, 1));
    for (guint l = 0; l < n; l++) {
        bw[l] = ms_topology_link(topo, l)->bandwidth;
    }
    sim->net = ms_network_new(n, bw);
    sim->events = g_array_new(FALSE, FALSE, sizeof(Event));
    sim->handlers = g_array_new(FALSE, FALSE, sizeof(Handler));
    sim->free_handlers = g_array_new(FALSE, FALSE, sizeof(guint32));
    sim->watch = g_new(guint32, MAX(n, 1));
    for (guint l = 0; l < n; l++) {
        sim->watch[l] = MS_SIM_NO_WATCH;
    }
    return sim;
}

void
ms_sim_free(MsSim *sim)
{
    if (sim == NULL) {
        return;
    }
    ms_network_free(sim->net);
    g_array_unref(sim->events);
    g_array_unref(sim->handlers);
    g_array_unref(sim->free_handlers);
    g_free(sim->watch);
    g_free(sim);
}

const MsTopology *
ms_sim_topology(const MsSim *sim)
{
    return sim->topo;
}

MsNetwork *
ms_sim_network(MsSim *sim)
{
    return sim->net;
}

MsTime
ms_sim_now(const MsSim *sim)
{
    return sim->now;
}

static inline gboolean
before(const Event *a, const Event *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

void
ms_sim_at(MsSim *sim, MsTime t, MsSimFn fn, gpointer ctx, guint64 arg)
{
    g_return_if_fail(t >= sim->now);
    Event ev = {t, sim->seq++, fn, ctx, arg};
    g_array_append_val(sim->events, ev);
    Event *h = (Event *)sim->events->data;
    guint i = sim->events->len - 1;
    while (i > 0) {
        guint p = (i - 1) / 2;
        if (!before(&ev, &h[p])) {
            break;
        }
        h[i] = h[p];
        i = p;
    }
    h[i] = ev;
}

void
ms_sim_after(MsSim *sim, MsTime delay, MsSimFn fn, gpointer ctx, guint64 arg)
{
    MsTime t = delay < MS_SIM_CLOCK_END - sim->now ? sim->now + delay : MS_SIM_CLOCK_END;
    ms_sim_at(sim, t, fn, ctx, arg);
}

static Event
pop_event(MsSim *sim)
{
    Event *h = (Event *)sim->events->data;
    Event top = h[0];
    guint n = sim->events->len - 1;
    Event last = h[n];
    g_array_set_size(sim->events, n);
    if (n == 0) {
        return top;
    }
    h = (Event *)sim->events->data;
    guint i = 0;
    for (;;) {
        guint l = 2 * i + 1;
        if (l >= n) {
            break;
        }
        guint m = (l + 1 < n && before(&h[l + 1], &h[l])) ? l + 1 : l;
        if (!before(&h[m], &last)) {
            break;
        }
        h[i] = h[m];
        i = m;
    }
    h[i] = last;
    return top;
}

guint32
ms_sim_add_handler(MsSim *sim, MsSimFn fn, gpointer ctx)
{
    Handler h = {fn, ctx};
    if (sim->free_handlers->len) {
        guint32 id = g_array_index(sim->free_handlers, guint32, sim->free_handlers->len - 1);
        g_array_set_size(sim->free_handlers, sim->free_handlers->len - 1);
        g_array_index(sim->handlers, Handler, id) = h;
        return id;
    }
    g_array_append_val(sim->handlers, h);
    return sim->handlers->len - 1;
}

void
ms_sim_remove_handler(MsSim *sim, guint32 handler)
{
    g_return_if_fail(handler < sim->handlers->len);
    /* Removing twice would hand the same id to two later owners. */
    g_return_if_fail(g_array_index(sim->handlers, Handler, handler).fn != NULL);
    g_array_index(sim->handlers, Handler, handler).fn = NULL;
    g_array_append_val(sim->free_handlers, handler);
}

gboolean
ms_sim_transfer(MsSim *sim, guint src, guint dst, guint64 bytes, double weight, guint32 handler,
                guint64 arg, GError **error)
{
    return ms_sim_transfer_latency(sim, src, dst, bytes, weight, MS_TIME_NEVER, handler, arg,
                                   error);
}

gboolean
ms_sim_transfer_latency(MsSim *sim, guint src, guint dst, guint64 bytes, double weight,
                        MsTime latency, guint32 handler, guint64 arg, GError **error)
{
    g_return_val_if_fail(arg <= ARG_MASK, FALSE);
    g_return_val_if_fail(handler < sim->handlers->len, FALSE);
    guint n = 0;
    const guint32 *route = ms_topology_route(sim->topo, src, dst, &n, error);
    if (route == NULL) {
        return FALSE;
    }
    ms_sim_transfer_route(sim, route, n, bytes, weight, latency, handler, arg);
    return TRUE;
}

guint32
ms_sim_transfer_route(MsSim *sim, const guint32 *route, guint n_links, guint64 bytes, double weight,
                      MsTime latency, guint32 handler, guint64 arg)
{
    return ms_sim_resume_route(sim, route, n_links, (double)bytes, weight, latency, handler, arg);
}

guint32
ms_sim_resume_route(MsSim *sim, const guint32 *route, guint n_links, double left, double weight,
                    MsTime latency, guint32 handler, guint64 arg)
{
    g_return_val_if_fail(arg <= ARG_MASK, G_MAXUINT32);
    g_return_val_if_fail(handler < sim->handlers->len, G_MAXUINT32);
    /* A watcher hears of a transfer of another handler onto its links before it starts. Its
     * callback unwatches them, so each is called once. */
    for (guint i = 0; sim->n_watched && i < n_links; i++) {
        guint32 w = sim->watch[route[i]];
        if (w != MS_SIM_NO_WATCH && w != handler) {
            const Handler *h = &g_array_index(sim->handlers, Handler, w);
            h->fn(sim, h->ctx, MS_SIM_WATCH_ARG);
        }
    }
    MsTime lat =
        latency != MS_TIME_NEVER ? latency : ms_topology_route_latency(sim->topo, route, n_links);
    return ms_network_resume(sim->net, sim->now, lat, route, n_links, left, weight,
                             ((guint64)handler << ARG_BITS) | arg);
}

void
ms_sim_flow_owner(guint64 cookie, guint32 *handler, guint64 *arg)
{
    *handler = (guint32)(cookie >> ARG_BITS);
    *arg = cookie & ARG_MASK;
}

gboolean
ms_sim_watch(MsSim *sim, guint32 handler, const guint32 *links, guint n)
{
    g_return_val_if_fail(handler < sim->handlers->len, FALSE);
    for (guint i = 0; i < n; i++) {
        if (sim->watch[links[i]] != MS_SIM_NO_WATCH && sim->watch[links[i]] != handler) {
            return FALSE;
        }
    }
    for (guint i = 0; i < n; i++) {
        if (sim->watch[links[i]] == MS_SIM_NO_WATCH) {
            sim->watch[links[i]] = handler;
            sim->n_watched++;
        }
    }
    return TRUE;
}

void
ms_sim_unwatch(MsSim *sim, guint32 handler, const guint32 *links, guint n)
{
    for (guint i = 0; i < n; i++) {
        if (sim->watch[links[i]] == handler) {
            sim->watch[links[i]] = MS_SIM_NO_WATCH;
            sim->n_watched--;
        }
    }
}

static void
flow_done(gpointer ctx, guint64 cookie, MsTime now)
{
    MsSim *sim = ctx;
    (void)now;
    const Handler *h = &g_array_index(sim->handlers, Handler, cookie >> ARG_BITS);
    h->fn(sim, h->ctx, cookie & ARG_MASK);
}

void
ms_sim_at_instant_end(MsSim *sim, MsSimFn fn, gpointer ctx)
{
    g_return_if_fail(sim->settle == NULL || (sim->settle == fn && sim->settle_ctx == ctx));
    sim->settle = fn;
    sim->settle_ctx = ctx;
}

/* Runs everything due at sim->now, including what those events schedule for the same instant,
 * then the instant-end call, and again what that one starts now. */
static void
run_instant(MsSim *sim)
{
    for (;;) {
        gboolean progress = TRUE;
        while (progress) {
            progress = FALSE;
            while (sim->events->len && g_array_index(sim->events, Event, 0).time <= sim->now) {
                Event ev = pop_event(sim);
                sim->queue_events++;
                ev.fn(sim, ev.ctx, ev.arg);
                progress = TRUE;
            }
            if (ms_network_advance(sim->net, sim->now, flow_done, sim)) {
                progress = TRUE;
            }
        }
        if (sim->settle == NULL) {
            return;
        }
        MsSimFn fn = sim->settle;
        sim->settle = NULL;
        fn(sim, sim->settle_ctx, 0);
    }
}

gboolean
ms_sim_run_until(MsSim *sim, MsTime limit, GError **error)
{
    for (;;) {
        /* Events at the limit itself stay queued, also when the clock already stands there (a
         * second call with the same limit runs nothing). */
        if (sim->now >= limit) {
            break;
        }
        run_instant(sim);
        MsTime tn = ms_network_next_time(sim->net, sim->now);
        MsTime tq = sim->events->len ? g_array_index(sim->events, Event, 0).time : MS_TIME_NEVER;
        MsTime t = MIN(tn, tq);
        if (t == MS_TIME_NEVER) {
            break;
        }
        if (t >= limit) {
            sim->now = MAX(sim->now, limit);
            break;
        }
        if (t >= MS_SIM_CLOCK_END) {
            /* Work left at the clock's end: saturated times would make the run spin forever
             * or end with wrong times. */
            g_set_error(error, MS_SIM_ERROR, MS_SIM_ERROR_CLOCK,
                        "modelled time reaches the end of the clock (2^64 ps, about 213 days) "
                        "with work left: a size, rate or time in the input is off by orders of "
                        "magnitude");
            return FALSE;
        }
        sim->now = MAX(t, sim->now);
    }
    return ms_network_check(sim->net, error);
}

gboolean
ms_sim_run(MsSim *sim, GError **error)
{
    return ms_sim_run_until(sim, MS_TIME_NEVER, error);
}

void
ms_sim_set_check_invariants(MsSim *sim, gboolean on)
{
    ms_network_set_check_invariants(sim->net, on);
}

void
ms_sim_stats(const MsSim *sim, MsSimStats *out)
{
    ms_network_stats(sim->net, &out->net);
    out->queue_events = sim->queue_events;
    out->events = sim->queue_events + out->net.events;
}
