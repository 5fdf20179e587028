/* maxmin_prop: the fast path for solves that only remove variables (flows finishing), which are
 * most solves of a draining all-to-all. Instead of re-solving whole groups, it propagates level
 * changes: a group whose constraint has spare or missing capacity shifts its level so that the
 * constraint is exactly full again, which shifts the usage of the other constraints its members
 * cross, and so on, in increasing order of level. Where a member would outrun another saturated
 * constraint it moves there (a pivot); where an unsaturated constraint overflows it becomes a
 * group at its water level. When nothing is left to fix, the max-min conditions hold on every
 * constraint touched (and nothing else changed), so the result is the max-min allocation within
 * TOL. It gives up, restoring the state, when a constraint is processed too often; the fill
 * repair then does the solve. */
#include "maxmin_private.h"

/* A constraint processed more often than this in one solve means the propagation is chasing a
 * structural change that the fill repair handles in one go. */
#define MAX_REPROCESS 24
/* Final-check rounds after which the propagation gives up. */
#define MAX_ROUNDS 16
/* Residuals below this fraction of capacity are rounding, not changes to propagate. */
#define EPS_RES 1e-12

/* Saves a constraint's values the first time a solve changes it, for reports and rollback. */
static inline void
touch(MsMaxmin *mm, guint32 c)
{
    if (mm->t_mark[c] != mm->round) {
        mm->t_mark[c] = mm->round;
        mm->s_usage[c] = mm->usage[c];
        mm->s_level[c] = mm->level[c];
        mm->s_wgroup[c] = mm->wgroup[c];
        mm->s_fmax[c] = mm->fmax[c];
        mm->unfixed[c] = 0; /* times processed */
        push(mm->tlist, c);
    }
}

/* --- queue of constraints to process: min-heap on (key, id); groups by level, overflowing
 * unsaturated constraints first --- */

static inline gboolean
qless(const MsMaxmin *mm, guint32 a, guint32 b)
{
    return mm->qkey[a] < mm->qkey[b] || (mm->qkey[a] == mm->qkey[b] && a < b);
}

static void
qsift(MsMaxmin *mm, guint i)
{
    guint32 c = mm->heap[i];
    while (i > 0 && qless(mm, c, mm->heap[(i - 1) / 2])) {
        guint p = (i - 1) / 2;
        mm->heap[i] = mm->heap[p];
        mm->heap_pos[mm->heap[i]] = i;
        i = p;
    }
    for (;;) {
        guint l = 2 * i + 1;
        if (l >= mm->heap_len) {
            break;
        }
        guint m = (l + 1 < mm->heap_len && qless(mm, mm->heap[l + 1], mm->heap[l])) ? l + 1 : l;
        if (!qless(mm, mm->heap[m], c)) {
            break;
        }
        mm->heap[i] = mm->heap[m];
        mm->heap_pos[mm->heap[i]] = i;
        i = m;
    }
    mm->heap[i] = c;
    mm->heap_pos[c] = i;
}

static void
enqueue(MsMaxmin *mm, guint32 c)
{
    if (mm->heap_pos[c] != NONE) {
        return;
    }
    touch(mm, c);
    mm->qkey[c] = mm->ghead[c] != NONE ? mm->level[c] : -1;
    mm->heap[mm->heap_len] = c;
    mm->heap_pos[c] = mm->heap_len++;
    qsift(mm, mm->heap_len - 1);
}

static guint32
dequeue(MsMaxmin *mm)
{
    guint32 c = mm->heap[0];
    mm->heap_pos[c] = NONE;
    if (--mm->heap_len) {
        mm->heap[0] = mm->heap[mm->heap_len];
        mm->heap_pos[mm->heap[0]] = 0;
        qsift(mm, 0);
    }
    return c;
}

/* Queues c if its usage no longer fits its state: a group not exactly full, or an unsaturated
 * constraint over capacity. */
static inline void
note_change(MsMaxmin *mm, guint32 c)
{
    double cap = mm->capacity[c], u = mm->usage[c];
    if (mm->ghead[c] != NONE ? fabs(cap - u) > EPS_RES * cap : u > cap * (1 + TOL)) {
        enqueue(mm, c);
    }
}

/* --- moves --- */

