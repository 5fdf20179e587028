/* fifo: the baseline with one communication queue per GPU. All-to-alls, allreduce buckets and
 * everything else share one stream and launch whole, in the order they became ready
 * (docs/policies.md). No parameters of its own: the plan builder's defaults are exactly this
 * policy (one communication stream, nothing partitioned, program order). */
#include "policy.h"

const MsPolicyClass ms_fifo_policy = {
    .name = "fifo",
    .summary = "one communication stream per GPU; whole ops in readiness order",
    .modes = MS_POLICY_ALL_MODES,
    .rules = {MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE},
};
