/* Fuzz target: model files (ms_model_load_data). A model that loads must give finite,
 * non-negative costs and sizes in every layer's group, groups that cover every layer once, a
 * capacity rule that holds, and an expert-parallel degree (or a clear refusal) for any cluster
 * size. */
#include <math.h>
#include <stdlib.h>

#include "fuzz.h"
#include "sim/moe/model.h"

static void
check_finite(double v)
{
    if (!isfinite(v) || v < 0) {
        abort();
    }
}

/* A layer's costs, in its group's dimensions. */
static void
check_costs(const MsModel *model)
{
    const MsModelSpec *spec = ms_model_spec(model);
    check_finite(ms_model_attention_flops(model));
    check_finite(ms_model_dense_ffn_flops(model));
    check_finite(ms_model_expert_flops(model));
    check_finite(ms_model_gate_flops(model));
    check_finite(ms_model_head_flops(model));
    check_finite(ms_model_attention_bytes(model, spec->tokens_per_gpu));
    check_finite(ms_model_gate_bytes(model, spec->tokens_per_gpu, spec->top_k));
    check_finite(ms_model_head_bytes(model, spec->tokens_per_gpu));
    ms_model_attention_params(model);
    ms_model_expert_params(model);
    if (ms_model_token_bytes(model) == 0) {
        abort();
    }
}

int
LLVMFuzzerTestOneInput(const guint8 *data, size_t size)
{
    GError *error = NULL;
    g_autoptr(MsModel) model = ms_model_load_data((const char *)data, size, "fuzz.ini", &error);
    if (model == NULL) {
        fuzz_refused(&error);
        return 0;
    }
    const MsModelSpec *spec = ms_model_spec(model);
    guint n_moe = 0;
    for (guint l = 0; l < spec->layers; l++) {
        gint k = ms_model_moe_index(model, l);
        if (ms_model_is_moe(model, l) != (k >= 0) ||
            (k >= 0 && ms_model_moe_layer(model, (guint)k) != l)) {
            abort();
        }
        n_moe += k >= 0;
    }
    if (n_moe != spec->n_moe) {
        abort();
    }
    for (guint l = 0; l < spec->layers; l++) {
        check_costs(ms_model_layer(model, l));
        gint g = ms_model_layer_group(model, l);
        if (ms_model_n_groups(model) ? (g < 0 || ms_model_group(model, (guint)g)->first > l ||
                                        ms_model_group(model, (guint)g)->last < l)
                                     : g != -1) {
            abort();
        }
    }
    check_finite(ms_model_dense_params(model));
    check_finite(ms_model_layer_expert_params(model));
    guint64 cap = ms_model_capacity(model, spec->tokens_per_gpu, spec->top_k);
    if ((spec->capacity_factor > 0) != (cap > 0)) {
        abort();
    }
    static const guint gpus[] = {1, 8, 12, 16, 1024, 65536};
    for (guint i = 0; i < G_N_ELEMENTS(gpus); i++) {
        guint ep = 0;
        if (ms_model_resolve_ep(model, gpus[i], &ep, &error)) {
            if (ep == 0 || gpus[i] % ep != 0 || spec->experts % ep != 0) {
                abort();
            }
        } else if (error == NULL) {
            abort();
        }
        g_clear_error(&error);
    }
    return 0;
}
