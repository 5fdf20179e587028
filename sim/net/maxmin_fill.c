/* maxmin_fill: repair by progressive filling over a region of groups, for any change (additions,
 * removals, capacities). The region grows by every group that fails a boundary check until none
 * fails; groups outside it keep their rates and their optimality, so the result equals a solve
 * from scratch within TOL. */
#include "maxmin_private.h"

/* --- indexed min-heap of the constraints of a pass, keyed by fair share rem/wsum --- */

/* Recomputes the heap key of c from its remaining capacity and unfixed weight. */
static inline void
rekey(MsMaxmin *mm, guint32 c)
{
    double r = mm->rem[c];
    double s = (r > 0 ? r : 0) / mm->wsum[c];
    mm->skey[c] = mm->kind[c] == K_OUTSIDE ? s * (1 + TIE_BIAS) : s;
}

static inline gboolean
less(const MsMaxmin *mm, guint32 a, guint32 b)
{
    double ka = mm->skey[a], kb = mm->skey[b];
    return ka < kb || (ka == kb && a < b);
}

static inline void
heap_place(MsMaxmin *mm, guint i, guint32 c)
{
    mm->heap[i] = c;
    mm->cn[c].heap_pos = i;
}

static void
sift_up(MsMaxmin *mm, guint i)
{
    guint32 c = mm->heap[i];
    while (i > 0) {
        guint p = (i - 1) / 2;
        if (!less(mm, c, mm->heap[p])) {
            break;
        }
        heap_place(mm, i, mm->heap[p]);
        i = p;
    }
    heap_place(mm, i, c);
}

static void
sift_down(MsMaxmin *mm, guint i)
{
    guint32 c = mm->heap[i];
    for (;;) {
        guint l = 2 * i + 1;
        if (l >= mm->heap_len) {
            break;
        }
        guint m = l;
        if (l + 1 < mm->heap_len && less(mm, mm->heap[l + 1], mm->heap[l])) {
            m = l + 1;
        }
        if (!less(mm, mm->heap[m], c)) {
            break;
        }
        heap_place(mm, i, mm->heap[m]);
        i = m;
    }
    heap_place(mm, i, c);
}

static void
heap_remove(MsMaxmin *mm, guint32 c)
{
    guint i = mm->cn[c].heap_pos;
    mm->cn[c].heap_pos = NONE;
    guint32 last = mm->heap[--mm->heap_len];
    if (i < mm->heap_len) {
        heap_place(mm, i, last);
        sift_down(mm, i);
        sift_up(mm, mm->cn[last].heap_pos);
    }
}

/* --- one repair pass --- */

static void
add_var(MsMaxmin *mm, guint32 v)
{
    if (mm->var_mark[v] == mm->pass) {
        return;
    }
    mm->var_mark[v] = mm->pass;
    push(&mm->vars, v);
    const Elem *ve = &mm->elems[mm->va[v].elem_base];
    for (guint k = 0; k < mm->va[v].n_elem; k++) {
        guint32 c = ve[k].cnst;
        if (mm->k_mark[c] != mm->pass) {
            mm->k_mark[c] = mm->pass;
            push(&mm->cnsts, c);
            mm->unfixed[c] = 0;
        }
        mm->unfixed[c]++;
    }
}

/* Collects V (the groups of R and the new variables), K (the constraints they use) and, per
 * constraint of K, the list of its V variables. */
static void
collect(MsMaxmin *mm)
{
    mm->vars.len = 0;
    mm->cnsts.len = 0;
    for (guint i = 0; i < mm->region.len; i++) {
        guint32 c = AT(mm->region, i);
        for (guint32 j = 0; j < mm->cn[c].n_mem; j++) {
            add_var(mm, mm->grp[c].m[j].var);
        }
    }
    for (guint i = 0; i < mm->new_vars.len; i++) {
        guint32 v = AT(mm->new_vars, i);
        if (mm->va[v].alive && mm->va[v].n_elem) {
            add_var(mm, v);
        }
    }
    guint32 off = 0;
    for (guint i = 0; i < mm->cnsts.len; i++) {
        guint32 c = AT(mm->cnsts, i);
        mm->voff[c] = mm->vend[c] = off;
        off += mm->unfixed[c];
    }
    ms_id_list_reserve(&mm->velems, off);
    mm->velems.len = off;
    guint32 *ve = mm->velems.v;
    for (guint i = 0; i < mm->vars.len; i++) {
        guint32 v = AT(mm->vars, i);
        const Elem *e = &mm->elems[mm->va[v].elem_base];
        for (guint k = 0; k < mm->va[v].n_elem; k++) {
            ve[mm->vend[e[k].cnst]++] = v;
        }
    }
    mm->stats.component_vars += mm->vars.len;
    mm->stats.component_elems += off;
}

