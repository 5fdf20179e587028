/* spans: time intervals [a, b) as the outputs add them up (busy times are unions of them). */
#pragma once

#include <glib.h>

#include "sim/base/units.h"

G_BEGIN_DECLS

typedef struct {
    MsTime a, b;
} MsSpan;

/* Sorts spans (GArray of MsSpan) and merges the overlapping ones in place, leaving them disjoint
 * and in order; returns the time they cover. */
MsTime ms_spans_merge(GArray *spans);

G_END_DECLS
