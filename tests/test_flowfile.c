/* Tests of flow lists: every field and option, forward references, every error path with its
 * code and FILE:LINE, and replays against closed forms on dgx-a100-2node (a NIC shared by two
 * flows, weights, dependency chains, start times, local and empty flows). */
#include "ms_test.h"
#include "sim/net/flowfile.h"
#include "sim/sim.h"
#include "topologies/topology.h"

static MsTopology *topo; /* dgx-a100-2node */

static const double NIC = 25e9;
static const double NVS = 300e9;

static int
suite_init(void)
{
    topo = ms_topology_load("dgx-a100-2node", NULL);
    return topo ? 0 : 1;
}

static int
suite_clean(void)
{
    g_clear_pointer(&topo, ms_topology_free);
    return 0;
}

static guint
dev(const char *name)
{
    guint d = G_MAXUINT;
    g_assert(ms_topology_find_device(topo, name, &d));
    return d;
}

/* Route latency between two devices, in seconds. */
static double
lat(const char *a, const char *b)
{
    guint n = 0;
    const guint32 *route = ms_topology_route(topo, dev(a), dev(b), &n, NULL);
    g_assert(route != NULL);
    return ms_time_to_s(ms_topology_route_latency(topo, route, n));
}

static MsFlowList *
parse(const char *text, GError **error)
{
    return ms_flow_list_load_data(text, strlen(text), "f.txt", topo, error);
}

