/* chrome_trace: a Chrome trace-event file (the JSON object format Perfetto, chrome://tracing and
 * Chrome DevTools read) of one or more iterations, written as a run goes: each iteration's
 * schedule and records are added once executed and nothing of them is kept, so memory holds one
 * iteration whatever the count (the file, of course, grows with it). Times are microseconds;
 * iterations are laid end to end from 0 in the order added.
 *
 * What it holds: a process per GPU (pid = rank, "GPU r") with a thread per stream (tid = stream)
 * and one complete event per op; flows from each op's dependencies on another stream or GPU, and
 * one flow per collective through its participants' ops in the order they started; counter
 * tracks of each GPU's bytes in flight (the comm ops running there) and of each link class's
 * utilisation (the records' "util.CLASS" series, when the run recorded them); a "moesim" process
 * (pid MS_CHROME_TRACE_RUN_PID) with a slice per iteration and the all-GPU counters. */
#pragma once

#include <glib.h>

#include "sim/schedule/records.h"
#include "sim/schedule/schedule.h"

G_BEGIN_DECLS

#define MS_CHROME_TRACE_ERROR (ms_chrome_trace_error_quark())
GQuark ms_chrome_trace_error_quark(void);
typedef enum {
    MS_CHROME_TRACE_ERROR_IO,         /* the file could not be written */
    MS_CHROME_TRACE_ERROR_ITERATIONS, /* an iteration selection that is not N, A-B or all */
} MsChromeTraceError;

/* Above every GPU's pid (MS_SCHEDULE_MAX_RANKS ranks at most). */
#define MS_CHROME_TRACE_RUN_PID 65536u
/* All-to-alls of at most this many GPUs list, on each op, the bytes it sends to each GPU
 * ("to"): beyond, the lists would outgrow the ops themselves (n^2 entries for n ops). */
#define MS_CHROME_TRACE_MAX_TO 64u

typedef struct _MsChromeTrace MsChromeTrace;

/* Starts the file through sim/base/output_file: a regular file is written beside path and renamed
 * to it by ms_chrome_trace_close, so an interrupted run leaves no truncated trace under path (a
 * device or a pipe is written in place). NULL with _IO, the message naming path. */
MsChromeTrace *ms_chrome_trace_open(const char *path, GError **error);
/* Appends an iteration (its measured index, for names and args) after those added before. FALSE
 * with _IO when writing fails. */
gboolean ms_chrome_trace_add(MsChromeTrace *t, guint iteration, const MsSchedule *s,
                             const MsRecords *r, GError **error);
/* Ends the file and renames it to its path. FALSE with _IO (the temporary file is removed). */
gboolean ms_chrome_trace_close(MsChromeTrace *t, GError **error);
/* Frees t; a file not closed is removed. */
void ms_chrome_trace_free(MsChromeTrace *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsChromeTrace, ms_chrome_trace_free)

/* Iterations added, and events written, so far. */
guint ms_chrome_trace_n_iterations(const MsChromeTrace *t);
guint64 ms_chrome_trace_n_events(const MsChromeTrace *t);

/* A selection of measured iterations: "all", "N" or "A-B" (inclusive, A <= B), into first and
 * count (G_MAXUINT for all). FALSE with _ITERATIONS. */
gboolean ms_chrome_trace_parse_iterations(const char *text, guint *first, guint *count,
                                          GError **error);

G_END_DECLS
