/* maxmin: progressive filling over the components touched since the last solve.
 *
 * Layout is struct-of-arrays and index-based (no pointers) so that a million variables cost a few
 * tens of bytes each. Each variable owns a contiguous block of elements, one per constraint it
 * uses; each constraint threads its elements on a doubly linked list for O(1) removal. A solve
 * walks the touched components breadth-first, then fills: the constraint with the smallest fair
 * share saturates first, fixing its unfixed variables at weight x share; shares of the others can
 * only grow, so an indexed heap with sift-down suffices. */
#include "maxmin.h"

#include <math.h>
#include <string.h>

#define NONE G_MAXUINT32
#define MAX_ELEMS_PER_VAR 255
/* Rates within one part in 10^12 of the previous solve count as unchanged: callers then keep their
 * completion times and avoid re-keying heaps for floating-point noise. */
#define RATE_REL_EPS 1e-12

typedef struct {
    guint32 cnst, var, next, prev;
} Elem;

struct _MsMaxmin {
    /* constraints */
    guint n_cnst, cap_cnst;
    double *capacity;
    guint32 *head;      /* first element, NONE when empty */
    guint32 *cnst_mark; /* epoch of the last visit */
    guint32 *dirty_mark;
    double *rem;        /* solve scratch: capacity not yet given away */
    double *wsum;       /* solve scratch: weight of unfixed variables */
    guint32 *unfixed;   /* solve scratch: number of unfixed elements */
    guint32 *heap_pos;  /* solve scratch: position in heap or NONE */

    /* variables */
    guint n_var, cap_var, n_live;
    double *weight;
    double *rate;
    double *new_rate;
    guint32 *elem_base;
    guint8 *n_elem;
    guint8 *alive;
    guint32 *var_mark;
    GArray *free_vars;

    /* elements */
    Elem *elems;
    guint n_elems, cap_elems;
    GArray *free_blocks[MAX_ELEMS_PER_VAR + 1];

    guint32 epoch;
    GArray *dirty;        /* constraint ids touched since the last solve */
    GArray *new_free_vars; /* unconstrained variables added since the last solve */

    /* solve scratch */
    GArray *comp_cnsts, *comp_vars, *stack;
    guint32 *heap;
    guint heap_len;

    MsMaxminStats stats;
};

MsMaxmin *
ms_maxmin_new(void)
{
    MsMaxmin *mm = g_new0(MsMaxmin, 1);
    mm->free_vars = g_array_new(FALSE, FALSE, sizeof(guint32));
    mm->dirty = g_array_new(FALSE, FALSE, sizeof(guint32));
    mm->new_free_vars = g_array_new(FALSE, FALSE, sizeof(guint32));
    mm->comp_cnsts = g_array_new(FALSE, FALSE, sizeof(guint32));
    mm->comp_vars = g_array_new(FALSE, FALSE, sizeof(guint32));
    mm->stack = g_array_new(FALSE, FALSE, sizeof(guint32));
    mm->epoch = 1;
    return mm;
}

void
ms_maxmin_free(MsMaxmin *mm)
{
    if (mm == NULL) {
        return;
    }
    g_free(mm->capacity);
    g_free(mm->head);
    g_free(mm->cnst_mark);
    g_free(mm->dirty_mark);
    g_free(mm->rem);
    g_free(mm->wsum);
    g_free(mm->unfixed);
    g_free(mm->heap_pos);
    g_free(mm->heap);
    g_free(mm->weight);
    g_free(mm->rate);
    g_free(mm->new_rate);
    g_free(mm->elem_base);
    g_free(mm->n_elem);
    g_free(mm->alive);
    g_free(mm->var_mark);
    g_free(mm->elems);
    for (guint i = 0; i <= MAX_ELEMS_PER_VAR; i++) {
        if (mm->free_blocks[i]) {
            g_array_unref(mm->free_blocks[i]);
        }
    }
    g_array_unref(mm->free_vars);
    g_array_unref(mm->dirty);
    g_array_unref(mm->new_free_vars);
    g_array_unref(mm->comp_cnsts);
    g_array_unref(mm->comp_vars);
    g_array_unref(mm->stack);
    g_free(mm);
}

static void
mark_dirty(MsMaxmin *mm, guint32 c)
{
    if (mm->dirty_mark[c] != mm->epoch) {
        mm->dirty_mark[c] = mm->epoch;
        g_array_append_val(mm->dirty, c);
    }
}

