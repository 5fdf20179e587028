/* pace_fit: which GPUs of a measured run computed slower than their peers, relative to the
 * model. Per GPU, the median over its compute ops of measured / simulated duration (the same
 * schedule run twice: `moesim run --json` and `moesim exec --json`); a GPU's pace is that median
 * over the median of every GPU's. The model's own errors (its efficiency curve, the overlap
 * slowdown) are shared by the GPUs and cancel; what is left is the GPU's: a throttled or slower
 * GPU, or one whose host is slower. It is the factor `--straggler GPU=F` takes (sim/compute.h: a
 * kernel body's stretch; the ratio here is of whole ops, launch included, so it reads a little
 * under the body's). */
#pragma once

#include <glib.h>

#include "validate/validation.h"

G_BEGIN_DECLS

/* Fewest compute ops a GPU needs for its pace: a median of fewer is one kernel's noise. */
#define MS_PACE_MIN_OPS 5
/* The pace from which a GPU is reported as a straggler (2% slower than the median GPU): a
 * reporting cut, not a model figure. */
#define MS_PACE_STRAGGLER 1.02

typedef struct {
    guint gpu;
    double pace; /* median of measured / simulated over its compute ops, over the GPUs' median */
    guint ops;   /* compute ops it was taken over */
} MsGpuPace;

/* The paces of the GPUs of cmp with at least MS_PACE_MIN_OPS compute ops of a known rank (ops
 * whose result names their kind and rank), by GPU; an empty array when fewer than two GPUs
 * have them (there is no peer to be slower than). Free with g_array_unref. */
GArray *ms_pace_fit(const MsRunComparison *cmp);

G_END_DECLS
