/* concurrent: the framework default Lina measures against (DeepSpeed-MoE with PyTorch DDP):
 * all-to-alls on one stream, allreduce buckets on a second, both launched as soon as they are
 * ready, so that they share the network fairly when they overlap (docs/policies.md). No
 * parameters of its own. */
#include "policy.h"

static gboolean
configure(const MsPolicy *policy, const MsPolicyInput *in, MsPlanConfig *cfg, GError **error)
{
    cfg->split_allreduce = TRUE;
    return TRUE;
}

const MsPolicyClass ms_concurrent_policy = {
    .name = "concurrent",
    .summary = "all-to-all and allreduce on separate streams, launched when ready (fair sharing)",
    .modes = MS_POLICY_ALL_MODES,
    .rules = {MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE},
    .configure = configure,
};
