/* lina_place: the bisection over a bound on a GPU's load, the popular experts' GPUs, the two ways
 * of packing the others (first-fit decreasing, and least-loaded-first when first-fit needs more
 * GPUs than are left), and the check against the starting placement. */
#include "lina_place.h"

#include <math.h>

static double
sum(const double *load, guint experts)
{
    double total = 0;
    for (guint e = 0; e < experts; e++) {
        total += load[e];
    }
    return total;
}

/* One replica of an expert: its expert and its share of the expert's load. */
typedef struct {
    guint expert;
    double size;
    gboolean popular; /* one of several replicas */
} Piece;

/* What goes on one GPU. */
typedef struct {
    double load;
    GArray *experts; /* guint */
    guint unpopular; /* experts with one replica: what max_pack limits */
} Bin;

static Bin *
bin_new(void)
{
    Bin *b = g_new0(Bin, 1);
    b->experts = g_array_new(FALSE, FALSE, sizeof(guint));
    return b;
}

static void
bin_free(gpointer p)
{
    Bin *b = p;
    g_array_unref(b->experts);
    g_free(b);
}

static gboolean
bin_holds(const Bin *b, guint e)
{
    for (guint i = 0; i < b->experts->len; i++) {
        if (g_array_index(b->experts, guint, i) == e) {
            return TRUE;
        }
    }
    return FALSE;
}

static gboolean
bin_takes(const Bin *b, const Piece *x, guint count)
{
    return (x->popular || b->unpopular < count) && !bin_holds(b, x->expert);
}

static void
bin_add(Bin *b, const Piece *x)
{
    g_array_append_val(b->experts, x->expert);
    b->load += x->size;
    b->unpopular += !x->popular;
}

static gint
by_size_desc(gconstpointer pa, gconstpointer pb)
{
    const Piece *a = pa, *b = pb;
    if (a->size != b->size) {
        return a->size > b->size ? -1 : 1;
    }
    return a->expert < b->expert ? -1 : (a->expert > b->expert);
}

/* First-fit decreasing into bins of capacity cap holding at most count unpopular experts, two
 * replicas of one expert never together: Lina's packing, which leaves as many GPUs as it can to
 * replicas. NULL when it needs more than n bins. */
static GPtrArray *
pack_first_fit(const GArray *pieces, double cap, guint count, guint n)
{
    g_autoptr(GPtrArray) bins = g_ptr_array_new_with_free_func(bin_free);
    for (guint i = 0; i < pieces->len; i++) {
        const Piece *x = &g_array_index(pieces, Piece, i);
        Bin *fit = NULL;
        for (guint b = 0; b < bins->len && fit == NULL; b++) {
            Bin *bin = g_ptr_array_index(bins, b);
            if (bin_takes(bin, x, count) && bin->load + x->size <= cap * (1 + 1e-9)) {
                fit = bin;
            }
        }
        if (fit == NULL) {
            if (bins->len == n) {
                return NULL;
            }
            fit = bin_new();
            g_ptr_array_add(bins, fit);
        }
        bin_add(fit, x);
    }
    return g_steal_pointer(&bins);
}

/* Each piece, largest first, onto the least loaded of n bins that can take it (Graham's
 * longest-processing-time rule). First-fit fails when the count limit closes bins that still
 * have room (many experts a GPU); this spreads the heavy experts instead of stacking them.
 * NULL when no bin can take a piece or one ends above cap. Empty bins are dropped. */
static GPtrArray *
pack_least_loaded(const GArray *pieces, double cap, guint count, guint n)
{
    g_autoptr(GPtrArray) bins = g_ptr_array_new_with_free_func(bin_free);
    for (guint b = 0; b < n; b++) {
        g_ptr_array_add(bins, bin_new());
    }
    for (guint i = 0; i < pieces->len; i++) {
        const Piece *x = &g_array_index(pieces, Piece, i);
        Bin *best = NULL;
        for (guint b = 0; b < n; b++) {
            Bin *bin = g_ptr_array_index(bins, b);
            if (bin_takes(bin, x, count) && (best == NULL || bin->load < best->load)) {
                best = bin;
            }
        }
        if (best == NULL || best->load + x->size > cap * (1 + 1e-9)) {
            return NULL;
        }
        bin_add(best, x);
    }
    for (guint b = bins->len; b-- > 0;) {
        if (((Bin *)g_ptr_array_index(bins, b))->experts->len == 0) {
            g_ptr_array_remove_index(bins, b);
        }
    }
    return g_steal_pointer(&bins);
}

