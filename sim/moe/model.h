/* model: an MoE transformer as the planner sees it: how many layers and which are MoE, the
 * dimensions that set compute and traffic (d_model, d_ffn, experts, top_k, heads, dtype), the
 * tokens a GPU processes per step, the parallel layout (expert-parallel degree) and the gradient
 * bucket size. Read from GKeyFile INI files (shipped by name, or a file; docs/models.md). Costs
 * are per token in floating-point operations and per op in bytes; time is not its business.
 * Ignores embeddings' lookup cost, norms, biases, dropout and the activation's own flops. */
#pragma once

#include <glib.h>

#include "sim/base/ranges.h"
#include "sim/base/dtype.h"
#include "sim/base/units.h"
#include "sim/moe/framework.h"

G_BEGIN_DECLS

#define MS_MODEL_ERROR (ms_model_error_quark())
GQuark ms_model_error_quark(void);
typedef enum {
    MS_MODEL_ERROR_UNKNOWN, /* no shipped model of that name and no such file */
    MS_MODEL_ERROR_INVALID, /* values that do not make a model, or do not fit the cluster */
} MsModelError;

#define MS_MODEL_FORMAT 1
/* Limits (docs/models.md): beyond them a file is refused before anything is allocated. */
#define MS_MODEL_MAX_LAYERS 4096u
#define MS_MODEL_MAX_DIM (1u << 20)     /* d_ffn, d_ffn_dense */
#define MS_MODEL_MAX_D_MODEL (1u << 16) /* d_model, heads */
#define MS_MODEL_MAX_EXPERTS 65536u
#define MS_MODEL_MAX_TOP_K 64u
#define MS_MODEL_MAX_SEQ_LEN (1u << 24)
#define MS_MODEL_MAX_TOKENS (1u << 26) /* per GPU and step, as the trace's per-rank limit */
#define MS_MODEL_MAX_VOCAB (1u << 24)
#define MS_MODEL_MAX_HEAD_DIM 4096u
#define MS_MODEL_MAX_ATTENTION_PARAMS (G_GUINT64_CONSTANT(1) << 38)
#define MS_MODEL_MAX_GROUPS 64u /* layer groups, as a trace's */

/* The file's values (a plain value record; strings owned by the model). */
typedef struct {
    const char *name;
    const char *description;
    guint layers;
    guint n_moe;            /* MoE layers */
    guint64 d_model, d_ffn; /* d_ffn: of one expert */
    guint64 d_ffn_dense;    /* FFN width of the non-MoE layers */
    guint experts;          /* per MoE layer */
    guint top_k;            /* experts per token in training */
    guint top_k_infer;      /* experts per token in inference */
    gboolean gated;         /* SwiGLU-style FFN: three matrices instead of two */
    double capacity_factor; /* 0 = dropless */
    MsDtype dtype;
    guint heads, kv_heads;
    guint head_dim;       /* per attention head; d_model / heads unless the file says */
    guint shared_experts; /* experts of d_ffn every token of an MoE layer runs (DeepSeekMoE) */
    gboolean tied;        /* embedding and output head share one vocab x d_model matrix */
    guint max_nodes;      /* node-limited routing: nodes a token's experts span; 0: no limit */
    guint seq_len;
    guint tokens_per_gpu;       /* per training step */
    guint tokens_per_gpu_infer; /* per inference batch */
    guint ep;                   /* expert-parallel degree; 0 = the default for the cluster */
    guint64 grad_bucket;        /* bytes */
    guint64 vocab;              /* 0 = embedding and output head left out */
    double backward_factor;     /* backward cost over forward cost */
    MsFramework framework;      /* host-side overheads (framework.h) */
} MsModelSpec;

typedef struct _MsModel MsModel;

/* A layer group ([group NAME]: an encoder, a decoder): layers first..last, with their own
 * tokens and dimensions (docs/models.md, "Layer groups"). A plain value record; name owned by
 * the model. */
typedef struct {
    const char *name;
    guint first, last; /* transformer layers, inclusive */
    guint first_moe;   /* MoE index of its first MoE layer */
    guint n_moe;       /* its MoE layers (0: a dense group) */
} MsModelGroup;

/* Loads a shipped model by name (e.g. "mixtral-8x7b") or, when name_or_path names an existing
 * file or contains '/' or ends in ".ini", that file. Every problem is reported as
 * FILE:LINE: [model] key: what is wrong (MS_INI_ERROR for syntax, missing keys, bad numbers and
 * unknown keys; MS_MODEL_ERROR_INVALID for values that do not make a model together);
 * MS_MODEL_ERROR_UNKNOWN lists the shipped names. */
MsModel *ms_model_load(const char *name_or_path, GError **error);
/* Same from memory; source names the input in messages. */
MsModel *ms_model_load_data(const char *data, gsize len, const char *source, GError **error);
void ms_model_free(MsModel *model);
/* Every number a model file carries, with its range (sim/base/ranges.h). */
const MsRangeTable *ms_model_ranges(void);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsModel, ms_model_free)

