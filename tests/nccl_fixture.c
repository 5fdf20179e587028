/* nccl_fixture: the helpers the nccl model's tests share (nccl_fixture.h). */
#include "nccl_fixture.h"

#include "sim/sim.h"

MsTopology *
nccl_fx_load(const char *name)
{
    g_autoptr(GError) err = NULL;
    MsTopology *t = ms_topology_load(name, &err);
    if (t == NULL) {
        fprintf(stderr, "%s\n", err->message);
    }
    return t;
}

MsTopology *
nccl_fx_load_src(const char *relative)
{
    g_autofree char *path = g_build_filename(ms_test_srcdir(), relative, NULL);
    return nccl_fx_load(path);
}

MsNcclComm
nccl_fx_comm(const MsTopology *t, guint version, guint n)
{
    MsNcclConfig cfg = {.version = version};
    MsNcclComm c;
    g_autoptr(GError) err = NULL;
    gboolean ok = ms_nccl_comm_init(&c, t, NULL, n ? n : ms_topology_n_gpus(t), &cfg, &err);
    if (!ok) {
        fprintf(stderr, "%s\n", err->message);
    }
    CU_ASSERT_TRUE_FATAL(ok);
    return c;
}

MsNcclCost
nccl_fx_cost(const MsNcclComm *c, MsCollOp op, MsNcclAlgo a, MsNcclProto p, guint64 bytes)
{
    MsNcclCost k;
    ms_nccl_cost(c, op, a, p, bytes, &k);
    return k;
}

MsNetModel *
nccl_fx_model(const char *spec, const MsTopology *topo)
{
    MsNetSpec s;
    g_autoptr(GError) err = NULL;
    CU_ASSERT_TRUE_FATAL(ms_net_spec_parse(spec, &s, &err));
    MsNetModel *m = ms_net_model_new(&s, topo, &err);
    if (m == NULL) {
        fprintf(stderr, "%s\n", err->message);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    return m;
}

void
nccl_fx_clear(MsTopology **const *all, guint n)
{
    for (guint i = 0; i < n; i++) {
        g_clear_pointer(all[i], ms_topology_free);
    }
}

NcclFxRun
nccl_fx_run(const MsTopology *topo, MsNetModel *net, MsCollOp op, guint n, guint64 bytes,
            gboolean symmetric)
{
    NcclFxRun r = {0};
    g_assert(n <= NCCL_FX_MAX_RANKS);
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    ms_net_model_apply(net, sim);
    ms_sim_set_check_invariants(sim, TRUE);
    MsCollSpec spec = {.op = op, .n_ranks = n, .bytes = bytes, .net = net, .symmetric = symmetric};
    g_autoptr(GError) err = NULL;
    g_autoptr(MsColl) coll = ms_coll_new(sim, &spec, NULL, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(coll);
    ms_coll_launch_all(coll);
    CU_ASSERT_TRUE_FATAL(ms_sim_run(sim, &err));
    MsTime end = 0;
    for (guint i = 0; i < n; i++) {
        end = MAX(end, ms_coll_rank_end(coll, i));
        r.sent[i] = ms_coll_bytes_sent(coll, i);
    }
    r.end_us = ms_time_to_us(end);
    r.flows = ms_coll_n_flows(coll);
    r.ch = *ms_coll_nccl_choice(coll);
    return r;
}
