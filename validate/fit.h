/* fit: the model fits behind calibration, on plain arrays (no files, no topologies): the line
 * t = alpha + bytes / beta (ordinary and relative-error least squares), per-size efficiency tables
 * (predicted / measured, interpolated in log size), the expert GEMM efficiency curve over token
 * counts, and held-out error statistics. Times are seconds, sizes bytes, rates per second. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "sim/calib/eff_table.h"

G_BEGIN_DECLS

#define MS_FIT_ERROR (ms_fit_error_quark())
GQuark ms_fit_error_quark(void);
typedef enum {
    MS_FIT_ERROR_INPUT,      /* too few points, or a NaN, negative or zero value where none fits */
    MS_FIT_ERROR_DEGENERATE, /* the data determine no answer (one distinct size, time falling) */
    MS_FIT_ERROR_RANGE,      /* a fitted value outside what the model can represent */
} MsFitError;

/* ---- t = alpha + bytes / beta ---------------------------------------------------------------- */

typedef struct {
    double alpha;           /* seconds, >= 0 */
    double beta;            /* bytes per second, > 0 */
    double r2;              /* 1 - SS_res / SS_tot on the raw times (1 for an exact line) */
    double max_residual;    /* largest |predicted / measured - 1| */
    guint max_index;        /* index of that point in the input */
    guint n;                /* points fitted */
    gboolean alpha_clamped; /* the free fit gave alpha < 0, so it was refitted with alpha = 0 */
} MsLinearFit;

/* Fits t = alpha + bytes / beta to n points. ms_fit_linear minimises squared residuals;
 * ms_fit_linear_relative minimises squared relative residuals ((predicted - t) / t)^2, which
 * keeps microsecond points from being drowned by millisecond ones when sizes span decades.
 * A negative alpha is refitted through the origin. Returns FALSE with MS_FIT_ERROR_INPUT for
 * n < 2 or a size < 0 or a time <= 0 or non-finite (the message names the index), and
 * MS_FIT_ERROR_DEGENERATE when fewer than two distinct sizes are given or time does not grow
 * with size (beta would be infinite or negative). */
gboolean ms_fit_linear(const double *bytes, const double *seconds, guint n, MsLinearFit *out,
                       GError **error);
gboolean ms_fit_linear_relative(const double *bytes, const double *seconds, guint n,
                                MsLinearFit *out, GError **error);
double ms_linear_fit_predict(const MsLinearFit *fit, double bytes);

/* ---- per-size efficiency tables -------------------------------------------------------------- */

/* Fits a table from n measurements (sizes > 0 in any order, measured and predicted times > 0):
 * points are grouped into at most max_points bins evenly spaced in log(size) (0 means
 * MS_EFF_TABLE_POINTS; each distinct size is its own bin when there are no more of them), each
 * bin giving the median ratio at the geometric mean of its sizes. With monotone, the ratios are
 * made non-decreasing in size (pool-adjacent-violators, weighted by points per bin): calls get
 * relatively cheaper as they grow, and noise should not say otherwise. Returns NULL with
 * MS_FIT_ERROR_INPUT for bad points and MS_FIT_ERROR_RANGE when a ratio exceeds 1.5 (the model is
 * far slower than the hardware: fix the link or alpha fit first). */
MsEffTable *ms_fit_eff_table(const double *sizes, const double *measured, const double *predicted,
                             guint n, guint max_points, gboolean monotone, GError **error);

/* ---- expert GEMM efficiency curve ------------------------------------------------------------ */

typedef struct {
    double tokens;  /* > 0 */
    double flops;   /* > 0 */
    double bytes;   /* >= 0: weights + activations read and written */
    double seconds; /* measured, > 0 */
} MsGemmPoint;

/* The roofline the curve is fitted for (the compute model's GPU). */
typedef struct {
    double peak_flops;    /* FLOP/s */
    double hbm_bandwidth; /* bytes/s */
    double launch_s;      /* added once per op */
} MsRoofline;

/* Returns NULL with MS_FIT_ERROR_INPUT for n == 0 or a bad point or roofline (the message names
 * the index), and MS_FIT_ERROR_RANGE when a point's time does not exceed the launch overhead or
 * implies an efficiency above 1.5 (faster than the GPU's peak). */
MsGemmCurve *ms_fit_gemm_curve(const MsGemmPoint *points, guint n, const MsRoofline *roof,
                               GError **error);
/* launch + max(flops / (peak eff(tokens)), bytes / hbm), seconds. */
double ms_gemm_curve_predict(const MsGemmCurve *curve, const MsRoofline *roof,
                             const MsGemmPoint *point);

/* ---- error statistics and held-out evaluation ------------------------------------------------ */

typedef struct {
    guint n;
    double median; /* of |predicted / measured - 1| */
    double p90;    /* nearest rank: the ceil(0.9 n)-th smallest */
    double max;
    guint worst; /* index of the largest error */
} MsErrorStats;

/* Relative errors of n predictions. Returns FALSE with MS_FIT_ERROR_INPUT for n == 0 or a
 * measured value <= 0 or a non-finite value. */
gboolean ms_error_stats(const double *predicted, const double *measured, guint n, MsErrorStats *out,
                        GError **error);

/* Adds the statistics as an object {"points", "median", "p90", "max"}, as member name of the
 * object being built (name NULL: as the next array element). */
void ms_error_stats_json(JsonBuilder *b, const char *name, const MsErrorStats *s);

/* A deterministic split: held[i] = (i % k == offset) for i < n; k >= 2, offset < k. */
void ms_holdout_every(gboolean *held, guint n, guint k, guint offset);

/* Fits on the points with held[i] FALSE and reports errors on those with held[i] TRUE (a mask from
 * ms_holdout_every, or built by configuration, e.g. every multi-node run held out). The linear
 * variant fits relative-error weighted when relative is TRUE. Both fail as the fits do, and with
 * MS_FIT_ERROR_INPUT when no point is held out. */
gboolean ms_holdout_linear(const double *bytes, const double *seconds, guint n,
                           const gboolean *held, gboolean relative, MsLinearFit *fit,
                           MsErrorStats *stats, GError **error);
gboolean ms_holdout_gemm(const MsGemmPoint *points, guint n, const gboolean *held,
                         const MsRoofline *roof, MsErrorStats *stats, GError **error);

G_END_DECLS
