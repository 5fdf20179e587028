/* model: reading model INI files (through sim/base/ini.h, so every bad value names FILE:LINE, the
 * key and the value) and the model's accessors; the cost formulas are model_costs.c's. Nothing
 * here knows the cluster except ms_model_resolve_ep. */
#include "model_private.h"

#include <math.h>
#include <string.h>

#include "sim/base/ini.h"
#include "sim/base/resources.h"
#include "sim/moe/models/ms-models.h"

G_DEFINE_QUARK(ms_model_error_quark, ms_model_error)

#define RESOURCE_DIR "/moesim/models"
#define GROUP "model"

void
ms_model_free(MsModel *model)
{
    if (model == NULL || model->is_view) {
        return;
    }
    g_free(model->source);
    g_free(model->name);
    g_free(model->description);
    g_free(model->is_moe);
    g_free(model->moe_index);
    g_free(model->moe_layer);
    for (guint g = 0; g < model->n_groups; g++) {
        g_free((char *)model->groups[g].group.name);
    }
    g_free(model->groups);
    g_free(model->layer_group);
    g_free(model);
}

static const char *const allowed_keys[] = {
    "format",
    "name",
    "description",
    "layers",
    "moe_layers",
    "moe_every",
    "moe_first",
    "d_model",
    "d_ffn",
    "d_ffn_dense",
    "experts",
    "top_k",
    "top_k_infer",
    "gated",
    "capacity_factor",
    "dtype",
    "heads",
    "kv_heads",
    "head_dim",
    "attention_params",
    "shared_experts",
    "tie_embeddings",
    "max_nodes",
    "seq_len",
    "tokens_per_gpu",
    "tokens_per_gpu_infer",
    "ep",
    "grad_bucket",
    "vocab",
    "attention_flops",
    "dense_flops",
    "backward_factor",
    "framework",
    "host_op",
    "host_moe_layer",
    "host_expert",
    "host_sync",
    "host_syncs",
    "host_token",
    NULL,
};

#define LAYERS_REASON "40 times GPT-3's 96 layers"
#define FFN_REASON                                                                                 \
    "20 times Llama 3 405B's 53248; an expert's 3 x d_model x d_ffn weights stay below 2^38"
#define TOKENS_REASON                                                                              \
    "the trace format's limit per rank; 2^26 x top_k 64 x d_model 65536 x 4 B is 1 PiB, the "      \
    "largest all-to-all a GPU can send in one layer"
#define FLOPS_REASON "per token and layer; over 10^5 times a layer of Llama 3 405B (6.4e9)"

#define HOST_REASON                                                                                \
    "host time per occurrence (docs/models.md, framework overheads); a second per op or layer is " \
    "a unit typo (ms for us)"

/* Every number, boolean and choice a model file carries (docs/bad-inputs.md is generated from this
 * table, and tests/test_input_ranges.c walks it). The maxima together keep every size the planner
 * derives (a token's bytes, a GPU's all-to-all, an expert's weights, gradients) within 1 PiB per
 * op. Bounds that depend on other keys (top_k at most experts) are checked after. */
