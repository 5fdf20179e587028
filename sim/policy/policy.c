/* policy: the registry (one line per policy), parsing "NAME:key=value,..." against the policy's
 * parameter table (plus the shared ones), typed access for the classes, and the common path from
 * policy to schedule. Values are checked here with the units of sim/base/units.h, so classes see
 * only valid numbers. */
#include "policy.h"

#include <math.h>
#include <string.h>

#include "sim/net/collective.h"

G_DEFINE_QUARK(ms_policy_error_quark, ms_policy_error)

static const MsParamSpec common_params[] = {
    {"a2a", MS_PARAM_CHOICE, "direct", 0, 0, "direct|2dh|pipe|deepep",
     "all-to-all algorithm: direct (NCCL grouped send/recv), 2dh (Tutel's 2D-hierarchical), "
     "pipe (ScheMoE's Pipe-A2A), deepep (DeepEP: RDMA once per node, NVLink forwarding; needs "
     "token paths)"},
    {"window", MS_PARAM_UINT, "0", 0, 65536, NULL,
     "all-to-all rounds in flight per rank for direct and pipe (0 = all at once)"},
    {"allreduce", MS_PARAM_CHOICE, "ring", 0, 0, "ring|hier",
     "allreduce algorithm: ring, or hier (intra-node reduce-scatter, inter-node ring, gather)"},
    {NULL},
};

/* The registry: one line per policy, in the order listings show them. NAME is the policy's name
 * and its class is ms_NAME_policy, defined in sim/policy/NAME.c (docs/policies.md). */
#define POLICIES(X)                                                                                \
    X(fifo)                                                                                        \
    X(concurrent)                                                                                  \
    X(priority)                                                                                    \
    X(lina)                                                                                        \
    X(schemoe)                                                                                     \
    X(deepspeed)                                                                                   \
    X(tutel)                                                                                       \
    X(fastermoe)                                                                                   \
    /* end of the registry: every line above ends in a backslash */

#define DECLARE(name) extern const MsPolicyClass ms_##name##_policy;
#define CLASS(name) &ms_##name##_policy,
#define NAME(name) #name,
POLICIES(DECLARE)
static const MsPolicyClass *const classes[] = {POLICIES(CLASS)};
static const char *const names[] = {POLICIES(NAME) NULL};
#undef DECLARE
#undef CLASS
#undef NAME

typedef union {
    guint64 u;
    double d;
    gboolean b;
} Value;

struct _MsPolicy {
    const MsPolicyClass *cls;
    char *spec;
    guint n_params;
    const MsParamSpec **params; /* the class's, then the common ones */
    Value *values;
    char **texts; /* value text (given or default) */
    gboolean *given;
};

const char *const *
ms_policy_names(void)
{
    return names;
}

const MsPolicyClass *
ms_policy_class(const char *name)
{
    for (guint i = 0; i < G_N_ELEMENTS(classes); i++) {
        if (g_strcmp0(classes[i]->name, name) == 0) {
            return classes[i];
        }
    }
    return NULL;
}

const MsParamSpec *
ms_policy_common_params(void)
{
    return common_params;
}

void
ms_policy_free(MsPolicy *p)
{
    if (p == NULL) {
        return;
    }
    g_free(p->spec);
    g_free(p->params);
    g_free(p->values);
    g_strfreev(p->texts);
    g_free(p->given);
    g_free(p);
}

static gboolean
parse_choice(const MsParamSpec *ps, const char *text, GError **error)
{
    g_auto(GStrv) choices = g_strsplit(ps->choices, "|", -1);
    if (g_strv_contains((const char *const *)choices, text)) {
        return TRUE;
    }
    g_autofree char *list = g_strjoinv(", ", choices);
    g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE, "'%s' is not one of %s", text, list);
    return FALSE;
}

