/* Tests of sweep_variants: the INI edit a variant is made from, the objects of each point
 * (loaded once and shared by the points with the same values), variants in memory (a preset with
 * another node count, a model with another expert count, calibrated like the base), chunks added
 * to the policies that take one, routing keys added to a generated source, the what-ifs (a slow
 * link on its own calibrated copy of the topology, a straggler's pace, the notes of both), and
 * the errors found before any point runs. */
#include "sim/base/ini.h"
#include "sim/sweep_variants.h"
#include "sim/what_if.h"
#include "sweep_fixture.h"

static void
test_ini_with(void)
{
    GError *error = NULL;
    const char text[] = "# nodes = 9 in a comment\n[topology]\nname = t\n[preset]\n"
                        "nodes = 2\n  nodes_per_leaf=1\n[device x]\nnodes = 5\nname = x\n";
    g_autofree char *out = ms_sweep_variants_ini_with(text, strlen(text), "preset", "nodes", "8",
                                                      "topology", "t-nodes8", &error);
    g_assert_no_error(error);
    CU_ASSERT_STRING_EQUAL(out, "# nodes = 9 in a comment\n[topology]\nname = t-nodes8\n"
                                "[preset]\nnodes = 8\n  nodes_per_leaf=1\n[device x]\n"
                                "nodes = 5\nname = x\n");
    CU_ASSERT_PTR_NULL(ms_sweep_variants_ini_with(text, strlen(text), "preset", "experts", "8",
                                                  "topology", "v", &error));
    MS_ASSERT_ERROR(error, MS_SWEEP_VARIANTS_ERROR, MS_SWEEP_VARIANTS_ERROR_VALUE,
                    "no 'experts' key in [preset] to vary");
}

static MsSweepGrid *
grid(const char *const *axes)
{
    MsSweepGrid *g = ms_sweep_grid_new();
    for (guint i = 0; axes[i]; i++) {
        GError *error = NULL;
        ms_sweep_grid_add_axis(g, axes[i], &error);
        g_assert_no_error(error);
    }
    return g;
}

/* The scenario of a point; *routing is what the caller frees. */
static MsScenario
point(const MsSweepVariants *v, guint p, MsRoutingSource **routing)
{
    MsScenario settings = {.mode = MS_PLAN_TRAIN, .iterations = 1, .seed = 1};
    MsScenario sc;
    GError *error = NULL;
    g_assert(ms_sweep_variants_point(v, p, &settings, &sc, routing, &error));
    return sc;
}

static void
test_base_only(void)
{
    g_autoptr(MsInputs) in = sfx_inputs("lina", NULL);
    g_autoptr(MsSweepGrid) g = grid((const char *[]){"seed=3,4", "mode=train,infer", NULL});
    GError *error = NULL;
    g_autoptr(MsSweepVariants) v = ms_sweep_variants_new(in, g, NULL, &error);
    g_assert_no_error(error);
    g_autoptr(MsRoutingSource) r = NULL;
    MsScenario sc = point(v, 3, &r);
    /* Nothing varies the objects: the base's own are borrowed. */
    CU_ASSERT_PTR_EQUAL(sc.topology, ms_inputs_topology(in));
    CU_ASSERT_PTR_EQUAL(sc.model, ms_inputs_model(in));
    CU_ASSERT_PTR_EQUAL(sc.policy, ms_inputs_policy(in));
    CU_ASSERT_PTR_EQUAL(sc.routing, ms_inputs_routing(in));
    CU_ASSERT_PTR_NULL(r);
    CU_ASSERT_EQUAL(sc.seed, 4);
    CU_ASSERT_EQUAL(sc.mode, MS_PLAN_INFER);
    CU_ASSERT_EQUAL(sc.iterations, 1);
}

/* The small inputs under a calibration of the NVSwitch links at 100 GB/s. */
static MsInputs *
calibrated_inputs(void)
{
    g_autofree char *cal = ms_test_write_tmp(
        "c.ini", "[calibration]\nformat = 1\n[link nvswitch]\nbandwidth = 100GBps\n"
                 "latency = 3us\n");
    MsInputNames names = {sfx_topology(), sfx_model(), cal, NULL, NULL};
    GError *error = NULL;
    MsInputs *in = ms_inputs_load(&names, &error);
    g_assert_no_error(error);
    return in;
}

