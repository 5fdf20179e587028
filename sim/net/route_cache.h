/* route_cache: the routes a network model computed for device pairs, looked up by a 64-bit key
 * (the model's: source and destination, and which kind of route). An all-to-all asks for a route
 * per pair and per call, so the lookup is on the path of every all-to-all flow: one open-addressing
 * table of inline slots (one cache line touched per lookup, no key or value behind a pointer), and
 * the links copied into a few large blocks that never move, so a route stays valid while the
 * cache lives. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _MsRouteCache MsRouteCache;

MsRouteCache *ms_route_cache_new(void);
void ms_route_cache_free(MsRouteCache *cache);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsRouteCache, ms_route_cache_free)

/* TRUE when key was stored: *links and *n are what was stored (NULL and 0 for an empty route). */
gboolean ms_route_cache_lookup(const MsRouteCache *cache, guint64 key, const guint32 **links,
                               guint *n);
/* Stores a copy of n links under key (not yet stored; n may be 0) and returns the copy (NULL for
 * n = 0), valid until the cache is freed. */
const guint32 *ms_route_cache_insert(MsRouteCache *cache, guint64 key, const guint32 *links,
                                     guint n);

/* Routes stored (for tests). */
guint ms_route_cache_size(const MsRouteCache *cache);

G_END_DECLS
