/* layer_fit: a calibration fitted from a measured run's per-layer figures against the same run
 * simulated with nominal figures and no framework time (both sim/out/layers.h tables):
 *   compute: each compute part (attention, gate, expert, dense FFN) measured = a x ops +
 *     s x simulated, relative least squares: the efficiency becomes eff / s and the launch
 *     s x launch + a;
 *   all-to-all: dispatch and combine measured = alpha x calls + b x simulated: the collective's
 *     per-call overhead alpha and efficiency 1 / b;
 *   time between ops: measured (layer - busy) over the ops of each layer, given to every compute
 *     op as the framework's per-op host time;
 *   framework: what forward MoE layers still take beyond those predictions = layer + local
 *     experts x expert + tokens x token, least squares; a term whose column does not vary over
 *     the layers fitted (one expert count) cannot be told apart and is folded into the layer
 *     term, which the report says.
 * Seconds in the result; microseconds in the tables. docs/calibration.md. */
#pragma once

#include <glib.h>

#include "sim/calib/calibration.h"
#include "sim/out/layers.h"
#include "validate/layer_compare.h"

G_BEGIN_DECLS

#define MS_LAYER_FIT_ERROR (ms_layer_fit_error_quark())
GQuark ms_layer_fit_error_quark(void);
typedef enum {
    MS_LAYER_FIT_ERROR_INPUT, /* tables that do not pair, or a simulation with host time */
    MS_LAYER_FIT_ERROR_FIT,   /* a fit with no solution or an absurd one (its message says) */
} MsLayerFitError;

typedef struct {
    guint pairs;          /* rows used */
    double compute_scale; /* s */
    double compute_op_s;  /* a, per compute op */
    double efficiency;    /* the default efficiency / s */
    double launch_s;      /* s x launch + a */
    gboolean has_a2a;
    double a2a_alpha_s, a2a_factor;       /* alpha per call, b */
    double gap_op_s;                      /* time between ops, per compute op */
    MsFramework framework;                /* op_s = gap_op_s; layer, expert, token fitted */
    guint moe_layers;                     /* forward MoE rows the framework terms were fitted on */
    gboolean expert_folded, token_folded; /* terms that did not vary, folded into layer */
    MsErrorStats compute_stats, a2a_stats, layer_stats; /* of the fits, on the fitted rows */
} MsLayerFit;

/* Fits from the rows of meas (sel's iterations) that sim has too; launch_s is the launch
 * overhead sim was run with (the topology's GPU's). FALSE with MS_LAYER_FIT_ERROR_INPUT when
 * nothing pairs, or the simulation has host time (simulate without framework figures), or
 * MS_LAYER_FIT_ERROR_FIT when a fit has no positive solution. */
gboolean ms_layer_fit(const MsLayerTable *sim, const MsLayerTable *meas, const MsLayerSelect *sel,
                      double launch_s, MsLayerFit *out, GError **error);

/* Writes the fit into cal: [gemm] (a one-point curve at the fitted efficiency and the fitted
 * launch), [collective alltoall] (alpha and a one-point efficiency table) when the run had
 * all-to-alls, and [framework]. FALSE with the calibration's error for a value it refuses. */
gboolean ms_layer_fit_apply(const MsLayerFit *fit, MsCalibration *cal, GError **error);

/* One line per fitted item, for the report (free with g_ptr_array_unref). */
GPtrArray *ms_layer_fit_describe(const MsLayerFit *fit);

G_END_DECLS
