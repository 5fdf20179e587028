/* Fuzz target: flow lists (ms_flow_list_load_data) against the shipped dgx-a100-2node machine;
 * short lists are then replayed on the flow-level network: every flow must begin, end after it
 * begins, and start no earlier than its start time and its dependencies' ends. */
#include <stdlib.h>

#include "fuzz.h"
#include "sim/net/flowfile.h"

#define RUN_MAX_FLOWS 1024

static void
replay(const MsFlowList *list, const MsTopology *topo)
{
    guint n = ms_flow_list_len(list);
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    ms_sim_set_check_invariants(sim, TRUE);
    g_autofree MsTime *begin = g_new(MsTime, MAX(n, 1));
    g_autofree MsTime *end = g_new(MsTime, MAX(n, 1));
    GError *error = NULL;
    if (!ms_flow_list_run(list, sim, begin, end, &error)) {
        /* A loaded list is acyclic: only a pair of devices without a route, or a chain of
         * flows that outlasts the clock, may stop it. */
        if (!g_error_matches(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_UNREACHABLE) &&
            !g_error_matches(error, MS_SIM_ERROR, MS_SIM_ERROR_CLOCK)) {
            abort();
        }
        g_clear_error(&error);
        return;
    }
    for (guint i = 0; i < n; i++) {
        if (begin[i] == MS_TIME_NEVER || end[i] < begin[i] ||
            begin[i] < ms_flow_list_start(list, i)) {
            abort();
        }
        guint nd = 0;
        const guint *deps = ms_flow_list_deps(list, i, &nd);
        for (guint k = 0; k < nd; k++) {
            if (begin[i] < end[deps[k]]) {
                abort();
            }
        }
    }
}

int
LLVMFuzzerTestOneInput(const guint8 *data, size_t size)
{
    static MsTopology *topo;
    if (topo == NULL) {
        topo = ms_topology_load("dgx-a100-2node", NULL);
    }
    GError *error = NULL;
    g_autoptr(MsFlowList) list =
        ms_flow_list_load_data((const char *)data, size, "fuzz.flows", topo, &error);
    if (list == NULL) {
        fuzz_refused(&error);
        return 0;
    }
    if (ms_flow_list_len(list) <= RUN_MAX_FLOWS) {
        replay(list, topo);
    }
    return 0;
}
