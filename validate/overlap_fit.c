/* overlap_fit: the overlap slowdown from kernels timed alone and under an allreduce (see
 * overlap_fit.h). */
#include "overlap_fit.h"

#include <math.h>

#include "sim/compute.h"
#include "validate/fit.h"

G_DEFINE_QUARK(ms_overlap_fit_error_quark, ms_overlap_fit_error)

/* The same kernel, one of them alone. */
static gboolean
same_kernel(const MsMeasurement *a, const MsMeasurement *u)
{
    return a->kind == u->kind && !ms_measurement_overlapped(a) && a->m == u->m && a->n == u->n &&
           a->k == u->k && a->bytes == u->bytes && g_strcmp0(a->label, u->label) == 0 &&
           g_strcmp0(a->dtype, u->dtype) == 0;
}

const MsMeasurement *
ms_overlap_fit_alone_row(const MsMeasurementSet *set, guint i)
{
    const MsMeasurement *u = ms_measurement_set_get(set, i);
    for (guint j = i; j-- > 0;) {
        const MsMeasurement *a = ms_measurement_set_get(set, j);
        if (same_kernel(a, u) && g_strcmp0(a->source, u->source) == 0) {
            return a;
        }
    }
    for (guint j = 0; j < ms_measurement_set_size(set); j++) {
        const MsMeasurement *a = ms_measurement_set_get(set, j);
        if (same_kernel(a, u)) {
            return a;
        }
    }
    return NULL;
}

/* Median of |s alone / together - 1| over the pairs. */
static double
median_error(const GArray *alone, const GArray *together, double s)
{
    g_autofree double *p = g_new(double, alone->len);
    for (guint i = 0; i < alone->len; i++) {
        p[i] = s * g_array_index(alone, double, i);
    }
    MsErrorStats st;
    return ms_error_stats(p, (const double *)together->data, alone->len, &st, NULL) ? st.median
                                                                                    : NAN;
}

gboolean
ms_overlap_fit(const MsMeasurementSet *set, const gboolean *use, MsOverlapFit *out, GError **error)
{
    g_return_val_if_fail(set != NULL && out != NULL, FALSE);
    *out = (MsOverlapFit){0, NAN, NAN, NAN, NAN, NAN, NAN};
    g_autoptr(GArray) alone = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GArray) together = g_array_new(FALSE, FALSE, sizeof(double));
    /* q_i = alone / together: sum q and sum q^2, for min over s of sum (s q_i - 1)^2. */
    double sq = 0, sqq = 0, largest = 0;
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        const MsMeasurement *u = ms_measurement_set_get(set, i);
        if ((use && !use[i]) || !ms_measurement_overlapped(u)) {
            continue;
        }
        const MsMeasurement *a = ms_overlap_fit_alone_row(set, i);
        if (a == NULL) {
            g_set_error(error, MS_OVERLAP_FIT_ERROR, MS_OVERLAP_FIT_ERROR_ALONE,
                        "%s:%u: %s '%s' %" G_GUINT64_FORMAT "x%" G_GUINT64_FORMAT
                        "x%" G_GUINT64_FORMAT " timed under an allreduce of %" G_GUINT64_FORMAT
                        " B: no row of the same kernel alone to compare it with (moesim bench "
                        "writes one just before it)",
                        u->source && *u->source ? u->source : "<memory>", u->line,
                        ms_measurement_kind_name(u->kind), u->label ? u->label : "", u->m, u->n,
                        u->k, u->background_bytes);
            return FALSE;
        }
        double q = a->seconds / u->seconds;
        sq += q;
        sqq += q * q;
        largest = MAX(largest, 1 / q);
        g_array_append_val(alone, a->seconds);
        g_array_append_val(together, u->seconds);
    }
    guint n = alone->len;
    if (n == 0) {
        return TRUE;
    }
    double s = sq / sqq, rss = 0;
    for (guint i = 0; i < n; i++) {
        double res = s * g_array_index(alone, double, i) / g_array_index(together, double, i) - 1;
        rss += res * res;
    }
    out->pairs = n;
    out->slowdown = s;
    out->std_error = n > 1 ? sqrt(rss / (n - 1) / sqq) : NAN;
    out->applied = CLAMP(s, 1.0, MS_COMPUTE_SLOWDOWN_MAX);
    out->largest = largest;
    out->median_before = median_error(alone, together, 1.0);
    out->median_after = median_error(alone, together, out->applied);
    return TRUE;
}
