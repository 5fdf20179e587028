/* trace_gen_skew: closed forms of the generative model and bisection solvers for its targets.
 * Shares and persistence are exact expectations of the sampler (systematic sampling and group
 * following), so a solved parameter reproduces its target in expectation; sampled traces deviate
 * by sampling noise only. */
#include "trace_gen_skew.h"

#include <math.h>

/* Fine enough for every target: the solved values are exact to about 1e-13. */
#define BISECTIONS 200
/* Persistence is piecewise linear in corr and may dip below its corr = 0 value before it rises;
 * a scan this fine finds the last crossing before the bisection refines it. */
#define SCAN_STEPS 4096

void
ms_trace_gen_popularity(double s, guint n, guint k, double *p)
{
    double cap = 1.0 / k;
    for (guint i = 0; i < n; i++) {
        p[i] = pow((double)(i + 1), -s);
    }
    for (guint m = 0; m <= n; m++) {
        double rest = 0;
        for (guint i = m; i < n; i++) {
            rest += p[i];
        }
        double scale = rest > 0 ? (1.0 - (double)m * cap) / rest : 0;
        if (m < n && p[m] * scale > cap) {
            p[m] = cap;
            continue;
        }
        for (guint i = m; i < n; i++) {
            p[i] *= scale;
        }
        for (guint i = 0; i < m; i++) {
            p[i] = cap;
        }
        return;
    }
}

static guint
groups_of(guint n, guint k)
{
    return MAX(n / k, 1);
}

/* The group a token whose primary has rank i follows next (the leftover ranks count towards the
 * last group, as in the sampler). */
static guint
group_of(guint i, guint k, guint groups)
{
    return MIN(i / k, groups - 1);
}

void
ms_trace_gen_shares(const double *p, guint n, guint k, double corr, double *share)
{
    guint groups = groups_of(n, k);
    g_autofree double *q = g_new0(double, groups);
    for (guint i = 0; i < n; i++) {
        q[group_of(i, k, groups)] += p[i];
    }
    for (guint i = 0; i < n; i++) {
        double follow = i < groups * k ? q[i / k] / k : 0;
        share[i] = (1 - corr) * p[i] + corr * follow;
    }
}

double
ms_trace_gen_hottest(const double *p, guint n, guint k, double corr)
{
    g_autofree double *share = g_new(double, n);
    ms_trace_gen_shares(p, n, k, corr, share);
    double best = 0;
    for (guint i = 0; i < n; i++) {
        best = MAX(best, share[i]);
    }
    return best;
}

double
ms_trace_gen_ratio(const double *p, guint n, guint k, double corr)
{
    g_autofree double *share = g_new(double, n);
    ms_trace_gen_shares(p, n, k, corr, share);
    double hi = 0, lo = INFINITY;
    for (guint i = 0; i < n; i++) {
        hi = MAX(hi, share[i]);
        lo = MIN(lo, share[i]);
    }
    return lo > 0 ? hi / lo : INFINITY;
}

/* Adds v to the two largest values seen (a >= b). */
static void
keep_two(double v, double *a, double *b)
{
    if (v > *a) {
        *b = *a;
        *a = v;
    } else if (v > *b) {
        *b = v;
    }
}

void
ms_trace_gen_persistence(const double *p, guint n, guint k, double corr, double *top1, double *top2)
{
    guint groups = groups_of(n, k);
    g_autofree double *mass = g_new0(double, groups);
    for (guint i = 0; i < n; i++) {
        mass[group_of(i, k, groups)] += p[i];
    }
    *top1 = *top2 = 0;
    for (guint j = 0; j < groups; j++) {
        guint first = j * k, last = MIN(first + k, n); /* the followed ranks */
        /* p is sorted, so the two largest next shares are among the two best followed ranks
         * and the two best others. */
        double a = 0, b = 0;
        for (guint m = first; m < MIN(first + 2, last); m++) {
            keep_two((1 - corr) * p[m] + corr / (last - first), &a, &b);
        }
        guint seen = 0;
        for (guint i = 0; i < n && seen < 2; i++) {
            if (i < first || i >= last) {
                keep_two((1 - corr) * p[i], &a, &b);
                seen++;
            }
        }
        *top1 += mass[j] * a;
        *top2 += mass[j] * (a + b);
    }
}

static double
persistence_at(const double *p, guint n, guint k, double corr)
{
    double t1 = 0, t2 = 0;
    ms_trace_gen_persistence(p, n, k, corr, &t1, &t2);
    return t1;
}

typedef double (*SkewFn)(const double *p, guint n, guint k, double corr);

static double
skew_at(SkewFn fn, double s, guint n, guint k, double corr)
{
    g_autofree double *p = g_new(double, n);
    ms_trace_gen_popularity(s, n, k, p);
    return fn(p, n, k, corr);
}

