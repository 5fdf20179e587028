/* Tests of the network models: specs and their errors, NCCL's link figures, connection weights,
 * NCCL's route through an intermediate GPU, and collectives under the nccl model against NCCL's
 * own prediction and against closed forms of message-weighted sharing. */
#include "ms_test.h"
#include "sim/net/collective.h"
#include "sim/net/net_model.h"

static MsNetSpec
parse_ok(const char *text)
{
    MsNetSpec spec;
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_net_spec_parse(text, &spec, &error));
    if (error) {
        fprintf(stderr, "\n  %s: %s\n", text, error->message);
        g_clear_error(&error);
    }
    return spec;
}

static void
test_spec_parse(void)
{
    MsNetSpec s = parse_ok("flow");
    CU_ASSERT_EQUAL(s.kind, MS_NET_FLOW);
    s = parse_ok("nccl");
    CU_ASSERT_EQUAL(s.kind, MS_NET_NCCL);
    CU_ASSERT_EQUAL(s.nccl.version, 0);
    CU_ASSERT_EQUAL(s.message_exponent, 1.0);
    s = parse_ok("nccl:version=2.10.3,arch=sm80,cpu=amd,algo=ring,proto=ll+simple,"
                 "min_channels=2,max_channels=8,net_peer_channels=2,arbitration=connection");
    CU_ASSERT_EQUAL(s.nccl.version, MS_NCCL_VERSION(2, 10, 3));
    CU_ASSERT_EQUAL(s.nccl.arch, 80);
    CU_ASSERT_TRUE(s.nccl.amd_cpu);
    CU_ASSERT_EQUAL(s.nccl.algo_mask, 1u << MS_NCCL_ALGO_RING);
    CU_ASSERT_EQUAL(s.nccl.proto_mask, (1u << MS_NCCL_PROTO_LL) | (1u << MS_NCCL_PROTO_SIMPLE));
    CU_ASSERT_EQUAL(s.nccl.min_channels, 2);
    CU_ASSERT_EQUAL(s.nccl.max_channels, 8);
    CU_ASSERT_EQUAL(s.nccl.net_peer_channels, 2);
    CU_ASSERT_EQUAL(s.message_exponent, 0.0);
    g_autofree char *text = ms_net_spec_to_string(&s);
    CU_ASSERT_STRING_EQUAL(text, "nccl:version=2.10.3,arch=sm80,cpu=amd,algo=ring,"
                                 "proto=LL+Simple,min_channels=2,max_channels=8,"
                                 "net_peer_channels=2,message_exponent=0");
    MsNetSpec back = parse_ok(text);
    CU_ASSERT_EQUAL(memcmp(&back, &s, sizeof s), 0);
    s = parse_ok("nccl:message_exponent=0.5");
    CU_ASSERT_EQUAL(s.message_exponent, 0.5);
    MsNetSpec d;
    ms_net_spec_init(&d);
    d.kind = MS_NET_NCCL;
    g_autofree char *dflt = ms_net_spec_to_string(&d);
    CU_ASSERT_STRING_EQUAL(dflt, "nccl");
    s = parse_ok("nccl:latency_scale=1.5,ll_efficiency=0.5,simple_efficiency=0.9,net_efficiency="
                 "0.25");
    CU_ASSERT_EQUAL(s.latency_scale, 1.5);
    CU_ASSERT_EQUAL(s.net_efficiency, 0.25);
    CU_ASSERT_EQUAL(s.proto_efficiency[MS_NCCL_PROTO_LL], 0.5);
    CU_ASSERT_EQUAL(s.proto_efficiency[MS_NCCL_PROTO_LL128], 1.0);
    CU_ASSERT_EQUAL(s.proto_efficiency[MS_NCCL_PROTO_SIMPLE], 0.9);
    g_autofree char *fitted = ms_net_spec_to_string(&s);
    /* No version given: none printed, so that the spec runs at its GPUs' default again. */
    CU_ASSERT_STRING_EQUAL(fitted, "nccl:latency_scale=1.5,net_efficiency=0.25,ll_efficiency=0.5,"
                                   "simple_efficiency=0.9");
    MsNetSpec again = parse_ok(fitted);
    CU_ASSERT_EQUAL(memcmp(&again, &s, sizeof s), 0);
}

