/* maxmin: weighted max-min fair sharing of constraint capacities among variables (SimGrid LMM's
 * model for CM02). Constraints are links (capacity in any unit, bytes/s in moesim), variables are
 * flows with a weight (weight 2: twice the share where bottlenecked together). Knows nothing of
 * topologies or time. Kept as groups: each variable's rate is its weight times the level of the
 * constraint it is bottlenecked at; changes are repaired locally and reported per group. */
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
/* Variables crossing a constraint (one that crosses it twice counts twice), O(1). */
guint ms_maxmin_n_crossings(const MsMaxmin *mm, guint32 cnst);
/* The variable of crossing k (0 <= k < ms_maxmin_n_crossings) of a constraint, O(1). The order is
 * the solver's and changes as variables come and go: read all crossings between two calls that
 * add or remove variables. */
guint32 ms_maxmin_crossing(const MsMaxmin *mm, guint32 cnst, guint k);

/* Brings the allocation up to date with the changes since the last solve: the groups those
 * touch are re-solved, and the region grows until the max-min conditions hold everywhere (within
 * one part in 10^9 of capacities and levels). Appends guint32 ids, each at most once, in an order
 * that depends only on the calls made (any list may be NULL): to levels each constraint whose
 * level changed by more than one part in 10^12 or which gained or lost its group; to moved each
 * variable whose bottleneck changed, including every variable added since the last solve (an
 * unconstrained one keeps G_MAXUINT32); to touched each constraint whose usage may have
 * changed. */
void ms_maxmin_solve_groups(MsMaxmin *mm, GArray *levels, GArray *moved, GArray *touched);
/* The same solve, reported per variable: when changed is not NULL, appends the ids of live
 * variables that moved or whose group's level changed, in increasing id order. Costs the size of
 * the changed groups; ms_maxmin_solve_groups does not. */
void ms_maxmin_solve(MsMaxmin *mm, GArray *changed);

/* The constraint a variable is bottlenecked at (saturated, and no variable on it has a higher
 * level), or G_MAXUINT32 when it is unconstrained or not solved yet. */
guint32 ms_maxmin_var_bottleneck(const MsMaxmin *mm, guint32 var);
/* Rate per unit weight of the variables bottlenecked at cnst; INFINITY when none is. */
double ms_maxmin_level(const MsMaxmin *mm, guint32 cnst);

double ms_maxmin_rate(const MsMaxmin *mm, guint32 var);
/* The constraints a variable uses, in the order given at creation. */
guint ms_maxmin_var_n_constraints(const MsMaxmin *mm, guint32 var);
guint32 ms_maxmin_var_constraint(const MsMaxmin *mm, guint32 var, guint k);
/* Sum of the current rates of the variables on a constraint as the solver maintains it: O(1),
 * within one part in 10^9 of ms_maxmin_usage. */
double ms_maxmin_load(const MsMaxmin *mm, guint32 cnst);
/* Sum of the current rates of the variables on a constraint, added up afresh (for invariant
 * checks and link utilisation reports). O(variables on the constraint). */
double ms_maxmin_usage(const MsMaxmin *mm, guint32 cnst);

/* Solves that add or remove variables are first tried by propagating level changes (cheap when
 * few groups change); the propagation gives up, and the progressive-filling repair runs, when it
 * processes one constraint more than reprocess times in a solve. 0 turns propagation off; the
 * default is 24. Results are the same either way (within the solver's tolerance). */
void ms_maxmin_set_budget(MsMaxmin *mm, guint reprocess);

typedef struct {
    guint64 solves;          /* calls that had something to solve */
    guint64 component_vars;  /* variables re-solved, summed over passes */
    guint64 component_elems; /* variable-constraint pairs re-solved, summed over passes */
    guint64 repairs;         /* passes after the first: the region grew after a failed check */
    guint64 rescans;         /* constraints scanned whole because their bound was not enough */
    guint64 propagations;    /* solves done by propagating level changes */
    guint64 fallbacks;       /* propagations given up for the progressive-filling repair */
    guint64 pivots;          /* variables moved to another group while propagating */
} MsMaxminStats;
void ms_maxmin_stats(const MsMaxmin *mm, MsMaxminStats *out);

/* Bytes of memory held, for the benchmark's per-flow figure. */
gsize ms_maxmin_memory(const MsMaxmin *mm);

G_END_DECLS
