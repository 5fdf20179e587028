/* trace_gen: the generative model of docs/trace-format.md. Sampling is in 32-bit fixed point
 * (systematic sampling of top_k distinct experts with exact inclusion probabilities) or, under
 * a node limit, by affinity keys and DeepSeek-V3's node selection; driven by xoshiro256** seeded
 * through splitmix64, so the output depends only on the parameters. */
#include "trace_gen.h"

#include <math.h>
#include <string.h>

#include "sim/base/units.h"
#include "trace_gen_skew.h"

/* clang-format off */
G_DEFINE_QUARK(ms_trace_gen_error_quark, ms_trace_gen_error)
/* clang-format on */

#define ONE (G_GUINT64_CONSTANT(1) << 32) /* 1.0 in the 32-bit fixed point of the sampler */
/* Buckets of the mantissa in node-limited routing's bounds on log (a power of 2). */
#define LOG_TABLE 256

/* xoshiro256** state. */
typedef struct {
    guint64 s[4];
} Rng;

/* A cumulative table cum[0..n] (cum[0] = 0, non-decreasing) with a guide: start[x >> shift] is
 * the interval that holds the first point of x's bucket, so that finding x's interval scans
 * forward from there: with at least 4n buckets, a bucket holds a boundary at most 1 time in 4 on
 * average, where bisection takes log2(n) dependent steps per expert choice. */
typedef struct {
    const guint64 *cum;
    guint32 *start;
    guint shift;
} Guide;

struct _MsTraceGen {
    MsTraceGenParams params;
    MsTraceHeader header;
    Rng rng;
    double zipf, corr;    /* in use (solved from targets) */
    double *p;            /* popularity of each rank, capped at 1/top_k */
    guint64 *cum;         /* [experts + 1] cumulative inclusion k*p in fixed point, total k*ONE */
    guint64 *cluster_cum; /* [clusters + 1] cumulative cluster probabilities, total ONE */
    guint32 clusters;
    Guide cum_guide, cluster_guide;
    guint32 *sigma;                  /* [layer][rank]: the expert at each popularity rank */
    guint64 corr_below, drift_below; /* a 32-bit draw below this succeeds */
    guint32 next_iteration;
    guint32 *path;
    /* Node-limited routing: 1 / p of each popularity rank, and per layer scratch: bounds on
     * each expert's ordering value (equal once it is computed), its draw and popularity rank,
     * score of each node, the chosen nodes, candidates. log1p(b / 256) for b = 0 .. 256. */
    double *inv_p, *lo, *hi, *score, *placed, *cand_v, log_table[LOG_TABLE + 1];
    guint32 *raw, *rank_of, *nodes, *cand, *ids;
};

