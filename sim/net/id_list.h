/* id_list: a growable list of guint32 ids for the solver's and the network's scratch lists,
 * which are filled and emptied at every event. An append is a compare and a store (GArray's is
 * a library call and a copy); the storage grows geometrically and is kept when the list is
 * emptied, so a list reused across solves stops allocating once it has reached its peak. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
    guint32 *v;
    guint len, cap;
} MsIdList;

/* Makes room for at least need ids (keeps the contents); aborts as g_malloc does when memory
 * runs out. */
void ms_id_list_reserve(MsIdList *l, guint need);
/* Frees the storage and leaves an empty list. */
void ms_id_list_clear(MsIdList *l);

static inline void
ms_id_list_push(MsIdList *l, guint32 id)
{
    if (G_UNLIKELY(l->len == l->cap)) {
        ms_id_list_reserve(l, l->len + 1);
    }
    l->v[l->len++] = id;
}

/* Removes and returns the last id; the list must not be empty. */
static inline guint32
ms_id_list_pop(MsIdList *l)
{
    return l->v[--l->len];
}

/* Bytes held, for memory figures. */
static inline gsize
ms_id_list_memory(const MsIdList *l)
{
    return l->cap * sizeof(guint32);
}

G_END_DECLS
