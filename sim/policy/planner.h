/* planner: loaded inputs (topology, model, policy, routing source, mode) turned into one schedule
 * per iteration of the routing, for `moesim plan` and for the scenario that runs them. It streams
 * the routing (one iteration in memory), generating it when the source says so (shaped for the
 * model and the topology, sim/routing_source.h), and feeds every iteration it reads to Lina's path
 * statistics so that an inference batch is estimated from the batches before it. */
#pragma once

#include <glib.h>

#include "sim/moe/model.h"
#include "sim/moe/plan.h"
#include "sim/policy/policy.h"
#include "sim/rank_map.h"
#include "sim/routing_source.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

/* Borrowed by the planner: each must outlive it. */
typedef struct {
    const MsTopology *topology;
    const MsModel *model;
    const MsPolicy *policy;
    const MsRoutingSource *routing; /* NULL: generated with the defaults */
    MsPlanMode mode;
    guint iterations; /* of a generated routing (at least 1) */
    guint64 seed;     /* of a generated routing, unless its keys give one (0: 1) */
    MsRankMap ranks;  /* the routing's ranks on the topology's GPUs (zero: one to one) */
} MsPlannerInputs;

typedef struct _MsPlanner MsPlanner;

/* Opens the routing: a generator (MS_TRACE_GEN_ERROR for keys that do not fit this model and
 * topology; it generates GPUs used / tile ranks) or a trace file or sample (ms_trace_reader_open's
 * errors). MS_RANK_MAP_ERROR_FIT for more GPUs than the topology has, or a tile that does not
 * divide the GPUs used of a generated routing. */
MsPlanner *ms_planner_new(const MsPlannerInputs *in, GError **error);
void ms_planner_free(MsPlanner *planner);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsPlanner, ms_planner_free)

/* The routing actually read ("gen:..." with every key when generated). */
const char *ms_planner_trace(const MsPlanner *planner);

/* Plans the routing's next iteration into *out. FALSE with *out NULL and no error after the last
 * iteration; FALSE with an error for bad trace records or a trace that does not fit the model
 * and topology (the message starts with the trace source). */
gboolean ms_planner_next(MsPlanner *planner, MsSchedule **out, GError **error);
/* Reads up to the iteration numbered `iteration` (learning from the ones before) and plans it.
 * MS_PLAN_ERROR_MISMATCH when the trace has no such iteration. */
MsSchedule *ms_planner_plan_iteration(MsPlanner *planner, guint64 iteration, GError **error);

/* The steps of ms_planner_next, for a driver that interleaves its own (warm-up iterations read
 * but not planned); their errors are those of the modules below, without the source prefix.
 * read: the next iteration into *out (FALSE with *out NULL and no error at the end), its ranks
 * mapped onto the GPUs used (MS_RANK_MAP_ERROR_FIT, prefixed with the source, when they do not
 * fit). plan: the schedule of a routing read, whose metadata holds the mapping when there is one
 * (rank_map, trace_ranks, rank_tile, gpus_used). learn: adds a routing with token paths to
 * Lina's statistics, when the policy keeps them. */
gboolean ms_planner_read(MsPlanner *planner, MsRouting **out, GError **error);
MsSchedule *ms_planner_plan(MsPlanner *planner, const MsRouting *routing, GError **error);
gboolean ms_planner_learn(MsPlanner *planner, const MsRouting *routing, GError **error);

G_END_DECLS
