/* maxmin: weighted max-min fairness kept up to date by local repair, not by re-solving.
 *
 * The allocation is held as groups: every constrained variable is bottlenecked at one saturated
 * constraint, and the variables bottlenecked at a constraint share its level (rate per unit
 * weight), the largest level on that constraint. A state that is feasible and has this property
 * everywhere is the max-min allocation, which is unique. After changes, a region R of groups is
 * re-solved by progressive filling over the capacity the other variables leave; the boundary is
 * then checked (see check_pass) and R grows by every group that fails, until none fails. Groups
 * outside R keep their rates and their optimality, so the result is the allocation a solve from
 * scratch gives, within TOL. Layout is struct-of-arrays and index-based to keep a million
 * variables at a few tens of bytes each. */
#include "maxmin_private.h"

MsMaxmin *
ms_maxmin_new(void)
{
    MsMaxmin *mm = g_new0(MsMaxmin, 1);
    mm->free_vars = g_array_new(FALSE, FALSE, sizeof(guint32));
    mm->dirty = g_array_new(FALSE, FALSE, sizeof(guint32));
    mm->unloaded = g_array_new(FALSE, FALSE, sizeof(guint32));
    mm->new_vars = g_array_new(FALSE, FALSE, sizeof(guint32));
    mm->region = g_array_new(FALSE, FALSE, sizeof(guint32));
    mm->vars = g_array_new(FALSE, FALSE, sizeof(guint32));
    mm->cnsts = g_array_new(FALSE, FALSE, sizeof(guint32));
    mm->velems = g_array_new(FALSE, FALSE, sizeof(guint32));
    mm->tlist = g_array_new(FALSE, FALSE, sizeof(guint32));
    mm->pivots = g_array_new(FALSE, FALSE, sizeof(guint32));
    mm->pivoted = g_array_new(FALSE, FALSE, sizeof(guint32));
    mm->levels_seen = g_array_new(FALSE, FALSE, sizeof(Seen));
    mm->round = 1;
    mm->pass = 1;
    return mm;
}

void
ms_maxmin_free(MsMaxmin *mm)
{
    if (mm == NULL) {
        return;
    }
    void *arrays[] = {mm->capacity, mm->usage,   mm->level,     mm->fmax,      mm->head,
                      mm->ghead,    mm->n_updates, mm->dirty_mark, mm->r_mark,  mm->k_mark,
                      mm->u_mark,   mm->wgroup,  mm->s_usage,   mm->s_level,   mm->s_wgroup,
                      mm->s_fmax,   mm->qkey,    mm->t_mark,
                      mm->rem,      mm->wsum,    mm->sat,       mm->prev,
                      mm->unfixed,  mm->heap_pos, mm->heap,     mm->voff,      mm->vend,
                      mm->kind,     mm->weight,  mm->new_rate,  mm->elem_base, mm->bneck,
                      mm->new_bneck, mm->gnext,  mm->gprev,     mm->var_mark,  mm->n_elem,
                      mm->alive,    mm->elems};
    for (guint i = 0; i < G_N_ELEMENTS(arrays); i++) {
        g_free(arrays[i]);
    }
    for (guint i = 0; i <= MAX_ELEMS_PER_VAR; i++) {
        if (mm->free_blocks[i]) {
            g_array_unref(mm->free_blocks[i]);
        }
    }
    GArray *lists[] = {mm->free_vars, mm->dirty,  mm->unloaded, mm->new_vars, mm->region,
                       mm->vars,      mm->cnsts,  mm->velems, mm->tlist, mm->pivots,
                       mm->pivoted,   mm->levels_seen};
    for (guint i = 0; i < G_N_ELEMENTS(lists); i++) {
        g_array_unref(lists[i]);
    }
    g_free(mm);
}

static void
mark_dirty(MsMaxmin *mm, guint32 c)
{
    if (mm->dirty_mark[c] != mm->round) {
        mm->dirty_mark[c] = mm->round;
        push(mm->dirty, c);
    }
}

