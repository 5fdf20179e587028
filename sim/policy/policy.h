/* policy: the registry of scheduling policies (fifo, concurrent, priority, lina, schemoe) and
 * their parameters, given as "NAME:key=value,key=value". Each policy module turns its parameters
 * and the planning inputs into the static part of the schedule (an MsPlanConfig: streams,
 * partitioning, pipelining, order, placement); the online part is the dispatcher's. Values carry
 * units where physical (bytes, seconds). docs/policies.md describes each policy. */
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
    MS_PARAM_BYTES,  /* units of ms_parse_bytes: "30MB", "4MiB" */
    MS_PARAM_UINT,   /* a count in [min, max] */
    MS_PARAM_DOUBLE, /* a plain number in [min, max] */
    MS_PARAM_TIME,   /* units of ms_parse_time: "2ps" */
    MS_PARAM_BOOL,   /* true/false, yes/no, 1/0 */
    MS_PARAM_CHOICE, /* one of choices, "a|b|c" */
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

/* What a policy plans from. profile: token paths of earlier batches, for Lina's inference
 * estimate (NULL: no history). */
typedef struct {
    const MsModel *model;
    const MsRouting *routing;
    const MsTopology *topo;
    MsPlanMode mode;
    const MsPathProfile *profile;
} MsPolicyInput;

typedef struct _MsPolicy MsPolicy;

/* A policy module: its name, one-line summary, parameters (terminated by a NULL key), its
 * dispatcher rules and the function that fills the plan configuration (cfg comes initialised;
 * the registry has set the parameters every policy shares, and the rules). */
typedef struct {
    const char *name;
    const char *summary;
    const MsParamSpec *params;
    MsDispatchRules rules;
    gboolean (*configure)(const MsPolicy *policy, const MsPolicyInput *in, MsPlanConfig *cfg,
                          GError **error);
} MsPolicyClass;

/* Parses "NAME" or "NAME:key=value,...". Errors: MS_POLICY_ERROR_UNKNOWN (listing the
 * policies), _PARAM (unknown key listing the policy's keys, a key given twice, no '='), _VALUE
 * (naming key and value, with the unit or range expected). */
MsPolicy *ms_policy_parse(const char *spec, GError **error);
void ms_policy_free(MsPolicy *policy);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsPolicy, ms_policy_free)

const char *ms_policy_name(const MsPolicy *policy);
/* The spec as given (normalised: no blanks). */
const char *ms_policy_spec(const MsPolicy *policy);
/* NULL-terminated names in a fixed order; the class of a name (NULL when unknown). */
const char *const *ms_policy_names(void);
const MsPolicyClass *ms_policy_class(const char *name);
/* Parameters every policy takes (NULL key terminated). */
const MsParamSpec *ms_policy_common_params(void);

/* Typed values (the default when not given); key must be a parameter of the right kind. */
guint64 ms_policy_get_bytes(const MsPolicy *policy, const char *key);
guint64 ms_policy_get_uint(const MsPolicy *policy, const char *key);
double ms_policy_get_double(const MsPolicy *policy, const char *key);
double ms_policy_get_seconds(const MsPolicy *policy, const char *key);
gboolean ms_policy_get_bool(const MsPolicy *policy, const char *key);
const char *ms_policy_get_choice(const MsPolicy *policy, const char *key);
gboolean ms_policy_given(const MsPolicy *policy, const char *key);

/* Fills cfg (initialised here) with the policy's static decisions for these inputs. The
 * configuration may own inference placements: release it with ms_plan_config_clear. */
gboolean ms_policy_configure(const MsPolicy *policy, const MsPolicyInput *in, MsPlanConfig *cfg,
                             GError **error);
/* Configures and builds the schedule of the input's iteration. */
MsSchedule *ms_policy_plan(const MsPolicy *policy, const MsPolicyInput *in, GError **error);

G_END_DECLS
