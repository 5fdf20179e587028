/* maxmin: the solver's storage and API. Held as groups: each constrained variable is bottlenecked
 * at one saturated constraint, where it and its group share the largest level (rate per unit
 * weight); that state is the unique max-min allocation. Solves dispatch to the propagation
 * (maxmin_prop.c) or the fill repair (maxmin_fill.c). Index-based arrays, no pointers: a million
 * variables cost about a hundred bytes each. */
#include "maxmin_private.h"

MsMaxmin *
ms_maxmin_new(void)
{
    MsMaxmin *mm = g_new0(MsMaxmin, 1);
    mm->round = 1;
    mm->pass = 1;
    mm->budget = DEFAULT_BUDGET;
    return mm;
}

void
ms_maxmin_free(MsMaxmin *mm)
{
    if (mm == NULL) {
        return;
    }
    for (guint c = 0; c < mm->n_cnst; c++) {
        g_free(mm->grp[c].m);
        g_free(mm->ent[c].e);
    }
    void *arrays[] = {mm->cn,      mm->grp,  mm->ent,      mm->dirty_mark, mm->r_mark,   mm->k_mark,
                      mm->u_mark,  mm->rem,  mm->wsum,     mm->sat,        mm->prev,     mm->skey,
                      mm->unfixed, mm->heap, mm->voff,     mm->vend,       mm->kind,     mm->saved,
                      mm->queue,   mm->va,   mm->new_rate, mm->new_bneck,  mm->var_mark, mm->elems};
    for (guint i = 0; i < G_N_ELEMENTS(arrays); i++) {
        g_free(arrays[i]);
    }
    for (guint i = 0; i <= MAX_ELEMS_PER_VAR; i++) {
        ms_id_list_clear(&mm->free_blocks[i]);
    }
    MsIdList *lists[] = {&mm->free_vars, &mm->dirty,  &mm->unloaded, &mm->new_vars,
                         &mm->region,    &mm->vars,   &mm->cnsts,    &mm->velems,
                         &mm->tlist,     &mm->pivots, &mm->pivoted};
    for (guint i = 0; i < G_N_ELEMENTS(lists); i++) {
        ms_id_list_clear(lists[i]);
    }
    g_free(mm->seen);
    g_free(mm->seen_tmp);
    g_free(mm);
}

static void
mark_dirty(MsMaxmin *mm, guint32 c)
{
    if (mm->dirty_mark[c] != mm->round) {
        mm->dirty_mark[c] = mm->round;
        push(&mm->dirty, c);
    }
}

static void
grow_constraints(MsMaxmin *mm)
{
    guint n = mm->cap_cnst = MAX(16, mm->cap_cnst * 2);
    mm->cn = g_renew(Cnst, mm->cn, n);
    mm->grp = g_renew(Group, mm->grp, n);
    mm->ent = g_renew(Entries, mm->ent, n);
    mm->dirty_mark = g_renew(guint32, mm->dirty_mark, n);
    mm->r_mark = g_renew(guint32, mm->r_mark, n);
    mm->k_mark = g_renew(guint32, mm->k_mark, n);
    mm->u_mark = g_renew(guint32, mm->u_mark, n);
    mm->rem = g_renew(double, mm->rem, n);
    mm->wsum = g_renew(double, mm->wsum, n);
    mm->sat = g_renew(double, mm->sat, n);
    mm->prev = g_renew(double, mm->prev, n);
    mm->skey = g_renew(double, mm->skey, n);
    mm->unfixed = g_renew(guint32, mm->unfixed, n);
    mm->heap = g_renew(guint32, mm->heap, n);
    mm->voff = g_renew(guint32, mm->voff, n);
    mm->vend = g_renew(guint32, mm->vend, n);
    mm->kind = g_renew(guint8, mm->kind, n);
}

