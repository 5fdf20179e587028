/* holdout: how well a calibration predicts what it was not fitted on. Splits measurements into
 * a fitted and a held-out part, calibrates on the first and reports the error on the second. */
#pragma once

#include <glib.h>

#include "validate/calibrate.h"
#include "validate/fit.h"
#include "validate/measurement.h"
#include "validate/nccl_fit.h"

G_BEGIN_DECLS

/* Held-out evaluation: calibrates a fresh copy of the topology on the rows with held[i] FALSE,
 * predicts every communication row with held[i] TRUE and appends one group per (kind, ranks,
 * ranks per node) to groups (MsHoldoutGroup), with *all over every held-out row. Expert GEMM
 * points are evaluated apart (calibrate.h fits whole expert FFNs): every other token count is
 * held out and the result is a group of kind gemm. Fails with MS_FIT_ERROR_INPUT when nothing is
 * held out. */
typedef struct {
    MsMeasurementKind kind;
    guint ranks, per_node;
    MsErrorStats stats;
} MsHoldoutGroup;

gboolean ms_calibrate_holdout(const char *topology, const MsMeasurementSet *set,
                              const gboolean *held, const MsCalibrateOptions *opts, GArray *groups,
                              MsErrorStats *all, GError **error);

/* The same for the nccl network model: its factors fitted (ms_nccl_fit, from base) on the rows with
 * held[i] FALSE into *fit, and every row with held[i] TRUE that the fit would use predicted under
 * the fitted spec on topo (nominal: the nccl model's factors are fitted there), grouped as above.
 * Fails with MS_FIT_ERROR_INPUT when no such row is held out, or with the fit's error. */
gboolean ms_nccl_fit_holdout(const MsTopology *topo, const MsMeasurementSet *set,
                             const gboolean *held, const MsNetSpec *base, MsNcclFit *fit,
                             GArray *groups, MsErrorStats *all, GError **error);

/* Masks for ms_calibrate_holdout: every other size of each configuration (offset 0 or 1), or
 * every communication row of the listed configurations ("4x4,8x4"). ms_holdout_configs fails with
 * MS_CALIBRATE_ERROR_ARGUMENT for an item that is not RANKSxPER_NODE or matches no row. */
void ms_holdout_alternate_sizes(const MsMeasurementSet *set, guint offset, gboolean *held);
gboolean ms_holdout_configs(const MsMeasurementSet *set, const char *list, gboolean *held,
                            GError **error);

G_END_DECLS
