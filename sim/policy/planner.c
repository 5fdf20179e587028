/* planner: streaming a routing source and planning its iterations one at a time. A generated
 * routing is the one every command generates for the same inputs (ms_routing_source_gen_params):
 * shaped by the model and the topology, with the documented default skew unless its keys say
 * otherwise. */
#include "planner.h"

#include <string.h>

#include "lina_infer.h"
#include "traces/trace_reader.h"

struct _MsPlanner {
    MsPolicyInput in; /* model, topology, mode, profile; routing set per iteration */
    const MsPolicy *policy;
    MsRankMap map;
    guint gpus_used;
    guint trace_ranks;     /* of the routing read last, before tiling */
    MsTraceReader *reader; /* a trace file or sample */
    MsTraceGen *gen;       /* or the generator */
    char *source;
    MsPathProfile *profile; /* Lina's dynamic inference only */
    MsExpertCache *cache;   /* Lina's inference with weights=host only */
};

void
ms_planner_free(MsPlanner *p)
{
    if (p == NULL) {
        return;
    }
    ms_trace_reader_free(p->reader);
    ms_trace_gen_free(p->gen);
    ms_path_profile_free(p->profile);
    ms_expert_cache_free(p->cache);
    g_free(p->source);
    g_free(p);
}

static gboolean
lina_dynamic(const MsPlanner *p)
{
    return p->in.mode == MS_PLAN_INFER && strcmp(ms_policy_name(p->policy), "lina") == 0 &&
           strcmp(ms_policy_get_choice(p->policy, "placement"), "dynamic") == 0;
}

static gboolean
open_routing(MsPlanner *p, const MsPlannerInputs *in, GError **error)
{
    g_autoptr(MsRoutingSource) dflt = in->routing ? NULL : ms_routing_source_new(NULL, error);
    const MsRoutingSource *src = in->routing ? in->routing : dflt;
    if (!ms_routing_source_generated(src)) {
        p->source = g_strdup(ms_routing_source_spec(src));
        p->reader = ms_trace_reader_open(p->source, error);
        return p->reader != NULL;
    }
    guint tile = MAX(in->ranks.tile, 1);
    if (p->gpus_used % tile != 0) {
        g_set_error(error, MS_RANK_MAP_ERROR, MS_RANK_MAP_ERROR_FIT,
                    "--ranks %ux does not divide the %u GPUs used", tile, p->gpus_used);
        return FALSE;
    }
    MsRoutingShape shape = {in->model, in->topology,       in->mode, MAX(in->iterations, 1),
                            in->seed,  p->gpus_used / tile};
    MsTraceGenParams params;
    if (!ms_routing_source_gen_params(src, &shape, &params, error)) {
        return FALSE;
    }
    /* Refused before the routing exists: at frontier scale its generation alone takes minutes
     * and gigabytes, and the schedule's size depends on the shapes only. */
    if (!ms_plan_check_ops(in->model, p->gpus_used, in->mode, error)) {
        return FALSE;
    }
    g_autofree char *spec = ms_trace_gen_params_to_spec(&params);
    p->source = g_strconcat("gen:", spec, NULL);
    p->gen = ms_trace_gen_new(&params, error);
    return p->gen != NULL;
}

MsPlanner *
ms_planner_new(const MsPlannerInputs *in, GError **error)
{
    g_return_val_if_fail(in->topology && in->model && in->policy, NULL);
    g_autoptr(MsPlanner) p = g_new0(MsPlanner, 1);
    p->in = (MsPolicyInput){in->model, NULL, in->topology, in->mode, NULL};
    p->policy = in->policy;
    p->map = in->ranks;
    if (!ms_rank_map_gpus_used(&p->map, ms_topology_n_gpus(in->topology),
                               ms_topology_name(in->topology), &p->gpus_used, error) ||
        !open_routing(p, in, error)) {
        return NULL;
    }
    if (lina_dynamic(p)) {
        const MsModelSpec *s = ms_model_spec(in->model);
        p->profile =
            ms_path_profile_new(s->experts, s->n_moe, (guint)ms_policy_get_uint(p->policy, "path"));
        p->in.profile = p->profile;
    }
    GError *local = NULL;
    p->cache = ms_lina_infer_cache_new(p->policy, &p->in, p->gpus_used, &local);
    if (local) {
        g_propagate_error(error, local);
        return NULL;
    }
    p->in.cache = p->cache;
    return g_steal_pointer(&p);
}

const char *
ms_planner_trace(const MsPlanner *p)
{
    return p->source;
}

