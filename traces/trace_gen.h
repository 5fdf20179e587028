/* trace_gen: synthetic expert-selection traces. Expert popularity follows a Zipf law (or is
 * calibrated to a target hottest-expert share), a token's path is correlated across layers
 * through expert groups, popularity drifts between iterations, and tokens may be limited to the
 * experts of a few nodes (DeepSeek-V3's node-limited routing); all of it driven by a seeded PRNG
 * owned by the generator, so the same parameters always give the same trace. The model is
 * specified in docs/trace-format.md ("Generator"). Ignores sequence position and per-rank skew. */
#pragma once

#include <glib.h>

#include "trace.h"
#include "trace_routing.h"

G_BEGIN_DECLS

#define MS_TRACE_GEN_ERROR (ms_trace_gen_error_quark())
GQuark ms_trace_gen_error_quark(void);
typedef enum {
    MS_TRACE_GEN_ERROR_KEY,      /* unknown, repeated or malformed KEY=VALUE item */
    MS_TRACE_GEN_ERROR_VALUE,    /* a value that does not parse, is out of range or unreachable */
    MS_TRACE_GEN_ERROR_CONFLICT, /* zipf and hot both given, top_k above experts */
    MS_TRACE_GEN_ERROR_LIMIT,    /* a trace shape beyond the trace limits */
} MsTraceGenError;

/* One iteration of token paths (records=tokens) may hold at most this many expert choices
 * (ranks x tokens x layers x top_k), 512 MiB of paths; counts mode has no such limit. */
#define MS_TRACE_GEN_MAX_CHOICES (G_GUINT64_CONSTANT(1) << 28)
/* Counts mode (records=counts) generates every token's path, one at a time, up to this many
 * tokens per iteration (ranks x tokens); beyond, it draws this many paths (a pool, 2 bytes per
 * expert choice: 14.5 MiB for DeepSeek-V3's 58 x top-8) and each rank's tokens from them with
 * replacement, so that its cost stops growing with tokens x top_k. A power of 2 (uniform draws
 * from it are exact); 16384 keeps the pool's sampling error of an expert's load share (relative
 * 1 / sqrt(16384 x inclusion)) at 4.4% for DeepSeek-V3's mean expert, docs/trace-format.md. */
#define MS_TRACE_GEN_POOL_TOKENS 16384u
/* Largest Zipf exponent; beyond it every top expert is already at its cap. */
#define MS_TRACE_GEN_ZIPF_MAX 64.0

typedef enum {
    MS_TRACE_GEN_SKEW_ZIPF,  /* popularity of rank i proportional to (i+1)^-zipf */
    MS_TRACE_GEN_SKEW_HOT,   /* exponent solved so the hottest expert's share is `hot` */
    MS_TRACE_GEN_SKEW_RATIO, /* exponent solved so the most over the least popular is `ratio` */
} MsTraceGenSkew;

typedef enum {
    MS_TRACE_GEN_FOLLOW_CORR,    /* tokens follow their group with probability `corr` */
    MS_TRACE_GEN_FOLLOW_PERSIST, /* corr solved so the persistence of primaries is `persist` */
} MsTraceGenFollow;

/* A plain value record; ms_trace_gen_params_init gives the documented defaults. */
typedef struct {
    guint32 ranks, experts, layers, top_k;
    guint32 tokens; /* per rank and iteration */
    guint32 iterations;
    MsTraceGenSkew skew;
    double zipf;  /* >= 0 */
    double hot;   /* target hottest-expert share, used when skew is HOT */
    double ratio; /* target most over least popular expert's share, used when skew is RATIO */
    double corr;  /* probability of following the previous layer's expert group, [0, 1] */
    MsTraceGenFollow follow;
    double persist; /* target persistence of primaries, used when follow is PERSIST */
    double drift;   /* per-iteration probability that a popularity rank swaps, [0, 1] */
    guint64 seed;
    gboolean counts; /* records=counts: iterations carry counts only, no paths */
    /* Node-limited routing (DeepSeek-V3): experts on expert_nodes nodes in contiguous blocks,
     * each token's experts at a layer on at most max_nodes of them; 0 and 0: no limit. */
    guint32 expert_nodes, max_nodes;
    /* Layer groups (groups=0/6, group_tokens=512/128): group g starts at MoE layer
     * group_first[g] and its ranks route group_tokens[g] tokens (the first ones of each rank's
     * generated tokens); n_groups 0: none. Groups of different token counts make count records
     * (a token record crosses every layer). */
    guint32 n_groups, n_group_tokens;
    guint32 group_first[MS_TRACE_MAX_GROUPS];
    guint32 group_tokens[MS_TRACE_MAX_GROUPS];
} MsTraceGenParams;