static gboolean
parse_bool(const char *text, gboolean *out, GError **error)
{
    static const char *const yes[] = {"true", "yes", "1", "on", NULL};
    static const char *const no[] = {"false", "no", "0", "off", NULL};
    if (g_strv_contains(yes, text) || g_strv_contains(no, text)) {
        *out = g_strv_contains(yes, text);
        return TRUE;
    }
    g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE,
                "'%s' is not a boolean (true/false, yes/no, 1/0)", text);
    return FALSE;
}

/* Parses one value into v; errors are MS_UNITS_ERROR or MS_POLICY_ERROR without context. */
static gboolean
parse_value(const MsParamSpec *ps, const char *text, Value *v, GError **error)
{
    MsTime t = 0;
    switch (ps->kind) {
    case MS_PARAM_BYTES:
        if (!ms_parse_bytes(text, &v->u, error)) {
            return FALSE;
        }
        if ((double)v->u < ps->min || (double)v->u > ps->max) {
            g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE,
                        "%s is out of range [%.0f B, %.0f B]", text, ps->min, ps->max);
            return FALSE;
        }
        return TRUE;
    case MS_PARAM_UINT:
        return ms_parse_uint(text, (guint64)ps->min, (guint64)ps->max, &v->u, error);
    case MS_PARAM_DOUBLE:
        return ms_parse_double(text, ps->min, ps->max, &v->d, error);
    case MS_PARAM_TIME:
        if (!ms_parse_time(text, &t, error)) {
            return FALSE;
        }
        v->d = ms_time_to_s(t);
        if (ps->max > 0 && v->d > ps->max) {
            g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE,
                        "%s is out of range (at most %g s)", text, ps->max);
            return FALSE;
        }
        return TRUE;
    case MS_PARAM_BOOL:
        return parse_bool(text, &v->b, error);
    case MS_PARAM_CHOICE:
        return parse_choice(ps, text, error);
    case MS_PARAM_BANDWIDTH:
        v->d = 0;
        if (strcmp(text, "auto") == 0) {
            return TRUE;
        }
        if (!ms_parse_bandwidth(text, &v->d, error)) {
            return FALSE;
        }
        if (v->d < ps->min || (ps->max > 0 && v->d > ps->max)) {
            g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE,
                        "%s is out of range [%g B/s, %g B/s]", text, ps->min, ps->max);
            return FALSE;
        }
        return TRUE;
    }
    g_return_val_if_reached(FALSE);
}

static gint
find_param(const MsPolicy *p, const char *key)
{
    for (guint i = 0; i < p->n_params; i++) {
        if (strcmp(p->params[i]->key, key) == 0) {
            return (gint)i;
        }
    }
    return -1;
}

static char *
key_list(const MsPolicy *p)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < p->n_params; i++) {
        g_string_append_printf(s, "%s%s", i ? ", " : "", p->params[i]->key);
    }
    return g_string_free(s, FALSE);
}

static MsPolicy *
policy_new(const MsPolicyClass *cls)
{
    MsPolicy *p = g_new0(MsPolicy, 1);
    p->cls = cls;
    guint n = 0;
    for (const MsParamSpec *ps = cls->params; ps && ps->key; ps++) {
        n++;
    }
    for (const MsParamSpec *ps = common_params; ps->key; ps++) {
        n++;
    }
    p->n_params = n;
    p->params = g_new(const MsParamSpec *, n);
    p->values = g_new0(Value, n);
    p->texts = g_new0(char *, n + 1);
    p->given = g_new0(gboolean, n);
    guint i = 0;
    for (const MsParamSpec *ps = cls->params; ps && ps->key; ps++) {
        p->params[i++] = ps;
    }
    for (const MsParamSpec *ps = common_params; ps->key; ps++) {
        p->params[i++] = ps;
    }
    for (i = 0; i < n; i++) {
        p->texts[i] = g_strdup(p->params[i]->dflt);
        gboolean ok = parse_value(p->params[i], p->params[i]->dflt, &p->values[i], NULL);
        g_assert(ok); /* defaults are part of the program */
    }
    return p;
}

