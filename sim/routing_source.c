/* routing_source: a trace name, or the generator's keys given as KEY=VALUE items, and the
 * generator's defaults for a model and a topology. */
#include "routing_source.h"

#include <string.h>

/* The default skew of generated routing (docs/running.md): the hottest expert receives 1.5x the
 * mean load, as models trained with a load-balancing loss show; half the tokens follow their
 * previous expert's group (the path locality Lina exploits); popularity ranks drift slowly. */
#define GEN_HOT_OVER_MEAN 1.5
#define GEN_CORR "0.5"
#define GEN_DRIFT "0.02"

struct _MsRoutingSource {
    char *spec;      /* as given; NULL: the generator's defaults */
    GPtrArray *keys; /* generated: the keys given, in order, and their values (char*) */
    GPtrArray *values;
};

void
ms_routing_source_free(MsRoutingSource *src)
{
    if (src == NULL) {
        return;
    }
    if (src->keys) {
        g_ptr_array_unref(src->keys);
        g_ptr_array_unref(src->values);
    }
    g_free(src->spec);
    g_free(src);
}

/* Checks key=value against the generator and appends it. */
static gboolean
add_item(MsRoutingSource *src, const char *key, const char *value, GError **error)
{
    MsTraceGenParams scratch;
    ms_trace_gen_params_init(&scratch);
    if (!ms_trace_gen_params_set(&scratch, key, value, error)) {
        return FALSE;
    }
    g_ptr_array_add(src->keys, g_strdup(key));
    g_ptr_array_add(src->values, g_strdup(value));
    return TRUE;
}

MsRoutingSource *
ms_routing_source_new(const char *spec, GError **error)
{
    g_autoptr(MsRoutingSource) src = g_new0(MsRoutingSource, 1);
    src->spec = g_strdup(spec);
    if (spec && !g_str_has_prefix(spec, "gen:")) {
        return g_steal_pointer(&src);
    }
    src->keys = g_ptr_array_new_with_free_func(g_free);
    src->values = g_ptr_array_new_with_free_func(g_free);
    if (spec == NULL || spec[4] == '\0') {
        return g_steal_pointer(&src);
    }
    g_auto(GStrv) items = g_strsplit(spec + 4, ",", -1);
    for (guint i = 0; items[i]; i++) {
        char *eq = strchr(items[i], '=');
        if (eq == NULL) {
            g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_KEY,
                        "trace gen: '%s' is not KEY=VALUE", items[i]);
            return NULL;
        }
        *eq = '\0';
        if (!add_item(src, g_strstrip(items[i]), g_strstrip(eq + 1), error)) {
            g_prefix_error(error, "--trace %s: ", spec);
            return NULL;
        }
    }
    return g_steal_pointer(&src);
}

MsRoutingSource *
ms_routing_source_with(const MsRoutingSource *src, const char *key, const char *value,
                       GError **error)
{
    g_return_val_if_fail(ms_routing_source_generated(src), NULL);
    g_autoptr(MsRoutingSource) copy = g_new0(MsRoutingSource, 1);
    copy->keys = g_ptr_array_new_with_free_func(g_free);
    copy->values = g_ptr_array_new_with_free_func(g_free);
    GString *spec = g_string_new(src->spec ? src->spec : "gen:");
    for (guint i = 0; i < src->keys->len; i++) {
        g_ptr_array_add(copy->keys, g_strdup(src->keys->pdata[i]));
        g_ptr_array_add(copy->values, g_strdup(src->values->pdata[i]));
    }
    g_string_append_printf(spec, "%s%s=%s", spec->len > 4 ? "," : "", key, value);
    copy->spec = g_string_free(spec, FALSE);
    if (!add_item(copy, key, value, error)) {
        return NULL;
    }
    return g_steal_pointer(&copy);
}

gboolean
ms_routing_source_generated(const MsRoutingSource *src)
{
    return src->keys != NULL;
}

const char *
ms_routing_source_spec(const MsRoutingSource *src)
{
    return src->spec;
}

static gboolean
set_uint(MsTraceGenParams *p, const char *key, guint64 v, GError **error)
{
    char buf[24];
    g_snprintf(buf, sizeof buf, "%" G_GUINT64_FORMAT, v);
    return ms_trace_gen_params_set(p, key, buf, error);
}

/* The model's node-limited routing (max_nodes) in training: the experts of an expert-parallel
 * group sit on the nodes its ranks span (contiguous blocks, as ms_placement_new_ep puts them),
 * and a token picks them on at most max_nodes of those nodes. Nothing when the group spans no
 * more nodes than the limit. */
