/* eff_table: the efficiency tables a calibration holds: per call size for a collective
 * (predicted / measured time, correcting the bandwidth part) and per token count for the expert
 * GEMMs (achieved / peak FLOP/s). Sizes in bytes,
 * ratios dimensionless; interpolated in log size, clamped outside the table. Fitting them is
 * validate/fit.h's job; this module only holds and evaluates them. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define MS_EFF_TABLE_ERROR (ms_eff_table_error_quark())
GQuark ms_eff_table_error_quark(void);
typedef enum {
    MS_EFF_TABLE_ERROR_INPUT, /* no entries, sizes not increasing, a ratio out of range */
} MsEffTableError;

/* ratio(size) = predicted / measured, piecewise linear in log(size) between the table's sizes and
 * clamped to the end values outside them. Plain value record owned by its creator. */
typedef struct {
    guint n;
    double *sizes;  /* bytes, strictly increasing, > 0 */
    double *ratios; /* in [MS_EFF_RATIO_MIN, MS_EFF_RATIO_MAX] */
} MsEffTable;

/* The fit keeps ratios within these (docs/calibration.md): a transfer is stretched by at most
 * 100x, so no size up to 1 PiB stretches past 64 bits. */
#define MS_EFF_RATIO_MIN 0.01
#define MS_EFF_RATIO_MAX 1.5
/* Tables are reduced to at most this many entries when max_points is 0. */
#define MS_EFF_TABLE_POINTS 24

/* Builds a table from given sizes and ratios (copied). Returns NULL with MS_EFF_TABLE_ERROR_INPUT
 * when n == 0, sizes are not strictly increasing and > 0, or a ratio is outside [0.01, 1.5]. */
MsEffTable *ms_eff_table_new(const double *sizes, const double *ratios, guint n, GError **error);
void ms_eff_table_free(MsEffTable *table);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsEffTable, ms_eff_table_free)
double ms_eff_table_eval(const MsEffTable *table, double size);

/* ---- the expert GEMM efficiency curve ---- */

/* efficiency(tokens) = achieved FLOP/s / peak, tabulated at the measured token counts and
 * interpolated geometrically (log efficiency linear in log tokens; see ms_log_interp), so that
 * launch + max(flops / (peak eff), bytes / hbm) reproduces each point. A point whose time minus
 * launch is no more than bytes / hbm is memory bound: any efficiency of at least
 * flops hbm / (peak bytes) gives the same time, and that least value is stored (so the curve stays
 * continuous into the compute-bound regime) and counted in n_memory_bound. Several points at one
 * token count are combined by the efficiency minimising their squared relative time residuals
 * (sum e_i^2 / sum e_i). */
typedef struct {
    guint n;
    double *tokens;     /* strictly increasing */
    double *efficiency; /* in (0, 1.5] */
    guint n_memory_bound;
} MsGemmCurve;
void ms_gemm_curve_free(MsGemmCurve *curve);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsGemmCurve, ms_gemm_curve_free)
double ms_gemm_curve_eval(const MsGemmCurve *curve, double tokens);

G_END_DECLS