static void
test_topologies_and_models(void)
{
    g_autoptr(MsInputs) in = calibrated_inputs();
    GError *error = NULL;
    g_autofree char *axis = g_strdup_printf("topology=%s;dgx-a100-2node", sfx_topology());
    g_autoptr(MsSweepGrid) g =
        grid((const char *[]){axis, "nodes=1,3", "experts=4,16", "iterations=2", NULL});
    g_autoptr(MsSweepVariants) v = ms_sweep_variants_new(in, g, NULL, &error);
    g_assert_no_error(error);
    g_autoptr(MsRoutingSource) r = NULL;
    /* point = ((topology * 2 + nodes) * 2 + experts) */
    MsScenario a = point(v, 0, &r), b = point(v, 3, &r), c = point(v, 6, &r);
    MsScenario a2 = point(v, 1, &r);
    CU_ASSERT_EQUAL(ms_topology_n_gpus(a.topology), 2);
    CU_ASSERT_STRING_EQUAL(ms_topology_name(a.topology), "tiny4-nodes1");
    CU_ASSERT_EQUAL(ms_topology_n_gpus(b.topology), 6);
    CU_ASSERT_STRING_EQUAL(ms_topology_name(b.topology), "tiny4-nodes3");
    CU_ASSERT_EQUAL(ms_topology_n_gpus(c.topology), 24);
    CU_ASSERT_STRING_EQUAL(ms_topology_name(c.topology), "dgx-a100-2node-nodes3");
    /* Loaded once: points with the same values share the objects. */
    CU_ASSERT_PTR_EQUAL(a.topology, a2.topology);
    CU_ASSERT_PTR_NOT_EQUAL(a.model, a2.model);
    CU_ASSERT_PTR_EQUAL(a.model, c.model);
    CU_ASSERT_EQUAL(ms_model_spec(a.model)->experts, 4);
    CU_ASSERT_EQUAL(ms_model_spec(a2.model)->experts, 16);
    CU_ASSERT_STRING_EQUAL(ms_model_spec(a2.model)->name, "tiny-experts16");
    CU_ASSERT_EQUAL(a.iterations, 2);
    /* Variants are calibrated like the base: the GPU-to-GPU route of a node takes the fit. */
    CU_ASSERT_PTR_EQUAL(a.calibration, ms_inputs_calibration(in));
    guint n = 0;
    const guint32 *route = ms_topology_gpu_route(c.topology, 0, 1, &n, NULL);
    MS_ASSERT_REL(ms_topology_route_bandwidth(c.topology, route, n), 100e9, 1e-9);
}

static void
test_policies_and_routing(void)
{
    g_autoptr(MsInputs) in = sfx_inputs(NULL, "gen:tokens=32");
    g_autoptr(MsSweepGrid) g =
        grid((const char *[]){"policy=priority;lina:pack=1", "chunk=1MB,2MB", "hot=0.2,0.3", NULL});
    GError *error = NULL;
    g_autoptr(MsSweepVariants) v = ms_sweep_variants_new(in, g, NULL, &error);
    g_assert_no_error(error);
    g_autoptr(MsRoutingSource) r0 = NULL, r1 = NULL, r2 = NULL;
    /* point = (policy * 2 + chunk) * 2 + hot */
    MsScenario prio = point(v, 1, &r0), lina = point(v, 6, &r1), lina_hot = point(v, 7, &r2);
    CU_ASSERT_STRING_EQUAL(ms_policy_spec(prio.policy), "priority:chunk=1MB");
    CU_ASSERT_STRING_EQUAL(ms_policy_spec(lina.policy), "lina:pack=1,chunk=2MB");
    CU_ASSERT_PTR_EQUAL(lina.policy, lina_hot.policy);
    /* Each point's routing: the base's keys, then the axis's. */
    CU_ASSERT_PTR_EQUAL(lina.routing, r1);
    CU_ASSERT_STRING_EQUAL(ms_routing_source_spec(r0), "gen:tokens=32,hot=0.3");
    CU_ASSERT_STRING_EQUAL(ms_routing_source_spec(r1), "gen:tokens=32,hot=0.2");
    CU_ASSERT_STRING_EQUAL(ms_routing_source_spec(r2), "gen:tokens=32,hot=0.3");
}

