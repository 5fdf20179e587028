/* fit: closed-form weighted least squares for the alpha-beta line, binned median ratio tables with
 * optional isotonic smoothing, the roofline-inverting GEMM efficiency curve, and error statistics.
 * Every routine is deterministic: ties are broken by input index, never by address or hash. */
#include "fit.h"

#include "sim/base/json_output.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/compute.h"

G_DEFINE_QUARK(ms_fit_error_quark, ms_fit_error)

/* ---- alpha-beta line ------------------------------------------------------------------------- */

static gboolean
check_line_points(const double *bytes, const double *seconds, guint n, GError **error)
{
    if (n < 2) {
        g_set_error(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT,
                    "a line needs at least 2 points, got %u", n);
        return FALSE;
    }
    gboolean distinct = FALSE;
    for (guint i = 0; i < n; i++) {
        if (!(bytes[i] >= 0) || !isfinite(bytes[i])) {
            g_set_error(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT,
                        "point %u: size %g is not a finite number >= 0", i, bytes[i]);
            return FALSE;
        }
        if (!(seconds[i] > 0) || !isfinite(seconds[i])) {
            g_set_error(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT,
                        "point %u: time %g s is not a finite number > 0", i, seconds[i]);
            return FALSE;
        }
        distinct = distinct || bytes[i] != bytes[0];
    }
    if (!distinct) {
        g_set_error(error, MS_FIT_ERROR, MS_FIT_ERROR_DEGENERATE,
                    "all %u points have the same size (%g bytes): no bandwidth can be fitted", n,
                    bytes[0]);
        return FALSE;
    }
    return TRUE;
}

/* Weighted least squares of t = a + b x, centred for accuracy at byte counts up to 2^50; with
 * through_origin, a = 0. */
static void
weighted_line(const double *x, const double *t, const double *w, guint n, gboolean through_origin,
              double *a, double *b)
{
    double sw = 0, sx = 0, st = 0;
    for (guint i = 0; i < n; i++) {
        sw += w[i];
        sx += w[i] * x[i];
        st += w[i] * t[i];
    }
    double mx = through_origin ? 0 : sx / sw, mt = through_origin ? 0 : st / sw;
    double sxx = 0, sxt = 0;
    for (guint i = 0; i < n; i++) {
        sxx += w[i] * (x[i] - mx) * (x[i] - mx);
        sxt += w[i] * (x[i] - mx) * (t[i] - mt);
    }
    *b = sxt / sxx;
    *a = mt - *b * mx;
}

static void
line_quality(const double *x, const double *t, guint n, MsLinearFit *fit)
{
    double mean = 0;
    for (guint i = 0; i < n; i++) {
        mean += t[i] / n;
    }
    double ss_res = 0, ss_tot = 0;
    fit->max_residual = -1;
    for (guint i = 0; i < n; i++) {
        double p = ms_linear_fit_predict(fit, x[i]);
        ss_res += (p - t[i]) * (p - t[i]);
        ss_tot += (t[i] - mean) * (t[i] - mean);
        double rel = fabs(p / t[i] - 1);
        if (rel > fit->max_residual) {
            fit->max_residual = rel;
            fit->max_index = i;
        }
    }
    fit->r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : (ss_res == 0 ? 1 : 0);
}

static gboolean
fit_line(const double *bytes, const double *seconds, guint n, gboolean relative, MsLinearFit *out,
         GError **error)
{
    if (!check_line_points(bytes, seconds, n, error)) {
        return FALSE;
    }
    g_autofree double *w = g_new(double, n);
    for (guint i = 0; i < n; i++) {
        w[i] = relative ? 1.0 / (seconds[i] * seconds[i]) : 1.0;
    }
    MsLinearFit fit = {0};
    double a, b;
    weighted_line(bytes, seconds, w, n, FALSE, &a, &b);
    if (a < 0) {
        /* A negative per-call overhead is unphysical: it only means the large sizes pull the line
         * down; the best physical line goes through the origin. */
        weighted_line(bytes, seconds, w, n, TRUE, &a, &b);
        a = 0;
        fit.alpha_clamped = TRUE;
    }
    if (!(b > 0) || !isfinite(1.0 / b)) {
        g_set_error(error, MS_FIT_ERROR, MS_FIT_ERROR_DEGENERATE,
                    "time does not grow with size over these %u points (slope %g s/byte): no "
                    "finite positive bandwidth fits",
                    n, b);
        return FALSE;
    }
    fit.alpha = a;
    fit.beta = 1.0 / b;
    fit.n = n;
    line_quality(bytes, seconds, n, &fit);
    *out = fit;
    return TRUE;
}