/* The GPUs' contents for a bound on any GPU's load, or NULL when the experts do not fit n GPUs
 * under it. An expert above the bound is popular: ceil(load / bound) replicas, each with an
 * equal share of its load; every replica (a popular expert's, or an unpopular expert's only
 * one) is packed, at most count unpopular experts a GPU. replicas[e] gets the count. */
static GPtrArray *
bins_for(const double *load, const GArray *order, double bound, guint count, guint n,
         guint *replicas)
{
    g_autoptr(GArray) pieces = g_array_new(FALSE, FALSE, sizeof(Piece));
    for (guint i = 0; i < order->len; i++) {
        guint e = g_array_index(order, guint, i);
        double r = load[e] > bound ? ceil(load[e] / bound) : 1;
        if (r > n) {
            return NULL;
        }
        replicas[e] = (guint)r;
        for (guint k = 0; k < replicas[e]; k++) {
            Piece x = {e, load[e] / r, r > 1};
            g_array_append_val(pieces, x);
        }
    }
    g_array_sort(pieces, by_size_desc);
    GPtrArray *bins = pack_first_fit(pieces, bound, count, n);
    return bins ? bins : pack_least_loaded(pieces, bound, count, n);
}

/* An expert whose replicas each have a GPU of their own, with the highest load per replica:
 * the one a GPU left over goes to. G_MAXUINT when there is none. */
static guint
lone_heaviest(const GPtrArray *bins, const double *load, const guint *replicas, guint experts)
{
    g_autofree guint *alone = g_new0(guint, experts);
    for (guint b = 0; b < bins->len; b++) {
        const Bin *bin = g_ptr_array_index(bins, b);
        if (bin->experts->len == 1) {
            alone[g_array_index(bin->experts, guint, 0)]++;
        }
    }
    guint best = G_MAXUINT;
    for (guint e = 0; e < experts; e++) {
        if (alone[e] > 0 && alone[e] == replicas[e] &&
            (best == G_MAXUINT || load[e] / replicas[e] > load[best] / replicas[best])) {
            best = e;
        }
    }
    return best;
}

/* Bins for the smallest bound on a GPU's load (bisection between the mean, below which nothing
 * fits, and the total, where everything does: count x n covers the loaded experts), then
 * the GPUs left over one by one to the expert with the highest load per replica among those
 * whose replicas have GPUs of their own. */
static GPtrArray *
make_bins(const double *load, guint experts, const GArray *order, guint n, guint count)
{
    double total = 0;
    for (guint i = 0; i < order->len; i++) {
        total += load[g_array_index(order, guint, i)];
    }
    double lo = total / n, hi = total;
    g_autofree guint *replicas = g_new0(guint, experts);
    for (guint it = 0; it < 60 && hi - lo > total * 1e-12; it++) {
        double mid = (lo + hi) / 2;
        GPtrArray *b = bins_for(load, order, mid, count, n, replicas);
        if (b) {
            hi = mid;
            g_ptr_array_unref(b);
        } else {
            lo = mid;
        }
    }
    GPtrArray *bins = bins_for(load, order, hi, count, n, replicas);
    g_assert(bins != NULL);
    while (bins->len < n) {
        guint e = lone_heaviest(bins, load, replicas, experts);
        if (e == G_MAXUINT) {
            break;
        }
        replicas[e]++;
        Piece x = {e, load[e] / replicas[e], TRUE};
        for (guint b = 0; b < bins->len; b++) {
            Bin *bin = g_ptr_array_index(bins, b);
            if (bin->experts->len == 1 && g_array_index(bin->experts, guint, 0) == e) {
                bin->load = x.size;
            }
        }
        Bin *more = bin_new();
        bin_add(more, &x);
        g_ptr_array_add(bins, more);
    }
    return bins;
}

/* A free GPU for a bin: the one where prefer holds the most of its experts (ties: the GPU of its
 * first such expert, heaviest first), else the lowest free. */
