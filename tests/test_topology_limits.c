/* Tests of the limits an explicit topology description is held to before it is parsed: one
 * [device] or [link] group more than docs/topology.md allows (2^18 and 2^19) is refused from a
 * count of the text's group headers, naming the source and both counts; at the limit, the count
 * lets the file through to the parser (which then finds what else is wrong with it). Then the
 * rule on given routes that loop. */
#include "ms_test.h"

#include "topologies/topology.h"

#define HEAD                                                                                       \
    "[topology]\nformat = 1\nname = t\n[gpu]\nmodel = X\npeak = 312TFLOPS\nhbm = 2TBps\n"          \
    "memory = 80GB\nlaunch_overhead = 4us\n"

static char *
groups(const char *word, guint n)
{
    GString *s = g_string_new(HEAD);
    for (guint i = 0; i < n; i++) {
        /* Indented headers count too: GKeyFile takes them. */
        g_string_append_printf(s, "%s[%s d%u x]\n", i % 2 ? "  " : "", word, i);
    }
    return g_string_free(s, FALSE);
}

static void
test_counted_before_parsing(void)
{
    GError *error = NULL;
    g_autofree char *devices = groups("device", (1u << 18) + 1);
    CU_ASSERT_PTR_NULL(ms_topology_load_data(devices, strlen(devices), "d.ini", &error));
    MS_ASSERT_ERROR(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_INVALID,
                    "d.ini: 262145 [device] and 0 [link] groups are more than moesim models "
                    "(at most 262144 and 524288)");
    g_autofree char *links = groups("link", (1u << 19) + 1);
    CU_ASSERT_PTR_NULL(ms_topology_load_data(links, strlen(links), "l.ini", &error));
    MS_ASSERT_ERROR(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_INVALID,
                    "l.ini: 0 [device] and 524289 [link] groups");
    /* At the limit the count passes: the parser answers (a [device] group with no keys). */
    g_autofree char *at = groups("device", 1u << 18);
    CU_ASSERT_PTR_NULL(ms_topology_load_data(at, strlen(at), "a.ini", &error));
    CU_ASSERT_PTR_NOT_NULL_FATAL(error);
    CU_ASSERT_PTR_NULL(strstr(error->message, "more than moesim models"));
    g_clear_error(&error);
    /* "[devices ...]" and "[linked ...]" are other groups, not counted. */
    g_autofree char *other = groups("devices", (1u << 18) + 1);
    CU_ASSERT_PTR_NULL(ms_topology_load_data(other, strlen(other), "o.ini", &error));
    CU_ASSERT_PTR_NOT_NULL_FATAL(error);
    CU_ASSERT_PTR_NULL(strstr(error->message, "more than moesim models"));
    g_clear_error(&error);
}

/* Two GPUs under one PCIe switch that reach each other through the host (NCCL's SHM path). */
#define SHM_BOX                                                                                    \
    HEAD "[device g0]\nkind = gpu\nnode = 0\n[device g1]\nkind = gpu\nnode = 0\n"                  \
         "[device sw]\nkind = switch\nnode = 0\n[device cpu]\nkind = cpu\nnode = 0\n"              \
         "[link g0 sw]\nclass = pcie\nbandwidth = 15.75GBps\nlatency = 0.5us\n"                    \
         "[link g1 sw]\nclass = pcie\nbandwidth = 15.75GBps\nlatency = 0.5us\n"                    \
         "[link sw cpu]\nclass = pcie\nbandwidth = 15.75GBps\nlatency = 0.5us\n"

/* A given route may come back to a switch (through the host and back) but never crosses one
 * directed link twice, nor passes a GPU twice: its flows would be charged twice there. */
static void
test_route_loops(void)
{
    GError *error = NULL;
    const char *shm = SHM_BOX "[route g0 g1]\npath = g0;sw;cpu;sw;g1\n";
    MsTopology *t = ms_topology_load_data(shm, strlen(shm), "shm.ini", &error);
    CU_ASSERT_PTR_NOT_NULL(t);
    ms_topology_free(t);
    g_clear_error(&error);
    const char *twice = SHM_BOX "[route g0 g1]\npath = g0;sw;cpu;sw;cpu;sw;g1\n";
    CU_ASSERT_PTR_NULL(ms_topology_load_data(twice, strlen(twice), "l.ini", &error));
    MS_ASSERT_ERROR(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_INVALID,
                    "[route g0 g1] path: 'g0;sw;cpu;sw;cpu;sw;g1' crosses link sw->cpu twice");
    const char *gpu = SHM_BOX "[route g0 g1]\npath = g0;sw;g0;sw;g1\n";
    CU_ASSERT_PTR_NULL(ms_topology_load_data(gpu, strlen(gpu), "g.ini", &error));
    MS_ASSERT_ERROR(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_INVALID, "visits GPU g0 twice");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"device and link groups counted before parsing", test_counted_before_parsing},
        {"given routes: back through a switch, never a link or GPU twice", test_route_loops},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"topology_limits", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