gboolean
ms_planner_read(MsPlanner *p, MsRouting **out, GError **error)
{
    g_autoptr(MsRouting) raw = NULL;
    *out = NULL;
    if (!(p->reader ? ms_trace_reader_next_iteration(p->reader, &raw, error)
                    : ms_trace_gen_next(p->gen, &raw, error))) {
        return FALSE;
    }
    /* The model's shape first: a trace of another model is that, whatever its ranks. */
    MsRouting *tiled = NULL;
    if (!ms_plan_check_routing(p->in.model, raw, p->in.topo, p->in.mode, error) ||
        !ms_rank_map_apply(&p->map, raw, p->gpus_used, ms_topology_name(p->in.topo), &tiled,
                           error)) {
        if (p->reader) {
            g_prefix_error(error, "%s: ", p->source); /* a generated routing's keys are noise */
        }
        return FALSE;
    }
    p->trace_ranks = ms_routing_header(raw)->ranks;
    *out = tiled ? tiled : g_steal_pointer(&raw);
    return TRUE;
}

/* The mapping, for results: only when it is not one to one. */
static void
note_map(const MsPlanner *p, MsSchedule *s)
{
    guint n = ms_topology_n_gpus(p->in.topo), tile = MAX(p->map.tile, 1);
    if (!ms_rank_map_active(&p->map, n)) {
        return;
    }
    g_autofree char *what = ms_rank_map_describe(p->trace_ranks, tile, p->gpus_used, n);
    char buf[16];
    ms_schedule_set_meta(s, "rank_map", what);
    g_snprintf(buf, sizeof buf, "%u", p->trace_ranks);
    ms_schedule_set_meta(s, "trace_ranks", buf);
    g_snprintf(buf, sizeof buf, "%u", tile);
    ms_schedule_set_meta(s, "rank_tile", buf);
    g_snprintf(buf, sizeof buf, "%u", p->gpus_used);
    ms_schedule_set_meta(s, "gpus_used", buf);
}

MsSchedule *
ms_planner_plan(MsPlanner *p, const MsRouting *routing, GError **error)
{
    MsPolicyInput in = p->in;
    in.routing = routing;
    MsSchedule *s = ms_policy_plan(p->policy, &in, error);
    if (s) {
        note_map(p, s);
    }
    return s;
}

gboolean
ms_planner_learn(MsPlanner *p, const MsRouting *routing, GError **error)
{
    /* The cache first: it replays the batch as planned, from the paths learned before it. */
    MsPolicyInput in = p->in;
    in.routing = routing;
    return (p->cache == NULL || ms_lina_infer_learn(p->policy, &in, p->cache, error)) &&
           (p->profile == NULL || ms_path_profile_add(p->profile, routing, error));
}

/* Plans with the trace source named in errors about the trace. */
static MsSchedule *
plan_named(MsPlanner *p, const MsRouting *routing, GError **error)
{
    GError *local = NULL;
    MsSchedule *s = ms_planner_plan(p, routing, &local);
    if (s == NULL) {
        if (local->domain == MS_PLAN_ERROR && local->code == MS_PLAN_ERROR_MISMATCH) {
            g_prefix_error(&local, "%s: ", p->source);
        }
        g_propagate_error(error, local);
    }
    return s;
}

/* Learns from a planned (or skipped) batch for the batches after it. */
static gboolean
learn_named(MsPlanner *p, const MsRouting *routing, GError **error)
{
    if (ms_planner_learn(p, routing, error)) {
        return TRUE;
    }
    g_prefix_error(error, "%s: ", p->source);
    return FALSE;
}

gboolean
ms_planner_next(MsPlanner *p, MsSchedule **out, GError **error)
{
    *out = NULL;
    g_autoptr(MsRouting) routing = NULL;
    if (!ms_planner_read(p, &routing, error)) {
        return FALSE;
    }
    g_autoptr(MsSchedule) s = plan_named(p, routing, error);
    if (s == NULL || !learn_named(p, routing, error)) {
        return FALSE;
    }
    *out = g_steal_pointer(&s);
    return TRUE;
}

MsSchedule *
ms_planner_plan_iteration(MsPlanner *p, guint64 iteration, GError **error)
{
    for (;;) {
        g_autoptr(MsRouting) routing = NULL;
        GError *local = NULL;
        if (!ms_planner_read(p, &routing, &local)) {
            if (local == NULL) {
                g_set_error(error, MS_PLAN_ERROR, MS_PLAN_ERROR_MISMATCH,
                            "%s: the trace has no iteration %" G_GUINT64_FORMAT, p->source,
                            iteration);
            } else {
                g_propagate_error(error, local);
            }
            return NULL;
        }
        guint64 it = ms_routing_iteration(routing);
        if (it == iteration) {
            return plan_named(p, routing, error);
        }
        if (it > iteration) {
            g_set_error(error, MS_PLAN_ERROR, MS_PLAN_ERROR_MISMATCH,
                        "%s: the trace has no iteration %" G_GUINT64_FORMAT
                        " (it goes from below it to %" G_GUINT64_FORMAT ")",
                        p->source, iteration, it);
            return NULL;
        }
        if (!learn_named(p, routing, error)) {
            return NULL;
        }
    }
}
