/* model_groups: layer groups of a model file, `[group NAME]` sections that give a run of layers
 * (an encoder, a decoder) its own tokens and dimensions. Each group becomes a view of the model:
 * the [model] values with the group's keys over them, so every cost formula of model.c prices a
 * group's layer unchanged. Experts, top_k, dtype, the parallel layout and the framework stay the
 * model's: one trace and one placement serve every layer. */
#include "model_private.h"

#include <string.h>

#define PREFIX "group "

/* What a group may set: the keys of [model] that size a layer's work (docs/models.md). */
static const char *const group_keys[] = {
    "layers",          "tokens_per_gpu", "tokens_per_gpu_infer",
    "d_model",         "d_ffn",          "d_ffn_dense",
    "heads",           "kv_heads",       "seq_len",
    "attention_flops", "dense_flops",    NULL,
};

static const MsRange *
R(const char *key)
{
    return ms_range_find(ms_model_ranges()->fields, "[model]", key);
}

/* "A-B" or "A": layers first..last of the model's. */
static gboolean
read_span(const MsModel *m, const MsIni *ini, const char *group, guint *first, guint *last,
          GError **error)
{
    const char *text = ms_ini_get_string(ini, group, "layers", error);
    if (text == NULL) {
        return FALSE;
    }
    g_auto(GStrv) ends = g_strsplit(text, "-", 3);
    guint n = g_strv_length(ends);
    guint64 v[2] = {0, 0};
    guint max = m->spec.layers - 1;
    for (guint i = 0; i < n && n <= 2; i++) {
        g_strstrip(ends[i]);
        if (!ms_parse_uint(ends[i], 0, max, &v[i], NULL)) {
            n = 0;
        }
    }
    if (n == 0 || n > 2 || (n == 2 && v[1] < v[0])) {
        ms_ini_set_error(ini, group, "layers", error, MS_INI_ERROR_VALUE,
                         "'%s' is not a range of layers FIRST-LAST (layers are numbered 0 to %u)",
                         text, max);
        return FALSE;
    }
    *first = (guint)v[0];
    *last = (guint)(n == 2 ? v[1] : v[0]);
    return TRUE;
}

/* A count of the group, in the [model] key's range; *out keeps the model's value when absent. */
static gboolean
group_count(const MsIni *ini, const char *group, const char *key, guint64 *out, GError **error)
{
    return ms_ini_range_uint(ini, group, R(key), FALSE, out, error);
}

/* The group's dimensions over the model's; the same divisibility rules as [model]. */
static gboolean
read_dims(MsModel *v, const MsIni *ini, const char *group, GError **error)
{
    MsModelSpec *s = &v->spec;
    guint64 d_model = s->d_model, d_ffn = s->d_ffn, dense = s->d_ffn_dense;
    guint64 heads = s->heads, kv = s->kv_heads, seq = s->seq_len;
    guint64 tokens = s->tokens_per_gpu, infer = s->tokens_per_gpu_infer;
    gboolean own_infer = ms_ini_has_key(ini, group, "tokens_per_gpu_infer");
    /* A group that sets its heads and not its kv_heads has as many, as [model] does. */
    if (ms_ini_has_key(ini, group, "heads") && !ms_ini_has_key(ini, group, "kv_heads")) {
        kv = 0;
    }
    if (!group_count(ini, group, "d_model", &d_model, error) ||
        !group_count(ini, group, "d_ffn", &d_ffn, error) ||
        !group_count(ini, group, "d_ffn_dense", &dense, error) ||
        !group_count(ini, group, "heads", &heads, error) ||
        !group_count(ini, group, "kv_heads", &kv, error) ||
        !group_count(ini, group, "seq_len", &seq, error) ||
        !group_count(ini, group, "tokens_per_gpu", &tokens, error) ||
        !group_count(ini, group, "tokens_per_gpu_infer", &infer, error)) {
        return FALSE;
    }
    kv = kv ? kv : heads;
    if (d_model % heads != 0) {
        ms_ini_set_error(ini, group, ms_ini_has_key(ini, group, "heads") ? "heads" : "d_model",
                         error, MS_INI_ERROR_VALUE,
                         "%" G_GUINT64_FORMAT " heads do not divide d_model %" G_GUINT64_FORMAT,
                         heads, d_model);
        return FALSE;
    }
    if (kv > heads || heads % kv != 0) {
        ms_ini_set_error(ini, group, ms_ini_has_key(ini, group, "kv_heads") ? "kv_heads" : "heads",
                         error, MS_INI_ERROR_VALUE,
                         "%" G_GUINT64_FORMAT " kv_heads do not divide %" G_GUINT64_FORMAT " heads",
                         kv, heads);
        return FALSE;
    }
    /* A group that sets its training tokens and not its inference tokens infers with those, as
     * [model] does. */
    if (ms_ini_has_key(ini, group, "tokens_per_gpu") && !own_infer) {
        infer = tokens;
    }
    s->d_model = d_model;
    s->d_ffn = d_ffn;
    s->d_ffn_dense = dense;
    /* A head's width follows the group's d_model and heads unless the file fixes it. */
    if (!ms_ini_has_key(ini, "model", "head_dim")) {
        s->head_dim = (guint)(d_model / heads);
    }
    s->heads = (guint)heads;
    s->kv_heads = (guint)kv;
    s->seq_len = (guint)seq;
    s->tokens_per_gpu = (guint)tokens;
    s->tokens_per_gpu_infer = (guint)infer;
    return TRUE;
}