/* Defaults: ranks=16, experts=16, layers=12, top_k=2, tokens=256, iterations=1, zipf=1,
 * corr=0, drift=0, seed=1, records=tokens, no node limit. ratio and persist are targets that
 * replace zipf (or hot) and corr. */
void ms_trace_gen_params_init(MsTraceGenParams *params);
/* Sets one parameter by its spec key (ranks experts layers top_k tokens iterations zipf hot ratio
 * corr persist drift seed records expert_nodes max_nodes groups group_tokens; lists separated by
 * '/'); zipf, hot and ratio replace each other, and so do corr and persist. FALSE with
 * MS_TRACE_GEN_ERROR_KEY for an unknown key or MS_TRACE_GEN_ERROR_VALUE naming key and value. */
gboolean ms_trace_gen_params_set(MsTraceGenParams *params, const char *key, const char *value,
                                 GError **error);
/* Parses "KEY=VALUE,KEY=VALUE..." over the defaults, then validates. Errors name the key:
 * _KEY (unknown, repeated, no '='), _VALUE, _CONFLICT (two of zipf, hot and ratio, corr with
 * persist, top_k > experts, a node
 * limit the layout cannot meet or only half given), _LIMIT. */
gboolean ms_trace_gen_params_parse(const char *spec, MsTraceGenParams *params, GError **error);
/* The tokens each rank generates (the largest group's, with layer groups), and whether the
 * groups route different numbers of them, so that iterations are count records only. */
guint32 ms_trace_gen_params_tokens(const MsTraceGenParams *params);
gboolean ms_trace_gen_params_counts_only(const MsTraceGenParams *params);
/* Cross-field checks and limits (see parse). */
gboolean ms_trace_gen_params_validate(const MsTraceGenParams *params, GError **error);
/* The canonical spec of params (every key, fixed order; the node-limit keys only when set);
 * parsing it gives params back. */
char *ms_trace_gen_params_to_spec(const MsTraceGenParams *params);

typedef struct _MsTraceGen MsTraceGen;

/* Validates params and solves the exponent (skew HOT or RATIO) and corr (follow PERSIST):
 * MS_TRACE_GEN_ERROR_VALUE when a target cannot be reached (the message gives the reachable
 * range). */
MsTraceGen *ms_trace_gen_new(const MsTraceGenParams *params, GError **error);
void ms_trace_gen_free(MsTraceGen *gen);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsTraceGen, ms_trace_gen_free)

/* The header of the generated trace; generator holds "moesim trace gen SPEC". */
const MsTraceHeader *ms_trace_gen_header(const MsTraceGen *gen);
/* The Zipf exponent and corr in use (solved for skew HOT or RATIO, for follow PERSIST). */
double ms_trace_gen_zipf(const MsTraceGen *gen);
double ms_trace_gen_corr(const MsTraceGen *gen);
/* Expected share of the hottest expert among one layer's token-expert assignments. */
double ms_trace_gen_expected_hot_share(const MsTraceGen *gen);
/* Expected most over least popular expert's share of a layer's assignments. */
double ms_trace_gen_expected_ratio(const MsTraceGen *gen);
/* Expected persistence of primaries from one layer to the next: the share of the next primaries
 * of the tokens sharing a primary on that group's most chosen next expert, and on its two most
 * chosen (trace_gen_skew.h). */
void ms_trace_gen_expected_persistence(const MsTraceGen *gen, double *top1, double *top2);

/* Generates the next iteration (a new sealed MsRouting in *out). FALSE with *out NULL and no
 * error after the last iteration. */
gboolean ms_trace_gen_next(MsTraceGen *gen, MsRouting **out, GError **error);

G_END_DECLS
