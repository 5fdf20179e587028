/* planner: loading a scenario and planning its iterations one at a time. A generated trace is
 * the one `moesim run` generates for the same inputs (ms_scenario_gen_spec): shaped by the model
 * and the topology, with the documented default skew unless gen:SPEC says otherwise. */
#include "planner.h"

#include <string.h>

#include "lina_infer.h"
#include "sim/scenario.h"
#include "traces/trace_reader.h"

struct _MsPlanner {
    MsTopology *topo;
    MsModel *model;
    MsPolicy *policy;
    MsPlanMode mode;
    MsTraceReader *reader;
    char *source;
    MsPathProfile *profile; /* Lina's dynamic inference only */
};

void
ms_planner_free(MsPlanner *p)
{
    if (p == NULL) {
        return;
    }
    ms_topology_free(p->topo);
    ms_model_free(p->model);
    ms_policy_free(p->policy);
    ms_trace_reader_free(p->reader);
    ms_path_profile_free(p->profile);
    g_free(p->source);
    g_free(p);
}

static gboolean
lina_dynamic(const MsPlanner *p)
{
    return p->mode == MS_PLAN_INFER && strcmp(ms_policy_name(p->policy), "lina") == 0 &&
           strcmp(ms_policy_get_choice(p->policy, "placement"), "dynamic") == 0;
}

MsPlanner *
ms_planner_new(const MsPlannerOptions *opts, GError **error)
{
    g_autoptr(MsPlanner) p = g_new0(MsPlanner, 1);
    p->mode = opts->mode;
    p->topo = ms_topology_load(opts->topology, error);
    p->model = p->topo ? ms_model_load(opts->model, error) : NULL;
    p->policy = p->model ? ms_policy_parse(opts->policy, error) : NULL;
    if (p->policy == NULL) {
        return NULL;
    }
    if (opts->trace == NULL || g_str_has_prefix(opts->trace, "gen:")) {
        MsScenario sc = {.topology = opts->topology,
                         .model = opts->model,
                         .trace = opts->trace,
                         .mode = opts->mode,
                         .iterations = MAX(opts->iterations, 1),
                         .seed = opts->seed};
        p->source = ms_scenario_gen_spec(&sc, error);
    } else {
        p->source = g_strdup(opts->trace);
    }
    p->reader = p->source ? ms_trace_reader_open(p->source, error) : NULL;
    if (p->reader == NULL) {
        return NULL;
    }
    if (lina_dynamic(p)) {
        const MsModelSpec *s = ms_model_spec(p->model);
        p->profile =
            ms_path_profile_new(s->experts, s->n_moe, (guint)ms_policy_get_uint(p->policy, "path"));
    }
    return g_steal_pointer(&p);
}

const MsModel *
ms_planner_model(const MsPlanner *p)
{
    return p->model;
}

const MsTopology *
ms_planner_topology(const MsPlanner *p)
{
    return p->topo;
}

const MsPolicy *
ms_planner_policy(const MsPlanner *p)
{
    return p->policy;
}

const char *
ms_planner_trace(const MsPlanner *p)
{
    return p->source;
}

static MsSchedule *
plan_routing(MsPlanner *p, const MsRouting *routing, GError **error)
{
    MsPolicyInput in = {p->model, routing, p->topo, p->mode, p->profile};
    GError *local = NULL;
    MsSchedule *s = ms_policy_plan(p->policy, &in, &local);
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
learn(MsPlanner *p, const MsRouting *routing, GError **error)
{
    if (p->profile == NULL || ms_path_profile_add(p->profile, routing, error)) {
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
    if (!ms_trace_reader_next_iteration(p->reader, &routing, error)) {
        return FALSE;
    }
    g_autoptr(MsSchedule) s = plan_routing(p, routing, error);
    if (s == NULL || !learn(p, routing, error)) {
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
        if (!ms_trace_reader_next_iteration(p->reader, &routing, &local)) {
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
            return plan_routing(p, routing, error);
        }
        if (it > iteration) {
            g_set_error(error, MS_PLAN_ERROR, MS_PLAN_ERROR_MISMATCH,
                        "%s: the trace has no iteration %" G_GUINT64_FORMAT
                        " (it goes from below it to %" G_GUINT64_FORMAT ")",
                        p->source, iteration, it);
            return NULL;
        }
        if (!learn(p, routing, error)) {
            return NULL;
        }
    }
}