gboolean
ms_fit_linear(const double *bytes, const double *seconds, guint n, MsLinearFit *out, GError **error)
{
    return fit_line(bytes, seconds, n, FALSE, out, error);
}

gboolean
ms_fit_linear_relative(const double *bytes, const double *seconds, guint n, MsLinearFit *out,
                       GError **error)
{
    return fit_line(bytes, seconds, n, TRUE, out, error);
}

double
ms_linear_fit_predict(const MsLinearFit *fit, double bytes)
{
    return fit->alpha + bytes / fit->beta;
}

/* ---- efficiency tables ----------------------------------------------------------------------- */

typedef struct {
    double key;
    guint index;
} Keyed;

static int
keyed_cmp(const void *pa, const void *pb)
{
    const Keyed *a = pa, *b = pb;
    if (a->key != b->key) {
        return a->key < b->key ? -1 : 1;
    }
    return a->index < b->index ? -1 : (a->index > b->index);
}

/* Indices of v sorted by value, ties by index. */
static Keyed *
sort_by(const double *v, guint n)
{
    Keyed *k = g_new(Keyed, n);
    for (guint i = 0; i < n; i++) {
        k[i].key = v[i];
        k[i].index = i;
    }
    qsort(k, n, sizeof(Keyed), keyed_cmp);
    return k;
}

static double
sorted_median(const Keyed *k, guint n)
{
    return n % 2 ? k[n / 2].key : 0.5 * (k[n / 2 - 1].key + k[n / 2].key);
}

static double
median_of(const double *v, guint n)
{
    g_autofree Keyed *k = sort_by(v, n);
    return sorted_median(k, n);
}

static gboolean
check_ratio_points(const double *sizes, const double *measured, const double *predicted, guint n,
                   GError **error)
{
    if (n == 0) {
        g_set_error(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT, "no points to fit a table to");
        return FALSE;
    }
    for (guint i = 0; i < n; i++) {
        if (!(sizes[i] > 0) || !isfinite(sizes[i]) || !(measured[i] > 0) ||
            !isfinite(measured[i]) || !(predicted[i] > 0) || !isfinite(predicted[i])) {
            g_set_error(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT,
                        "point %u: size %g, measured %g s, predicted %g s (all must be finite "
                        "and > 0)",
                        i, sizes[i], measured[i], predicted[i]);
            return FALSE;
        }
    }
    return TRUE;
}

/* Pool adjacent violators: the non-decreasing sequence nearest to y in weighted least squares. */
static void
isotonic(double *y, const double *w, guint n)
{
    g_autofree double *val = g_new(double, n);
    g_autofree double *wt = g_new(double, n);
    g_autofree guint *len = g_new(guint, n);
    guint blocks = 0;
    for (guint i = 0; i < n; i++) {
        val[blocks] = y[i];
        wt[blocks] = w[i];
        len[blocks] = 1;
        blocks++;
        while (blocks > 1 && val[blocks - 2] > val[blocks - 1]) {
            double tw = wt[blocks - 2] + wt[blocks - 1];
            val[blocks - 2] =
                (val[blocks - 2] * wt[blocks - 2] + val[blocks - 1] * wt[blocks - 1]) / tw;
            wt[blocks - 2] = tw;
            len[blocks - 2] += len[blocks - 1];
            blocks--;
        }
    }
    guint i = 0;
    for (guint b = 0; b < blocks; b++) {
        for (guint j = 0; j < len[b]; j++) {
            y[i++] = val[b];
        }
    }
}

