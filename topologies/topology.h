/* topology: the modelled machine. Devices (GPUs, NICs, switches, CPUs), directed links with a
 * bandwidth (bytes/s per direction, link count already multiplied in) and a latency, and the
 * routes between devices. Loaded from GKeyFile INI files (a preset form for common cluster shapes,
 * an explicit form for any graph; see docs/topology.md). Knows nothing of flows or time-varying
 * state: the network model builds on it. Routes are shortest paths unless the file gives them. */
#pragma once

#include <glib.h>

#include "sim/base/ranges.h"
#include "sim/base/dtype.h"
#include "sim/base/units.h"

G_BEGIN_DECLS

#define MS_TOPOLOGY_ERROR (ms_topology_error_quark())
GQuark ms_topology_error_quark(void);
typedef enum {
    MS_TOPOLOGY_ERROR_UNKNOWN,     /* no shipped topology of that name and no such file */
    MS_TOPOLOGY_ERROR_INVALID,     /* a value or structure that does not make a machine */
    MS_TOPOLOGY_ERROR_UNREACHABLE, /* no path between two devices that must talk */
} MsTopologyError;

typedef enum {
    MS_DEVICE_GPU,
    MS_DEVICE_NIC,
    MS_DEVICE_SWITCH, /* NVSwitch, PCIe switch, network switch */
    MS_DEVICE_CPU,    /* host root complex / socket */
} MsDeviceKind;

/* "gpu", "nic", "switch", "cpu" (the spelling of topology files). from_name returns FALSE for an
 * unknown name. */
const char *ms_device_kind_name(MsDeviceKind kind);
gboolean ms_device_kind_from_name(const char *name, MsDeviceKind *out);

/* Link classes group links for calibration (one fitted latency/bandwidth per class) and reports. */
typedef enum {
    MS_LINK_NVLINK,   /* direct GPU-GPU NVLink */
    MS_LINK_NVSWITCH, /* GPU <-> NVSwitch */
    MS_LINK_PCIE,     /* PCIe (GPU, NIC or switch to host / PCIe switch) */
    MS_LINK_CPU,      /* socket-to-socket interconnect */
    MS_LINK_NIC,      /* NIC <-> network (injection / ejection) */
    MS_LINK_FABRIC,   /* switch-to-switch links inside the network */
    MS_LINK_N_CLASSES,
} MsLinkClass;

const char *ms_link_class_name(MsLinkClass klass);
/* Returns FALSE for an unknown name. */
gboolean ms_link_class_from_name(const char *name, MsLinkClass *out);

typedef struct {
    const char *model;  /* e.g. "A100-SXM4-80GB" */
    MsFlops peak_flops; /* dense fp16/bf16 tensor-core peak (the file's `peak`) */
    MsBandwidth hbm_bandwidth;
    guint64 memory_bytes;
    MsTime launch_overhead; /* per kernel launch */
    /* Dense peak per datatype (the file's peak_fp32 ...), 0 where the file gives none. */
    MsFlops dtype_peak[MS_DTYPE_N];
} MsGpuSpec;

/* The dense peak a kernel computing in dtype runs at: the file's peak_DTYPE, else for fp16 and
 * bf16 the plain `peak` (the tensor-core figure it has always stood for). FALSE for fp32, tf32
 * and fp8 without their own key: pricing them at the fp16 peak would be 8 times too fast on a
 * V100, so they are never guessed. */
gboolean ms_gpu_spec_peak(const MsGpuSpec *spec, MsDtype dtype, MsFlops *out);

typedef struct {
    guint32 from, to;      /* device indices */
    MsBandwidth bandwidth; /* bytes/s in this direction, count x per-link bandwidth */
    MsTime latency;        /* paid once per flow that crosses it */
    MsLinkClass klass;
    const char *name; /* unique, e.g. "gpu3->nvswitch0" */
} MsLink;

typedef struct _MsTopology MsTopology;

/* A link's bandwidth (per physical link) wherever a file gives one (topologies, calibrations):
 * 1 MB/s is below 10 Mb/s Ethernet, 1 PB/s over 100 times the fastest HBM; rates the bandwidth
 * solver shares then stay within 9 decades of each other, and 1 PiB crosses the slowest link in
 * 36 years of modelled time, beyond the clock's 213 days only for transfers a model could not
 * make (the engine reports that). */
#define MS_TOPOLOGY_BANDWIDTH_MIN 1e6
#define MS_TOPOLOGY_BANDWIDTH_MAX 1e15

/* Every number a topology file carries, with its range (sim/base/ranges.h). */
const MsRangeTable *ms_topology_ranges(void);

/* Loads a shipped topology by name (e.g. "dgx-a100") or, when name_or_path names an existing
 * file or contains '/' or ends in ".ini", that file. Unknown names list the shipped ones in the
 * error. Every problem in a file is reported as FILE:LINE: [group] key: what is wrong.
 * Returns NULL with a MS_TOPOLOGY_ERROR or MS_INI_ERROR on failure. */
MsTopology *ms_topology_load(const char *name_or_path, GError **error);
/* Loads a shipped topology by name only: never opens a file, whatever the name looks like (a
 * name read from a schedule, which must not make moesim open a file it names). An unknown name
 * is MS_TOPOLOGY_ERROR_UNKNOWN listing the shipped ones. */
MsTopology *ms_topology_load_shipped(const char *name, GError **error);
/* Same from memory; source names the input in messages. */
MsTopology *ms_topology_load_data(const char *data, gsize len, const char *source, GError **error);
void ms_topology_free(MsTopology *topo);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsTopology, ms_topology_free)

