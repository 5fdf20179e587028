/* policy: scheduling policies as classes, registered once (policy.c), and their parameters, given
 * as "NAME:key=value,key=value". A class holds all of a policy: its parameters, the plan modes it
 * supports and what it needs from the inputs, its static planning (an MsPlanConfig: streams,
 * partitioning, placement, plus a hook the plan builder asks about each MoE layer: chunks,
 * pipelining, task order) and its online rules, which the schedule carries to the dispatcher.
 * Values carry units where physical (bytes, seconds). docs/policies.md describes each policy and
 * how to add one. */
#pragma once

#include <glib.h>

#include "sim/moe/model.h"
#include "sim/moe/plan.h"
#include "topologies/topology.h"
#include "traces/trace_routing.h"

G_BEGIN_DECLS

#define MS_POLICY_ERROR (ms_policy_error_quark())
GQuark ms_policy_error_quark(void);
typedef enum {
    MS_POLICY_ERROR_UNKNOWN, /* no policy of that name */
    MS_POLICY_ERROR_PARAM,   /* an unknown, repeated or value-less parameter */
    MS_POLICY_ERROR_VALUE,   /* a value that does not parse, is out of range, or conflicts */
    MS_POLICY_ERROR_INPUT,   /* the inputs lack what the policy needs (token paths) */
} MsPolicyError;

typedef enum {
    MS_PARAM_BYTES,     /* units of ms_parse_bytes: "30MB", "4MiB" */
    MS_PARAM_UINT,      /* a count in [min, max] */
    MS_PARAM_DOUBLE,    /* a plain number in [min, max] */
    MS_PARAM_TIME,      /* units of ms_parse_time: "2ps" */
    MS_PARAM_BOOL,      /* true/false, yes/no, 1/0 */
    MS_PARAM_CHOICE,    /* one of choices, "a|b|c" */
    MS_PARAM_BANDWIDTH, /* units of ms_parse_bandwidth: "25GBps", or "auto" (read as 0) */
} MsParamKind;

typedef struct {
    const char *key;
    MsParamKind kind;
    const char *dflt;    /* default, as text */
    double min, max;     /* bounds of UINT, DOUBLE and BYTES values */
    const char *choices; /* CHOICE: "a|b|c" */
    const char *help;
} MsParamSpec;

typedef struct _MsPathProfile MsPathProfile; /* sim/policy/path_profile.h */
typedef struct _MsExpertCache MsExpertCache; /* sim/policy/expert_cache.h */

/* What a policy plans from. profile: token paths of earlier batches, for Lina's inference
 * estimate (NULL: no history). cache: the experts each GPU holds when they live in host memory
 * (Lina's weights=host; NULL: an empty cache). */
typedef struct {
    const MsModel *model;
    const MsRouting *routing;
    const MsTopology *topo;
    MsPlanMode mode;
    const MsPathProfile *profile;
    const MsExpertCache *cache;
} MsPolicyInput;

typedef struct _MsPolicy MsPolicy;

/* The plan modes a class supports, a bit per MsPlanMode. */
#define MS_POLICY_MODE(mode) (1u << (mode))
#define MS_POLICY_ALL_MODES (MS_POLICY_MODE(MS_PLAN_TRAIN) | MS_POLICY_MODE(MS_PLAN_INFER))

/* A policy class, all of a policy in one place (docs/policies.md, "Adding a policy"):
 * - name, summary, params (terminated by a NULL key): what "NAME:key=value" is parsed against,
 *   with the parameters every policy shares (ms_policy_common_params) after its own;
 * - modes: MS_POLICY_MODE bits of the plan modes it plans (others: MS_POLICY_ERROR_INPUT);
 * - rules: its online part, written into every schedule it plans for the dispatcher;
 * - configure: its static decisions for the whole schedule, on cfg initialised with the shared
 *   parameters, the rules and the moe_layer hook (NULL: nothing more);
 * - moe_layer: its decisions for one MoE layer, asked by the plan builder for each; out comes as
 *   whole all-to-alls (NULL: always so);
 * - path_history: how many earlier MoE layers of each token's path it estimates from in a mode,
 *   that is whether it needs token records and a path profile of earlier batches (0 or NULL: it
 *   needs neither). */
