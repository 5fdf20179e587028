/* trace_gen_params: the generator's parameters: the keys of a gen:SPEC (their types and
 * bounds), their defaults, the cross-field checks that make them a valid trace header, and the
 * canonical spec that reproduces them. The generative model itself is trace_gen.c. */
#include "trace_gen.h"

#include <string.h>

#include "sim/base/units.h"

typedef enum {
    KEY_UINT,
    KEY_DOUBLE,
    KEY_RECORDS,
    KEY_LIST, /* counts separated by '/', bounds min..max */
} KeyType;

typedef struct {
    const char *name;
    KeyType type;
    gsize offset;
    guint64 min, max;  /* KEY_UINT */
    double dmin, dmax; /* KEY_DOUBLE */
} SpecKey;

#define UINT_KEY(n, field, lo, hi)                                                                 \
    {                                                                                              \
        n, KEY_UINT, G_STRUCT_OFFSET(MsTraceGenParams, field), lo, hi, 0, 0                        \
    }
#define DOUBLE_KEY(n, field, lo, hi)                                                               \
    {                                                                                              \
        n, KEY_DOUBLE, G_STRUCT_OFFSET(MsTraceGenParams, field), 0, 0, lo, hi                      \
    }

static const SpecKey spec_keys[] = {
    UINT_KEY("ranks", ranks, 1, MS_TRACE_MAX_RANKS),
    UINT_KEY("experts", experts, 1, MS_TRACE_MAX_EXPERTS),
    UINT_KEY("layers", layers, 1, MS_TRACE_MAX_LAYERS),
    UINT_KEY("top_k", top_k, 1, MS_TRACE_MAX_TOP_K),
    UINT_KEY("tokens", tokens, 1, MS_TRACE_MAX_TOKENS_PER_RANK),
    UINT_KEY("iterations", iterations, 1, MS_TRACE_MAX_ITERATION),
    DOUBLE_KEY("zipf", zipf, 0.0, MS_TRACE_GEN_ZIPF_MAX),
    DOUBLE_KEY("hot", hot, 1e-9, 1.0),
    DOUBLE_KEY("ratio", ratio, 1.0, 1e300),
    DOUBLE_KEY("corr", corr, 0.0, 1.0),
    DOUBLE_KEY("persist", persist, 0.0, 1.0),
    DOUBLE_KEY("drift", drift, 0.0, 1.0),
    UINT_KEY("seed", seed, 0, G_MAXUINT64),
    {"records", KEY_RECORDS, 0, 0, 0, 0, 0},
    UINT_KEY("expert_nodes", expert_nodes, 1, MS_TRACE_MAX_EXPERTS),
    UINT_KEY("max_nodes", max_nodes, 1, MS_TRACE_MAX_EXPERTS),
    {"groups", KEY_LIST, G_STRUCT_OFFSET(MsTraceGenParams, group_first), 0, MS_TRACE_MAX_LAYERS - 1,
     0, 0},
    {"group_tokens", KEY_LIST, G_STRUCT_OFFSET(MsTraceGenParams, group_tokens), 1,
     MS_TRACE_MAX_TOKENS_PER_RANK, 0, 0},
};

void
ms_trace_gen_params_init(MsTraceGenParams *p)
{
    *p = (MsTraceGenParams){.ranks = 16,
                            .experts = 16,
                            .layers = 12,
                            .top_k = 2,
                            .tokens = 256,
                            .iterations = 1,
                            .skew = MS_TRACE_GEN_SKEW_ZIPF,
                            .zipf = 1.0,
                            .hot = 0.0,
                            .corr = 0.0,
                            .drift = 0.0,
                            .seed = 1,
                            .counts = FALSE};
}

static const char *
known_keys(void)
{
    return "ranks, experts, layers, top_k, tokens, iterations, zipf, hot, ratio, corr, persist, "
           "drift, seed, records, expert_nodes, max_nodes, groups, group_tokens";
}

/* "0/6": up to MS_TRACE_MAX_GROUPS counts in the key's bounds. */
static gboolean
set_list(MsTraceGenParams *p, const SpecKey *k, const char *value, GError **error)
{
    g_auto(GStrv) items = g_strsplit(value, "/", -1);
    guint n = g_strv_length(items);
    if (n == 0 || n > MS_TRACE_MAX_GROUPS) {
        g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE,
                    "%s=%s: give 1 to %u values separated by '/'", k->name, value,
                    MS_TRACE_MAX_GROUPS);
        return FALSE;
    }
    guint32 *out = &G_STRUCT_MEMBER(guint32, p, k->offset);
    for (guint i = 0; i < n; i++) {
        g_autoptr(GError) local = NULL;
        guint64 v = 0;
        if (!ms_parse_uint(items[i], k->min, k->max, &v, &local)) {
            g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE, "%s=%s: item %u: %s",
                        k->name, value, i + 1, local->message);
            return FALSE;
        }
        out[i] = (guint32)v;
    }
    if (strcmp(k->name, "groups") == 0) {
        p->n_groups = n;
    } else {
        p->n_group_tokens = n;
    }
    return TRUE;
}