static const MsRange fields[] = {
    {"[model]", "layers", MS_RANGE_COUNT, 1, MS_MODEL_MAX_LAYERS, LAYERS_REASON},
    {"[model]", "moe_layers", MS_RANGE_COUNT, 0, MS_MODEL_MAX_LAYERS - 1,
     "each item a layer index below layers"},
    {"[model]", "moe_every", MS_RANGE_COUNT, 1, MS_MODEL_MAX_LAYERS, "and at most layers"},
    {"[model]", "moe_first", MS_RANGE_COUNT, 0, MS_MODEL_MAX_LAYERS - 1, "and below layers"},
    {"[model]", "d_model", MS_RANGE_COUNT, 1, MS_MODEL_MAX_D_MODEL,
     "4 times the widest published model (16384, Llama 3 405B); a token is at most 256 KiB"},
    {"[model]", "d_ffn", MS_RANGE_COUNT, 1, MS_MODEL_MAX_DIM, FFN_REASON},
    {"[model]", "d_ffn_dense", MS_RANGE_COUNT, 1, MS_MODEL_MAX_DIM, FFN_REASON},
    {"[model]", "experts", MS_RANGE_COUNT, 1, MS_MODEL_MAX_EXPERTS, "the trace format's limit"},
    {"[model]", "top_k", MS_RANGE_COUNT, 1, MS_MODEL_MAX_TOP_K,
     "and at most experts; the trace format's limit"},
    {"[model]", "top_k_infer", MS_RANGE_COUNT, 1, MS_MODEL_MAX_TOP_K,
     "and at most experts; the trace format's limit"},
    {"[model]", "capacity_factor", MS_RANGE_NUMBER, 0, 64,
     "0 is dropless; a capacity of top_k x factor x tokens / experts slots stays below 2^38"},
    {"[model]", "heads", MS_RANGE_COUNT, 1, MS_MODEL_MAX_D_MODEL, "and divides d_model"},
    {"[model]", "kv_heads", MS_RANGE_COUNT, 1, MS_MODEL_MAX_D_MODEL, "and divides heads"},
    {"[model]", "head_dim", MS_RANGE_COUNT, 1, MS_MODEL_MAX_HEAD_DIM,
     "16 times the widest published head (256); heads x head_dim at most 4 x 65536"},
    {"[model]", "attention_params", MS_RANGE_COUNT, 1, MS_MODEL_MAX_ATTENTION_PARAMS,
     "one layer's attention weights (for attention the Q, K, V, O formula does not describe, "
     "such as multi-head latent attention); 2^38 is 500 times Llama 3 405B's 0.5e9"},
    {"[model]", "shared_experts", MS_RANGE_COUNT, 0, MS_MODEL_MAX_TOP_K,
     "experts every token of an MoE layer runs (DeepSeekMoE: 1 in V3, 2 in V2); at most top_k's "
     "limit"},
    {"[model]", "max_nodes", MS_RANGE_COUNT, 0, MS_MODEL_MAX_EXPERTS,
     "node-limited routing: a token's experts on at most this many nodes (DeepSeek-V3: 4); 0 is "
     "no limit"},
    {"[model]", "tie_embeddings", MS_RANGE_BOOLEAN, 0, 1,
     "whether the input embedding is the output head's matrix (default true)"},
    {"[model]", "seq_len", MS_RANGE_COUNT, 1, MS_MODEL_MAX_SEQ_LEN,
     "16.7 million tokens of context; attention's 4 x seq_len x d_model flops per token stay "
     "below 2^44"},
    {"[model]", "tokens_per_gpu", MS_RANGE_COUNT, 1, MS_MODEL_MAX_TOKENS, TOKENS_REASON},
    {"[model]", "tokens_per_gpu_infer", MS_RANGE_COUNT, 1, MS_MODEL_MAX_TOKENS, TOKENS_REASON},
    {"[model]", "ep", MS_RANGE_COUNT, 1, MS_MODEL_MAX_EXPERTS,
     "and divides both the GPUs and the experts"},
    {"[model]", "grad_bucket", MS_RANGE_BYTES, 1, (double)MS_BYTES_MAX,
     "one allreduce; as every size moesim reads"},
    {"[model]", "vocab", MS_RANGE_COUNT, 0, MS_MODEL_MAX_VOCAB,
     "0 leaves the embedding and head out; 2^24 is 64 times the largest vocabularies (256k)"},
    {"[model]", "attention_flops", MS_RANGE_NUMBER, 0, 1e15, FLOPS_REASON},
    {"[model]", "dense_flops", MS_RANGE_NUMBER, 0, 1e15, FLOPS_REASON},
    {"[model]", "backward_factor", MS_RANGE_NUMBER, 0.5, 8,
     "backward over forward cost, about 2 (docs/models.md)"},
    {"[model]", "framework", MS_RANGE_CHOICE, 0, MS_FRAMEWORK_N - 1,
     "the host synchronisations per MoE layer its code makes (docs/models.md; default custom)",
     ms_framework_names},
    {"[model]", "host_op", MS_RANGE_TIME, 0, MS_FRAMEWORK_MAX_S, HOST_REASON},
    {"[model]", "host_moe_layer", MS_RANGE_TIME, 0, MS_FRAMEWORK_MAX_S, HOST_REASON},
    {"[model]", "host_expert", MS_RANGE_TIME, 0, MS_FRAMEWORK_MAX_S, HOST_REASON},
    {"[model]", "host_sync", MS_RANGE_TIME, 0, MS_FRAMEWORK_MAX_S, HOST_REASON},
    {"[model]", "host_token", MS_RANGE_TIME, 0, MS_FRAMEWORK_MAX_S, HOST_REASON},
    {"[model]", "host_syncs", MS_RANGE_COUNT, 0, MS_FRAMEWORK_MAX_SYNCS,
     "host synchronisations per forward MoE layer (default the framework's)"},
    {"[model]", "gated", MS_RANGE_BOOLEAN, 0, 1,
     "a SwiGLU-style FFN of three matrices instead of two (default false)"},
    {"[model]", "dtype", MS_RANGE_CHOICE, 0, MS_DTYPE_N - 1,
     "the compute datatype: its peak prices every op, its size (4, 2 or 1 bytes) every element "
     "moved or stored (default bf16)",
     ms_dtype_names},
    {NULL},
};

