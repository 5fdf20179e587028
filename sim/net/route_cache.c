/* route_cache: linear probing over a power-of-two table kept at most half full, slots holding
 * the key and the route inline; Fibonacci hashing spreads the (src << 32 | dst) keys, whose low
 * bits alone would cluster. Links live in blocks of BLOCK guint32 (a longer route gets a block
 * of its own), so growing the table moves slots, never routes. */
#include "route_cache.h"

#include <string.h>

#define BLOCK 65536u
#define FIRST_BITS 10u

typedef struct {
    guint64 key;
    const guint32 *links;
    guint32 n;
    guint32 used;
} Slot;

struct _MsRouteCache {
    Slot *slots;
    guint bits; /* the table has 1 << bits slots */
    guint count;
    GPtrArray *blocks; /* guint32 arrays, freed with the cache */
    guint32 *block;    /* the one being filled */
    guint block_left;
};

static gsize
home(guint64 key, guint bits)
{
    return (gsize)((key * G_GUINT64_CONSTANT(0x9E3779B97F4A7C15)) >> (64 - bits));
}

MsRouteCache *
ms_route_cache_new(void)
{
    MsRouteCache *c = g_new0(MsRouteCache, 1);
    c->bits = FIRST_BITS;
    c->slots = g_new0(Slot, (gsize)1 << c->bits);
    c->blocks = g_ptr_array_new_with_free_func(g_free);
    return c;
}

void
ms_route_cache_free(MsRouteCache *cache)
{
    if (cache == NULL) {
        return;
    }
    g_free(cache->slots);
    g_ptr_array_unref(cache->blocks);
    g_free(cache);
}

static const Slot *
find(const MsRouteCache *c, guint64 key)
{
    gsize mask = ((gsize)1 << c->bits) - 1;
    for (gsize i = home(key, c->bits);; i = (i + 1) & mask) {
        const Slot *s = &c->slots[i];
        if (!s->used || s->key == key) {
            return s;
        }
    }
}

gboolean
ms_route_cache_lookup(const MsRouteCache *cache, guint64 key, const guint32 **links, guint *n)
{
    const Slot *s = find(cache, key);
    if (!s->used) {
        return FALSE;
    }
    *links = s->links;
    *n = s->n;
    return TRUE;
}

static void
grow(MsRouteCache *c)
{
    Slot *old = c->slots;
    gsize n_old = (gsize)1 << c->bits;
    c->bits++;
    c->slots = g_new0(Slot, (gsize)1 << c->bits);
    for (gsize i = 0; i < n_old; i++) {
        if (old[i].used) {
            *(Slot *)find(c, old[i].key) = old[i];
        }
    }
    g_free(old);
}

static guint32 *
take(MsRouteCache *c, guint n)
{
    if (n > c->block_left) {
        guint size = MAX(n, BLOCK);
        guint32 *b = g_new(guint32, size);
        g_ptr_array_add(c->blocks, b);
        if (n >= BLOCK) {
            return b; /* a block of its own; the current one keeps filling */
        }
        c->block = b;
        c->block_left = size;
    }
    guint32 *p = c->block;
    c->block += n;
    c->block_left -= n;
    return p;
}

const guint32 *
ms_route_cache_insert(MsRouteCache *cache, guint64 key, const guint32 *links, guint n)
{
    g_return_val_if_fail(!find(cache, key)->used, NULL);
    if ((gsize)(cache->count + 1) * 2 > ((gsize)1 << cache->bits)) {
        grow(cache);
    }
    guint32 *copy = n ? take(cache, n) : NULL;
    if (n) {
        memcpy(copy, links, n * sizeof *copy);
    }
    Slot *s = (Slot *)find(cache, key);
    *s = (Slot){.key = key, .links = copy, .n = n, .used = 1};
    cache->count++;
    return copy;
}

guint
ms_route_cache_size(const MsRouteCache *cache)
{
    return cache->count;
}
