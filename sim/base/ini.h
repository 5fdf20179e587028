/* ini: GKeyFile with line numbers. Every configuration file moesim reads (topologies, models,
 * calibrations) goes through here so that each bad value is reported as FILE:LINE: [group] key:
 * problem, duplicate keys and groups are refused instead of silently overwritten, and unit-suffixed
 * values are parsed in one place. */
#pragma once

#include <glib.h>

#include "input_file.h"
#include "ranges.h"
#include "units.h"

G_BEGIN_DECLS

#define MS_INI_ERROR (ms_ini_error_quark())
GQuark ms_ini_error_quark(void);
typedef enum {
    MS_INI_ERROR_IO,          /* the file could not be read */
    MS_INI_ERROR_PARSE,       /* a line that is neither group, key=value, comment nor blank */
    MS_INI_ERROR_DUPLICATE,   /* a group or key given twice */
    MS_INI_ERROR_MISSING,     /* a required group or key is absent */
    MS_INI_ERROR_VALUE,       /* a value that does not parse or is out of range */
    MS_INI_ERROR_UNKNOWN_KEY, /* a key or group the schema does not know (likely a typo) */
} MsIniError;

typedef struct _MsIni MsIni;

/* Load from a file or from memory. source names the input in messages (a path, or e.g.
 * "topology dgx-a100"). Returns NULL with MS_INI_ERROR_IO/PARSE/DUPLICATE on failure. A file is
 * read through sim/base/input_file.h as the given kind (a regular file within its limit: the
 * message of MS_INI_ERROR_IO says which check failed); data over 64 MiB is refused: no
 * configuration file is that large. */
MsIni *ms_ini_load_file(const char *path, MsInputKind kind, GError **error);
MsIni *ms_ini_load_data(const char *data, gsize len, const char *source, GError **error);
void ms_ini_free(MsIni *ini);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsIni, ms_ini_free)

const char *ms_ini_source(const MsIni *ini);
/* Groups in file order (owned by ini). */
const char *const *ms_ini_groups(const MsIni *ini, guint *n_groups);
/* Keys of a group in file order, NULL-terminated, owned by ini; NULL for an unknown group. */
const char *const *ms_ini_keys(const MsIni *ini, const char *group, guint *n_keys);
gboolean ms_ini_has_group(const MsIni *ini, const char *group);
gboolean ms_ini_has_key(const MsIni *ini, const char *group, const char *key);
/* 1-based line of a key (or of the group header when key is NULL); 0 when absent. */
guint ms_ini_line(const MsIni *ini, const char *group, const char *key);

/* Sets error (domain MS_INI_ERROR, given code) to "SOURCE:LINE: [group] key: MESSAGE"; the line is
 * the key's, else the group's, else omitted. */
void ms_ini_set_error(const MsIni *ini, const char *group, const char *key, GError **error,
                      MsIniError code, const char *format, ...) G_GNUC_PRINTF(6, 7);

/* Required getters: a missing key is MS_INI_ERROR_MISSING, a bad value MS_INI_ERROR_VALUE; the
 * message carries the location and the offending text. The string is owned by ini. */
const char *ms_ini_get_string(const MsIni *ini, const char *group, const char *key, GError **error);
gboolean ms_ini_get_bandwidth(const MsIni *ini, const char *group, const char *key,
                              MsBandwidth *out, GError **error);
gboolean ms_ini_get_time(const MsIni *ini, const char *group, const char *key, MsTime *out,
                         GError **error);
gboolean ms_ini_get_flops(const MsIni *ini, const char *group, const char *key, MsFlops *out,
                          GError **error);
gboolean ms_ini_get_bytes(const MsIni *ini, const char *group, const char *key, guint64 *out,
                          GError **error);
gboolean ms_ini_get_uint(const MsIni *ini, const char *group, const char *key, guint64 min,
                         guint64 max, guint64 *out, GError **error);
gboolean ms_ini_get_double(const MsIni *ini, const char *group, const char *key, double min,
                           double max, double *out, GError **error);
gboolean ms_ini_get_bool(const MsIni *ini, const char *group, const char *key, gboolean *out,
                         GError **error);

/* Optional getters: when the key is absent *out is left as the caller initialised it (the default)
 * and TRUE is returned; a present but bad value is an error as above. */
gboolean ms_ini_opt_string(const MsIni *ini, const char *group, const char *key, const char **out,
                           GError **error);
gboolean ms_ini_opt_bandwidth(const MsIni *ini, const char *group, const char *key,
                              MsBandwidth *out, GError **error);
gboolean ms_ini_opt_time(const MsIni *ini, const char *group, const char *key, MsTime *out,
                         GError **error);
gboolean ms_ini_opt_flops(const MsIni *ini, const char *group, const char *key, MsFlops *out,
                          GError **error);
gboolean ms_ini_opt_bytes(const MsIni *ini, const char *group, const char *key, guint64 *out,
                          GError **error);
gboolean ms_ini_opt_uint(const MsIni *ini, const char *group, const char *key, guint64 min,
                         guint64 max, guint64 *out, GError **error);
gboolean ms_ini_opt_double(const MsIni *ini, const char *group, const char *key, double min,
                           double max, double *out, GError **error);
gboolean ms_ini_opt_bool(const MsIni *ini, const char *group, const char *key, gboolean *out,
                         GError **error);

/* Range-checked getters (sim/base/ranges.h): the key is range->key, the value is parsed as the
 * range's unit says and checked against its bounds (MS_INI_ERROR_VALUE, located, quoting the
 * value and the bounds). With required FALSE an absent key leaves *out alone and returns TRUE,
 * with required TRUE it is MS_INI_ERROR_MISSING. _double gives the value in the unit's base
 * (bytes, seconds, bytes/s, FLOP/s), _uint a count or a size, _time picoseconds. */
gboolean ms_ini_range_double(const MsIni *ini, const char *group, const MsRange *range,
                             gboolean required, double *out, GError **error);
gboolean ms_ini_range_uint(const MsIni *ini, const char *group, const MsRange *range,
                           gboolean required, guint64 *out, GError **error);
gboolean ms_ini_range_time(const MsIni *ini, const char *group, const MsRange *range,
                           gboolean required, MsTime *out, GError **error);
/* A boolean, or the index of a choice among range->names (MS_RANGE_BOOLEAN, MS_RANGE_CHOICE). */
gboolean ms_ini_range_bool(const MsIni *ini, const char *group, const MsRange *range,
                           gboolean required, gboolean *out, GError **error);
gboolean ms_ini_range_choice(const MsIni *ini, const char *group, const MsRange *range,
                             gboolean required, guint *out, GError **error);

/* Refuses keys of group not in allowed (NULL-terminated): the error names the key, its line and
 * the allowed keys, so a typo like "bandwith" is caught instead of falling back to a default. */
gboolean ms_ini_check_keys(const MsIni *ini, const char *group, const char *const *allowed,
                           GError **error);

G_END_DECLS