static const MsRangeTable ranges = {"Model files", fields};

const MsRangeTable *
ms_model_ranges(void)
{
    return &ranges;
}

static const MsRange *
F(const char *key)
{
    return ms_range_find(fields, "[model]", key);
}

/* A count of the table; *out is left alone when the key is absent and not required. */
static gboolean
get_count(const MsIni *ini, const char *key, gboolean required, guint *out, GError **error)
{
    guint64 v = *out;
    if (!ms_ini_range_uint(ini, GROUP, F(key), required, &v, error)) {
        return FALSE;
    }
    *out = (guint)v;
    return TRUE;
}

static gboolean
get_uint(const MsIni *ini, const char *key, guint *out, GError **error)
{
    return get_count(ini, key, TRUE, out, error);
}

static gboolean
opt_uint(const MsIni *ini, const char *key, guint *out, GError **error)
{
    return get_count(ini, key, FALSE, out, error);
}

/* A bound that depends on another key. */
static gboolean
at_most(const MsIni *ini, const char *key, guint v, guint max, const char *what, GError **error)
{
    if (v <= max) {
        return TRUE;
    }
    ms_ini_set_error(ini, GROUP, key, error, MS_INI_ERROR_VALUE, "%u is more than %s (%u)", v, what,
                     max);
    return FALSE;
}

static gboolean
read_header(MsModel *m, const MsIni *ini, GError **error)
{
    if (!ms_ini_has_group(ini, GROUP)) {
        g_set_error(error, MS_INI_ERROR, MS_INI_ERROR_MISSING, "%s: no [model] group",
                    ms_ini_source(ini));
        return FALSE;
    }
    guint n_groups = 0;
    const char *const *groups = ms_ini_groups(ini, &n_groups);
    for (guint i = 0; i < n_groups; i++) {
        if (strcmp(groups[i], GROUP) != 0 && !g_str_has_prefix(groups[i], "group ")) {
            ms_ini_set_error(ini, groups[i], NULL, error, MS_INI_ERROR_UNKNOWN_KEY,
                             "unknown group (a model file has [model] and [group NAME] layer "
                             "groups)");
            return FALSE;
        }
    }
    if (!ms_ini_check_keys(ini, GROUP, allowed_keys, error)) {
        return FALSE;
    }
    guint64 format = 0;
    if (!ms_ini_get_uint(ini, GROUP, "format", 0, G_MAXUINT32, &format, error)) {
        return FALSE;
    }
    if (format != MS_MODEL_FORMAT) {
        ms_ini_set_error(ini, GROUP, "format", error, MS_INI_ERROR_VALUE,
                         "format %" G_GUINT64_FORMAT " is not one this moesim reads (it reads %d)",
                         format, MS_MODEL_FORMAT);
        return FALSE;
    }
    const char *name = ms_ini_get_string(ini, GROUP, "name", error);
    if (name == NULL) {
        return FALSE;
    }
    if (*name == '\0') {
        ms_ini_set_error(ini, GROUP, "name", error, MS_INI_ERROR_VALUE, "empty name");
        return FALSE;
    }
    const char *description = "";
    if (!ms_ini_opt_string(ini, GROUP, "description", &description, error)) {
        return FALSE;
    }
    m->name = g_strdup(name);
    m->description = g_strdup(description);
    return TRUE;
}

