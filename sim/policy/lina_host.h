/* lina_host: Lina's inference with the experts in host memory (lina:weights=host), how
 * memory-bound deployments run: every expert's weights live in host memory, each GPU keeps the
 * ones it computed last in a cache of a given size (expert_cache.h: LRU), and an expert a GPU
 * computes without holding it is loaded over the GPU's link to host memory. Phase 1's placement
 * is known before the layer runs, so its experts are loaded ahead (prefetched, overlapping the
 * layers before); experts that only the gate's real choices need (a re-plan, or an expert the
 * estimate gave no tokens) load after the gate, before dispatch. Bytes and bytes per second. */
#pragma once

#include <glib.h>

#include "expert_cache.h"
#include "sim/moe/model.h"
#include "sim/moe/placement.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

/* The link experts load over, and where its figure comes from. */
typedef struct {
    double bandwidth; /* bytes/s, host to GPU */
    char source[128]; /* "cpu0->gpu0 route", "link n0.nic0->gpu0", "PCIe 4.0 x16 (A100)" */
} MsHostLink;

/* GPU rank's link to host memory: given when > 0; else the narrowest link of the shortest route
 * from a cpu device of the GPU's node to the GPU; else the GPU's own PCIe link (a finite pcie
 * link into it); else the host link of the GPU's model (PCIe 3.0 x16 for V100: 15.75 GB/s, 4.0
 * for A100: 31.5 GB/s, 5.0 for H100 and H200: 63 GB/s, the PCI-SIG rates; NVLink-C2C for GH200
 * and GB200: 450 GB/s a direction, NVIDIA's). MS_POLICY_ERROR_INPUT when none applies. */
gboolean ms_lina_host_link(const MsTopology *topo, guint rank, double given, MsHostLink *out,
                           GError **error);

/* Weight bytes of the parts every GPU holds whatever the placement: attention, dense FFNs, gates
 * and the head (in the model's datatype). */
double ms_lina_dense_bytes(const MsModel *model);

/* The experts a GPU's cache holds: cache_bytes / expert bytes, where cache_bytes 0 is half the
 * GPU's memory less the dense weights (weights=auto's rule: the other half for activations and
 * the KV cache). *bytes gets the cache size. MS_POLICY_ERROR_INPUT when the dense weights leave
 * no room for one expert; MS_POLICY_ERROR_VALUE for a cache that does not fit the GPU beside
 * them. */
gboolean ms_lina_host_capacity(const MsModel *model, const MsTopology *topo, guint64 cache_bytes,
                               guint *experts, guint64 *bytes, GError **error);

/* One MoE layer on every GPU of the cache: the experts p1 puts on a GPU and est gives tokens are
 * loaded ahead when not held (p1_bytes, per rank); then the experts the final placement puts on
 * it and real gives tokens, when neither held nor loaded ahead (p2_bytes). Both go through the
 * cache in that order (uses: LRU). p1 may be NULL (nothing known ahead: static placement). */
void ms_lina_host_layer(MsExpertCache *cache, guint moe, const MsPlacement *p1, const double *est,
                        const MsPlacement *final, const double *real, guint64 expert_bytes,
                        guint64 *p1_bytes, guint64 *p2_bytes);

G_END_DECLS
