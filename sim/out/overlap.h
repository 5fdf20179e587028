/* overlap: what sharing the network costs an all-to-all, measured the way the Lina paper does
 * (USENIX ATC'23, section 2): for each all-to-all of a run that overlapped an allreduce, its time
 * in the run over its time alone. A collective's time is from its last participant's arrival to
 * its last participant's end, so that waiting for a late rank is not counted as slowdown; alone
 * is the same collective (ranks, per-pair bytes, algorithm) on an idle network under the same
 * network model. */
#pragma once

#include <glib.h>

#include "sim/net/net_model.h"
#include "sim/schedule/records.h"
#include "sim/schedule/schedule.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

typedef struct {
    guint32 coll;        /* the all-to-all */
    double run_us;       /* its time in the run */
    double alone_us;     /* its time on an idle network */
    gboolean overlapped; /* an allreduce ran on one of its ranks meanwhile */
} MsOverlapA2a;

/* One entry per all-to-all of phase (MS_PHASE_BACKWARD, ...; MS_PHASE_OTHER for all of them) in
 * the executed schedule s with records r, appended to out (MsOverlapA2a). net: the network model
 * the run used (NULL: the flow model). FALSE with the collective module's error when one cannot
 * be simulated alone. */
gboolean ms_overlap_a2a(const MsSchedule *s, const MsRecords *r, const MsTopology *topo,
                        const MsNetSpec *net, MsPhase phase, GArray *out, GError **error);

G_END_DECLS