/* Moves v into the group of `to` (at its level), settling the usage of its route. */
static void
pivot(MsMaxmin *mm, guint32 v, guint32 to)
{
    guint32 from = mm->bneck[v];
    if (mm->var_mark[v] != mm->pass) {
        mm->var_mark[v] = mm->pass;
        mm->new_bneck[v] = from; /* its group before the solve */
        push(mm->pivoted, v);
    }
    touch(mm, from);
    touch(mm, to);
    double lv = mm->level[to], d = mm->weight[v] * (lv - mm->level[from]);
    maxmin_group_unlink(mm, v);
    maxmin_group_link(mm, v, to);
    const Elem *e = &mm->elems[mm->elem_base[v]];
    for (guint k = 0; k < mm->n_elem[v]; k++) {
        guint32 c = e[k].cnst;
        touch(mm, c);
        add_usage(mm, c, d);
        if (c != to) {
            mm->fmax[c] = MAX(mm->fmax[c], lv);
        }
        note_change(mm, c);
    }
    note_change(mm, from);
    mm->stats.pivots++;
}

static int
cmp_seen(gconstpointer a, gconstpointer b)
{
    const Seen *x = a, *y = b;
    if (x->level != y->level) {
        return x->level < y->level ? -1 : 1;
    }
    return x->var < y->var ? -1 : x->var > y->var;
}

/* An unsaturated constraint overflows: it saturates at the water level y where the flows on it,
 * each capped at y, fill it exactly; the flows above y become its group. */
static gboolean
water_fill(MsMaxmin *mm, guint32 c)
{
    GArray *seen = mm->levels_seen;
    g_array_set_size(seen, 0);
    for (guint32 e = mm->head[c]; e != NONE; e = mm->elems[e].next) {
        guint32 v = mm->elems[e].var;
        Seen s = {mm->level[mm->bneck[v]], mm->weight[v], v};
        g_array_append_val(seen, s);
    }
    g_array_sort(seen, cmp_seen);
    mm->stats.rescans++;
    const Seen *s = (const Seen *)seen->data;
    double below = 0, above = 0;
    for (guint i = 0; i < seen->len; i++) {
        above += s[i].weight;
    }
    for (guint i = 0; i < seen->len; i++) {
        double y = (mm->capacity[c] - below) / above;
        if (y < s[i].level) {
            if (!(y > 0)) {
                return FALSE;
            }
            mm->level[c] = y;
            for (guint j = i; j < seen->len; j++) {
                if (mm->bneck[s[j].var] != c) {
                    pivot(mm, s[j].var, c);
                }
            }
            return TRUE;
        }
        below += s[i].weight * s[i].level;
        above -= s[i].weight;
    }
    return TRUE; /* it fits after all: rounding */
}

/* --- processing --- */

/* Shifts c's level so that c is exactly full; its members carry the shift to their routes. */
static gboolean
process(MsMaxmin *mm, guint32 c)
{
    if (++mm->unfixed[c] > MAX_REPROCESS) {
        return FALSE;
    }
    if (mm->ghead[c] == NONE) {
        return mm->usage[c] <= mm->capacity[c] * (1 + TOL) || water_fill(mm, c);
    }
    double r = mm->capacity[c] - mm->usage[c];
    if (fabs(r) <= EPS_RES * mm->capacity[c]) {
        return TRUE;
    }
    double delta = r / mm->wgroup[c], nl = mm->level[c] + delta;
    if (!(nl > 0) || !isfinite(nl)) {
        return FALSE;
    }
    mm->level[c] = nl;
    g_array_set_size(mm->pivots, 0);
    guint64 elems = 0, vars = 0;
    for (guint32 v = mm->ghead[c]; v != NONE; v = mm->gnext[v]) {
        double d = mm->weight[v] * delta;
        guint32 target = NONE;
        const Elem *e = &mm->elems[mm->elem_base[v]];
        for (guint k = 0; k < mm->n_elem[v]; k++) {
            guint32 c2 = e[k].cnst;
            touch(mm, c2);
            add_usage(mm, c2, d);
            if (c2 == c) {
                continue;
            }
            mm->fmax[c2] = MAX(mm->fmax[c2], nl);
            if (mm->ghead[c2] != NONE && mm->level[c2] * (1 + TOL) < nl &&
                (target == NONE || mm->level[c2] < mm->level[target])) {
                target = c2;
            }
            note_change(mm, c2);
        }
        if (target != NONE) {
            push(mm->pivots, v);
            push(mm->pivots, target);
        }
        elems += mm->n_elem[v];
        vars++;
    }
    mm->stats.component_vars += vars;
    mm->stats.component_elems += elems;
    for (guint i = 0; i < mm->pivots->len; i += 2) {
        guint32 v = AT(mm->pivots, i), to = AT(mm->pivots, i + 1);
        if (mm->bneck[v] == c && mm->ghead[to] != NONE && mm->level[to] < mm->level[c]) {
            pivot(mm, v, to);
        }
    }
    note_change(mm, c);
    return TRUE;
}

