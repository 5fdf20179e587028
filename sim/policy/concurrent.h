/* concurrent: the framework default Lina measures against (DeepSpeed-MoE with PyTorch DDP):
 * all-to-alls and allreduce buckets on two separate streams, each launched as soon as it is
 * ready, so they share the network fairly when they overlap (docs/policies.md). */
#pragma once

#include "policy.h"

G_BEGIN_DECLS

extern const MsPolicyClass ms_concurrent_policy;

G_END_DECLS