guint32
ms_maxmin_add_constraint(MsMaxmin *mm, double capacity)
{
    g_return_val_if_fail(capacity > 0 && isfinite(capacity), NONE);
    if (mm->n_cnst == mm->cap_cnst) {
        grow_constraints(mm);
    }
    guint32 c = mm->n_cnst++;
    mm->cn[c].capacity = capacity;
    mm->cn[c].usage = 0;
    mm->cn[c].level = INFINITY;
    mm->cn[c].fmax = 0;
    mm->cn[c].wgroup = 0;
    mm->cn[c].t_mark = 0;
    mm->ent[c].e = NULL;
    mm->ent[c].n = mm->ent[c].cap = 0;
    mm->cn[c].n_mem = 0;
    mm->grp[c].m = NULL;
    mm->grp[c].cap = 0;
    mm->cn[c].n_updates = 0;
    mm->dirty_mark[c] = 0;
    mm->r_mark[c] = 0;
    mm->k_mark[c] = 0;
    mm->u_mark[c] = 0;
    mm->cn[c].heap_pos = NONE;
    return c;
}

guint
ms_maxmin_n_constraints(const MsMaxmin *mm)
{
    return mm->n_cnst;
}

double
ms_maxmin_capacity(const MsMaxmin *mm, guint32 cnst)
{
    g_return_val_if_fail(cnst < mm->n_cnst, 0);
    return mm->cn[cnst].capacity;
}

void
ms_maxmin_set_capacity(MsMaxmin *mm, guint32 cnst, double capacity)
{
    g_return_if_fail(cnst < mm->n_cnst && capacity > 0 && isfinite(capacity));
    mm->cn[cnst].capacity = capacity;
    mm->cap_changed = TRUE;
    if (isfinite(mm->cn[cnst].level)) {
        mark_dirty(mm, cnst);
        return;
    }
    /* Unsaturated: only a cut below the current usage changes anything, and then every group
     * with a variable here must be re-solved. */
    if (capacity >= mm->cn[cnst].usage * (1 + TOL)) {
        return;
    }
    for (guint32 i = 0; i < mm->ent[cnst].n; i++) {
        guint32 b = mm->ent[cnst].e[i].bneck;
        if (b != NONE) {
            mark_dirty(mm, b);
        }
    }
}

static guint32
alloc_block(MsMaxmin *mm, guint n)
{
    if (mm->free_blocks[n].len) {
        return ms_id_list_pop(&mm->free_blocks[n]);
    }
    if (mm->n_elems + n > mm->cap_elems) {
        mm->cap_elems = MAX(mm->n_elems + n, MAX(64, mm->cap_elems * 2));
        mm->elems = g_renew(Elem, mm->elems, mm->cap_elems);
    }
    guint32 base = mm->n_elems;
    mm->n_elems += n;
    return base;
}

static void
free_block(MsMaxmin *mm, guint32 base, guint n)
{
    push(&mm->free_blocks[n], base);
}

static guint32
alloc_var(MsMaxmin *mm)
{
    if (mm->free_vars.len) {
        return ms_id_list_pop(&mm->free_vars);
    }
    if (mm->n_var == mm->cap_var) {
        guint n = mm->cap_var = MAX(64, mm->cap_var * 2);
        mm->va = g_renew(Var, mm->va, n);
        mm->new_rate = g_renew(double, mm->new_rate, n);
        mm->new_bneck = g_renew(guint32, mm->new_bneck, n);
        mm->var_mark = g_renew(guint32, mm->var_mark, n);
    }
    return mm->n_var++;
}

guint32
ms_maxmin_add_variable(MsMaxmin *mm, double weight, const guint32 *cnsts, guint n)
{
    g_return_val_if_fail(weight > 0 && isfinite(weight), NONE);
    g_return_val_if_fail(n <= MAX_ELEMS_PER_VAR, NONE);
    for (guint i = 0; i < n; i++) {
        g_return_val_if_fail(cnsts[i] < mm->n_cnst, NONE);
    }
    guint32 v = alloc_var(mm);
    mm->va[v].weight = weight;
    mm->va[v].n_elem = (guint8)n;
    mm->va[v].alive = 1;
    mm->var_mark[v] = 0;
    mm->va[v].bneck = NONE;
    mm->va[v].elem_base = NONE;
    mm->new_rate[v] = 0;
    mm->n_live++;
    push(&mm->new_vars, v);
    if (n == 0) {
        return v;
    }
    guint32 base = alloc_block(mm, n);
    mm->va[v].elem_base = base;
    for (guint i = 0; i < n; i++) {
        guint32 c = cnsts[i];
        Entries *en = &mm->ent[c];
        if (en->n == en->cap) {
            en->cap = MAX(4, 2 * en->cap);
            en->e = g_renew(Entry, en->e, en->cap);
        }
        en->e[en->n] = (Entry){v, NONE, base + i};
        mm->elems[base + i] = (Elem){c, en->n++};
        /* A group on the route must make room: its constraint is saturated. */
        if (isfinite(mm->cn[c].level)) {
            mark_dirty(mm, c);
        }
    }
    return v;
}