/* With the queue empty, every touched group must still be the fastest on its constraint. fmax
 * proves it mostly; otherwise the constraint is scanned and faster flows join its group.
 * Returns TRUE when that queued more work. */
static gboolean
final_checks(MsMaxmin *mm)
{
    for (guint i = 0; i < mm->tlist->len; i++) {
        guint32 c = AT(mm->tlist, i);
        double lv = mm->level[c];
        if (mm->ghead[c] == NONE || mm->fmax[c] <= lv * (1 + TOL)) {
            continue;
        }
        mm->stats.rescans++;
        double m = 0;
        g_array_set_size(mm->pivots, 0);
        for (guint32 e = mm->head[c]; e != NONE; e = mm->elems[e].next) {
            guint32 v = mm->elems[e].var, b = mm->bneck[v];
            if (b == c) {
                continue;
            }
            if (mm->level[b] > lv * (1 + TOL)) {
                push(mm->pivots, v);
            } else {
                m = MAX(m, mm->level[b]);
            }
        }
        mm->fmax[c] = m;
        for (guint j = 0; j < mm->pivots->len; j++) {
            guint32 v = AT(mm->pivots, j);
            if (mm->bneck[v] != c) {
                pivot(mm, v, c);
            }
        }
    }
    return mm->heap_len > 0;
}

static void
rollback(MsMaxmin *mm)
{
    while (mm->heap_len) {
        dequeue(mm);
    }
    for (guint i = mm->pivoted->len; i-- > 0;) {
        guint32 v = AT(mm->pivoted, i);
        if (mm->bneck[v] != mm->new_bneck[v]) {
            maxmin_group_unlink(mm, v);
            maxmin_group_link(mm, v, mm->new_bneck[v]);
        }
    }
    for (guint i = 0; i < mm->tlist->len; i++) {
        guint32 c = AT(mm->tlist, i);
        mm->usage[c] = mm->s_usage[c];
        mm->level[c] = mm->s_level[c];
        mm->wgroup[c] = mm->s_wgroup[c];
        mm->fmax[c] = mm->s_fmax[c];
    }
}

static void
report(MsMaxmin *mm, GArray *levels, GArray *moved)
{
    g_array_set_size(mm->cnsts, 0);
    for (guint i = 0; i < mm->tlist->len; i++) {
        guint32 c = AT(mm->tlist, i);
        double old = mm->s_level[c], nl = mm->level[c];
        if (levels && (isfinite(old) != isfinite(nl) ||
                       (isfinite(nl) && fabs(nl - old) > RATE_REL_EPS * nl))) {
            push(levels, c);
        }
        push(mm->cnsts, c);
        if (mm->n_updates[c] > USAGE_REFRESH) {
            mm->usage[c] = ms_maxmin_usage(mm, c);
            mm->n_updates[c] = 0;
        }
    }
    for (guint i = 0; moved && i < mm->pivoted->len; i++) {
        guint32 v = AT(mm->pivoted, i);
        if (mm->bneck[v] != mm->new_bneck[v]) {
            push(moved, v);
        }
    }
}

gboolean
maxmin_propagate(MsMaxmin *mm, GArray *levels, GArray *moved)
{
    if (mm->cap_changed) {
        return FALSE;
    }
    for (guint i = 0; i < mm->new_vars->len; i++) {
        guint32 v = AT(mm->new_vars, i);
        if (mm->alive[v] && mm->n_elem[v]) {
            return FALSE;
        }
    }
    maxmin_next_pass(mm);
    g_array_set_size(mm->tlist, 0);
    g_array_set_size(mm->pivoted, 0);
    for (guint i = 0; i < mm->dirty->len; i++) {
        guint32 c = AT(mm->dirty, i);
        if (mm->ghead[c] != NONE) {
            enqueue(mm, c);
        }
    }
    gboolean ok = TRUE;
    for (guint round = 0; ok; round++) {
        while (ok && mm->heap_len) {
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
