/* Tests of the topology module: shipped topologies and their figures, preset and explicit graphs,
 * route rules, injection/bisection closed forms, every load error, and `moesim topo`. */
#include "ms_test.h"
#include "sim/base/ini.h"
#include "topologies/topology.h"

#include <json-glib/json-glib.h>

/* Nine lines: the groups every test file shares, so that line numbers in needles are fixed. */
#define HEAD                                                                                       \
    "[topology]\nformat = 1\nname = t\n[gpu]\nmodel = X\npeak = 1TFLOPS\nhbm = 1TBps\n"            \
    "memory = 1GB\nlaunch_overhead = 1us\n"

/* Lines 10-20. */
static const char preset_text[] = HEAD "[preset]\n"
                                       "nodes = 2\n"
                                       "gpus_per_node = 2\n"
                                       "intra = nvswitch\n"
                                       "intra_bandwidth = 100GBps\n"
                                       "intra_latency = 1us\n"
                                       "nics = per_gpu\n"
                                       "nic_bandwidth = 200Gbps\n"
                                       "nic_latency = 1us\n"
                                       "fabric = switch\n"
                                       "fabric_latency = 0.5us\n";

/* Lines 10-26: two GPUs on one switch. */
static const char explicit_text[] = HEAD "[device g0]\nkind = gpu\nnode = 0\n"
                                         "[device g1]\nkind = gpu\nnode = 0\n"
                                         "[device sw]\nkind = switch\nnode = 0\n"
                                         "[link g0 sw]\nclass = nvswitch\nbandwidth = 100GBps\n"
                                         "latency = 1us\n"
                                         "[link g1 sw]\nclass = nvswitch\nbandwidth = 100GBps\n"
                                         "latency = 1us\n";

/* text with the first occurrence of old replaced by new (old must occur). */
static char *
variant(const char *text, const char *old, const char *new)
{
    const char *at = strstr(text, old);
    g_assert(at != NULL);
    return g_strdup_printf("%.*s%s%s", (int)(at - text), text, new, at + strlen(old));
}

static MsTopology *
load_text(const char *text, GError **error)
{
    return ms_topology_load_data(text, strlen(text), "t.ini", error);
}

static MsTopology *
load_ok(const char *name)
{
    GError *error = NULL;
    MsTopology *topo = ms_topology_load(name, &error);
    if (error) {
        fprintf(stderr, "\n  %s: %s\n", name, error->message);
        g_clear_error(&error);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(topo);
    return topo;
}

static const MsLink *
link_named(const MsTopology *topo, const char *from, const char *to)
{
    guint a, b;
    CU_ASSERT_FATAL(ms_topology_find_device(topo, from, &a));
    CU_ASSERT_FATAL(ms_topology_find_device(topo, to, &b));
    for (guint i = 0; i < ms_topology_n_links(topo); i++) {
        const MsLink *l = ms_topology_link(topo, i);
        if (l->from == a && l->to == b) {
            return l;
        }
    }
    CU_FAIL_FATAL("no such link");
    return NULL;
}

/* The route between ranks as "a->b,b->c" (caller frees). */
static char *
route_names(const MsTopology *topo, guint src, guint dst)
{
    GError *error = NULL;
    guint n = 0;
    const guint32 *r = ms_topology_gpu_route(topo, src, dst, &n, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < n; i++) {
        g_string_append_printf(s, "%s%s", i ? "," : "", ms_topology_link(topo, r[i])->name);
    }
    return g_string_free(s, FALSE);
}

static void
test_shipped(void)
{
    static const struct {
        const char *name;
        guint gpus, nodes, devices, links, gpn, npn;
    } cases[] = {
        {"dgx-a100", 8, 1, 18, 48, 8, 8},
        {"dgx-a100-128node", 1024, 128, 2177, 6144, 8, 8},
        {"dgx-a100-16node", 128, 16, 273, 768, 8, 8},
        {"dgx-a100-2node", 16, 2, 35, 96, 8, 8},
        {"dgx-a100-4node", 32, 4, 69, 192, 8, 8},
        {"dgx-h100", 8, 1, 18, 48, 8, 8},
        /* Rail-optimised fat trees: leaves 8 per SU of 32 nodes, spines from the 64-port radix
         * (4 for one SU, 32 for 8 SUs, 16 at 2:1 or with 128-port Ethernet switches); three tiers
         * at 64 SUs: 512 leaves, 512 spines, 256 cores. */
        {"dgx-h100-2048node", 16384, 2048, 36096, 139264, 8, 8},
        {"dgx-h100-256node", 2048, 256, 4448, 16384, 8, 8},
        {"dgx-h100-256node-2to1", 2048, 256, 4432, 14336, 8, 8},
        {"dgx-h100-256node-roce", 2048, 256, 4432, 14336, 8, 8},
        {"dgx-h100-32node", 256, 32, 556, 1600, 8, 8},
        {"dgx-h100-4node", 32, 4, 80, 256, 8, 8},
        {"dgx-h200-256node", 2048, 256, 4448, 16384, 8, 8},
        {"dgx-h200-32node", 256, 32, 556, 1600, 8, 8},
        {"dgx-h200-4node", 32, 4, 80, 256, 8, 8},
        {"dgx1-v100", 8, 1, 14, 58, 8, 0},
        {"gb200-nvl72", 72, 1, 146, 432, 72, 72},
        {"h200", 1, 1, 1, 0, 1, 0},
        {"lina-testbed", 16, 4, 21, 88, 4, 1},
        {"schemoe-testbed", 32, 8, 49, 144, 4, 1},
        {"vidur-dgx-a100", 16, 2, 35, 96, 8, 8},
    };
    g_auto(GStrv) names = ms_topology_list_shipped();
    CU_ASSERT_EQUAL_FATAL(g_strv_length(names), G_N_ELEMENTS(cases));
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        CU_ASSERT_STRING_EQUAL(names[i], cases[i].name);
        g_autoptr(MsTopology) topo = load_ok(cases[i].name);
        CU_ASSERT_STRING_EQUAL(ms_topology_name(topo), cases[i].name);
        CU_ASSERT_EQUAL(ms_topology_n_gpus(topo), cases[i].gpus);
        CU_ASSERT_EQUAL(ms_topology_n_nodes(topo), cases[i].nodes);
        CU_ASSERT_EQUAL(ms_topology_n_devices(topo), cases[i].devices);
        CU_ASSERT_EQUAL(ms_topology_n_links(topo), cases[i].links);
        CU_ASSERT_EQUAL(ms_topology_gpus_per_node(topo), cases[i].gpn);
        CU_ASSERT_EQUAL(ms_topology_nics_per_node(topo), cases[i].npn);
        g_autoptr(GBytes) text = ms_topology_shipped_data(cases[i].name);
        CU_ASSERT_PTR_NOT_NULL(text);
        /* `topo list`'s summary, read without building the preset, agrees with the build. */
        g_autofree char *description = NULL;
        guint gpus = 0, nodes = 0;
        CU_ASSERT_FATAL(
            ms_topology_shipped_summary(cases[i].name, &gpus, &nodes, &description, NULL));
        CU_ASSERT_EQUAL(gpus, cases[i].gpus);
        CU_ASSERT_EQUAL(nodes, cases[i].nodes);
        CU_ASSERT_STRING_EQUAL(description, ms_topology_description(topo));
    }
    g_autoptr(GError) error = NULL;
    g_autofree char *description = NULL;
    guint gpus = 7, nodes = 7;
    CU_ASSERT_FALSE(ms_topology_shipped_summary("nope", &gpus, &nodes, &description, &error));
    CU_ASSERT(g_error_matches(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_UNKNOWN));
    CU_ASSERT_PTR_NULL(description);
    CU_ASSERT_PTR_NULL(ms_topology_shipped_data("nope"));
    CU_ASSERT_PTR_NULL(ms_topology_shipped_data("../x"));
}

