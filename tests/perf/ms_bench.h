/* ms_bench: what the benchmarks in tests/perf share: the process's own figures (a line of
 * /proc/self/status, CPU time) and the DGX A100 cluster they simulate. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The value in KiB of a /proc/self/status line ("VmHWM:", "VmRSS:"); 0 when unreadable. */
guint64 ms_bench_status_kib(const char *key);

/* CPU seconds used by this process so far (waiting for a core on a shared machine not counted). */
double ms_bench_cpu_seconds(void);

/* Topology file text of `nodes` DGX A100 nodes (8 A100-SXM4-80GB on an NVSwitch, one 200 Gb/s
 * NIC per GPU) on a non-blocking switch: the cluster of the network and scenario benchmarks. */
char *ms_bench_dgx_a100_ini(guint nodes);

G_END_DECLS
