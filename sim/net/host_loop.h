/* host_loop: the host side of a benchmark loop in which one thread drives several GPUs, as
 * nccl-tests does with -g G (one process, one thread, G GPUs): each iteration the thread calls
 * NCCL once per GPU inside one group, and the launches are asynchronous, so in steady state an
 * iteration takes the longer of the collective's device time and the host time of its calls.
 * Times are seconds (double). It leaves out what differs between calls (a first call's setup, a
 * CUDA graph's replay): the per-GPU cost is one figure (docs/collectives.md, "One thread, several
 * GPUs"). */
#pragma once

#include <glib.h>

#include "sim/net/net_model.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

/* The most GPUs one thread drives: nccl-tests' -g is bounded by the GPUs of the process's host;
 * 1024 is 14 times the largest NVLink domain moesim models (GB200 NVL72). */
#define MS_HOST_LOOP_MAX_GPUS 1024u

/* The host time of one NCCL call on one GPU inside a group, its kernel launch included, seconds:
 * the spec's host_us when it is set (a calibration's, or given), else the topology's
 * [gpu] launch_overhead (one kernel launch: NCCL launches one kernel per communicator per group).
 * spec may be NULL (the flow model has no key for it). */
double ms_host_loop_call_cost(const MsNetSpec *spec, const MsTopology *topo);

/* One iteration's time when one thread drives gpus_per_thread GPUs: max(device_s,
 * gpus_per_thread x call_cost_s) for two GPUs or more; device_s for 0 or 1 (one process per GPU,
 * as NCCL recommends: its one call per iteration is in the latencies NCCL's tuning charges,
 * which were measured so, and a thread of its own hides it behind the previous kernel). */
double ms_host_loop_iteration(double device_s, guint gpus_per_thread, double call_cost_s);

G_END_DECLS