guint32
ms_maxmin_add_constraint(MsMaxmin *mm, double capacity)
{
    g_return_val_if_fail(capacity > 0 && isfinite(capacity), NONE);
    if (mm->n_cnst == mm->cap_cnst) {
        mm->cap_cnst = MAX(16, mm->cap_cnst * 2);
        mm->capacity = g_renew(double, mm->capacity, mm->cap_cnst);
        mm->head = g_renew(guint32, mm->head, mm->cap_cnst);
        mm->cnst_mark = g_renew(guint32, mm->cnst_mark, mm->cap_cnst);
        mm->dirty_mark = g_renew(guint32, mm->dirty_mark, mm->cap_cnst);
        mm->rem = g_renew(double, mm->rem, mm->cap_cnst);
        mm->wsum = g_renew(double, mm->wsum, mm->cap_cnst);
        mm->unfixed = g_renew(guint32, mm->unfixed, mm->cap_cnst);
        mm->heap_pos = g_renew(guint32, mm->heap_pos, mm->cap_cnst);
        mm->heap = g_renew(guint32, mm->heap, mm->cap_cnst);
    }
    guint32 c = mm->n_cnst++;
    mm->capacity[c] = capacity;
    mm->head[c] = NONE;
    mm->cnst_mark[c] = 0;
    mm->dirty_mark[c] = 0;
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
    mark_dirty(mm, cnst);
}