/* The group's flops: its own keys, else the model's overrides where the group keeps the
 * dimensions they stand for, else the formulas on the group's dimensions. */
static gboolean
read_flops(MsModel *v, const MsModel *m, const MsIni *ini, const char *group, GError **error)
{
    const MsModelSpec *a = &v->spec, *b = &m->spec;
    gboolean same_attn = a->d_model == b->d_model && a->heads == b->heads &&
                         a->kv_heads == b->kv_heads && a->seq_len == b->seq_len;
    gboolean same_dense = a->d_model == b->d_model && a->d_ffn_dense == b->d_ffn_dense;
    /* The file's attention parameter count (MLA's) stands for the model's dimensions only. */
    if (!same_attn) {
        v->attention_params = 0;
    }
    model_derive_flops(v);
    if (same_attn) {
        v->attention_flops = m->attention_flops;
    }
    if (same_dense) {
        v->dense_flops = m->dense_flops;
    }
    return ms_ini_range_double(ini, group, R("attention_flops"), FALSE, &v->attention_flops,
                               error) &&
           ms_ini_range_double(ini, group, R("dense_flops"), FALSE, &v->dense_flops, error);
}

/* Groups sorted by first layer; every layer in exactly one. */
static gint
by_first(gconstpointer a, gconstpointer b)
{
    const MsModel *x = a, *y = b;
    return x->group.first < y->group.first ? -1 : x->group.first > y->group.first;
}

static gboolean
check_cover(MsModel *m, const MsIni *ini, GError **error)
{
    qsort(m->groups, m->n_groups, sizeof(MsModel), by_first);
    guint next = 0;
    for (guint g = 0; g < m->n_groups; g++) {
        const MsModelGroup *gr = &m->groups[g].group;
        g_autofree char *section = g_strconcat(PREFIX, gr->name, NULL);
        if (gr->first != next) {
            ms_ini_set_error(ini, section, "layers", error, MS_INI_ERROR_VALUE,
                             "layers %u-%u: %s (every layer is in exactly one group once a "
                             "group is given)",
                             gr->first, gr->last,
                             gr->first < next ? "overlap the group before" : "leave a gap before");
            return FALSE;
        }
        next = gr->last + 1;
    }
    if (next != m->spec.layers) {
        const MsModelGroup *gr = &m->groups[m->n_groups - 1].group;
        g_autofree char *section = g_strconcat(PREFIX, gr->name, NULL);
        ms_ini_set_error(ini, section, "layers", error, MS_INI_ERROR_VALUE,
                         "layers %u-%u: layers %u-%u are in no group (every layer is in exactly "
                         "one group once a group is given)",
                         gr->first, gr->last, next, m->spec.layers - 1);
        return FALSE;
    }
    return TRUE;
}

