/* overlap: each all-to-all's span in the run from its participants' records, whether an
 * allreduce op on one of its ranks intersected that span, and its time alone from a fresh
 * simulation of the same collective. */
#include "overlap.h"

#include <string.h>

#include "sim/net/collective.h"

/* Time from the last participant's start to the last participant's end. */
static void
span(const MsRecords *r, const MsCollInfo *c, MsTime *from, MsTime *to)
{
    *from = 0;
    *to = 0;
    for (guint i = 0; i < c->n_ranks; i++) {
        *from = MAX(*from, ms_records_start(r, c->ops[i]));
        *to = MAX(*to, ms_records_end(r, c->ops[i]));
    }
}

/* Whether an allreduce op of one of the collective's ranks ran during [from, to). */
static gboolean
overlapped(const MsSchedule *s, const MsRecords *r, MsTime from, MsTime to, const guint8 *on_rank)
{
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        MsOpInfo i;
        ms_schedule_op(s, op, &i);
        if (i.kind != MS_OP_COMM || !on_rank[i.rank]) {
            continue;
        }
        MsCollInfo other;
        ms_schedule_coll(s, i.coll, &other);
        if (other.kind == MS_COLL_KIND_ALLREDUCE && ms_records_start(r, op) < to &&
            ms_records_end(r, op) > from) {
            return TRUE;
        }
    }
    return FALSE;
}

static gboolean
alone(const MsTopology *topo, MsNetModel *net, const MsCollInfo *c, double *us, GError **error)
{
    MsCollSpec spec = {
        .op = MS_COLL_ALLTOALL,
        .algo = c->algo,
        .n_ranks = c->n_ranks,
        .ranks = c->ranks,
        .matrix = c->matrix,
        .window = c->window,
        .net = net,
    };
    MsTime end;
    if (!ms_coll_run_alone(topo, &spec, &end, error)) {
        return FALSE;
    }
    *us = ms_time_to_us(end);
    return TRUE;
}

gboolean
ms_overlap_a2a(const MsSchedule *s, const MsRecords *r, const MsTopology *topo,
               const MsNetSpec *net, MsPhase phase, GArray *out, GError **error)
{
    g_autoptr(MsNetModel) model = net ? ms_net_model_new(net, topo, error) : NULL;
    if (net && model == NULL) {
        return FALSE;
    }
    g_autofree guint8 *on_rank = g_new0(guint8, MAX(ms_schedule_n_ranks(s), 1));
    for (guint32 id = 0; id < ms_schedule_n_colls(s); id++) {
        MsCollInfo c;
        ms_schedule_coll(s, id, &c);
        if (c.kind != MS_COLL_KIND_ALLTOALL || c.n_ranks < 2) {
            continue;
        }
        MsOpInfo first;
        ms_schedule_op(s, c.ops[0], &first);
        if (phase != MS_PHASE_OTHER && first.phase != phase) {
            continue;
        }
        MsTime from, to;
        span(r, &c, &from, &to);
        memset(on_rank, 0, ms_schedule_n_ranks(s));
        for (guint i = 0; i < c.n_ranks; i++) {
            on_rank[c.ranks[i]] = 1;
        }
        MsOverlapA2a a = {
            .coll = id,
            .run_us = ms_time_to_us(to - from),
            .overlapped = overlapped(s, r, from, to, on_rank),
        };
        if (!alone(topo, model, &c, &a.alone_us, error)) {
            return FALSE;
        }
        g_array_append_val(out, a);
    }
    return TRUE;
}