/* A slow-link axis slows each value's links on a copy of the base topology, calibrated like the
 * base and loaded once; a straggler axis gives the pace; each point's notes are the settings',
 * the straggler's and the slow links', in that order. */
static void
test_what_ifs(void)
{
    g_autoptr(MsInputs) in = calibrated_inputs();
    GError *error = NULL;
    g_autoptr(MsSweepGrid) g =
        grid((const char *[]){"slow-link=n0.nic0->fabric=1;gpu0->n0.nvswitch=2,n1.nic0->fabric=4",
                              "straggler=1=1;1=1.5", NULL});
    const char *base_notes[] = {"a note of the settings", NULL};
    MsScenario settings = {.mode = MS_PLAN_TRAIN, .iterations = 1, .seed = 1, .notes = base_notes};
    g_autoptr(MsSweepVariants) v = ms_sweep_variants_new(in, g, &settings, &error);
    g_assert_no_error(error);
    /* point = slow-link * 2 + straggler */
    MsScenario sc[4];
    for (guint p = 0; p < 4; p++) {
        MsRoutingSource *r = NULL;
        g_assert(ms_sweep_variants_point(v, p, &settings, &sc[p], &r, &error));
        CU_ASSERT_PTR_NULL(r);
    }
    CU_ASSERT_PTR_EQUAL(sc[0].topology, sc[1].topology);
    CU_ASSERT_PTR_NOT_EQUAL(sc[0].topology, sc[2].topology);
    CU_ASSERT_PTR_NOT_EQUAL(sc[0].topology, ms_inputs_topology(in));
    guint n = 0;
    const guint32 *route = ms_topology_gpu_route(sc[2].topology, 0, 1, &n, NULL);
    MS_ASSERT_REL(ms_topology_route_bandwidth(sc[2].topology, route, n), 50e9, 1e-12);
    route = ms_topology_gpu_route(sc[0].topology, 0, 1, &n, NULL);
    MS_ASSERT_REL(ms_topology_route_bandwidth(sc[0].topology, route, n), 100e9, 1e-12);
    guint l = 0;
    g_assert(ms_topology_find_link(sc[3].topology, "n1.nic0->fabric", &l));
    MS_ASSERT_REL(ms_topology_link(sc[3].topology, l)->bandwidth, 25e9 / 4, 1e-12);
    MS_ASSERT_REL(ms_topology_link(ms_inputs_topology(in), l)->bandwidth, 25e9, 1e-12);
    CU_ASSERT_EQUAL(sc[3].n_pace, 2);
    CU_ASSERT_DOUBLE_EQUAL(sc[3].pace[1], 1.5, 0);
    CU_ASSERT_DOUBLE_EQUAL(sc[2].pace[1], 1.0, 0);
    const char *want[] = {"a note of the settings",
                          "straggler: GPU 1's kernels take 1.5x their time",
                          "slow link: gpu0->n0.nvswitch at 1/2 of its bandwidth, 50 GB/s",
                          "slow link: n1.nic0->fabric at 1/4 of its bandwidth, 6.25 GB/s", NULL};
    CU_ASSERT_EQUAL(g_strv_length((char **)sc[3].notes), 4);
    for (guint i = 0; want[i] && sc[3].notes[i]; i++) {
        CU_ASSERT_STRING_EQUAL(sc[3].notes[i], want[i]);
    }
    CU_ASSERT_PTR_NULL(sc[0].net);
    CU_ASSERT_EQUAL(g_strv_length((char **)sc[0].notes), 3);
    CU_ASSERT_STRING_EQUAL(sc[0].notes[2],
                           "slow link: n0.nic0->fabric at 1/1 of its bandwidth, 25 GB/s");
}

