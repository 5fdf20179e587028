/* maxmin_prop: the fast path for solves that add or remove variables (flows starting and
 * finishing; capacity changes go to the fill repair). A new variable first joins a group at the
 * rate it would get if nothing moved; then level changes propagate through unchanged groups, in
 * increasing order of level, with pivots where a flow changes bottleneck; when nothing is left to
 * fix, the max-min conditions hold on every constraint touched. Gives up (state restored) past
 * its budget; the fill repair then solves. */
#include "maxmin_private.h"

/* Final-check rounds after which the propagation gives up. */
#define MAX_ROUNDS 16
/* Residuals below this fraction of capacity are rounding, not changes to propagate. */
#define EPS_RES 1e-12

/* Saves a constraint's values the first time a solve changes it, for reports and rollback. */
static inline void
touch(MsMaxmin *mm, guint32 c)
{
    if (mm->cn[c].t_mark != mm->round) {
        mm->cn[c].t_mark = mm->round;
        if (G_UNLIKELY(mm->tlist.len == mm->saved_cap)) {
            mm->saved_cap = MAX(64, 2 * mm->saved_cap);
            mm->saved = g_renew(Saved, mm->saved, mm->saved_cap);
        }
        const Cnst *k = &mm->cn[c];
        mm->saved[mm->tlist.len] = (Saved){k->usage, k->level, k->wgroup, k->fmax};
        mm->unfixed[c] = 0; /* times processed */
        mm->cn[c].n_updates++;
        push(&mm->tlist, c);
    }
}

/* --- queue of constraints to process: a binary min-heap of (key, id) pairs, groups by level,
 * overflowing unsaturated constraints first. A key never changes while queued; heap_pos only
 * says whether a constraint is queued. --- */

static inline gboolean
qless(const QEntry *a, const QEntry *b)
{
    return a->key < b->key || (a->key == b->key && a->c < b->c);
}

