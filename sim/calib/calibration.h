/* calibration: the calibration file the simulator reads with --calibration FILE (GKeyFile INI,
 * versioned; docs/calibration-format.md): fitted bandwidth and latency per link class, per-call
 * overhead and a size efficiency table per collective, and the expert GEMM efficiency curve with
 * the overlap slowdown. Values carry units in the file (GBps, us, KiB); in memory bandwidth is
 * bytes/s, time MsTime, sizes bytes. Knows nothing of how the numbers were fitted. */
#pragma once

#include <glib.h>

#include "sim/compute.h"
#include "sim/net/collective.h"
#include "sim/base/units.h"
#include "topologies/topology.h"
#include "sim/calib/eff_table.h"
#include "sim/calib/meas_kind.h"
#include "sim/moe/model.h"

G_BEGIN_DECLS

#define MS_CALIBRATION_ERROR (ms_calibration_error_quark())
GQuark ms_calibration_error_quark(void);
typedef enum {
    MS_CALIBRATION_ERROR_VERSION, /* no [calibration] format, or a format this moesim cannot read */
    MS_CALIBRATION_ERROR_GROUP,   /* an unknown group, link class or collective */
    MS_CALIBRATION_ERROR_LIST,    /* list lengths differ, sizes or tokens not increasing */
    MS_CALIBRATION_ERROR_VALUE,   /* a list item or a value set through the API that is invalid */
    MS_CALIBRATION_ERROR_IO,      /* the file could not be written */
} MsCalibrationError;

#define MS_CALIBRATION_FORMAT 1
/* The smallest GEMM efficiency a file may give (its table, calibration_file.c, says why). */
#define MS_CALIBRATION_GEMM_EFFICIENCY_MIN 1e-4

typedef struct {
    MsBandwidth bandwidth; /* effective, per direction, > 0 */
    MsTime latency;        /* per transfer */
    double r2;             /* of the fit; NAN when not recorded */
    double max_residual;   /* largest relative residual of the fit; NAN when not recorded */
    guint points;          /* measurements fitted; 0 when not recorded */
} MsCalibrationLink;

typedef struct _MsCalibration MsCalibration;

/* An empty calibration (format 1, nothing calibrated). */
MsCalibration *ms_calibration_new(void);
/* Reads a calibration file. Every value is checked: single values through sim/base/ini.h
 * (MS_INI_ERROR_VALUE for a missing unit or a bad number, _MISSING, _UNKNOWN_KEY for a typo,
 * _PARSE/_DUPLICATE for broken syntax), lists and structure here (MS_CALIBRATION_ERROR_*), every
 * message as "FILE:LINE: [group] key: problem". Returns NULL on any error. */
MsCalibration *ms_calibration_load(const char *path, GError **error);
MsCalibration *ms_calibration_load_data(const char *data, gsize len, const char *source,
                                        GError **error);
void ms_calibration_free(MsCalibration *cal);
/* Every number a calibration file carries, with its range (sim/base/ranges.h). */
const MsRangeTable *ms_calibration_ranges(void);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsCalibration, ms_calibration_free)

/* The file text: groups in a fixed order ([calibration], links by class, collectives by kind,
 * [gemm]), numbers in fixed formats, so equal calibrations give equal bytes and a file read back
 * writes the same bytes. Free with g_free. */
char *ms_calibration_to_data(const MsCalibration *cal, gsize *len);
gboolean ms_calibration_save(const MsCalibration *cal, const char *path, GError **error);

/* Where the measurements were taken (informational; NULL clears it), and the files they came
 * from. FALSE with MS_CALIBRATION_ERROR_VALUE for a backslash or a control character (and ';' in a
 * source). */
gboolean ms_calibration_set_topology(MsCalibration *cal, const char *topology, GError **error);
const char *ms_calibration_topology(const MsCalibration *cal); /* NULL when not recorded */
gboolean ms_calibration_add_source(MsCalibration *cal, const char *source, GError **error);
const char *const *ms_calibration_sources(const MsCalibration *cal, guint *n);

/* Records a link class fit; FALSE with MS_CALIBRATION_ERROR_VALUE when bandwidth is not a positive
 * finite number or latency is MS_TIME_NEVER. */
gboolean ms_calibration_set_link(MsCalibration *cal, MsLinkClass klass,
                                 const MsCalibrationLink *link, GError **error);
/* The fit for a link class: latency and bandwidth of a point-to-point transfer on a route that
 * class bottlenecks (ms_calibration_apply_topology in validate/calibrate.h turns it into per-link
 * figures); FALSE when the class is not calibrated. */
gboolean ms_calibration_link(const MsCalibration *cal, MsLinkClass klass, MsCalibrationLink *out);

/* Records a collective's per-call overhead and, when table is not NULL, its size efficiency
 * table (copied; sizes rounded to whole bytes, which must stay strictly increasing). kind must be
 * a communication kind. FALSE with MS_CALIBRATION_ERROR_VALUE / _LIST otherwise. */
gboolean ms_calibration_set_collective(MsCalibration *cal, MsMeasurementKind kind, MsTime alpha,
                                       const MsEffTable *table, GError **error);
/* The same for one configuration: ranks taking part and the most ranks on one node (a group
 * [collective NAME RANKSxPER_NODE] in the file); ranks == per_node == 0 is the entry for any
 * configuration. Setting a configuration again replaces it; configurations are kept (and
 * written) in order of ranks, then ranks per node. */
gboolean ms_calibration_set_collective_config(MsCalibration *cal, MsMeasurementKind kind,
                                              guint ranks, guint per_node, MsTime alpha,
                                              const MsEffTable *table, GError **error);
