/* maxmin_private: the solver's state, shared by its storage and API (maxmin.c), the repair by
 * progressive filling over a region (maxmin_fill.c) and the fast path that propagates level
 * changes through unchanged groups (maxmin_prop.c). Not part of the library's interface. */
#pragma once

#include <math.h>
#include <string.h>

#include "id_list.h"
#include "maxmin.h"

#define NONE G_MAXUINT32
#define MAX_ELEMS_PER_VAR 255
/* Levels within one part in 10^12 of the previous solve count as unchanged: callers then keep
 * their completion times instead of re-keying heaps for floating-point noise. */
#define RATE_REL_EPS 1e-12
/* Relative tolerance of the boundary checks. Capacities and levels agree with an exact solve to
 * this order; it sits far above double rounding (usages are sums of ~10^3 terms) and far below
 * any effect on completion times. */
#define TOL 1e-9
/* An outside group loses exact ties (rounding noise) to region constraints, so that a variable
 * whose rate did not change stays in the region rather than faking a violation. */
#define TIE_BIAS 1e-10
/* Default propagation budget (see ms_maxmin_set_budget). */
#define DEFAULT_BUDGET 24
/* Usages are maintained by adding deltas; after this many solves or removals that changed one,
 * it is added up afresh. */
#define USAGE_REFRESH 8192

/* One constraint of a variable's route, and where the constraint lists the variable. */
typedef struct {
    guint32 cnst, pos;
} Elem;

/* A variable as a constraint lists it; bneck mirrors the variable's so that scans for levels
 * read one array. */
typedef struct {
    guint32 var, bneck;
    guint32 elem; /* the element of the variable's route that points here */
} Entry;

typedef struct {
    Entry *e;
    guint32 n, cap;
} Entries;

/* A variable on a constraint, as the propagation's water filling sees it. */
typedef struct {
    double level, weight;
    guint32 var;
} Seen;

/* A constraint's values before a propagation first changed them, for reports and rollback. */
typedef struct {
    double usage, level, wgroup, fmax;
} Saved;

/* A constraint waiting in the propagation queue. */
typedef struct {
    double key;
    guint32 c;
} QEntry;

/* What a constraint of the current pass is: inside R, outside with a group of its own (which must
 * keep its level), or outside without one (unsaturated so far). */
enum { K_FREE, K_REGION, K_OUTSIDE };

/* The fields of a constraint that the propagation's inner loops touch, together (56 bytes). */
typedef struct {
    double capacity;
    double usage;      /* sum of the rates of its elements, maintained */
    double level;      /* level of its group, INFINITY when it has none */
    double fmax;       /* upper bound on the levels of the variables on it outside its group */
    double wgroup;     /* weight of its group on it (a variable crossing it twice counts twice) */
    guint32 n_mem;     /* variables in its group (0: no group) */
    guint32 n_updates; /* solves and removals that changed its usage since it was added up afresh */
    guint32 t_mark;    /* round of its first change in a propagation */
    guint32 heap_pos;  /* position in the pass heap or queue, NONE when out */
} Cnst;

/* A variable as its group lists it: what a member loop needs, read sequentially. Routes of up
 * to INLINE_ROUTE constraints are copied here; longer ones are read from the elements. */
#define INLINE_ROUTE 4
typedef struct {
    double weight;
    guint32 var;
    guint32 n;
    guint32 c[INLINE_ROUTE];
} Member;

typedef struct {
    Member *m;
    guint32 cap;
} Group;

/* A variable. */
typedef struct {
    double weight;
    guint32 elem_base; /* its route: elems[elem_base .. elem_base + n_elem) */
    guint32 bneck;     /* its group's constraint, NONE when unconstrained or not solved */
    guint32 gpos;      /* its position in the group */
    guint8 n_elem, alive;
} Var;

struct _MsMaxmin {
    /* constraints */
    guint n_cnst, cap_cnst;
    Cnst *cn;
    Group *grp;
    Entries *ent; /* the variables on it, one entry per crossing */
    guint32 *dirty_mark, *r_mark, *k_mark, *u_mark;
    /* pass scratch */
    double *rem, *wsum, *sat, *prev, *skey;
    guint32 *unfixed, *heap, *voff, *vend; /* unfixed: times processed, in a propagation */
    guint8 *kind;
    /* propagation scratch: values on first touch in a solve, queue keys */
    Saved *saved; /* saved[i]: tlist.v[i] as it was, written and read in tlist order */
    guint saved_cap;
    QEntry *queue;
    guint qlen, qcap;