static void
enqueue(MsMaxmin *mm, guint32 c)
{
    if (mm->cn[c].heap_pos != NONE) {
        return;
    }
    touch(mm, c);
    mm->cn[c].heap_pos = 0;
    if (mm->qlen == mm->qcap) {
        mm->qcap = MAX(64, 2 * mm->qcap);
        mm->queue = g_renew(QEntry, mm->queue, mm->qcap);
    }
    QEntry x = {mm->cn[c].n_mem ? mm->cn[c].level : -1, c};
    QEntry *h = mm->queue;
    guint i = mm->qlen++;
    while (i > 0 && qless(&x, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = x;
}

static guint32
dequeue(MsMaxmin *mm)
{
    QEntry *h = mm->queue;
    guint32 c = h[0].c;
    mm->cn[c].heap_pos = NONE;
    QEntry x = h[--mm->qlen];
    guint n = mm->qlen, i = 0;
    for (;;) {
        guint l = 2 * i + 1;
        if (l >= n) {
            break;
        }
        guint m = (l + 1 < n && qless(&h[l + 1], &h[l])) ? l + 1 : l;
        if (!qless(&h[m], &x)) {
            break;
        }
        h[i] = h[m];
        i = m;
    }
    h[i] = x;
    return c;
}

/* Queues c if its usage no longer fits its state: a group not exactly full, or an unsaturated
 * constraint over capacity. */
static inline void
note_change(MsMaxmin *mm, guint32 c)
{
    double cap = mm->cn[c].capacity, u = mm->cn[c].usage;
    if (mm->cn[c].n_mem ? fabs(cap - u) > EPS_RES * cap : u > cap * (1 + TOL)) {
        enqueue(mm, c);
    }
}

/* --- moves --- */

/* Records v's group before the solve (NONE for a new variable) the first time the solve moves
 * it, for the report and a rollback. */
static inline void
remember(MsMaxmin *mm, guint32 v)
{
    if (mm->var_mark[v] != mm->pass) {
        mm->var_mark[v] = mm->pass;
        mm->new_bneck[v] = mm->va[v].bneck;
        push(&mm->pivoted, v);
    }
}

/* v, now in the group of `to` at level lv, changed its rate by d: its route's constraints take
 * the change (queued if they no longer fit), and the others learn that a flow at lv crosses them.
 */
static void
take_rate(MsMaxmin *mm, guint32 v, guint32 to, double lv, double d)
{
    const Elem *e = &mm->elems[mm->va[v].elem_base];
    for (guint k = 0; k < mm->va[v].n_elem; k++) {
        guint32 c = e[k].cnst;
        touch(mm, c);
        mm->cn[c].usage += d;
        if (c != to) {
            mm->cn[c].fmax = MAX(mm->cn[c].fmax, lv);
        }
        note_change(mm, c);
    }
}

/* Moves v into the group of `to` (at its level), settling the usage of its route. */
static void
pivot(MsMaxmin *mm, guint32 v, guint32 to)
{
    guint32 from = mm->va[v].bneck;
    remember(mm, v);
    touch(mm, from);
    touch(mm, to);
    double lv = mm->cn[to].level, d = mm->va[v].weight * (lv - mm->cn[from].level);
    maxmin_group_move(mm, v, to);
    take_rate(mm, v, to, lv, d);
    note_change(mm, from);
    mm->stats.pivots++;
}

/* The order of a constraint's flows for water filling: by level, then by variable. It is total
 * (variables are distinct), so every correct sort gives the same order. */
static inline gboolean
seen_before(const Seen *x, const Seen *y)
{
    return x->level < y->level || (x->level == y->level && x->var < y->var);
}

/* Runs up to which insertion sort beats merging. */
#define SMALL_SORT 24

static void
insertion_sort(Seen *s, guint n)
{
    for (guint i = 1; i < n; i++) {
        Seen x = s[i];
        guint j = i;
        while (j > 0 && seen_before(&x, &s[j - 1])) {
            s[j] = s[j - 1];
            j--;
        }
        s[j] = x;
    }
}

/* Merge sort with the comparison compiled in (the library's calls a comparison function per
 * step: 13 % of the propagation on 16-GPU inference). tmp holds n / 2 entries: the left half is
 * copied there and merged back in place, which never overwrites an unread right entry. */
static void
sort_seen(Seen *s, Seen *tmp, guint n)
{
    if (n <= SMALL_SORT) {
        insertion_sort(s, n);
        return;
    }
    guint h = n / 2;
    sort_seen(s, tmp, h);
    sort_seen(s + h, tmp, n - h);
    if (!seen_before(&s[h], &s[h - 1])) {
        return; /* already in order */
    }
    memcpy(tmp, s, h * sizeof(Seen));
    guint i = 0, j = h, k = 0;
    while (i < h && j < n) {
        s[k++] = seen_before(&s[j], &tmp[i]) ? s[j++] : tmp[i++];
    }
    while (i < h) {
        s[k++] = tmp[i++];
    }
}

/* An unsaturated constraint overflows: it saturates at the water level y where the flows on it,
 * each capped at y, fill it exactly; the flows above y become its group. */
static gboolean
water_fill(MsMaxmin *mm, guint32 c)
{
    guint n = mm->ent[c].n;
    if (n > mm->seen_cap) {
        mm->seen_cap = MAX(n, 2 * mm->seen_cap);
        g_free(mm->seen);
        g_free(mm->seen_tmp);
        mm->seen = g_new(Seen, mm->seen_cap);
        mm->seen_tmp = g_new(Seen, mm->seen_cap / 2 + 1);
    }
    const Entry *e = mm->ent[c].e;
    Seen *s = mm->seen;
    for (guint32 i = 0; i < n; i++) {
        s[i] = (Seen){mm->cn[e[i].bneck].level, mm->va[e[i].var].weight, e[i].var};
    }
    sort_seen(s, mm->seen_tmp, n);
    mm->stats.rescans++;
    double below = 0, above = 0;
    for (guint i = 0; i < n; i++) {
        above += s[i].weight;
    }
    for (guint i = 0; i < n; i++) {
        double y = (mm->cn[c].capacity - below) / above;
        if (y < s[i].level) {
            if (!(y > 0)) {
                return FALSE;
            }
            mm->cn[c].level = y;
            for (guint j = i; j < n; j++) {
                if (mm->va[s[j].var].bneck != c) {
                    pivot(mm, s[j].var, c);
                }
            }
            return TRUE;
        }
        below += s[i].weight * s[i].level;
        above -= s[i].weight;
    }
    mm->cn[c].usage = below; /* it fits after all: the kept sum had drifted; take the recount */
    return TRUE;
}

/* c's group must be the fastest on c: fmax proves it mostly; otherwise c is scanned, its bound
 * made exact, and the faster flows join its group. */
static void
claim_faster(MsMaxmin *mm, guint32 c)
{
    double lv = mm->cn[c].level;
    if (!mm->cn[c].n_mem || mm->cn[c].fmax <= lv * (1 + TOL)) {
        return;
    }
    mm->stats.rescans++;
    double m = 0;
    mm->pivots.len = 0;
    const Entry *e = mm->ent[c].e;
    for (guint32 j = 0; j < mm->ent[c].n; j++) {
        guint32 b = e[j].bneck;
        if (b == c) {
            continue;
        }
        double lb = mm->cn[b].level;
        if (lb > lv * (1 + TOL)) {
            push(&mm->pivots, e[j].var);
        } else {
            m = MAX(m, lb);
        }
    }
    mm->cn[c].fmax = m;
    for (guint j = 0; j < mm->pivots.len; j++) {
        guint32 v = AT(mm->pivots, j);
        if (mm->va[v].bneck != c) {
            pivot(mm, v, c);
        }
    }
}

/* --- processing --- */

/* A member of a group now at level nl changed its rate by d: constraint c2 of its route takes
 * the change, is queued if it no longer fits, and becomes the member's target if it is a
 * saturated group slower than nl (the slowest such). */
static inline void
carry(MsMaxmin *mm, guint32 c2, double d, double nl, guint32 *target)
{
    Cnst *k2 = &mm->cn[c2];
    if (G_UNLIKELY(k2->t_mark != mm->round)) {
        touch(mm, c2);
    }
    double u = k2->usage + d, cap = k2->capacity;
    k2->usage = u;
    if (nl > k2->fmax) {
        k2->fmax = nl;
    }
    gboolean off;
    if (k2->n_mem) {
        if (k2->level * (1 + TOL) < nl && (*target == NONE || k2->level < mm->cn[*target].level)) {
            *target = c2;
        }
        off = fabs(cap - u) > EPS_RES * cap;
    } else {
        off = u > cap * (1 + TOL);
    }
    if (off && k2->heap_pos == NONE) {
        enqueue(mm, c2);
    }
}

/* Shifts c's level so that c is exactly full; its members carry the shift to their routes. */
static gboolean
process(MsMaxmin *mm, guint32 c)
{
    if (++mm->unfixed[c] > mm->budget) {
        return FALSE;
    }
    if (!mm->cn[c].n_mem) {
        return mm->cn[c].usage <= mm->cn[c].capacity * (1 + TOL) || water_fill(mm, c);
    }
    double r = mm->cn[c].capacity - mm->cn[c].usage;
    if (fabs(r) <= EPS_RES * mm->cn[c].capacity) {
        return TRUE;
    }
    double delta = r / mm->cn[c].wgroup, nl = mm->cn[c].level + delta;
    if (!(nl > 0) || !isfinite(nl)) {
        return FALSE;
    }
    mm->cn[c].level = nl;
    mm->pivots.len = 0;
    guint64 elems = 0;
    const Member *mem = mm->grp[c].m;
    guint32 n_mem = mm->cn[c].n_mem;
    for (guint32 i = 0; i < n_mem; i++) {
        const Member *m = &mem[i];
#if defined(__GNUC__)
        if (i + 4 < n_mem) {
            /* Members are read in order but the constraints they cross are scattered. */
            const Member *ahead = &mem[i + 4];
            __builtin_prefetch(&mm->cn[ahead->c[0]]);
            __builtin_prefetch(&mm->cn[ahead->c[1] != NONE ? ahead->c[1] : ahead->c[0]]);
        }
#endif
        double d = m->weight * delta;
        guint32 target = NONE;
        if (m->n == 2) {
            /* The usual route: c and one other constraint. */
            guint32 c2 = m->c[0] == c ? m->c[1] : m->c[0];
            if (c2 != c) { /* a route may cross c twice */
                carry(mm, c2, d, nl, &target);
            }
        } else {
            for (guint k = 0; k < m->n; k++) {
                guint32 c2 = member_cnst(mm, m, k);
                if (c2 != c) { /* c itself is settled below, all members at once */
                    carry(mm, c2, d, nl, &target);
                }
            }
        }
        if (target != NONE) {
            push(&mm->pivots, m->var);
            push(&mm->pivots, target);
        }
        elems += m->n;
    }
    mm->cn[c].usage += r;
    mm->stats.component_vars += n_mem;
    mm->stats.component_elems += elems;
    for (guint i = 0; i < mm->pivots.len; i += 2) {
        guint32 v = AT(mm->pivots, i), to = AT(mm->pivots, i + 1);
        if (mm->va[v].bneck == c && mm->cn[to].n_mem && mm->cn[to].level < mm->cn[c].level) {
            pivot(mm, v, to);
        }
    }
    if (delta < 0) {
        /* Catch flows it now undercuts while their dependents are still ahead in the queue. */
        claim_faster(mm, c);
    }
    note_change(mm, c);
    return TRUE;
}

/* With the queue empty, checks every touched group (levels may have moved since each was
 * processed). Returns TRUE when that queued more work. */
static gboolean
final_checks(MsMaxmin *mm)
{
    for (guint i = 0; i < mm->tlist.len; i++) {
        claim_faster(mm, AT(mm->tlist, i));
    }
    return mm->qlen > 0;
}

static void
rollback(MsMaxmin *mm)
{
    while (mm->qlen) {
        dequeue(mm);
    }
    for (guint i = mm->pivoted.len; i-- > 0;) {
        guint32 v = AT(mm->pivoted, i);
        if (mm->va[v].bneck == mm->new_bneck[v]) {
            continue;
        }
        if (mm->new_bneck[v] == NONE) {
            maxmin_group_unlink(mm, v); /* a new variable */
        } else {
            maxmin_group_move(mm, v, mm->new_bneck[v]);
        }
    }
    for (guint i = 0; i < mm->tlist.len; i++) {
        guint32 c = AT(mm->tlist, i);
        mm->cn[c].usage = mm->saved[i].usage;
        mm->cn[c].level = mm->saved[i].level;
        mm->cn[c].wgroup = mm->saved[i].wgroup;
        mm->cn[c].fmax = mm->saved[i].fmax;
    }
}

static void
report(MsMaxmin *mm, GArray *levels, GArray *moved)
{
    mm->cnsts.len = 0;
    ms_id_list_reserve(&mm->cnsts, mm->tlist.len);
    guint32 *lv = levels ? out_reserve(levels, mm->tlist.len) : NULL;
    for (guint i = 0; i < mm->tlist.len; i++) {
        guint32 c = AT(mm->tlist, i);
        double old = mm->saved[i].level, nl = mm->cn[c].level;
        if (lv && (isfinite(old) != isfinite(nl) ||
                   (isfinite(nl) && fabs(nl - old) > RATE_REL_EPS * nl))) {
            *lv++ = c;
        }
        mm->cnsts.v[mm->cnsts.len++] = c;
        if (mm->cn[c].n_updates > USAGE_REFRESH) {
            mm->cn[c].usage = ms_maxmin_usage(mm, c);
            mm->cn[c].n_updates = 0;
        }
    }
    if (levels) {
        out_commit(levels, lv);
    }
    guint32 *mv = moved ? out_reserve(moved, mm->pivoted.len) : NULL;
    for (guint i = 0; moved && i < mm->pivoted.len; i++) {
        guint32 v = AT(mm->pivoted, i);
        if (mm->va[v].bneck != mm->new_bneck[v]) {
            *mv++ = v;
        }
    }
    if (moved) {
        out_commit(moved, mv);
    }
}

/* The saturated constraint of the lowest level on v's route, NONE if it crosses none. */
static guint32
slowest_group(const MsMaxmin *mm, guint32 v)
{
    const Elem *e = &mm->elems[mm->va[v].elem_base];
    guint32 b = NONE;
    for (guint k = 0; k < mm->va[v].n_elem; k++) {
        guint32 c = e[k].cnst;
        if (mm->cn[c].n_mem && (b == NONE || mm->cn[c].level < mm->cn[b].level)) {
            b = c;
        }
    }
    return b;
}

/* The level at which v alone would fill the first of its constraints, none of which has a group:
 * the least (capacity - usage) / (weight x crossings) over its route, into *at. */
static double
first_fill(const MsMaxmin *mm, guint32 v, guint32 *at)
{
    const Elem *e = &mm->elems[mm->va[v].elem_base];
    guint n = mm->va[v].n_elem;
    double best = INFINITY;
    for (guint k = 0; k < n; k++) {
        guint32 c = e[k].cnst;
        double y = (mm->cn[c].capacity - mm->cn[c].usage) / maxmin_weight_on(mm, v, c);
        if (y < best) {
            best = y;
            *at = c;
        }
    }
    return best;
}

/* A new variable joins the group of the slowest saturated constraint on its route at its level,
 * the rate it would get if nothing moved, or, crossing none, starts a group at the constraint it
 * would fill first on its own; the constraints it crosses take that rate, and those it overfills
 * are queued, so that the rules below make room for it as they fill the room a finished
 * variable leaves. FALSE, nothing changed, when it fits nowhere (a constraint already full). */
static gboolean
place(MsMaxmin *mm, guint32 v)
{
    guint32 b = slowest_group(mm, v);
    gboolean fresh = b == NONE;
    double lv = fresh ? first_fill(mm, v, &b) : mm->cn[b].level;
    if (!(lv > 0) || !isfinite(lv)) {
        return FALSE;
    }
    remember(mm, v); /* no group before: reported as moved, unlinked on a rollback */
    const Elem *e = &mm->elems[mm->va[v].elem_base];
    for (guint k = 0; k < mm->va[v].n_elem; k++) {
        touch(mm, e[k].cnst); /* in route order, b among them, before its group grows */
    }
    maxmin_group_link(mm, v, b);
    if (fresh) {
        mm->cn[b].level = lv;
    }
    take_rate(mm, v, b, lv, mm->va[v].weight * lv);
    return TRUE;
}

/* The rules, applied until the queue is empty and the final checks find nothing:
 * - a group whose constraint has spare or missing capacity shifts its level so that the
 *   constraint is exactly full again; its members carry the shift to the usage of the other
 *   constraints they cross (process);
 * - a member that would outrun another saturated constraint moves to that group (pivot), and a
 *   group whose level drops claims the flows it now undercuts (claim_faster);
 * - an unsaturated constraint that overflows becomes a group at its water level (water_fill).
 * Then every touched constraint is full or fits, and every touched group is the fastest on its
 * constraint; nothing else changed, so these are the max-min conditions everywhere. */
gboolean
maxmin_propagate(MsMaxmin *mm, GArray *levels, GArray *moved)
{
    if (mm->cap_changed || mm->budget == 0) {
        return FALSE;
    }
    maxmin_next_pass(mm);
    mm->tlist.len = 0;
    mm->pivoted.len = 0;
    gboolean ok = TRUE;
    for (guint i = 0; ok && i < mm->new_vars.len; i++) {
        guint32 v = AT(mm->new_vars, i);
        /* A variable removed and its id taken again in one solve is listed twice. */
        if (mm->va[v].alive && mm->va[v].n_elem && mm->va[v].bneck == NONE) {
            ok = place(mm, v);
        }
    }
    /* A group placing started must be the fastest on its constraint: once every new variable has
     * a group (the scan reads each flow's group), the flows above it join it. */
    for (guint i = 0, n = mm->pivoted.len; ok && i < n; i++) {
        claim_faster(mm, mm->va[AT(mm->pivoted, i)].bneck);
    }
    for (guint i = 0; ok && i < mm->dirty.len; i++) {
        guint32 c = AT(mm->dirty, i);
        if (mm->cn[c].n_mem) {
            enqueue(mm, c);
        }
    }
    for (guint round = 0; ok; round++) {
        while (ok && mm->qlen) {
            ok = process(mm, dequeue(mm));
        }
        if (!ok || !final_checks(mm)) {
            break;
        }
        ok = round < MAX_ROUNDS;
    }
    if (!ok) {
        rollback(mm);
        mm->stats.fallbacks++;
        return FALSE;
    }
    mm->stats.propagations++;
    report(mm, levels, moved);
    return TRUE;
}