/* Bin of a size: distinct sizes get their own bins when few enough, else even log-spaced bins. */
static guint
bin_of(double size, double lo, double hi, guint bins)
{
    if (hi <= lo) {
        return 0;
    }
    guint b = (guint)(bins * (log(size) - log(lo)) / (log(hi) - log(lo)));
    return MIN(b, bins - 1);
}

static guint
count_distinct(const Keyed *k, guint n)
{
    guint d = n ? 1 : 0;
    for (guint i = 1; i < n; i++) {
        d += k[i].key != k[i - 1].key;
    }
    return d;
}

MsEffTable *
ms_fit_eff_table(const double *sizes, const double *measured, const double *predicted, guint n,
                 guint max_points, gboolean monotone, GError **error)
{
    if (!check_ratio_points(sizes, measured, predicted, n, error)) {
        return NULL;
    }
    g_autofree Keyed *order = sort_by(sizes, n);
    guint bins = max_points ? max_points : MS_EFF_TABLE_POINTS;
    gboolean per_size = count_distinct(order, n) <= bins;
    double lo = order[0].key, hi = order[n - 1].key;
    g_autoptr(GArray) out_size = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GArray) out_ratio = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GArray) out_weight = g_array_new(FALSE, FALSE, sizeof(double));
    g_autofree double *ratios = g_new(double, n);
    for (guint i = 0; i < n;) {
        guint j = i, key = bin_of(order[i].key, lo, hi, bins);
        double log_sum = 0;
        while (j < n && (per_size ? order[j].key == order[i].key
                                  : bin_of(order[j].key, lo, hi, bins) == key)) {
            guint p = order[j].index;
            ratios[j - i] = predicted[p] / measured[p];
            log_sum += log(order[j].key);
            j++;
        }
        double size = per_size ? order[i].key : exp(log_sum / (j - i));
        double ratio = median_of(ratios, j - i), weight = j - i;
        g_array_append_val(out_size, size);
        g_array_append_val(out_ratio, ratio);
        g_array_append_val(out_weight, weight);
        i = j;
    }
    double *r = (double *)out_ratio->data;
    if (monotone) {
        isotonic(r, (const double *)out_weight->data, out_ratio->len);
    }
    for (guint i = 0; i < out_ratio->len; i++) {
        if (r[i] > MS_EFF_RATIO_MAX) {
            g_set_error(error, MS_FIT_ERROR, MS_FIT_ERROR_RANGE,
                        "at %.0f bytes the model predicts %.3g x the measured time (limit %g): "
                        "the link or per-call overhead fit is off",
                        g_array_index(out_size, double, i), r[i], MS_EFF_RATIO_MAX);
            return NULL;
        }
    }
    return ms_eff_table_new((double *)out_size->data, r, out_size->len, error);
}

/* ---- GEMM efficiency curve ------------------------------------------------------------------- */

static gboolean
check_roofline(const MsRoofline *roof, GError **error)
{
    if (!(roof->peak_flops > 0) || !isfinite(roof->peak_flops) || !(roof->hbm_bandwidth > 0) ||
        !isfinite(roof->hbm_bandwidth) || !(roof->launch_s >= 0) || !isfinite(roof->launch_s)) {
        g_set_error(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT,
                    "roofline peak %g FLOP/s, hbm %g B/s, launch %g s: peak and hbm must be > 0, "
                    "launch >= 0",
                    roof->peak_flops, roof->hbm_bandwidth, roof->launch_s);
        return FALSE;
    }
    return TRUE;
}

