/* lina_infer: the replicate-and-pack placement and the two phases of Lina's inference
 * scheduling, as plan configuration. Loads are expected token-expert assignments (doubles);
 * weights are bytes. The popularity estimate is path_profile.c's. */
#include "lina_infer.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "lina_host.h"

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
    guint64 host_bytes, host_late_bytes;
} Report;

typedef enum {
    WEIGHTS_RESIDENT, /* every GPU holds every expert */
    WEIGHTS_MOVE,     /* replicas copied from their home GPU */
    WEIGHTS_HOST,     /* experts in host memory, a cache per GPU */
} Weights;

/* weights=auto: resident when the whole model (every expert of every layer, and the dense part)
 * fits half of a GPU's memory (the other half is left to activations and the KV cache); else the
 * experts live in host memory, as memory-bound deployments keep them, when the GPU's host link
 * is known, and move between GPUs otherwise. */
static Weights
weights_mode(const MsPolicy *policy, const MsPolicyInput *in)
{
    const char *w = ms_policy_get_choice(policy, "weights");
    if (strcmp(w, "auto") != 0) {
        return strcmp(w, "move") == 0   ? WEIGHTS_MOVE
               : strcmp(w, "host") == 0 ? WEIGHTS_HOST
                                        : WEIGHTS_RESIDENT;
    }
    const MsModelSpec *s = ms_model_spec(in->model);
    double experts =
        (double)s->experts * ms_model_layer_expert_params(in->model) * ms_dtype_bytes(s->dtype);
    double bytes = ms_lina_dense_bytes(in->model) + experts;
    if (bytes <= 0.5 * (double)ms_topology_gpu_spec(in->topo, 0)->memory_bytes) {
        return WEIGHTS_RESIDENT;
    }
    MsHostLink link;
    return ms_lina_host_link(in->topo, 0, ms_policy_get_bandwidth(policy, "host_bw"), &link, NULL)
               ? WEIGHTS_HOST
               : WEIGHTS_MOVE;
}

/* What phase 1 and phase 2 decide for one MoE layer. Static placement: p1 NULL, p2 home's. */
typedef struct {
    double *est, *real;
    MsPlacement *p1, *p2;
    gboolean same; /* phase 2 keeps phase 1's placement */
} Decision;

static void
decision_clear(Decision *d)
{
    g_free(d->est);
    g_free(d->real);
    ms_placement_free(d->p1);
    ms_placement_free(d->p2);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Decision, decision_clear)

static gboolean
is_static(const MsPolicy *policy)
{
    return strcmp(ms_policy_get_choice(policy, "placement"), "static") == 0;
}

/* Where layer m's experts are in the caches now, and home's GPU for those no cache holds (NULL
 * without a cache). */
static MsPlacement *
cached(const MsExpertCache *cache, guint m, const MsPlacement *home)
{
    if (cache == NULL) {
        return NULL;
    }
    guint n = ms_expert_cache_n_ranks(cache), experts = ms_placement_n_experts(home);
    MsPlacement *p = ms_placement_new(n, experts, n);
    for (guint e = 0; e < experts; e++) {
        guint held = 0;
        for (guint r = 0; r < n; r++) {
            if (ms_expert_cache_holds(cache, r, m, e)) {
                ms_placement_add(p, 0, e, r);
                held++;
            }
        }
        if (held == 0) {
            guint k = 0;
            ms_placement_add(p, 0, e, ms_placement_replicas(home, 0, e, &k)[0]);
        }
    }
    return p;
}

/* Phase 1 and 2 of layer m. With experts in host memory (cache not NULL), each GPU's experts
 * prefer a GPU whose cache holds one of them, so that a batch re-placed from scratch still
 * finds its experts where the last batches left them. */
static void
decide(const MsPolicy *policy, const MsPolicyInput *in, guint m, const MsPlacement *home,
       const MsExpertCache *cache, Decision *d)
{
    const MsModelSpec *s = ms_model_spec(in->model);
    guint E = s->experts, n = ms_routing_header(in->routing)->ranks;
    memset(d, 0, sizeof *d);
    d->est = g_new0(double, E);
    d->real = g_new(double, E);
    for (guint e = 0; e < E; e++) {
        d->real[e] = (double)ms_routing_expert_load(in->routing, m, e);
    }
    if (is_static(policy)) {
        d->p2 = ms_placement_copy(home);
        return;
    }
    guint max_pack = (guint)ms_policy_get_uint(policy, "max_pack");
    ms_path_profile_estimate(in->profile, in->routing, m, (guint)ms_policy_get_uint(policy, "path"),
                             d->est);
    g_autoptr(MsPlacement) prefer = cached(cache, m, home);
    d->p1 = ms_lina_place_prefer(d->est, E, n, max_pack, home, prefer);
    d->p2 = ms_lina_place_prefer(d->real, E, n, max_pack, home, prefer);
    d->same = ms_lina_same_popular(d->est, d->real, E, n);
}