    /* variables */
    guint n_var, cap_var, n_live;
    Var *va;
    double *new_rate;
    guint32 *new_bneck, *var_mark;
    MsIdList free_vars;

    /* elements */
    Elem *elems;
    guint n_elems, cap_elems;
    MsIdList free_blocks[MAX_ELEMS_PER_VAR + 1];

    guint32 round;         /* one per solve: dirty and R marks */
    guint32 pass;          /* one per repair pass: V and K marks */
    MsIdList dirty;        /* constraints whose groups must be re-solved */
    MsIdList unloaded;     /* constraints that lost usage to removals since the last solve */
    MsIdList new_vars;     /* variables added since the last solve */
    MsIdList region;       /* R */
    MsIdList vars;         /* V: the variables of R's groups and the new ones */
    MsIdList cnsts;        /* K: the constraints V uses */
    MsIdList velems;       /* V's variables listed per constraint of K (voff..vend) */
    MsIdList tlist;        /* propagation: constraints touched */
    MsIdList pivots;       /* propagation: (variable, target) moves found in a member loop */
    MsIdList pivoted;      /* propagation: variables moved, their first group in new_bneck */
    Seen *seen, *seen_tmp; /* propagation: (level, weight, variable) of a constraint's flows */
    guint seen_cap;
    guint heap_len;
    gboolean grown;
    gboolean cap_changed; /* a capacity changed since the last solve */
    guint budget;         /* times the propagation may process a constraint in one solve */

    MsMaxminStats stats;
};

#define AT(a, i) ((a).v[(i)])

/* Appends to a scratch list: a compare and a store. */
static inline void
push(MsIdList *a, guint32 x)
{
    ms_id_list_push(a, x);
}

/* Reserves n slots at the end of a caller's GArray and returns the first; the caller writes k <= n
 * of them and calls out_commit: one library call per report instead of one per id. At least one
 * slot is reserved, so that the array has storage to point into even when n is 0. */
static inline guint32 *
out_reserve(GArray *a, guint n)
{
    guint base = a->len;
    g_array_set_size(a, base + MAX(n, 1));
    return (guint32 *)a->data + base;
}

static inline void
out_commit(GArray *a, const guint32 *end)
{
    g_array_set_size(a, (guint)(end - (const guint32 *)a->data));
}

/* Level of a constraint's group as seen by a variable bottlenecked there (0 when unsolved). */
static inline double
level_of(const MsMaxmin *mm, guint32 b)
{
    return b == NONE ? 0 : mm->cn[b].level;
}

/* Rate of a variable in the committed state (0 before its first solve). */
static inline double
old_rate(const MsMaxmin *mm, guint32 v)
{
    return mm->va[v].bneck == NONE ? 0 : mm->va[v].weight * mm->cn[mm->va[v].bneck].level;
}

/* Constraint k of a member's route. */
static inline guint32
member_cnst(const MsMaxmin *mm, const Member *m, guint k)
{
    return k < INLINE_ROUTE ? m->c[k] : mm->elems[mm->va[m->var].elem_base + k].cnst;
}

/* Group membership; all keep the group weights, and moving the last member out of a group
 * drops its level. link: v has no group yet. move: v leaves its group for b's, its route's
 * entries written once (not cleared, then written). unlink: v leaves its group for none. */
void maxmin_group_link(MsMaxmin *mm, guint32 v, guint32 b);
void maxmin_group_move(MsMaxmin *mm, guint32 v, guint32 b);
void maxmin_group_unlink(MsMaxmin *mm, guint32 v);
/* Weight v puts on constraint b: its weight times the times its route crosses b. */
double maxmin_weight_on(const MsMaxmin *mm, guint32 v, guint32 b);
void maxmin_next_pass(MsMaxmin *mm);

/* Repairs the allocation by progressive filling over a region that grows until the boundary
 * checks pass; always succeeds. */
void maxmin_fill_repair(MsMaxmin *mm, GArray *levels, GArray *moved);
/* Tries to repair removals and additions by propagating level changes; FALSE (state untouched)
 * when it gives up, and the fill repair must run. */
gboolean maxmin_propagate(MsMaxmin *mm, GArray *levels, GArray *moved);