static gboolean
set_typed(MsTraceGenParams *p, const SpecKey *k, const char *value, GError **error)
{
    g_autoptr(GError) local = NULL;
    if (k->type == KEY_LIST) {
        return set_list(p, k, value, error);
    }
    if (k->type == KEY_RECORDS) {
        if (strcmp(value, "tokens") != 0 && strcmp(value, "counts") != 0) {
            g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE,
                        "records=%s: expected 'tokens' or 'counts'", value);
            return FALSE;
        }
        p->counts = strcmp(value, "counts") == 0;
        return TRUE;
    }
    if (k->type == KEY_UINT) {
        guint64 v = 0;
        if (!ms_parse_uint(value, k->min, k->max, &v, &local)) {
            g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE, "%s=%s: %s", k->name,
                        value, local->message);
            return FALSE;
        }
        if (k->max > G_MAXUINT32) {
            G_STRUCT_MEMBER(guint64, p, k->offset) = v;
        } else {
            G_STRUCT_MEMBER(guint32, p, k->offset) = (guint32)v;
        }
        return TRUE;
    }
    double d = 0;
    if (!ms_parse_double(value, k->dmin, k->dmax, &d, &local)) {
        g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE, "%s=%s: %s", k->name,
                    value, local->message);
        return FALSE;
    }
    G_STRUCT_MEMBER(double, p, k->offset) = d;
    if (k->offset == G_STRUCT_OFFSET(MsTraceGenParams, hot)) {
        p->skew = MS_TRACE_GEN_SKEW_HOT;
    } else if (k->offset == G_STRUCT_OFFSET(MsTraceGenParams, ratio)) {
        p->skew = MS_TRACE_GEN_SKEW_RATIO;
    } else if (k->offset == G_STRUCT_OFFSET(MsTraceGenParams, zipf)) {
        p->skew = MS_TRACE_GEN_SKEW_ZIPF;
    } else if (k->offset == G_STRUCT_OFFSET(MsTraceGenParams, persist)) {
        p->follow = MS_TRACE_GEN_FOLLOW_PERSIST;
    } else if (k->offset == G_STRUCT_OFFSET(MsTraceGenParams, corr)) {
        p->follow = MS_TRACE_GEN_FOLLOW_CORR;
    }
    return TRUE;
}

static const SpecKey *
find_key(const char *key)
{
    for (guint i = 0; i < G_N_ELEMENTS(spec_keys); i++) {
        if (strcmp(spec_keys[i].name, key) == 0) {
            return &spec_keys[i];
        }
    }
    return NULL;
}

gboolean
ms_trace_gen_params_set(MsTraceGenParams *p, const char *key, const char *value, GError **error)
{
    const SpecKey *k = find_key(key);
    if (k == NULL) {
        g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_KEY,
                    "unknown generator key '%s' (known: %s)", key, known_keys());
        return FALSE;
    }
    return set_typed(p, k, value, error);
}

gboolean
ms_trace_gen_params_parse(const char *spec, MsTraceGenParams *p, GError **error)
{
    g_return_val_if_fail(spec != NULL && p != NULL, FALSE);
    ms_trace_gen_params_init(p);
    g_auto(GStrv) items = g_strsplit(spec, ",", -1);
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; items[i]; i++) {
        if (items[i][0] == '\0' && items[1] == NULL) {
            break; /* an empty spec: all defaults */
        }
        char *eq = strchr(items[i], '=');
        if (eq == NULL || eq == items[i]) {
            g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_KEY,
                        "generator spec item '%s' is not KEY=VALUE", items[i]);
            return FALSE;
        }
        *eq = '\0';
        if (g_hash_table_contains(seen, items[i])) {
            g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_KEY,
                        "generator key '%s' given twice", items[i]);
            return FALSE;
        }
        g_hash_table_add(seen, items[i]);
        if (!ms_trace_gen_params_set(p, items[i], eq + 1, error)) {
            /* The value's message names its key; the spec names where it was given. */
            g_prefix_error(error, "generator spec '%s': ", spec);
            return FALSE;
        }
    }
    guint skews = g_hash_table_contains(seen, "zipf") + g_hash_table_contains(seen, "hot") +
                  g_hash_table_contains(seen, "ratio");
    if (skews > 1) {
        g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_CONFLICT,
                    "give one of zipf, hot and ratio, not %s", skews == 2 ? "two" : "all three");
        return FALSE;
    }
    if (g_hash_table_contains(seen, "corr") && g_hash_table_contains(seen, "persist")) {
        g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_CONFLICT,
                    "give either corr or persist, not both");
        return FALSE;
    }
    return ms_trace_gen_params_validate(p, error);
}