static void
test_parse_fields(void)
{
    static const char text[] = "# id src dst bytes start [options]\n"
                               "\n"
                               "f1 gpu0 gpu8 25MB 0us   # a comment after the fields\n"
                               "f2\tgpu0\t\tgpu9  25MiB 1.5us weight=2.5\r\n"
                               "   f3 8 0 1K 2ms after=f1,f4\n"
                               "f4 n0.nic1 n1.nic0 3GB 0.5s weight=1e-6 after=f2\n"
                               "f5 gpu3 gpu3 0B 7ns\n"
                               "#f6 gpu0 gpu1 1MB 0us\n"
                               "f6 15 fabric 1TiB 1000000s weight=1e6\n";
    GError *error = NULL;
    g_autoptr(MsFlowList) l = parse(text, &error);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_EQUAL(ms_flow_list_len(l), 6);
    const char *ids[] = {"f1", "f2", "f3", "f4", "f5", "f6"};
    const char *srcs[] = {"gpu0", "gpu0", "gpu8", "n0.nic1", "gpu3", "gpu15"};
    const char *dsts[] = {"gpu8", "gpu9", "gpu0", "n1.nic0", "gpu3", "fabric"};
    const guint64 bytes[] = {25000000, 25 << 20, 1024, 3000000000, 0, G_GUINT64_CONSTANT(1) << 40};
    const MsTime starts[] = {0,          1500000,
                             2000000000, G_GUINT64_CONSTANT(500000000000),
                             7000,       G_GUINT64_CONSTANT(1000000000000000000)};
    const double weights[] = {1, 2.5, 1, 1e-6, 1, 1e6};
    for (guint i = 0; i < 6; i++) {
        CU_ASSERT_STRING_EQUAL(ms_flow_list_id(l, i), ids[i]);
        CU_ASSERT_EQUAL(ms_flow_list_src(l, i), dev(srcs[i]));
        CU_ASSERT_EQUAL(ms_flow_list_dst(l, i), dev(dsts[i]));
        CU_ASSERT_EQUAL(ms_flow_list_bytes(l, i), bytes[i]);
        CU_ASSERT_EQUAL(ms_flow_list_start(l, i), starts[i]);
        CU_ASSERT_EQUAL(ms_flow_list_weight(l, i), weights[i]);
    }
    guint n = 99;
    const guint *deps = ms_flow_list_deps(l, 2, &n);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_EQUAL(deps[0], 0);
    CU_ASSERT_EQUAL(deps[1], 3); /* a forward reference */
    deps = ms_flow_list_deps(l, 3, &n);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_EQUAL(deps[0], 1);
    ms_flow_list_deps(l, 0, &n);
    CU_ASSERT_EQUAL(n, 0);

    /* Empty and comment-only files are empty lists. */
    g_autoptr(MsFlowList) empty = parse("# nothing\n\n   \n", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(empty);
    CU_ASSERT_EQUAL(ms_flow_list_len(empty), 0);
    g_autoptr(MsFlowList) none = ms_flow_list_load_data("", 0, NULL, topo, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(none);
    CU_ASSERT_EQUAL(ms_flow_list_len(none), 0);
    /* Regression: in a list without any after= the dependency array has no data, and the
     * pointer was taken at an offset from NULL (undefined behaviour, reported by UBSan). */
    g_autoptr(MsFlowList) free_flows = parse("a 0 1 1MB 0us\nb 1 0 1MB 0us\n", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(free_flows);
    n = 99;
    CU_ASSERT_PTR_NULL(ms_flow_list_deps(free_flows, 1, &n));
    CU_ASSERT_EQUAL(n, 0);
}

static void
expect(const char *text, int code, const char *needle)
{
    GError *error = NULL;
    MsFlowList *l = parse(text, &error);
    CU_ASSERT_PTR_NULL(l);
    if (l) {
        fprintf(stderr, "\n  accepted: %s\n", text);
        ms_flow_list_free(l);
        return;
    }
    MS_ASSERT_ERROR(error, MS_FLOWFILE_ERROR, code, needle);
}

static void
test_errors(void)
{
    static const struct {
        const char *text;
        int code;
        const char *needle;
    } cases[] = {
        {"f1 gpu0 gpu1 1MB\n", MS_FLOWFILE_ERROR_SYNTAX,
         "f.txt:1: expected: ID SRC DST BYTES START [weight=W] [after=ID,...]; got 4 fields"},
        {"# c\nf1\n", MS_FLOWFILE_ERROR_SYNTAX,
         "f.txt:2: expected: ID SRC DST BYTES START "
         "[weight=W] [after=ID,...]; got 1 field"},
        {"f1 gpu0 gpu1 100 0us\n", MS_FLOWFILE_ERROR_SYNTAX,
         "f.txt:1: bytes: size '100' has no unit"},
        {"f1 gpu0 gpu1 100X 0us\n", MS_FLOWFILE_ERROR_SYNTAX,
         "f.txt:1: bytes: size '100X': unknown unit 'X'"},
        {"f1 gpu0 gpu1 1mb 0us\n", MS_FLOWFILE_ERROR_SYNTAX,
         "bytes: size '1mb': unknown unit 'mb'"},
        {"f1 gpu0 gpu1 1MB 5\n", MS_FLOWFILE_ERROR_SYNTAX, "f.txt:1: start: time '5' has no unit"},
        {"f1 gpu0 gpu1 1MB 5 weight=1\n", MS_FLOWFILE_ERROR_SYNTAX, "start: time '5' has no unit"},
        {"f1 gpu0 gpu1 1MB 5min\n", MS_FLOWFILE_ERROR_SYNTAX, "start: time '5min': unknown unit"},
        {"f1 gpu0 gpu1 -1MB 0us\n", MS_FLOWFILE_ERROR_SYNTAX,
         "f.txt:1: bytes: '-1MB' out of range (must be between 0 B and 1 PiB)"},
        {"f1 gpu0 gpu1 2000TB 0us\n", MS_FLOWFILE_ERROR_SYNTAX, "bytes: '2000TB' out of range"},
        {"f1 gpu0 gpu1 1e300B 0us\n", MS_FLOWFILE_ERROR_SYNTAX, "bytes: '1e300B' out of range"},
        {"f1 gpu0 gpu1 1.5B 0us\n", MS_FLOWFILE_ERROR_SYNTAX,
         "bytes: size '1.5B' is not a whole number of bytes"},
        {"f1 gpu0 gpu1 nanB 0us\n", MS_FLOWFILE_ERROR_SYNTAX, "bytes: bad size 'nanB'"},
        {"f1 gpu0 gpu1 1MB -1us\n", MS_FLOWFILE_ERROR_SYNTAX,
         "f.txt:1: start: '-1us' out of range"},
        {"f1 gpu0 gpu1 1MB 2e6s\n", MS_FLOWFILE_ERROR_SYNTAX, "start: '2e6s' out of range"},
        {"f1 gpuX gpu1 1MB 0us\n", MS_FLOWFILE_ERROR_UNKNOWN,
         "f.txt:1: source: unknown device 'gpuX' in topology 'dgx-a100-2node'"},
        {"f1 gpu0 n2.nic0 1MB 0us\n", MS_FLOWFILE_ERROR_UNKNOWN,
         "f.txt:1: destination: unknown device 'n2.nic0'"},
        {"f1 gpu0 16 1MB 0us\n", MS_FLOWFILE_ERROR_UNKNOWN,
         "f.txt:1: destination: GPU rank 16 out of range (topology 'dgx-a100-2node' has 16 GPUs)"},
        {"f1 -1 gpu0 1MB 0us\n", MS_FLOWFILE_ERROR_UNKNOWN, "source: unknown device '-1'"},
        {"f1 gpu0 gpu1 1MB 0us prio=3\n", MS_FLOWFILE_ERROR_SYNTAX,
         "f.txt:1: unknown option 'prio=3' (expected weight=W or after=ID[,ID...])"},
        {"f1 gpu0 gpu1 1MB 0us 7\n", MS_FLOWFILE_ERROR_SYNTAX, "unknown option '7'"},
        {"f1 gpu0 gpu1 1MB 0us weight=0\n", MS_FLOWFILE_ERROR_SYNTAX,
         "f.txt:1: weight: '0' out of range (must be between 1e-06 and 1e+06)"},
        {"f1 gpu0 gpu1 1MB 0us weight=2x\n", MS_FLOWFILE_ERROR_SYNTAX,
         "weight: '2x' is not a number"},
        {"f1 gpu0 gpu1 1MB 0us weight=2 weight=3\n", MS_FLOWFILE_ERROR_SYNTAX,
         "f.txt:1: weight= given twice"},
        {"f1 gpu0 gpu1 1MB 0us\nf2 gpu0 gpu1 1MB 0us after=f1 after=f1\n", MS_FLOWFILE_ERROR_SYNTAX,
         "f.txt:2: after= given twice"},
        {"f1 gpu0 gpu1 1MB 0us after=\n", MS_FLOWFILE_ERROR_SYNTAX, "f.txt:1: after: no flow id"},
        {"f1 gpu0 gpu1 1MB 0us\nf2 gpu0 gpu1 1MB 0us after=f1,,f1\n", MS_FLOWFILE_ERROR_SYNTAX,
         "f.txt:2: after: empty flow id in 'f1,,f1'"},
        {"f1 gpu0 gpu1 1MB 0us\n#\nf1 gpu2 gpu1 1MB 0us\n", MS_FLOWFILE_ERROR_DUPLICATE,
         "f.txt:3: flow id 'f1' already used at line 1"},
        {"f1 gpu0 gpu1 1MB 0us\nf2 gpu0 gpu1 1MB 0us after=f1,zz\n", MS_FLOWFILE_ERROR_UNKNOWN,
         "f.txt:2: after: unknown flow id 'zz'"},
        {"f1 gpu0 gpu1 1MB 0us after=f1\n", MS_FLOWFILE_ERROR_CYCLE,
         "f.txt:1: flow 'f1' depends on itself through its after= chain (f1 after f1)"},
        /* w waits for the cycle b -> c -> b but is not on it: the message names b or c. */
        {"w gpu0 gpu1 1MB 0us after=a\na gpu0 gpu1 1MB 0us after=b\n"
         "b gpu0 gpu1 1MB 0us after=c\nc gpu0 gpu1 1MB 0us after=b\n",
         MS_FLOWFILE_ERROR_CYCLE,
         "f.txt:3: flow 'b' depends on itself through its after= chain (b after c after b)"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        expect(cases[i].text, cases[i].code, cases[i].needle);
    }
    /* A long cycle is abbreviated. */
    g_autoptr(GString) ring = g_string_new(NULL);
    for (guint i = 0; i < 12; i++) {
        g_string_append_printf(ring, "r%u gpu0 gpu1 1MB 0us after=r%u\n", i, (i + 1) % 12);
    }
    expect(ring->str, MS_FLOWFILE_ERROR_CYCLE,
           "f.txt:1: flow 'r0' depends on itself through its after= chain (r0 after r1 after r2 "
           "after r3 after r4 after r5 after r6 after r7 after r8 after ... after r0)");
    /* Too many dependencies: 65 ids. */
    g_autoptr(GString) many = g_string_new("f1 gpu0 gpu1 1MB 0us\nf2 gpu0 gpu1 1MB 0us after=f1");
    for (guint i = 1; i < 65; i++) {
        g_string_append(many, ",f1");
    }
    expect(many->str, MS_FLOWFILE_ERROR_LIMIT, "f.txt:2: after: 65 flow ids, at most 64 allowed");
    /* 64 are fine. */
    g_string_truncate(many, many->len - 3);
    GError *error = NULL;
    g_autoptr(MsFlowList) ok = parse(many->str, &error);
    CU_ASSERT_PTR_NOT_NULL(ok);
    CU_ASSERT_PTR_NULL(error);
    /* A NUL byte, with its line. */
    static const char bin[] = "f1 gpu0 gpu1 1MB 0us\nf2 gpu0\0 gpu1 1MB 0us\n";
    CU_ASSERT_PTR_NULL(ms_flow_list_load_data(bin, sizeof bin - 1, "b.bin", topo, &error));
    MS_ASSERT_ERROR(error, MS_FLOWFILE_ERROR, MS_FLOWFILE_ERROR_SYNTAX,
                    "b.bin:2: contains a NUL byte (binary file?)");
    /* A file that cannot be read. */
    CU_ASSERT_PTR_NULL(ms_flow_list_load_file("/nonexistent/flows.txt", topo, &error));
    MS_ASSERT_ERROR(error, MS_FLOWFILE_ERROR, MS_FLOWFILE_ERROR_IO, "/nonexistent/flows.txt");
}

static void
test_unreachable(void)
{
    GError *error = NULL;
    /* g1 links to switch x, but GPUs do not forward: g0 cannot reach x. */
    g_autofree char *path =
        g_build_filename(ms_test_srcdir(), "tests", "data", "unreachable.ini", NULL);
    g_autoptr(MsTopology) u = ms_topology_load(path, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(u);
    static const char text[] = "a g0 g1 1MB 0us\nb g0 x 1MB 0us after=a\n";
    CU_ASSERT_PTR_NULL(ms_flow_list_load_data(text, strlen(text), "u.txt", u, &error));
    MS_ASSERT_ERROR(error, MS_FLOWFILE_ERROR, MS_FLOWFILE_ERROR_UNREACHABLE,
                    "u.txt:2: u: no route from g0 to x");
    /* Built in code, the same flow fails in the replay, named; no flow starts after it. */
    g_autoptr(MsFlowList) l = ms_flow_list_new(u);
    guint g0 = 0, g1 = 0, x = 0;
    CU_ASSERT_TRUE(ms_topology_find_device(u, "g0", &g0) && ms_topology_find_device(u, "g1", &g1) &&
                   ms_topology_find_device(u, "x", &x));
    guint bad = ms_flow_list_add(l, "bad", g0, x, 1000, 0, 1, NULL, 0);
    ms_flow_list_add(l, "next", g0, g1, 1000, 0, 1, &bad, 1);
    ms_flow_list_add(l, NULL, g1, g0, 1000, 0, 1, NULL, 0);
    MsTime begin[3], end[3];
    g_autoptr(MsSim) sim = ms_sim_new(u);
    CU_ASSERT_FALSE(ms_flow_list_run(l, sim, begin, end, &error));
    MS_ASSERT_ERROR(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_UNREACHABLE,
                    "flow 'bad': u: no route from g0 to x");
    CU_ASSERT_EQUAL(begin[1], MS_TIME_NEVER);
    CU_ASSERT_EQUAL(end[1], MS_TIME_NEVER);
    CU_ASSERT_EQUAL(end[2], MS_TIME_NEVER);
}

typedef struct {
    MsTime begin[16], end[16];
    guint n;
} Replay;

static void
replay(const char *text, Replay *r)
{
    GError *error = NULL;
    g_autoptr(MsFlowList) l = parse(text, &error);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    r->n = ms_flow_list_len(l);
    g_assert(r->n <= 16);
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    ms_sim_set_check_invariants(sim, TRUE);
    CU_ASSERT_TRUE(ms_flow_list_run(l, sim, r->begin, r->end, &error));
    CU_ASSERT_PTR_NULL(error);
}

static double
s_(MsTime t)
{
    return ms_time_to_s(t);
}

static void
test_replay_closed_forms(void)
{
    double ax = lat("gpu0", "gpu8"), ai = lat("gpu0", "gpu1");
    MS_ASSERT_REL(ax, 1.33e-6, 1e-9);
    MS_ASSERT_REL(ai, 1.4e-6, 1e-9);
    Replay r;
    /* Alone: latency, then 25 MB at 25 GB/s through the NICs. Inside the node: 300 GB/s. */
    replay("a gpu0 gpu8 25MB 0us\nb gpu1 gpu2 300MB 0us\n", &r);
    CU_ASSERT_EQUAL(r.begin[0], 0);
    MS_ASSERT_REL(s_(r.end[0]), ax + 1e-3, 1e-9);
    MS_ASSERT_REL(s_(r.end[1]), ai + 1e-3, 1e-9);
    /* Two flows leave gpu0 through its NIC: half the rate each. */
    replay("a gpu0 gpu8 25MB 0us\nb gpu0 gpu9 25MB 0us\n", &r);
    MS_ASSERT_REL(s_(r.end[0]), ax + 2e-3, 1e-9);
    MS_ASSERT_REL(s_(r.end[1]), ax + 2e-3, 1e-9);
    /* Weights 3:1: a moves at 18.75 GB/s until done, then b alone at 25 GB/s. */
    replay("a gpu0 gpu8 25MB 0us weight=3\nb gpu0 gpu9 25MB 0us\n", &r);
    MS_ASSERT_REL(s_(r.end[0]), ax + 25e6 / 18.75e9, 1e-9);
    MS_ASSERT_REL(s_(r.end[1]), ax + 2e-3, 1e-9);
    /* A chain: b starts when a ends, c when b ends (and not before its own start time). */
    replay("c gpu8 gpu0 1MB 0us after=b\na gpu0 gpu8 25MB 0us\nb gpu8 gpu1 25MB 0us after=a\n"
           "d gpu2 gpu10 1MB 10ms after=a\n",
           &r);
    MS_ASSERT_REL(s_(r.end[1]), ax + 1e-3, 1e-9);
    CU_ASSERT_EQUAL(r.begin[2], r.end[1]);
    MS_ASSERT_REL(s_(r.end[2]), 2 * (ax + 1e-3), 1e-9);
    CU_ASSERT_EQUAL(r.begin[0], r.end[2]);
    MS_ASSERT_REL(s_(r.end[0]), 2 * (ax + 1e-3) + ax + 1e6 / NIC, 1e-9);
    CU_ASSERT_EQUAL(r.begin[3], ms_time_from_us(10000));
    MS_ASSERT_REL(s_(r.end[3]), 10e-3 + ax + 1e6 / NIC, 1e-9);
    /* A late start joins a running flow and takes its fair share from then on. */
    replay("a gpu0 gpu8 25MB 0us\nb gpu0 gpu9 25MB 500us\n", &r);
    CU_ASSERT_EQUAL(r.begin[1], ms_time_from_us(500));
    /* a moves 12.5 MB alone in the 500 us before b is active, the other 12.5 MB at half rate
     * (1 ms); b moves 12.5 MB meanwhile and the rest alone (0.5 ms). */
    MS_ASSERT_REL(s_(r.end[0]), 500e-6 + ax + 1e-3, 1e-9);
    MS_ASSERT_REL(s_(r.end[1]), 500e-6 + ax + 1.5e-3, 1e-9);
    /* Local and empty flows: a device to itself ends when it starts; 0 bytes after latency. */
    replay("a gpu3 gpu3 1GB 7us\nb gpu3 gpu12 0B 1us\nc 3 3 0B 0us after=b\n", &r);
    CU_ASSERT_EQUAL(r.begin[0], ms_time_from_us(7));
    CU_ASSERT_EQUAL(r.end[0], ms_time_from_us(7));
    MS_ASSERT_REL(s_(r.end[1]), 1e-6 + ax, 1e-9);
    CU_ASSERT_EQUAL(r.begin[2], r.end[1]);
    CU_ASSERT_EQUAL(r.end[2], r.end[1]);
}

/* The example shipped with the documentation does what docs/flows.md says. */
static void
test_documented_example(void)
{
    g_autofree char *path =
        g_build_filename(ms_test_srcdir(), "docs", "examples", "two-flows.txt", NULL);
    GError *error = NULL;
    g_autoptr(MsFlowList) l = ms_flow_list_load_file(path, topo, &error);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_EQUAL_FATAL(ms_flow_list_len(l), 3);
    MsTime begin[3], end[3];
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    CU_ASSERT_TRUE(ms_flow_list_run(l, sim, begin, end, &error));
    double ax = lat("gpu0", "gpu8");
    MS_ASSERT_REL(s_(end[0]), ax + 2 * 25e6 / NIC, 1e-9);
    MS_ASSERT_REL(s_(end[1]), ax + 2 * 25e6 / NIC, 1e-9);
    CU_ASSERT_EQUAL(begin[2], end[0]);
    MS_ASSERT_REL(s_(end[2] - begin[2]), ax + 1e6 / NIC, 1e-9);
}

/* Lists built in code replay like parsed ones; runs are deterministic. */
static void
test_built_in_code(void)
{
    g_autoptr(MsFlowList) l = ms_flow_list_new(topo);
    guint a = ms_flow_list_add(l, "a", dev("gpu0"), dev("gpu1"), 300000000, 0, 0, NULL, 0);
    guint b = ms_flow_list_add(l, NULL, dev("gpu1"), dev("gpu2"), 300000000, 0, 2, &a, 1);
    guint deps[] = {a, b};
    ms_flow_list_add(l, "c", dev("gpu2"), dev("gpu0"), 300000000, 0, 1, deps, 2);
    CU_ASSERT_EQUAL(ms_flow_list_weight(l, a), 1.0); /* weight 0 means 1 */
    CU_ASSERT_EQUAL(ms_flow_list_weight(l, b), 2.0);
    CU_ASSERT_PTR_NULL(ms_flow_list_id(l, b));
    MsTime begin[3], end[3], end2[3];
    for (guint run = 0; run < 2; run++) {
        g_autoptr(MsSim) sim = ms_sim_new(topo);
        CU_ASSERT_TRUE(ms_flow_list_run(l, sim, begin, run ? end2 : end, NULL));
    }
    CU_ASSERT_EQUAL(memcmp(end, end2, sizeof end), 0);
    double ai = lat("gpu0", "gpu1");
    MS_ASSERT_REL(s_(end[2]), 3 * (ai + 300e6 / NVS), 1e-9);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"every field and option, forward references", test_parse_fields},
        {"every parse error names file:line", test_errors},
        {"flows without a route", test_unreachable},
        {"replay closed forms", test_replay_closed_forms},
        {"the documented example", test_documented_example},
        {"lists built in code", test_built_in_code},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"flowfile", suite_init, suite_clean, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
