/* coll_harness: the collective tests' shared topologies and runner (coll_harness.h). */
#include "coll_harness.h"

MsTopology *one_node;
MsTopology *two_node;

int
coll_suite_init(void)
{
    one_node = ms_topology_load("dgx-a100", NULL);
    two_node = ms_topology_load("dgx-a100-2node", NULL);
    return one_node && two_node ? 0 : 1;
}

int
coll_suite_clean(void)
{
    g_clear_pointer(&one_node, ms_topology_free);
    g_clear_pointer(&two_node, ms_topology_free);
    return 0;
}

double
coll_lat(const MsTopology *topo, guint a, guint b)
{
    guint n = 0;
    const guint32 *route = ms_topology_gpu_route(topo, a, b, &n, NULL);
    g_assert(route != NULL);
    return ms_time_to_s(ms_topology_route_latency(topo, route, n));
}

void
coll_on_done(MsColl *coll, guint part, gpointer ctx)
{
    Done *d = ctx;
    d->calls[part]++;
    d->at[part] = ms_coll_rank_end(coll, part);
    d->total++;
}

void
coll_run(const MsTopology *topo, const MsCollSpec *spec, Outcome *o)
{
    memset(o, 0, sizeof *o);
    g_autoptr(GError) error = NULL;
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    ms_sim_set_check_invariants(sim, TRUE);
    g_autoptr(MsColl) coll = ms_coll_new(sim, spec, coll_on_done, &o->done, &error);
    if (error) {
        fprintf(stderr, "\n  %s\n", error->message);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(coll);
    ms_coll_launch_all(coll);
    CU_ASSERT_TRUE(ms_sim_run(sim, &error));
    CU_ASSERT_PTR_NULL(error);
    o->finished = ms_coll_finished(coll);
    for (guint i = 0; i < spec->n_ranks; i++) {
        o->end[i] = ms_coll_rank_end(coll, i);
        o->sent[i] = ms_coll_bytes_sent(coll, i);
        o->last = MAX(o->last, o->end[i]);
        CU_ASSERT_EQUAL(o->done.calls[i], 1);
        CU_ASSERT_EQUAL(o->done.at[i], o->end[i]);
    }
    o->flows = ms_coll_n_flows(coll);
    ms_sim_stats(sim, &o->stats);
    CU_ASSERT_TRUE(o->finished);
}

double
coll_run_s(const MsTopology *topo, const MsCollSpec *spec)
{
    Outcome o;
    coll_run(topo, spec, &o);
    return ms_time_to_s(o.last);
}

void
coll_skewed(guint64 *m, guint n)
{
    for (guint s = 0; s < n; s++) {
        for (guint d = 0; d < n; d++) {
            m[s * n + d] = 1000000 * (1 + (s * 7 + d * 3) % 5);
        }
    }
}
