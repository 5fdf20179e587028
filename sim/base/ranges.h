/* ranges: the documented range of every number an input carries. Each parser declares, next to
 * its code, a table of the fields it reads (where, key, unit, bounds, reason) and checks every
 * value against it; docs/bad-inputs.md is generated from the same tables and a test walks them
 * (one value just inside and one just outside each bound), so what is documented is what is
 * checked. Bounds are inclusive, in the unit's base (bytes, seconds, bytes/s, FLOP/s), and chosen
 * so that no later arithmetic on an accepted value can overflow. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
    MS_RANGE_COUNT,     /* a non-negative integer without a unit */
    MS_RANGE_NUMBER,    /* a real number without a unit */
    MS_RANGE_BYTES,     /* a size with a unit (ms_parse_bytes), a whole number of bytes */
    MS_RANGE_TIME,      /* a time with a unit (ms_parse_time); bounds in seconds */
    MS_RANGE_BANDWIDTH, /* a bandwidth with a unit (ms_parse_bandwidth), bytes/s */
    MS_RANGE_FLOPS,     /* a compute rate with a unit (ms_parse_flops), FLOP/s */
    MS_RANGE_BOOLEAN,   /* true/yes/1 or false/no/0 (any case); the value 1 or 0, bounds 0 and 1 */
    MS_RANGE_CHOICE,    /* one of names; the value its index, bounds 0 and the last index */
} MsRangeUnit;

/* One field (a plain value record of constants). Bounds that depend on other fields (top_k at
 * most experts) are checked by the parser after this static range, and said in reason. */
typedef struct {
    const char *where; /* group or record as the docs name it: "[gpu]", "[link FROM TO]" */
    const char *key;   /* NULL ends a table */
    MsRangeUnit unit;
    double min, max;
    const char *reason;
    const char *const *names; /* MS_RANGE_CHOICE: the spellings by index, NULL-terminated */
} MsRange;

/* The fields of one kind of input, for the documentation and its test. */
typedef struct {
    const char *input; /* "Topology files" */
    const MsRange *fields;
} MsRangeTable;

/* The entry for (where, key) of a table; a missing one is a programmer error (NULL, critical). */
const MsRange *ms_range_find(const MsRange *table, const char *where, const char *key);

/* Parses text as the field's unit says (a count rejects signs and fractions; the other units are
 * parsed as by sim/base/units.h, without their own wider ranges) and checks it against the
 * bounds. *out is the value in the unit's base, untouched on failure. Errors are MS_UNITS_ERROR:
 * SYNTAX and UNIT as the parsers of units.h, RANGE as "'TEXT' out of range (must be between MIN
 * and MAX)" with the bounds in units, and for a boolean or a choice SYNTAX as "'TEXT' is not a
 * boolean (true/false)" or "'TEXT' is not one of: A, B"; callers prefix FILE:LINE and the
 * field. */
gboolean ms_range_parse(const MsRange *range, const char *text, double *out, GError **error);
/* The range check alone, for a value already parsed (text quotes it in the message). */
gboolean ms_range_check(const MsRange *range, double value, const char *text, GError **error);

/* value in units, short ("1 PiB", "0.7 us", "300 GB/s", "1e+06", "true", "ecmp"); free with
 * g_free. */
char *ms_range_format(const MsRange *range, double value);
/* value as text that ms_range_parse reads back exactly (base units: "1125899906842624B",
 * "1e-06s"); free with g_free. */
char *ms_range_text(const MsRange *range, double value);

G_END_DECLS
