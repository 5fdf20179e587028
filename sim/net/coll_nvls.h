/* coll_nvls: NCCL's NVLS allreduce, reducescatter and allgather on one node as flows on the real
 * links. Private to sim/net (collective.c builds and times it through these). */
#pragma once

#include "coll_private.h"

/* Bytes each GPU's link to the NVSwitch carries in its busier direction for an NVLS op of
 * `bytes` over n GPUs: bytes + bytes / n for allreduce, bytes for reducescatter (up) and
 * allgather (down) (see coll_nvls.c). The exchange's flows carry it in both directions. */
guint64 ms_coll_nvls_link_bytes(MsCollOp op, guint64 bytes, guint n);

/* The NVLS collective of spec (validated, all participants on one node) as one phase. */
void ms_coll_nvls_build(PhasePlan *plan, const MsCollSpec *spec);

/* The wire factor that makes the phase, alone on the links, take t_s seconds (NCCL's predicted
 * time less its latency): t_s over the busiest link's bytes over its bandwidth. 1 when the
 * links give no finite time. */
double ms_coll_nvls_wire(const MsColl *coll, MsNetModel *net, double t_s);
