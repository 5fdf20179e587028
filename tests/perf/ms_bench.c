/* ms_bench: helpers of the benchmarks (see ms_bench.h). Linux figures: /proc and CPU clocks. */
#include "ms_bench.h"

#include <string.h>
#include <time.h>

guint64
ms_bench_status_kib(const char *key)
{
    g_autofree char *status = NULL;
    if (!g_file_get_contents("/proc/self/status", &status, NULL, NULL)) {
        return 0;
    }
    const char *p = strstr(status, key);
    return p ? g_ascii_strtoull(p + strlen(key), NULL, 10) : 0;
}

double
ms_bench_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

char *
ms_bench_dgx_a100_ini(guint nodes)
{
    return g_strdup_printf(
        "[topology]\nformat = 1\nname = bench-%unode\n"
        "description = %u x DGX A100 nodes on a non-blocking rail fabric\n"
        "[gpu]\nmodel = A100-SXM4-80GB\npeak = 312TFLOPS\nhbm = 2039GBps\nmemory = 80GiB\n"
        "launch_overhead = 4us\n"
        "[preset]\nnodes = %u\ngpus_per_node = 8\nintra = nvswitch\nintra_bandwidth = 300GBps\n"
        "intra_latency = 0.7us\nnics = per_gpu\nnic_bandwidth = 200Gbps\nnic_latency = 0.6us\n"
        "fabric = switch\nfabric_latency = 0.13us\n",
        nodes, nodes, nodes);
}