/* The placement a layer runs on. */
static const MsPlacement *
final_of(const Decision *d)
{
    return d->same ? d->p1 : d->p2;
}

/* A per-rank byte array, or NULL (and freed) when every entry is 0. */
static guint64 *
nonzero(guint64 *bytes, guint n, guint64 *total)
{
    guint64 t = 0;
    for (guint r = 0; r < n; r++) {
        t += bytes[r];
    }
    *total += t;
    if (t == 0) {
        g_free(bytes);
        return NULL;
    }
    return bytes;
}

static void
plan_layer(const MsPolicy *policy, const MsPolicyInput *in, guint m, const MsPlacement *home,
           Weights weights, MsExpertCache *cache, MsLayerPlacement *lp, Report *rep)
{
    const MsModelSpec *s = ms_model_spec(in->model);
    guint E = s->experts, n = ms_routing_header(in->routing)->ranks;
    guint depth = (guint)ms_policy_get_uint(policy, "path");
    guint64 eb = ms_model_expert_params(ms_model_moe(in->model, m)) * ms_dtype_bytes(s->dtype);
    guint64 w = 0;
    g_auto(Decision) d = {0};
    decide(policy, in, m, home, weights == WEIGHTS_HOST ? cache : NULL, &d);
    if (d.p1) {
        double diff = 0, sum = 0;
        for (guint e = 0; e < E; e++) {
            diff += fabs(d.est[e] - d.real[e]);
            sum += d.real[e];
        }
        rep->error_sum += sum > 0 ? diff / sum : 0;
        guint64 tmax = 0;
        for (guint r = 0; r < n; r++) {
            tmax = MAX(tmax, ms_routing_layer_tokens(in->routing, m, r));
        }
        /* Phase 1 reads each token's path ids and writes the estimate; phase 2 reads the gate's
         * choices and the load vector (4-byte ids, 8-byte loads). */
        lp->plan_bytes = (double)tmax * (depth + s->top_k_infer) * 4.0 + E * 8.0;
        lp->replan = TRUE;
        lp->replan_bytes = (double)tmax * s->top_k_infer * 4.0 + E * 8.0;
        rep->replans += !d.same;
    }
    if (weights == WEIGHTS_MOVE && d.p1) {
        lp->moves_p1 = ms_lina_moves(d.p1, home, NULL, eb, &w);
        rep->weight_bytes += w;
        if (!d.same) {
            lp->moves_p2 = ms_lina_moves(d.p2, home, d.p1, eb, &w);
            rep->weight_bytes += w;
        }
    }
    if (weights == WEIGHTS_HOST) {
        guint64 *b1 = g_new(guint64, n), *b2 = g_new(guint64, n);
        ms_lina_host_layer(cache, m, d.p1, d.est, final_of(&d), d.real, eb, b1, b2);
        lp->loads_p1 = nonzero(b1, n, &rep->host_bytes);
        guint64 late = 0;
        lp->loads_p2 = nonzero(b2, n, &late);
        rep->host_bytes += late;
        rep->host_late_bytes += late;
    }
    lp->placement = ms_placement_copy(final_of(&d));
}

static void add_meta(MsPlanConfig *cfg, const char *key, const char *format, ...)
    G_GNUC_PRINTF(3, 4);

static void
add_meta(MsPlanConfig *cfg, const char *key, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *v = g_strdup_vprintf(format, ap);
    va_end(ap);
    ms_plan_config_add_meta(cfg, key, v);
}

/* The cache a batch starts from: a copy of the input's, or an empty one. */
static MsExpertCache *
start_cache(const MsPolicy *policy, const MsPolicyInput *in, MsHostLink *link, guint *capacity,
            GError **error)
{
    guint64 bytes = 0;
    if (!ms_lina_host_link(in->topo, 0, ms_policy_get_bandwidth(policy, "host_bw"), link, error) ||
        !ms_lina_host_capacity(in->model, in->topo, ms_policy_get_bytes(policy, "cache"), capacity,
                               &bytes, error)) {
        return NULL;
    }
    const MsModelSpec *s = ms_model_spec(in->model);
    guint n = ms_routing_header(in->routing)->ranks;
    if (in->cache && ms_expert_cache_n_ranks(in->cache) == n &&
        ms_expert_cache_capacity(in->cache) == *capacity) {
        return ms_expert_cache_copy(in->cache);
    }
    return ms_expert_cache_new(n, s->n_moe, s->experts, *capacity);
}