/* Parses a configuration "RANKSxPER_NODE" (e.g. "16x8": 1 <= PER_NODE <= RANKS <= 2^20); FALSE
 * for anything else. */
gboolean ms_calibration_parse_config(const char *text, guint *ranks, guint *per_node);
/* The entry that applies to a collective of ranks with at most per_node on a node: the nearest
 * calibrated configuration (same side of the node boundary first, then the closest number of
 * ranks and ranks per node on a log scale; a tie goes to the configuration with fewer ranks, then
 * fewer per node), else the entry for any configuration. FALSE when the
 * collective is not calibrated at all. *table may be NULL (no size table). */
gboolean ms_calibration_collective_lookup(const MsCalibration *cal, MsMeasurementKind kind,
                                          guint ranks, guint per_node, MsTime *alpha,
                                          const MsEffTable **table);
guint ms_calibration_collective_configs(const MsCalibration *cal, MsMeasurementKind kind);

/* FALSE when the collective is not calibrated. */
gboolean ms_calibration_collective_alpha(const MsCalibration *cal, MsMeasurementKind kind,
                                         MsTime *alpha);
/* predicted / measured at a call size: the engine divides its flow-model time by this. 1.0 when
 * the collective has no table. */
double ms_calibration_collective_efficiency(const MsCalibration *cal, MsMeasurementKind kind,
                                            guint64 bytes);
/* The table, NULL when none. Owned by cal. */
const MsEffTable *ms_calibration_collective_table(const MsCalibration *cal, MsMeasurementKind kind);

/* Records the expert GEMM curve (copied; may be NULL to keep the default efficiency), the overlap
 * slowdown (>= 1) and the launch overhead the curve was fitted with (MS_TIME_NEVER: not recorded,
 * the GPU spec's applies). FALSE with MS_CALIBRATION_ERROR_VALUE / _LIST for invalid values. */
gboolean ms_calibration_set_gemm(MsCalibration *cal, const MsGemmCurve *curve,
                                 double overlap_slowdown, MsTime launch, GError **error);
/* Records the overlap slowdown alone (fitted on kernels timed under an allreduce), keeping the
 * [gemm] group's curve and launch; FALSE with MS_CALIBRATION_ERROR_VALUE outside [1, max]. */
gboolean ms_calibration_set_overlap_slowdown(MsCalibration *cal, double overlap_slowdown,
                                             GError **error);
gboolean ms_calibration_has_gemm(const MsCalibration *cal);
/* Applies the [gemm] group to a compute model: curve, overlap slowdown and launch when recorded.
 * Without a [gemm] group the model is left as it is. */
gboolean ms_calibration_apply_compute(const MsCalibration *cal, MsComputeModel *model,
                                      GError **error);
/* A compute model for spec with this calibration applied; NULL with the model's error. */
MsComputeModel *ms_calibration_compute_model(const MsCalibration *cal, const MsGpuSpec *spec,
                                             GError **error);

/* Records the framework's host figures (a [framework] group), fitted on points MoE layers (0:
 * not recorded). FALSE with MS_CALIBRATION_ERROR_VALUE for a figure ms_framework_check
 * refuses. */
gboolean ms_calibration_set_framework(MsCalibration *cal, const MsFramework *framework,
                                      guint points, GError **error);
/* FALSE when the calibration has no [framework] group. */
gboolean ms_calibration_framework(const MsCalibration *cal, MsFramework *out, guint *points);

/* ---- applying a calibration (calibration_apply.c) ---- */

/* Gives the model the calibration's framework figures, which replace the model file's (all of
 * them: a profile measured them together); a calibration without [framework] leaves it. */
void ms_calibration_apply_model(const MsCalibration *cal, MsModel *model);

/* Gives every link class that cal calibrates the per-link figures that make the class's
 * representative GPU-to-GPU route (same node; or first GPUs of the first two nodes) take the
 * calibrated alpha + bytes / beta. Classes that no GPU route is bottlenecked by are left alone. */
gboolean ms_calibration_apply_topology(const MsCalibration *cal, MsTopology *topo, GError **error);

/* What the engine does with a collective under cal: its per-call overhead, and its transfers
 * stretched by 1 / efficiency at its size. Returns a scaled copy of spec->matrix that spec now
 * points to (the caller frees it), or NULL. */
guint64 *ms_calibration_adjust_collective(const MsCalibration *cal, const MsTopology *topo,
                                          MsCollSpec *spec);

/* The GPU pair standing for a scope: two GPUs of node 0, or (inter) the first GPUs of nodes 0 and
 * 1; FALSE when the topology has no such pair. */
gboolean ms_calibration_scope_pair(const MsTopology *topo, gboolean inter, guint *a, guint *b);
/* Bytes that take 1 / eff times as long, to the nearest byte: truncating would drop a byte
 * whenever eff is a hair above 1, 1/1000 of a kilobyte transfer. Saturates at G_MAXUINT64 (a file's
 * efficiencies, at least MS_EFF_RATIO_MIN, keep any size up to 1 PiB far below it). */
guint64 ms_calibration_stretch(guint64 bytes, double eff);
/* The route standing for a scope (two GPUs of node 0; with inter, the first GPUs of nodes 0 and
 * 1), its length in *n and its bottleneck link (the first of the narrowest) in *neck; NULL when
 * the topology has no such pair or no route between them. */
const guint32 *ms_calibration_scope_route(const MsTopology *topo, gboolean inter, guint *n,
                                          guint *neck);

G_END_DECLS