static guint32
alloc_block(MsMaxmin *mm, guint n)
{
    GArray *fl = mm->free_blocks[n];
    if (fl && fl->len) {
        guint32 base = g_array_index(fl, guint32, fl->len - 1);
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
    g_array_append_val(mm->free_blocks[n], base);
}

static guint32
alloc_var(MsMaxmin *mm)
{
    if (mm->free_vars->len) {
        guint32 v = g_array_index(mm->free_vars, guint32, mm->free_vars->len - 1);
        g_array_set_size(mm->free_vars, mm->free_vars->len - 1);
        return v;
    }
    if (mm->n_var == mm->cap_var) {
        mm->cap_var = MAX(64, mm->cap_var * 2);
        mm->weight = g_renew(double, mm->weight, mm->cap_var);
        mm->rate = g_renew(double, mm->rate, mm->cap_var);
        mm->new_rate = g_renew(double, mm->new_rate, mm->cap_var);
        mm->elem_base = g_renew(guint32, mm->elem_base, mm->cap_var);
        mm->n_elem = g_renew(guint8, mm->n_elem, mm->cap_var);
        mm->alive = g_renew(guint8, mm->alive, mm->cap_var);
        mm->var_mark = g_renew(guint32, mm->var_mark, mm->cap_var);
    }
    return mm->n_var++;
}

guint32
ms_maxmin_add_variable(MsMaxmin *mm, double weight, const guint32 *cnsts, guint n)
{
    g_return_val_if_fail(weight > 0 && isfinite(weight), NONE);
    g_return_val_if_fail(n <= MAX_ELEMS_PER_VAR, NONE);
    guint32 v = alloc_var(mm);
    mm->weight[v] = weight;
    mm->rate[v] = 0;
    mm->n_elem[v] = (guint8)n;
    mm->alive[v] = 1;
    mm->var_mark[v] = 0;
    mm->n_live++;
    if (n == 0) {
        mm->elem_base[v] = NONE;
        g_array_append_val(mm->new_free_vars, v);
        return v;
    }
    guint32 base = alloc_block(mm, n);
    mm->elem_base[v] = base;
    for (guint i = 0; i < n; i++) {
        guint32 c = cnsts[i];
        g_return_val_if_fail(c < mm->n_cnst, NONE);
        Elem *e = &mm->elems[base + i];
        e->cnst = c;
        e->var = v;
        e->prev = NONE;
        e->next = mm->head[c];
        if (e->next != NONE) {
            mm->elems[e->next].prev = base + i;
        }
        mm->head[c] = base + i;
        mark_dirty(mm, c);
    }
    return v;
}

void
ms_maxmin_remove_variable(MsMaxmin *mm, guint32 v)
{
    g_return_if_fail(v < mm->n_var && mm->alive[v]);
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
        mark_dirty(mm, e->cnst);
    }
    if (n) {
        free_block(mm, base, n);
    }
    mm->alive[v] = 0;
    mm->rate[v] = 0;
    mm->n_live--;
    g_array_append_val(mm->free_vars, v);
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
    return mm->rate[var];
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
ms_maxmin_usage(const MsMaxmin *mm, guint32 cnst)
{
    g_return_val_if_fail(cnst < mm->n_cnst, 0);
    double sum = 0;
    for (guint32 e = mm->head[cnst]; e != NONE; e = mm->elems[e].next) {
        sum += mm->rate[mm->elems[e].var];
    }
    return sum;
}

/* --- indexed min-heap of constraints keyed by fair share rem/wsum (ties: lower id) --- */

static inline double
share(const MsMaxmin *mm, guint32 c)
{
    double r = mm->rem[c];
    return (r > 0 ? r : 0) / mm->wsum[c];
}

static inline gboolean
less(const MsMaxmin *mm, guint32 a, guint32 b)
{
    double sa = share(mm, a), sb = share(mm, b);
    return sa < sb || (sa == sb && a < b);
}

static void
heap_place(MsMaxmin *mm, guint i, guint32 c)
{
    mm->heap[i] = c;
    mm->heap_pos[c] = i;
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
    guint i = mm->heap_pos[c];
    mm->heap_pos[c] = NONE;
    guint32 last = mm->heap[--mm->heap_len];
    if (i < mm->heap_len) {
        heap_place(mm, i, last);
        sift_down(mm, i);
        sift_up(mm, mm->heap_pos[last]);
    }
}

/* Collects the components reachable from the dirty constraints into comp_cnsts / comp_vars. */
static void
collect_components(MsMaxmin *mm)
{
    guint32 ep = mm->epoch;
    g_array_set_size(mm->comp_cnsts, 0);
    g_array_set_size(mm->comp_vars, 0);
    g_array_set_size(mm->stack, 0);
    for (guint i = 0; i < mm->dirty->len; i++) {
        guint32 c = g_array_index(mm->dirty, guint32, i);
        if (mm->cnst_mark[c] != ep) {
            mm->cnst_mark[c] = ep;
            g_array_append_val(mm->stack, c);
        }
    }
    while (mm->stack->len) {
        guint32 c = g_array_index(mm->stack, guint32, mm->stack->len - 1);
        g_array_set_size(mm->stack, mm->stack->len - 1);
        g_array_append_val(mm->comp_cnsts, c);
        for (guint32 e = mm->head[c]; e != NONE; e = mm->elems[e].next) {
            guint32 v = mm->elems[e].var;
            if (mm->var_mark[v] == ep) {
                continue;
            }
            mm->var_mark[v] = ep;
            g_array_append_val(mm->comp_vars, v);
            const Elem *ve = &mm->elems[mm->elem_base[v]];
            for (guint k = 0; k < mm->n_elem[v]; k++) {
                guint32 c2 = ve[k].cnst;
                if (mm->cnst_mark[c2] != ep) {
                    mm->cnst_mark[c2] = ep;
                    g_array_append_val(mm->stack, c2);
                }
            }
        }
    }
}

/* Progressive filling over the collected component(s). A variable is "fixed" once new_rate >= 0;
 * unfixed variables carry new_rate = -1. */
static void
fill(MsMaxmin *mm)
{
    const guint32 *cs = (const guint32 *)mm->comp_cnsts->data;
    const guint32 *vs = (const guint32 *)mm->comp_vars->data;
    guint nc = mm->comp_cnsts->len, nv = mm->comp_vars->len;
    for (guint i = 0; i < nc; i++) {
        guint32 c = cs[i];
        mm->rem[c] = mm->capacity[c];
        mm->wsum[c] = 0;
        mm->unfixed[c] = 0;
    }
    for (guint i = 0; i < nv; i++) {
        guint32 v = vs[i];
        mm->new_rate[v] = -1;
        const Elem *ve = &mm->elems[mm->elem_base[v]];
        for (guint k = 0; k < mm->n_elem[v]; k++) {
            mm->wsum[ve[k].cnst] += mm->weight[v];
            mm->unfixed[ve[k].cnst]++;
        }
        mm->stats.component_elems += mm->n_elem[v];
    }
    mm->heap_len = 0;
    for (guint i = 0; i < nc; i++) {
        guint32 c = cs[i];
        if (mm->unfixed[c]) {
            heap_place(mm, mm->heap_len++, c);
        }
    }
    /* Floyd heap construction. */
    for (guint i = mm->heap_len / 2; i-- > 0;) {
        sift_down(mm, i);
    }
    while (mm->heap_len) {
        guint32 c = mm->heap[0];
        double x = share(mm, c);
        heap_remove(mm, c);
        for (guint32 e = mm->head[c]; e != NONE; e = mm->elems[e].next) {
            guint32 v = mm->elems[e].var;
            if (mm->new_rate[v] >= 0) {
                continue;
            }
            double w = mm->weight[v];
            double r = w * x;
            mm->new_rate[v] = r;
            const Elem *ve = &mm->elems[mm->elem_base[v]];
            for (guint k = 0; k < mm->n_elem[v]; k++) {
                guint32 c2 = ve[k].cnst;
                mm->rem[c2] -= r;
                mm->wsum[c2] -= w;
                if (--mm->unfixed[c2] == 0) {
                    if (mm->heap_pos[c2] != NONE) {
                        heap_remove(mm, c2);
                    }
                } else if (c2 != c && mm->heap_pos[c2] != NONE) {
                    /* The share of c2 can only have grown (x was the minimum share). */
                    sift_down(mm, mm->heap_pos[c2]);
                }
            }
        }
    }
}

static int
cmp_u32(gconstpointer a, gconstpointer b)
{
    guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
    return x < y ? -1 : x > y;
}

void
ms_maxmin_solve(MsMaxmin *mm, GArray *changed)
{
    guint first_changed = changed ? changed->len : 0;
    if (mm->dirty->len == 0 && mm->new_free_vars->len == 0) {
        return;
    }
    mm->stats.solves++;
    for (guint i = 0; i < mm->new_free_vars->len; i++) {
        guint32 v = g_array_index(mm->new_free_vars, guint32, i);
        if (mm->alive[v] && mm->n_elem[v] == 0 && mm->rate[v] != INFINITY) {
            mm->rate[v] = INFINITY;
            if (changed) {
                g_array_append_val(changed, v);
            }
        }
    }
    g_array_set_size(mm->new_free_vars, 0);
    if (mm->dirty->len) {
        collect_components(mm);
        g_array_set_size(mm->dirty, 0);
        mm->stats.component_vars += mm->comp_vars->len;
        fill(mm);
        const guint32 *vs = (const guint32 *)mm->comp_vars->data;
        for (guint i = 0; i < mm->comp_vars->len; i++) {
            guint32 v = vs[i];
            double old = mm->rate[v], nr = mm->new_rate[v];
            if (fabs(nr - old) > RATE_REL_EPS * fabs(nr)) {
                mm->rate[v] = nr;
                if (changed) {
                    g_array_append_val(changed, v);
                }
            }
        }
    }
    /* Epochs make visit marks free to reset; wrap-around is harmless once marks are cleared. */
    if (++mm->epoch == 0) {
        memset(mm->cnst_mark, 0, mm->n_cnst * sizeof(guint32));
        memset(mm->dirty_mark, 0, mm->n_cnst * sizeof(guint32));
        memset(mm->var_mark, 0, mm->n_var * sizeof(guint32));
        mm->epoch = 1;
    }
    if (changed && changed->len - first_changed > 1) {
        qsort((guint32 *)changed->data + first_changed, changed->len - first_changed,
              sizeof(guint32), cmp_u32);
    }
}

void
ms_maxmin_stats(const MsMaxmin *mm, MsMaxminStats *out)
{
    *out = mm->stats;
}

gsize
ms_maxmin_memory(const MsMaxmin *mm)
{
    gsize per_cnst = 2 * sizeof(double) * 2 + 6 * sizeof(guint32);
    gsize per_var = 3 * sizeof(double) + 2 * sizeof(guint32) + 2;
    gsize free_lists = 0;
    for (guint i = 0; i <= MAX_ELEMS_PER_VAR; i++) {
        free_lists += mm->free_blocks[i] ? mm->free_blocks[i]->len * sizeof(guint32) : 0;
    }
    return sizeof *mm + mm->cap_cnst * per_cnst + mm->cap_var * per_var +
           mm->cap_elems * sizeof(Elem) + free_lists;
}