static gboolean
node_limit(MsTraceGenParams *p, const MsRoutingShape *shape, GError **error)
{
    const MsModelSpec *m = ms_model_spec(shape->model);
    guint n = ms_topology_n_gpus(shape->topology), ep = 0, nodes = 0;
    if (m->max_nodes == 0 || shape->mode != MS_PLAN_TRAIN) {
        return TRUE;
    }
    if (!ms_model_resolve_ep(shape->model, n, &ep, error)) {
        return FALSE;
    }
    for (guint r = 0; r < ep; r++) {
        nodes += r == 0 || ms_topology_gpu_node(shape->topology, r) !=
                               ms_topology_gpu_node(shape->topology, r - 1);
    }
    if (nodes <= m->max_nodes) {
        return TRUE;
    }
    return set_uint(p, "expert_nodes", nodes, error) &&
           set_uint(p, "max_nodes", m->max_nodes, error);
}

/* A model whose layer groups route different numbers of tokens gets them in the routing: each
 * group with MoE layers starts a trace group of its tokens per GPU (docs/models.md). */
static void
set_groups(const MsModel *model, gboolean infer, MsTraceGenParams *p)
{
    guint32 n = 0;
    gboolean differ = FALSE;
    for (guint g = 0; g < ms_model_n_groups(model) && n < MS_TRACE_MAX_GROUPS; g++) {
        const MsModelGroup *gr = ms_model_group(model, g);
        if (gr->n_moe == 0) {
            continue;
        }
        const MsModelSpec *s = ms_model_spec(ms_model_layer(model, gr->first));
        p->group_first[n] = gr->first_moe;
        p->group_tokens[n] = infer ? s->tokens_per_gpu_infer : s->tokens_per_gpu;
        differ = differ || p->group_tokens[n] != p->group_tokens[0];
        n++;
    }
    if (differ) {
        p->n_groups = p->n_group_tokens = n;
    } else if (n > 0) {
        p->tokens = p->group_tokens[0]; /* the MoE layers' groups all route as many */
    }
}

gboolean
ms_routing_source_gen_params(const MsRoutingSource *src, const MsRoutingShape *shape,
                             MsTraceGenParams *p, GError **error)
{
    g_return_val_if_fail(ms_routing_source_generated(src), FALSE);
    const MsModelSpec *m = ms_model_spec(shape->model);
    gboolean infer = shape->mode == MS_PLAN_INFER;
    ms_trace_gen_params_init(p);
    /* A token picks top_k distinct experts, so the hottest share is at most 1 / top_k (and is
     * exactly 1 / experts when every token picks every expert: no skew to ask for). */
    guint top_k = infer ? m->top_k_infer : m->top_k;
    gboolean skew = m->experts > top_k;
    char hot[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_dtostr(hot, sizeof hot,
                   MIN(GEN_HOT_OVER_MEAN / MAX(m->experts, 1), 0.95 / MAX(top_k, 1)));
    guint ranks = shape->ranks ? shape->ranks : ms_topology_n_gpus(shape->topology);
    if (!set_uint(p, "ranks", ranks, error) || !set_uint(p, "experts", m->experts, error) ||
        !set_uint(p, "layers", m->n_moe, error) || !set_uint(p, "top_k", top_k, error) ||
        !set_uint(p, "tokens", infer ? m->tokens_per_gpu_infer : m->tokens_per_gpu, error) ||
        !set_uint(p, "iterations", shape->iterations, error) ||
        !set_uint(p, "seed", shape->seed ? shape->seed : 1, error) ||
        !ms_trace_gen_params_set(p, "corr", GEN_CORR, error) ||
        !ms_trace_gen_params_set(p, "drift", GEN_DRIFT, error) ||
        !ms_trace_gen_params_set(p, skew ? "hot" : "zipf", skew ? hot : "0", error)) {
        return FALSE;
    }
    if (!node_limit(p, shape, error)) {
        return FALSE;
    }
    set_groups(shape->model, infer, p);
    for (guint i = 0; i < src->keys->len; i++) {
        if (!ms_trace_gen_params_set(p, src->keys->pdata[i], src->values->pdata[i], error)) {
            return FALSE;
        }
    }
    return ms_trace_gen_params_validate(p, error);
}

char *
ms_routing_source_describe(const MsRoutingSource *src, const MsRoutingShape *shape, GError **error)
{
    if (!ms_routing_source_generated(src)) {
        return g_strdup(src->spec);
    }
    MsTraceGenParams p;
    if (!ms_routing_source_gen_params(src, shape, &p, error)) {
        return NULL;
    }
    g_autofree char *spec = ms_trace_gen_params_to_spec(&p);
    return g_strconcat("gen:", spec, NULL);
}