/* Progressive filling of V over the capacity left by the other variables. A variable is fixed
 * once new_rate >= 0; sat[c] is the level at which c saturated, INFINITY if it fixed nothing. */
static void
fill(MsMaxmin *mm)
{
    const guint32 *cs = mm->cnsts.v;
    const guint32 *ve = mm->velems.v;
    guint nc = mm->cnsts.len;
    for (guint i = 0; i < nc; i++) {
        guint32 c = cs[i];
        mm->rem[c] = mm->cn[c].capacity - mm->cn[c].usage;
        mm->wsum[c] = 0;
        mm->sat[c] = INFINITY;
        mm->kind[c] = mm->r_mark[c] == mm->round  ? K_REGION
                      : isfinite(mm->cn[c].level) ? K_OUTSIDE
                                                  : K_FREE;
    }
    for (guint i = 0; i < mm->vars.len; i++) {
        guint32 v = AT(mm->vars, i);
        double r = old_rate(mm, v);
        mm->new_rate[v] = -1;
        const Elem *e = &mm->elems[mm->va[v].elem_base];
        for (guint k = 0; k < mm->va[v].n_elem; k++) {
            mm->rem[e[k].cnst] += r;
            mm->wsum[e[k].cnst] += mm->va[v].weight;
        }
    }
    mm->heap_len = 0;
    for (guint i = 0; i < nc; i++) {
        rekey(mm, cs[i]);
        heap_place(mm, mm->heap_len++, cs[i]);
    }
    for (guint i = mm->heap_len / 2; i-- > 0;) {
        sift_down(mm, i);
    }
    while (mm->heap_len) {
        guint32 c = mm->heap[0];
        double r = mm->rem[c];
        double x = (r > 0 ? r : 0) / mm->wsum[c];
        heap_remove(mm, c);
        mm->sat[c] = x;
        for (guint32 j = mm->voff[c]; j < mm->vend[c]; j++) {
            guint32 v = ve[j];
            if (mm->new_rate[v] >= 0) {
                continue;
            }
            double w = mm->va[v].weight;
            double rate = w * x;
            mm->new_rate[v] = rate;
            mm->new_bneck[v] = c;
            const Elem *e = &mm->elems[mm->va[v].elem_base];
            for (guint k = 0; k < mm->va[v].n_elem; k++) {
                guint32 c2 = e[k].cnst;
                mm->rem[c2] -= rate;
                mm->wsum[c2] -= w;
                if (--mm->unfixed[c2] == 0) {
                    if (mm->cn[c2].heap_pos != NONE) {
                        heap_remove(mm, c2);
                    }
                } else if (c2 != c && mm->cn[c2].heap_pos != NONE) {
                    /* The share of c2 can only have grown (x was the smallest). */
                    rekey(mm, c2);
                    sift_down(mm, mm->cn[c2].heap_pos);
                }
            }
        }
    }
}

static void
grow(MsMaxmin *mm, guint32 c)
{
    if (mm->r_mark[c] != mm->round) {
        mm->r_mark[c] = mm->round;
        push(&mm->region, c);
        mm->grown = TRUE;
    }
}

/* c saturates at level y with V variables bottlenecked on it: every other variable on it must be
 * no faster. fmax usually proves it; otherwise the constraint is scanned, its usage and bound made
 * exact, and the groups of faster variables join R. */
static void
check_foreign(MsMaxmin *mm, guint32 c, double y)
{
    if (mm->cn[c].fmax <= y * (1 + TOL)) {
        return;
    }
    mm->stats.rescans++;
    double m = 0, u = 0;
    const Entry *e = mm->ent[c].e;
    for (guint32 i = 0; i < mm->ent[c].n; i++) {
        guint32 v = e[i].var, b = e[i].bneck;
        u += mm->va[v].weight * level_of(mm, b);
        if (mm->var_mark[v] == mm->pass || b == NONE) {
            continue;
        }
        double lv = mm->cn[b].level;
        if (lv > y * (1 + TOL)) {
            grow(mm, b);
        }
        m = MAX(m, lv);
    }
    mm->cn[c].fmax = m;
    mm->cn[c].usage = u;
    mm->cn[c].n_updates = 0;
}