gboolean
ms_lina_infer_configure(const MsPolicy *policy, const MsPolicyInput *in, MsPlanConfig *cfg,
                        GError **error)
{
    Weights weights = weights_mode(policy, in);
    if (is_static(policy) && weights != WEIGHTS_HOST) {
        ms_plan_config_add_meta(cfg, "lina.placement", "static");
        return TRUE;
    }
    if (!is_static(policy) && !ms_routing_has_paths(in->routing)) {
        /* A token record crosses every layer, so layer groups that route different numbers of
         * tokens have count records only. */
        gboolean groups = ms_trace_header_n_groups(ms_routing_header(in->routing)) > 1;
        g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_INPUT,
                    "policy lina: batch %" G_GUINT64_FORMAT " has count records only%s, but "
                    "Lina's inference estimate follows token paths (use a trace with token "
                    "records, or lina:placement=static)",
                    ms_routing_iteration(in->routing),
                    groups ? " (its layer groups route different numbers of tokens)" : "");
        return FALSE;
    }
    const MsModelSpec *s = ms_model_spec(in->model);
    guint n = ms_routing_header(in->routing)->ranks; /* the first GPUs (sim/rank_map.h) */
    MsHostLink link = {0};
    guint capacity = 0;
    g_autoptr(MsExpertCache) cache =
        weights == WEIGHTS_HOST ? start_cache(policy, in, &link, &capacity, error) : NULL;
    if (weights == WEIGHTS_HOST && cache == NULL) {
        return FALSE;
    }
    g_autoptr(MsPlacement) home = ms_placement_new_static(n, s->experts);
    cfg->n_layers = s->n_moe;
    cfg->layers = g_new0(MsLayerPlacement, s->n_moe);
    Report rep = {0};
    for (guint m = 0; m < s->n_moe; m++) {
        plan_layer(policy, in, m, home, weights, cache, &cfg->layers[m], &rep);
        cfg->layers[m].host_bw = link.bandwidth;
    }
    ms_plan_config_add_meta(cfg, "lina.placement", is_static(policy) ? "static" : "dynamic");
    static const char *const names[] = {"resident", "move", "host"};
    ms_plan_config_add_meta(cfg, "lina.weights", names[weights]);
    if (!is_static(policy)) {
        add_meta(cfg, "lina.replans", "%u", rep.replans);
        add_meta(cfg, "lina.weight_bytes", "%" G_GUINT64_FORMAT, rep.weight_bytes);
        add_meta(cfg, "lina.estimate_error", "%.4f", rep.error_sum / s->n_moe);
    }
    if (weights == WEIGHTS_HOST) {
        add_meta(cfg, "lina.host_bytes", "%" G_GUINT64_FORMAT, rep.host_bytes);
        add_meta(cfg, "lina.host_late_bytes", "%" G_GUINT64_FORMAT, rep.host_late_bytes);
        add_meta(cfg, "lina.cache_experts", "%u", capacity);
        add_meta(cfg, "lina.host_link", "%.6g B/s, %s", link.bandwidth, link.source);
    }
    return TRUE;
}

MsExpertCache *
ms_lina_infer_cache_new(const MsPolicy *policy, const MsPolicyInput *in, guint n_ranks,
                        GError **error)
{
    if (in->mode != MS_PLAN_INFER || strcmp(ms_policy_name(policy), "lina") != 0 ||
        weights_mode(policy, in) != WEIGHTS_HOST) {
        return NULL;
    }
    MsHostLink link;
    guint capacity = 0;
    guint64 bytes = 0;
    if (!ms_lina_host_link(in->topo, 0, ms_policy_get_bandwidth(policy, "host_bw"), &link, error) ||
        !ms_lina_host_capacity(in->model, in->topo, ms_policy_get_bytes(policy, "cache"), &capacity,
                               &bytes, error)) {
        return NULL;
    }
    const MsModelSpec *s = ms_model_spec(in->model);
    return ms_expert_cache_new(n_ranks, s->n_moe, s->experts, capacity);
}

gboolean
ms_lina_infer_learn(const MsPolicy *policy, const MsPolicyInput *in, MsExpertCache *cache,
                    GError **error)
{
    if (!is_static(policy) && !ms_routing_has_paths(in->routing)) {
        return TRUE; /* planning it fails; nothing to learn */
    }
    const MsModelSpec *s = ms_model_spec(in->model);
    guint n = ms_routing_header(in->routing)->ranks;
    if (n != ms_expert_cache_n_ranks(cache)) {
        g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_INPUT,
                    "policy lina: batch %" G_GUINT64_FORMAT " has %u ranks, the cache %u",
                    ms_routing_iteration(in->routing), n, ms_expert_cache_n_ranks(cache));
        return FALSE;
    }
    g_autoptr(MsPlacement) home = ms_placement_new_static(n, s->experts);
    g_autofree guint64 *b1 = g_new(guint64, n), *b2 = g_new(guint64, n);
    for (guint m = 0; m < s->n_moe; m++) {
        guint64 eb = ms_model_expert_params(ms_model_moe(in->model, m)) * ms_dtype_bytes(s->dtype);
        g_auto(Decision) d = {0};
        decide(policy, in, m, home, cache, &d);
        ms_lina_host_layer(cache, m, d.p1, d.est, final_of(&d), d.real, eb, b1, b2);
    }
    return TRUE;
}