/* "moe_layers = 1, 3, 5": strictly increasing layer indices below the layer count. */
static gboolean
read_moe_list(MsModel *m, const MsIni *ini, GError **error)
{
    const char *text = ms_ini_get_string(ini, GROUP, "moe_layers", error);
    if (text == NULL) {
        return FALSE;
    }
    g_autofree char *stripped = g_strstrip(g_strdup(text));
    if (*stripped == '\0') {
        /* A model without MoE layers has no all-to-all: nothing moesim studies. */
        ms_ini_set_error(ini, GROUP, "moe_layers", error, MS_INI_ERROR_VALUE,
                         "empty: list the MoE layers (e.g. 1, 3, 5), or leave the key out for "
                         "moe_every/moe_first");
        return FALSE;
    }
    g_auto(GStrv) items = g_strsplit(text, ",", -1);
    gint64 prev = -1;
    for (guint i = 0; items[i]; i++) {
        guint64 layer = 0;
        GError *local = NULL;
        g_strstrip(items[i]);
        double v = 0;
        if (!ms_range_parse(F("moe_layers"), items[i], &v, &local) ||
            !ms_parse_uint(items[i], 0, m->spec.layers - 1, &layer, &local)) {
            ms_ini_set_error(ini, GROUP, "moe_layers", error, MS_INI_ERROR_VALUE,
                             "item %u: %s (layers are numbered 0 to %u)", i + 1, local->message,
                             m->spec.layers - 1);
            g_error_free(local);
            return FALSE;
        }
        if ((gint64)layer <= prev) {
            ms_ini_set_error(ini, GROUP, "moe_layers", error, MS_INI_ERROR_VALUE,
                             "item %u: layer %" G_GUINT64_FORMAT
                             " does not follow %" G_GINT64_FORMAT " (list layers in increasing "
                             "order, each once)",
                             i + 1, layer, prev);
            return FALSE;
        }
        m->is_moe[layer] = TRUE;
        prev = (gint64)layer;
    }
    return TRUE;
}

static gboolean
read_layers(MsModel *m, const MsIni *ini, GError **error)
{
    if (!get_uint(ini, "layers", &m->spec.layers, error)) {
        return FALSE;
    }
    m->is_moe = g_new0(gboolean, m->spec.layers);
    gboolean has_list = ms_ini_has_key(ini, GROUP, "moe_layers");
    if (has_list) {
        const char *other = ms_ini_has_key(ini, GROUP, "moe_every")   ? "moe_every"
                            : ms_ini_has_key(ini, GROUP, "moe_first") ? "moe_first"
                                                                      : NULL;
        if (other) {
            ms_ini_set_error(ini, GROUP, other, error, MS_INI_ERROR_VALUE,
                             "give either moe_layers or moe_every/moe_first, not both");
            return FALSE;
        }
        if (!read_moe_list(m, ini, error)) {
            return FALSE;
        }
    } else {
        guint every = 1, first = 0;
        if (!opt_uint(ini, "moe_every", &every, error) ||
            !at_most(ini, "moe_every", every, m->spec.layers, "layers", error) ||
            !opt_uint(ini, "moe_first", &first, error) ||
            !at_most(ini, "moe_first", first, m->spec.layers - 1, "layers - 1", error)) {
            return FALSE;
        }
        for (guint l = first; l < m->spec.layers; l += every) {
            m->is_moe[l] = TRUE;
        }
    }
    m->moe_index = g_new(gint, m->spec.layers);
    m->moe_layer = g_new(guint, m->spec.layers);
    for (guint l = 0; l < m->spec.layers; l++) {
        m->moe_index[l] = m->is_moe[l] ? (gint)m->spec.n_moe : -1;
        if (m->is_moe[l]) {
            m->moe_layer[m->spec.n_moe++] = l;
        }
    }
    return TRUE;
}

static gboolean
read_dtype(MsModel *m, const MsIni *ini, GError **error)
{
    guint dtype = MS_DTYPE_BF16;
    if (!ms_ini_range_choice(ini, GROUP, F("dtype"), FALSE, &dtype, error)) {
        return FALSE;
    }
    m->spec.dtype = dtype;
    return TRUE;
}

