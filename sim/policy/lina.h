/* lina: Lina's schedulers (Li et al., "Accelerating Distributed MoE Training and Inference with
 * Lina", USENIX ATC'23). Training (section 4): priority with tensor partitioning (30 MB micro-ops
 * by default), an allreduce chunk launches only while no all-to-all waits, runs or is imminent on
 * its GPUs (the dispatcher's gate, armed by MS_OP_FLAG_A2A_IMMINENT on the compute op before each
 * backward all-to-all), expert compute pipelined per all-to-all chunk, and expert packing: experts
 * per GPU doubled until one chunk's expert compute outlasts its all-to-all. Inference (section
 * 5) is lina_infer.h. docs/policies.md. Times are seconds (estimates for decisions only). */
#pragma once

#include "policy.h"
#include "sim/moe/placement.h"

G_BEGIN_DECLS

/* Bytes of optimizer state per parameter assumed by the packing memory check: fp16 weight and
 * gradient (4) plus fp32 master weight and Adam's two moments (12), as in ZeRO (SC'20). */
#define MS_LINA_BYTES_PER_PARAM 16

/* The packing decision: the expert-parallel degree chosen, the factor by which it multiplied
 * the experts per GPU, and the figures of the last layout considered. */
typedef struct {
    guint ep;
    guint factor;
    double compute_s; /* per-chunk expert compute of the busiest GPU, summed over MoE layers */
    double a2a_s;     /* per-chunk all-to-all estimate, summed likewise */
    const char *why;  /* why doubling stopped */
} MsLinaPack;

/* First-order all-to-all time of chunk 0 of k (seconds): for every sender, its off-node bytes
 * over its fair share of the node's NICs (ms_topology_injection_bandwidth) and its on-node bytes
 * over each route's narrowest link, whichever is longer, plus the longest route latency; the
 * slowest sender decides. */
double ms_lina_a2a_estimate(const MsTopology *topo, const MsTraffic *t, guint64 token_bytes,
                            guint k);

/* Expert compute of chunk 0 of k (the largest) on the busiest GPU (seconds), at the model's
 * datatype's peak as the engine prices it; the all-to-all estimate's counterpart. */
double ms_lina_compute_estimate(const MsModel *model, const MsTopology *topo, const MsTraffic *t,
                                guint k);

/* Expert packing. factor 0 decides (start from the model's ep and halve it, doubling experts per
 * GPU, while the per-chunk all-to-all estimate exceeds the per-chunk expert compute, ep stays
 * even and the expert states fit the GPU's memory); factor 1 keeps the model's layout; other
 * factors are forced and must divide the model's ep (MS_POLICY_ERROR_VALUE otherwise). */
gboolean ms_lina_pack(const MsModel *model, const MsRouting *routing, const MsTopology *topo,
                      guint64 a2a_chunk, guint factor, MsLinaPack *out, GError **error);

G_END_DECLS
