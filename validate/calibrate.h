/* calibrate: fits a calibration to measurements on a topology, and predicts measured operations
 * with it. Links: for each link class, t = alpha + bytes / beta fitted (relative least squares)
 * to point-to-point transfers whose route is bottlenecked by that class; the class then gets the
 * per-link bandwidth and latency that make such a route take exactly alpha + bytes / beta.
 * Collectives: per measured configuration (ranks, ranks per node), moesim's own flow model on the
 * calibrated links predicts each size; the per-call overhead is what the measurement adds at the
 * smallest sizes, and a per-size efficiency table (as SimAI does) corrects the bandwidth part
 * where a straight line does not fit. Expert GEMMs: an efficiency curve over token counts.
 * See docs/calibration.md. */
#pragma once

#include <glib.h>

#include "sim/net/collective.h"
#include "sim/net/net_model.h"
#include "topologies/topology.h"
#include "sim/calib/calibration.h"
#include "validate/measurement.h"

G_BEGIN_DECLS

#define MS_CALIBRATE_ERROR (ms_calibrate_error_quark())
GQuark ms_calibrate_error_quark(void);
typedef enum {
    MS_CALIBRATE_ERROR_NO_DATA,   /* nothing in the measurements that can be fitted */
    MS_CALIBRATE_ERROR_PLACEMENT, /* a configuration that does not fit on the topology */
    MS_CALIBRATE_ERROR_FIT,       /* a fit that failed (its message says why) */
    MS_CALIBRATE_ERROR_ARGUMENT,  /* a malformed held-out list or expert shape */
    MS_CALIBRATE_ERROR_MIXED,     /* rows of one configuration in different datatypes */
} MsCalibrateError;

typedef struct {
    const gboolean *use; /* rows to fit on (per row of the set); NULL: all */
    /* Expert shape whose GEMM curve is fitted from per-operator compute profiles. */
    guint64 expert_d_model, expert_d_ffn;
    gboolean expert_gated;
} MsCalibrateOptions;

/* What a NULL options argument means: every row, the shipped profiles' expert shape. */
extern const MsCalibrateOptions ms_calibrate_default_options;

/* Fits cal (which may already hold other figures) from the rows of set. Applies the link classes
 * of cal to topo as it goes, since collective tables are fitted against the calibrated links.
 * Appends one human-readable line per fitted item, and per configuration skipped for having
 * fewer than 4 sizes, to report (may be NULL). Fails with MS_CALIBRATE_ERROR_MIXED as
 * ms_calibrate_check_dtypes, MS_CALIBRATE_ERROR_NO_DATA when nothing
 * could be fitted, _PLACEMENT (naming the row) for a configuration the topology cannot hold,
 * _FIT when a fit fails, or the measurement module's error for an expert shape the rows lack. */
gboolean ms_calibrate(MsTopology *topo, const MsMeasurementSet *set, const MsCalibrateOptions *opts,
                      MsCalibration *cal, GPtrArray *report, GError **error);

/* Refuses (MS_CALIBRATE_ERROR_MIXED, naming both rows and both datatypes) a set where two
 * communication rows of the same kind, ranks and ranks per node carry different datatypes: the
 * fits key their figures by configuration and size, so such rows would be fitted as one. Rows
 * without a datatype mix with any. ms_calibrate checks this first; the nccl model's fit is
 * keyed the same way, so callers fitting it check too. */
gboolean ms_calibrate_check_dtypes(const MsMeasurementSet *set, GError **error);

/* GPU ranks for a configuration: the first per_node GPUs of as many nodes as needed. */
gboolean ms_calibrate_place(const MsTopology *topo, guint ranks, guint per_node, guint *out,
                            GError **error);

/* The time moesim predicts for a measured row on topo (calibrated or nominal) under cal (may be
 * NULL): collectives and point-to-point transfers are simulated, compute rows use the compute
 * model. Without cal (or for a collective cal does not calibrate) transfers pay their route
 * latency, as the engine's do. A collective or send/receive row whose threads each drove several
 * GPUs (gpus_per_thread > 1) takes at least their NCCL calls' host time (sim/net/host_loop.h). */
gboolean ms_calibrate_predict(const MsTopology *topo, const MsCalibration *cal,
                              const MsMeasurement *row, double *seconds, GError **error);
/* The same under a network model (NULL: the flow model). Under the nccl model a calibration's
 * per-collective figures are not used (they are the flow model's), a send/receive row is the
 * nccl-tests pattern (every rank sends to the next and receives from the previous), and a row's
 * forced channels apply (ms_calibrate_row_spec). An alltoall_under_allreduce row is refused
 * (MS_CALIBRATE_ERROR_ARGUMENT): validate/nic_fit.h predicts it. */
gboolean ms_calibrate_predict_net(const MsTopology *topo, const MsCalibration *cal, MsNetModel *net,
                                  const MsMeasurement *row, double *seconds, GError **error);

/* The collective a measured kind is (allreduce, alltoall, allgather, reducescatter); FALSE for
 * the other kinds, *op unchanged. */
gboolean ms_calibrate_coll_op(MsMeasurementKind kind, MsCollOp *op);

/* The network spec a measured row ran under: base, with the row's forced channel count (NCCL_MIN
 * and NCCL_MAX_NCHANNELS) as NCCL's minimum and maximum under the nccl model. Queue pairs per
 * connection are not modelled; the flow model has neither. */
void ms_calibrate_row_spec(const MsNetSpec *base, const MsMeasurement *row, MsNetSpec *out);

/* The network model a row runs on: net, or (in *own, which the caller frees) an nccl model of
 * the row's spec (ms_calibrate_row_spec) where the row forced channels or, under version=log
 * (MS_NCCL_VERSION_LOG), its log printed a release other than the default (a release outside
 * the modelled ones runs as the nearest). NULL with the model's error when that one cannot be
 * made. */
MsNetModel *ms_calibrate_row_model(const MsTopology *topo, MsNetModel *net,
                                   const MsMeasurement *row, MsNetModel **own, GError **error);

/* TRUE when the row ran under NCCL's own channels and queue pairs (neither forced): the rows the
 * flow model's link and collective figures are fitted on. */
gboolean ms_calibrate_row_default(const MsMeasurement *row);

/* The roofline of topo's first GPU, the baseline the expert GEMM curve corrects. */
void ms_calibrate_roofline(const MsTopology *topo, MsRoofline *roof);

G_END_DECLS