/* A version is printed as given, or as its shortest spelling that parses to the same code: "2.10"
 * stands for the newest patch of 2.10 (code 21099), and "2.10.99" would read as a release NCCL
 * never made. Every spelling reads back to the same code. */
static void
test_spec_version_spelling(void)
{
    static const struct {
        const char *given, *printed;
    } cases[] = {
        {"nccl:version=2.10", "nccl:version=2.10"},
        {"nccl:version=2.10.99", "nccl:version=2.10"},
        {"nccl:version=2.10.0", "nccl:version=2.10.0"},
        {"nccl:version=2.10.3", "nccl:version=2.10.3"},
        {"nccl:version=21003", "nccl:version=2.10.3"},
        {"nccl:version=2.30", "nccl:version=2.30"},
        {"nccl:version=2.18.6", "nccl:version=2.18.6"},
        {"nccl:version=log,latency_scale=2", "nccl:version=log,latency_scale=2"},
        {"nccl:version=2.10,tree=ring-flows", "nccl:version=2.10,tree=ring-flows"},
        {"nccl:version=2.10,tree=edges", "nccl:version=2.10"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        MsNetSpec s = parse_ok(cases[i].given);
        g_autofree char *text = ms_net_spec_to_string(&s);
        CU_ASSERT_STRING_EQUAL(text, cases[i].printed);
        MsNetSpec back = parse_ok(text);
        CU_ASSERT_EQUAL(back.nccl.version, s.nccl.version);
        CU_ASSERT_EQUAL(back.tree_ring_flows, s.tree_ring_flows);
    }
}

static void
test_spec_errors(void)
{
    static const struct {
        const char *text, *needle;
    } bad[] = {
        {"nccl2", "unknown network model 'nccl2' (flow, nccl)"},
        {"flow:version=2.10", "network model flow takes no keys"},
        {"nccl:version", "'version' is not key=value"},
        {"nccl:version=", "'version=' is not key=value"},
        {"nccl:version=2.7", "key 'version': '2.7' is not an NCCL version from 2.8"},
        {"nccl:version=2.31", "key 'version': '2.31'"},
        {"nccl:version=logs", "'logs' is not an NCCL version from 2.8 to 2.30 (2.18, 2.18.6 or "
                              "21806) nor log (each measured row at its log's)"},
        {"nccl:speed=3", "network model nccl has no key 'speed'"},
        {"nccl:arch=sm8", "key 'arch': '8' is not a whole number in [60, 120]"},
        {"nccl:cpu=arm", "key 'cpu': 'arm' is not intel or amd"},
        {"nccl:algo=collnet",
         "key 'algo': unknown name 'collnet' (ring, tree, nvls, nvlstree, joined by +)"},
        {"nccl:proto=ll256", "key 'proto': unknown name 'll256'"},
        {"nccl:max_channels=65", "key 'max_channels': '65' is not a whole number in [1, 64]"},
        {"nccl:min_channels=4,max_channels=2", "min_channels 4 is above max_channels 2"},
        {"nccl:arbitration=fair", "'fair' is not message or connection"},
        {"nccl:tree=rings", "key 'tree': 'rings' is not edges or ring-flows"},
        {"nccl:message_exponent=2", "'2' is not a number in [0, 1]"},
        {"nccl:latency_scale=-1", "key 'latency_scale': '-1' is not a number in [0, 100]"},
        {"nccl:ll128_efficiency=0", "key 'll128_efficiency': '0' is not a number in [0.01, 1.5]"},
        {"nccl:net_efficiency=2", "key 'net_efficiency': '2' is not a number in [0.01, 1.5]"},
        {"nccl:version=2.10,version=2.12", "key 'version' is given twice"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        MsNetSpec spec;
        GError *error = NULL;
        CU_ASSERT_FALSE(ms_net_spec_parse(bad[i].text, &spec, &error));
        MS_ASSERT_ERROR(error, MS_NET_MODEL_ERROR, MS_NET_MODEL_ERROR_SPEC, bad[i].needle);
    }
}

static MsTopology *
load(const char *name)
{
    GError *error = NULL;
    MsTopology *t = ms_topology_load(name, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    return t;
}

static MsNetModel *
model(const char *spec_text, const MsTopology *topo)
{
    MsNetSpec spec = parse_ok(spec_text);
    GError *error = NULL;
    MsNetModel *m = ms_net_model_new(&spec, topo, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    return m;
}

/* NVLink and NVSwitch links at NCCL's per-link figure times their count, PCIe by NCCL's lane
 * rate, NICs and unlimited links as they are; the flow model keeps every nominal figure. */
static void
test_link_figures(void)
{
    g_autoptr(MsTopology) topo = load("dgx-a100-2node");
    g_autoptr(MsNetModel) flow = model("flow", topo);
    g_autoptr(MsNetModel) nccl = model("nccl:version=2.18", topo);
    guint nvswitch = 0, nic = 0;
    for (guint l = 0; l < ms_topology_n_links(topo); l++) {
        const MsLink *link = ms_topology_link(topo, l);
        CU_ASSERT_EQUAL(ms_net_model_link_bandwidth(flow, l), link->bandwidth);
        double got = ms_net_model_link_bandwidth(nccl, l);
        if (link->klass == MS_LINK_NVSWITCH) {
            MS_ASSERT_REL(got, ms_topology_link_count(topo, l) * ms_nccl_nvlink_bw(80, 21806) * 1e9,
                          1e-12);
            CU_ASSERT(got < link->bandwidth);
            nvswitch++;
        } else if (link->klass == MS_LINK_NIC) {
            CU_ASSERT_EQUAL(got, link->bandwidth);
            nic++;
        }
    }
    CU_ASSERT(nvswitch > 0 && nic > 0);
    MS_ASSERT_REL(ms_nccl_pci_bw(31.5), 24.0, 0.01);

    MsNetSpec spec = parse_ok("nccl");
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    g_autoptr(MsNetModel) applied = ms_net_model_new(&spec, topo, NULL);
    ms_net_model_apply(applied, sim);
    for (guint l = 0; l < ms_topology_n_links(topo); l++) {
        CU_ASSERT_EQUAL(ms_network_link_bandwidth(ms_sim_network(sim), l),
                        ms_net_model_link_bandwidth(applied, l));
    }
}

static void
test_weights_and_comms(void)
{
    g_autoptr(MsTopology) topo = load("dgx-a100");
    g_autoptr(MsNetModel) m = model("nccl", topo);
    MS_ASSERT_REL(ms_net_model_message_weight(m, MS_NET_REFERENCE_MESSAGE), 1.0, 1e-12);
    MS_ASSERT_REL(ms_net_model_message_weight(m, 1 << 20), 16.0, 1e-12);
    MS_ASSERT_REL(ms_net_model_message_weight(m, 32 << 10), 0.5, 1e-12);
    g_autoptr(MsNetModel) half = model("nccl:message_exponent=0.5", topo);
    MS_ASSERT_REL(ms_net_model_message_weight(half, 1 << 20), 4.0, 1e-12);
    g_autoptr(MsNetModel) fair = model("nccl:arbitration=connection", topo);
    CU_ASSERT_EQUAL(ms_net_model_message_weight(fair, 1 << 20), 1.0);

    /* One communicator per rank set, kept. */
    GError *error = NULL;
    const MsNcclComm *a = ms_net_model_comm(m, NULL, 8, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    guint ranks[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    CU_ASSERT_PTR_EQUAL(ms_net_model_comm(m, ranks, 8, &error), a);
    const MsNcclComm *b = ms_net_model_comm(m, ranks, 4, &error);
    CU_ASSERT_PTR_NOT_NULL(b);
    CU_ASSERT_PTR_NOT_EQUAL(a, b);
    CU_ASSERT_EQUAL(a->n_ranks, 8);
    CU_ASSERT_EQUAL(b->n_ranks, 4);
    g_autoptr(MsNetModel) flow = model("flow", topo);
    CU_ASSERT_PTR_NULL(ms_net_model_comm(flow, NULL, 8, &error));
    CU_ASSERT_PTR_NULL(error);
}

static void
test_unknown_arch(void)
{
    g_autofree char *path = ms_test_write_tmp(
        "odd-gpu.ini", "[topology]\nformat = 1\nname = odd\n[gpu]\nmodel = Mystery-1\n"
                       "peak = 100TFLOPS\nhbm = 1000GBps\nmemory = 16GiB\n"
                       "launch_overhead = 4us\n[preset]\nnodes = 1\ngpus_per_node = 2\n"
                       "intra = nvswitch\nintra_bandwidth = 100GBps\nintra_links = 4\n"
                       "intra_latency = 1us\n");
    g_autoptr(MsTopology) topo = load(path);
    MsNetSpec spec = parse_ok("nccl");
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_net_model_new(&spec, topo, &error));
    MS_ASSERT_ERROR(error, MS_NCCL_ERROR, MS_NCCL_ERROR_ARCH, "'Mystery-1'");
    spec = parse_ok("nccl:arch=80");
    g_autoptr(MsNetModel) m = ms_net_model_new(&spec, topo, &error);
    CU_ASSERT_PTR_NOT_NULL(m);
}

/* An NVLink bundle without its count: 300 GB/s as one link would be counted by NCCL as a single
 * 20 GB/s NVLink. Refused under nccl naming the file and the link; with its 12 links, under the
 * flow model, and at the fastest NVLink's 50 GB/s per link (GB200's 900 over 18) it is taken. */
static void
test_nvlink_count(void)
{
    static const char head[] = "[topology]\nformat = 1\nname = t\n[gpu]\nmodel = A100-SXM4-80GB\n"
                               "peak = 312TFLOPS\nhbm = 2039GBps\nmemory = 80GiB\n"
                               "launch_overhead = 4us\n[preset]\nnodes = 1\ngpus_per_node = 2\n"
                               "intra = nvswitch\nintra_latency = 1us\n";
    static const struct {
        const char *figures;
        gboolean ok;
    } cases[] = {
        {"intra_bandwidth = 300GBps\n", FALSE},
        {"intra_bandwidth = 300GBps\nintra_links = 5\n", FALSE},
        {"intra_bandwidth = 300GBps\nintra_links = 12\n", TRUE},
        {"intra_bandwidth = 900GBps\nintra_links = 18\n", TRUE},
        {"intra_bandwidth = 50GBps\n", TRUE},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *text = g_strconcat(head, cases[i].figures, NULL);
        g_autofree char *path = ms_test_write_tmp("nvlinks.ini", text);
        g_autoptr(MsTopology) topo = load(path);
        CU_ASSERT_STRING_EQUAL(ms_topology_source(topo), path);
        MsNetSpec spec = parse_ok("nccl");
        GError *error = NULL;
        g_autoptr(MsNetModel) m = ms_net_model_new(&spec, topo, &error);
        CU_ASSERT_EQUAL(m != NULL, cases[i].ok);
        if (!cases[i].ok) {
            MS_ASSERT_ERROR(error, MS_NCCL_ERROR, MS_NCCL_ERROR_TOPOLOGY,
                            "link gpu0->n0.nvswitch carries 300 GB/s over");
        }
        g_autoptr(MsNetModel) flow = model("flow", topo);
    }
    g_autoptr(MsTopology) shipped = load("dgx-a100");
    CU_ASSERT_STRING_EQUAL(ms_topology_source(shipped), "topology dgx-a100");
}

/* A spec without a version runs at 2.18.6, except on Blackwell, where 2.25.1 is the first release
 * with its figures: GB200's 18 NVLinks count 18 x 40 GB/s there, 18 x 20 (Hopper's) at 2.18.6. */
static void
test_default_version(void)
{
    g_autoptr(MsTopology) hopper = load("dgx-h100");
    g_autoptr(MsTopology) blackwell = load("gb200-nvl72");
    g_autoptr(MsNetModel) h = model("nccl", hopper);
    g_autoptr(MsNetModel) b = model("nccl", blackwell);
    g_autoptr(MsNetModel) b_log = model("nccl:version=log", blackwell);
    g_autoptr(MsNetModel) b_old = model("nccl:version=2.18.6", blackwell);
    CU_ASSERT_EQUAL(ms_net_model_nccl_version(h), MS_NCCL_VERSION(2, 18, 6));
    CU_ASSERT_EQUAL(ms_net_model_nccl_version(b), MS_NCCL_VERSION(2, 25, 1));
    CU_ASSERT_EQUAL(ms_net_model_nccl_version(b_log), MS_NCCL_VERSION(2, 25, 1));
    CU_ASSERT_EQUAL(ms_net_model_nccl_version(b_old), MS_NCCL_VERSION(2, 18, 6));
    g_autofree char *text = ms_net_spec_to_string(ms_net_model_spec(b));
    CU_ASSERT_STRING_EQUAL(text, "nccl:version=2.25.1,arch=sm100");
    guint n = 0;
    const guint32 *route = ms_topology_gpu_route(blackwell, 0, 1, &n, NULL);
    CU_ASSERT_FATAL(route != NULL && n > 0);
    MS_ASSERT_REL(ms_net_model_link_bandwidth(b, route[0]), 18 * 40e9, 1e-12);
    MS_ASSERT_REL(ms_net_model_link_bandwidth(b_old, route[0]), 18 * 20e9, 1e-12);
}

/* dgx1-v100: GPUs 0 and 5 have no NVLink; NCCL goes through a GPU joined to both (1 or 4), and
 * 0 and 3 (a double link) stay direct. The flow model keeps the PCIe/QPI route. */
static void
test_nvb_route(void)
{
    g_autoptr(MsTopology) topo = load("dgx1-v100");
    g_autoptr(MsNetModel) m = model("nccl", topo);
    guint g0 = ms_topology_gpu_device(topo, 0), g5 = ms_topology_gpu_device(topo, 5);
    guint g3 = ms_topology_gpu_device(topo, 3);
    guint n = 0, n_topo = 0;
    GError *error = NULL;
    const guint32 *r = ms_net_model_route(m, g0, g5, &n, &error);
    const guint32 *t = ms_topology_route(topo, g0, g5, &n_topo, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_EQUAL(ms_topology_link(topo, r[0])->klass, MS_LINK_NVLINK);
    CU_ASSERT_EQUAL(ms_topology_link(topo, r[1])->klass, MS_LINK_NVLINK);
    CU_ASSERT_EQUAL(ms_topology_link(topo, r[0])->from, g0);
    CU_ASSERT_EQUAL(ms_topology_link(topo, r[1])->to, g5);
    guint via = ms_topology_link(topo, r[0])->to;
    CU_ASSERT(via == ms_topology_gpu_device(topo, 1) || via == ms_topology_gpu_device(topo, 4));
    CU_ASSERT(n_topo > 2);
    CU_ASSERT_PTR_EQUAL(ms_net_model_route(m, g0, g5, &n, &error), r);
    const guint32 *d = ms_net_model_route(m, g0, g3, &n, &error);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_PTR_EQUAL(d, ms_topology_route(topo, g0, g3, &n_topo, &error));
    g_autoptr(MsNetModel) flow = model("flow", topo);
    CU_ASSERT_PTR_EQUAL(ms_net_model_route(flow, g0, g5, &n, &error), t);
}

static MsTime run_alone(const MsTopology *topo, MsNetModel *net, MsCollSpec spec);

/* A small rail-optimised tree whose spines carry a quarter of the leaves' NIC ports. */
static const char rail_tree[] =
    "[topology]\nformat = 1\nname = rails\n[gpu]\nmodel = H100-SXM5-80GB\npeak = 989TFLOPS\n"
    "hbm = 3350GBps\nmemory = 80GiB\nlaunch_overhead = 4us\n[preset]\nnodes = 4\n"
    "gpus_per_node = 4\nintra = nvswitch\nintra_bandwidth = 450GBps\nintra_links = 18\n"
    "intra_latency = 0.7us\nnics = per_gpu\nnic_bandwidth = 400Gbps\nnic_latency = 0.6us\n"
    "fabric = fat_tree\nfabric_latency = 0.13us\nnodes_per_leaf = 4\nrail_optimised = true\n"
    "oversubscription = 4\n";

/* PXN (from 2.12.7): a send to another node crosses NVLink to the GPU on the destination's rail
 * and leaves by its NIC, so it stays on its rail's leaf; before 2.12 it leaves by the sender's own
 * NIC and crosses a spine. Rings keep their own NICs. */
static void
test_pxn_route(void)
{
    g_autoptr(MsTopology) topo =
        ms_topology_load_data(rail_tree, sizeof rail_tree - 1, "rails", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(topo);
    g_autoptr(MsNetModel) pxn = model("nccl:version=2.18", topo);
    g_autoptr(MsNetModel) old = model("nccl:version=2.10", topo);
    guint src = ms_topology_gpu_device(topo, 1), dst = ms_topology_gpu_device(topo, 4 + 2);
    guint proxy = ms_topology_gpu_device(topo, 2);
    guint n = 0, n_old = 0;
    const guint32 *r = ms_net_model_p2p_route(pxn, src, dst, &n, NULL);
    const guint32 *r_old = ms_net_model_p2p_route(old, src, dst, &n_old, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    gboolean via_proxy = FALSE, spine = FALSE, spine_old = FALSE;
    for (guint i = 0; i < n; i++) {
        via_proxy |= ms_topology_link(topo, r[i])->to == proxy;
        spine |= strstr(ms_topology_link(topo, r[i])->name, "spine") != NULL;
    }
    for (guint i = 0; i < n_old; i++) {
        spine_old |= strstr(ms_topology_link(topo, r_old[i])->name, "spine") != NULL;
    }
    CU_ASSERT_TRUE(via_proxy);
    CU_ASSERT_FALSE(spine);
    CU_ASSERT_TRUE(spine_old);
    /* The same rail needs no PXN; rings keep the topology's route. */
    guint same = ms_topology_gpu_device(topo, 4 + 1);
    guint n_same = 0, n_topo = 0;
    CU_ASSERT_PTR_EQUAL(ms_net_model_p2p_route(pxn, src, same, &n_same, NULL),
                        ms_topology_route(topo, src, same, &n_topo, NULL));
    CU_ASSERT_PTR_EQUAL(ms_net_model_route(pxn, src, dst, &n_same, NULL),
                        ms_topology_route(topo, src, dst, &n_topo, NULL));
    /* On the oversubscribed spines the all-to-all is faster with PXN. */
    MsCollSpec spec = {.op = MS_COLL_ALLTOALL, .n_ranks = 16, .bytes = 64 << 20};
    double t_pxn = ms_time_to_us(run_alone(topo, pxn, spec));
    double t_old = ms_time_to_us(run_alone(topo, old, spec));
    fprintf(stderr,
            "\n  64 MiB all-to-all on 4 x 4 GPUs, 4:1 spines: %.0f us with PXN, %.0f without",
            t_pxn, t_old);
    CU_ASSERT(t_pxn < 0.8 * t_old);
}

/* Runs one collective alone from time 0; the time of its last rank. */
static MsTime
run_alone(const MsTopology *topo, MsNetModel *net, MsCollSpec spec)
{
    spec.net = net;
    GError *error = NULL;
    MsTime end = 0;
    gboolean ok = ms_coll_run_alone(topo, &spec, &end, &error);
    if (!ok) {
        fprintf(stderr, "\n  %s\n", error->message);
        g_clear_error(&error);
    }
    CU_ASSERT_TRUE_FATAL(ok);
    return end;
}

/* Where nothing contends, a ring under the nccl model takes what NCCL's tuning model predicts
 * for the algorithm and protocol it chose: its latency, and the size over its bandwidth. The
 * channels and the links at NCCL's figures give a Simple ring the bandwidth NCCL's search found,
 * and the other protocols follow from their wire factor. */
static void
test_ring_matches_nccl_prediction(void)
{
    static const char *const topos[] = {"dgx-a100", "dgx-a100-2node", "lina-testbed"};
    static const char *const versions[] = {"nccl:version=2.10", "nccl:version=2.18",
                                           "nccl:version=2.22"};
    static const guint64 sizes[] = {8192, 1 << 20, 64 << 20, 1ull << 30};
    for (guint t = 0; t < G_N_ELEMENTS(topos); t++) {
        g_autoptr(MsTopology) topo = load(topos[t]);
        for (guint v = 0; v < G_N_ELEMENTS(versions); v++) {
            g_autoptr(MsNetModel) net = model(versions[v], topo);
            for (guint s = 0; s < G_N_ELEMENTS(sizes); s++) {
                MsCollSpec spec = {
                    .op = MS_COLL_ALLREDUCE,
                    .n_ranks = ms_topology_n_gpus(topo),
                    .bytes = sizes[s],
                };
                const MsNcclComm *comm = ms_net_model_comm(net, NULL, spec.n_ranks, NULL);
                MsNcclChoice ch;
                CU_ASSERT_TRUE_FATAL(ms_nccl_choose(comm, spec.op, spec.bytes, &ch));
                double got = ms_time_to_us(run_alone(topo, net, spec));
                if (fabs(got / ch.cost.time_us - 1) > 0.03) {
                    fprintf(stderr, "\n  %s %s %" G_GUINT64_FORMAT " B: %s/%s %.2f us, NCCL %.2f",
                            topos[t], versions[v], sizes[s], ms_nccl_algo_name(ch.algo),
                            ms_nccl_proto_name(ch.proto), got, ch.cost.time_us);
                }
                MS_ASSERT_REL(got, ch.cost.time_us, 0.03);
            }
        }
    }
}

/* A calibration's factors act where they should: the latency scale on NCCL's whole latency, a
 * protocol's efficiency on the time it spends moving bytes. */
static void
test_fitted_factors(void)
{
    g_autoptr(MsTopology) topo = load("dgx-a100");
    g_autoptr(MsNetModel) plain = model("nccl", topo);
    g_autoptr(MsNetModel) fitted = model("nccl:latency_scale=2,simple_efficiency=0.5", topo);
    const MsNcclComm *comm = ms_net_model_comm(plain, NULL, 8, NULL);
    static const guint64 sizes[] = {8, 1ull << 30};
    for (guint i = 0; i < G_N_ELEMENTS(sizes); i++) {
        MsCollSpec spec = {.op = MS_COLL_ALLREDUCE, .n_ranks = 8, .bytes = sizes[i]};
        MsNcclChoice ch;
        CU_ASSERT_TRUE_FATAL(ms_nccl_choose(comm, spec.op, spec.bytes, &ch));
        double lat = ch.cost.latency_us, move = ch.cost.time_us - lat;
        double factor = ch.proto == MS_NCCL_PROTO_SIMPLE ? 2.0 : 1.0;
        double got = ms_time_to_us(run_alone(topo, fitted, spec));
        MS_ASSERT_REL(got, 2 * lat + factor * move, 0.03);
    }
}

/* The network's efficiency slows the network's links only: a collective inside a node takes the
 * same time, one bound by the NICs (one GPU on each of two nodes, 1 GiB) moves its bytes at that
 * fraction of NCCL's rate, its latency and NCCL's choice unchanged. */
static void
test_net_efficiency(void)
{
    g_autoptr(MsTopology) node = load("dgx-a100");
    g_autoptr(MsNetModel) plain = model("nccl", node);
    g_autoptr(MsNetModel) slow = model("nccl:net_efficiency=0.25", node);
    MsCollSpec inside = {.op = MS_COLL_ALLREDUCE, .n_ranks = 8, .bytes = 1ull << 30};
    CU_ASSERT_EQUAL(run_alone(node, plain, inside), run_alone(node, slow, inside));

    g_autoptr(MsTopology) two = load("dgx-a100-2node");
    g_autoptr(MsNetModel) nominal = model("nccl", two);
    g_autoptr(MsNetModel) quarter = model("nccl:net_efficiency=0.25", two);
    static const guint ranks[] = {0, 8};
    MsCollSpec across = {
        .op = MS_COLL_ALLREDUCE, .n_ranks = 2, .ranks = ranks, .bytes = 1ull << 30};
    const MsNcclComm *comm = ms_net_model_comm(nominal, ranks, 2, NULL);
    MsNcclChoice ch;
    CU_ASSERT_TRUE_FATAL(ms_nccl_choose(comm, across.op, across.bytes, &ch));
    double lat = ch.cost.latency_us, move = ch.cost.time_us - lat;
    MS_ASSERT_REL(ms_time_to_us(run_alone(two, nominal, across)), lat + move, 0.03);
    MS_ASSERT_REL(ms_time_to_us(run_alone(two, quarter, across)), lat + 4 * move, 0.03);
    CU_ASSERT_EQUAL(ms_net_model_link_bandwidth(quarter, 0),
                    ms_net_model_link_bandwidth(nominal, 0));
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"specs: parse, print, read back", test_spec_parse},
        {"specs: a version prints as given or as its shortest spelling",
         test_spec_version_spelling},
        {"specs: every error names the key and value", test_spec_errors},
        {"nccl: the network's efficiency on its links only", test_net_efficiency},
        {"nccl: NCCL's link figures, applied to a network", test_link_figures},
        {"nccl: connection weights, one communicator per rank set", test_weights_and_comms},
        {"nccl: a GPU model of no known architecture", test_unknown_arch},
        {"nccl: an NVLink bundle needs its link count", test_nvlink_count},
        {"nccl: the default release follows the GPU's architecture", test_default_version},
        {"nccl: P2P through an intermediate GPU on a hybrid cube mesh", test_nvb_route},
        {"nccl: a ring alone takes NCCL's predicted time", test_ring_matches_nccl_prediction},
        {"nccl: PXN keeps a send on its rail", test_pxn_route},
        {"nccl: a calibration's latency scale and protocol efficiency", test_fitted_factors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"net_model", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
