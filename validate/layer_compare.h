/* layer_compare: simulated per-layer figures against measured ones (sim/out/layers.h tables,
 * from `moesim run --layers` on the simulator, on a backend, or from a profiler trace). Rows pair
 * by (iteration, layer, phase, GPU); the report gives relative errors of the layer time, of the
 * slowest GPU's layer time, of each part and of the host total (host work plus time between ops),
 * and names what the measurement holds that the simulation has none of, rather than leaving it
 * as an unexplained error. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "sim/out/layers.h"
#include "validate/fit.h"

G_BEGIN_DECLS

#define MS_LAYER_COMPARE_ERROR (ms_layer_compare_error_quark())
GQuark ms_layer_compare_error_quark(void);
typedef enum {
    MS_LAYER_COMPARE_ERROR_EMPTY, /* no row pairs: different runs, or a selection that holds none */
} MsLayerCompareError;

typedef struct {
    guint first, last; /* measured iterations compared, inclusive */
    double min_us;     /* a figure measured at or below this is left out (timer resolution) */
} MsLayerSelect;

/* Every iteration, figures above 1 us. */
void ms_layer_select_init(MsLayerSelect *sel);
/* "A-B", "A" or "A-" (to the last): FALSE for anything else. */
gboolean ms_layer_select_parse(MsLayerSelect *sel, const char *text);

typedef struct {
    const char *name;   /* "layer", "slowest", "host_total", then the parts */
    MsErrorStats stats; /* stats.n == 0: nothing measured above min_us */
    double sim_mean_us, meas_mean_us;
} MsLayerMetric;

#define MS_LAYER_COMPARE_N_METRICS (3 + MS_LAYER_N_PARTS)

typedef struct {
    guint pairs;               /* rows in both tables */
    guint sim_only, meas_only; /* rows (of the selected iterations) on one side only */
    /* layer_us of each (GPU) pair; the slowest GPU's layer time of each (iteration, layer,
     * phase); host part plus layer_us - busy_us; each part (its host entry is the host part). */
    MsLayerMetric metrics[MS_LAYER_COMPARE_N_METRICS];
    GPtrArray *unmodelled;        /* char *: one sentence per item the simulation lacks */
    GArray *predicted, *measured; /* double: layer_us of each pair, for plots */
} MsLayerComparison;

/* Compares sim with meas over sel's iterations. Fills out (free with ms_layer_comparison_clear);
 * FALSE with MS_LAYER_COMPARE_ERROR_EMPTY when no row pairs. */
gboolean ms_layer_compare(const MsLayerTable *sim, const MsLayerTable *meas,
                          const MsLayerSelect *sel, MsLayerComparison *out, GError **error);
void ms_layer_comparison_clear(MsLayerComparison *c);
/* The metric named name ("layer", "slowest", "host_total", "gate" ...), NULL when none. */
const MsLayerMetric *ms_layer_comparison_metric(const MsLayerComparison *c, const char *name);
/* {"pairs", "simulated_only", "measured_only", "metrics": [{"name", "n", "median", "p90", "max",
 * "simulated_mean_us", "measured_mean_us"}], "unmodelled": [...]} */
JsonNode *ms_layer_comparison_to_json(const MsLayerComparison *c);

G_END_DECLS