double
maxmin_weight_on(const MsMaxmin *mm, guint32 v, guint32 b)
{
    const Elem *e = &mm->elems[mm->va[v].elem_base];
    guint k = 0;
    for (guint i = 0; i < mm->va[v].n_elem; i++) {
        k += e[i].cnst == b;
    }
    return mm->va[v].weight * k;
}

static void
set_bneck(MsMaxmin *mm, guint32 v, guint32 b)
{
    mm->va[v].bneck = b;
    const Elem *e = &mm->elems[mm->va[v].elem_base];
    for (guint k = 0; k < mm->va[v].n_elem; k++) {
        mm->ent[e[k].cnst].e[e[k].pos].bneck = b;
    }
}

/* Takes v out of its group's member array, keeping the group's weight and level. */
static void
group_detach(MsMaxmin *mm, guint32 v)
{
    guint32 b = mm->va[v].bneck;
    Group *g = &mm->grp[b];
    guint32 last = --mm->cn[b].n_mem, pos = mm->va[v].gpos;
    if (pos != last) {
        g->m[pos] = g->m[last];
        mm->va[g->m[pos].var].gpos = pos;
    }
    mm->cn[b].wgroup -= maxmin_weight_on(mm, v, b);
    if (last == 0) {
        mm->cn[b].level = INFINITY;
        mm->cn[b].wgroup = 0;
    }
}

void
maxmin_group_link(MsMaxmin *mm, guint32 v, guint32 b)
{
    Group *g = &mm->grp[b];
    guint32 n = mm->cn[b].n_mem++;
    if (n == g->cap) {
        g->cap = MAX(4, 2 * g->cap);
        g->m = g_renew(Member, g->m, g->cap);
    }
    Member *m = &g->m[n];
    m->weight = mm->va[v].weight;
    m->var = v;
    m->n = mm->va[v].n_elem;
    const Elem *e = &mm->elems[mm->va[v].elem_base];
    for (guint k = 0; k < INLINE_ROUTE; k++) {
        m->c[k] = k < m->n ? e[k].cnst : NONE;
    }
    set_bneck(mm, v, b);
    mm->va[v].gpos = n;
    mm->cn[b].wgroup += maxmin_weight_on(mm, v, b);
}

void
maxmin_group_move(MsMaxmin *mm, guint32 v, guint32 b)
{
    group_detach(mm, v);
    maxmin_group_link(mm, v, b); /* writes the route's entries: no need to clear them first */
}

void
maxmin_group_unlink(MsMaxmin *mm, guint32 v)
{
    group_detach(mm, v);
    set_bneck(mm, v, NONE);
}

/* Drops entry pos of constraint c; the last entry takes its place and its element is told. */
static void
entry_remove(MsMaxmin *mm, guint32 c, guint32 pos)
{
    Entries *en = &mm->ent[c];
    guint32 last = --en->n;
    if (pos == last) {
        return;
    }
    en->e[pos] = en->e[last];
    mm->elems[en->e[pos].elem].pos = pos;
}

void
ms_maxmin_remove_variable(MsMaxmin *mm, guint32 v)
{
    g_return_if_fail(v < mm->n_var && mm->va[v].alive);
    double r = old_rate(mm, v);
    if (mm->va[v].bneck != NONE) {
        group_detach(mm, v); /* its entries go below */
    }
    guint n = mm->va[v].n_elem;
    guint32 base = mm->va[v].elem_base;
    for (guint i = 0; i < n; i++) {
        guint32 c = mm->elems[base + i].cnst;
        entry_remove(mm, c, mm->elems[base + i].pos);
        mm->cn[c].usage -= r;
        mm->cn[c].n_updates++;
        if (mm->u_mark[c] != mm->round) {
            mm->u_mark[c] = mm->round;
            push(&mm->unloaded, c);
        }
        if (mm->ent[c].n == 0) {
            mm->cn[c].usage = 0;
            mm->cn[c].fmax = 0;
        }
        /* A group on the route lost usage: its constraint is no longer saturated. */
        if (isfinite(mm->cn[c].level)) {
            mark_dirty(mm, c);
        }
    }
    if (n) {
        free_block(mm, base, n);
    }
    mm->va[v].alive = 0;
    mm->va[v].bneck = NONE;
    mm->n_live--;
    push(&mm->free_vars, v);
}

