/* pace_fit: per-GPU compute pace relative to the median GPU. */
#include "pace_fit.h"

#include <math.h>
#include <stdlib.h>

/* One compute op's measured over simulated time, on its GPU. */
typedef struct {
    gint64 rank;
    double ratio;
} Ratio;

static int
cmp_rank(gconstpointer a, gconstpointer b)
{
    const Ratio *x = a, *y = b;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n), n > 0 (sorts v). */
static double
median(double *v, guint n)
{
    qsort(v, n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

GArray *
ms_pace_fit(const MsRunComparison *cmp)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(MsGpuPace));
    /* The ratios of the ops that have one (both times positive, the ratio finite), by GPU. */
    g_autoptr(GArray) r = g_array_new(FALSE, FALSE, sizeof(Ratio));
    for (guint i = 0; i < cmp->ops->len; i++) {
        const MsOpPair *op = &g_array_index(cmp->ops, MsOpPair, i);
        Ratio x = {op->rank, op->measured_us / op->predicted_us};
        if (op->compute && op->rank >= 0 && op->predicted_us > 0 && isfinite(x.ratio) &&
            x.ratio > 0) {
            g_array_append_val(r, x);
        }
    }
    g_array_sort(r, cmp_rank);
    const Ratio *v = (const Ratio *)r->data;
    g_autofree double *scratch = g_new(double, MAX(r->len, 1));
    for (guint a = 0, b; a < r->len; a = b) {
        for (b = a; b < r->len && v[b].rank == v[a].rank; b++) {
            scratch[b - a] = v[b].ratio;
        }
        if (b - a >= MS_PACE_MIN_OPS) {
            MsGpuPace p = {(guint)v[a].rank, median(scratch, b - a), b - a};
            g_array_append_val(out, p);
        }
    }
    if (out->len < 2) {
        g_array_set_size(out, 0);
        return out;
    }
    g_autofree double *medians = g_new(double, out->len);
    for (guint k = 0; k < out->len; k++) {
        medians[k] = g_array_index(out, MsGpuPace, k).pace;
    }
    double ref = median(medians, out->len);
    guint kept = 0;
    for (guint k = 0; k < out->len; k++) {
        MsGpuPace p = g_array_index(out, MsGpuPace, k);
        p.pace /= ref;
        if (isfinite(p.pace)) { /* ratios 10^600 apart are no run's */
            g_array_index(out, MsGpuPace, kept++) = p;
        }
    }
    g_array_set_size(out, kept);
    return out;
}