static gboolean
check_gemm_point(const MsGemmPoint *p, guint i, GError **error)
{
    if (!(p->tokens > 0) || !isfinite(p->tokens) || !(p->flops > 0) || !isfinite(p->flops) ||
        !(p->bytes >= 0) || !isfinite(p->bytes) || !(p->seconds > 0) || !isfinite(p->seconds)) {
        g_set_error(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT,
                    "point %u: tokens %g, flops %g, bytes %g, time %g s (tokens, flops and time "
                    "must be > 0, bytes >= 0)",
                    i, p->tokens, p->flops, p->bytes, p->seconds);
        return FALSE;
    }
    return TRUE;
}

/* The efficiency that makes the roofline reproduce one point; *memory_bound when the memory term
 * alone already accounts for the time. */
static gboolean
point_efficiency(const MsGemmPoint *p, guint i, const MsRoofline *roof, double *eff,
                 gboolean *memory_bound, GError **error)
{
    double body = p->seconds - roof->launch_s;
    if (!(body > 0)) {
        g_set_error(error, MS_FIT_ERROR, MS_FIT_ERROR_RANGE,
                    "point %u (%g tokens): time %g s does not exceed the launch overhead %g s", i,
                    p->tokens, p->seconds, roof->launch_s);
        return FALSE;
    }
    double memory = p->bytes / roof->hbm_bandwidth;
    *memory_bound = body <= memory;
    *eff = p->flops / (roof->peak_flops * (*memory_bound ? memory : body));
    if (*eff > MS_COMPUTE_EFFICIENCY_MAX) {
        g_set_error(error, MS_FIT_ERROR, MS_FIT_ERROR_RANGE,
                    "point %u (%g tokens): %g FLOP in %g s is %.3g x the peak: wrong peak, flops "
                    "or time unit",
                    i, p->tokens, p->flops, p->seconds, *eff);
        return FALSE;
    }
    return TRUE;
}

MsGemmCurve *
ms_fit_gemm_curve(const MsGemmPoint *points, guint n, const MsRoofline *roof, GError **error)
{
    if (n == 0) {
        g_set_error(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT, "no GEMM points to fit a curve to");
        return NULL;
    }
    if (!check_roofline(roof, error)) {
        return NULL;
    }
    g_autofree double *tok = g_new(double, n);
    for (guint i = 0; i < n; i++) {
        if (!check_gemm_point(&points[i], i, error)) {
            return NULL;
        }
        tok[i] = points[i].tokens;
    }
    g_autofree Keyed *order = sort_by(tok, n);
    g_autoptr(MsGemmCurve) curve = g_new0(MsGemmCurve, 1);
    curve->tokens = g_new(double, n);
    curve->efficiency = g_new(double, n);
    for (guint i = 0; i < n;) {
        double sum = 0, sum_sq = 0;
        guint j = i;
        for (; j < n && order[j].key == order[i].key; j++) {
            double e;
            gboolean mem;
            guint p = order[j].index;
            if (!point_efficiency(&points[p], p, roof, &e, &mem, error)) {
                return NULL;
            }
            curve->n_memory_bound += mem;
            sum += e;
            sum_sq += e * e;
        }
        curve->tokens[curve->n] = order[i].key;
        curve->efficiency[curve->n] = sum_sq / sum;
        curve->n++;
        i = j;
    }
    return g_steal_pointer(&curve);
}

double
ms_gemm_curve_predict(const MsGemmCurve *curve, const MsRoofline *roof, const MsGemmPoint *point)
{
    double eff = ms_gemm_curve_eval(curve, point->tokens);
    double compute = point->flops / (roof->peak_flops * eff);
    double memory = point->bytes / roof->hbm_bandwidth;
    return roof->launch_s + MAX(compute, memory);
}

/* ---- error statistics ------------------------------------------------------------------------ */

