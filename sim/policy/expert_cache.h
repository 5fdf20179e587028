/* expert_cache: the expert weights each GPU keeps in its memory when the experts live in host
 * memory (Lina's weights=host): per GPU a least-recently-used cache of whole experts, keyed by
 * (MoE layer, expert), of a fixed number of entries. An expert a GPU computes and does not hold
 * is loaded from host memory and evicts the least recently used entry once the cache is full.
 * LRU is the policy of the expert-offloading systems that keep a GPU cache (Eliseev and Mazur,
 * "Fast Inference of Mixture-of-Experts Language Models with Offloading", arXiv 2312.17238: an
 * LRU cache of experts per layer); here one cache spans every layer. Knows nothing of bytes or
 * time: the policy turns misses into loads. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _MsExpertCache MsExpertCache;

/* Caches of `capacity` entries (0: nothing is ever held) on n_ranks GPUs for `layers` MoE layers
 * of `experts` experts each. */
MsExpertCache *ms_expert_cache_new(guint n_ranks, guint layers, guint experts, guint capacity);
MsExpertCache *ms_expert_cache_copy(const MsExpertCache *cache);
void ms_expert_cache_free(MsExpertCache *cache);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsExpertCache, ms_expert_cache_free)

guint ms_expert_cache_capacity(const MsExpertCache *cache);
guint ms_expert_cache_n_ranks(const MsExpertCache *cache);
/* Whether rank holds expert of layer now. */
gboolean ms_expert_cache_holds(const MsExpertCache *cache, guint rank, guint layer, guint expert);
/* Entries rank holds. */
guint ms_expert_cache_size(const MsExpertCache *cache, guint rank);
/* rank uses expert of layer: it becomes the most recently used, inserted when absent (evicting
 * the least recently used beyond capacity). Returns TRUE when it was held (a hit). */
gboolean ms_expert_cache_use(MsExpertCache *cache, guint rank, guint layer, guint expert);

G_END_DECLS