/* The ranges of the numeric keys, for parameters filled in by code rather than parsed. */
static gboolean
check_ranges(const MsTraceGenParams *p, GError **error)
{
    const struct {
        const char *name;
        double value, min, max;
        gboolean used;
    } checks[] = {
        {"zipf", p->zipf, 0, MS_TRACE_GEN_ZIPF_MAX, p->skew == MS_TRACE_GEN_SKEW_ZIPF},
        {"hot", p->hot, 1e-9, 1, p->skew == MS_TRACE_GEN_SKEW_HOT},
        {"ratio", p->ratio, 1, 1e300, p->skew == MS_TRACE_GEN_SKEW_RATIO},
        {"corr", p->corr, 0, 1, p->follow == MS_TRACE_GEN_FOLLOW_CORR},
        {"persist", p->persist, 0, 1, p->follow == MS_TRACE_GEN_FOLLOW_PERSIST},
        {"drift", p->drift, 0, 1, TRUE},
        {"tokens", p->tokens, 1, MS_TRACE_MAX_TOKENS_PER_RANK, TRUE},
        {"iterations", p->iterations, 1, MS_TRACE_MAX_ITERATION, TRUE},
    };
    for (guint i = 0; i < G_N_ELEMENTS(checks); i++) {
        /* Written so that NaN fails too. */
        if (checks[i].used &&
            !(checks[i].value >= checks[i].min && checks[i].value <= checks[i].max)) {
            g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE,
                        "%s=%.10g is outside %.10g..%.10g", checks[i].name, checks[i].value,
                        checks[i].min, checks[i].max);
            return FALSE;
        }
    }
    return TRUE;
}

/* The node limit as the trace header will declare it (both keys or neither, a layout that
 * divides the experts and holds top_k on max_nodes nodes). */
static gboolean
check_node_limit(const MsTraceGenParams *p, GError **error)
{
    if (p->expert_nodes == 0 && p->max_nodes == 0) {
        return TRUE;
    }
    MsTraceHeader h;
    ms_trace_header_init_shape(&h, p->experts, p->layers, p->ranks, p->top_k);
    h.expert_nodes = p->expert_nodes;
    h.max_nodes = p->max_nodes;
    g_autoptr(GError) local = NULL;
    if (!ms_trace_header_validate(&h, &local)) {
        g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_CONFLICT,
                    "node-limited routing: %s", local->message);
        return FALSE;
    }
    return TRUE;
}

/* Layer groups: both lists or neither, one token count per group, starts as a header's. */
static gboolean
check_groups(const MsTraceGenParams *p, GError **error)
{
    if (p->n_groups == 0 && p->n_group_tokens == 0) {
        return TRUE;
    }
    if (p->n_groups != p->n_group_tokens) {
        g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_CONFLICT,
                    "groups gives %u layer groups and group_tokens %u token counts: give one "
                    "count per group",
                    p->n_groups, p->n_group_tokens);
        return FALSE;
    }
    MsTraceHeader h;
    ms_trace_header_init_shape(&h, p->experts, p->layers, p->ranks, p->top_k);
    h.n_groups = p->n_groups;
    memcpy(h.group_first, p->group_first, sizeof h.group_first);
    g_autoptr(GError) local = NULL;
    if (!ms_trace_header_validate(&h, &local)) {
        g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_CONFLICT, "%s", local->message);
        return FALSE;
    }
    return TRUE;
}

guint32
ms_trace_gen_params_tokens(const MsTraceGenParams *p)
{
    guint32 t = p->n_groups ? 0 : p->tokens;
    for (guint g = 0; g < p->n_groups; g++) {
        t = MAX(t, p->group_tokens[g]);
    }
    return t;
}

gboolean
ms_trace_gen_params_counts_only(const MsTraceGenParams *p)
{
    for (guint g = 1; g < p->n_groups; g++) {
        if (p->group_tokens[g] != p->group_tokens[0]) {
            return TRUE;
        }
    }
    return FALSE;
}

