/* overlap_fit: the compute model's overlap slowdown (sim/compute.h: a kernel's body stretched by
 * one factor while NCCL kernels run on its GPU) fitted on what `moesim bench --what overlap`
 * measures: each expert kernel timed alone and while an allreduce loops on another communicator
 * and stream of the same GPU. Each overlapped row (ms_measurement_overlapped) is paired with its
 * kernel alone; the factor s minimises the squared relative error of s x alone against the time
 * measured together, over every pair (kernel times are bodies: events around the kernel, with
 * no launch), with a standard error from the residuals. The model takes no speedup, so a fit
 * below 1 applies 1, and none above MS_COMPUTE_SLOWDOWN_MAX. */
#pragma once

#include <glib.h>

#include "validate/measurement.h"

G_BEGIN_DECLS

#define MS_OVERLAP_FIT_ERROR (ms_overlap_fit_error_quark())
GQuark ms_overlap_fit_error_quark(void);
typedef enum {
    MS_OVERLAP_FIT_ERROR_ALONE, /* an overlapped row without its kernel alone */
} MsOverlapFitError;

typedef struct {
    guint pairs;      /* overlapped rows, each with its kernel alone */
    double slowdown;  /* the least-squares factor, before the model's range is applied */
    double std_error; /* its standard error; NAN with a single pair */
    double applied;   /* slowdown within [1, MS_COMPUTE_SLOWDOWN_MAX]: what a calibration holds */
    double largest;   /* the largest measured ratio, together / alone */
    /* Median over the pairs of |predicted / measured - 1| of the time together, predicted as the
     * time alone (no slowdown) and as applied x alone. */
    double median_before, median_after;
} MsOverlapFit;

/* The kernel alone that overlapped row i of set is compared with: the last row of the same kind,
 * label, shape, bytes and datatype without a background before it in its own file (the benchmark
 * writes it just before), else the first such row anywhere; NULL when there is none. */
const MsMeasurement *ms_overlap_fit_alone_row(const MsMeasurementSet *set, guint i);

/* Fits the slowdown on the overlapped rows of set (use: the rows to fit on, per row of the set;
 * NULL: all). out->pairs == 0 (and the figures NAN) when there are none. FALSE with
 * MS_OVERLAP_FIT_ERROR_ALONE naming the row (source:line, kind, label, shape) that has no kernel
 * alone. */
gboolean ms_overlap_fit(const MsMeasurementSet *set, const gboolean *use, MsOverlapFit *out,
                        GError **error);

G_END_DECLS