/* Sets one "key=value" item (blanks around either are dropped); *norm gets "key=value". */
static gboolean
set_param(MsPolicy *p, const char *item, char **norm, GError **error)
{
    const char *eq = strchr(item, '=');
    g_autofree char *key = g_strstrip(eq ? g_strndup(item, eq - item) : g_strdup(item));
    g_autofree char *text = g_strstrip(g_strdup(eq ? eq + 1 : ""));
    if (eq == NULL || *key == '\0' || *text == '\0') {
        g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_PARAM,
                    "policy %s: '%s' is not key=value", p->cls->name, item);
        return FALSE;
    }
    gint i = find_param(p, key);
    if (i < 0) {
        g_autofree char *keys = key_list(p);
        g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_PARAM,
                    "policy %s: unknown parameter '%s' (%s takes: %s)", p->cls->name, key,
                    p->cls->name, keys);
        return FALSE;
    }
    if (p->given[i]) {
        g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_PARAM,
                    "policy %s: parameter '%s' given twice", p->cls->name, key);
        return FALSE;
    }
    GError *local = NULL;
    if (!parse_value(p->params[i], text, &p->values[i], &local)) {
        g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE, "policy %s: %s=%s: %s",
                    p->cls->name, key, text, local->message);
        g_error_free(local);
        return FALSE;
    }
    p->given[i] = TRUE;
    g_free(p->texts[i]);
    p->texts[i] = g_strdup(text);
    *norm = g_strdup_printf("%s=%s", key, text);
    return TRUE;
}

MsPolicy *
ms_policy_new(const MsPolicyClass *cls, const char *params, GError **error)
{
    g_return_val_if_fail(cls != NULL, NULL);
    g_autoptr(MsPolicy) p = policy_new(cls);
    GString *norm = g_string_new(cls->name);
    if (params && params[0] != '\0') {
        g_auto(GStrv) items = g_strsplit(params, ",", -1);
        for (guint k = 0; items[k]; k++) {
            g_autofree char *item = NULL;
            if (!set_param(p, g_strstrip(items[k]), &item, error)) {
                g_string_free(norm, TRUE);
                return NULL;
            }
            g_string_append_printf(norm, "%c%s", k ? ',' : ':', item);
        }
    }
    p->spec = g_string_free(norm, FALSE);
    return g_steal_pointer(&p);
}

MsPolicy *
ms_policy_parse(const char *spec, GError **error)
{
    g_return_val_if_fail(spec != NULL, NULL);
    g_autofree char *clean = g_strdup(spec);
    g_strstrip(clean);
    char *colon = strchr(clean, ':');
    g_autofree char *name = g_strstrip(colon ? g_strndup(clean, colon - clean) : g_strdup(clean));
    const MsPolicyClass *cls = ms_policy_class(name);
    if (cls == NULL) {
        g_autofree char *list = g_strjoinv(", ", (char **)names);
        g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_UNKNOWN,
                    "unknown policy '%s' (known: %s)", name, list);
        return NULL;
    }
    return ms_policy_new(cls, colon ? colon + 1 : NULL, error);
}

const char *
ms_policy_name(const MsPolicy *p)
{
    return p->cls->name;
}

const MsPolicyClass *
ms_policy_get_class(const MsPolicy *p)
{
    return p->cls;
}

const char *
ms_policy_spec(const MsPolicy *p)
{
    return p->spec;
}

static const Value *
value_of(const MsPolicy *p, const char *key, MsParamKind kind)
{
    gint i = find_param(p, key);
    g_return_val_if_fail(i >= 0 && p->params[i]->kind == kind, &p->values[0]);
    return &p->values[i];
}

guint64
ms_policy_get_bytes(const MsPolicy *p, const char *key)
{
    return value_of(p, key, MS_PARAM_BYTES)->u;
}