guint
ms_maxmin_n_variables(const MsMaxmin *mm)
{
    return mm->n_live;
}

guint
ms_maxmin_n_crossings(const MsMaxmin *mm, guint32 cnst)
{
    g_return_val_if_fail(cnst < mm->n_cnst, 0);
    return mm->ent[cnst].n;
}

guint32
ms_maxmin_crossing(const MsMaxmin *mm, guint32 cnst, guint k)
{
    g_return_val_if_fail(cnst < mm->n_cnst && k < mm->ent[cnst].n, NONE);
    return mm->ent[cnst].e[k].var;
}

double
ms_maxmin_rate(const MsMaxmin *mm, guint32 var)
{
    g_return_val_if_fail(var < mm->n_var && mm->va[var].alive, 0);
    if (mm->va[var].n_elem == 0) {
        return mm->new_rate[var]; /* 0 until solved, then INFINITY */
    }
    return old_rate(mm, var);
}

guint32
ms_maxmin_var_bottleneck(const MsMaxmin *mm, guint32 var)
{
    g_return_val_if_fail(var < mm->n_var && mm->va[var].alive, NONE);
    return mm->va[var].bneck;
}

double
ms_maxmin_level(const MsMaxmin *mm, guint32 cnst)
{
    g_return_val_if_fail(cnst < mm->n_cnst, INFINITY);
    return mm->cn[cnst].level;
}

guint
ms_maxmin_var_n_constraints(const MsMaxmin *mm, guint32 var)
{
    g_return_val_if_fail(var < mm->n_var && mm->va[var].alive, 0);
    return mm->va[var].n_elem;
}

guint32
ms_maxmin_var_constraint(const MsMaxmin *mm, guint32 var, guint k)
{
    g_return_val_if_fail(var < mm->n_var && mm->va[var].alive && k < mm->va[var].n_elem, NONE);
    return mm->elems[mm->va[var].elem_base + k].cnst;
}

double
ms_maxmin_load(const MsMaxmin *mm, guint32 cnst)
{
    g_return_val_if_fail(cnst < mm->n_cnst, 0);
    return mm->cn[cnst].usage;
}

double
ms_maxmin_usage(const MsMaxmin *mm, guint32 cnst)
{
    g_return_val_if_fail(cnst < mm->n_cnst, 0);
    double sum = 0;
    const Entry *e = mm->ent[cnst].e;
    for (guint32 i = 0; i < mm->ent[cnst].n; i++) {
        sum += mm->va[e[i].var].weight * level_of(mm, e[i].bneck);
    }
    return sum;
}

void
maxmin_next_pass(MsMaxmin *mm)
{
    if (++mm->pass == 0) {
        memset(mm->k_mark, 0, mm->n_cnst * sizeof(guint32));
        memset(mm->var_mark, 0, mm->n_var * sizeof(guint32));
        mm->pass = 1;
    }
}

static void
next_round(MsMaxmin *mm)
{
    if (++mm->round == 0) {
        memset(mm->dirty_mark, 0, mm->n_cnst * sizeof(guint32));
        memset(mm->r_mark, 0, mm->n_cnst * sizeof(guint32));
        memset(mm->u_mark, 0, mm->n_cnst * sizeof(guint32));
        for (guint c = 0; c < mm->n_cnst; c++) {
            mm->cn[c].t_mark = 0;
        }
        mm->round = 1;
    }
}

static int
cmp_u32(gconstpointer a, gconstpointer b)
{
    guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
    return x < y ? -1 : x > y;
}

static void
sort_from(GArray *a, guint from)
{
    if (a && a->len - from > 1) {
        qsort((guint32 *)a->data + from, a->len - from, sizeof(guint32), cmp_u32);
    }
}

/* Reports the constraints the repair changed (left in cnsts) and those removals unloaded, once
 * each. */
