/* model_costs: a model's parameter counts, forward flops per token and bytes per op, the
 * formulas of docs/models.md, from the spec model.c read (and its layer groups' views). */
#include "model_private.h"

#include "sim/base/dtype.h"

static guint64
ffn_matrices(const MsModel *model)
{
    return model->spec.gated ? 3 : 2;
}

guint64
ms_model_attention_params(const MsModel *model)
{
    const MsModelSpec *s = &model->spec;
    if (model->attention_params > 0) {
        return model->attention_params;
    }
    guint64 q_dim = (guint64)s->heads * s->head_dim, kv_dim = (guint64)s->kv_heads * s->head_dim;
    /* Q and O are d_model x q_dim; K and V d_model x kv_dim each (grouped-query attention). */
    return s->d_model * (2 * q_dim + 2 * kv_dim);
}

guint64
ms_model_dense_ffn_params(const MsModel *model)
{
    return ffn_matrices(model) * model->spec.d_model * model->spec.d_ffn_dense;
}

guint64
ms_model_expert_params(const MsModel *model)
{
    return ffn_matrices(model) * model->spec.d_model * model->spec.d_ffn;
}

guint64
ms_model_shared_params(const MsModel *model)
{
    return model->spec.shared_experts * ms_model_expert_params(model);
}

guint64
ms_model_embedding_params(const MsModel *model)
{
    return model->spec.tied ? 0 : ms_model_head_params(model);
}

/* One MoE layer's FFN part with `experts` of its routed experts. */
static guint64
moe_ffn_params(const MsModel *model, guint experts)
{
    return experts * ms_model_expert_params(model) + ms_model_shared_params(model) +
           ms_model_gate_params(model);
}

/* Layer l's parameters in its group's dimensions, with `experts` of an MoE layer's experts. */
static guint64
layer_params(const MsModel *model, guint l, guint experts)
{
    const MsModel *v = ms_model_layer(model, l);
    return ms_model_attention_params(v) +
           (model->is_moe[l] ? moe_ffn_params(v, experts) : ms_model_dense_ffn_params(v));
}

guint64
ms_model_total_params(const MsModel *model)
{
    const MsModelSpec *s = &model->spec;
    guint64 sum = ms_model_head_params(ms_model_layer(model, s->layers - 1)) +
                  ms_model_embedding_params(ms_model_layer(model, 0));
    for (guint l = 0; l < s->layers; l++) {
        sum += layer_params(model, l, s->experts);
    }
    return sum;
}

guint64
ms_model_active_params(const MsModel *model)
{
    const MsModelSpec *s = &model->spec;
    guint64 sum = ms_model_head_params(ms_model_layer(model, s->layers - 1));
    for (guint l = 0; l < s->layers; l++) {
        sum += layer_params(model, l, s->top_k);
    }
    return sum;
}

guint64
ms_model_gate_params(const MsModel *model)
{
    return model->spec.d_model * model->spec.experts;
}

guint64
ms_model_head_params(const MsModel *model)
{
    return model->spec.vocab * model->spec.d_model;
}

double
ms_model_attention_flops(const MsModel *model)
{
    return model->attention_flops;
}

double
ms_model_dense_ffn_flops(const MsModel *model)
{
    return model->dense_flops;
}

double
ms_model_expert_flops(const MsModel *model)
{
    return 2.0 * (double)ms_model_expert_params(model);
}

double
ms_model_gate_flops(const MsModel *model)
{
    return 2.0 * (double)ms_model_gate_params(model);
}

double
ms_model_head_flops(const MsModel *model)
{
    return 2.0 * (double)ms_model_head_params(model);
}

double
ms_model_shared_flops(const MsModel *model)
{
    return 2.0 * (double)ms_model_shared_params(model);
}

double
ms_model_token_flops(const MsModel *model)
{
    const MsModelSpec *s = &model->spec;
    double sum = s->vocab > 0 ? ms_model_head_flops(ms_model_layer(model, s->layers - 1)) : 0;
    for (guint l = 0; l < s->layers; l++) {
        const MsModel *v = ms_model_layer(model, l);
        sum += ms_model_attention_flops(v) +
               (model->is_moe[l] ? s->top_k * ms_model_expert_flops(v) + ms_model_shared_flops(v) +
                                       ms_model_gate_flops(v)
                                 : ms_model_dense_ffn_flops(v));
    }
    return sum;
}

double
ms_model_attention_bytes(const MsModel *model, guint64 tokens)
{
    const MsModelSpec *s = &model->spec;
    double q_dim = (double)s->heads * s->head_dim, kv_dim = (double)s->kv_heads * s->head_dim;
    /* Weights read once; input, Q, K, V, context and output each written once and read once. */
    double act = 2.0 * (double)tokens * (2.0 * (double)s->d_model + 2.0 * q_dim + 2.0 * kv_dim);
    return (double)ms_dtype_bytes(s->dtype) * ((double)ms_model_attention_params(model) + act);
}

double
ms_model_gate_bytes(const MsModel *model, guint64 tokens, guint top_k)
{
    const MsModelSpec *s = &model->spec;
    double t = (double)tokens, d = (double)s->d_model;
    /* Gate weights, its input and its logits; then the permutation that copies every token to
     * its top_k expert buffers (read once per choice, written once per choice). */
    double elems =
        (double)ms_model_gate_params(model) + t * d + t * s->experts + 2.0 * t * top_k * d;
    return (double)ms_dtype_bytes(s->dtype) * elems;
}

double
ms_model_head_bytes(const MsModel *model, guint64 tokens)
{
    const MsModelSpec *s = &model->spec;
    double elems = (double)ms_model_head_params(model) +
                   (double)tokens * ((double)s->d_model + 2.0 * (double)s->vocab);
    return (double)ms_dtype_bytes(s->dtype) * elems;
}

guint64
ms_model_token_bytes(const MsModel *model)
{
    return model->spec.d_model * ms_dtype_bytes(model->spec.dtype);
}
