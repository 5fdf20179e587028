/* fifo: the baseline with one communication queue per GPU. All-to-alls, allreduce buckets and
 * everything else share one stream and launch whole, in the order they became ready
 * (docs/policies.md). No parameters of its own. */
#pragma once

#include "policy.h"

G_BEGIN_DECLS

extern const MsPolicyClass ms_fifo_policy;

G_END_DECLS
