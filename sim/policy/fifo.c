/* fifo: the plan builder's defaults are exactly this policy (one communication stream, nothing
 * partitioned, program order); the dispatcher launches by readiness. */
#include "fifo.h"

static gboolean
configure(const MsPolicy *policy, const MsPolicyInput *in, MsPlanConfig *cfg, GError **error)
{
    return TRUE;
}

const MsPolicyClass ms_fifo_policy = {
    .name = "fifo",
    .summary = "one communication stream per GPU; whole ops in readiness order",
    .params = NULL,
    .rules = {MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE},
    .configure = configure,
};