/* The exponent in [0, 64] at which fn (increasing in it) reaches target. */
static gboolean
solve_exponent(SkewFn fn, const char *key, double target, const MsTraceGenParams *prm, double corr,
               const char *what, double *zipf, GError **error)
{
    double lo = 0, hi = MS_TRACE_GEN_ZIPF_MAX;
    double flo = skew_at(fn, lo, prm->experts, prm->top_k, corr);
    double fhi = skew_at(fn, hi, prm->experts, prm->top_k, corr);
    if (!(target >= flo - 1e-12 && target <= fhi * (1 + 1e-12))) {
        g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE,
                    "%s=%g is unreachable: with experts=%u, top_k=%u and corr=%g %s lies in "
                    "%.6g..%.6g",
                    key, target, prm->experts, prm->top_k, corr, what, flo, fhi);
        return FALSE;
    }
    for (int i = 0; i < BISECTIONS && hi - lo > 1e-13; i++) {
        double mid = 0.5 * (lo + hi);
        if (skew_at(fn, mid, prm->experts, prm->top_k, corr) < target) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    *zipf = 0.5 * (lo + hi);
    return TRUE;
}

/* corr in [0, 1] at which the persistence of primaries reaches target: the last crossing below
 * corr = 1, where persistence rises to 1/k. */
static gboolean
solve_persist(const MsTraceGenParams *prm, double zipf, double *corr, GError **error)
{
    guint n = prm->experts, k = prm->top_k;
    g_autofree double *p = g_new(double, n);
    ms_trace_gen_popularity(zipf, n, k, p);
    double target = prm->persist, least = INFINITY, most = persistence_at(p, n, k, 1.0);
    gint below = -1;
    for (gint i = SCAN_STEPS; i >= 0; i--) {
        double v = persistence_at(p, n, k, (double)i / SCAN_STEPS);
        least = MIN(least, v);
        if (below < 0 && v < target) {
            below = i;
        }
    }
    if (target > most + 1e-12 || target < least - 1e-12) {
        g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE,
                    "persist=%g is unreachable: with experts=%u, top_k=%u and exponent %g the "
                    "persistence of primary choices lies in %.6g..%.6g",
                    target, n, k, zipf, least, most);
        return FALSE;
    }
    if (below < 0) {
        *corr = 0; /* at or below the persistence of independent choices */
        return TRUE;
    }
    if (below == SCAN_STEPS) {
        *corr = 1;
        return TRUE;
    }
    double lo = (double)below / SCAN_STEPS, hi = (double)(below + 1) / SCAN_STEPS;
    for (int i = 0; i < BISECTIONS && hi - lo > 1e-15; i++) {
        double mid = 0.5 * (lo + hi);
        if (persistence_at(p, n, k, mid) < target) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    *corr = 0.5 * (lo + hi);
    return TRUE;
}

static gboolean
solve_skew(const MsTraceGenParams *prm, double corr, double *zipf, GError **error)
{
    switch (prm->skew) {
    case MS_TRACE_GEN_SKEW_ZIPF:
        *zipf = prm->zipf;
        return TRUE;
    case MS_TRACE_GEN_SKEW_HOT:
        return solve_exponent(ms_trace_gen_hottest, "hot", prm->hot, prm, corr,
                              "the hottest expert's share", zipf, error);
    case MS_TRACE_GEN_SKEW_RATIO:
        return solve_exponent(ms_trace_gen_ratio, "ratio", prm->ratio, prm, corr,
                              "the most over the least popular expert's share", zipf, error);
    }
    g_return_val_if_reached(FALSE);
}

gboolean
ms_trace_gen_solve(const MsTraceGenParams *prm, double *zipf, double *corr, GError **error)
{
    gboolean persist = prm->follow == MS_TRACE_GEN_FOLLOW_PERSIST;
    double z = prm->zipf, c = persist ? 0 : prm->corr;
    /* The exponent depends on corr for top_k > 1 and persistence on the exponent: alternate
     * until neither moves (one pass when only one is solved). */
    for (int it = 0; it < 100; it++) {
        double z2 = z, c2 = c;
        if (!solve_skew(prm, c, &z2, error) || (persist && !solve_persist(prm, z2, &c2, error))) {
            return FALSE;
        }
        gboolean still = fabs(z2 - z) < 1e-12 && fabs(c2 - c) < 1e-12;
        z = z2;
        c = c2;
        if (still || !persist || prm->skew == MS_TRACE_GEN_SKEW_ZIPF) {
            *zipf = z;
            *corr = c;
            return TRUE;
        }
    }
    g_set_error(error, MS_TRACE_GEN_ERROR, MS_TRACE_GEN_ERROR_VALUE,
                "persist=%g with %s: the exponent and corr that meet both do not settle",
                prm->persist, prm->skew == MS_TRACE_GEN_SKEW_HOT ? "hot" : "ratio");
    return FALSE;
}
