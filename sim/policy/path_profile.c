/* path_profile: one table of next-layer choices per (MoE layer, depth). A table is dense when its
 * E^(d+1) counters fit DENSE_MAX (counts indexed by path number and expert: one add per choice,
 * no hashing), else a hash from the path's packed 16-bit ids to the choices seen after it. */
#include "path_profile.h"

#include <string.h>

#include "policy.h"

/* Counters of a dense table at most (4 MiB of guint32). */
#define DENSE_MAX (G_GUINT64_CONSTANT(1) << 20)

typedef struct {
    guint32 expert;
    guint64 count;
} Pair;

/* The choices that followed one path, popular ones first (pairs move forward as they grow). */
typedef struct {
    guint64 total;
    GArray *pairs;
} Stats;

typedef struct {
    gboolean dense;
    guint32 *counts;    /* dense, allocated on first use: [path * E + e]; a path's total is its
                         * row's sum, summed when it is read rather than kept at every add */
    GHashTable *sparse; /* packed path -> Stats */
} Table;

struct _MsPathProfile {
    guint experts, layers, depth, batches;
    Table *tables;     /* [m * MS_PATH_MAX_DEPTH + d - 1] */
    guint64 *marginal; /* [m * experts + e] */
    guint64 *marginal_total;
};

/* Packed paths put ids in 16-bit fields, which GLib's int64 hash folds onto each other; a 64-bit
 * finalizer (MurmurHash3's) spreads them. */
static guint
path_hash(gconstpointer key)
{
    guint64 k = *(const guint64 *)key;
    k ^= k >> 33;
    k *= G_GUINT64_CONSTANT(0xff51afd7ed558ccd);
    k ^= k >> 33;
    k *= G_GUINT64_CONSTANT(0xc4ceb9fe1a85ec53);
    k ^= k >> 33;
    return (guint)k;
}

static void
stats_free(gpointer p)
{
    Stats *s = p;
    g_array_unref(s->pairs);
    g_free(s);
}

/* E^n, or DENSE_MAX + 1 once it exceeds DENSE_MAX. */
static guint64
power(guint64 e, guint n)
{
    guint64 v = 1;
    for (guint i = 0; i < n && v <= DENSE_MAX; i++) {
        v *= e;
    }
    return MIN(v, DENSE_MAX + 1);
}

MsPathProfile *
ms_path_profile_new(guint experts, guint layers, guint depth)
{
    g_return_val_if_fail(experts > 0 && experts <= 65536 && layers > 0, NULL);
    g_return_val_if_fail(depth >= 1 && depth <= MS_PATH_MAX_DEPTH, NULL);
    MsPathProfile *prof = g_new0(MsPathProfile, 1);
    prof->experts = experts;
    prof->layers = layers;
    prof->depth = depth;
    prof->tables = g_new0(Table, (gsize)layers * MS_PATH_MAX_DEPTH);
    for (gsize i = 0; i < (gsize)layers * MS_PATH_MAX_DEPTH; i++) {
        guint d = (guint)(i % MS_PATH_MAX_DEPTH) + 1;
        Table *t = &prof->tables[i];
        t->dense = power(experts, d + 1) <= DENSE_MAX;
        if (!t->dense && d <= depth) {
            t->sparse = g_hash_table_new_full(path_hash, g_int64_equal, g_free, stats_free);
        }
    }
    prof->marginal = g_new0(guint64, (gsize)layers * experts);
    prof->marginal_total = g_new0(guint64, layers);
    return prof;
}

void
ms_path_profile_free(MsPathProfile *prof)
{
    if (prof == NULL) {
        return;
    }
    for (gsize i = 0; i < (gsize)prof->layers * MS_PATH_MAX_DEPTH; i++) {
        g_free(prof->tables[i].counts);
        if (prof->tables[i].sparse) {
            g_hash_table_unref(prof->tables[i].sparse);
        }
    }
    g_free(prof->tables);
    g_free(prof->marginal);
    g_free(prof->marginal_total);
    g_free(prof);
}

