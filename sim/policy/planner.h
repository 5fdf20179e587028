/* planner: a scenario (topology, model, trace, policy, mode) turned into one schedule per
 * iteration of the trace, for `moesim plan` and for anything that runs many iterations. It
 * streams the trace (one iteration in memory), generates one when none is given (as `moesim run`
 * does, sim/scenario.h: the documented default skew), and feeds every planned iteration to
 * Lina's path statistics so that an inference batch is estimated from the batches before it. */
#pragma once

#include <glib.h>

#include "sim/moe/model.h"
#include "sim/moe/plan.h"
#include "sim/policy/policy.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

typedef struct {
    const char *topology; /* shipped name or file */
    const char *model;    /* shipped name or file */
    const char *trace;    /* FILE, sample:NAME, gen:SPEC; NULL = generated */
    const char *policy;   /* NAME[:key=value,...] */
    MsPlanMode mode;
    guint iterations; /* of a generated trace (at least 1) */
    guint64 seed;     /* of a generated trace, unless gen:SPEC gives one */
} MsPlannerOptions;

typedef struct _MsPlanner MsPlanner;

/* Loads topology, model and policy, and opens the trace. Errors come from those modules (each
 * names the file and line or the parameter); a gen:SPEC overrides keys of the generator's
 * defaults for this model and topology (ms_scenario_gen_spec). */
MsPlanner *ms_planner_new(const MsPlannerOptions *opts, GError **error);
void ms_planner_free(MsPlanner *planner);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsPlanner, ms_planner_free)

const MsModel *ms_planner_model(const MsPlanner *planner);
const MsTopology *ms_planner_topology(const MsPlanner *planner);
const MsPolicy *ms_planner_policy(const MsPlanner *planner);
/* The trace source actually opened ("gen:..." with every key when generated). */
const char *ms_planner_trace(const MsPlanner *planner);

/* Plans the trace's next iteration into *out. FALSE with *out NULL and no error after the last
 * iteration; FALSE with an error for bad trace records or a trace that does not fit the model
 * and topology (the message starts with the trace source). */
gboolean ms_planner_next(MsPlanner *planner, MsSchedule **out, GError **error);
/* Reads up to the iteration numbered `iteration` (learning from the ones before) and plans it.
 * MS_PLAN_ERROR_MISMATCH when the trace has no such iteration. */
MsSchedule *ms_planner_plan_iteration(MsPlanner *planner, guint64 iteration, GError **error);

G_END_DECLS