static guint
pick_gpu(const Bin *b, const MsPlacement *prefer, const gboolean *taken, guint n_ranks)
{
    guint best = G_MAXUINT, most = 0;
    for (guint i = 0; i < b->experts->len; i++) {
        guint e = g_array_index(b->experts, guint, i), n = 0;
        const guint *reps = ms_placement_replicas(prefer, 0, e, &n);
        for (guint k = 0; k < n; k++) {
            guint d = reps[k], held = 0;
            if (taken[d]) {
                continue;
            }
            for (guint j = 0; j < b->experts->len; j++) {
                held += ms_placement_hosts(prefer, d, g_array_index(b->experts, guint, j));
            }
            if (held > most) {
                most = held;
                best = d;
            }
        }
    }
    if (best != G_MAXUINT) {
        return best;
    }
    guint d = 0;
    while (taken[d]) {
        d++;
    }
    g_assert(d < n_ranks);
    return d;
}

double
ms_lina_busiest(const MsPlacement *p, const double *load)
{
    guint n = ms_placement_n_ranks(p);
    g_autofree double *on = g_new0(double, n);
    for (guint e = 0; e < ms_placement_n_experts(p); e++) {
        guint k = 0;
        const guint *reps = ms_placement_replicas(p, 0, e, &k);
        for (guint j = 0; j < k; j++) {
            on[reps[j]] += load[e] / k;
        }
    }
    double most = 0;
    for (guint r = 0; r < n; r++) {
        most = MAX(most, on[r]);
    }
    return most;
}

MsPlacement *
ms_lina_place(const double *load, guint experts, guint n_ranks, guint max_pack,
              const MsPlacement *home)
{
    return ms_lina_place_prefer(load, experts, n_ranks, max_pack, home, NULL);
}

MsPlacement *
ms_lina_place_prefer(const double *load, guint experts, guint n_ranks, guint max_pack,
                     const MsPlacement *home, const MsPlacement *prefer)
{
    if (!(sum(load, experts) > 0)) {
        return ms_placement_copy(home);
    }
    /* Experts without load are left out of the search: counted, they would take places in the
     * bins (first-fit puts them in the first bins with room) that loaded experts need. */
    g_autoptr(GArray) order = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint e = 0; e < experts; e++) {
        if (load[e] > 0) {
            g_array_append_val(order, e);
        }
    }
    /* max_pack bounds the unpopular experts a GPU holds while it can: when the loaded experts
     * outnumber GPUs x max_pack, a GPU may hold twice their mean count, room for heavy and light
     * experts to balance (with the mean count itself every GPU must hold exactly as many, and
     * the heaviest of them end up together: docs/policies.md gives the figures). */
    guint count = order->len <= (guint64)n_ranks * max_pack
                      ? max_pack
                      : 2 * ((order->len + n_ranks - 1) / n_ranks);
    g_autoptr(GPtrArray) bins = make_bins(load, experts, order, n_ranks, count);
    g_autofree gboolean *taken = g_new0(gboolean, n_ranks);
    g_autoptr(MsPlacement) p = ms_placement_new(n_ranks, experts, n_ranks);
    for (guint i = 0; i < bins->len; i++) {
        const Bin *b = g_ptr_array_index(bins, i);
        guint d = pick_gpu(b, prefer ? prefer : home, taken, n_ranks);
        taken[d] = TRUE;
        for (guint j = 0; j < b->experts->len; j++) {
            ms_placement_add(p, 0, g_array_index(b->experts, guint, j), d);
        }
    }
    for (guint e = 0; e < experts; e++) {
        if (!(load[e] > 0)) {
            guint k = 0;
            ms_placement_add(p, 0, e, ms_placement_replicas(home, 0, e, &k)[0]);
        }
    }
    /* The bound search packs by heuristics (bin packing is NP-hard): where they do worse than
     * the starting layout, that layout is kept, so re-placing never makes the busiest GPU busier
     * for the loads it was asked to place. */
    if (ms_lina_busiest(p, load) > ms_lina_busiest(home, load) * (1 + 1e-12)) {
        return ms_placement_copy(home);
    }
    return g_steal_pointer(&p);
}