/* A slow-link axis beside a nodes axis: each nodes variant has its own slowed copy per value, the
 * unslowed cells untouched; the notes are one per value. */
static void
test_slow_links_per_variant(void)
{
    g_autoptr(MsInputs) in = sfx_inputs(NULL, NULL);
    g_autoptr(MsSweepGrid) g =
        grid((const char *[]){"nodes=1,3", "slow-link=n0.nic0->fabric=1;n0.nic0->fabric=4", NULL});
    GError *error = NULL;
    g_autoptr(MsSweepVariants) v = ms_sweep_variants_new(in, g, NULL, &error);
    g_assert_no_error(error);
    g_autoptr(MsRoutingSource) r = NULL;
    /* point = nodes * 2 + slow-link */
    MsScenario sc[4];
    for (guint p = 0; p < 4; p++) {
        sc[p] = point(v, p, &r);
    }
    static const guint gpus[] = {2, 2, 6, 6};
    static const double bw[] = {25e9, 25e9 / 4, 25e9, 25e9 / 4};
    for (guint p = 0; p < 4; p++) {
        CU_ASSERT_EQUAL(ms_topology_n_gpus(sc[p].topology), gpus[p]);
        guint l = 0;
        g_assert(ms_topology_find_link(sc[p].topology, "n0.nic0->fabric", &l));
        MS_ASSERT_REL(ms_topology_link(sc[p].topology, l)->bandwidth, bw[p], 1e-12);
        CU_ASSERT_EQUAL(g_strv_length((char **)sc[p].notes), 1);
    }
    CU_ASSERT_STRING_EQUAL(sc[3].notes[0],
                           "slow link: n0.nic0->fabric at 1/4 of its bandwidth, 6.25 GB/s");
}

/* A net axis: each value parsed as --net parses it; the point carries its spec. */
static void
test_nets(void)
{
    g_autoptr(MsInputs) in = sfx_inputs(NULL, NULL);
    g_autoptr(MsSweepGrid) g =
        grid((const char *[]){"net=flow;nccl:version=2.10,latency_scale=2", NULL});
    GError *error = NULL;
    g_autoptr(MsSweepVariants) v = ms_sweep_variants_new(in, g, NULL, &error);
    g_assert_no_error(error);
    g_autoptr(MsRoutingSource) r = NULL;
    MsScenario flow = point(v, 0, &r), nccl = point(v, 1, &r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(flow.net);
    CU_ASSERT_PTR_NOT_NULL_FATAL(nccl.net);
    CU_ASSERT_EQUAL(flow.net->kind, MS_NET_FLOW);
    CU_ASSERT_EQUAL(nccl.net->kind, MS_NET_NCCL);
    CU_ASSERT_EQUAL(nccl.net->latency_scale, 2);
    g_autofree char *text = ms_net_spec_to_string(nccl.net);
    CU_ASSERT_STRING_EQUAL(text, "nccl:version=2.10,latency_scale=2");
}

static void
refused(MsInputs *in, const char *const *axes, GQuark domain, gint code, const char *needle)
{
    g_autoptr(MsSweepGrid) g = grid(axes);
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_sweep_variants_new(in, g, NULL, &error));
    MS_ASSERT_ERROR(error, domain, code, needle);
}

