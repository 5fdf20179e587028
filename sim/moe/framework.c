/* framework: names, defaults and the host time of an MoE layer. */
#include "framework.h"

#include <math.h>
#include <string.h>

const char *const ms_framework_names[MS_FRAMEWORK_N + 1] = {
    [MS_FRAMEWORK_CUSTOM] = "custom",     [MS_FRAMEWORK_DEEPSPEED] = "deepspeed",
    [MS_FRAMEWORK_MEGATRON] = "megatron", [MS_FRAMEWORK_TUTEL] = "tutel",
    [MS_FRAMEWORK_VLLM] = "vllm",         [MS_FRAMEWORK_N] = NULL,
};

const char *
ms_framework_name(MsFrameworkKind kind)
{
    return (guint)kind < MS_FRAMEWORK_N ? ms_framework_names[kind] : "?";
}

gboolean
ms_framework_from_name(const char *name, MsFrameworkKind *out)
{
    for (guint i = 0; name && i < MS_FRAMEWORK_N; i++) {
        if (strcmp(name, ms_framework_names[i]) == 0) {
            *out = (MsFrameworkKind)i;
            return TRUE;
        }
    }
    return FALSE;
}

const char *
ms_framework_names_text(void)
{
    return "custom, deepspeed, megatron, tutel or vllm";
}

/* Host synchronisations of a forward MoE layer, read from each framework's code:
 * - DeepSpeed (deepspeed/moe/sharded_moe.py, top1gating/top2gating/topkgating): the capacity is
 *   a device tensor that _capacity() compares with min_capacity in Python, and without dropping
 *   the capacity is torch.max(exp_counts), all-reduced and used as a buffer size: one
 *   device-to-host read per layer either way.
 * - Megatron-LM (megatron/core/transformer/moe/token_dispatcher.py, MoEAlltoAllTokenDispatcher):
 *   dropless dispatch copies the all-to-all-v splits to the host and synchronises at its
 *   cuda_sync_point ("before_ep_alltoall"); with a capacity (drop and pad) the splits are fixed
 *   and it does not.
 * - Tutel (tutel/impls/fast_dispatch.py, extract_critical): a positive capacity factor gives the
 *   capacity from tensor sizes in Python; dropless (factor <= 0) all-reduces the largest location
 *   and reads it with int(): one synchronisation.
 * - vLLM (fused_moe): routing, alignment and the grouped GEMM stay on the device, which CUDA
 *   graph capture requires: none.
 * The time of a synchronisation, and every other figure, has no public measurement: 0. */
void
ms_framework_defaults(MsFrameworkKind kind, gboolean dropless, MsFramework *out)
{
    memset(out, 0, sizeof *out);
    out->kind = (guint)kind < MS_FRAMEWORK_N ? kind : MS_FRAMEWORK_CUSTOM;
    switch (out->kind) {
    case MS_FRAMEWORK_DEEPSPEED:
        out->syncs = 1;
        break;
    case MS_FRAMEWORK_MEGATRON:
    case MS_FRAMEWORK_TUTEL:
        out->syncs = dropless ? 1 : 0;
        break;
    default:
        break;
    }
}

double
ms_framework_layer_s(const MsFramework *f, guint local_experts, guint64 tokens)
{
    return f->layer_s + (double)local_experts * f->expert_s + (double)f->syncs * f->sync_s +
           (double)tokens * f->token_s;
}

gboolean
ms_framework_has_time(const MsFramework *f)
{
    return f->op_s > 0 || f->layer_s > 0 || f->expert_s > 0 || (f->syncs && f->sync_s > 0) ||
           f->token_s > 0;
}

gboolean
ms_framework_check(const MsFramework *f, char **problem)
{
    const struct {
        const char *what;
        double v;
    } times[] = {{"op", f->op_s},
                 {"moe_layer", f->layer_s},
                 {"expert", f->expert_s},
                 {"sync", f->sync_s},
                 {"token", f->token_s}};
    for (guint i = 0; i < G_N_ELEMENTS(times); i++) {
        if (!isfinite(times[i].v) || times[i].v < 0 || times[i].v > MS_FRAMEWORK_MAX_S) {
            *problem = g_strdup_printf("%s time %g s is outside [0, %g] s", times[i].what,
                                       times[i].v, MS_FRAMEWORK_MAX_S);
            return FALSE;
        }
    }
    if (f->syncs > MS_FRAMEWORK_MAX_SYNCS) {
        *problem = g_strdup_printf("%u synchronisations per layer is more than %u", f->syncs,
                                   MS_FRAMEWORK_MAX_SYNCS);
        return FALSE;
    }
    return TRUE;
}