guint64
ms_policy_get_uint(const MsPolicy *p, const char *key)
{
    return value_of(p, key, MS_PARAM_UINT)->u;
}

double
ms_policy_get_double(const MsPolicy *p, const char *key)
{
    return value_of(p, key, MS_PARAM_DOUBLE)->d;
}

double
ms_policy_get_seconds(const MsPolicy *p, const char *key)
{
    return value_of(p, key, MS_PARAM_TIME)->d;
}

double
ms_policy_get_bandwidth(const MsPolicy *p, const char *key)
{
    return value_of(p, key, MS_PARAM_BANDWIDTH)->d;
}

gboolean
ms_policy_get_bool(const MsPolicy *p, const char *key)
{
    return value_of(p, key, MS_PARAM_BOOL)->b;
}

const char *
ms_policy_get_choice(const MsPolicy *p, const char *key)
{
    gint i = find_param(p, key);
    g_return_val_if_fail(i >= 0 && p->params[i]->kind == MS_PARAM_CHOICE, "");
    return p->texts[i];
}

gboolean
ms_policy_given(const MsPolicy *p, const char *key)
{
    gint i = find_param(p, key);
    return i >= 0 && p->given[i];
}

gboolean
ms_policy_plans_mode(const MsPolicy *p, MsPlanMode mode)
{
    return (p->cls->modes & MS_POLICY_MODE(mode)) != 0;
}

guint
ms_policy_path_history(const MsPolicy *p, MsPlanMode mode)
{
    return p->cls->path_history ? p->cls->path_history(p, mode) : 0;
}

void
ms_policy_moe_layer(const MsPolicy *p, const MsMoeLayer *layer, MsMoeLayerPlan *out)
{
    if (p->cls->moe_layer) {
        p->cls->moe_layer(p, layer, out);
    }
}

/* The plan builder's hook: the configuration carries the policy as its data. */
static void
moe_layer_hook(gconstpointer data, const MsMoeLayer *layer, MsMoeLayerPlan *out)
{
    ms_policy_moe_layer(data, layer, out);
}

gboolean
ms_policy_configure(const MsPolicy *p, const MsPolicyInput *in, MsPlanConfig *cfg, GError **error)
{
    ms_plan_config_init(cfg);
    if (!ms_policy_plans_mode(p, in->mode)) {
        g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_INPUT,
                    "policy %s does not plan %s (mode %s)", p->cls->name,
                    in->mode == MS_PLAN_TRAIN ? "training" : "inference",
                    ms_plan_mode_name(in->mode));
        return FALSE;
    }
    cfg->policy = p->cls->name;
    cfg->spec = p->spec;
    cfg->rules = p->cls->rules;
    if (p->cls->moe_layer) {
        cfg->moe_layer = moe_layer_hook;
        cfg->hook_data = p;
    }
    MsCollAlgo algo = MS_COLL_ALGO_DIRECT;
    ms_coll_algo_from_name(ms_policy_get_choice(p, "a2a"), &algo);
    cfg->a2a_algo = algo;
    cfg->window = (guint32)ms_policy_get_uint(p, "window");
    ms_coll_algo_from_name(ms_policy_get_choice(p, "allreduce"), &algo);
    cfg->allreduce_algo = algo;
    if (p->cls->configure && !p->cls->configure(p, in, cfg, error)) {
        ms_plan_config_clear(cfg);
        return FALSE;
    }
    return TRUE;
}

MsSchedule *
ms_policy_plan(const MsPolicy *p, const MsPolicyInput *in, GError **error)
{
    if (!ms_plan_check_routing(in->model, in->routing, in->topo, in->mode, error)) {
        return NULL;
    }
    MsPlanConfig cfg;
    if (!ms_policy_configure(p, in, &cfg, error)) {
        return NULL;
    }
    MsSchedule *s = ms_plan_build(in->model, in->routing, in->topo, in->mode, &cfg, error);
    ms_plan_config_clear(&cfg);
    return s;
}