static void
grow_constraints(MsMaxmin *mm)
{
    guint n = mm->cap_cnst = MAX(16, mm->cap_cnst * 2);
    mm->capacity = g_renew(double, mm->capacity, n);
    mm->usage = g_renew(double, mm->usage, n);
    mm->level = g_renew(double, mm->level, n);
    mm->fmax = g_renew(double, mm->fmax, n);
    mm->wgroup = g_renew(double, mm->wgroup, n);
    mm->s_usage = g_renew(double, mm->s_usage, n);
    mm->s_level = g_renew(double, mm->s_level, n);
    mm->s_wgroup = g_renew(double, mm->s_wgroup, n);
    mm->s_fmax = g_renew(double, mm->s_fmax, n);
    mm->qkey = g_renew(double, mm->qkey, n);
    mm->t_mark = g_renew(guint32, mm->t_mark, n);
    mm->head = g_renew(guint32, mm->head, n);
    mm->ghead = g_renew(guint32, mm->ghead, n);
    mm->n_updates = g_renew(guint32, mm->n_updates, n);
    mm->dirty_mark = g_renew(guint32, mm->dirty_mark, n);
    mm->r_mark = g_renew(guint32, mm->r_mark, n);
    mm->k_mark = g_renew(guint32, mm->k_mark, n);
    mm->u_mark = g_renew(guint32, mm->u_mark, n);
    mm->rem = g_renew(double, mm->rem, n);
    mm->wsum = g_renew(double, mm->wsum, n);
    mm->sat = g_renew(double, mm->sat, n);
    mm->prev = g_renew(double, mm->prev, n);
    mm->unfixed = g_renew(guint32, mm->unfixed, n);
    mm->heap_pos = g_renew(guint32, mm->heap_pos, n);
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
    mm->capacity[c] = capacity;
    mm->usage[c] = 0;
    mm->level[c] = INFINITY;
    mm->fmax[c] = 0;
    mm->wgroup[c] = 0;
    mm->t_mark[c] = 0;
    mm->head[c] = NONE;
    mm->ghead[c] = NONE;
    mm->n_updates[c] = 0;
    mm->dirty_mark[c] = 0;
    mm->r_mark[c] = 0;
    mm->k_mark[c] = 0;
    mm->u_mark[c] = 0;
    mm->heap_pos[c] = NONE;
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
    return mm->capacity[cnst];
}

void
ms_maxmin_set_capacity(MsMaxmin *mm, guint32 cnst, double capacity)
{
    g_return_if_fail(cnst < mm->n_cnst && capacity > 0 && isfinite(capacity));
    mm->capacity[cnst] = capacity;
    mm->cap_changed = TRUE;
    if (isfinite(mm->level[cnst])) {
        mark_dirty(mm, cnst);
        return;
    }
    /* Unsaturated: only a cut below the current usage changes anything, and then every group
     * with a variable here must be re-solved. */
    if (capacity >= mm->usage[cnst] * (1 + TOL)) {
        return;
    }
    for (guint32 e = mm->head[cnst]; e != NONE; e = mm->elems[e].next) {
        guint32 b = mm->bneck[mm->elems[e].var];
        if (b != NONE) {
            mark_dirty(mm, b);
        }
    }
}

