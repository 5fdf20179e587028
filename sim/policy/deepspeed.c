/* deepspeed: DeepSpeed-MoE, the baseline of the Lina paper (Li et al., USENIX ATC'23, sections 2
 * and 6), as its public code runs an MoE layer (deepspeed/moe/layer.py, sharded_moe.py,
 * utils/groups.py, runtime/engine.py):
 * - gating (TopKGate): every (rank, expert) buffer has C = ceil(T / E x k x capacity_factor)
 *   slots, at least min_capacity (_capacity; top-2 gating passes capacity_factor x 2), padded
 *   and sent whole; tokens beyond C are dropped (drop_tokens=True); with drop_tokens=False, C is
 *   the largest expert count all-reduced (max) over the world, nothing dropped; inference uses
 *   eval_capacity_factor. Defaults of deepspeed.moe.layer.MoE: 1.0, 1.0, 4, True.
 * - all-to-all (_AllToAll): all_to_all_single without split sizes, equal splits of the padded
 *   [E, C, M] buffer; hierarchical (intra-node, then inter-node among equal local ranks) when
 *   enabled, as Lina's setup does for DeepSpeed (a2a=2dh).
 * - gradients: dense parameters allreduced over the data-parallel group, expert parameters over
 *   their expert-data-parallel group (the ranks holding the same experts), in buckets as backward
 *   produces them, on a stream beside the all-to-alls (the plan builder's dense and expert
 *   buckets, split_allreduce), launched when ready. docs/policies.md. */
#include "policy.h"

#include <string.h>

#include "sim/net/collective.h"

static const MsParamSpec params[] = {
    {"capacity_factor", MS_PARAM_DOUBLE, "1", 0.01, 64, NULL,
     "training capacity factor (deepspeed.moe.layer.MoE's default 1.0)"},
    {"eval_capacity_factor", MS_PARAM_DOUBLE, "1", 0.01, 64, NULL,
     "inference capacity factor (default 1.0)"},
    {"min_capacity", MS_PARAM_UINT, "4", 0, 1u << 26, NULL,
     "smallest capacity per (rank, expert) buffer (default 4)"},
    {"drop_tokens", MS_PARAM_BOOL, "true", 0, 0, NULL,
     "drop tokens beyond capacity; false: capacity is the largest expert count over all ranks"},
    {"hierarchical", MS_PARAM_BOOL, "true", 0, 0, NULL,
     "hierarchical all-to-all (a2a=2dh) unless a2a is given"},
    {NULL},
};

static gboolean
configure(const MsPolicy *policy, const MsPolicyInput *in, MsPlanConfig *cfg, GError **error)
{
    gboolean hier = ms_policy_get_bool(policy, "hierarchical");
    if (ms_policy_given(policy, "a2a") && ms_policy_given(policy, "hierarchical")) {
        g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE,
                    "policy deepspeed: give either a2a or hierarchical, not both");
        return FALSE;
    }
    if (hier && !ms_policy_given(policy, "a2a")) {
        cfg->a2a_algo = MS_COLL_ALGO_2DH;
    }
    cfg->split_allreduce = TRUE;
    gboolean infer = in->mode == MS_PLAN_INFER;
    if (ms_policy_get_bool(policy, "drop_tokens")) {
        cfg->capacity = MS_CAPACITY_DEEPSPEED;
        cfg->capacity_factor =
            ms_policy_get_double(policy, infer ? "eval_capacity_factor" : "capacity_factor");
        cfg->capacity_min = (guint)ms_policy_get_uint(policy, "min_capacity");
    } else {
        cfg->capacity = MS_CAPACITY_MAX;
    }
    ms_plan_config_add_meta(cfg, "deepspeed.a2a",
                            cfg->a2a_algo == MS_COLL_ALGO_2DH ? "2dh" : "flat");
    return TRUE;
}

const MsPolicyClass ms_deepspeed_policy = {
    .name = "deepspeed",
    .summary = "DeepSpeed-MoE: capacity padding and dropping, equal-split hierarchical all-to-all, "
               "dense and expert gradients on their own stream",
    .params = params,
    .modes = MS_POLICY_ALL_MODES,
    .rules = {MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE},
    .configure = configure,
};