guint
ms_path_profile_n_batches(const MsPathProfile *prof)
{
    return prof->batches;
}

/* The path of the d ids before position `at` of ids, `stride` apart (oldest first): its number
 * in a dense table (ids in base E) or its packed key in a sparse one. */
static guint64
path_of(const Table *t, guint64 experts, const guint16 *ids, gsize stride, guint at, guint d)
{
    guint64 v = 0;
    for (guint j = 0; j < d; j++) {
        guint64 id = ids[(gsize)(at - d + j) * stride];
        v = t->dense ? v * experts + id : v | id << (16 * j);
    }
    return v;
}

static void
stats_add(Stats *s, const guint16 *chosen, guint k)
{
    for (guint c = 0; c < k; c++) {
        Pair *pairs = (Pair *)s->pairs->data;
        guint i = 0;
        while (i < s->pairs->len && pairs[i].expert != chosen[c]) {
            i++;
        }
        if (i == s->pairs->len) {
            Pair pr = {chosen[c], 0};
            g_array_append_val(s->pairs, pr);
            pairs = (Pair *)s->pairs->data;
        }
        pairs[i].count++;
        s->total++;
        if (i > 0 && pairs[i].count > pairs[i - 1].count) {
            Pair tmp = pairs[i];
            pairs[i] = pairs[i - 1];
            pairs[i - 1] = tmp;
        }
    }
}

static void
table_add(Table *t, guint experts, guint d, guint64 path, const guint16 *chosen, guint k)
{
    if (t->dense) {
        for (guint c = 0; c < k; c++) {
            t->counts[path * experts + chosen[c]]++;
        }
        return;
    }
    gint64 key = (gint64)path;
    Stats *s = g_hash_table_lookup(t->sparse, &key);
    if (s == NULL) {
        s = g_new0(Stats, 1);
        s->pairs = g_array_new(FALSE, FALSE, sizeof(Pair));
        g_hash_table_insert(t->sparse, g_memdup2(&key, sizeof key), s);
    }
    stats_add(s, chosen, k);
}

/* The choices counted in a dense row. */
static guint64
row_total(const guint32 *row, guint experts)
{
    guint64 total = 0;
    for (guint e = 0; e < experts; e++) {
        total += row[e];
    }
    return total;
}

/* Adds k choices spread as a dense row of `total` choices (> 0) was. Unconditional: the scale is
 * finite and positive, so an expert never chosen adds +0, which leaves its load (never -0) as it
 * was; a test of each counter would be a branch that sparse rows make unpredictable. */
static void
row_spread(const guint32 *row, guint experts, guint64 total, double k, double *load)
{
    double scale = k / (double)total;
    for (guint e = 0; e < experts; e++) {
        load[e] += scale * row[e];
    }
}

/* Adds k choices spread as those after path were; FALSE when the path was never seen. */
static gboolean
table_spread(const Table *t, guint experts, guint64 path, double k, double *load)
{
    if (t->dense) {
        if (t->counts == NULL) {
            return FALSE;
        }
        const guint32 *row = t->counts + path * experts;
        guint64 total = row_total(row, experts);
        if (total == 0) {
            return FALSE;
        }
        row_spread(row, experts, total, k, load);
        return TRUE;
    }
    gint64 key = (gint64)path;
    const Stats *s = g_hash_table_lookup(t->sparse, &key);
    if (s == NULL || s->total == 0) {
        return FALSE;
    }
    for (guint i = 0; i < s->pairs->len; i++) {
        const Pair *pr = &g_array_index(s->pairs, Pair, i);
        load[pr->expert] += k * (double)pr->count / (double)s->total;
    }
    return TRUE;
}

