/* Fuzz target: topology files (ms_topology_load_data), then, for machines small enough to walk in
 * a fuzzing iteration, every GPU-to-GPU route, the injection and the bisection bandwidth. Checks
 * that a route runs from its source to its destination over existing links. */
#include <math.h>
#include <stdlib.h>

#include "fuzz.h"
#include "topologies/topology.h"

/* Larger machines load but are not walked: a fuzzing iteration must stay well under a second. */
#define WALK_MAX_GPUS 64
#define WALK_MAX_DEVICES 512

static void
check_route(const MsTopology *topo, guint src, guint dst)
{
    GError *error = NULL;
    guint n = 0;
    const guint32 *route = ms_topology_gpu_route(topo, src, dst, &n, &error);
    if (route == NULL) {
        if (error == NULL) {
            abort();
        }
        g_clear_error(&error);
        return;
    }
    guint at = ms_topology_gpu_device(topo, src);
    for (guint k = 0; k < n; k++) {
        if (route[k] >= ms_topology_n_links(topo)) {
            abort();
        }
        const MsLink *link = ms_topology_link(topo, route[k]);
        if (link->from != at || !(link->bandwidth > 0)) {
            abort();
        }
        at = link->to;
    }
    if (at != ms_topology_gpu_device(topo, dst) || (src == dst) != (n == 0)) {
        abort();
    }
    ms_topology_route_latency(topo, route, n);
    ms_topology_route_bandwidth(topo, route, n);
}

int
LLVMFuzzerTestOneInput(const guint8 *data, size_t size)
{
    GError *error = NULL;
    g_autoptr(MsTopology) topo =
        ms_topology_load_data((const char *)data, size, "fuzz.ini", &error);
    if (topo == NULL) {
        fuzz_refused(&error);
        return 0;
    }
    guint n = ms_topology_n_gpus(topo);
    if (n == 0 || n > WALK_MAX_GPUS || ms_topology_n_devices(topo) > WALK_MAX_DEVICES) {
        return 0;
    }
    for (guint a = 0; a < n; a++) {
        for (guint b = 0; b < n; b++) {
            check_route(topo, a, b);
        }
        if (!(ms_topology_injection_bandwidth(topo, a) >= 0)) {
            abort();
        }
    }
    if (n > 1 && !(ms_topology_bisection_bandwidth(topo) > 0)) {
        abort();
    }
    return 0;
}