/* Views share the model's arrays and strings; each gets its group's place. */
static void
finish_views(MsModel *m)
{
    m->layer_group = g_new(guint, m->spec.layers);
    for (guint g = 0; g < m->n_groups; g++) {
        MsModelGroup *gr = &m->groups[g].group;
        gr->first_moe = m->spec.n_moe;
        gr->n_moe = 0;
        for (guint l = gr->first; l <= gr->last; l++) {
            m->layer_group[l] = g;
            if (m->is_moe[l]) {
                gr->first_moe = MIN(gr->first_moe, (guint)m->moe_index[l]);
                gr->n_moe++;
            }
        }
        if (gr->n_moe == 0) {
            gr->first_moe = 0;
        }
    }
}

gboolean
model_read_groups(MsModel *m, const MsIni *ini, GError **error)
{
    guint n = 0;
    const char *const *sections = ms_ini_groups(ini, &n);
    g_autoptr(GArray) views = g_array_new(FALSE, TRUE, sizeof(MsModel));
    for (guint i = 0; i < n; i++) {
        const char *section = sections[i];
        if (!g_str_has_prefix(section, PREFIX)) {
            continue;
        }
        const char *name = section + strlen(PREFIX);
        if (*name == '\0' || strchr(name, ' ')) {
            ms_ini_set_error(ini, section, NULL, error, MS_INI_ERROR_VALUE,
                             "a group is named [group NAME], NAME one word");
            return FALSE;
        }
        if (views->len >= MS_MODEL_MAX_GROUPS) {
            ms_ini_set_error(ini, section, NULL, error, MS_INI_ERROR_VALUE,
                             "more than %u layer groups", MS_MODEL_MAX_GROUPS);
            return FALSE;
        }
        if (!ms_ini_check_keys(ini, section, group_keys, error)) {
            return FALSE;
        }
        MsModel v = *m;
        v.is_view = TRUE;
        v.n_groups = 0;
        v.groups = NULL;
        v.layer_group = NULL;
        v.group.name = name; /* owned by ini until finished below */
        if (!read_span(m, ini, section, &v.group.first, &v.group.last, error) ||
            !read_dims(&v, ini, section, error) || !read_flops(&v, m, ini, section, error)) {
            return FALSE;
        }
        g_array_append_val(views, v);
    }
    if (views->len == 0) {
        return TRUE;
    }
    m->n_groups = views->len;
    m->groups = (MsModel *)g_array_free(g_steal_pointer(&views), FALSE);
    for (guint g = 0; g < m->n_groups; g++) {
        m->groups[g].group.name = g_strdup(m->groups[g].group.name);
    }
    if (!check_cover(m, ini, error)) {
        return FALSE;
    }
    finish_views(m);
    return TRUE;
}

/* --- sums over the layers, each priced by its group --- */

double
ms_model_dense_params(const MsModel *model)
{
    double sum = 0;
    for (guint l = 0; l < model->spec.layers; l++) {
        const MsModel *v = ms_model_layer(model, l);
        sum += (double)ms_model_attention_params(v) +
               (double)(model->is_moe[l] ? ms_model_gate_params(v) + ms_model_shared_params(v)
                                         : ms_model_dense_ffn_params(v));
    }
    return sum + (double)ms_model_head_params(ms_model_layer(model, model->spec.layers - 1)) +
           (double)ms_model_embedding_params(ms_model_layer(model, 0));
}

double
ms_model_layer_expert_params(const MsModel *model)
{
    double sum = 0;
    for (guint m = 0; m < model->spec.n_moe; m++) {
        sum += (double)ms_model_expert_params(ms_model_moe(model, m));
    }
    return sum;
}

guint64
ms_model_largest_expert_params(const MsModel *model)
{
    guint64 most = 0;
    for (guint m = 0; m < model->spec.n_moe; m++) {
        most = MAX(most, ms_model_expert_params(ms_model_moe(model, m)));
    }
    return most;
}