static void
test_errors(void)
{
    g_autoptr(MsInputs) in = sfx_inputs(NULL, NULL);
    refused(in, (const char *[]){"topology=dgx1-v100", "nodes=2", NULL}, MS_SWEEP_VARIANTS_ERROR,
            MS_SWEEP_VARIANTS_ERROR_VALUE,
            "sweep: nodes=2: topology 'dgx1-v100': no 'nodes' key in [preset] to vary");
    refused(in, (const char *[]){"nodes=2,40000", NULL}, MS_TOPOLOGY_ERROR,
            MS_TOPOLOGY_ERROR_INVALID, "with nodes=40000");
    refused(in, (const char *[]){"topology=dgx-z9", NULL}, MS_TOPOLOGY_ERROR,
            MS_TOPOLOGY_ERROR_UNKNOWN, "sweep: topology=dgx-z9: unknown topology 'dgx-z9'");
    refused(in, (const char *[]){"model=gpt-9", NULL}, MS_MODEL_ERROR, MS_MODEL_ERROR_UNKNOWN,
            "sweep: model=gpt-9: unknown model");
    /* One expert cannot serve top-2 routing. */
    refused(in, (const char *[]){"experts=1", NULL}, MS_INI_ERROR, MS_INI_ERROR_VALUE,
            "tiny.ini with experts=1");
    refused(in, (const char *[]){"policy=lina:chunk=2MB", "chunk=1MB", NULL}, MS_POLICY_ERROR,
            MS_POLICY_ERROR_PARAM,
            "sweep: lina:chunk=2MB,chunk=1MB: policy lina: parameter 'chunk' given twice");
    /* Regression: a chunk axis over a policy that takes no chunk was ignored for it, while its
     * rows were labelled with the chunk. */
    refused(in, (const char *[]){"policy=lina;fifo", "chunk=1MB", NULL}, MS_SWEEP_VARIANTS_ERROR,
            MS_SWEEP_VARIANTS_ERROR_AXIS,
            "sweep: chunk=1MB: policy fifo takes no chunk (the policies that do: priority, lina)");
    g_autoptr(MsInputs) fifo = sfx_inputs("fifo", NULL);
    refused(fifo, (const char *[]){"chunk=1MB,2MB", NULL}, MS_SWEEP_VARIANTS_ERROR,
            MS_SWEEP_VARIANTS_ERROR_AXIS, "policy fifo takes no chunk");
    g_autoptr(MsInputs) traced = sfx_inputs(NULL, "sample:default");
    refused(traced, (const char *[]){"seed=1", "zipf=1,2", NULL}, MS_SWEEP_VARIANTS_ERROR,
            MS_SWEEP_VARIANTS_ERROR_AXIS,
            "sweep: zipf varies generated routing, but the trace is sample:default");
    refused(in, (const char *[]){"slow-link=n0.nic9->fabric=2", NULL}, MS_WHAT_IF_ERROR,
            MS_WHAT_IF_ERROR_SPEC,
            "sweep: slow-link 'n0.nic9->fabric=2': topology 'tiny4' has no link 'n0.nic9->fabric'");
    g_autofree char *topologies = g_strdup_printf("topology=%s;dgx-a100-2node", sfx_topology());
    refused(in, (const char *[]){"slow-link=n0.nic0->fabric=2", topologies, NULL},
            MS_SWEEP_VARIANTS_ERROR, MS_SWEEP_VARIANTS_ERROR_AXIS,
            "sweep: slow-link names links of one topology: it does not go with a topology axis");
    refused(in, (const char *[]){"slow-link=n2.nic0->fabric=2", "nodes=3,2", NULL},
            MS_WHAT_IF_ERROR, MS_WHAT_IF_ERROR_SPEC,
            "topology 'tiny4-nodes2' has no link 'n2.nic0->fabric'");
    refused(in, (const char *[]){"net=flow;nccl:version=2.10,lattency_scale=2", NULL},
            MS_NET_MODEL_ERROR, MS_NET_MODEL_ERROR_SPEC,
            "sweep: net=nccl:version=2.10,lattency_scale=2: network model nccl has no key "
            "'lattency_scale'");
    refused(in, (const char *[]){"slow-link=gpu0->n0.nic0=2", NULL}, MS_WHAT_IF_ERROR,
            MS_WHAT_IF_ERROR_SPEC, "link 'gpu0->n0.nic0' has unlimited bandwidth");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"the INI edit of a variant", test_ini_with},
        {"a grid that varies no object", test_base_only},
        {"topologies, models and their variants", test_topologies_and_models},
        {"policies with chunks, routing with keys", test_policies_and_routing},
        {"what-ifs: slow links and stragglers, and their notes", test_what_ifs},
        {"slow links on each nodes variant", test_slow_links_per_variant},
        {"network models", test_nets},
        {"errors before any point runs", test_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"sweep_variants", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
