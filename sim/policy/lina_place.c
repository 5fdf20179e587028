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

/* Packing state for one bound, in flat arrays (the search tries some forty bounds): per bin its
 * load, its unpopular experts and the expert put in last, and per piece the bin it went to. The
 * pieces of one expert are adjacent in size order (equal sizes, ties by expert), so a bin holds
 * an expert already exactly when that expert went in last: two replicas never share a GPU. */
typedef struct {
    GArray *pieces; /* Piece, largest first */
    guint n;        /* GPUs */
    guint used;     /* bins opened */
    double *load;   /* [n] */
    guint *unpop;   /* [n] */
    guint *last;    /* [n] */
    guint *bin_of;  /* [pieces] */
    guint size;     /* of bin_of */
} Pack;

static void
pack_clear(Pack *k)
{
    g_array_unref(k->pieces);
    g_free(k->load);
    g_free(k->unpop);
    g_free(k->last);
    g_free(k->bin_of);
}

static void
open_bin(Pack *k, guint b)
{
    k->load[b] = 0;
    k->unpop[b] = 0;
    k->last[b] = G_MAXUINT;
}

static gboolean
takes(const Pack *k, guint b, const Piece *x, guint count)
{
    return (x->popular || k->unpop[b] < count) && k->last[b] != x->expert;
}

static void
put(Pack *k, guint b, guint i)
{
    const Piece *x = &g_array_index(k->pieces, Piece, i);
    k->load[b] += x->size;
    k->unpop[b] += !x->popular;
    k->last[b] = x->expert;
    k->bin_of[i] = b;
}

/* First-fit decreasing into bins of capacity cap holding at most count unpopular experts: Lina's
 * packing, which leaves as many GPUs as it can to replicas. FALSE when it needs more than n. */
static gboolean
pack_first_fit(Pack *k, double cap, guint count)
{
    k->used = 0;
    for (guint i = 0; i < k->pieces->len; i++) {
        const Piece *x = &g_array_index(k->pieces, Piece, i);
        guint b = 0;
        while (b < k->used &&
               !(takes(k, b, x, count) && k->load[b] + x->size <= cap * (1 + 1e-9))) {
            b++;
        }
        if (b == k->used) {
            if (k->used == k->n) {
                return FALSE;
            }
            open_bin(k, k->used++);
        }
        put(k, b, i);
    }
    return TRUE;
}

/* Each piece, largest first, onto the least loaded of n bins that can take it (Graham's
 * longest-processing-time rule). First-fit fails when the count limit closes bins that still
 * have room (many experts a GPU); this spreads the heavy experts instead of stacking them.
 * FALSE when no bin can take a piece or one ends above cap. */
static gboolean
pack_least_loaded(Pack *k, double cap, guint count)
{
    k->used = k->n;
    for (guint b = 0; b < k->n; b++) {
        open_bin(k, b);
    }
    for (guint i = 0; i < k->pieces->len; i++) {
        const Piece *x = &g_array_index(k->pieces, Piece, i);
        guint best = G_MAXUINT;
        for (guint b = 0; b < k->n; b++) {
            if (takes(k, b, x, count) && (best == G_MAXUINT || k->load[b] < k->load[best])) {
                best = b;
            }
        }
        if (best == G_MAXUINT || k->load[best] + x->size > cap * (1 + 1e-9)) {
            return FALSE;
        }
        put(k, best, i);
    }
    return TRUE;
}

/* Packs for a bound on any GPU's load; FALSE when the experts do not fit n GPUs under it. An
 * expert above the bound is popular: ceil(load / bound) replicas, each with an equal share of
 * its load; every replica (a popular expert's, or an unpopular expert's only one) is packed, at
 * most count unpopular experts a GPU. replicas[e] gets the count. */
/* Sorts pieces by by_size_desc: by insertion while they are few (the search sorts some forty
 * times a placement). Pieces that compare equal are the same expert's equal shares, identical,
 * so the order is the library sort's whatever the method. */
static void
sort_pieces(GArray *pieces)
{
    if (pieces->len > 64) {
        g_array_sort(pieces, by_size_desc);
        return;
    }
    Piece *x = (Piece *)pieces->data;
    for (guint i = 1; i < pieces->len; i++) {
        Piece v = x[i];
        guint j = i;
        while (j > 0 && by_size_desc(&v, &x[j - 1]) < 0) {
            x[j] = x[j - 1];
            j--;
        }
        x[j] = v;
    }
}

static gboolean
pack_for(Pack *k, const double *load, const GArray *order, double bound, guint count,
         guint *replicas)
{
    guint total = 0;
    for (guint i = 0; i < order->len; i++) {
        guint e = g_array_index(order, guint, i);
        double r = load[e] > bound ? ceil(load[e] / bound) : 1;
        if (r > k->n) {
            return FALSE;
        }
        replicas[e] = (guint)r;
        total += replicas[e];
    }
    g_array_set_size(k->pieces, total);
    Piece *x = (Piece *)k->pieces->data;
    for (guint i = 0; i < order->len; i++) {
        guint e = g_array_index(order, guint, i);
        for (guint j = 0; j < replicas[e]; j++) {
            *x++ = (Piece){e, load[e] / replicas[e], replicas[e] > 1};
        }
    }
    sort_pieces(k->pieces);
    if (k->size < k->pieces->len) {
        k->size = k->pieces->len;
        k->bin_of = g_renew(guint, k->bin_of, k->size);
    }
    return pack_first_fit(k, bound, count) || pack_least_loaded(k, bound, count);
}

/* The bins of a successful pack, empty ones left out. */
static GPtrArray *
bins_of(const Pack *k)
{
    g_autofree Bin **at = g_new0(Bin *, k->used);
    GPtrArray *bins = g_ptr_array_new_with_free_func(bin_free);
    for (guint i = 0; i < k->pieces->len; i++) {
        guint b = k->bin_of[i];
        if (at[b] == NULL) {
            at[b] = bin_new();
            g_ptr_array_add(bins, at[b]);
        }
        bin_add(at[b], &g_array_index(k->pieces, Piece, i));
    }
    return bins;
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
    Pack k = {.pieces = g_array_new(FALSE, FALSE, sizeof(Piece)),
              .n = n,
              .load = g_new(double, n),
              .unpop = g_new(guint, n),
              .last = g_new(guint, n)};
    /* A bound to one part in 10^9 of the total: far below one token. */
    for (guint it = 0; it < 60 && hi - lo > total * 1e-9; it++) {
        double mid = (lo + hi) / 2;
        if (pack_for(&k, load, order, mid, count, replicas)) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    gboolean ok = pack_for(&k, load, order, hi, count, replicas);
    g_assert(ok);
    GPtrArray *bins = bins_of(&k);
    pack_clear(&k);
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