static gboolean
read_dims(MsModel *m, const MsIni *ini, GError **error)
{
    MsModelSpec *s = &m->spec;
    guint d_model = 0, d_ffn = 0;
    if (!get_uint(ini, "d_model", &d_model, error) || !get_uint(ini, "d_ffn", &d_ffn, error)) {
        return FALSE;
    }
    guint dense = d_ffn;
    if (!opt_uint(ini, "d_ffn_dense", &dense, error)) {
        return FALSE;
    }
    s->d_model = d_model;
    s->d_ffn = d_ffn;
    s->d_ffn_dense = dense;
    if (!get_uint(ini, "experts", &s->experts, error) ||
        !get_uint(ini, "top_k", &s->top_k, error) ||
        !at_most(ini, "top_k", s->top_k, s->experts, "experts", error)) {
        return FALSE;
    }
    s->top_k_infer = s->top_k;
    if (!opt_uint(ini, "top_k_infer", &s->top_k_infer, error) ||
        !at_most(ini, "top_k_infer", s->top_k_infer, s->experts, "experts", error)) {
        return FALSE;
    }
    if (!opt_uint(ini, "shared_experts", &s->shared_experts, error) ||
        !opt_uint(ini, "max_nodes", &s->max_nodes, error)) {
        return FALSE;
    }
    if (!ms_ini_range_bool(ini, GROUP, F("gated"), FALSE, &s->gated, error) ||
        !ms_ini_range_double(ini, GROUP, F("capacity_factor"), FALSE, &s->capacity_factor, error)) {
        return FALSE;
    }
    return read_dtype(m, ini, error);
}

static gboolean
read_attention(MsModel *m, const MsIni *ini, GError **error)
{
    MsModelSpec *s = &m->spec;
    if (!get_uint(ini, "heads", &s->heads, error)) {
        return FALSE;
    }
    if (s->d_model % s->heads != 0) {
        ms_ini_set_error(ini, GROUP, "heads", error, MS_INI_ERROR_VALUE,
                         "%u heads do not divide d_model %" G_GUINT64_FORMAT, s->heads, s->d_model);
        return FALSE;
    }
    s->kv_heads = s->heads;
    if (!opt_uint(ini, "kv_heads", &s->kv_heads, error) ||
        !at_most(ini, "kv_heads", s->kv_heads, s->heads, "heads", error)) {
        return FALSE;
    }
    if (s->heads % s->kv_heads != 0) {
        ms_ini_set_error(ini, GROUP, "kv_heads", error, MS_INI_ERROR_VALUE,
                         "%u kv_heads do not divide %u heads", s->kv_heads, s->heads);
        return FALSE;
    }
    s->head_dim = (guint)(s->d_model / s->heads);
    if (!opt_uint(ini, "head_dim", &s->head_dim, error)) {
        return FALSE;
    }
    if ((guint64)s->heads * s->head_dim > 4 * (guint64)MS_MODEL_MAX_D_MODEL) {
        ms_ini_set_error(ini, GROUP, "head_dim", error, MS_INI_ERROR_VALUE,
                         "%u heads of %u make %" G_GUINT64_FORMAT " query channels (at most %u)",
                         s->heads, s->head_dim, (guint64)s->heads * s->head_dim,
                         4 * MS_MODEL_MAX_D_MODEL);
        return FALSE;
    }
    guint64 params = 0;
    if (!ms_ini_range_uint(ini, GROUP, F("attention_params"), FALSE, &params, error)) {
        return FALSE;
    }
    m->attention_params = params;
    return get_uint(ini, "seq_len", &s->seq_len, error);
}

static gboolean
read_run(MsModel *m, const MsIni *ini, GError **error)
{
    MsModelSpec *s = &m->spec;
    if (!get_uint(ini, "tokens_per_gpu", &s->tokens_per_gpu, error)) {
        return FALSE;
    }
    s->tokens_per_gpu_infer = s->tokens_per_gpu;
    if (!opt_uint(ini, "tokens_per_gpu_infer", &s->tokens_per_gpu_infer, error) ||
        !opt_uint(ini, "ep", &s->ep, error)) {
        return FALSE;
    }
    m->ep_line = ms_ini_line(ini, GROUP, "ep");
    s->grad_bucket = 25 * 1024 * 1024;
    if (!ms_ini_range_uint(ini, GROUP, F("grad_bucket"), FALSE, &s->grad_bucket, error)) {
        return FALSE;
    }
    guint vocab = 0;
    if (!opt_uint(ini, "vocab", &vocab, error)) {
        return FALSE;
    }
    s->vocab = vocab;
    s->tied = TRUE;
    if (!ms_ini_range_bool(ini, GROUP, F("tie_embeddings"), FALSE, &s->tied, error)) {
        return FALSE;
    }
    s->backward_factor = 2.0;
    return ms_ini_range_double(ini, GROUP, F("backward_factor"), FALSE, &s->backward_factor, error);
}

