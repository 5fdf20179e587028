/* records: what an execution of a schedule produced, whatever executed it (the simulator, the cpu
 * backend, the cuda backend): per op its start and end in picoseconds from the start of the
 * iteration, plus run-level figures. Results (summary JSON, Chrome trace, CSV) are derived from
 * records and the schedule, so simulated and measured runs have exactly the same format. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "sim/schedule/schedule.h"
#include "sim/base/units.h"

G_BEGIN_DECLS

#define MS_RECORDS_ERROR (ms_records_error_quark())
GQuark ms_records_error_quark(void);
typedef enum {
    MS_RECORDS_ERROR_IO,
    MS_RECORDS_ERROR_PARSE,
    MS_RECORDS_ERROR_MISMATCH, /* records that do not belong to the schedule */
} MsRecordsError;

typedef struct _MsRecords MsRecords;

MsRecords *ms_records_new(guint n_ops, const char *backend);
void ms_records_free(MsRecords *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsRecords, ms_records_free)

void ms_records_set(MsRecords *r, guint32 op, MsTime start, MsTime end);
guint ms_records_n_ops(const MsRecords *r);
MsTime ms_records_start(const MsRecords *r, guint32 op);
MsTime ms_records_end(const MsRecords *r, guint32 op);
const char *ms_records_backend(const MsRecords *r);
/* Free-form run figures: wall seconds, events, peak memory ... */
void ms_records_set_stat(MsRecords *r, const char *key, double value);
gboolean ms_records_get_stat(const MsRecords *r, const char *key, double *value);
const char *const *ms_records_stat_keys(const MsRecords *r);

/* Time series recorded during a run (e.g. "util.nic": the fraction of a link class's capacity in
 * use). Samples are (time, value) pairs, appended in time order; the value holds until the next
 * sample. */
void ms_records_sample(MsRecords *r, const char *series, MsTime t, double value);
/* Names of the series, in creation order (NULL-terminated, owned by r). */
const char *const *ms_records_series_names(const MsRecords *r);
/* The samples of a series: times and values (n of each), owned by r; NULL when unknown. */
gboolean ms_records_series(const MsRecords *r, const char *series, const MsTime **times,
                           const double **values, guint *n);

/* Shifts all times so the earliest start is 0 (real runs start at an arbitrary clock). */
void ms_records_normalise(MsRecords *r);

G_END_DECLS
