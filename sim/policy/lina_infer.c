/* lina_infer: path statistics, the popularity estimate, the replicate-and-pack placement and
 * the two phases of Lina's inference scheduling, as plan configuration. Loads are expected
 * token-expert assignments (doubles, summed in token order so results are reproducible);
 * statistics are integer counts keyed by a path's packed expert ids. */
#include "lina_infer.h"

#include <math.h>
#include <string.h>

typedef struct {
    guint32 expert;
    guint64 count;
} Pair;

/* The next-layer choices of the tokens that shared one path (pairs in first-seen order). */
typedef struct {
    guint64 total;
    GArray *pairs;
} Stats;

struct _MsPathProfile {
    guint experts, layers, batches;
    GHashTable **paths; /* [m * MS_PATH_MAX_DEPTH + d - 1]: gint64 key -> Stats */
    guint64 *marginal;  /* [m * experts + e] */
    guint64 *marginal_total;
};

static void
stats_free(gpointer p)
{
    Stats *s = p;
    g_array_unref(s->pairs);
    g_free(s);
}

MsPathProfile *
ms_path_profile_new(guint experts, guint layers)
{
    g_return_val_if_fail(experts > 0 && experts <= 65536 && layers > 0, NULL);
    MsPathProfile *prof = g_new0(MsPathProfile, 1);
    prof->experts = experts;
    prof->layers = layers;
    prof->paths = g_new(GHashTable *, (gsize)layers * MS_PATH_MAX_DEPTH);
    for (gsize i = 0; i < (gsize)layers * MS_PATH_MAX_DEPTH; i++) {
        prof->paths[i] = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, stats_free);
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
        g_hash_table_unref(prof->paths[i]);
    }
    g_free(prof->paths);
    g_free(prof->marginal);
    g_free(prof->marginal_total);
    g_free(prof);
}

guint
ms_path_profile_n_batches(const MsPathProfile *prof)
{
    return prof->batches;
}

/* The best experts of layers m-d .. m-1, 16 bits each. */
static gint64
path_key(const guint16 *best, guint m, guint d)
{
    guint64 key = 0;
    for (guint j = 0; j < d; j++) {
        key |= (guint64)best[m - d + j] << (16 * j);
    }
    return (gint64)key;
}

