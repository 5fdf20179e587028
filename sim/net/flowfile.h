/* flowfile: a list of point-to-point transfers to replay on a topology (`moesim flows`), one per
 * line: id, source device, destination device, bytes, start time, then optional weight=W and
 * after=ID[,ID...] (start only once those flows are done). The format is documented in
 * docs/flows.md. A flow starts at the later of its start time and its dependencies' completion,
 * then pays its route latency and shares the links (see network.h). */
#pragma once

#include <glib.h>

#include "sim/base/ranges.h"
#include "sim/sim.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

#define MS_FLOWFILE_ERROR (ms_flowfile_error_quark())
GQuark ms_flowfile_error_quark(void);
typedef enum {
    MS_FLOWFILE_ERROR_IO,
    MS_FLOWFILE_ERROR_SYNTAX,      /* wrong field count, bad number, bad unit, bad option */
    MS_FLOWFILE_ERROR_UNKNOWN,     /* unknown device or flow id */
    MS_FLOWFILE_ERROR_DUPLICATE,   /* flow id given twice */
    MS_FLOWFILE_ERROR_CYCLE,       /* dependencies that can never be satisfied */
    MS_FLOWFILE_ERROR_LIMIT,       /* more flows or dependencies than the documented limits */
    MS_FLOWFILE_ERROR_UNREACHABLE, /* no route between the flow's devices */
} MsFlowfileError;

/* Limits that keep a hostile file from exhausting memory before it is rejected. */
#define MS_FLOWFILE_MAX_FLOWS 50000000u
#define MS_FLOWFILE_MAX_DEPS 64u

typedef struct _MsFlowList MsFlowList;

/* Every number a flow line carries, with its range (sim/base/ranges.h). */
const MsRangeTable *ms_flow_list_ranges(void);

/* Parses a flow list, resolving device names against topo (device names like "gpu3" or
 * "n0.nic1", or a bare GPU rank "3"). Every error names SOURCE:LINE and the bad field: SYNTAX
 * (field count, number, unit, option, option given twice, NUL byte), UNKNOWN (device, GPU rank,
 * after= id), UNREACHABLE (no route between the devices), DUPLICATE, CYCLE (the message spells
 * out a cycle), LIMIT (flows or dependencies); IO when the file cannot be read. */
MsFlowList *ms_flow_list_load_file(const char *path, const MsTopology *topo, GError **error);
MsFlowList *ms_flow_list_load_data(const char *data, gsize len, const char *source,
                                   const MsTopology *topo, GError **error);
void ms_flow_list_free(MsFlowList *list);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsFlowList, ms_flow_list_free)

/* Building a list in code (benchmarks, tests): returns the new flow's index. deps are indices of
 * flows added before. */
MsFlowList *ms_flow_list_new(const MsTopology *topo);
guint ms_flow_list_add(MsFlowList *list, const char *id, guint src, guint dst, guint64 bytes,
                       MsTime start, double weight, const guint *deps, guint n_deps);

guint ms_flow_list_len(const MsFlowList *list);
const char *ms_flow_list_id(const MsFlowList *list, guint i);
guint ms_flow_list_src(const MsFlowList *list, guint i);
guint ms_flow_list_dst(const MsFlowList *list, guint i);
guint64 ms_flow_list_bytes(const MsFlowList *list, guint i);
MsTime ms_flow_list_start(const MsFlowList *list, guint i);
double ms_flow_list_weight(const MsFlowList *list, guint i);
/* Indices of the flows flow i waits for (owned by the list); NULL when *n_deps is 0. */
const guint *ms_flow_list_deps(const MsFlowList *list, guint i, guint *n_deps);

/* Replays the list on sim (which must be built on the list's topology). Fills begin[i] (when the
 * flow was started: dependencies met) and end[i] (when its last byte arrived); arrays of
 * ms_flow_list_len entries owned by the caller. A flow from a device to itself completes when it
 * starts. Fails with the topology's UNREACHABLE error, prefixed by the flow's id, for a flow
 * added with ms_flow_list_add between devices without a route (parsed lists never have one);
 * from then on no flow starts (their begin may be set, their end stays MS_TIME_NEVER). */
gboolean ms_flow_list_run(const MsFlowList *list, MsSim *sim, MsTime *begin, MsTime *end,
                          GError **error);

G_END_DECLS
