/* id_list: the out-of-line part of the id lists (growth, release); appends are inline in the
 * header. */
#include "id_list.h"

void
ms_id_list_reserve(MsIdList *l, guint need)
{
    if (need <= l->cap) {
        return;
    }
    /* Doubling keeps the cost of n appends O(n); 16 ids is the smallest block worth a malloc. */
    guint cap = MAX(16, l->cap);
    while (cap < need) {
        g_return_if_fail(cap <= G_MAXUINT / 2);
        cap *= 2;
    }
    l->v = g_renew(guint32, l->v, cap);
    l->cap = cap;
}

void
ms_id_list_clear(MsIdList *l)
{
    g_clear_pointer(&l->v, g_free);
    l->len = l->cap = 0;
}
