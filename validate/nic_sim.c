/* nic_sim: chains of collective calls on one simulation, a chain per stream. Each rank launches
 * call k + 1 of a chain from the completion of its own call k (a stream runs its kernels in order
 * and NCCL's calls need no barrier between them); a call's collective is created when its first
 * rank reaches it and freed when its last rank is done with it. */
#include "nic_sim.h"

#include <math.h>

#include "sim/net/collective.h"

typedef struct Chain Chain;

typedef struct {
    Chain *chain;
    guint k;
    MsColl *coll;
    guint left; /* ranks still in the call */
} Call;

struct Chain {
    MsSim *sim;
    MsCollSpec spec;
    guint n;
    GPtrArray *calls;             /* Call, by index */
    guint limit;                  /* calls to run; G_MAXUINT while the chain loops */
    guint complete;               /* calls every rank is done with */
    MsTime *first_end, *last_end; /* per rank: end of call 0, of call limit - 1 */
    Chain *follower;              /* its rank r starts when this chain's call 0 ends on r */
    Chain *stops;                 /* stopped when this chain's last call ends on every rank */
    GError *error;
};

static void launch(Chain *ch, guint k, guint rank);

static void
call_free(gpointer p)
{
    Call *c = p;
    if (c->coll) {
        ms_coll_free(c->coll);
    }
    g_free(c);
}

static void
chain_init(Chain *ch, MsSim *sim, const MsNicCase *c, MsCollOp op, guint limit)
{
    *ch = (Chain){.sim = sim, .n = c->n_ranks, .limit = limit};
    ch->spec = (MsCollSpec){
        .op = op,
        .n_ranks = c->n_ranks,
        .ranks = c->ranks,
        .bytes = op == MS_COLL_ALLTOALL ? c->a2a_bytes : c->ar_bytes,
        .net = c->net,
    };
    ch->calls = g_ptr_array_new_with_free_func(call_free);
    ch->first_end = g_new0(MsTime, c->n_ranks);
    ch->last_end = g_new0(MsTime, c->n_ranks);
}

static void
chain_clear(Chain *ch)
{
    g_ptr_array_unref(ch->calls);
    g_free(ch->first_end);
    g_free(ch->last_end);
    g_clear_error(&ch->error);
}

static void
rank_done(MsColl *coll, guint rank, gpointer ctx)
{
    Call *c = ctx;
    Chain *ch = c->chain;
    MsTime now = ms_sim_now(ch->sim);
    if (c->k == 0) {
        ch->first_end[rank] = now;
        if (ch->follower) {
            launch(ch->follower, 0, rank);
        }
    }
    if (c->k + 1 == ch->limit) {
        ch->last_end[rank] = now;
    }
    if (c->k + 1 < ch->limit) {
        launch(ch, c->k + 1, rank);
    }
    if (--c->left == 0) {
        /* The last participant's callback may free its collective (collective.h). */
        ms_coll_free(coll);
        c->coll = NULL;
        ch->complete++;
        if (ch->complete == ch->limit && ch->stops) {
            /* The looping chain runs to the end of the calls some rank has started: every rank
             * must make the same calls. */
            ch->stops->limit = ch->stops->calls->len;
        }
    }
}

static void
launch(Chain *ch, guint k, guint rank)
{
    if (ch->error) {
        return;
    }
    if (k == ch->calls->len) {
        Call *c = g_new0(Call, 1);
        c->chain = ch;
        c->k = k;
        c->left = ch->n;
        c->coll = ms_coll_new(ch->sim, &ch->spec, rank_done, c, &ch->error);
        g_ptr_array_add(ch->calls, c);
        if (c->coll == NULL) {
            /* Nothing follows: the looping chain must not wait for this one forever. */
            if (ch->stops) {
                ch->stops->limit = ch->stops->calls->len;
            }
            return;
        }
    }
    ms_coll_launch(((Call *)ch->calls->pdata[k])->coll, rank);
}

/* The slowest rank's time per call from the end of call 0 to the end of its last. */
static double
per_call(const Chain *ch)
{
    MsTime most = 0;
    for (guint r = 0; r < ch->n; r++) {
        most = MAX(most, ch->last_end[r] - ch->first_end[r]);
    }
    return ms_time_to_s(most) / (ch->limit - 1);
}

static gboolean
finish(MsSim *sim, Chain *a, Chain *b, GError **error)
{
    if (!ms_sim_run(sim, error)) {
        return FALSE;
    }
    Chain *chains[] = {a, b};
    for (guint i = 0; i < G_N_ELEMENTS(chains); i++) {
        if (chains[i] && chains[i]->error) {
            g_propagate_error(error, g_steal_pointer(&chains[i]->error));
            return FALSE;
        }
    }
    return TRUE;
}

/* One chain of calls + 1 calls of op alone. */
static gboolean
alone(const MsTopology *topo, const MsNicCase *c, MsCollOp op, guint calls, double *seconds,
      GError **error)
{
    g_return_val_if_fail(calls >= 1, FALSE);
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    if (c->net) {
        ms_net_model_apply(c->net, sim);
    }
    Chain ch;
    chain_init(&ch, sim, c, op, calls + 1);
    for (guint r = 0; r < c->n_ranks; r++) {
        launch(&ch, 0, r);
    }
    gboolean ok = finish(sim, &ch, NULL, error);
    if (ok) {
        *seconds = per_call(&ch);
    }
    chain_clear(&ch);
    return ok;
}

gboolean
ms_nic_sim_alone(const MsTopology *topo, const MsNicCase *c, guint calls, double *seconds,
                 GError **error)
{
    return alone(topo, c, MS_COLL_ALLTOALL, calls, seconds, error);
}

gboolean
ms_nic_sim_background(const MsTopology *topo, const MsNicCase *c, guint calls, double *seconds,
                      GError **error)
{
    return alone(topo, c, MS_COLL_ALLREDUCE, calls, seconds, error);
}

gboolean
ms_nic_sim_together(const MsTopology *topo, const MsNicCase *c, guint calls, double *seconds,
                    GError **error)
{
    g_return_val_if_fail(calls >= 1, FALSE);
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    if (c->net) {
        ms_net_model_apply(c->net, sim);
    }
    Chain bg, fg;
    chain_init(&bg, sim, c, MS_COLL_ALLREDUCE, G_MAXUINT);
    chain_init(&fg, sim, c, MS_COLL_ALLTOALL, calls + 1);
    bg.follower = &fg;
    fg.stops = &bg;
    for (guint r = 0; r < c->n_ranks; r++) {
        launch(&bg, 0, r);
    }
    gboolean ok = finish(sim, &bg, &fg, error);
    if (ok) {
        *seconds = per_call(&fg);
    }
    chain_clear(&bg);
    chain_clear(&fg);
    return ok;
}

guint
ms_nic_sim_calls(double a2a_s, double ar_s)
{
    if (!(a2a_s > 0) || !isfinite(ar_s)) {
        return MS_NIC_SIM_MIN_CALLS;
    }
    double want = ceil(2 * ar_s / a2a_s);
    return (guint)CLAMP(want, MS_NIC_SIM_MIN_CALLS, MS_NIC_SIM_MAX_CALLS);
}
