/* figures: the plots of a run and of a comparison, drawn through plot.h: a timeline of the ops on
 * each GPU and stream, link utilisation over time per link class, the latency CDF of inference
 * batches, and a bar chart comparing policies. */
#pragma once

#include <glib.h>

#include "sim/schedule/schedule.h"
#include "sim/schedule/records.h"
#include "sim/out/result.h"

G_BEGIN_DECLS

/* Ops of the first max_ranks GPUs (0 = all), one row per (GPU, stream), coloured by role. */
gboolean ms_figure_timeline(const char *path, const char *title, const MsSchedule *s,
                            const MsRecords *r, guint max_ranks, GError **error);
/* Every "util.CLASS" series of the records as a step line, in percent of the class capacity. */
gboolean ms_figure_links(const char *path, const char *title, const MsRecords *r, GError **error);
/* The distribution of step (batch) times of several results, one line each. */
gboolean ms_figure_latency_cdf(const char *path, const char *title, const char *const *names,
                               MsResult *const *results, guint n, GError **error);
/* Grouped bars: step time, all-to-all, exposed communication and allreduce time per result. */
gboolean ms_figure_compare(const char *path, const char *title, const char *const *names,
                           MsResult *const *results, guint n, GError **error);

G_END_DECLS
