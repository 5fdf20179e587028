/* moesim_csv: moesim's own measurement file, a versioned CSV that holds every row kind (what
 * `moesim bench --backend cuda` writes and calibration reads; see docs/calibration-format.md), read
 * into and written from a measurement set. The format (version, columns, row layout) is
 * sim/calib/meas_csv.h's. Times are microseconds in the file, seconds in memory; sizes bytes. */
#pragma once

#include <glib.h>

#include "sim/calib/meas_csv.h"
#include "validate/measurement.h"

G_BEGIN_DECLS

/* Appends the rows of a moesim CSV to set. The first line must be "# moesim-measurements N", N
 * from MS_MOESIM_CSV_OLDEST to MS_MOESIM_CSV_VERSION; further '#' lines and blank lines are
 * ignored; the first other line names the columns (any order, kind and time_us required, unknown
 * or repeated names, and those of a version later than the file's, refused; a kind of a later
 * version is refused too). Every row is validated as
 * ms_measurement_set_add does. Returns FALSE with MS_MEASUREMENT_ERROR: _FORMAT for a missing or
 * other version line, _MISSING for a missing header or required column, _SYNTAX for an unknown
 * column or a row with the wrong number of fields, _VALUE for a bad field, each as
 * "SOURCE:LINE: column: problem"; rows read before the error stay in set. */
gboolean ms_moesim_csv_read(MsMeasurementSet *set, const char *data, gsize len, const char *source,
                            GError **error);

/* The set as a moesim CSV: the version line (the oldest version that holds every row), the
 * header, one line per row in set order. The bytes depend only on the rows (no dates, hosts or
 * hash order); times keep 12 significant digits. Free with g_free. */
char *ms_moesim_csv_write(const MsMeasurementSet *set, gsize *len);
/* Writes that text to path (atomically); FALSE with MS_MEASUREMENT_ERROR_IO on failure. */
gboolean ms_moesim_csv_save(const MsMeasurementSet *set, const char *path, GError **error);

G_END_DECLS
