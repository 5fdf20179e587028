/* routing_source: where a scenario's expert routing comes from, parsed once: a trace file, a
 * shipped sample ("sample:NAME"), or the generator ("gen:KEY=VALUE,...", or nothing at all). A
 * generated routing takes its shape from the model and the topology it is planned for (ranks =
 * GPUs used, the model's experts, MoE layers, top-k and tokens per GPU) and the documented default
 * skew (docs/running.md); the source holds only the keys given, which override those. */
#pragma once

#include <glib.h>

#include "sim/moe/model.h"
#include "sim/moe/plan.h"
#include "topologies/topology.h"
#include "traces/trace_gen.h"

G_BEGIN_DECLS

typedef struct _MsRoutingSource MsRoutingSource;

/* Parses spec: a trace path, "sample:NAME", "gen:KEY=VALUE,..." or NULL (generated with every
 * default). The items of a gen: spec are checked now: each must be KEY=VALUE with a generator key
 * and a value it accepts (MS_TRACE_GEN_ERROR_KEY or _VALUE naming them; a key given twice: the
 * last wins). A file or sample is opened only when a planner reads it. */
MsRoutingSource *ms_routing_source_new(const char *spec, GError **error);
/* A copy of a generated source with key=value added after its own keys (checked as above): how a
 * sweep varies the routing. src must be generated. */
MsRoutingSource *ms_routing_source_with(const MsRoutingSource *src, const char *key,
                                        const char *value, GError **error);
void ms_routing_source_free(MsRoutingSource *src);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsRoutingSource, ms_routing_source_free)

/* TRUE for the generator, FALSE for a trace file or sample. */
gboolean ms_routing_source_generated(const MsRoutingSource *src);
/* The spec as given: NULL for the generator's defaults. */
const char *ms_routing_source_spec(const MsRoutingSource *src);

/* What a generated routing is shaped for. */
typedef struct {
    const MsModel *model;
    const MsTopology *topology;
    MsPlanMode mode;  /* training picks top_k and tokens_per_gpu, inference their _infer */
    guint iterations; /* iterations generated */
    guint64 seed;     /* 0: 1 */
    guint ranks;      /* 0: the topology's GPUs (a routing for some of them, sim/rank_map.h) */
} MsRoutingShape;

/* The generator's parameters for a generated source and a shape: the shape's ranks, experts,
 * layers, top_k, tokens, iterations and seed, the default skew (the hottest expert at 1.5x the
 * mean load, corr = 0.5, drift = 0.02), then the source's keys; validated
 * (ms_trace_gen_params_validate's errors). */
gboolean ms_routing_source_gen_params(const MsRoutingSource *src, const MsRoutingShape *shape,
                                      MsTraceGenParams *out, GError **error);
/* What a planner reads: "gen:" followed by every generator key for a generated source (errors as
 * ms_routing_source_gen_params), else the spec. Free with g_free. */
char *ms_routing_source_describe(const MsRoutingSource *src, const MsRoutingShape *shape,
                                 GError **error);

G_END_DECLS