static void
stats_add(GHashTable *table, gint64 key, const guint16 *chosen, guint k)
{
    Stats *s = g_hash_table_lookup(table, &key);
    if (s == NULL) {
        s = g_new0(Stats, 1);
        s->pairs = g_array_new(FALSE, FALSE, sizeof(Pair));
        g_hash_table_insert(table, g_memdup2(&key, sizeof key), s);
    }
    for (guint c = 0; c < k; c++) {
        guint i = 0;
        while (i < s->pairs->len && g_array_index(s->pairs, Pair, i).expert != chosen[c]) {
            i++;
        }
        if (i == s->pairs->len) {
            Pair pr = {chosen[c], 0};
            g_array_append_val(s->pairs, pr);
        }
        g_array_index(s->pairs, Pair, i).count++;
        s->total++;
    }
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

gboolean
ms_path_profile_add(MsPathProfile *prof, const MsRouting *batch, GError **error)
{
    if (!check_batch(prof, batch, error)) {
        return FALSE;
    }
    const MsTraceHeader *h = ms_routing_header(batch);
    g_autofree guint16 *best = g_new(guint16, h->layers);
    for (guint r = 0; r < h->ranks; r++) {
        for (guint t = 0; t < ms_routing_n_tokens(batch, r); t++) {
            for (guint m = 0; m < h->layers; m++) {
                const guint16 *chosen = ms_routing_token_experts(batch, r, t, m);
                best[m] = chosen[0];
                for (guint c = 0; c < h->top_k; c++) {
                    prof->marginal[(gsize)m * prof->experts + chosen[c]]++;
                }
                prof->marginal_total[m] += h->top_k;
                for (guint d = 1; d <= MIN(m, MS_PATH_MAX_DEPTH); d++) {
                    stats_add(prof->paths[(gsize)m * MS_PATH_MAX_DEPTH + d - 1],
                              path_key(best, m, d), chosen, h->top_k);
                }
            }
        }
    }
    prof->batches++;
    return TRUE;
}

/* Adds `tokens` tokens' worth of the layer's popularity (uniform when unknown) to load. */
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

/* Spreads one token's k choices as the longest known path over the previous layers does; FALSE
 * when no prefix of its path is known. */
static gboolean
add_token_path(const MsPathProfile *prof, const MsRouting *batch, guint r, guint t, guint m,
               guint depth, guint k, double *load)
{
    guint16 best[MS_PATH_MAX_DEPTH + 1];
    guint dmax = MIN(MIN(depth, m), MS_PATH_MAX_DEPTH);
    for (guint j = 0; j < dmax; j++) {
        best[j] = ms_routing_token_experts(batch, r, t, m - dmax + j)[0];
    }
    for (guint d = dmax; d >= 1; d--) {
        gint64 key = path_key(best, dmax, d);
        const Stats *s =
            g_hash_table_lookup(prof->paths[(gsize)m * MS_PATH_MAX_DEPTH + d - 1], &key);
        if (s && s->total > 0) {
            for (guint i = 0; i < s->pairs->len; i++) {
                const Pair *pr = &g_array_index(s->pairs, Pair, i);
                load[pr->expert] += k * (double)pr->count / (double)s->total;
            }
            return TRUE;
        }
    }
    return FALSE;
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
    guint64 unknown = 0;
    for (guint r = 0; r < h->ranks; r++) {
        for (guint t = 0; t < ms_routing_n_tokens(batch, r); t++) {
            if (!add_token_path(prof, batch, r, t, m, depth, h->top_k, load)) {
                unknown++;
            }
        }
    }
    if (unknown > 0) {
        add_marginal(prof, m, h->experts, (double)unknown * h->top_k, load);
    }
}

/* --- placement --- */

static double
sum(const double *load, guint experts)
{
    double total = 0;
    for (guint e = 0; e < experts; e++) {
        total += load[e];
    }
    return total;
}

typedef struct {
    double load;
    GArray *experts; /* guint */
    guint n;         /* GPUs */
    gboolean popular;
} Group;

static gint
by_load_desc(gconstpointer a, gconstpointer b, gpointer data)
{
    const double *load = data;
    guint x = *(const guint *)a, y = *(const guint *)b;
    if (load[x] != load[y]) {
        return load[x] > load[y] ? -1 : 1;
    }
    return x < y ? -1 : (x > y);
}

static Group *
group_new(gboolean popular)
{
    Group *g = g_new0(Group, 1);
    g->experts = g_array_new(FALSE, FALSE, sizeof(guint));
    g->popular = popular;
    g->n = 1;
    return g;
}

static void
group_free(gpointer p)
{
    Group *g = p;
    g_array_unref(g->experts);
    g_free(g);
}

/* First-fit decreasing of the cold experts (already sorted) into bins of capacity cap holding at
 * most max_pack experts. */
static GPtrArray *
pack(const GArray *cold, const double *load, double cap, guint max_pack)
{
    GPtrArray *bins = g_ptr_array_new_with_free_func(group_free);
    for (guint i = 0; i < cold->len; i++) {
        guint e = g_array_index(cold, guint, i);
        Group *fit = NULL;
        for (guint b = 0; b < bins->len && fit == NULL; b++) {
            Group *g = g_ptr_array_index(bins, b);
            if (g->experts->len < max_pack && g->load + load[e] <= cap * (1 + 1e-9)) {
                fit = g;
            }
        }
        if (fit == NULL) {
            fit = group_new(FALSE);
            g_ptr_array_add(bins, fit);
        }
        g_array_append_val(fit->experts, e);
        fit->load += load[e];
    }
    return bins;
}

/* The groups for a bound L on any GPU's load: every expert above L gets ceil(load / L) GPUs of
 * its own (popular), the others are packed first-fit decreasing into GPUs of capacity L, at most
 * max_pack each. *used gets the GPUs they need. */
static GPtrArray *
groups_for(const double *load, const GArray *order, double bound, guint max_pack, guint *used)
{
    GPtrArray *hot = g_ptr_array_new_with_free_func(group_free);
    g_autoptr(GArray) cold = g_array_new(FALSE, FALSE, sizeof(guint));
    *used = 0;
    for (guint i = 0; i < order->len; i++) {
        guint e = g_array_index(order, guint, i);
        if (load[e] > bound) {
            Group *g = group_new(TRUE);
            g_array_append_val(g->experts, e);
            g->load = load[e];
            g->n = (guint)ceil(load[e] / bound);
            *used += g->n;
            g_ptr_array_add(hot, g);
        } else {
            g_array_append_val(cold, e);
        }
    }
    GPtrArray *bins = pack(cold, load, bound, max_pack);
    *used += bins->len;
    g_ptr_array_extend_and_steal(hot, bins);
    return hot;
}

/* Groups that fit n_ranks GPUs with the smallest bound on a GPU's load (bisection between the
 * mean, below which nothing fits, and the total, where everything does), then the GPUs left
 * over go one by one to the group of one expert with the highest load per GPU. */
static GPtrArray *
make_groups(const double *load, guint experts, guint n_ranks, guint max_pack)
{
    g_autoptr(GArray) order = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint e = 0; e < experts; e++) {
        g_array_append_val(order, e);
    }
    g_array_sort_with_data(order, by_load_desc, (gpointer)load);
    /* More experts than GPUs x max_pack cannot be placed otherwise. */
    max_pack = MAX(max_pack, (experts + n_ranks - 1) / n_ranks);
    double total = sum(load, experts), lo = total / n_ranks, hi = total;
    guint used = 0;
    for (guint it = 0; it < 60 && hi - lo > total * 1e-12; it++) {
        double mid = (lo + hi) / 2;
        g_autoptr(GPtrArray) g = groups_for(load, order, mid, max_pack, &used);
        if (used <= n_ranks) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    GPtrArray *groups = groups_for(load, order, hi, max_pack, &used);
    while (used < n_ranks) {
        Group *give = NULL;
        for (guint i = 0; i < groups->len; i++) {
            Group *g = g_ptr_array_index(groups, i);
            if (g->experts->len == 1 && (give == NULL || g->load / g->n > give->load / give->n)) {
                give = g;
            }
        }
        if (give == NULL) {
            break;
        }
        give->n++;
        used++;
    }
    return groups;
}

/* A free GPU for group g: one where home holds one of its experts, else the lowest free. */
static guint
pick_gpu(const Group *g, const MsPlacement *home, const gboolean *taken, guint n_ranks)
{
    for (guint i = 0; i < g->experts->len; i++) {
        guint e = g_array_index(g->experts, guint, i), n = 0;
        const guint *reps = ms_placement_replicas(home, 0, e, &n);
        for (guint k = 0; k < n; k++) {
            if (!taken[reps[k]]) {
                return reps[k];
            }
        }
    }
    guint d = 0;
    while (taken[d]) {
        d++;
    }
    g_assert(d < n_ranks);
    return d;
}

MsPlacement *
ms_lina_place(const double *load, guint experts, guint n_ranks, guint max_pack,
              const MsPlacement *home)
{
    if (!(sum(load, experts) > 0)) {
        return ms_placement_copy(home);
    }
    g_autoptr(GPtrArray) groups = make_groups(load, experts, n_ranks, max_pack);
    g_autofree gboolean *taken = g_new0(gboolean, n_ranks);
    MsPlacement *p = ms_placement_new(n_ranks, experts, n_ranks);
    for (guint i = 0; i < groups->len; i++) {
        const Group *g = g_ptr_array_index(groups, i);
        for (guint k = 0; k < g->n; k++) {
            guint d = pick_gpu(g, home, taken, n_ranks);
            taken[d] = TRUE;
            for (guint j = 0; j < g->experts->len; j++) {
                ms_placement_add(p, 0, g_array_index(g->experts, guint, j), d);
            }
        }
    }
    return p;
}

gboolean
ms_lina_same_popular(const double *a, const double *b, guint experts, guint n_ranks)
{
    double ta = sum(a, experts) / n_ranks, tb = sum(b, experts) / n_ranks;
    for (guint e = 0; e < experts; e++) {
        if ((a[e] > ta) != (b[e] > tb)) {
            return FALSE;
        }
    }
    return TRUE;
}

guint64 *
ms_lina_moves(const MsPlacement *to, const MsPlacement *home, const MsPlacement *also,
              guint64 expert_bytes, guint64 *total)
{
    guint n = ms_placement_n_ranks(to), E = ms_placement_n_experts(to);
    g_autofree guint64 *m = g_new0(guint64, (gsize)n * n);
    *total = 0;
    for (guint e = 0; e < E; e++) {
        guint n_to = 0, n_home = 0;
        const guint *dst = ms_placement_replicas(to, 0, e, &n_to);
        const guint *src = ms_placement_replicas(home, 0, e, &n_home);
        for (guint k = 0; k < n_to; k++) {
            guint d = dst[k];
            if (ms_placement_hosts(home, d, e) || (also && ms_placement_hosts(also, d, e))) {
                continue;
            }
            m[(gsize)src[0] * n + d] += expert_bytes;
            *total += expert_bytes;
        }
    }
    return *total ? g_steal_pointer(&m) : NULL;
}

/* --- the policy in inference mode --- */

typedef struct {
    guint replans;
    guint64 weight_bytes;
    double error_sum;
} Report;

/* Whether replicas' weights must cross the network: weights=move, or weights=auto when the whole
 * model (every expert of every layer, and the dense part) does not fit half of a GPU's memory
 * (the other half is left to activations and the KV cache). */
static gboolean
weights_move(const MsPolicy *policy, const MsPolicyInput *in)
{
    const char *w = ms_policy_get_choice(policy, "weights");
    if (strcmp(w, "auto") != 0) {
        return strcmp(w, "move") == 0;
    }
    const MsModelSpec *s = ms_model_spec(in->model);
    double params = (double)s->layers * (double)ms_model_attention_params(in->model) +
                    (double)(s->layers - s->n_moe) * (double)ms_model_dense_ffn_params(in->model) +
                    (double)s->n_moe * ((double)ms_model_gate_params(in->model) +
                                        (double)s->experts * ms_model_expert_params(in->model)) +
                    (double)ms_model_head_params(in->model);
    double bytes = params * ms_dtype_bytes(s->dtype);
    return bytes > 0.5 * (double)ms_topology_gpu_spec(in->topo, 0)->memory_bytes;
}

static void
plan_layer(const MsPolicy *policy, const MsPolicyInput *in, guint m, const MsPlacement *home,
           MsLayerPlacement *lp, Report *rep)
{
    const MsModelSpec *s = ms_model_spec(in->model);
    guint E = s->experts, n = ms_topology_n_gpus(in->topo);
    guint depth = (guint)ms_policy_get_uint(policy, "path");
    guint max_pack = (guint)ms_policy_get_uint(policy, "max_pack");
    gboolean move = weights_move(policy, in);
    guint64 eb = ms_model_expert_params(in->model) * ms_dtype_bytes(s->dtype), w = 0;
    g_autofree double *est = g_new(double, E);
    g_autofree double *real = g_new(double, E);
    ms_path_profile_estimate(in->profile, in->routing, m, depth, est);
    double diff = 0, sum = 0;
    for (guint e = 0; e < E; e++) {
        real[e] = (double)ms_routing_expert_load(in->routing, m, e);
        diff += fabs(est[e] - real[e]);
        sum += real[e];
    }
    rep->error_sum += sum > 0 ? diff / sum : 0;
    g_autoptr(MsPlacement) p1 = ms_lina_place(est, E, n, max_pack, home);
    g_autoptr(MsPlacement) p2 = ms_lina_place(real, E, n, max_pack, home);
    gboolean same = ms_lina_same_popular(est, real, E, n);
    guint64 tmax = 0;
    for (guint r = 0; r < n; r++) {
        tmax = MAX(tmax, ms_routing_rank_tokens(in->routing, r));
    }
    /* Phase 1 reads each token's path ids and writes the estimate; phase 2 reads the gate's
     * choices and the load vector (4-byte ids, 8-byte loads). */
    lp->plan_bytes = (double)tmax * (depth + s->top_k_infer) * 4.0 + E * 8.0;
    lp->replan = TRUE;
    lp->replan_bytes = (double)tmax * s->top_k_infer * 4.0 + E * 8.0;
    if (move) {
        lp->moves_p1 = ms_lina_moves(p1, home, NULL, eb, &w);
        rep->weight_bytes += w;
        if (!same) {
            lp->moves_p2 = ms_lina_moves(p2, home, p1, eb, &w);
            rep->weight_bytes += w;
        }
    }
    rep->replans += !same;
    lp->placement = same ? g_steal_pointer(&p1) : g_steal_pointer(&p2);
}

gboolean
ms_lina_infer_configure(const MsPolicy *policy, const MsPolicyInput *in, MsPlanConfig *cfg,
                        GError **error)
{
    if (strcmp(ms_policy_get_choice(policy, "placement"), "static") == 0) {
        ms_plan_config_add_meta(cfg, "lina.placement", "static");
        return TRUE;
    }
    if (!ms_routing_has_paths(in->routing)) {
        g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_INPUT,
                    "policy lina: batch %" G_GUINT64_FORMAT " has count records only, but "
                    "Lina's inference estimate follows token paths (use a trace with token "
                    "records, or lina:placement=static)",
                    ms_routing_iteration(in->routing));
        return FALSE;
    }
    const MsModelSpec *s = ms_model_spec(in->model);
    guint n = ms_topology_n_gpus(in->topo);
    g_autoptr(MsPlacement) home = ms_placement_new_static(n, s->experts);
    cfg->n_layers = s->n_moe;
    cfg->layers = g_new0(MsLayerPlacement, s->n_moe);
    Report rep = {0};
    for (guint m = 0; m < s->n_moe; m++) {
        plan_layer(policy, in, m, home, &cfg->layers[m], &rep);
    }
    char buf[64];
    ms_plan_config_add_meta(cfg, "lina.placement", "dynamic");
    g_snprintf(buf, sizeof buf, "%u", rep.replans);
    ms_plan_config_add_meta(cfg, "lina.replans", buf);
    g_snprintf(buf, sizeof buf, "%" G_GUINT64_FORMAT, rep.weight_bytes);
    ms_plan_config_add_meta(cfg, "lina.weight_bytes", buf);
    g_snprintf(buf, sizeof buf, "%.4f", rep.error_sum / s->n_moe);
    ms_plan_config_add_meta(cfg, "lina.estimate_error", buf);
    return TRUE;
}