/* Names of the shipped models, sorted; free with g_strfreev. */
char **ms_model_list_shipped(void);
/* Text of a shipped model file, NULL when unknown. */
GBytes *ms_model_shipped_data(const char *name);

const MsModelSpec *ms_model_spec(const MsModel *model);
/* Replaces the framework figures (a calibration fitted from a profile overrides the file's). */
void ms_model_set_framework(MsModel *model, const MsFramework *framework);
const char *ms_model_source(const MsModel *model);

/* Whether transformer layer `layer` is an MoE layer; the MoE index of a layer (-1 for a dense
 * layer) and the layer of an MoE index. */
gboolean ms_model_is_moe(const MsModel *model, guint layer);
gint ms_model_moe_index(const MsModel *model, guint layer);
guint ms_model_moe_layer(const MsModel *model, guint moe_index);

/* Layer groups: 0 when the file has none (every layer is the [model] group's). */
guint ms_model_n_groups(const MsModel *model);
const MsModelGroup *ms_model_group(const MsModel *model, guint group);
/* The group of a layer, or -1 without groups. */
gint ms_model_layer_group(const MsModel *model, guint layer);
/* The model as transformer layer `layer` sees it: its group's tokens and dimensions in the spec
 * and the costs below (a view owned by model), or model itself without groups. */
const MsModel *ms_model_layer(const MsModel *model, guint layer);
/* The same for MoE layer moe_index. */
const MsModel *ms_model_moe(const MsModel *model, guint moe_index);

/* Parameter counts (elements) of one layer's parts. */
guint64 ms_model_attention_params(const MsModel *model);
guint64 ms_model_dense_ffn_params(const MsModel *model);
guint64 ms_model_expert_params(const MsModel *model); /* one expert */
guint64 ms_model_gate_params(const MsModel *model);
guint64 ms_model_head_params(const MsModel *model); /* vocab x d_model (the output head) */
/* The shared experts of one MoE layer together (0 without any). */
guint64 ms_model_shared_params(const MsModel *model);
/* The untied input embedding (vocab x d_model), 0 when tied or without vocab. */
guint64 ms_model_embedding_params(const MsModel *model);
/* Every parameter of the model, and those one token runs through (top_k routed experts, the
 * shared ones, the output head; the embedding lookup is not a product): the figures model cards
 * publish as total and active. */
guint64 ms_model_total_params(const MsModel *model);
guint64 ms_model_active_params(const MsModel *model);

/* Sums over the layers, each in its layer group's dimensions (model_groups.c): every parameter
 * but the routed experts' (attention, dense FFNs, gates, shared experts, head and embedding), one
 * routed expert of every MoE layer, and the largest routed expert of any layer. */
double ms_model_dense_params(const MsModel *model);
double ms_model_layer_expert_params(const MsModel *model);
guint64 ms_model_largest_expert_params(const MsModel *model);

/* Forward flops per token (docs/models.md gives the formulas; attention and dense FFN may be
 * overridden in the file). Expert flops are per routed token-expert assignment. */
double ms_model_attention_flops(const MsModel *model);
double ms_model_dense_ffn_flops(const MsModel *model);
double ms_model_expert_flops(const MsModel *model);
double ms_model_gate_flops(const MsModel *model);
double ms_model_head_flops(const MsModel *model);
double ms_model_shared_flops(const MsModel *model); /* all shared experts of a layer */
/* Forward flops of one token through the whole model (training's top_k). */
double ms_model_token_flops(const MsModel *model);

/* Forward memory traffic (bytes) of an op over `tokens` tokens. */
double ms_model_attention_bytes(const MsModel *model, guint64 tokens);
double ms_model_gate_bytes(const MsModel *model, guint64 tokens, guint top_k);
double ms_model_head_bytes(const MsModel *model, guint64 tokens);

/* Bytes of one token's hidden state (d_model x dtype): the unit of all-to-all traffic. */
guint64 ms_model_token_bytes(const MsModel *model);

/* The expert-parallel degree on n_gpus GPUs: the file's ep, else n_gpus when the experts divide
 * evenly over them, else gcd(n_gpus, experts). FALSE with MS_MODEL_ERROR_INVALID (naming the
 * file's ep line when it came from there) when ep does not divide both the GPUs and the experts. */
gboolean ms_model_resolve_ep(const MsModel *model, guint n_gpus, guint *ep, GError **error);

/* Per-(rank, expert) capacity of a padded layer for a rank routing `tokens` tokens with top_k
 * choices each: top_k x floor(capacity_factor x ceil(tokens / experts)), at least 1 (Tutel's
 * rule, which ScheMoE inherits). 0 when the model is dropless. */
guint64 ms_model_capacity(const MsModel *model, guint64 tokens, guint top_k);

G_END_DECLS
