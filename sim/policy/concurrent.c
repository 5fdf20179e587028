/* concurrent: a second communication stream for allreduce; both launch by readiness. */
#include "concurrent.h"

static gboolean
configure(const MsPolicy *policy, const MsPolicyInput *in, MsPlanConfig *cfg, GError **error)
{
    cfg->split_allreduce = TRUE;
    return TRUE;
}

const MsPolicyClass ms_concurrent_policy = {
    .name = "concurrent",
    .summary = "all-to-all and allreduce on separate streams, launched when ready (fair sharing)",
    .params = NULL,
    .rules = {MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE},
    .configure = configure,
};
