/* host_loop: max(device, G x per-call cost). The host's calls and the device's kernels overlap
 * (NCCL's calls return once the kernels are queued), so the slower of the two sets the pace of a
 * loop that never waits on the device inside it; nccl-tests synchronises only after its timed
 * iterations (src/common.cu, BenchTime). */
#include "host_loop.h"

double
ms_host_loop_call_cost(const MsNetSpec *spec, const MsTopology *topo)
{
    if (spec && spec->kind == MS_NET_NCCL && spec->host_us >= 0) {
        return spec->host_us * 1e-6;
    }
    return ms_time_to_s(ms_topology_gpu_spec(topo, 0)->launch_overhead);
}

double
ms_host_loop_iteration(double device_s, guint gpus_per_thread, double call_cost_s)
{
    if (gpus_per_thread < 2) {
        return device_s;
    }
    return MAX(device_s, (double)gpus_per_thread * call_cost_s);
}