static guint64
rotl(guint64 x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline guint64
rng_next(Rng *rng)
{
    guint64 *s = rng->s;
    guint64 result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

static inline guint64
rand32(Rng *rng)
{
    return rng_next(rng) >> 32;
}

/* Uniform in 0..n-1 by multiply-shift (bias below n / 2^32, and deterministic). */
static inline guint32
rand_below(Rng *rng, guint32 n)
{
    return (guint32)((rand32(rng) * n) >> 32);
}

static void
rng_seed(MsTraceGen *g, guint64 seed)
{
    for (int i = 0; i < 4; i++) {
        guint64 z = (seed += G_GUINT64_CONSTANT(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT(0x94d049bb133111eb);
        g->rng.s[i] = z ^ (z >> 31);
    }
}

static guint32
cluster_of(guint32 rank, guint k, guint32 clusters)
{
    return MIN(rank / k, clusters - 1);
}

/* Fixed-point cumulative sums of x (n values adding up to total / ONE), each term capped at cap;
 * rounding leftovers are spread one unit at a time in index order so the sum is exact. */
static void
fixed_cumulative(const double *x, guint n, guint64 total, guint64 cap, guint64 *cum)
{
    g_autofree guint64 *f = g_new(guint64, n);
    guint64 sum = 0;
    for (guint i = 0; i < n; i++) {
        double v = floor(x[i] * (double)ONE);
        f[i] = v <= 0 ? 0 : MIN((guint64)v, cap);
        sum += f[i];
    }
    for (guint i = 0; sum < total; i = (i + 1) % n) {
        if (f[i] < cap) {
            f[i]++;
            sum++;
        }
    }
    for (guint i = 0; sum > total; i = (i + 1) % n) {
        if (f[i] > 0) {
            f[i]--;
            sum--;
        }
    }
    cum[0] = 0;
    for (guint i = 0; i < n; i++) {
        cum[i + 1] = cum[i] + f[i];
    }
}

/* Index i with cum[i] <= x < cum[i + 1] (cum[0] = 0 <= x < cum[n]): unique, since an empty
 * interval never holds x, so the scan finds the interval a bisection would. */
static inline guint32
find_interval(const Guide *gd, guint64 x)
{
    guint32 i = gd->start[x >> gd->shift];
    while (gd->cum[i + 1] <= x) {
        i++;
    }
    return i;
}

/* The guide of cum[0..n] (cum[n] > 0): a power of two of buckets, at least 4n, so that a
 * bucket is a shift of x. */
static void
guide_init(Guide *gd, const guint64 *cum, guint n)
{
    guint bucket_bits = 2, width = 0;
    while ((G_GUINT64_CONSTANT(1) << bucket_bits) < 4 * (guint64)n) {
        bucket_bits++;
    }
    for (guint64 top = cum[n] - 1; top > 0; top >>= 1) {
        width++;
    }
    gd->cum = cum;
    gd->shift = width > bucket_bits ? width - bucket_bits : 0;
    gsize buckets = (gsize)((cum[n] - 1) >> gd->shift) + 1;
    gd->start = g_new(guint32, buckets);
    guint32 i = 0;
    for (gsize b = 0; b < buckets; b++) {
        guint64 first = (guint64)b << gd->shift;
        while (cum[i + 1] <= first) {
            i++;
        }
        gd->start[b] = i;
    }
}

static void
build_samplers(MsTraceGen *g)
{
    guint n = g->params.experts, k = g->params.top_k;
    g->p = g_new(double, n);
    ms_trace_gen_popularity(g->zipf, n, k, g->p);
    g_autofree double *incl = g_new(double, n);
    for (guint i = 0; i < n; i++) {
        incl[i] = k * g->p[i];
    }
    g->cum = g_new(guint64, n + 1);
    fixed_cumulative(incl, n, k * ONE, ONE, g->cum);
    g->clusters = n / k;
    g_autofree double *q = g_new0(double, g->clusters);
    for (guint i = 0; i < n; i++) {
        q[cluster_of(i, k, g->clusters)] += g->p[i];
    }
    g->cluster_cum = g_new(guint64, g->clusters + 1);
    fixed_cumulative(q, g->clusters, ONE, ONE, g->cluster_cum);
    guide_init(&g->cum_guide, g->cum, n);
    guide_init(&g->cluster_guide, g->cluster_cum, g->clusters);
}

static guint64
probability_threshold(double prob)
{
    return (guint64)llround(prob * (double)ONE);
}

MsTraceGen *
ms_trace_gen_new(const MsTraceGenParams *params, GError **error)
{
    g_return_val_if_fail(params != NULL, NULL);
    if (!ms_trace_gen_params_validate(params, error)) {
        return NULL;
    }
    double zipf = params->zipf, corr = params->corr;
    if (!ms_trace_gen_solve(params, &zipf, &corr, error)) {
        return NULL;
    }
    MsTraceGen *g = g_new0(MsTraceGen, 1);
    g->params = *params;
    g->zipf = zipf;
    g->corr = corr;
    ms_trace_header_init_shape(&g->header, params->experts, params->layers, params->ranks,
                               params->top_k);
    g->header.tokens_per_rank = params->n_groups ? 0 : params->tokens;
    g->header.n_groups = params->n_groups;
    memcpy(g->header.group_first, params->group_first, sizeof g->header.group_first);
    g_autofree char *spec = ms_trace_gen_params_to_spec(params);
    g_autofree char *line = g_strconcat("moesim trace gen ", spec, NULL);
    /* The canonical spec of valid parameters is far below MS_TRACE_GENERATOR_MAX. */
    gboolean fits = ms_trace_header_set_generator(&g->header, line, NULL);
    g_assert(fits);
    (void)fits;
    rng_seed(g, params->seed);
    build_samplers(g);
    g->corr_below = probability_threshold(corr);
    g->drift_below = probability_threshold(params->drift);
    guint n = params->experts;
    g->sigma = g_new(guint32, (gsize)params->layers * n);
    for (guint l = 0; l < params->layers; l++) {
        guint32 *sigma = g->sigma + (gsize)l * n;
        for (guint i = 0; i < n; i++) {
            sigma[i] = i;
        }
        for (guint i = n - 1; i > 0; i--) {
            guint32 j = rand_below(&g->rng, i + 1), t = sigma[i];
            sigma[i] = sigma[j];
            sigma[j] = t;
        }
    }
    g->path = g_new(guint32, ms_trace_header_path_len(&g->header));
    if (params->max_nodes) {
        g->header.expert_nodes = params->expert_nodes;
        g->header.max_nodes = params->max_nodes;
        g->inv_p = g_new(double, n);
        for (guint i = 0; i < n; i++) {
            g->inv_p[i] = 1.0 / g->p[i]; /* INFINITY for a zero popularity: affinity 0 */
        }
        g->lo = g_new(double, n);
        g->hi = g_new(double, n);
        g->raw = g_new(guint32, n);
        g->rank_of = g_new(guint32, n);
        g->score = g_new(double, params->expert_nodes);
        g->nodes = g_new(guint32, params->max_nodes);
        g->cand = g_new(guint32, n);
        g->ids = g_new(guint32, params->max_nodes);
        g->cand_v = g_new(double, n);
        g->placed = g_new(double, n);
        for (guint b = 0; b <= LOG_TABLE; b++) {
            g->log_table[b] = log1p((double)b / LOG_TABLE);
        }
    }
    return g;
}

void
ms_trace_gen_free(MsTraceGen *g)
{
    if (g == NULL) {
        return;
    }
    g_free(g->p);
    g_free(g->cum);
    g_free(g->cluster_cum);
    g_free(g->cum_guide.start);
    g_free(g->cluster_guide.start);
    g_free(g->sigma);
    g_free(g->path);
    g_free(g->inv_p);
    g_free(g->lo);
    g_free(g->hi);
    g_free(g->raw);
    g_free(g->rank_of);
    g_free(g->score);
    g_free(g->nodes);
    g_free(g->cand);
    g_free(g->ids);
    g_free(g->cand_v);
    g_free(g->placed);
    g_free(g);
}

const MsTraceHeader *
ms_trace_gen_header(const MsTraceGen *g)
{
    return &g->header;
}

double
ms_trace_gen_zipf(const MsTraceGen *g)
{
    return g->zipf;
}

double
ms_trace_gen_corr(const MsTraceGen *g)
{
    return g->corr;
}

double
ms_trace_gen_expected_hot_share(const MsTraceGen *g)
{
    return ms_trace_gen_hottest(g->p, g->params.experts, g->params.top_k, g->corr);
}

double
ms_trace_gen_expected_ratio(const MsTraceGen *g)
{
    return ms_trace_gen_ratio(g->p, g->params.experts, g->params.top_k, g->corr);
}

void
ms_trace_gen_expected_persistence(const MsTraceGen *g, double *top1, double *top2)
{
    ms_trace_gen_persistence(g->p, g->params.experts, g->params.top_k, g->corr, top1, top2);
}

/* One token's top_k popularity ranks at a layer, into picks; returns the cluster of the
 * primary, which the next layer follows. The draws come from rng, the caller's copy of the
 * generator's state. */
static inline guint32
choose_layer(const MsTraceGen *g, Rng *rng, guint layer, guint32 prev_cluster, guint32 *picks,
             guint *primary)
{
    guint k = g->params.top_k;
    if (rand32(rng) < g->corr_below) {
        guint32 j = layer == 0 ? find_interval(&g->cluster_guide, rand32(rng)) : prev_cluster;
        for (guint m = 0; m < k; m++) {
            picks[m] = j * k + m;
        }
    } else {
        /* Systematic sampling: points u, u+1, ..., u+k-1 on the cumulative inclusion scale
         * fall in k distinct intervals because no interval is wider than 1. */
        guint64 u = rand32(rng);
        for (guint m = 0; m < k; m++) {
            picks[m] = find_interval(&g->cum_guide, u + m * ONE);
        }
    }
    *primary = rand_below(rng, k);
    return cluster_of(picks[*primary], k, g->clusters);
}

/* The m largest of values[0..n) into best (indices, by value descending, ties to the lower
 * index): a partial insertion sort, m is small. Returns how many it placed (min(m, n)). */
static guint
best_of(const double *values, guint n, guint m, guint32 *best)
{
    guint have = 0;
    for (guint32 i = 0; i < n; i++) {
        if (have == m && values[i] <= values[best[m - 1]]) {
            continue;
        }
        guint at = have < m ? have++ : m - 1;
        while (at > 0 && values[best[at - 1]] < values[i]) {
            best[at] = best[at - 1];
            at--;
        }
        best[at] = i;
    }
    return have;
}

/* The affinity behind an ordering value of choose_limited. */
static inline double
affinity(double v)
{
    return v > 0 ? v : exp(v);
}

/* The ordering value of a draw r at popularity rank i, as choose_limited has always computed it:
 * log(u) / p_i for u = (r + 1/2) / 2^32. */
static inline double
key_of(const MsTraceGen *g, guint32 r, guint i)
{
    return log(((double)r + 0.5) / (double)ONE) * g->inv_p[i];
}

/* Margin on the bounds of key_bounds, far above the rounding of the bounds' arithmetic (a few
 * units in the 16th digit of numbers below 23) and of libm's log (under an ulp). */
#define KEY_MARGIN 1e-12

/* Bounds lo <= key_of(g, r, i) <= hi without a log: u = t / 2^33 with t = 2r + 1 an integer,
 * t = 2^e (1 + f), and the first 8 bits of f give f's bucket, whose ends bound log(1 + f) in the
 * table; t as a double is exact (t < 2^33), so e and those bits are its exponent and the top of
 * its mantissa. The products keep the order (rounding is monotone, 1 / p_i > 0). */
static inline void
key_bounds(const MsTraceGen *g, guint32 r, guint i, double *lo, double *hi)
{
    double t = 2.0 * r + 1.0;
    guint64 bits;
    memcpy(&bits, &t, sizeof bits);
    int e = (int)((bits >> 52) & 0x7ff) - 1023;
    guint b = (guint)(bits >> 44) & (LOG_TABLE - 1);
    double base = (e - 33) * G_LN2;
    *lo = (base + g->log_table[b] - KEY_MARGIN) * g->inv_p[i];
    *hi = (base + g->log_table[b + 1] + KEY_MARGIN) * g->inv_p[i];
}

/* The m-th largest of values[0..n) (1 <= m <= n, m <= MS_TRACE_MAX_TOP_K). */
static double
mth_largest(const double *values, guint n, guint m)
{
    if (m <= 2) {
        /* Without branches (a node's best two under DeepSeek-V3's limit): whether a value
         * enters the best two is a coin toss the predictor cannot learn. Two interleaved pairs,
         * so that each max waits on the one two values back. */
        double a1 = -INFINITY, a2 = -INFINITY, b1 = -INFINITY, b2 = -INFINITY;
        guint i = 0;
        for (; i + 1 < n; i += 2) {
            double x = values[i], y = values[i + 1];
            double xa = x < a1 ? x : a1, yb = y < b1 ? y : b1;
            a2 = xa > a2 ? xa : a2;
            a1 = x > a1 ? x : a1;
            b2 = yb > b2 ? yb : b2;
            b1 = y > b1 ? y : b1;
        }
        if (i < n) {
            double x = values[i], xa = x < a1 ? x : a1;
            a2 = xa > a2 ? xa : a2;
            a1 = x > a1 ? x : a1;
        }
        /* The second largest of the four: the larger of the two firsts' loser and the seconds. */
        double top = a1 > b1 ? a1 : b1, low = a1 > b1 ? b1 : a1;
        double second = MAX(low, MAX(a2, b2));
        return m == 1 ? top : second;
    }
    guint32 best[MS_TRACE_MAX_TOP_K];
    best_of(values, n, m, best);
    return values[best[m - 1]];
}

/* The m best experts (m <= MS_TRACE_MAX_TOP_K) of the runs [first[c], first[c] + per) of expert
 * ids, c < runs, ascending, by their ordering values, into best (best first, ties to the lower
 * expert): what best_of over all their values would place. Only candidates get their values: an
 * expert whose upper bound lies below t, a value that m of them reach, is surely below the m-th
 * largest value, so it can neither be placed nor tie. t is the m-th largest lower bound, or the
 * caller's (NAN: none). Returns min(m, runs x per). */
static guint
best_experts(MsTraceGen *g, const guint32 *first, guint runs, guint per, guint m, double t,
             guint32 *best)
{
    double *lo = g->lo, *hi = g->hi, *v = g->cand_v;
    guint32 *cand = g->cand;
    m = MIN(m, runs * per);
    if (isnan(t)) {
        for (guint c = 0; c < runs; c++) {
            memcpy(v + (gsize)c * per, lo + first[c], per * sizeof(double));
        }
        t = mth_largest(v, runs * per, m);
    }
    guint nc = 0;
    for (guint c = 0; c < runs; c++) {
        for (guint32 e = first[c]; e < first[c] + per; e++) {
            if (hi[e] >= t) {
                if (lo[e] != hi[e]) {
                    lo[e] = hi[e] = key_of(g, g->raw[e], g->rank_of[e]);
                }
                cand[nc] = e;
                v[nc++] = lo[e];
            }
        }
    }
    guint32 at[MS_TRACE_MAX_TOP_K];
    guint got = best_of(v, nc, m, at);
    for (guint i = 0; i < got; i++) {
        best[i] = cand[at[i]];
    }
    return got;
}

/* One layer of node-limited routing, the DeepSeek-V3 way: every expert gets an affinity, a node
 * scores the sum of its q = ceil(top_k / max_nodes) best affinities, the max_nodes best nodes
 * are kept and the token takes the top_k best experts on them, best first. The affinity of
 * popularity rank i is u^(1/p_i) for a uniform u (Efraimidis-Spirakis keys: the top_k of them
 * are a popularity-weighted draw without replacement), plus 1 for the ranks of the group a
 * following token follows, so that it prefers them wherever the limit allows. Experts are
 * ordered by log(u) / p_i (or 1 + u^(1/p_i) when boosted), which orders them as the affinity
 * does without an exp per expert; and only the few experts whose place a comparison could
 * change get their log (key_bounds: of DeepSeek-V3's 256 experts, 16 to 20 a layer), the same
 * values, so the same routing. Returns the group of the best expert's rank, which the next
 * layer follows. */
static guint32
choose_limited(MsTraceGen *g, guint layer, guint32 prev_cluster, guint32 *out)
{
    guint n = g->params.experts, k = g->params.top_k, nodes = g->params.expert_nodes;
    guint m = g->params.max_nodes, per = n / nodes, q = MIN((k + m - 1) / m, per);
    const guint32 *sigma = g->sigma + (gsize)layer * n;
    guint32 follow = G_MAXUINT32;
    /* The state in a local (as token_path's): stores into the tables would otherwise force it
     * back to memory at every draw. */
    Rng rng = g->rng;
    if (rand32(&rng) < g->corr_below) {
        follow = layer == 0 ? find_interval(&g->cluster_guide, rand32(&rng)) : prev_cluster;
    }
    double *lo = g->lo, *hi = g->hi;
    for (guint i = 0; i < n; i++) {
        guint32 r = rand32(&rng), e = sigma[i];
        g->raw[e] = r;
        g->rank_of[e] = i;
        if (i / k == follow) {
            lo[e] = hi[e] = 1.0 + exp(key_of(g, r, i));
        } else if (isinf(g->inv_p[i])) {
            lo[e] = hi[e] = key_of(g, r, i); /* -inf: a rank never chosen */
        } else {
            key_bounds(g, r, i, &lo[e], &hi[e]);
        }
    }
    g->rng = rng;
    /* Per node its q best, their values kept (placed) for the bound of the final choice. */
    guint32 top[MS_TRACE_MAX_TOP_K], *first = g->ids;
    double *placed = g->placed;
    for (guint node = 0; node < nodes; node++) {
        guint32 base = node * per;
        guint have = best_experts(g, &base, 1, per, q, NAN, top);
        g->score[node] = 0;
        for (guint i = 0; i < have; i++) {
            placed[node * q + i] = lo[top[i]];
            g->score[node] += affinity(lo[top[i]]);
        }
    }
    guint kept = best_of(g->score, nodes, m, g->nodes);
    /* The top_k over the kept nodes' experts, in expert order so that ties still go to the
     * lower expert; the kept nodes' q best values, kept x q >= top_k of them, bound it. */
    for (guint i = 1; i < kept; i++) { /* distinct node numbers, a handful */
        guint32 x = g->nodes[i];
        guint j = i;
        while (j > 0 && g->nodes[j - 1] > x) {
            g->nodes[j] = g->nodes[j - 1];
            j--;
        }
        g->nodes[j] = x;
    }
    double t = NAN;
    if (kept * q >= k) {
        for (guint c = 0; c < kept; c++) {
            memcpy(g->cand_v + (gsize)c * q, placed + (gsize)g->nodes[c] * q, q * sizeof(double));
        }
        t = mth_largest(g->cand_v, kept * q, k);
    }
    for (guint c = 0; c < kept; c++) {
        first[c] = g->nodes[c] * per;
    }
    best_experts(g, first, kept, per, k, t, out);
    return cluster_of(g->rank_of[out[0]], k, g->clusters);
}

/* token_path with one choice a layer (inference's top-1): the draws of choose_layer, whose loops
 * over the choices reduce to one pick that is its own cluster (clusters = experts / 1), and the
 * primary's draw, always 0, still made. Shape and tables in locals, as the state. */
static void
token_path_top1(MsTraceGen *g, guint32 *path)
{
    Rng rng = g->rng;
    const guint n = g->params.experts, layers = g->params.layers;
    const guint64 corr_below = g->corr_below;
    const Guide cum = g->cum_guide, clusters = g->cluster_guide;
    const guint32 *sigma = g->sigma;
    guint32 pick = 0;
    for (guint l = 0; l < layers; l++, sigma += n) {
        if (rand32(&rng) < corr_below) {
            if (l == 0) {
                pick = find_interval(&clusters, rand32(&rng));
            }
        } else {
            pick = find_interval(&cum, rand32(&rng));
        }
        (void)rand_below(&rng, 1);
        path[l] = sigma[pick];
    }
    g->rng = rng;
}

static void
token_path(MsTraceGen *g, guint32 *path)
{
    guint k = g->params.top_k, n = g->params.experts;
    guint32 picks[MS_TRACE_MAX_TOP_K], cluster = 0;
    if (g->params.max_nodes) {
        for (guint l = 0; l < g->params.layers; l++) {
            cluster = choose_limited(g, l, cluster, path + (gsize)l * k);
        }
        return;
    }
    if (k == 1) {
        token_path_top1(g, path);
        return;
    }
    /* The state in a local for the whole path (the same draws in the same order): the build
     * does not assume strict aliasing, so with the state in g every store into path would
     * force it back to memory and every draw reload it. */
    Rng rng = g->rng;
    for (guint l = 0; l < g->params.layers; l++) {
        guint primary = 0;
        cluster = choose_layer(g, &rng, l, cluster, picks, &primary);
        const guint32 *sigma = g->sigma + (gsize)l * n;
        guint32 *out = path + (gsize)l * k;
        guint at = 0;
        out[at++] = sigma[picks[primary]];
        for (guint m = 0; m < k; m++) {
            if (m != primary) {
                out[at++] = sigma[picks[m]];
            }
        }
    }
    g->rng = rng;
}

/* Each popularity rank of each layer swaps with a uniformly chosen rank with probability
 * drift. */
static void
apply_drift(MsTraceGen *g)
{
    guint n = g->params.experts;
    for (guint l = 0; l < g->params.layers; l++) {
        guint32 *sigma = g->sigma + (gsize)l * n;
        for (guint i = 0; i < n; i++) {
            if (rand32(&g->rng) < g->drift_below) {
                guint32 j = rand_below(&g->rng, n), t = sigma[i];
                sigma[i] = sigma[j];
                sigma[j] = t;
            }
        }
    }
}

/* The tokens of each rank that layer routes (its group's, with layer groups). */
static guint32
layer_tokens(const MsTraceGen *g, guint32 layer)
{
    const MsTraceGenParams *p = &g->params;
    return p->n_groups ? p->group_tokens[ms_trace_header_group(&g->header, layer)] : p->tokens;
}

/* Token t of a rank, whose path was just drawn, counted into acc ([layer][expert]) at the layers
 * of the groups that route more than t tokens (a rank's first group_tokens[g] are group g's). */
static void
add_group_counts(const MsTraceGen *g, guint32 *acc, guint32 t)
{
    const MsTraceGenParams *p = &g->params;
    for (guint32 layer = 0; layer < p->layers; layer++) {
        if (t < layer_tokens(g, layer)) {
            for (guint32 j = 0; j < p->top_k; j++) {
                acc[(gsize)layer * p->experts + g->path[layer * p->top_k + j]]++;
            }
        }
    }
}

/* A rank's counted tokens as count records (the cells that hold any), acc then cleared. */
static gboolean
flush_counts(const MsTraceGen *g, MsRouting *r, guint32 rank, guint32 *acc, GError **error)
{
    gsize cells = (gsize)g->params.layers * g->params.experts;
    for (gsize c = 0; c < cells; c++) {
        if (acc[c] && !ms_routing_add_count(r, (guint32)(c / g->params.experts), rank,
                                            (guint32)(c % g->params.experts), acc[c], error)) {
            return FALSE;
        }
    }
    memset(acc, 0, cells * sizeof(guint32));
    return TRUE;
}

/* Counts mode beyond MS_TRACE_GEN_POOL_TOKENS tokens: that many paths drawn as in path mode
 * (the pool, stored layer-major so that one layer's pool, pool x top_k ids, stays in cache),
 * then each rank's tokens drawn uniformly with replacement from it. Every token is a path of
 * the generator (distinct experts, the node limit, its persistence across layers); what the
 * pool changes is that tokens are no longer independent across ranks (docs/trace-format.md). */
static gboolean
counts_from_pool(MsTraceGen *g, MsRouting *r, guint32 *acc, GError **error)
{
    guint k = g->params.top_k, n = g->params.experts, layers = g->params.layers;
    const guint32 pool = MS_TRACE_GEN_POOL_TOKENS;
    guint32 tokens = ms_trace_gen_params_tokens(&g->params);
    g_autofree guint16 *paths = g_new(guint16, (gsize)pool * layers * k);
    for (guint32 j = 0; j < pool; j++) {
        token_path(g, g->path);
        for (guint l = 0; l < layers; l++) {
            for (guint m = 0; m < k; m++) {
                paths[((gsize)l * pool + j) * k + m] = (guint16)g->path[(gsize)l * k + m];
            }
        }
    }
    g_autofree guint32 *picks = g_new(guint32, tokens);
    for (guint32 rank = 0; rank < g->params.ranks; rank++) {
        for (guint32 t = 0; t < tokens; t++) {
            picks[t] = rand_below(&g->rng, pool); /* exact: pool is a power of 2 */
        }
        for (guint l = 0; l < layers; l++) {
            guint32 *row = acc + (gsize)l * n, upto = layer_tokens(g, l);
            const guint16 *layer = paths + (gsize)l * pool * k;
            for (guint32 t = 0; t < upto; t++) {
                const guint16 *ids = layer + (gsize)picks[t] * k;
                for (guint m = 0; m < k; m++) {
                    row[ids[m]]++;
                }
            }
        }
        if (!flush_counts(g, r, rank, acc, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

/* Expert ids of the token paths handed to the routing at once (64 KiB). */
#define BLOCK_IDS 16384u

/* Every token's path drawn in order: into the routing, a block of consecutive tokens at a time,
 * or in counts mode counted and forgotten (up to MS_TRACE_GEN_POOL_TOKENS tokens: the same
 * draws, so the same counts as the paths). */
static gboolean
every_token(MsTraceGen *g, MsRouting *r, guint32 *acc, GError **error)
{
    guint32 tokens = ms_trace_gen_params_tokens(&g->params);
    guint len = ms_trace_header_path_len(&g->header);
    guint32 block = MAX(1u, BLOCK_IDS / len);
    g_autofree guint32 *paths = acc ? NULL : g_new(guint32, (gsize)MIN(block, tokens) * len);
    for (guint32 rank = 0; rank < g->params.ranks; rank++) {
        for (guint32 t = 0; t < tokens && acc; t++) {
            token_path(g, g->path);
            add_group_counts(g, acc, t);
        }
        for (guint32 t = 0; t < tokens && !acc; t += block) {
            guint32 n = MIN(block, tokens - t);
            for (guint32 i = 0; i < n; i++) {
                token_path(g, paths + (gsize)i * len);
            }
            if (!ms_routing_add_tokens(r, (guint64)rank * tokens + t, rank, n, paths, error)) {
                return FALSE;
            }
        }
        if (acc && !flush_counts(g, r, rank, acc, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

gboolean
ms_trace_gen_next(MsTraceGen *g, MsRouting **out, GError **error)
{
    g_return_val_if_fail(g != NULL && out != NULL, FALSE);
    *out = NULL;
    if (g->next_iteration >= g->params.iterations) {
        return FALSE;
    }
    if (g->next_iteration > 0) {
        apply_drift(g);
    }
    g_autoptr(MsRouting) r = ms_routing_new(&g->header, g->next_iteration, error);
    if (r == NULL) {
        return FALSE;
    }
    gboolean counts = g->params.counts || ms_trace_gen_params_counts_only(&g->params);
    guint64 all = (guint64)g->params.ranks * ms_trace_gen_params_tokens(&g->params);
    g_autofree guint32 *acc =
        counts ? g_new0(guint32, (gsize)g->params.layers * g->params.experts) : NULL;
    gboolean built = counts && all > MS_TRACE_GEN_POOL_TOKENS ? counts_from_pool(g, r, acc, error)
                                                              : every_token(g, r, acc, error);
    if (!built || !ms_routing_seal(r, error)) {
        return FALSE;
    }
    g->next_iteration++;
    *out = g_steal_pointer(&r);
    return TRUE;
}