static gboolean
check_batch(const MsPathProfile *prof, const MsRouting *batch, GError **error)
{
    const MsTraceHeader *h = ms_routing_header(batch);
    if (h->experts != prof->experts || h->layers != prof->layers) {
        g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_INPUT,
                    "batch %" G_GUINT64_FORMAT " has %u experts and %u MoE layers, the path "
                    "statistics %u and %u",
                    ms_routing_iteration(batch), h->experts, h->layers, prof->experts,
                    prof->layers);
        return FALSE;
    }
    if (!ms_routing_has_paths(batch)) {
        g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_INPUT,
                    "batch %" G_GUINT64_FORMAT " has count records only: Lina's estimate "
                    "learns from token paths (token records)",
                    ms_routing_iteration(batch));
        return FALSE;
    }
    return TRUE;
}

static Table *
table_of(const MsPathProfile *prof, guint m, guint d)
{
    return &prof->tables[(gsize)m * MS_PATH_MAX_DEPTH + d - 1];
}

/* The first token's path of a rank: a rank's tokens lie one after the other, layers * top_k ids
 * each (trace_routing.c), so that token t's path is `len` * t further. NULL for no tokens. */
static const guint16 *
rank_paths(const MsRouting *batch, guint r)
{
    return ms_routing_n_tokens(batch, r) ? ms_routing_token_experts(batch, r, 0, 0) : NULL;
}

/* Allocates a dense table's counters on first use. */
static void
table_ready(Table *t, guint experts, guint d)
{
    if (t->dense && t->counts == NULL) {
        t->counts = g_new0(guint32, power(experts, d + 1));
    }
}

/* One layer's choices of n tokens (rows `len` ids apart) into tables of depth 1 .. dm, all dense:
 * the path number of depth d is that of depth d - 1 plus the oldest id times E^(d-1), so each
 * token costs one multiply-add per depth instead of a walk over its path per table. */
static void
add_layer_dense(MsPathProfile *prof, guint m, guint dm, guint k, const guint16 *row, guint n,
                gsize len)
{
    guint64 experts = prof->experts, scale[MS_PATH_MAX_DEPTH + 1];
    guint32 *counts[MS_PATH_MAX_DEPTH + 1];
    scale[1] = 1;
    for (guint d = 1; d <= dm; d++) {
        Table *tb = table_of(prof, m, d);
        counts[d] = tb->counts;
        scale[d] = d == 1 ? 1 : scale[d - 1] * experts;
    }
    guint64 *marginal = prof->marginal + (gsize)m * experts;
    if (k == 1) {
        /* Inference's top-1: one choice, no loops over choices. */
        for (guint t = 0; t < n; t++, row += len) {
            guint chosen = row[m];
            marginal[chosen]++;
            guint64 path = 0;
            for (guint d = 1; d <= dm; d++) {
                path += row[m - d] * scale[d];
                counts[d][path * experts + chosen]++;
            }
        }
        return;
    }
    for (guint t = 0; t < n; t++, row += len) {
        const guint16 *chosen = row + (gsize)m * k;
        for (guint c = 0; c < k; c++) {
            marginal[chosen[c]]++;
        }
        guint64 path = 0;
        for (guint d = 1; d <= dm; d++) {
            path += row[(gsize)(m - d) * k] * scale[d];
            guint32 *cell = counts[d] + path * experts;
            for (guint c = 0; c < k; c++) {
                cell[chosen[c]]++;
            }
        }
    }
}