/* Every shipped GPU's dense peak per datatype (docs/topology.md; 0: none, refused). */
static void
assert_peaks(const MsGpuSpec *g, double fp32, double fp16, double bf16, double tf32, double fp8)
{
    const double want[MS_DTYPE_N] = {
        [MS_DTYPE_FP32] = fp32, [MS_DTYPE_FP16] = fp16, [MS_DTYPE_BF16] = bf16,
        [MS_DTYPE_TF32] = tf32, [MS_DTYPE_FP8] = fp8,
    };
    for (guint d = 0; d < MS_DTYPE_N; d++) {
        MsFlops peak = -1;
        gboolean has = ms_gpu_spec_peak(g, d, &peak);
        CU_ASSERT_EQUAL(has, want[d] > 0);
        if (has) {
            MS_ASSERT_REL(peak, want[d], 1e-12);
        }
    }
}

static void
test_figures(void)
{
    g_autoptr(MsTopology) a100 = load_ok("dgx-a100-2node");
    const MsLink *l = link_named(a100, "gpu3", "n0.nvswitch");
    CU_ASSERT_EQUAL(l->bandwidth, 300e9);
    CU_ASSERT_EQUAL(l->klass, MS_LINK_NVSWITCH);
    CU_ASSERT_STRING_EQUAL(l->name, "gpu3->n0.nvswitch");
    l = link_named(a100, "n1.nic2", "fabric");
    CU_ASSERT_EQUAL(l->bandwidth, 25e9);
    CU_ASSERT_EQUAL(l->klass, MS_LINK_NIC);
    CU_ASSERT(isinf(link_named(a100, "gpu2", "n0.nic2")->bandwidth));
    const MsGpuSpec *g = ms_topology_gpu_spec(a100, 15);
    CU_ASSERT_STRING_EQUAL(g->model, "A100-SXM4-80GB");
    CU_ASSERT_EQUAL(g->peak_flops, 312e12);
    CU_ASSERT_EQUAL(g->hbm_bandwidth, 2039e9);
    CU_ASSERT_EQUAL(g->memory_bytes, G_GUINT64_CONSTANT(80) << 30);
    CU_ASSERT_EQUAL(g->launch_overhead, 4 * MS_PS_PER_US);
    CU_ASSERT_EQUAL(ms_topology_gpu_node(a100, 9), 1);
    CU_ASSERT_EQUAL(ms_topology_device_rank(a100, ms_topology_gpu_device(a100, 11)), 11);
    guint fabric;
    CU_ASSERT(ms_topology_find_device(a100, "fabric", &fabric));
    CU_ASSERT_EQUAL(ms_topology_device_node(a100, fabric), -1);
    CU_ASSERT_EQUAL(ms_topology_device_kind(a100, fabric), MS_DEVICE_SWITCH);

    g_autoptr(MsTopology) v100 = load_ok("dgx1-v100");
    CU_ASSERT_EQUAL(link_named(v100, "gpu0", "gpu3")->bandwidth, 50e9);
    CU_ASSERT_EQUAL(link_named(v100, "gpu3", "gpu0")->bandwidth, 50e9);
    CU_ASSERT_EQUAL(link_named(v100, "gpu0", "gpu1")->bandwidth, 25e9);
    CU_ASSERT_EQUAL(link_named(v100, "cpu0", "cpu1")->bandwidth, 38.4e9);
    g_autofree char *r05 = route_names(v100, 0, 5);
    CU_ASSERT_STRING_EQUAL(r05, "gpu0->pcie0,pcie0->cpu0,cpu0->cpu1,cpu1->pcie2,pcie2->gpu5");
    g_autofree char *r03 = route_names(v100, 0, 3);
    CU_ASSERT_STRING_EQUAL(r03, "gpu0->gpu3");

    g_autoptr(MsTopology) lina = load_ok("lina-testbed");
    CU_ASSERT_EQUAL(link_named(lina, "gpu0", "gpu1")->bandwidth, 100e9);
    CU_ASSERT_EQUAL(link_named(lina, "gpu0", "n0.nic0")->bandwidth, 31.5e9);
    g_autoptr(MsTopology) schemoe = load_ok("schemoe-testbed");
    CU_ASSERT_EQUAL(ms_topology_gpu_spec(schemoe, 0)->peak_flops, 53.8e12);
    CU_ASSERT_EQUAL(link_named(schemoe, "gpu5", "n1.pcie")->bandwidth, 15.75e9);
    g_autoptr(MsTopology) h100 = load_ok("dgx-h100");
    CU_ASSERT_EQUAL(link_named(h100, "gpu0", "n0.nvswitch")->bandwidth, 450e9);
    CU_ASSERT_EQUAL(link_named(h100, "n0.nic0", "fabric")->bandwidth, 50e9);
    g_autoptr(MsTopology) h200 = load_ok("dgx-h200-32node");
    g = ms_topology_gpu_spec(h200, 0);
    CU_ASSERT_EQUAL(g->hbm_bandwidth, 4.8e12);
    CU_ASSERT_EQUAL(g->memory_bytes, G_GUINT64_CONSTANT(141) * 1000 * 1000 * 1000);
    CU_ASSERT_EQUAL(link_named(h200, "n31.nic7", "leaf0.7")->bandwidth, 50e9);
    /* One SU: 8 leaves x 32 uplinks over 4 spines of 64 ports, 8 links each. */
    l = link_named(h200, "leaf0.3", "spine2");
    CU_ASSERT_EQUAL(l->bandwidth, 8 * 50e9);
    CU_ASSERT_EQUAL(l->klass, MS_LINK_FABRIC);
    g_autoptr(MsTopology) roce = load_ok("dgx-h100-256node-roce");
    CU_ASSERT_EQUAL(link_named(roce, "leaf7.7", "spine15")->bandwidth, 2 * 50e9);
    CU_ASSERT_EQUAL(link_named(roce, "spine15", "leaf7.7")->latency, 500 * MS_PS_PER_NS);
    g_autoptr(MsTopology) nvl72 = load_ok("gb200-nvl72");
    g = ms_topology_gpu_spec(nvl72, 71);
    CU_ASSERT_EQUAL(g->peak_flops, 2.5e15);
    assert_peaks(g, 80e12, 2.5e15, 2.5e15, 1.25e15, 5e15);
    assert_peaks(ms_topology_gpu_spec(v100, 7), 15.7e12, 125e12, 15.7e12, 15.7e12, 0);
    assert_peaks(ms_topology_gpu_spec(a100, 0), 19.5e12, 312e12, 312e12, 156e12, 0);
    assert_peaks(ms_topology_gpu_spec(lina, 0), 19.5e12, 312e12, 312e12, 156e12, 0);
    assert_peaks(ms_topology_gpu_spec(h100, 0), 67e12, 989e12, 989e12, 494.5e12, 1979e12);
    assert_peaks(ms_topology_gpu_spec(h200, 0), 67e12, 989e12, 989e12, 494.5e12, 1979e12);
    assert_peaks(ms_topology_gpu_spec(schemoe, 0), 13.4e12, 53.8e12, 13.4e12, 13.4e12, 0);
    CU_ASSERT_EQUAL(g->hbm_bandwidth, 8e12);
    CU_ASSERT_EQUAL(link_named(nvl72, "gpu71", "n0.nvswitch")->bandwidth, 900e9);
    CU_ASSERT_EQUAL(ms_topology_link_count(nvl72, 0), 18);
}

