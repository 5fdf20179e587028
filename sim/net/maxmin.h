/* maxmin: weighted max-min fair sharing of constraint capacities among variables (progressive
 * filling), as SimGrid's LMM does for its CM02 network model. Constraints are links (capacity in
 * any unit, bytes/s in moesim), variables are flows with a weight (a variable of weight 2 gets
 * twice the share of a weight-1 variable where both are bottlenecked). The solver knows nothing of
 * topologies or time: it re-solves only the connected components that additions, removals or
 * capacity changes touched since the last solve, and reports which variables' rates changed. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _MsMaxmin MsMaxmin;

MsMaxmin *ms_maxmin_new(void);
void ms_maxmin_free(MsMaxmin *mm);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsMaxmin, ms_maxmin_free)

/* Adds a constraint of the given capacity (> 0, finite) and returns its id (0, 1, 2 ...). */
guint32 ms_maxmin_add_constraint(MsMaxmin *mm, double capacity);
guint ms_maxmin_n_constraints(const MsMaxmin *mm);
double ms_maxmin_capacity(const MsMaxmin *mm, guint32 cnst);
/* Changes a capacity (> 0, finite); the constraint's component is re-solved at the next solve. */
void ms_maxmin_set_capacity(MsMaxmin *mm, guint32 cnst, double capacity);

/* Adds a variable of weight (> 0, finite) that uses the n given constraints (a constraint listed
 * twice counts twice). n may be 0: such a variable is unconstrained and its rate is INFINITY.
 * Returns its id; ids of removed variables are reused. Its rate is 0 until the next solve. */
guint32 ms_maxmin_add_variable(MsMaxmin *mm, double weight, const guint32 *cnsts, guint n);
void ms_maxmin_remove_variable(MsMaxmin *mm, guint32 var);
guint ms_maxmin_n_variables(const MsMaxmin *mm);

/* Solves every component touched since the last solve. When changed is not NULL, appends
 * (guint32) the ids of live variables whose rate changed by more than one part in 10^12, in
 * increasing id order. */
void ms_maxmin_solve(MsMaxmin *mm, GArray *changed);

double ms_maxmin_rate(const MsMaxmin *mm, guint32 var);
/* The constraints a variable uses, in the order given at creation. */
guint ms_maxmin_var_n_constraints(const MsMaxmin *mm, guint32 var);
guint32 ms_maxmin_var_constraint(const MsMaxmin *mm, guint32 var, guint k);
/* Sum of the current rates of the variables on a constraint (for invariant checks and link
 * utilisation reports). O(variables on the constraint). */
double ms_maxmin_usage(const MsMaxmin *mm, guint32 cnst);

typedef struct {
    guint64 solves;           /* calls that had something to solve */
    guint64 component_vars;   /* variables visited, summed over solves */
    guint64 component_elems;  /* variable-constraint pairs visited, summed over solves */
} MsMaxminStats;
void ms_maxmin_stats(const MsMaxmin *mm, MsMaxminStats *out);

/* Bytes of memory held, for the benchmark's per-flow figure. */
gsize ms_maxmin_memory(const MsMaxmin *mm);

G_END_DECLS
