/* sim: the discrete-event core shared by every simulated run. A clock in integer picoseconds, an
 * event queue ordered by (time, insertion sequence) so that runs are bit-for-bit reproducible, and
 * the flow-level network of a topology. Transfers between devices follow the topology's routes. */
#pragma once

#include <glib.h>

#include "sim/net/network.h"
#include "sim/base/units.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

#define MS_SIM_ERROR (ms_sim_error_quark())
GQuark ms_sim_error_quark(void);
typedef enum {
    MS_SIM_ERROR_CLOCK, /* modelled time ran into the end of the clock with work left */
} MsSimError;

/* The clock's last tick (2^64 ps is about 213 days): times that would pass it saturate here, and
 * a run that gets here with work left stops with MS_SIM_ERROR_CLOCK rather than wrap around. */
#define MS_SIM_CLOCK_END (MS_TIME_NEVER - 1)

typedef struct _MsSim MsSim;
typedef void (*MsSimFn)(MsSim *sim, gpointer ctx, guint64 arg);

/* The topology is borrowed and must outlive the simulation. */
MsSim *ms_sim_new(const MsTopology *topo);
void ms_sim_free(MsSim *sim);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsSim, ms_sim_free)

const MsTopology *ms_sim_topology(const MsSim *sim);
MsNetwork *ms_sim_network(MsSim *sim);
MsTime ms_sim_now(const MsSim *sim);

/* Calls fn(sim, ctx, arg) at time t (>= now). Events at equal times run in the order they were
 * scheduled. */
void ms_sim_at(MsSim *sim, MsTime t, MsSimFn fn, gpointer ctx, guint64 arg);
/* The same at now + delay, saturating at MS_SIM_CLOCK_END instead of wrapping around. */
void ms_sim_after(MsSim *sim, MsTime delay, MsSimFn fn, gpointer ctx, guint64 arg);
/* Calls fn(sim, ctx, 0) once the current instant has nothing left to run: after every event and
 * transfer completion due now, those they cause at the same instant included; what fn starts now
 * runs after it. One call is pending at a time (asking again for the same fn and ctx before it
 * runs is a no-op); not a queue event. */
void ms_sim_at_instant_end(MsSim *sim, MsSimFn fn, gpointer ctx);

/* Handlers receive transfer completions. A handler id costs nothing per transfer; register one
 * per object that starts transfers and unregister it when the object goes away. */
guint32 ms_sim_add_handler(MsSim *sim, MsSimFn fn, gpointer ctx);
void ms_sim_remove_handler(MsSim *sim, guint32 handler);

/* Starts moving bytes from device src to device dst now along the topology's route: the route
 * latency elapses first, then the bytes share the links. When done, calls the handler with arg
 * (arg < 2^40). src == dst is not a transfer (callers model local copies themselves). Fails with
 * MS_TOPOLOGY_ERROR_UNREACHABLE when there is no route. */
gboolean ms_sim_transfer(MsSim *sim, guint src, guint dst, guint64 bytes, double weight,
                         guint32 handler, guint64 arg, GError **error);
/* The same with the route latency replaced by latency (MS_TIME_NEVER: the route's). */
gboolean ms_sim_transfer_latency(MsSim *sim, guint src, guint dst, guint64 bytes, double weight,
                                 MsTime latency, guint32 handler, guint64 arg, GError **error);

/* The same over an explicit route (links of the topology, in order from src to dst, owned by the
 * caller and valid until the transfer is done); latency MS_TIME_NEVER: the route's. Returns the
 * network's id of the flow (ms_network_flow_left), valid until its handler is called. */
guint32 ms_sim_transfer_route(MsSim *sim, const guint32 *route, guint n_links, guint64 bytes,
                              double weight, MsTime latency, guint32 handler, guint64 arg);
/* The same for a transfer that resumes what another had left, to the fraction of a byte
 * (ms_network_resume). */
guint32 ms_sim_resume_route(MsSim *sim, const guint32 *route, guint n_links, double left,
                            double weight, MsTime latency, guint32 handler, guint64 arg);

/* The handler and argument a transfer's network flow was started with, from its network cookie
 * (MsLinkFlow.cookie): who owns a flow seen on a link. */
void ms_sim_flow_owner(guint64 cookie, guint32 *handler, guint64 *arg);

/* Watching links: before a transfer of another handler starts on a watched link, the watching
 * handler is called with arg MS_SIM_WATCH_ARG, and must unwatch its links from that call (its
 * own transfers never call it). A way for an object that simulates a symmetric part of the
 * traffic by representatives to hear that its symmetry is about to break. ms_sim_watch fails
 * (FALSE, nothing watched) when another handler watches one of the links. */
#define MS_SIM_NO_WATCH G_MAXUINT32
#define MS_SIM_WATCH_ARG (G_GUINT64_CONSTANT(1) << 40)
gboolean ms_sim_watch(MsSim *sim, guint32 handler, const guint32 *links, guint n);
void ms_sim_unwatch(MsSim *sim, guint32 handler, const guint32 *links, guint n);

/* Runs until nothing is left to happen. Returns FALSE with the error when an invariant check
 * failed (see ms_sim_set_check_invariants), or with MS_SIM_ERROR_CLOCK when the next event or
 * transfer completion lies at or beyond MS_SIM_CLOCK_END. */
gboolean ms_sim_run(MsSim *sim, GError **error);
/* Runs events strictly before time t (later ones stay queued); the clock ends at t or at the last
 * event when nothing is left. A limit at or before the current time runs nothing. */
gboolean ms_sim_run_until(MsSim *sim, MsTime t, GError **error);

/* Network invariants (capacities, conserved bytes, monotonic time) checked during the run. */
void ms_sim_set_check_invariants(MsSim *sim, gboolean on);

typedef struct {
    guint64 events; /* queue events + network events */
    guint64 queue_events;
    MsNetworkStats net;
} MsSimStats;
void ms_sim_stats(const MsSim *sim, MsSimStats *out);

G_END_DECLS