gboolean
ms_error_stats(const double *predicted, const double *measured, guint n, MsErrorStats *out,
               GError **error)
{
    if (n == 0) {
        g_set_error(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT, "no points to compute errors of");
        return FALSE;
    }
    g_autofree double *rel = g_new(double, n);
    MsErrorStats s = {.n = n, .max = -1};
    for (guint i = 0; i < n; i++) {
        if (!(measured[i] > 0) || !isfinite(measured[i]) || !isfinite(predicted[i])) {
            g_set_error(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT,
                        "point %u: measured %g, predicted %g (measured must be finite and > 0)", i,
                        measured[i], predicted[i]);
            return FALSE;
        }
        rel[i] = fabs(predicted[i] / measured[i] - 1);
        if (rel[i] > s.max) {
            s.max = rel[i];
            s.worst = i;
        }
    }
    g_autofree Keyed *k = sort_by(rel, n);
    s.median = sorted_median(k, n);
    guint rank = (guint)ceil(0.9 * n);
    s.p90 = k[MAX(rank, 1) - 1].key;
    *out = s;
    return TRUE;
}

void
ms_holdout_every(gboolean *held, guint n, guint k, guint offset)
{
    g_return_if_fail(k >= 2 && offset < k);
    for (guint i = 0; i < n; i++) {
        held[i] = i % k == offset;
    }
}

static gboolean
count_held(const gboolean *held, guint n, guint *n_held, GError **error)
{
    *n_held = 0;
    for (guint i = 0; i < n; i++) {
        *n_held += held[i] != FALSE;
    }
    if (*n_held == 0) {
        g_set_error(error, MS_FIT_ERROR, MS_FIT_ERROR_INPUT,
                    "no point of %u is held out: nothing to evaluate on", n);
        return FALSE;
    }
    return TRUE;
}

gboolean
ms_holdout_linear(const double *bytes, const double *seconds, guint n, const gboolean *held,
                  gboolean relative, MsLinearFit *fit, MsErrorStats *stats, GError **error)
{
    guint n_held;
    if (!count_held(held, n, &n_held, error)) {
        return FALSE;
    }
    g_autofree double *tx = g_new(double, n - n_held);
    g_autofree double *tt = g_new(double, n - n_held);
    g_autofree double *pred = g_new(double, n_held);
    g_autofree double *meas = g_new(double, n_held);
    guint a = 0;
    for (guint i = 0; i < n; i++) {
        if (!held[i]) {
            tx[a] = bytes[i];
            tt[a++] = seconds[i];
        }
    }
    if (!fit_line(tx, tt, a, relative, fit, error)) {
        return FALSE;
    }
    guint b = 0;
    for (guint i = 0; i < n; i++) {
        if (held[i]) {
            pred[b] = ms_linear_fit_predict(fit, bytes[i]);
            meas[b++] = seconds[i];
        }
    }
    return ms_error_stats(pred, meas, b, stats, error);
}

gboolean
ms_holdout_gemm(const MsGemmPoint *points, guint n, const gboolean *held, const MsRoofline *roof,
                MsErrorStats *stats, GError **error)
{
    guint n_held;
    if (!count_held(held, n, &n_held, error)) {
        return FALSE;
    }
    g_autofree MsGemmPoint *train = g_new(MsGemmPoint, n - n_held);
    g_autofree double *pred = g_new(double, n_held);
    g_autofree double *meas = g_new(double, n_held);
    guint a = 0;
    for (guint i = 0; i < n; i++) {
        if (!held[i]) {
            train[a++] = points[i];
        }
    }
    g_autoptr(MsGemmCurve) curve = ms_fit_gemm_curve(train, a, roof, error);
    if (curve == NULL) {
        return FALSE;
    }
    guint b = 0;
    for (guint i = 0; i < n; i++) {
        if (held[i]) {
            pred[b] = ms_gemm_curve_predict(curve, roof, &points[i]);
            meas[b++] = points[i].seconds;
        }
    }
    return ms_error_stats(pred, meas, b, stats, error);
}

void
ms_error_stats_json(JsonBuilder *b, const char *name, const MsErrorStats *s)
{
    if (name) {
        json_builder_set_member_name(b, name);
    }
    json_builder_begin_object(b);
    ms_json_member_int(b, "points", s->n);
    ms_json_member_double(b, "median", s->median);
    ms_json_member_double(b, "p90", s->p90);
    ms_json_member_double(b, "max", s->max);
    json_builder_end_object(b);
}
