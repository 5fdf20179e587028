/* units: integer picosecond time, bytes, bandwidth and compute rates, and the parsers for the
 * unit-suffixed values that every input file uses ("300GBps", "200Gbps", "1.5us", "312TFLOPS",
 * "30MB"). A value without a unit is always an error: silently guessing the scale of a number is
 * how simulators produce answers that are wrong by 1000x. */
#pragma once

#include <glib.h>
#include <math.h>

G_BEGIN_DECLS

/* Time is an integer count of picoseconds: 2^64 ps is about 213 days of modelled time, and integer
 * time makes event ordering exact and reproducible. */
typedef guint64 MsTime;
#define MS_TIME_NEVER G_MAXUINT64
#define MS_PS_PER_NS 1000ULL
#define MS_PS_PER_US 1000000ULL
#define MS_PS_PER_MS 1000000000ULL
#define MS_PS_PER_S 1000000000000ULL

/* Conversions round to the nearest picosecond and saturate at MS_TIME_NEVER - 1. */
MsTime ms_time_from_s(double seconds);
static inline MsTime
ms_time_from_us(double us)
{
    return ms_time_from_s(us * 1e-6);
}
static inline MsTime
ms_time_from_ns(double ns)
{
    return ms_time_from_s(ns * 1e-9);
}
static inline double
ms_time_to_s(MsTime t)
{
    return (double)t * 1e-12;
}
static inline double
ms_time_to_us(MsTime t)
{
    return (double)t * 1e-6;
}

/* Bandwidth in bytes per second; compute rate in floating-point operations per second. */
typedef double MsBandwidth;
typedef double MsFlops;

/* Sizes larger than this are rejected by every parser: 1 PiB is far beyond any single transfer,
 * buffer or model tensor, and keeps byte counts exactly representable as doubles. */
#define MS_BYTES_MAX (G_GUINT64_CONSTANT(1) << 50)

#define MS_UNITS_ERROR (ms_units_error_quark())
GQuark ms_units_error_quark(void);
typedef enum {
    MS_UNITS_ERROR_SYNTAX, /* not a number, or trailing garbage */
    MS_UNITS_ERROR_UNIT,   /* missing or unknown unit */
    MS_UNITS_ERROR_RANGE,  /* negative, zero where not allowed, NaN, or absurdly large */
} MsUnitsError;

/* Parsers. Each accepts optional surrounding blanks, a decimal number (with optional exponent) and
 * a unit, case-sensitive where case carries meaning (b = bit, B = byte). On failure they return
 * FALSE, leave *out untouched and set a MS_UNITS_ERROR whose message quotes the value and lists
 * the accepted units; callers prefix file:line and the field name.
 *
 *   bandwidth: Bps KBps MBps GBps TBps (bytes/s, powers of 1000), bps Kbps Mbps Gbps Tbps (bits/s),
 *              also spelled B/s, GB/s, Gb/s ...; must be > 0 and finite
 *   time:      ps ns us ms s; must be >= 0
 *   flops:     FLOPS KFLOPS MFLOPS GFLOPS TFLOPS PFLOPS (per second); must be > 0
 *   bytes:     B KB MB GB TB (powers of 1000), KiB MiB GiB TiB (powers of 1024), and the
 *              nccl-tests shorthand K M G T (powers of 1024); must be <= MS_BYTES_MAX and a whole
 *              number of bytes
 */
gboolean ms_parse_bandwidth(const char *text, MsBandwidth *out, GError **error);
gboolean ms_parse_time(const char *text, MsTime *out, GError **error);
gboolean ms_parse_flops(const char *text, MsFlops *out, GError **error);
gboolean ms_parse_bytes(const char *text, guint64 *out, GError **error);

/* The number and unit of text in the kind's base unit (bytes, seconds, bytes/s, FLOP/s), checked
 * only to be a finite number with a known unit: for callers that check a range of their own
 * (sim/base/ranges.h). Errors as above (SYNTAX, UNIT, RANGE for infinities and NaN). */
typedef enum { MS_UNIT_BYTES, MS_UNIT_TIME, MS_UNIT_BANDWIDTH, MS_UNIT_FLOPS } MsUnitKind;
gboolean ms_parse_unit_value(const char *text, MsUnitKind kind, double *out, GError **error);

/* A plain finite number with optional bounds, for unit-less fields (ratios, counts given as
 * floats). Rejects NaN, infinities and trailing garbage. */
gboolean ms_parse_double(const char *text, double min, double max, double *out, GError **error);
/* An unsigned integer in [min, max]; rejects signs, blanks inside, and overflow. */
gboolean ms_parse_uint(const char *text, guint64 min, guint64 max, guint64 *out, GError **error);

/* Conversions from floating point that never wrap nor invoke undefined behaviour: v rounded to
 * the nearest integer, NaN and values below 0 give 0, values at or beyond the type's largest give
 * the largest. For sizes and counts computed from accepted inputs, where the inputs' ranges keep
 * the result in range, saturation is a last defence, not a result. */
guint64 ms_u64_saturate(double v);
guint32 ms_u32_saturate(double v);

/* Formatting helpers used by reports; they write into buf (at least 32 bytes) and return it. */
const char *ms_format_bytes(guint64 bytes, char *buf, gsize len);
const char *ms_format_bandwidth(MsBandwidth bw, char *buf, gsize len);
const char *ms_format_time(MsTime t, char *buf, gsize len);

G_END_DECLS