/* Forward flops per token; docs/models.md. */
void
model_derive_flops(MsModel *m)
{
    const MsModelSpec *s = &m->spec;
    /* Scores and values: 2 x seq_len x (heads x head_dim) flops each. */
    m->attention_flops = 2.0 * (double)ms_model_attention_params(m) +
                         4.0 * (double)s->seq_len * (double)s->heads * (double)s->head_dim;
    m->dense_flops = 2.0 * (double)ms_model_dense_ffn_params(m);
}

/* One host time: a time with a unit, in the table's range. */
static gboolean
read_host_time(const MsIni *ini, const char *key, double *out, GError **error)
{
    MsTime t = ms_time_from_s(*out);
    if (!ms_ini_range_time(ini, GROUP, F(key), FALSE, &t, error)) {
        return FALSE;
    }
    *out = ms_time_to_s(t);
    return TRUE;
}

/* framework = NAME sets the defaults (framework.h); host_* keys set or override its figures. */
static gboolean
read_framework(MsModel *m, const MsIni *ini, GError **error)
{
    MsModelSpec *s = &m->spec;
    guint kind = MS_FRAMEWORK_CUSTOM;
    if (!ms_ini_range_choice(ini, GROUP, F("framework"), FALSE, &kind, error)) {
        return FALSE;
    }
    ms_framework_defaults(kind, s->capacity_factor <= 0, &s->framework);
    MsFramework *f = &s->framework;
    guint syncs = f->syncs;
    return read_host_time(ini, "host_op", &f->op_s, error) &&
           read_host_time(ini, "host_moe_layer", &f->layer_s, error) &&
           read_host_time(ini, "host_expert", &f->expert_s, error) &&
           read_host_time(ini, "host_sync", &f->sync_s, error) &&
           read_host_time(ini, "host_token", &f->token_s, error) &&
           opt_uint(ini, "host_syncs", &syncs, error) && (f->syncs = syncs, TRUE);
}

static gboolean
read_overrides(MsModel *m, const MsIni *ini, GError **error)
{
    return ms_ini_range_double(ini, GROUP, F("attention_flops"), FALSE, &m->attention_flops,
                               error) &&
           ms_ini_range_double(ini, GROUP, F("dense_flops"), FALSE, &m->dense_flops, error);
}

static MsModel *
parse(const MsIni *ini, GError **error)
{
    g_autoptr(MsModel) m = g_new0(MsModel, 1);
    m->source = g_strdup(ms_ini_source(ini));
    if (!read_header(m, ini, error) || !read_layers(m, ini, error) || !read_dims(m, ini, error) ||
        !read_attention(m, ini, error) || !read_run(m, ini, error) ||
        !read_framework(m, ini, error)) {
        return NULL;
    }
    model_derive_flops(m);
    if (!read_overrides(m, ini, error)) {
        return NULL;
    }
    m->spec.name = m->name;
    m->spec.description = m->description;
    if (!model_read_groups(m, ini, error)) {
        return NULL;
    }
    return g_steal_pointer(&m);
}

MsModel *
ms_model_load_data(const char *data, gsize len, const char *source, GError **error)
{
    g_autoptr(MsIni) ini = ms_ini_load_data(data, len, source, error);
    return ini ? parse(ini, error) : NULL;
}

char **
ms_model_list_shipped(void)
{
    return ms_resource_list(ms_models_get_resource(), RESOURCE_DIR, ".ini");
}

GBytes *
ms_model_shipped_data(const char *name)
{
    return ms_resource_data(ms_models_get_resource(), RESOURCE_DIR, name, ".ini");
}