static void
report_touched(MsMaxmin *mm, gboolean solved, GArray *touched)
{
    guint32 *out = out_reserve(touched, (solved ? mm->cnsts.len : 0) + mm->unloaded.len);
    for (guint i = 0; solved && i < mm->cnsts.len; i++) {
        guint32 c = AT(mm->cnsts, i);
        if (mm->u_mark[c] != mm->round) {
            mm->u_mark[c] = mm->round;
            *out++ = c;
        }
    }
    if (mm->unloaded.len) { /* an empty list may have no storage */
        memcpy(out, mm->unloaded.v, mm->unloaded.len * sizeof(guint32));
    }
    out_commit(touched, out + mm->unloaded.len);
}

void
ms_maxmin_solve_groups(MsMaxmin *mm, GArray *levels, GArray *moved, GArray *touched)
{
    gboolean solve = mm->dirty.len || mm->new_vars.len;
    if (!solve && mm->unloaded.len == 0) {
        return;
    }
    for (guint i = 0; i < mm->new_vars.len; i++) {
        guint32 v = AT(mm->new_vars, i);
        if (mm->va[v].alive && mm->va[v].n_elem == 0 && mm->new_rate[v] == 0) {
            mm->new_rate[v] = INFINITY;
            if (moved) {
                g_array_append_val(moved, v); /* rare: a flow over unlimited links only */
            }
        }
    }
    if (solve) {
        mm->stats.solves++;
        if (!maxmin_propagate(mm, levels, moved)) {
            maxmin_fill_repair(mm, levels, moved);
        }
    }
    if (touched) {
        report_touched(mm, solve, touched);
    }
    mm->dirty.len = 0;
    mm->unloaded.len = 0;
    mm->new_vars.len = 0;
    mm->cap_changed = FALSE;
    next_round(mm);
}

void
ms_maxmin_solve(MsMaxmin *mm, GArray *changed)
{
    if (changed == NULL) {
        ms_maxmin_solve_groups(mm, NULL, NULL, NULL);
        return;
    }
    g_autoptr(GArray) levels = g_array_new(FALSE, FALSE, sizeof(guint32));
    g_autoptr(GArray) moved = g_array_new(FALSE, FALSE, sizeof(guint32));
    ms_maxmin_solve_groups(mm, levels, moved, NULL);
    sort_from(levels, 0);
    sort_from(moved, 0);
    /* Expand to variables; a fresh pass mark dedupes them. */
    maxmin_next_pass(mm);
    guint first = changed->len;
    for (guint i = 0; i < moved->len; i++) {
        guint32 v = g_array_index(moved, guint32, i);
        mm->var_mark[v] = mm->pass;
        g_array_append_val(changed, v);
    }
    for (guint i = 0; i < levels->len; i++) {
        guint32 c = g_array_index(levels, guint32, i);
        for (guint32 j = 0; j < mm->cn[c].n_mem; j++) {
            guint32 v = mm->grp[c].m[j].var;
            if (mm->var_mark[v] != mm->pass) {
                mm->var_mark[v] = mm->pass;
                g_array_append_val(changed, v);
            }
        }
    }
    sort_from(changed, first);
}

void
ms_maxmin_set_budget(MsMaxmin *mm, guint reprocess)
{
    mm->budget = reprocess;
}

void
ms_maxmin_stats(const MsMaxmin *mm, MsMaxminStats *out)
{
    *out = mm->stats;
}

gsize
ms_maxmin_memory(const MsMaxmin *mm)
{
    gsize per_cnst = sizeof(Cnst) + sizeof(Group) + sizeof(Entries) + 5 * sizeof(double) +
                     8 * sizeof(guint32) + 1;
    gsize per_var = sizeof(Var) + sizeof(double) + 2 * sizeof(guint32);
    gsize entries = 0, members = 0;
    for (guint c = 0; c < mm->n_cnst; c++) {
        entries += mm->ent[c].cap;
        members += mm->grp[c].cap;
    }
    gsize lists = mm->velems.len + mm->vars.len + mm->cnsts.len + mm->free_vars.len;
    for (guint i = 0; i <= MAX_ELEMS_PER_VAR; i++) {
        lists += mm->free_blocks[i].len;
    }
    return sizeof *mm + mm->cap_cnst * per_cnst + mm->cap_var * per_var +
           mm->cap_elems * sizeof(Elem) + mm->saved_cap * sizeof(Saved) + entries * sizeof(Entry) +
           members * sizeof(Member) + lists * sizeof(guint32);
}