/* Checks the boundary of R after a fill; grows R by every group that fails. */
static void
check_pass(MsMaxmin *mm)
{
    const guint32 *ve = mm->velems.v;
    mm->grown = FALSE;
    for (guint i = 0; i < mm->cnsts.len; i++) {
        guint32 c = AT(mm->cnsts, i);
        double d = 0, vmax = 0;
        for (guint32 j = mm->voff[c]; j < mm->vend[c]; j++) {
            guint32 v = ve[j];
            d += mm->new_rate[v] - old_rate(mm, v);
            vmax = MAX(vmax, mm->new_rate[v] / mm->va[v].weight);
        }
        double lv = mm->cn[c].level, y = mm->sat[c];
        if (mm->kind[c] == K_OUTSIDE) {
            /* Its group keeps its level only if c stays exactly as full, no V variable outruns
             * the group, and none is bottlenecked here below it. */
            if (fabs(d) > TOL * mm->cn[c].capacity || vmax > lv * (1 + TOL) ||
                (isfinite(y) && y < lv * (1 - TOL))) {
                grow(mm, c);
            }
        } else if (isfinite(y) && (mm->kind[c] == K_FREE || lv > y * (1 + TOL))) {
            check_foreign(mm, c, y);
        }
    }
}

/* Applies the pass: usages, levels, group memberships and bounds; reports what changed. */
static void
commit(MsMaxmin *mm, GArray *levels, GArray *moved)
{
    const guint32 *ve = mm->velems.v;
    for (guint i = 0; i < mm->vars.len; i++) {
        guint32 v = AT(mm->vars, i);
        guint32 b = mm->new_bneck[v];
        if (mm->kind[b] == K_OUTSIDE) {
            mm->new_rate[v] = mm->va[v].weight * mm->cn[b].level; /* joins at the group's level */
        }
    }
    for (guint i = 0; i < mm->cnsts.len; i++) {
        guint32 c = AT(mm->cnsts, i);
        for (guint32 j = mm->voff[c]; j < mm->vend[c]; j++) {
            mm->cn[c].usage += mm->new_rate[ve[j]] - old_rate(mm, ve[j]);
        }
        mm->cn[c].n_updates++;
    }
    for (guint i = 0; i < mm->cnsts.len; i++) {
        guint32 c = AT(mm->cnsts, i);
        mm->prev[c] = mm->cn[c].level;
    }
    guint32 *mv = moved ? out_reserve(moved, mm->vars.len) : NULL;
    for (guint i = 0; i < mm->vars.len; i++) {
        guint32 v = AT(mm->vars, i);
        guint32 b = mm->new_bneck[v];
        if (b != mm->va[v].bneck) {
            if (mm->va[v].bneck != NONE) {
                maxmin_group_move(mm, v, b);
            } else {
                maxmin_group_link(mm, v, b);
            }
            if (mv) {
                *mv++ = v;
            }
        }
    }
    if (moved) {
        out_commit(moved, mv);
    }
    guint32 *lv_out = levels ? out_reserve(levels, mm->cnsts.len) : NULL;
    for (guint i = 0; i < mm->cnsts.len; i++) {
        guint32 c = AT(mm->cnsts, i);
        if (mm->kind[c] == K_OUTSIDE) {
            continue;
        }
        /* Only V variables can be bottlenecked here now: it has a group iff it fixed one. */
        double old = mm->prev[c], nl = mm->sat[c];
        mm->cn[c].level = nl;
        gboolean changed =
            isfinite(old) != isfinite(nl) || (isfinite(nl) && fabs(nl - old) > RATE_REL_EPS * nl);
        if (changed && lv_out) {
            *lv_out++ = c;
        }
    }
    if (levels) {
        out_commit(levels, lv_out);
    }
    for (guint i = 0; i < mm->vars.len; i++) {
        guint32 v = AT(mm->vars, i);
        double lv = mm->cn[mm->va[v].bneck].level;
        const Elem *e = &mm->elems[mm->va[v].elem_base];
        for (guint k = 0; k < mm->va[v].n_elem; k++) {
            if (e[k].cnst != mm->va[v].bneck) {
                mm->cn[e[k].cnst].fmax = MAX(mm->cn[e[k].cnst].fmax, lv);
            }
        }
    }
    for (guint i = 0; i < mm->cnsts.len; i++) {
        guint32 c = AT(mm->cnsts, i);
        if (mm->cn[c].n_updates > USAGE_REFRESH) {
            mm->cn[c].usage = ms_maxmin_usage(mm, c);
            mm->cn[c].n_updates = 0;
        }
    }
}

void
maxmin_fill_repair(MsMaxmin *mm, GArray *levels, GArray *moved)
{
    mm->region.len = 0;
    for (guint i = 0; i < mm->dirty.len; i++) {
        guint32 c = AT(mm->dirty, i);
        if (isfinite(mm->cn[c].level)) {
            mm->r_mark[c] = mm->round;
            push(&mm->region, c);
        }
    }
    for (;;) {
        maxmin_next_pass(mm);
        collect(mm);
        fill(mm);
        check_pass(mm);
        if (!mm->grown) {
            break;
        }
        mm->stats.repairs++;
    }
    commit(mm, levels, moved);
}