typedef struct {
    const char *name;
    const char *summary;
    const MsParamSpec *params;
    guint modes;
    MsDispatchRules rules;
    gboolean (*configure)(const MsPolicy *policy, const MsPolicyInput *in, MsPlanConfig *cfg,
                          GError **error);
    void (*moe_layer)(const MsPolicy *policy, const MsMoeLayer *layer, MsMoeLayerPlan *out);
    guint (*path_history)(const MsPolicy *policy, MsPlanMode mode);
} MsPolicyClass;

/* Parses "NAME" or "NAME:key=value,...". Errors: MS_POLICY_ERROR_UNKNOWN (listing the
 * policies), _PARAM (unknown key listing the policy's keys, a key given twice, no '='), _VALUE
 * (naming key and value, with the unit or range expected). */
MsPolicy *ms_policy_parse(const char *spec, GError **error);
/* The same for a class given directly, with its "key=value,..." (NULL or "" for none): a class
 * outside the registry works alike (tests of a class before it is registered). */
MsPolicy *ms_policy_new(const MsPolicyClass *cls, const char *params, GError **error);
void ms_policy_free(MsPolicy *policy);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsPolicy, ms_policy_free)

const char *ms_policy_name(const MsPolicy *policy);
const MsPolicyClass *ms_policy_get_class(const MsPolicy *policy);
/* The spec as given (normalised: no blanks). */
const char *ms_policy_spec(const MsPolicy *policy);
/* NULL-terminated names in registry order; the class of a name (NULL when unknown). */
const char *const *ms_policy_names(void);
const MsPolicyClass *ms_policy_class(const char *name);
/* Parameters every policy takes (NULL key terminated). */
const MsParamSpec *ms_policy_common_params(void);

/* Typed values (the default when not given); key must be a parameter of the right kind. */
guint64 ms_policy_get_bytes(const MsPolicy *policy, const char *key);
guint64 ms_policy_get_uint(const MsPolicy *policy, const char *key);
double ms_policy_get_double(const MsPolicy *policy, const char *key);
double ms_policy_get_seconds(const MsPolicy *policy, const char *key);
/* Bytes per second; 0 for "auto". */
double ms_policy_get_bandwidth(const MsPolicy *policy, const char *key);
gboolean ms_policy_get_bool(const MsPolicy *policy, const char *key);
const char *ms_policy_get_choice(const MsPolicy *policy, const char *key);
gboolean ms_policy_given(const MsPolicy *policy, const char *key);

/* Capabilities: whether the policy plans the mode, and the path history it estimates from there
 * (see MsPolicyClass; 0: it needs no token paths and no path profile). */
gboolean ms_policy_plans_mode(const MsPolicy *policy, MsPlanMode mode);
guint ms_policy_path_history(const MsPolicy *policy, MsPlanMode mode);

/* The policy's decisions for one MoE layer (what the plan builder's hook gets). */
void ms_policy_moe_layer(const MsPolicy *policy, const MsMoeLayer *layer, MsMoeLayerPlan *out);

/* Fills cfg (initialised here) with the policy's static decisions for these inputs.
 * MS_POLICY_ERROR_INPUT for a mode the policy does not plan. The configuration may own inference
 * placements (release it with ms_plan_config_clear) and borrows the policy for its hook: the
 * policy must outlive its use. */
gboolean ms_policy_configure(const MsPolicy *policy, const MsPolicyInput *in, MsPlanConfig *cfg,
                             GError **error);
/* Configures and builds the schedule of the input's iteration. */
MsSchedule *ms_policy_plan(const MsPolicy *policy, const MsPolicyInput *in, GError **error);

G_END_DECLS
