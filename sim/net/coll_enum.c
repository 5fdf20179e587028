/* coll_enum: a collective's flows listed in an order where every flow comes after the flows it
 * waits for (for the flow-file export and the peers that replay it), by device and payload. */
#include "coll_private.h"

#include <string.h>

/* A2A in index order (a window predecessor has a smaller index). A flow of zero bytes is not
 * listed: what waits for it waits for its predecessor instead. */
static void
enumerate_a2a(const MsColl *coll, const Phase *ph, MsCollFlowFn fn, gpointer ctx)
{
    gsize total = (gsize)ph->n_groups * ph->m * (ph->m - 1);
    g_autofree gint64 *pred_of = g_new(gint64, total);
    for (gsize i = 0; i < total; i++) {
        pred_of[i] = -1;
    }
    gint64 next = 0;
    for (gsize idx = 0; idx < total; idx++) {
        FlowInfo f = flow_info(ph, idx);
        gint64 pred = pred_of[idx], self = pred;
        if (f.bytes) {
            fn(ctx, coll->device[f.src], coll->device[f.dst], f.bytes, &pred, pred >= 0 ? 1 : 0);
            self = next++;
        }
        guint64 succ = a2a_successor(ph, idx);
        if (succ != G_MAXUINT64) {
            pred_of[succ] = self;
        }
    }
}

/* RING step by step, so that both predecessors of a flow come before it. A step of zero bytes is
 * listed as a flow of zero bytes from the sender to itself, which ends as soon as it may start,
 * as the collective's empty steps do. */
static void
enumerate_ring(const MsColl *coll, const Phase *ph, MsCollFlowFn fn, gpointer ctx)
{
    guint m = ph->m;
    gsize chains = (gsize)ph->n_groups * ph->channels;
    g_autofree gint64 *prev = g_new(gint64, chains * m);
    g_autofree gint64 *cur = g_new(gint64, chains * m);
    gint64 next = 0;
    for (guint s = 0; s < ph->steps; s++) {
        for (gsize gc = 0; gc < chains; gc++) {
            for (guint i = 0; i < m; i++) {
                FlowInfo f = flow_info(ph, ring_index(ph, gc, s, i));
                gint64 preds[2] = {prev[gc * m + (i + m - 1) % m], prev[gc * m + i]};
                guint dst = f.bytes ? coll->device[f.dst] : coll->device[f.src];
                fn(ctx, coll->device[f.src], dst, f.bytes, preds, s ? 2 : 0);
                cur[gc * m + i] = next++;
            }
        }
        memcpy(prev, cur, chains * m * sizeof(gint64));
    }
}

gboolean
ms_coll_enumerate(const MsColl *coll, MsCollFlowFn fn, gpointer ctx)
{
    if (coll->plan.n_phases != 1 || coll->plan.phases[0].kind == PHASE_COPY) {
        return FALSE;
    }
    const Phase *ph = &coll->plan.phases[0];
    if (ph->m < 2) {
        return TRUE;
    }
    if (ph->kind == PHASE_TREE) {
        /* The tree's connections all start at once. */
        for (guint k = 0; k < ph->n_flows; k++) {
            if (ph->pair_bytes[k]) {
                fn(ctx, coll->device[ph->flow_src[k]], coll->device[ph->flow_dst[k]],
                   ph->pair_bytes[k], NULL, 0);
            }
        }
    } else if (ph->kind == PHASE_A2A) {
        enumerate_a2a(coll, ph, fn, ctx);
    } else {
        enumerate_ring(coll, ph, fn, ctx);
    }
    return TRUE;
}
