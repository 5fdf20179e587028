/* dispatcher: the online part of every scheduling policy, shared by the simulator and the cpu and
 * cuda backends. It decides which op each stream launches next from events only (an op became
 * ready, an op finished), never from time, so a simulated run and a real run of the same schedule
 * make the same decisions given the same order of events. It knows no policy: the rules a policy
 * chose travel in the schedule as data (ms_schedule_rules).
 *
 * Rules (docs/policies.md):
 * - Compute streams run their ops strictly in priority order (the plan's program order): the
 *   next op waits until it is ready, as in a CUDA stream fed in order.
 * - Communication ops form collectives. A collective becomes launchable once every participant's
 *   op is ready; it is launched on all participants at once, when its stream is free on every one
 *   of them (a single coordinator decides, as Horovod's and ByteScheduler's do, so that all ranks
 *   see the same order of collectives on a stream and cannot deadlock). Among launchable
 *   collectives of a stream, the schedule's order rule decides: readiness order
 *   (MS_DISPATCH_ORDER_READY; collectives that became launchable between the same two polls in
 *   priority order, the plan's, not in the order their ops were reported) or priority then
 *   readiness (MS_DISPATCH_ORDER_PRIORITY). A
 *   collective that must wait for a busy rank keeps its place on all its ranks (nothing later in
 *   the order overtakes it there, so every rank runs the stream's collectives in the same order),
 *   while collectives on other ranks go ahead.
 * - Under MS_ALLREDUCE_GATE_A2A (Lina's), an allreduce collective is launchable only if none of
 *   its participants has an all-to-all waiting (ready, not launched) or running, and none is in
 *   the "all-to-all imminent" state (set when an op flagged MS_OP_FLAG_A2A_IMMINENT starts on that
 *   rank, cleared when the rank's next all-to-all is launched). */
#pragma once

#include <glib.h>

#include "sim/schedule/schedule.h"

G_BEGIN_DECLS

#define MS_DISPATCHER_ERROR (ms_dispatcher_error_quark())
GQuark ms_dispatcher_error_quark(void);
typedef enum {
    MS_DISPATCHER_ERROR_RULES, /* the schedule's rules hold a value the dispatcher does not know */
    MS_DISPATCHER_ERROR_STUCK, /* nothing runs, nothing can launch, ops remain */
} MsDispatcherError;

typedef struct _MsDispatcher MsDispatcher;

/* The schedule is borrowed (must outlive the dispatcher) and must be valid. NULL with
 * MS_DISPATCHER_ERROR_RULES when its rules hold an unknown value. */
MsDispatcher *ms_dispatcher_new(const MsSchedule *s, GError **error);
void ms_dispatcher_free(MsDispatcher *d);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsDispatcher, ms_dispatcher_free)

/* Appends (guint32) the ops to start now: compute ops one by one, and all participant ops of a
 * launched collective together, in a deterministic order. Call at the start and after reporting
 * finished ops. */
void ms_dispatcher_poll(MsDispatcher *d, GArray *launch);
/* Reports that op finished on its rank (for a comm op: that rank's part of the collective). */
void ms_dispatcher_finished(MsDispatcher *d, guint32 op);

gboolean ms_dispatcher_done(const MsDispatcher *d);
guint ms_dispatcher_n_running(const MsDispatcher *d);
/* After a poll that launched nothing while nothing runs: FALSE with MS_DISPATCHER_ERROR_STUCK
 * naming an op that can never start, when ops remain. */
gboolean ms_dispatcher_check_progress(const MsDispatcher *d, GError **error);

/* Order in which ops became ready (1, 2, ...; 0 = not yet), and in which they were launched. */
guint64 ms_dispatcher_ready_seq(const MsDispatcher *d, guint32 op);
guint64 ms_dispatcher_launch_seq(const MsDispatcher *d, guint32 op);

G_END_DECLS
