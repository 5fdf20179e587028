/* link_timeline: the flows crossing one link over a run, as a rate series per flow (a step each
 * time its rate changes), each flow labelled with its collective and its connection. Times in
 * picoseconds, rates in bytes/s; written as CSV (GB/s, microseconds) and as a stacked step chart.
 * Knows nothing of collectives: the labels come from the caller. */
#pragma once

#include <glib.h>

#include "sim/base/units.h"
#include "sim/net/network.h"

G_BEGIN_DECLS

#define MS_LINK_TIMELINE_ERROR (ms_link_timeline_error_quark())
GQuark ms_link_timeline_error_quark(void);
typedef enum {
    MS_LINK_TIMELINE_ERROR_IO, /* a file could not be written */
} MsLinkTimelineError;

/* Version of the CSV's format (its first line: "# moesim-link-timeline 1"). */
#define MS_LINK_TIMELINE_FORMAT 1

typedef struct _MsLinkTimeline MsLinkTimeline;

/* A recorder for link (its name and capacity in bytes/s, for the outputs). */
MsLinkTimeline *ms_link_timeline_new(guint link, const char *name, double capacity);
void ms_link_timeline_free(MsLinkTimeline *tl);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsLinkTimeline, ms_link_timeline_free)

guint ms_link_timeline_link(const MsLinkTimeline *tl);

/* What a flow is, asked once per flow when it first appears on the link: its op (a collective's
 * label), the op's kind ("alltoall", "allreduce") and its connection; each a new string. */
typedef void (*MsLinkLabelFn)(gpointer ctx, guint64 cookie, char **op, char **kind, char **conn);

/* The flows sharing the link at time now (ms_network_link_sharing), every one of them: a flow
 * whose rate differs from its last step by more than one part in 10^9 gets a step, a new flow its
 * first, a flow no longer listed a step to 0. Times must not go backwards; several steps of one
 * flow at one instant keep the last. */
void ms_link_timeline_observe(MsLinkTimeline *tl, MsTime now, const MsLinkFlow *flows, guint n,
                              MsLinkLabelFn label, gpointer ctx);

/* Flows seen, and steps recorded. */
guint ms_link_timeline_n_series(const MsLinkTimeline *tl);
guint ms_link_timeline_n_steps(const MsLinkTimeline *tl);
/* Step i (in time order, then flow order): its time, flow (series index) and rate. */
void ms_link_timeline_step(const MsLinkTimeline *tl, guint i, MsTime *t, guint *series,
                           double *rate);
/* A series' labels (borrowed). */
const char *ms_link_timeline_op(const MsLinkTimeline *tl, guint series);
const char *ms_link_timeline_kind(const MsLinkTimeline *tl, guint series);
const char *ms_link_timeline_conn(const MsLinkTimeline *tl, guint series);
/* Rate of a series at time t (that of its last step at or before t; 0 before its first);
 * O(steps). */
double ms_link_timeline_rate_at(const MsLinkTimeline *tl, guint series, MsTime t);

/* The span of the first op of kind `kind` whose flows move on the link while a flow of another
 * kind `other` moves there too: from that op's first step to its flows' last. FALSE when no op
 * overlaps so. */
gboolean ms_link_timeline_overlap(const MsLinkTimeline *tl, const char *kind, const char *other,
                                  MsTime *from, MsTime *to, const char **op);

/* The CSV (docs/outputs.md): a header line with the format and the link, the column names, then
 * one row per step. "-" writes to standard output. */
gboolean ms_link_timeline_write_csv(const MsLinkTimeline *tl, const char *path, GError **error);
/* A stacked step chart of the flows' rates on the link over [from, to] (MS_TIME_NEVER as to:
 * the last step), coloured by op, one key entry per op with the most of its flows that move at
 * once in the window; path .png or .svg, the gnuplot script beside it (sim/out/plot.h, whose errors
 * it returns). */
gboolean ms_link_timeline_plot(const MsLinkTimeline *tl, const char *path, const char *title,
                               MsTime from, MsTime to, GError **error);

G_END_DECLS
