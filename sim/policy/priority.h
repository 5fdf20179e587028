/* priority: tensor partitioning with a priority queue, as ByteScheduler and Lina (USENIX ATC'23,
 * section 4) describe it: all-to-alls and allreduce buckets are cut into equal chunks of a
 * given size, and one communication stream launches the ready chunk of highest priority:
 * all-to-alls before allreduces, and among allreduce chunks earlier layers first (the next
 * forward needs them first). docs/policies.md. The class, ms_priority_policy, is registered in
 * policy.c; this header shares its priority order with lina. */
#pragma once

#include "policy.h"

G_BEGIN_DECLS

/* The priority order shared with lina: all-to-alls (and weight movements) in program order
 * first, then allreduces by layer, then by program order. Smaller launches first. */
gint64 ms_priority_comm(MsRole role, gint layer, guint64 seq);

G_END_DECLS