gboolean
ms_path_profile_add(MsPathProfile *prof, const MsRouting *batch, GError **error)
{
    if (!check_batch(prof, batch, error)) {
        return FALSE;
    }
    const MsTraceHeader *h = ms_routing_header(batch);
    guint k = h->top_k;
    gsize len = ms_trace_header_path_len(h);
    /* Layer by layer, so that only one layer's tables are in the cache at a time (the counts are
     * integers: the order of the adds changes nothing). The path before layer m is the first
     * choice of each earlier layer, read from the token's record. */
    for (guint m = 0; m < h->layers; m++) {
        guint64 *marginal = prof->marginal + (gsize)m * prof->experts;
        guint dm = MIN(m, prof->depth);
        gboolean dense = TRUE;
        for (guint d = 1; d <= dm; d++) {
            table_ready(table_of(prof, m, d), prof->experts, d);
            dense = dense && table_of(prof, m, d)->dense;
        }
        for (guint r = 0; r < h->ranks; r++) {
            const guint16 *row = rank_paths(batch, r);
            guint n = ms_routing_n_tokens(batch, r);
            prof->marginal_total[m] += (guint64)k * n;
            if (dense) {
                add_layer_dense(prof, m, dm, k, row, n, len);
                continue;
            }
            for (guint t = 0; t < n; t++, row += len) {
                const guint16 *chosen = row + (gsize)m * k;
                for (guint c = 0; c < k; c++) {
                    marginal[chosen[c]]++;
                }
                for (guint d = 1; d <= dm; d++) {
                    Table *tb = table_of(prof, m, d);
                    table_add(tb, prof->experts, d, path_of(tb, prof->experts, row, k, m, d),
                              chosen, k);
                }
            }
        }
    }
    prof->batches++;
    return TRUE;
}

/* Adds `assignments` spread as the layer's popularity (uniform when unknown) to load. */
static void
add_marginal(const MsPathProfile *prof, guint m, guint experts, double assignments, double *load)
{
    if (prof && prof->batches > 0 && prof->marginal_total[m] > 0) {
        for (guint e = 0; e < experts; e++) {
            load[e] += assignments * (double)prof->marginal[(gsize)m * experts + e] /
                       (double)prof->marginal_total[m];
        }
        return;
    }
    for (guint e = 0; e < experts; e++) {
        load[e] += assignments / experts;
    }
}

/* Spreads `tokens` tokens' k choices each as the longest known suffix of their path (the first
 * choices at the dmax layers before m, oldest first) does; FALSE when no suffix is known. */
static gboolean
spread_path(const MsPathProfile *prof, const guint16 *best, guint m, guint dmax, guint k,
            guint64 tokens, double *load)
{
    for (guint d = dmax; d >= 1; d--) {
        const Table *tb = table_of(prof, m, d);
        if (table_spread(tb, prof->experts, path_of(tb, prof->experts, best, 1, dmax, d),
                         (double)k * (double)tokens, load)) {
            return TRUE;
        }
    }
    return FALSE;
}

/* The batch's distinct paths over dmax layers (16-bit ids packed oldest first) with their token
 * counts, in order of first appearance: tokens that took the same path get the same spread, so
 * each path is spread once, in an order fixed by the batch. */
typedef struct {
    guint64 *keys, *counts;
    guint32 *slot; /* open addressing: index + 1 into keys/counts, 0 = free */
    gsize n, cap;
} PathSet;

static void
path_set_add(PathSet *ps, guint64 key)
{
    gsize i = (gsize)path_hash(&key) & (ps->cap - 1);
    while (ps->slot[i] && ps->keys[ps->slot[i] - 1] != key) {
        i = (i + 1) & (ps->cap - 1);
    }
    if (ps->slot[i] == 0) {
        ps->keys[ps->n] = key;
        ps->counts[ps->n] = 0;
        ps->slot[i] = (guint32)++ps->n;
    }
    ps->counts[ps->slot[i] - 1]++;
}

/* A path counted at slot `number` of a direct table: its first token appends it. */
static void
path_set_add_at(PathSet *ps, guint64 number, guint64 key)
{
    if (ps->slot[number] == 0) {
        ps->keys[ps->n] = key;
        ps->counts[ps->n] = 0;
        ps->slot[number] = (guint32)++ps->n;
    }
    ps->counts[ps->slot[number] - 1]++;
}

/* Paths over few experts and layers (E^dmax slots, no more than the hash would take or 2^16)
 * are numbered in base E and counted at their number, no hashing; the same paths in the same
 * order of first appearance either way. */
