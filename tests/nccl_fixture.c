/* nccl_fixture: the helpers the nccl model's tests share (nccl_fixture.h). */
#include "nccl_fixture.h"

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