/* Names of the shipped topologies, sorted; free with g_strfreev. */
char **ms_topology_list_shipped(void);
/* What `topo list` shows of a shipped topology (its GPUs, nodes and description; free the
 * description with g_free) without building its devices and links where it is a [preset]: the
 * 16,384-GPU fat tree takes some 60 ms to build. An unknown name fails as
 * ms_topology_load_shipped does. */
gboolean ms_topology_shipped_summary(const char *name, guint *gpus, guint *nodes,
                                     char **description, GError **error);
/* Text of a shipped topology file (for `topo show --source`), NULL when unknown. */
GBytes *ms_topology_shipped_data(const char *name);

const char *ms_topology_name(const MsTopology *topo);
const char *ms_topology_description(const MsTopology *topo);
/* What messages about the topology name it by: the file it was read from, "topology NAME" for a
 * shipped one, else (built in memory without a source) its name. */
const char *ms_topology_source(const MsTopology *topo);

guint ms_topology_n_devices(const MsTopology *topo);
const char *ms_topology_device_name(const MsTopology *topo, guint device);
MsDeviceKind ms_topology_device_kind(const MsTopology *topo, guint device);
/* Node (host) of a device; -1 for devices outside any node (network switches). */
gint ms_topology_device_node(const MsTopology *topo, guint device);
gboolean ms_topology_find_device(const MsTopology *topo, const char *name, guint *device);
/* The link called name into *link; FALSE when topo has none (links are few and looked up by name
 * only from options, so a scan). */
gboolean ms_topology_find_link(const MsTopology *topo, const char *name, guint *link);

/* GPUs are numbered 0..n_gpus-1 ("ranks"), node-major: ranks of node 0 first. */
guint ms_topology_n_gpus(const MsTopology *topo);
guint ms_topology_gpu_device(const MsTopology *topo, guint rank);
/* -1 when the device is not a GPU. */
gint ms_topology_device_rank(const MsTopology *topo, guint device);
guint ms_topology_n_nodes(const MsTopology *topo);
guint ms_topology_gpu_node(const MsTopology *topo, guint rank);
/* GPUs per node when every node has the same number, else 0. */
guint ms_topology_gpus_per_node(const MsTopology *topo);
/* NICs per node when every node has the same number, else 0. */
guint ms_topology_nics_per_node(const MsTopology *topo);
/* Whether the nodes' NVSwitches take multicast stores and in-switch reductions (NVLink SHARP:
 * third-generation NVSwitch and later, what CUDA reports as
 * CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED); the preset key intra_multicast, FALSE for explicit
 * topologies. */
gboolean ms_topology_multicast(const MsTopology *topo);
/* The network latency NCCL's net plugin reports for the NICs (ncclNetProperties.latency; the
 * preset key nccl_net_latency): not a link's latency but a figure of NCCL's tuning model. 0 for
 * NCCL's own InfiniBand and RoCE transport, and for explicit topologies. */
MsTime ms_topology_nccl_net_latency(const MsTopology *topo);
const MsGpuSpec *ms_topology_gpu_spec(const MsTopology *topo, guint rank);

guint ms_topology_n_links(const MsTopology *topo);
const MsLink *ms_topology_link(const MsTopology *topo, guint link);
/* Physical links bundled in a directed link (its bandwidth is count x the per-link figure). */
guint ms_topology_link_count(const MsTopology *topo, guint link);

/* The route from device src to device dst as link indices, in order. The array is owned by the
 * topology and valid for its lifetime; *n_links is 0 when src == dst. Thread-safe (routes are
 * computed lazily per source under a lock). Returns NULL with MS_TOPOLOGY_ERROR_UNREACHABLE when
 * no path exists. */
const guint32 *ms_topology_route(const MsTopology *topo, guint src, guint dst, guint *n_links,
                                 GError **error);
/* Shorthands for GPU ranks. */
const guint32 *ms_topology_gpu_route(const MsTopology *topo, guint src_rank, guint dst_rank,
                                     guint *n_links, GError **error);
/* Sum of link latencies along a route, and its narrowest link's bandwidth. */
MsTime ms_topology_route_latency(const MsTopology *topo, const guint32 *route, guint n_links);
MsBandwidth ms_topology_route_bandwidth(const MsTopology *topo, const guint32 *route,
                                        guint n_links);

/* Bandwidth a GPU can push out of its node when all GPUs of the node send off-node at once (its
 * fair share of the node's NICs, capped by its own path to them); for a single-node topology, the
 * bandwidth of its links into the node's interconnect. */
MsBandwidth ms_topology_injection_bandwidth(const MsTopology *topo, guint rank);
/* Bandwidth across the cut between GPUs [0, n/2) and [n/2, n) (one direction), by max-flow over
 * the link graph. */
MsBandwidth ms_topology_bisection_bandwidth(const MsTopology *topo);

/* Overrides from a calibration: sets the per-direction bandwidth and the latency of every link of
 * a class (a link of count c gets c x bandwidth). bandwidth <= 0 or latency == MS_TIME_NEVER leaves
 * that field unchanged. Returns the number of links changed. Not thread-safe: call before the
 * topology is shared. */
guint ms_topology_set_class(MsTopology *topo, MsLinkClass klass, MsBandwidth bandwidth,
                            MsTime latency);
/* A degraded link (a NIC port that trained at a lower rate, a flapping NVLink): link's bandwidth
 * divided by factor (>= 1, finite). Not thread-safe: call before the topology is shared. */
void ms_topology_slow_link(MsTopology *topo, guint link, double factor);

G_END_DECLS