static void
collect_paths(const MsRouting *batch, guint m, guint dmax, PathSet *ps)
{
    const MsTraceHeader *h = ms_routing_header(batch);
    guint64 n = ms_routing_total_tokens(batch);
    ps->cap = 16;
    while (ps->cap < 2 * n) {
        ps->cap *= 2;
    }
    guint64 space = power(h->experts, dmax);
    gboolean direct = space <= MAX(ps->cap, G_GUINT64_CONSTANT(1) << 16);
    ps->keys = g_new(guint64, n);
    ps->counts = g_new(guint64, n);
    ps->slot = g_new0(guint32, direct ? space : ps->cap);
    ps->n = 0;
    gsize len = ms_trace_header_path_len(h), k = h->top_k;
    guint64 experts = h->experts;
    for (guint r = 0; r < h->ranks; r++) {
        guint n_rank = ms_routing_n_tokens(batch, r);
        const guint16 *path = rank_paths(batch, r);
        for (guint t = 0; t < n_rank; t++, path += len) {
            guint64 key = 0, number = 0;
            for (guint j = 0; j < dmax; j++) {
                guint64 id = path[(m - dmax + j) * k];
                key |= id << (16 * j);
                number = number * experts + id;
            }
            if (direct) {
                path_set_add_at(ps, number, key);
            } else {
                path_set_add(ps, key);
            }
        }
    }
}

void
ms_path_profile_estimate(const MsPathProfile *prof, const MsRouting *batch, guint m, guint depth,
                         double *load)
{
    const MsTraceHeader *h = ms_routing_header(batch);
    memset(load, 0, sizeof(double) * h->experts);
    if (prof == NULL || prof->batches == 0 || m == 0 || !ms_routing_has_paths(batch)) {
        add_marginal(prof, m, h->experts, (double)ms_routing_total_tokens(batch) * h->top_k, load);
        return;
    }
    guint dmax = MIN(MIN(depth, m), prof->depth);
    PathSet ps;
    collect_paths(batch, m, dmax, &ps);
    guint64 unknown = 0;
    /* The deepest table's rows, dense, are first all summed, then spread in the order of the
     * paths: the tables come to the estimate cold (the previous batch's simulation ran since
     * they were learnt), and a pass of independent row sums keeps several of those misses in
     * flight where the spreading, one path at a time, met them one by one. */
    const Table *deepest = table_of(prof, m, dmax);
    g_autofree guint64 *deep_total = NULL;
    g_autofree const guint32 **deep_row = NULL;
    if (deepest->dense && deepest->counts) {
        deep_total = g_new(guint64, ps.n);
        deep_row = g_new(const guint32 *, ps.n);
        for (gsize i = 0; i < ps.n; i++) {
            guint64 v = 0;
            for (guint j = 0; j < dmax; j++) {
                v = v * prof->experts + ((ps.keys[i] >> (16 * j)) & 0xffff);
            }
            deep_row[i] = deepest->counts + v * prof->experts;
            deep_total[i] = row_total(deep_row[i], prof->experts);
        }
    }
    for (gsize i = 0; i < ps.n; i++) {
        if (deep_total && deep_total[i] > 0) {
            row_spread(deep_row[i], prof->experts, deep_total[i],
                       (double)h->top_k * (double)ps.counts[i], load);
            continue;
        }
        guint16 best[MS_PATH_MAX_DEPTH];
        for (guint j = 0; j < dmax; j++) {
            best[j] = (guint16)(ps.keys[i] >> (16 * j));
        }
        if (!spread_path(prof, best, m, dmax, h->top_k, ps.counts[i], load)) {
            unknown += ps.counts[i];
        }
    }
    g_free(ps.keys);
    g_free(ps.counts);
    g_free(ps.slot);
    if (unknown > 0) {
        add_marginal(prof, m, h->experts, (double)unknown * h->top_k, load);
    }
}
