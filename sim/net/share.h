/* share: the interface between the network and a sharing model, the solver that divides link
 * capacity among the flows crossing it. Constraints are links (bytes/s), variables are flows with
 * a weight; after a solve every constrained variable is bottlenecked at one constraint, and its
 * rate is its weight times that constraint's level. The network times flows per bottleneck group
 * from that, so a sharing model reports what changed by groups. Models are chosen by name; the
 * exact weighted max-min solver of sim/net/maxmin.h is "maxmin". */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
    guint64 solves;          /* calls that had something to solve */
    guint64 component_vars;  /* variables re-solved, summed over passes */
    guint64 component_elems; /* variable-constraint pairs re-solved, summed over passes */
    guint64 repairs;         /* passes after the first (the region grew) */
    guint64 rescans;         /* constraints scanned whole because a bound was not enough */
    guint64 propagations;    /* solves done by propagating level changes */
} MsShareStats;

/* A sharing model's operations; the contract of each is that of the ms_maxmin_ function of the
 * same name (sim/net/maxmin.h). Every model must be exact and deterministic: the same calls give
 * the same results and the same reported ids in the same order. */
typedef struct {
    const char *name;
    const char *summary;
    gpointer (*create)(void);
    void (*destroy)(gpointer solver);
    guint32 (*add_constraint)(gpointer solver, double capacity);
    void (*set_capacity)(gpointer solver, guint32 cnst, double capacity);
    guint32 (*add_variable)(gpointer solver, double weight, const guint32 *cnsts, guint n);
    void (*remove_variable)(gpointer solver, guint32 var);
    /* Appends constraints whose level changed to levels, variables whose bottleneck changed
     * (and every new one) to moved, constraints whose load may have changed to touched. */
    void (*solve)(gpointer solver, GArray *levels, GArray *moved, GArray *touched);
    double (*level)(gconstpointer solver, guint32 cnst);
    guint32 (*bottleneck)(gconstpointer solver, guint32 var);
    double (*load)(gconstpointer solver, guint32 cnst);
    guint (*crossings)(gconstpointer solver, guint32 cnst);           /* variables on it */
    guint32 (*crossing)(gconstpointer solver, guint32 cnst, guint k); /* the k-th of them */
    /* A tuning knob of the solver that leaves results unchanged (maxmin: the propagation
     * budget); may be NULL. */
    void (*set_budget)(gpointer solver, guint budget);
    void (*stats)(gconstpointer solver, MsShareStats *out);
    gsize (*memory)(gconstpointer solver);
} MsShareClass;

/* The default sharing model: exact weighted max-min per flow. */
#define MS_SHARE_DEFAULT "maxmin"

/* The model of that name; NULL when there is none. */
const MsShareClass *ms_share_lookup(const char *name);
/* The models in a fixed order, for listing: NULL past the last. */
const MsShareClass *ms_share_nth(guint i);

G_END_DECLS
