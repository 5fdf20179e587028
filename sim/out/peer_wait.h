/* peer_wait: rank skew in a run's records. The dispatcher launches a collective on all its
 * participants at once (sim/schedule/dispatcher.h), as NCCL's kernels rendezvous, so a GPU that
 * reaches a collective early waits for the last one. A comm op *arrives* where it is first ready
 * (its dependencies done) with its stream idle on its GPU (its start when never so); it waits
 * from there to its collective's last arrival, less the time its stream runs other ops. What it
 * waits after the last arrival is the policy's (an allreduce held by Lina's gate, a place kept in
 * the stream's order), not a peer's, and is left out. The same code reads simulated and measured
 * records. */
#pragma once

#include <glib.h>

#include "sim/schedule/records.h"
#include "sim/schedule/schedule.h"

G_BEGIN_DECLS

/* An interval in which comm op `op` waited for peers. */
typedef struct {
    MsTime a, b;
    guint32 op;
} MsWaitSpan;

/* When op was ready: its dependencies' last end (0 without any; MS_TIME_NEVER when one did not
 * run). */
MsTime ms_peer_wait_ready(const MsSchedule *s, const MsRecords *r, guint32 op);
/* Every wait of the records, rank by rank and each op's earliest first (GArray of MsWaitSpan;
 * empty intervals left out); a collective with a participant that never ran has none. */
GArray *ms_peer_wait_spans(const MsSchedule *s, const MsRecords *r);
/* Per op of s, the time the spans say it waited (0 for compute ops). Free with g_free. */
MsTime *ms_peer_wait_per_op(const MsSchedule *s, const GArray *spans);

G_END_DECLS