MsModel *
ms_model_load(const char *name_or_path, GError **error)
{
    g_return_val_if_fail(name_or_path != NULL, NULL);
    if (g_file_test(name_or_path, G_FILE_TEST_EXISTS)) {
        g_autoptr(MsIni) ini = ms_ini_load_file(name_or_path, MS_INPUT_MODEL, error);
        return ini ? parse(ini, error) : NULL;
    }
    if (strchr(name_or_path, '/') || g_str_has_suffix(name_or_path, ".ini")) {
        g_set_error(error, MS_MODEL_ERROR, MS_MODEL_ERROR_UNKNOWN, "%s: no such model file",
                    name_or_path);
        return NULL;
    }
    g_autoptr(GBytes) data = ms_model_shipped_data(name_or_path);
    if (data == NULL) {
        g_auto(GStrv) names = ms_model_list_shipped();
        g_autofree char *list = g_strjoinv(", ", names);
        g_set_error(error, MS_MODEL_ERROR, MS_MODEL_ERROR_UNKNOWN,
                    "unknown model '%s': no such file, and no shipped model has that name "
                    "(shipped: %s)",
                    name_or_path, list);
        return NULL;
    }
    g_autofree char *source = g_strdup_printf("model %s", name_or_path);
    gsize len = 0;
    const char *text = g_bytes_get_data(data, &len);
    return ms_model_load_data(text, len, source, error);
}

const MsModelSpec *
ms_model_spec(const MsModel *model)
{
    return &model->spec;
}

void
ms_model_set_framework(MsModel *model, const MsFramework *framework)
{
    model->spec.framework = *framework;
    for (guint g = 0; g < model->n_groups; g++) {
        model->groups[g].spec.framework = *framework;
    }
}

guint
ms_model_n_groups(const MsModel *model)
{
    return model->n_groups;
}

const MsModelGroup *
ms_model_group(const MsModel *model, guint group)
{
    g_return_val_if_fail(group < model->n_groups, NULL);
    return &model->groups[group].group;
}

gint
ms_model_layer_group(const MsModel *model, guint layer)
{
    g_return_val_if_fail(layer < model->spec.layers, -1);
    return model->n_groups ? (gint)model->layer_group[layer] : -1;
}

const MsModel *
ms_model_layer(const MsModel *model, guint layer)
{
    g_return_val_if_fail(layer < model->spec.layers, model);
    return model->n_groups ? &model->groups[model->layer_group[layer]] : model;
}

const MsModel *
ms_model_moe(const MsModel *model, guint moe_index)
{
    return ms_model_layer(model, ms_model_moe_layer(model, moe_index));
}

const char *
ms_model_source(const MsModel *model)
{
    return model->source;
}

gboolean
ms_model_is_moe(const MsModel *model, guint layer)
{
    g_return_val_if_fail(layer < model->spec.layers, FALSE);
    return model->is_moe[layer];
}

gint
ms_model_moe_index(const MsModel *model, guint layer)
{
    g_return_val_if_fail(layer < model->spec.layers, -1);
    return model->moe_index[layer];
}

guint
ms_model_moe_layer(const MsModel *model, guint moe_index)
{
    g_return_val_if_fail(moe_index < model->spec.n_moe, 0);
    return model->moe_layer[moe_index];
}

gboolean
ms_model_resolve_ep(const MsModel *model, guint n_gpus, guint *ep, GError **error)
{
    const MsModelSpec *s = &model->spec;
    g_return_val_if_fail(n_gpus > 0, FALSE);
    guint e = s->ep;
    if (e == 0) {
        guint a = n_gpus, b = s->experts;
        while (b) {
            guint t = a % b;
            a = b;
            b = t;
        }
        e = s->experts % n_gpus == 0 ? n_gpus : a;
    }
    if (n_gpus % e != 0 || s->experts % e != 0) {
        g_set_error(error, MS_MODEL_ERROR, MS_MODEL_ERROR_INVALID,
                    "%s:%u: [model] ep: expert-parallel degree %u must divide both the %u GPUs "
                    "and the %u experts",
                    model->source, model->ep_line, e, n_gpus, s->experts);
        return FALSE;
    }
    *ep = e;
    return TRUE;
}

guint64
ms_model_capacity(const MsModel *model, guint64 tokens, guint top_k)
{
    const MsModelSpec *s = &model->spec;
    if (s->capacity_factor <= 0) {
        return 0;
    }
    guint64 per_expert = (tokens + s->experts - 1) / s->experts;
    guint64 c = top_k * (guint64)floor(s->capacity_factor * (double)per_expert);
    return MAX(c, 1);
}
