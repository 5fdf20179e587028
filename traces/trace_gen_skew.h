/* trace_gen_skew: the generator's closed forms (docs/trace-format.md, "The model"): popularity by
 * rank (Zipf, water-filled at 1/top_k), each rank's expected share of a layer's assignments, the
 * popularity ratio of the most over the least popular expert, the cross-layer persistence of
 * primary choices, and the solvers that turn targets (hot, ratio, persist) into the exponent and
 * corr the sampler uses. Pure functions of (experts, top_k, exponent, corr); no state, no RNG. */
#pragma once

#include <glib.h>

#include "trace_gen.h"

G_BEGIN_DECLS

/* Zipf popularity with exponent s over n ranks, water-filled so that no rank exceeds 1/k. */
void ms_trace_gen_popularity(double s, guint n, guint k, double *p);
/* Expected share of rank i of a layer's assignments: (1 - corr) p_i plus, for a rank in group j
 * (ranks jk .. jk+k-1), corr Q_j / k; into share[n]. */
void ms_trace_gen_shares(const double *p, guint n, guint k, double corr, double *share);
double ms_trace_gen_hottest(const double *p, guint n, guint k, double corr);
/* Largest over smallest expected share (>= 1; INFINITY when a share is 0). */
double ms_trace_gen_ratio(const double *p, guint n, guint k, double corr);
/* Persistence of primary choices from one layer to the next: for the tokens whose primary has
 * rank i, the share of their next primaries on the most chosen next expert (top1) and on the two
 * most chosen (top2), averaged over i weighted by p_i. A following token's primary is uniform
 * over the k ranks of the group it follows, an independent one lands on rank j with p_j. */
void ms_trace_gen_persistence(const double *p, guint n, guint k, double corr, double *top1,
                              double *top2);

/* The exponent and corr the sampler uses for params: zipf as given or solved for hot or ratio,
 * corr as given or solved for persist (alternately, when each depends on the other).
 * MS_TRACE_GEN_ERROR_VALUE naming the key when a target is unreachable (with the reachable
 * range). */
gboolean ms_trace_gen_solve(const MsTraceGenParams *params, double *zipf, double *corr,
                            GError **error);

G_END_DECLS
