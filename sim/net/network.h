/* network: flows over links in integer picosecond time. A flow first waits its route latency
 * (paid once, at start, as in SimGrid's CM02), then shares the capacity of its links with the other
 * active flows by weighted max-min fairness until its bytes are through. Rates change only at flow
 * activations and completions, and only where those touch. Links of unlimited bandwidth add
 * latency but no sharing constraint. Knows nothing of topologies: links are indices. */
#pragma once

#include <glib.h>

#include "sim/base/units.h"
#include "sim/net/share.h"

G_BEGIN_DECLS

typedef struct _MsNetwork MsNetwork;

/* Flow events closer together than this are processed as one instant, so that flows which finish
 * together mathematically (and differ only by rounding to picoseconds) share one re-solve. */
#define MS_NETWORK_TIME_SLACK ((MsTime)10)

/* bandwidth[i] in bytes/s for link i; INFINITY for an unlimited link. Copied. Links are shared
 * by the given sharing model (share.h), or by the default one (MS_SHARE_DEFAULT). */
MsNetwork *ms_network_new(guint n_links, const double *bandwidth);
MsNetwork *ms_network_new_shared(guint n_links, const double *bandwidth, const MsShareClass *share);
/* The sharing model the network was made with. */
const MsShareClass *ms_network_share(const MsNetwork *net);
void ms_network_free(MsNetwork *net);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsNetwork, ms_network_free)

/* Starts a flow at time now of bytes over the given links; after latency it becomes active.
 * links is NOT copied: it must stay valid until the flow is active (topology routes live as long
 * as the topology). weight > 0 scales its share. cookie is handed back on completion. Returns a
 * flow id, unique among live flows. bytes == 0 completes after the latency. */
guint32 ms_network_start(MsNetwork *net, MsTime now, MsTime latency, const guint32 *links,
                         guint n_links, guint64 bytes, double weight, guint64 cookie);
/* The same for a flow that resumes what another had left (ms_network_flow_left,
 * ms_network_cancel), to the fraction of a byte: left >= 0, finite. */
guint32 ms_network_resume(MsNetwork *net, MsTime now, MsTime latency, const guint32 *links,
                          guint n_links, double left, double weight, guint64 cookie);

/* Time of the next flow event (an activation or completion), or MS_TIME_NEVER. Solves first if
 * flows started or finished since the last solve, so the answer is exact. */
MsTime ms_network_next_time(MsNetwork *net, MsTime now);

typedef void (*MsFlowDoneFn)(gpointer ctx, guint64 cookie, MsTime now);
/* Processes every flow event due at or before now + MS_NETWORK_TIME_SLACK: activations join the
 * sharing, completions leave it and call done(ctx, cookie, now). Returns the number of events.
 * Callbacks may start new flows. */
guint ms_network_advance(MsNetwork *net, MsTime now, MsFlowDoneFn done, gpointer ctx);

guint ms_network_n_links(const MsNetwork *net);
guint ms_network_n_live_flows(const MsNetwork *net);
/* Current total rate (bytes/s) on a link, O(1); 0 for unlimited links. */
double ms_network_link_rate(const MsNetwork *net, guint link);
double ms_network_link_bandwidth(const MsNetwork *net, guint link);
/* Live flows whose route crosses a link, O(1): those waiting for their latency and, on a link of
 * limited bandwidth, those sharing it. */
guint ms_network_link_flows(const MsNetwork *net, guint link);
/* A flow sharing a link, as ms_network_link_sharing reports it. */
typedef struct {
    guint32 id;       /* the network's flow id (reused once the flow is done) */
    guint64 cookie;   /* as given to ms_network_start */
    MsTime active_at; /* the end of its latency: with id and cookie, tells a reused id apart */
    double rate;      /* bytes/s, as of the last solve (0 before its first) */
    double weight;
} MsLinkFlow;
/* Appends to out (a GArray of MsLinkFlow) the flows sharing a link of limited bandwidth, in
 * the solver's order (which changes as flows come and go), and returns how many: O(flows on the
 * link), nothing kept or computed when never called. Flows still in their latency move nothing
 * and are not listed (ms_network_link_flows counts them); a route that crosses the link twice is
 * listed twice; an unlimited link lists none. Rates are the last solve's: current from a link
 * observer or after ms_network_next_time. */
guint ms_network_link_sharing(const MsNetwork *net, guint link, GArray *out);
/* Where live flow id stands at time now (no earlier than the last event processed): the bytes
 * it has still to move (those of a flow in its latency; of a sharing flow, what its rate since
 * the last solve leaves, never below 0) and the time it becomes or became active. FALSE for an
 * id that is not a live flow. */
gboolean ms_network_flow_left(const MsNetwork *net, guint32 id, MsTime now, double *bytes,
                              MsTime *active_at);
/* Ends live flow id at time now without completing it (no callback): what ms_network_flow_left
 * tells of it goes to bytes and active_at, and the links it shared are re-shared at the next
 * solve. FALSE for an id that is not a live flow. */
gboolean ms_network_cancel(MsNetwork *net, guint32 id, MsTime now, double *bytes,
                           MsTime *active_at);
/* Changes a link's bandwidth from now on (flows in flight are re-shared). */
void ms_network_set_link_bandwidth(MsNetwork *net, guint link, MsTime now, double bandwidth);

/* How often the solver's propagation may process one link in a solve before it hands the solve
 * to the progressive-filling repair (see ms_maxmin_set_budget); 0 = the repair only. For
 * comparisons: results agree either way within the solver's tolerance. */
void ms_network_set_solver_budget(MsNetwork *net, guint reprocess);

/* When on, every solve verifies that no link carries more than its capacity (beyond one part in
 * 10^9), that time never goes backwards, and that every completing flow moved exactly its bytes
 * (within one part in 10^6). The first violation is kept; see ms_network_check. */
void ms_network_set_check_invariants(MsNetwork *net, gboolean on);
/* FALSE with a description of the first violated invariant, if any. */
gboolean ms_network_check(const MsNetwork *net, GError **error);

/* Called after every solve with the links whose rate may have changed (in increasing order), so
 * that utilisation can be recorded with ms_network_link_rate; NULL to stop. */
typedef void (*MsLinkObserverFn)(gpointer ctx, MsTime now, const guint32 *links, guint n);
void ms_network_set_link_observer(MsNetwork *net, MsLinkObserverFn fn, gpointer ctx);

typedef struct {
    guint64 flows_started;
    guint64 flows_completed;
    guint64 events; /* activations + completions */
    guint64 solves;
    guint64 rate_changes;  /* flows whose rate changed at a solve (their group's or their own) */
    guint64 group_changes; /* bottleneck groups re-timed after a solve (one re-key each) */
    guint64 peak_live_flows;
    guint64 solver_elements;     /* flow-link pairs re-solved, summed over solver passes */
    guint64 solver_vars;         /* flows re-solved, summed over solver passes */
    guint64 solver_repairs;      /* solver passes that followed a failed boundary check */
    guint64 solver_rescans;      /* links the solver scanned whole to check a bound */
    guint64 solver_propagations; /* solves done by propagating level changes */
} MsNetworkStats;
void ms_network_stats(const MsNetwork *net, MsNetworkStats *out);
gsize ms_network_memory(const MsNetwork *net);

#define MS_NETWORK_ERROR (ms_network_error_quark())
GQuark ms_network_error_quark(void);
typedef enum {
    MS_NETWORK_ERROR_INVARIANT,
} MsNetworkError;

G_END_DECLS
