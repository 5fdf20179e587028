/* expert_cache: per rank a hash table from key to a node of a queue ordered from the most to the
 * least recently used, so that a use and an eviction cost O(1). */
#include "expert_cache.h"

struct _MsExpertCache {
    guint n_ranks, layers, experts, capacity;
    GQueue *order;     /* [rank]: keys (GUINT_TO_POINTER(key + 1)), most recent first */
    GHashTable **node; /* [rank]: key + 1 -> its GList link in order */
};

MsExpertCache *
ms_expert_cache_new(guint n_ranks, guint layers, guint experts, guint capacity)
{
    g_return_val_if_fail(n_ranks > 0 && layers > 0 && experts > 0, NULL);
    g_return_val_if_fail((guint64)layers * experts < G_MAXUINT, NULL);
    MsExpertCache *c = g_new0(MsExpertCache, 1);
    c->n_ranks = n_ranks;
    c->layers = layers;
    c->experts = experts;
    c->capacity = capacity;
    c->order = g_new0(GQueue, n_ranks);
    c->node = g_new(GHashTable *, n_ranks);
    for (guint r = 0; r < n_ranks; r++) {
        g_queue_init(&c->order[r]);
        c->node[r] = g_hash_table_new(g_direct_hash, g_direct_equal);
    }
    return c;
}

MsExpertCache *
ms_expert_cache_copy(const MsExpertCache *src)
{
    MsExpertCache *c = ms_expert_cache_new(src->n_ranks, src->layers, src->experts, src->capacity);
    for (guint r = 0; r < src->n_ranks; r++) {
        /* From the least recently used to the most: each push_head keeps the order. */
        for (GList *l = src->order[r].tail; l; l = l->prev) {
            g_queue_push_head(&c->order[r], l->data);
            g_hash_table_insert(c->node[r], l->data, c->order[r].head);
        }
    }
    return c;
}

void
ms_expert_cache_free(MsExpertCache *c)
{
    if (c == NULL) {
        return;
    }
    for (guint r = 0; r < c->n_ranks; r++) {
        g_queue_clear(&c->order[r]);
        g_hash_table_unref(c->node[r]);
    }
    g_free(c->order);
    g_free(c->node);
    g_free(c);
}

guint
ms_expert_cache_capacity(const MsExpertCache *c)
{
    return c->capacity;
}

guint
ms_expert_cache_n_ranks(const MsExpertCache *c)
{
    return c->n_ranks;
}

static gpointer
key_of(const MsExpertCache *c, guint layer, guint expert)
{
    return GUINT_TO_POINTER(layer * c->experts + expert + 1);
}

gboolean
ms_expert_cache_holds(const MsExpertCache *c, guint rank, guint layer, guint expert)
{
    g_return_val_if_fail(rank < c->n_ranks && layer < c->layers && expert < c->experts, FALSE);
    return g_hash_table_contains(c->node[rank], key_of(c, layer, expert));
}

guint
ms_expert_cache_size(const MsExpertCache *c, guint rank)
{
    g_return_val_if_fail(rank < c->n_ranks, 0);
    return g_queue_get_length(&c->order[rank]);
}

gboolean
ms_expert_cache_use(MsExpertCache *c, guint rank, guint layer, guint expert)
{
    g_return_val_if_fail(rank < c->n_ranks && layer < c->layers && expert < c->experts, FALSE);
    gpointer key = key_of(c, layer, expert);
    GQueue *q = &c->order[rank];
    GList *link = g_hash_table_lookup(c->node[rank], key);
    if (link) {
        g_queue_unlink(q, link);
        g_queue_push_head_link(q, link);
        return TRUE;
    }
    if (c->capacity == 0) {
        return FALSE;
    }
    g_queue_push_head(q, key);
    g_hash_table_insert(c->node[rank], key, q->head);
    while (g_queue_get_length(q) > c->capacity) {
        g_hash_table_remove(c->node[rank], g_queue_pop_tail(q));
    }
    return FALSE;
}