static guint32
alloc_block(MsMaxmin *mm, guint n)
{
    GArray *fl = mm->free_blocks[n];
    if (fl && fl->len) {
        guint32 base = AT(fl, fl->len - 1);
        g_array_set_size(fl, fl->len - 1);
        return base;
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
    if (mm->free_blocks[n] == NULL) {
        mm->free_blocks[n] = g_array_new(FALSE, FALSE, sizeof(guint32));
    }
    push(mm->free_blocks[n], base);
}

static guint32
alloc_var(MsMaxmin *mm)
{
    if (mm->free_vars->len) {
        guint32 v = AT(mm->free_vars, mm->free_vars->len - 1);
        g_array_set_size(mm->free_vars, mm->free_vars->len - 1);
        return v;
    }
    if (mm->n_var == mm->cap_var) {
        guint n = mm->cap_var = MAX(64, mm->cap_var * 2);
        mm->weight = g_renew(double, mm->weight, n);
        mm->new_rate = g_renew(double, mm->new_rate, n);
        mm->elem_base = g_renew(guint32, mm->elem_base, n);
        mm->bneck = g_renew(guint32, mm->bneck, n);
        mm->new_bneck = g_renew(guint32, mm->new_bneck, n);
        mm->gnext = g_renew(guint32, mm->gnext, n);
        mm->gprev = g_renew(guint32, mm->gprev, n);
        mm->var_mark = g_renew(guint32, mm->var_mark, n);
        mm->n_elem = g_renew(guint8, mm->n_elem, n);
        mm->alive = g_renew(guint8, mm->alive, n);
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
    mm->weight[v] = weight;
    mm->n_elem[v] = (guint8)n;
    mm->alive[v] = 1;
    mm->var_mark[v] = 0;
    mm->bneck[v] = NONE;
    mm->elem_base[v] = NONE;
    mm->new_rate[v] = 0;
    mm->n_live++;
    push(mm->new_vars, v);
    if (n == 0) {
        return v;
    }
    guint32 base = alloc_block(mm, n);
    mm->elem_base[v] = base;
    for (guint i = 0; i < n; i++) {
        guint32 c = cnsts[i];
        Elem *e = &mm->elems[base + i];
        e->cnst = c;
        e->var = v;
        e->prev = NONE;
        e->next = mm->head[c];
        if (e->next != NONE) {
            mm->elems[e->next].prev = base + i;
        }
        mm->head[c] = base + i;
        /* A group on the route must make room: its constraint is saturated. */
        if (isfinite(mm->level[c])) {
            mark_dirty(mm, c);
        }
    }
    return v;
}

/* Weight v puts on constraint b: its weight times the times its route crosses b. */
static double
weight_on(const MsMaxmin *mm, guint32 v, guint32 b)
{
    const Elem *e = &mm->elems[mm->elem_base[v]];
    guint k = 0;
    for (guint i = 0; i < mm->n_elem[v]; i++) {
        k += e[i].cnst == b;
    }
    return mm->weight[v] * k;
}

void
maxmin_group_unlink(MsMaxmin *mm, guint32 v)
{
    guint32 b = mm->bneck[v];
    if (mm->gprev[v] != NONE) {
        mm->gnext[mm->gprev[v]] = mm->gnext[v];
    } else {
        mm->ghead[b] = mm->gnext[v];
    }
    if (mm->gnext[v] != NONE) {
        mm->gprev[mm->gnext[v]] = mm->gprev[v];
    }
    mm->wgroup[b] -= weight_on(mm, v, b);
    if (mm->ghead[b] == NONE) {
        mm->level[b] = INFINITY;
        mm->wgroup[b] = 0;
    }
    mm->bneck[v] = NONE;
}

void
maxmin_group_link(MsMaxmin *mm, guint32 v, guint32 b)
{
    mm->bneck[v] = b;
    mm->gprev[v] = NONE;
    mm->gnext[v] = mm->ghead[b];
    if (mm->ghead[b] != NONE) {
        mm->gprev[mm->ghead[b]] = v;
    }
    mm->ghead[b] = v;
    mm->wgroup[b] += weight_on(mm, v, b);
}

void
ms_maxmin_remove_variable(MsMaxmin *mm, guint32 v)
{
    g_return_if_fail(v < mm->n_var && mm->alive[v]);
    double r = old_rate(mm, v);
    if (mm->bneck[v] != NONE) {
        maxmin_group_unlink(mm, v);
    }
    guint n = mm->n_elem[v];
    guint32 base = mm->elem_base[v];
    for (guint i = 0; i < n; i++) {
        Elem *e = &mm->elems[base + i];
        if (e->prev != NONE) {
            mm->elems[e->prev].next = e->next;
        } else {
            mm->head[e->cnst] = e->next;
        }
        if (e->next != NONE) {
            mm->elems[e->next].prev = e->prev;
        }
        add_usage(mm, e->cnst, -r);
        if (mm->u_mark[e->cnst] != mm->round) {
            mm->u_mark[e->cnst] = mm->round;
            push(mm->unloaded, e->cnst);
        }
        if (mm->head[e->cnst] == NONE) {
            mm->usage[e->cnst] = 0;
            mm->fmax[e->cnst] = 0;
        }
        /* A group on the route lost usage: its constraint is no longer saturated. */
        if (isfinite(mm->level[e->cnst])) {
            mark_dirty(mm, e->cnst);
        }
    }
    if (n) {
        free_block(mm, base, n);
    }
    mm->alive[v] = 0;
    mm->bneck[v] = NONE;
    mm->n_live--;
    push(mm->free_vars, v);
}

guint
ms_maxmin_n_variables(const MsMaxmin *mm)
{
    return mm->n_live;
}

double
ms_maxmin_rate(const MsMaxmin *mm, guint32 var)
{
    g_return_val_if_fail(var < mm->n_var && mm->alive[var], 0);
    if (mm->n_elem[var] == 0) {
        return mm->new_rate[var]; /* 0 until solved, then INFINITY */
    }
    return old_rate(mm, var);
}

guint32
ms_maxmin_var_bottleneck(const MsMaxmin *mm, guint32 var)
{
    g_return_val_if_fail(var < mm->n_var && mm->alive[var], NONE);
    return mm->bneck[var];
}

double
ms_maxmin_level(const MsMaxmin *mm, guint32 cnst)
{
    g_return_val_if_fail(cnst < mm->n_cnst, INFINITY);
    return mm->level[cnst];
}

guint
ms_maxmin_var_n_constraints(const MsMaxmin *mm, guint32 var)
{
    g_return_val_if_fail(var < mm->n_var && mm->alive[var], 0);
    return mm->n_elem[var];
}

guint32
ms_maxmin_var_constraint(const MsMaxmin *mm, guint32 var, guint k)
{
    g_return_val_if_fail(var < mm->n_var && mm->alive[var] && k < mm->n_elem[var], NONE);
    return mm->elems[mm->elem_base[var] + k].cnst;
}

double
ms_maxmin_load(const MsMaxmin *mm, guint32 cnst)
{
    g_return_val_if_fail(cnst < mm->n_cnst, 0);
    return mm->usage[cnst];
}

double
ms_maxmin_usage(const MsMaxmin *mm, guint32 cnst)
{
    g_return_val_if_fail(cnst < mm->n_cnst, 0);
    double sum = 0;
    for (guint32 e = mm->head[cnst]; e != NONE; e = mm->elems[e].next) {
        sum += old_rate(mm, mm->elems[e].var);
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
        memset(mm->t_mark, 0, mm->n_cnst * sizeof(guint32));
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
    for (guint i = 0; solved && i < mm->cnsts->len; i++) {
        guint32 c = AT(mm->cnsts, i);
        if (mm->u_mark[c] != mm->round) {
            mm->u_mark[c] = mm->round;
            push(touched, c);
        }
    }
    g_array_append_vals(touched, mm->unloaded->data, mm->unloaded->len);
}

void
ms_maxmin_solve_groups(MsMaxmin *mm, GArray *levels, GArray *moved, GArray *touched)
{
    guint first_level = levels ? levels->len : 0, first_moved = moved ? moved->len : 0;
    guint first_touched = touched ? touched->len : 0;
    gboolean solve = mm->dirty->len || mm->new_vars->len;
    if (!solve && mm->unloaded->len == 0) {
        return;
    }
    for (guint i = 0; i < mm->new_vars->len; i++) {
        guint32 v = AT(mm->new_vars, i);
        if (mm->alive[v] && mm->n_elem[v] == 0 && mm->new_rate[v] == 0) {
            mm->new_rate[v] = INFINITY;
            if (moved) {
                push(moved, v);
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
    g_array_set_size(mm->dirty, 0);
    g_array_set_size(mm->unloaded, 0);
    g_array_set_size(mm->new_vars, 0);
    mm->cap_changed = FALSE;
    next_round(mm);
    sort_from(levels, first_level);
    sort_from(moved, first_moved);
    sort_from(touched, first_touched);
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
    /* Expand to variables; a fresh pass mark dedupes them. */
    maxmin_next_pass(mm);
    guint first = changed->len;
    for (guint i = 0; i < moved->len; i++) {
        guint32 v = AT(moved, i);
        mm->var_mark[v] = mm->pass;
        push(changed, v);
    }
    for (guint i = 0; i < levels->len; i++) {
        for (guint32 v = mm->ghead[AT(levels, i)]; v != NONE; v = mm->gnext[v]) {
            if (mm->var_mark[v] != mm->pass) {
                mm->var_mark[v] = mm->pass;
                push(changed, v);
            }
        }
    }
    sort_from(changed, first);
}

void
ms_maxmin_stats(const MsMaxmin *mm, MsMaxminStats *out)
{
    *out = mm->stats;
}

gsize
ms_maxmin_memory(const MsMaxmin *mm)
{
    gsize per_cnst = 15 * sizeof(double) + 14 * sizeof(guint32) + 1;
    gsize per_var = 2 * sizeof(double) + 7 * sizeof(guint32) + 2;
    gsize lists = mm->velems->len + mm->vars->len + mm->cnsts->len + mm->free_vars->len;
    for (guint i = 0; i <= MAX_ELEMS_PER_VAR; i++) {
        lists += mm->free_blocks[i] ? mm->free_blocks[i]->len : 0;
    }
    return sizeof *mm + mm->cap_cnst * per_cnst + mm->cap_var * per_var +
           mm->cap_elems * sizeof(Elem) + lists * sizeof(guint32);
}