/* Classes of a route, and its latency in ps. */
static void
assert_route(const MsTopology *topo, guint src, guint dst, const MsLinkClass *classes, guint n,
             MsTime latency)
{
    GError *error = NULL;
    guint got = 0;
    const guint32 *r = ms_topology_gpu_route(topo, src, dst, &got, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL_FATAL(got, n);
    for (guint i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(ms_topology_link(topo, r[i])->klass, classes[i]);
    }
    CU_ASSERT_EQUAL(ms_topology_route_latency(topo, r, n), latency);
}

static void
test_preset_routes(void)
{
    const MsLinkClass sw[] = {MS_LINK_NVSWITCH, MS_LINK_NVSWITCH};
    const MsLinkClass inter[] = {MS_LINK_PCIE, MS_LINK_NIC, MS_LINK_NIC, MS_LINK_PCIE};
    g_autoptr(MsTopology) a100 = load_ok("dgx-a100-2node");
    assert_route(a100, 0, 5, sw, 2, 1400000);
    assert_route(a100, 3, 11, inter, 4, 1330000);
    g_autofree char *own = route_names(a100, 3, 12);
    CU_ASSERT_STRING_EQUAL(own, "gpu3->n0.nic3,n0.nic3->fabric,fabric->n1.nic4,n1.nic4->gpu12");
    guint n = 99;
    GError *error = NULL;
    const guint32 *self = ms_topology_gpu_route(a100, 4, 4, &n, &error);
    CU_ASSERT_PTR_NOT_NULL(self);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT(isinf(ms_topology_route_bandwidth(a100, self, 0)));

    g_autoptr(MsTopology) lina = load_ok("lina-testbed");
    const MsLinkClass mesh[] = {MS_LINK_NVLINK};
    assert_route(lina, 1, 2, mesh, 1, 700000);
    assert_route(lina, 1, 6, inter, 4, 2330000);
    g_autofree char *pn = route_names(lina, 1, 6);
    CU_ASSERT_STRING_EQUAL(pn, "gpu1->n0.nic0,n0.nic0->fabric,fabric->n1.nic0,n1.nic0->gpu6");
    /* Inside a PCIe node both the switch and the NIC are two hops away: a NIC never forwards
     * host to host, so the route takes the switch. */
    g_autoptr(MsTopology) schemoe = load_ok("schemoe-testbed");
    g_autofree char *pcie = route_names(schemoe, 0, 1);
    CU_ASSERT_STRING_EQUAL(pcie, "gpu0->n0.pcie,n0.pcie->gpu1");

    g_autofree char *ft = variant(preset_text, "nodes = 2", "nodes = 4");
    g_autofree char *ft2 = variant(ft, "fabric = switch",
                                   "fabric = fat_tree\nnodes_per_leaf = 2\n"
                                   "oversubscription = 2");
    g_autoptr(MsTopology) tree = load_text(ft2, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tree);
    const MsLinkClass leaf[] = {MS_LINK_PCIE, MS_LINK_NIC, MS_LINK_NIC, MS_LINK_PCIE};
    const MsLinkClass spine[] = {MS_LINK_PCIE,   MS_LINK_NIC, MS_LINK_FABRIC,
                                 MS_LINK_FABRIC, MS_LINK_NIC, MS_LINK_PCIE};
    assert_route(tree, 0, 2, leaf, 4, 2500000);
    assert_route(tree, 0, 4, spine, 6, 3500000);
    g_autofree char *via = route_names(tree, 1, 7);
    CU_ASSERT_STRING_EQUAL(via, "gpu1->n0.nic1,n0.nic1->leaf0,leaf0->spine0,spine0->leaf1,"
                                "leaf1->n3.nic1,n3.nic1->gpu7");
    CU_ASSERT_EQUAL(link_named(tree, "leaf0", "spine0")->bandwidth, 2 * 2 * 25e9 / 2);
}

/* Explicit graphs for the tie rules: g0 and g1 joined through switch a or switch b. */
static char *
two_paths(const char *bw_a, const char *bw_b, const char *lat_b, gboolean b_first)
{
    const char *devs = b_first ? "[device b]\nkind = switch\nnode = 0\n"
                                 "[device a]\nkind = switch\nnode = 0\n"
                               : "[device a]\nkind = switch\nnode = 0\n"
                                 "[device b]\nkind = switch\nnode = 0\n";
    return g_strdup_printf(HEAD "[device g0]\nkind = gpu\nnode = 0\n"
                                "[device g1]\nkind = gpu\nnode = 0\n%s"
                                "[link g0 a]\nclass = pcie\nbandwidth = %s\nlatency = 1us\n"
                                "[link a g1]\nclass = pcie\nbandwidth = %s\nlatency = 1us\n"
                                "[link g0 b]\nclass = pcie\nbandwidth = %s\nlatency = %s\n"
                                "[link b g1]\nclass = pcie\nbandwidth = %s\nlatency = 1us\n",
                           devs, bw_a, bw_a, bw_b, lat_b, bw_b);
}

static char *
explicit_route(const char *text)
{
    GError *error = NULL;
    g_autoptr(MsTopology) topo = load_text(text, &error);
    if (error) {
        fprintf(stderr, "\n  %s\n", error->message);
        g_clear_error(&error);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(topo);
    return route_names(topo, 0, 1);
}

static void
test_route_rules(void)
{
    struct {
        char *text;
        const char *route;
    } cases[] = {
        {two_paths("100GBps", "50GBps", "1us", FALSE), "g0->a,a->g1"},    /* wider */
        {two_paths("50GBps", "100GBps", "1us", FALSE), "g0->b,b->g1"},    /* wider */
        {two_paths("100GBps", "100GBps", "0.5us", FALSE), "g0->b,b->g1"}, /* faster */
        {two_paths("100GBps", "100GBps", "1us", FALSE), "g0->a,a->g1"},   /* lower index */
        {two_paths("100GBps", "100GBps", "1us", TRUE), "g0->b,b->g1"},    /* lower index */
        {two_paths("unlimited", "100GBps", "1us", TRUE), "g0->a,a->g1"},  /* unlimited */
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *got = explicit_route(cases[i].text);
        CU_ASSERT_STRING_EQUAL(got, cases[i].route);
        g_free(cases[i].text);
    }
    g_autofree char *base = two_paths("100GBps", "50GBps", "1us", FALSE);
    /* Fewest hops first, however narrow. */
    g_autofree char *direct = g_strconcat(base,
                                          "[link g0 g1]\nclass = pcie\n"
                                          "bandwidth = 1GBps\nlatency = 9us\n",
                                          NULL);
    g_autofree char *r1 = explicit_route(direct);
    CU_ASSERT_STRING_EQUAL(r1, "g0->g1");
    /* A given route wins. */
    g_autofree char *given = g_strconcat(base, "[route g0 g1]\npath = g0; b; g1\n", NULL);
    g_autofree char *r2 = explicit_route(given);
    CU_ASSERT_STRING_EQUAL(r2, "g0->b,b->g1");
    /* A NIC does not bridge two host devices, even when that path is wider. */
    g_autofree char *nic = variant(base, "[device a]\nkind = switch", "[device a]\nkind = nic");
    g_autofree char *r3 = explicit_route(nic);
    CU_ASSERT_STRING_EQUAL(r3, "g0->b,b->g1");
    /* One-way links are one way. */
    g_autofree char *oneway = variant(base, "[link a g1]\n", "[link a g1]\nbidirectional = no\n");
    GError *error = NULL;
    g_autoptr(MsTopology) topo = load_text(oneway, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(topo);
    g_autofree char *r4 = route_names(topo, 1, 0);
    CU_ASSERT_STRING_EQUAL(r4, "g1->b,b->g0");
}

static void
test_route_cache(void)
{
    g_autoptr(MsTopology) topo = load_ok("dgx-a100-4node");
    GError *error = NULL;
    guint n1 = 0, n2 = 0, n;
    const guint32 *first = ms_topology_gpu_route(topo, 2, 30, &n1, &error);
    guint32 copy[8];
    memcpy(copy, first, sizeof(guint32) * n1);
    for (guint s = 0; s < 32; s++) {
        for (guint d = 0; d < 32; d++) {
            CU_ASSERT_PTR_NOT_NULL(ms_topology_gpu_route(topo, s, d, &n, &error));
        }
    }
    const guint32 *again = ms_topology_gpu_route(topo, 2, 30, &n2, &error);
    CU_ASSERT_PTR_EQUAL(first, again);
    CU_ASSERT_EQUAL(n1, n2);
    CU_ASSERT_EQUAL(memcmp(first, copy, sizeof(guint32) * n1), 0);

    /* A device nothing links to: GPUs still reach each other, routes to it fail. */
    g_autofree char *text = g_strconcat(explicit_text, "[device lonely]\nkind = switch\n", NULL);
    g_autoptr(MsTopology) alone = load_text(text, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(alone);
    guint lonely;
    CU_ASSERT_FATAL(ms_topology_find_device(alone, "lonely", &lonely));
    CU_ASSERT_PTR_NULL(ms_topology_route(alone, 0, lonely, &n, &error));
    MS_ASSERT_ERROR(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_UNREACHABLE,
                    "t: no route from g0 to lonely");
}

typedef struct {
    MsTopology *topo;
    guint64 sum;
} Worker;

static gpointer
all_routes(gpointer data)
{
    Worker *w = data;
    guint n_gpus = ms_topology_n_gpus(w->topo);
    for (guint s = 0; s < n_gpus; s++) {
        for (guint d = 0; d < n_gpus; d++) {
            guint n = 0;
            const guint32 *r = ms_topology_gpu_route(w->topo, s, d, &n, NULL);
            for (guint i = 0; r && i < n; i++) {
                w->sum += (guint64)(r[i] + 1) * (i + 1) * (s * n_gpus + d + 1);
            }
        }
    }
    return NULL;
}

/* Four threads race to fill one route cache; each must see what one thread alone sees. */
static void
test_route_threads(void)
{
    g_autoptr(MsTopology) alone = load_ok("dgx-a100-16node");
    Worker ref = {alone, 0};
    all_routes(&ref);
    g_autoptr(MsTopology) shared = load_ok("dgx-a100-16node");
    Worker w[4];
    GThread *t[4];
    for (guint i = 0; i < 4; i++) {
        w[i] = (Worker){shared, 0};
        t[i] = g_thread_new("routes", all_routes, &w[i]);
    }
    for (guint i = 0; i < 4; i++) {
        g_thread_join(t[i]);
        CU_ASSERT_EQUAL(w[i].sum, ref.sum);
    }
}

static MsBandwidth
bisection_of(const char *text)
{
    GError *error = NULL;
    g_autoptr(MsTopology) topo = load_text(text, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(topo);
    return ms_topology_bisection_bandwidth(topo);
}

static void
test_injection_bisection(void)
{
    static const struct {
        const char *name;
        MsBandwidth injection, bisection;
    } cases[] = {
        /* 8 NICs of 25 GB/s cross the cut; a node's NICs shared by its 8 GPUs. */
        {"dgx-a100-2node", 25e9, 8 * 25e9},
        {"dgx-a100-128node", 25e9, 512 * 25e9},
        /* Rail-optimised fat trees: half the NICs at 1:1, half of that at 2:1, at two tiers
         * and three. */
        {"dgx-h100-256node", 50e9, 1024 * 50e9},
        {"dgx-h100-256node-2to1", 50e9, 1024 * 50e9 / 2},
        {"dgx-h100-2048node", 50e9, 8192 * 50e9},
        /* 36 GPUs x 900 GB/s into the NVLink switch, plus their 36 NICs looped by the fabric. */
        {"gb200-nvl72", 900e9, 36 * 900e9 + 36 * 50e9},
        /* One node: 4 GPUs x 300 GB/s into the switch, plus 4 NICs looped through the fabric. */
        {"dgx-a100", 300e9, 4 * 300e9 + 4 * 25e9},
        /* One 12.5 GB/s NIC per node, 4 GPUs each; two nodes on each side. */
        {"lina-testbed", 12.5e9 / 4, 2 * 12.5e9},
        /* 50+50+25+25 NVLink + 15.75 PCIe per GPU; the cut: links 0-4, 1-5 (double), 2-6, 3-7
         * (single) and the two PCIe switch uplinks of CPU0. */
        {"dgx1-v100", 165.75e9, 150e9 + 2 * 15.75e9},
        {"h200", 0, 0},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(MsTopology) topo = load_ok(cases[i].name);
        for (guint r = 0; r < ms_topology_n_gpus(topo); r++) {
            MS_ASSERT_REL(ms_topology_injection_bandwidth(topo, r), cases[i].injection, 1e-12);
        }
        MS_ASSERT_REL(ms_topology_bisection_bandwidth(topo), cases[i].bisection, 1e-12);
    }
    g_autoptr(GBytes) data = ms_topology_shipped_data("dgx-a100-2node");
    g_autofree char *text = g_strndup(g_bytes_get_data(data, NULL), g_bytes_get_size(data));
    g_autofree char *ft1 = variant(text, "fabric = switch",
                                   "fabric = fat_tree\nnodes_per_leaf = 1\n"
                                   "oversubscription = 1");
    g_autofree char *ft2 = variant(text, "fabric = switch",
                                   "fabric = fat_tree\nnodes_per_leaf = 1\n"
                                   "oversubscription = 2");
    MS_ASSERT_REL(bisection_of(ft1), 8 * 25e9, 1e-12);
    MS_ASSERT_REL(bisection_of(ft2), 8 * 25e9 / 2, 1e-12);
    /* per_node NIC: the fair share (12.5 GB/s / 2) is capped by the GPU's own 1 GB/s path. */
    g_autofree char *pn =
        variant(preset_text, "nics = per_gpu", "nics = per_node\ngpu_nic_bandwidth = 1GBps");
    GError *error = NULL;
    g_autoptr(MsTopology) capped = load_text(pn, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(capped);
    MS_ASSERT_REL(ms_topology_injection_bandwidth(capped, 3), 1e9, 1e-12);
    MS_ASSERT_REL(ms_topology_bisection_bandwidth(capped), 2e9, 1e-12);
}

static void
test_set_class(void)
{
    g_autoptr(MsTopology) v100 = load_ok("dgx1-v100");
    g_autofree char *before = route_names(v100, 0, 5);
    CU_ASSERT_EQUAL(ms_topology_set_class(v100, MS_LINK_NVLINK, 20e9, MS_TIME_NEVER), 32);
    CU_ASSERT_EQUAL(link_named(v100, "gpu0", "gpu3")->bandwidth, 40e9);
    CU_ASSERT_EQUAL(link_named(v100, "gpu0", "gpu1")->bandwidth, 20e9);
    CU_ASSERT_EQUAL(link_named(v100, "gpu0", "gpu1")->latency, 700000);
    CU_ASSERT_EQUAL(ms_topology_set_class(v100, MS_LINK_PCIE, 0, 2 * MS_PS_PER_US), 24);
    CU_ASSERT_EQUAL(link_named(v100, "gpu0", "pcie0")->latency, 2 * MS_PS_PER_US);
    CU_ASSERT_EQUAL(link_named(v100, "gpu0", "pcie0")->bandwidth, 15.75e9);
    CU_ASSERT_EQUAL(ms_topology_set_class(v100, MS_LINK_NIC, 1e9, 0), 0);
    CU_ASSERT_EQUAL(ms_topology_set_class(v100, MS_LINK_CPU, -1, MS_TIME_NEVER), 0);
    g_autofree char *after = route_names(v100, 0, 5);
    CU_ASSERT_STRING_EQUAL(before, after);
    g_autoptr(MsTopology) a100 = load_ok("dgx-a100");
    CU_ASSERT_EQUAL(ms_topology_set_class(a100, MS_LINK_PCIE, 10e9, MS_TIME_NEVER), 0);
    CU_ASSERT(isinf(link_named(a100, "gpu0", "n0.nic0")->bandwidth));
    MsLinkClass k;
    CU_ASSERT(ms_link_class_from_name("fabric", &k) && k == MS_LINK_FABRIC);
    CU_ASSERT_FALSE(ms_link_class_from_name("ethernet", &k));
    CU_ASSERT_STRING_EQUAL(ms_link_class_name(MS_LINK_CPU), "cpu");
    MsDeviceKind kind;
    CU_ASSERT(ms_device_kind_from_name("nic", &kind) && kind == MS_DEVICE_NIC);
    CU_ASSERT_FALSE(ms_device_kind_from_name("tpu", &kind));
}

typedef struct {
    gboolean is_explicit;
    const char *old, *new; /* replace in the base text; old NULL: append new */
    int domain;            /* INI or TOPO: quarks are not constants */
    int code;
    const char *needle;
} ErrorCase;

enum { INI, TOPO };

static void
run_error_cases(const ErrorCase *cases, guint n)
{
    for (guint i = 0; i < n; i++) {
        const char *base = cases[i].is_explicit ? explicit_text : preset_text;
        g_autofree char *text = cases[i].old ? variant(base, cases[i].old, cases[i].new)
                                             : g_strconcat(base, cases[i].new, NULL);
        GError *error = NULL;
        MsTopology *topo = load_text(text, &error);
        if (topo) {
            fprintf(stderr, "\n  case %u loaded\n", i);
        }
        CU_ASSERT_PTR_NULL(topo);
        ms_topology_free(topo);
        GQuark domain = cases[i].domain == TOPO ? MS_TOPOLOGY_ERROR : MS_INI_ERROR;
        MS_ASSERT_ERROR(error, domain, cases[i].code, cases[i].needle);
    }
}

static void
test_preset_errors(void)
{
    static const ErrorCase cases[] = {
        {0, "intra_bandwidth = 100GBps", "intra_bandwidth = 100", INI, MS_INI_ERROR_VALUE,
         "t.ini:14: [preset] intra_bandwidth: bandwidth '100' has no unit"},
        {0, "100GBps", "100GBs", INI, MS_INI_ERROR_VALUE,
         "t.ini:14: [preset] intra_bandwidth: bandwidth '100GBs': unknown unit 'GBs'"},
        {0, "intra_latency = 1us", "intra_latency = 1", INI, MS_INI_ERROR_VALUE,
         "t.ini:15: [preset] intra_latency: time '1' has no unit"},
        {0, "intra_bandwidth", "intra_bandwith", INI, MS_INI_ERROR_UNKNOWN_KEY,
         "t.ini:14: [preset] intra_bandwith: unknown key"},
        {0, "200Gbps", "0Gbps", INI, MS_INI_ERROR_VALUE,
         "t.ini:17: [preset] nic_bandwidth: '0Gbps' out of range (must be between 1 MB/s and 1 "
         "PB/s)"},
        {0, "200Gbps", "-5Gbps", INI, MS_INI_ERROR_VALUE,
         "t.ini:17: [preset] nic_bandwidth: '-5Gbps' out of range"},
        {0, "200Gbps", "1e30Gbps", INI, MS_INI_ERROR_VALUE,
         "t.ini:17: [preset] nic_bandwidth: '1e30Gbps' out of range"},
        {0, "200Gbps", "unlimited", INI, MS_INI_ERROR_VALUE,
         "t.ini:17: [preset] nic_bandwidth: bad bandwidth 'unlimited'"},
        {0, "intra_latency = 1us", "intra_latency = 5s", INI, MS_INI_ERROR_VALUE,
         "t.ini:15: [preset] intra_latency: '5s' out of range (must be between 0 s and 1 s)"},
        {0, "fabric = switch", "fabric = switch\nnccl_net_latency = 2ms", INI, MS_INI_ERROR_VALUE,
         "[preset] nccl_net_latency: '2ms' out of range (must be between 0 s and 1 ms)"},
        {0, "fabric = switch", "fabric = switch\nnccl_net_latency = 75", INI, MS_INI_ERROR_VALUE,
         "[preset] nccl_net_latency: time '75' has no unit"},
        {0, "nodes = 2", "nodes = 0", INI, MS_INI_ERROR_VALUE,
         "t.ini:11: [preset] nodes: '0' out of range (must be between 1 and 65536)"},
        {0, "nodes = 2", "nodes = 1000000000", INI, MS_INI_ERROR_VALUE,
         "t.ini:11: [preset] nodes: '1000000000' out of range"},
        {0, "gpus_per_node = 2", "gpus_per_node = 4294967296", INI, MS_INI_ERROR_VALUE,
         "t.ini:12: [preset] gpus_per_node: '4294967296' out of range"},
        {0, "nodes = 2", "nodes = 65536", TOPO, MS_TOPOLOGY_ERROR_INVALID,
         "t.ini:11: [preset] nodes: 65536 nodes x 2 GPUs is more than the 65536 GPUs"},
        {0, "nodes = 2", "nodes = two", INI, MS_INI_ERROR_VALUE,
         "t.ini:11: [preset] nodes: 'two' is not a non-negative integer"},
        {0, "nvswitch", "nvswich", INI, MS_INI_ERROR_VALUE,
         "t.ini:13: [preset] intra: 'nvswich' is not one of: none, nvswitch, nvlink_mesh, "
         "pcie_switch"},
        {0, "nics = per_gpu", "nics = per_rack", INI, MS_INI_ERROR_VALUE,
         "t.ini:16: [preset] nics: 'per_rack' is not one of"},
        {0, "fabric = switch", "fabric = torus", INI, MS_INI_ERROR_VALUE,
         "t.ini:19: [preset] fabric: 'torus' is not one of: switch, fat_tree"},
        {0, "intra = nvswitch", "intra = none", TOPO, MS_TOPOLOGY_ERROR_INVALID,
         "t.ini:13: [preset] intra: 'none' leaves the 2 GPUs of a node unconnected"},
        {0, "nics = per_gpu", "nics = none", TOPO, MS_TOPOLOGY_ERROR_INVALID,
         "t.ini:16: [preset] nics: 'none' leaves the 2 nodes unconnected"},
        {0, "fabric = switch\n", "", INI, MS_INI_ERROR_MISSING,
         "t.ini:10: [preset] fabric: required key is missing"},
        {0, NULL, "oversubscription = 2\n", TOPO, MS_TOPOLOGY_ERROR_INVALID,
         "t.ini:21: [preset] oversubscription: does not apply when fabric is not fat_tree"},
        {0, "fabric = switch", "fabric = fat_tree\noversubscription = 0.5\nnodes_per_leaf = 1", INI,
         MS_INI_ERROR_VALUE, "t.ini:20: [preset] oversubscription: '0.5' out of range"},
        {0, "fabric = switch", "fabric = fat_tree\nnodes_per_leaf = 0\noversubscription = 1", INI,
         MS_INI_ERROR_VALUE,
         "t.ini:20: [preset] nodes_per_leaf: '0' out of range (must be between 1 and 65536)"},
        {0, "nics = per_gpu", "nics = per_node", INI, MS_INI_ERROR_MISSING,
         "[preset] gpu_nic_bandwidth: required key is missing"},
        {0, "gpus_per_node = 2", "gpus_per_node = 1025", INI, MS_INI_ERROR_VALUE,
         "t.ini:12: [preset] gpus_per_node: '1025' out of range"},
        {0, "format = 1", "format = 2", INI, MS_INI_ERROR_VALUE,
         "t.ini:2: [topology] format: format 2 is not supported"},
        {0, "peak = 1TFLOPS", "peak = 312", INI, MS_INI_ERROR_VALUE,
         "t.ini:6: [gpu] peak: compute rate '312' has no unit"},
        {0, "peak = 1TFLOPS", "peak = 1TFLOPS\npeak_fp32 = 15.7", INI, MS_INI_ERROR_VALUE,
         "t.ini:7: [gpu] peak_fp32: compute rate '15.7' has no unit"},
        {0, "peak = 1TFLOPS", "peak = 1TFLOPS\npeak_fp8 = 0TFLOPS", INI, MS_INI_ERROR_VALUE,
         "t.ini:7: [gpu] peak_fp8: '0TFLOPS' out of range (must be between 1 GFLOPS and 1 EFLOPS)"},
        {0, "peak = 1TFLOPS", "peak = 1TFLOPS\npeak_fp64 = 1TFLOPS", INI, MS_INI_ERROR_UNKNOWN_KEY,
         "t.ini:7: [gpu] peak_fp64: unknown key"},
        {0, "memory = 1GB", "memory = 0GB", INI, MS_INI_ERROR_VALUE,
         "t.ini:8: [gpu] memory: '0GB' out of range (must be between 1 MiB and 1 PiB)"},
        {0, "hbm = 1TBps", "hbn = 1TBps", INI, MS_INI_ERROR_UNKNOWN_KEY,
         "t.ini:7: [gpu] hbn: unknown key"},
        {0, "[gpu]", "[gpus]", INI, MS_INI_ERROR_UNKNOWN_KEY, "t.ini:4: [gpus]: unknown group"},
        {0, NULL, "[device x]\nkind = gpu\nnode = 0\n", TOPO, MS_TOPOLOGY_ERROR_INVALID,
         "t.ini:21: [device x]: a topology is either a [preset] or [device]/[link] groups"},
        {0, "name = t\n", "name =\n", INI, MS_INI_ERROR_VALUE,
         "t.ini:3: [topology] name: must not be empty"},
        {0, "name = t\n", "", INI, MS_INI_ERROR_MISSING,
         "t.ini:1: [topology] name: required key is missing"},
    };
    run_error_cases(cases, G_N_ELEMENTS(cases));
}

static void
test_explicit_errors(void)
{
    static const ErrorCase cases[] = {
        {1, "[link g1 sw]", "[link g1 sx]", TOPO, MS_TOPOLOGY_ERROR_INVALID,
         "t.ini:23: [link g1 sx]: unknown device 'sx'"},
        {1, "[device sw]", "[device  g1]", TOPO, MS_TOPOLOGY_ERROR_INVALID,
         "t.ini:16: [device  g1]: device 'g1' is already defined at line 13"},
        {1, "[device sw]", "[device g1]", INI, MS_INI_ERROR_DUPLICATE,
         "t.ini:16: group [device g1] given twice (first at line 13)"},
        {1, "[link g1 sw]\n", "[link g1 sw]\nbidirectional = false\n", TOPO,
         MS_TOPOLOGY_ERROR_UNREACHABLE, "t.ini:10: [device g0]: GPU g0 cannot reach GPU g1"},
        {1, NULL, "[link sw g1]\nclass = nvswitch\nbandwidth = 1GBps\nlatency = 1us\n", TOPO,
         MS_TOPOLOGY_ERROR_INVALID,
         "t.ini:27: [link sw g1]: link sw->g1 is already defined at line 23"},
        {1, "[device g1]\nkind = gpu\nnode = 0", "[device g1]\nkind = gpu\nnode = 2", TOPO,
         MS_TOPOLOGY_ERROR_INVALID, "t.ini:15: [device g1] node: node 1 has no GPU"},
        {1, "kind = gpu\nnode = 0\n", "kind = gpu\n", INI, MS_INI_ERROR_MISSING,
         "t.ini:10: [device g0] node: required for a gpu"},
        {1, "kind = gpu", "kind = gpus", INI, MS_INI_ERROR_VALUE,
         "t.ini:11: [device g0] kind: 'gpus' is not one of: gpu, nic, switch, cpu"},
        {1, "node = 0", "node = 65536", INI, MS_INI_ERROR_VALUE,
         "t.ini:12: [device g0] node: '65536' out of range"},
        {1, "[device g0]", "[device g/0]", TOPO, MS_TOPOLOGY_ERROR_INVALID,
         "t.ini:10: [device g/0]: bad device name 'g/0'"},
        {1, "class = nvswitch", "class = nvswtch", INI, MS_INI_ERROR_VALUE,
         "t.ini:20: [link g0 sw] class: 'nvswtch' is not one of: nvlink, nvswitch, pcie"},
        {1, "latency = 1us", "latency = 1us\ncount = 0", INI, MS_INI_ERROR_VALUE,
         "t.ini:23: [link g0 sw] count: '0' out of range"},
        {1, "latency = 1us", "latency = 1us\ncount = 100000", INI, MS_INI_ERROR_VALUE,
         "t.ini:23: [link g0 sw] count: '100000' out of range"},
        {1, "latency = 1us", "latency = 1us\nbidirectional = sometimes", INI, MS_INI_ERROR_VALUE,
         "t.ini:23: [link g0 sw] bidirectional: 'sometimes' is not a boolean"},
        {1, "bandwidth = 100GBps", "bandwidth = 0GBps", INI, MS_INI_ERROR_VALUE,
         "t.ini:21: [link g0 sw] bandwidth: '0GBps' out of range"},
        {1, "bandwidth = 100GBps", "bandwidth = 100", INI, MS_INI_ERROR_VALUE,
         "t.ini:21: [link g0 sw] bandwidth: bandwidth '100' has no unit"},
        {1, "bandwidth = 100GBps", "bandwith = 100GBps", INI, MS_INI_ERROR_UNKNOWN_KEY,
         "t.ini:21: [link g0 sw] bandwith: unknown key"},
        {1, "[link g0 sw]", "[link g0 g0]", TOPO, MS_TOPOLOGY_ERROR_INVALID,
         "t.ini:19: [link g0 g0]: a link joins two different devices, not 'g0' to itself"},
        {1, "[link g0 sw]", "[link g0]", INI, MS_INI_ERROR_UNKNOWN_KEY,
         "t.ini:19: [link g0]: unknown group"},
        {1, "kind = switch\nnode = 0", "kind = switch\nnode = 1", TOPO, MS_TOPOLOGY_ERROR_INVALID,
         "t.ini:18: [device sw] node: node 1 has no GPU"},
        {1, NULL, "[route g0 g1]\npath = g0;sw;gx\n", TOPO, MS_TOPOLOGY_ERROR_INVALID,
         "t.ini:28: [route g0 g1] path: unknown device 'gx'"},
        {1, NULL, "[route g0 g1]\npath = g0;sw;g0;sw;g1\n", TOPO, MS_TOPOLOGY_ERROR_INVALID,
         "t.ini:28: [route g0 g1] path: 'g0;sw;g0;sw;g1' visits GPU g0 twice (steps 1 and 3)"},
        {1, NULL, "[route g0 g1]\npath = g0;g1\n", TOPO, MS_TOPOLOGY_ERROR_INVALID,
         "t.ini:28: [route g0 g1] path: no link g0->g1 in 'g0;g1'"},
        {1, NULL, "[route g0 g1]\npath = g0;sw\n", TOPO, MS_TOPOLOGY_ERROR_INVALID,
         "t.ini:28: [route g0 g1] path: 'g0;sw' must run from g0 to g1"},
        {1, NULL, "[route g0 gz]\npath = g0;sw\n", TOPO, MS_TOPOLOGY_ERROR_INVALID,
         "t.ini:27: [route g0 gz]: unknown device 'gz'"},
        {1, NULL, "[route g0 g1]\npath = g0;sw;g1\n[route  g0 g1]\npath = g0;sw;g1\n", TOPO,
         MS_TOPOLOGY_ERROR_INVALID,
         "t.ini:29: [route  g0 g1]: route g0 -> g1 given twice "
         "(first at line 27)"},
        {1, NULL, "[route g0 g1]\nlinks = g0;sw;g1\n", INI, MS_INI_ERROR_UNKNOWN_KEY,
         "t.ini:28: [route g0 g1] links: unknown key"},
    };
    run_error_cases(cases, G_N_ELEMENTS(cases));
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(load_text(HEAD, &error));
    MS_ASSERT_ERROR(error, MS_INI_ERROR, MS_INI_ERROR_MISSING,
                    "t.ini: no [preset] group and no [device NAME] groups");
    CU_ASSERT_PTR_NULL(load_text("[gpu]\n", &error));
    MS_ASSERT_ERROR(error, MS_INI_ERROR, MS_INI_ERROR_MISSING, "t.ini: missing group [topology]");
    const char sw_only[] = HEAD "[device sw]\nkind = switch\n";
    CU_ASSERT_PTR_NULL(load_text(sw_only, &error));
    MS_ASSERT_ERROR(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_INVALID,
                    "t.ini:1: [topology]: no [device] of kind gpu");
    /* Regression: the preset form's GPU limits did not hold for explicit graphs. */
    for (guint k = 0; k < 2; k++) {
        g_autoptr(GString) many = g_string_new(HEAD);
        for (guint i = 0; i <= (k ? 65536 : 1024); i++) {
            g_string_append_printf(many, "[device g%u]\nkind = gpu\nnode = %u\n", i,
                                   k ? i / 1024 : 0);
        }
        CU_ASSERT_PTR_NULL(load_text(many->str, &error));
        MS_ASSERT_ERROR(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_INVALID,
                        k ? "t.ini:196618: [device g65536]: more than 65536 GPUs"
                          : "t.ini:3084: [device g1024] node: more than 1024 GPUs in node 0");
    }
}

static void
test_load_by_name(void)
{
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_topology_load("dgx-b300", &error));
    MS_ASSERT_ERROR(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_UNKNOWN,
                    "unknown topology 'dgx-b300': no such file, and no shipped topology has that "
                    "name (shipped: dgx-a100, dgx-a100-128node");
    CU_ASSERT_PTR_NULL(ms_topology_load("nowhere/x.ini", &error));
    MS_ASSERT_ERROR(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_UNKNOWN,
                    "nowhere/x.ini: no such topology file");
    g_autofree char *path = ms_test_write_tmp("two.ini", preset_text);
    g_autoptr(MsTopology) topo = ms_topology_load(path, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(topo);
    CU_ASSERT_EQUAL(ms_topology_n_gpus(topo), 4);
    CU_ASSERT_STRING_EQUAL(ms_topology_description(topo), "");
    g_autofree char *bad_text = variant(preset_text, "nodes = 2", "nodes = 0");
    g_autofree char *bad = ms_test_write_tmp("bad.ini", bad_text);
    CU_ASSERT_PTR_NULL(ms_topology_load(bad, &error));
    g_autofree char *where = g_strdup_printf("%s:11: [preset] nodes: '0' out of range", bad);
    MS_ASSERT_ERROR(error, MS_INI_ERROR, MS_INI_ERROR_VALUE, where);
}

static void
test_cli(void)
{
    g_autofree char *out = NULL, *err = NULL;
    const char *list[] = {"topo", "list", NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(list, &out, &err), 0);
    /* The name column is as wide as the longest name. */
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "dgx-a100-128node        1024    128"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "dgx-h100-256node-2to1   2048    256"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "dgx1-v100"));
    g_clear_pointer(&out, g_free);
    g_clear_pointer(&err, g_free);

    const char *show[] = {"topo", "show", "dgx-a100", NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(show, &out, &err), 0);
    static const char *const figures[] = {
        "A100-SXM4-80GB: 312 TFLOPS peak",
        "nvswitch        16     300 GB/s     700 ns",
        "nic              8      25 GB/s     600 ns",
        "injection   300 GB/s per GPU",
        "bisection   1.3 TB/s (GPUs 0-3 to 4-7",
        "n0.nic7",
        "devices     18: 8 gpu, 8 nic",
    };
    for (guint i = 0; i < G_N_ELEMENTS(figures); i++) {
        if (strstr(out, figures[i]) == NULL) {
            fprintf(stderr, "\n  output lacks '%s':\n%s", figures[i], out);
            CU_FAIL("topo show output");
        }
    }
    g_clear_pointer(&out, g_free);
    g_clear_pointer(&err, g_free);

    const char *json[] = {"topo", "show", "dgx-a100-2node", "--json", "-", "--links", NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(json, &out, &err), 0);
    g_autoptr(JsonParser) parser = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(parser, out, -1, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(parser));
    CU_ASSERT_EQUAL(json_object_get_int_member(o, "gpus"), 16);
    CU_ASSERT_EQUAL(json_object_get_double_member(o, "bisection_bandwidth"), 200e9);
    CU_ASSERT_EQUAL(json_object_get_double_member(o, "injection_bandwidth_min"), 25e9);
    CU_ASSERT_EQUAL(json_array_get_length(json_object_get_array_member(o, "link_list")), 96);
    g_clear_pointer(&out, g_free);
    g_clear_pointer(&err, g_free);

    g_autofree char *bad_text =
        variant(preset_text, "intra_bandwidth = 100GBps", "intra_bandwidth = 100");
    g_autofree char *bad = ms_test_write_tmp("cli-bad.ini", bad_text);
    const char *show_bad[] = {"topo", "show", bad, NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(show_bad, &out, &err), 2);
    g_autofree char *want = g_strdup_printf("moesim: %s:14: [preset] intra_bandwidth: bandwidth "
                                            "'100' has no unit",
                                            bad);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
    g_clear_pointer(&out, g_free);
    g_clear_pointer(&err, g_free);

    const char *usage[] = {"topo", "shoe", "dgx-a100", NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(usage, &out, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "expected 'list' or 'show NAME|FILE'"));
    g_clear_pointer(&out, g_free);
    g_clear_pointer(&err, g_free);

    const char *source[] = {"topo", "show", "h200", "--source", NULL};
    CU_ASSERT_EQUAL(ms_test_run_moesim(source, &out, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "peak = 989TFLOPS"));
}

/* Performance sanity (printed, never asserted): every GPU pair of the 1024-GPU topology. */
static void
test_route_speed(void)
{
    gint64 t0 = g_get_monotonic_time();
    g_autoptr(MsTopology) topo = load_ok("dgx-a100-128node");
    gint64 t1 = g_get_monotonic_time();
    guint n_gpus = ms_topology_n_gpus(topo);
    guint64 hops = 0;
    for (guint s = 0; s < n_gpus; s++) {
        for (guint d = 0; d < n_gpus; d++) {
            guint n = 0;
            ms_topology_gpu_route(topo, s, d, &n, NULL);
            hops += n;
        }
    }
    gint64 t2 = g_get_monotonic_time();
    for (guint s = 0; s < n_gpus; s++) {
        for (guint d = 0; d < n_gpus; d++) {
            guint n = 0;
            hops += ms_topology_gpu_route(topo, s, d, &n, NULL) != NULL;
        }
    }
    gint64 t3 = g_get_monotonic_time();
    /* 1024 x 8 pairs inside a node (2 links) and 1024 x 1016 across (4 links). */
    CU_ASSERT_EQUAL(hops, 1024ull * 7 * 2 + 1024ull * 1016 * 4 + 1024ull * 1024);
    fprintf(stderr,
            "\n  dgx-a100-128node: load %.1f ms, %u^2 routes first %.1f ms, cached %.1f ms\n",
            (t1 - t0) / 1e3, n_gpus, (t2 - t1) / 1e3, (t3 - t2) / 1e3);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"shipped topologies load with their counts", test_shipped},
        {"shipped figures and explicit links", test_figures},
        {"preset routes: intra, per_gpu, per_node, fat tree", test_preset_routes},
        {"route rules: hops, bandwidth, latency, index, given, NIC", test_route_rules},
        {"route cache: stable pointers, unreachable devices", test_route_cache},
        {"routes from four threads", test_route_threads},
        {"injection and bisection closed forms", test_injection_bisection},
        {"calibration overrides by class", test_set_class},
        {"preset and header errors", test_preset_errors},
        {"explicit and route errors", test_explicit_errors},
        {"load by name or path", test_load_by_name},
        {"moesim topo", test_cli},
        {"route speed (printed)", test_route_speed},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"topology", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
