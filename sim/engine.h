/* engine: executes a schedule on the modelled machine. Compute ops take the compute model's time
 * (roofline with an efficiency curve, plus launch overhead, slowed by a calibrated factor while a
 * collective runs on the same GPU); collectives run as flow DAGs on the flow-level network; the
 * dispatcher decides what starts when. Produces per-op records. */
#pragma once

#include <glib.h>

#include "sim/net/net_model.h"
#include "sim/out/link_timeline.h"
#include "sim/runner.h"
#include "sim/schedule/schedule.h"
#include "sim/schedule/records.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

#define MS_ENGINE_ERROR (ms_engine_error_quark())
GQuark ms_engine_error_quark(void);
typedef enum {
    MS_ENGINE_ERROR_MISMATCH, /* schedule ranks beyond the topology's GPUs */
    MS_ENGINE_ERROR_INVARIANT,
} MsEngineError;

typedef struct _MsCalibration MsCalibration; /* sim/calib/calibration.h */

typedef struct {
    gboolean check_invariants;        /* network invariants + every op once, after its deps */
    const MsCalibration *calibration; /* NULL: nominal figures */
    /* Records each link's rate over time for utilisation plots (adds memory). */
    gboolean record_links;
    const MsNetSpec *net; /* how collectives become flows; NULL: the flow model */
    /* Every flow of every collective simulated on its own (the reference), instead of a
     * symmetric ring's first node standing for all while nothing else touches its links (the
     * default: the same times within rounding, sim/net/coll_sym.c). Recording links implies it. */
    gboolean flow_by_flow;
    /* When set, every rate change of a flow on its link is recorded into it, each flow labelled
     * with its collective and connection (borrowed; implies flow by flow). */
    MsLinkTimeline *link_timeline;
    /* Stragglers: GPU (schedule rank) i's kernel bodies take pace[i] times their time
     * (ms_compute_model_set_pace) for i < n_pace; NULL: none. Borrowed. */
    const double *pace;
    guint n_pace;
} MsEngineOptions;

/* Runs one iteration. Returns NULL with an error on a schedule/topology mismatch, a dispatcher
 * that cannot make progress, or (with check_invariants) a violated invariant. */
MsRecords *ms_engine_run(const MsSchedule *s, const MsTopology *topo, const MsEngineOptions *opts,
                         GError **error);

/* The engine as a runner called "sim" (sim/runner.h): each execution is one ms_engine_run with
 * opts (copied; NULL: defaults), recording links and the link timeline only for detailed
 * executions. The calibration is
 * borrowed and must outlive the runner. */
MsRunner *ms_engine_runner_new(const MsEngineOptions *opts);

G_END_DECLS
