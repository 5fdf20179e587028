/* nic_fit: calibrates the nccl network model's NIC arbitration, its message exponent x (a
 * connection crossing a NIC weighs (message bytes / 64 KiB)^x: 1, queue pairs served one message
 * at a time; 0, equal shares), on what `moesim bench`'s concurrency benchmark measures: an
 * all-to-all alone and while an allreduce loops on another communicator. Each
 * alltoall_under_allreduce row is paired with the alltoall row of the same size and NCCL
 * configuration (its time alone); the model simulates the pair (validate/nic_sim.h) and x is the
 * value in [0, 1] whose simulated slowdowns (together / alone) best match the measured ones in
 * squared log error: a grid of steps of 0.05, then a golden-section search around its best point.
 * Its standard error comes from the residuals and the slowdowns' sensitivity to x (Gauss-Newton,
 * as validate/nccl_fit.h gives its factors'). Queue pairs per connection are not in the model
 * (both collectives run under the same setting, which scales every NIC connection alike when
 * NCCL splits messages over its queue pairs, as it does up to 2.19); the fit reports its
 * residuals per channel count and queue pair setting so that a machine where they matter shows
 * it. */
#pragma once

#include <glib.h>

#include "sim/net/net_model.h"
#include "topologies/topology.h"
#include "validate/measurement.h"

G_BEGIN_DECLS

#define MS_NIC_FIT_ERROR (ms_nic_fit_error_quark())
GQuark ms_nic_fit_error_quark(void);
typedef enum {
    MS_NIC_FIT_ERROR_NO_DATA, /* fewer than 2 alltoall_under_allreduce rows */
    MS_NIC_FIT_ERROR_ALONE,   /* a row without its all-to-all alone to compare with */
    MS_NIC_FIT_ERROR_SPEC,    /* the base spec is not of the nccl model */
    MS_NIC_FIT_ERROR_FLAT,    /* the simulated slowdowns do not depend on the exponent */
} MsNicFitError;

/* The residuals of the rows of one NCCL configuration. */
typedef struct {
    guint32 channels, qps; /* as the rows say (0: NCCL's choice) */
    guint rows;
    double mean_log_error; /* mean of ln(predicted slowdown / measured) at the fitted exponent */
} MsNicFitGroup;

typedef struct {
    MsNetSpec spec;     /* the base spec with the fitted exponent */
    double exponent_se; /* standard error of spec.message_exponent */
    guint rows;
    /* Median of |predicted slowdown / measured - 1| at the base spec's exponent and fitted. */
    double median_before, median_after;
    GArray *groups; /* MsNicFitGroup, in the order the configurations first appear */
} MsNicFit;

/* Counts the alltoall_under_allreduce rows of set. */
guint ms_nic_fit_count(const MsMeasurementSet *set);
/* The all-to-all alone that alltoall_under_allreduce row i of set is compared with: the last
 * alltoall row of the same size, ranks, ranks per node, channels and queue pairs before it in its
 * own file (the benchmark writes it just before), else the first such row anywhere; NULL when
 * there is none. */
const MsMeasurement *ms_nic_fit_alone_row(const MsMeasurementSet *set, guint i);

/* Fits base (kind nccl; its other keys stay) on the alltoall_under_allreduce rows of set and
 * their alltoall rows alone, placed on topo as the calibration places them. out is filled (free
 * its groups with ms_nic_fit_clear) only on success. FALSE with MS_NIC_FIT_ERROR (_ALONE naming
 * the row's FILE:LINE), or the simulation's error. */
gboolean ms_nic_fit(const MsTopology *topo, const MsMeasurementSet *set, const MsNetSpec *base,
                    MsNicFit *out, GError **error);
void ms_nic_fit_clear(MsNicFit *fit);

/* One line for the exponent with its error and the rows' slowdown errors, then one per NCCL
 * configuration when there are several. Free with g_free. */
char *ms_nic_fit_describe(const MsNicFit *fit);

/* What an alltoall_under_allreduce row predicts on topo under spec (NULL: the flow model): the
 * all-to-all's time per call alone (alone_s, may be NULL) and while the allreduce loops
 * (together_s, the row's own time), as nic_sim.h times them and as the fit compares them. FALSE
 * with the placement's or the simulation's error, prefixed with the row's FILE:LINE. */
gboolean ms_nic_fit_predict(const MsTopology *topo, const MsNetSpec *spec, const MsMeasurement *row,
                            double *alone_s, double *together_s, GError **error);

G_END_DECLS