gboolean
ms_trace_gen_params_validate(const MsTraceGenParams *p, GError **error)
{
    if (!check_ranges(p, error)) {
        return FALSE;
    }
    if (p->top_k > p->experts) {
        g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_CONFLICT,
                    "top_k=%u exceeds experts=%u", p->top_k, p->experts);
        return FALSE;
    }
    if (!check_node_limit(p, error) || !check_groups(p, error)) {
        return FALSE;
    }
    MsTraceHeader h;
    ms_trace_header_init_shape(&h, p->experts, p->layers, p->ranks, p->top_k);
    h.tokens_per_rank = p->n_groups ? 0 : p->tokens;
    g_autoptr(GError) local = NULL;
    if (!ms_trace_header_validate(&h, &local)) {
        g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_LIMIT, "%s", local->message);
        return FALSE;
    }
    /* Only token paths are held per token; counts mode keeps counts per cell (bounded by the
     * header's cell limit) and at most a fixed pool of paths. */
    gboolean counts = p->counts || ms_trace_gen_params_counts_only(p);
    guint64 tokens = (guint64)p->ranks * ms_trace_gen_params_tokens(p);
    guint64 choices = tokens * p->layers * p->top_k;
    if (!counts && choices > MS_TRACE_GEN_MAX_CHOICES) {
        g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_LIMIT,
                    "ranks x tokens x layers x top_k = %" G_GUINT64_FORMAT
                    " expert choices per iteration exceeds the limit of %" G_GUINT64_FORMAT
                    " for token paths; keep counts only (records=counts) or lower tokens or ranks",
                    choices, MS_TRACE_GEN_MAX_CHOICES);
        return FALSE;
    }
    guint64 pooled = (guint64)MS_TRACE_GEN_POOL_TOKENS * p->layers * p->top_k;
    if (counts && tokens > MS_TRACE_GEN_POOL_TOKENS && pooled > MS_TRACE_GEN_MAX_CHOICES) {
        g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_LIMIT,
                    "records=counts draws tokens from a pool of %u paths, and %u x layers x top_k "
                    "= %" G_GUINT64_FORMAT " expert choices exceeds the limit of %" G_GUINT64_FORMAT
                    "; lower layers or top_k",
                    MS_TRACE_GEN_POOL_TOKENS, MS_TRACE_GEN_POOL_TOKENS, pooled,
                    MS_TRACE_GEN_MAX_CHOICES);
        return FALSE;
    }
    return TRUE;
}

/* Shortest decimal that reads back as the same double, so specs round-trip exactly. */
static void
append_double(GString *out, double v)
{
    char fmt[16], buf[G_ASCII_DTOSTR_BUF_SIZE];
    for (int prec = 1; prec <= 17; prec++) {
        g_snprintf(fmt, sizeof(fmt), "%%.%dg", prec);
        g_ascii_formatd(buf, sizeof(buf), fmt, v);
        if (g_ascii_strtod(buf, NULL) == v) {
            break;
        }
    }
    g_string_append(out, buf);
}

char *
ms_trace_gen_params_to_spec(const MsTraceGenParams *p)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "ranks=%u,experts=%u,layers=%u,top_k=%u,tokens=%u,iterations=%u,",
                           p->ranks, p->experts, p->layers, p->top_k, p->tokens, p->iterations);
    static const char *const skew_keys[] = {"zipf=", "hot=", "ratio="};
    g_string_append(s, skew_keys[p->skew]);
    append_double(s, p->skew == MS_TRACE_GEN_SKEW_HOT     ? p->hot
                     : p->skew == MS_TRACE_GEN_SKEW_RATIO ? p->ratio
                                                          : p->zipf);
    gboolean persist = p->follow == MS_TRACE_GEN_FOLLOW_PERSIST;
    g_string_append(s, persist ? ",persist=" : ",corr=");
    append_double(s, persist ? p->persist : p->corr);
    g_string_append(s, ",drift=");
    append_double(s, p->drift);
    g_string_append_printf(s, ",seed=%" G_GUINT64_FORMAT ",records=%s", p->seed,
                           p->counts || ms_trace_gen_params_counts_only(p) ? "counts" : "tokens");
    if (p->max_nodes) {
        g_string_append_printf(s, ",expert_nodes=%u,max_nodes=%u", p->expert_nodes, p->max_nodes);
    }
    for (guint list = 0; list < 2 && p->n_groups; list++) {
        g_string_append(s, list ? ",group_tokens=" : ",groups=");
        for (guint g = 0; g < p->n_groups; g++) {
            g_string_append_printf(s, "%s%u", g ? "/" : "",
                                   list ? p->group_tokens[g] : p->group_first[g]);
        }
    }
    return g_string_free(s, FALSE);
}
