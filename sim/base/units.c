/* units: parsing and formatting of unit-suffixed values; see units.h for the accepted spellings. */
#include "units.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(ms_units_error_quark, ms_units_error)

typedef struct {
    const char *suffix;
    double scale;
} Unit;

static const Unit bandwidth_units[] = {
    {"Bps", 1.0},     {"KBps", 1e3},     {"MBps", 1e6},     {"GBps", 1e9},     {"TBps", 1e12},
    {"B/s", 1.0},     {"KB/s", 1e3},     {"MB/s", 1e6},     {"GB/s", 1e9},     {"TB/s", 1e12},
    {"bps", 1 / 8.0}, {"Kbps", 1e3 / 8}, {"Mbps", 1e6 / 8}, {"Gbps", 1e9 / 8}, {"Tbps", 1e12 / 8},
    {"b/s", 1 / 8.0}, {"Kb/s", 1e3 / 8}, {"Mb/s", 1e6 / 8}, {"Gb/s", 1e9 / 8}, {"Tb/s", 1e12 / 8},
    {NULL, 0},
};

static const Unit time_units[] = {
    {"ps", 1e-12}, {"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}, {NULL, 0},
};

static const Unit flops_units[] = {
    {"FLOPS", 1.0},   {"KFLOPS", 1e3},  {"MFLOPS", 1e6}, {"GFLOPS", 1e9},
    {"TFLOPS", 1e12}, {"PFLOPS", 1e15}, {NULL, 0},
};

static const Unit bytes_units[] = {
    {"B", 1.0},
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
    {"KiB", 1024.0},
    {"MiB", 1048576.0},
    {"GiB", 1073741824.0},
    {"TiB", 1099511627776.0},
    {"K", 1024.0},
    {"M", 1048576.0},
    {"G", 1073741824.0},
    {"T", 1099511627776.0},
    {NULL, 0},
};

static char *
unit_list(const Unit *units)
{
    GString *s = g_string_new(NULL);
    for (const Unit *u = units; u->suffix; u++) {
        g_string_append_printf(s, "%s%s", s->len ? ", " : "", u->suffix);
    }
    return g_string_free(s, FALSE);
}

/* Splits "  12.5 GBps " into a number and a suffix, then looks the suffix up. */
static gboolean
parse_with_unit(const char *text, const Unit *units, const char *what, const char *example,
                double *out, GError **error)
{
    if (text == NULL) {
        g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_SYNTAX, "missing %s value", what);
        return FALSE;
    }
    while (g_ascii_isspace(*text)) {
        text++;
    }
    char *end = NULL;
    errno = 0;
    double v = g_ascii_strtod(text, &end);
    if (end == text || errno == ERANGE) {
        g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_SYNTAX,
                    "bad %s '%s': expected a number with a unit, e.g. %s", what, text, example);
        return FALSE;
    }
    /* strtod accepts "inf", "nan" and hex floats; none of them is a sane physical value. */
    if (!isfinite(v) || g_ascii_strncasecmp(text, "0x", 2) == 0 ||
        g_ascii_strncasecmp(text, "-0x", 3) == 0) {
        g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE, "bad %s '%s': not a finite number",
                    what, text);
        return FALSE;
    }
    while (g_ascii_isspace(*end)) {
        end++;
    }
    g_autofree char *suffix = g_strdup(end);
    g_strchomp(suffix);
    if (*suffix == '\0') {
        g_autofree char *list = unit_list(units);
        g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_UNIT,
                    "%s '%s' has no unit (write e.g. %s; units: %s)", what, text, example, list);
        return FALSE;
    }
    for (const Unit *u = units; u->suffix; u++) {
        if (strcmp(u->suffix, suffix) == 0) {
            *out = v * u->scale;
            return TRUE;
        }
    }
    g_autofree char *list = unit_list(units);
    g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_UNIT,
                "%s '%s': unknown unit '%s' (units: %s)", what, text, suffix, list);
    return FALSE;
}

gboolean
ms_parse_unit_value(const char *text, MsUnitKind kind, double *out, GError **error)
{
    switch (kind) {
    case MS_UNIT_BYTES:
        return parse_with_unit(text, bytes_units, "size", "30MB or 64KiB", out, error);
    case MS_UNIT_TIME:
        return parse_with_unit(text, time_units, "time", "1.5us", out, error);
    case MS_UNIT_BANDWIDTH:
        return parse_with_unit(text, bandwidth_units, "bandwidth", "300GBps or 200Gbps", out,
                               error);
    case MS_UNIT_FLOPS:
        return parse_with_unit(text, flops_units, "compute rate", "312TFLOPS", out, error);
    }
    g_return_val_if_reached(FALSE);
}

gboolean
ms_parse_bandwidth(const char *text, MsBandwidth *out, GError **error)
{
    double v;
    if (!parse_with_unit(text, bandwidth_units, "bandwidth", "300GBps or 200Gbps", &v, error)) {
        return FALSE;
    }
    if (!(v > 0) || v > 1e18) {
        g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE,
                    "bandwidth '%s' out of range (must be > 0 and at most 1 EB/s)", text);
        return FALSE;
    }
    *out = v;
    return TRUE;
}

gboolean
ms_parse_time(const char *text, MsTime *out, GError **error)
{
    double v;
    if (!parse_with_unit(text, time_units, "time", "1.5us", &v, error)) {
        return FALSE;
    }
    /* 1e6 s (11.6 days) is far beyond any modelled step yet well inside the 64-bit ps range. */
    if (v < 0 || v > 1e6) {
        g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE,
                    "time '%s' out of range (must be >= 0 and at most 1e6 s)", text);
        return FALSE;
    }
    *out = ms_time_from_s(v);
    return TRUE;
}

gboolean
ms_parse_flops(const char *text, MsFlops *out, GError **error)
{
    double v;
    if (!parse_with_unit(text, flops_units, "compute rate", "312TFLOPS", &v, error)) {
        return FALSE;
    }
    if (!(v > 0) || v > 1e21) {
        g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE,
                    "compute rate '%s' out of range (must be > 0 and at most 1 ZFLOPS)", text);
        return FALSE;
    }
    *out = v;
    return TRUE;
}

gboolean
ms_parse_bytes(const char *text, guint64 *out, GError **error)
{
    double v;
    if (!parse_with_unit(text, bytes_units, "size", "30MB or 64KiB", &v, error)) {
        return FALSE;
    }
    if (v < 0 || v > (double)MS_BYTES_MAX) {
        g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE,
                    "size '%s' out of range (must be >= 0 and at most 1 PiB)", text);
        return FALSE;
    }
    if (v != floor(v)) {
        g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE,
                    "size '%s' is not a whole number of bytes", text);
        return FALSE;
    }
    *out = (guint64)v;
    return TRUE;
}

gboolean
ms_parse_double(const char *text, double min, double max, double *out, GError **error)
{
    if (text == NULL) {
        g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_SYNTAX, "missing number");
        return FALSE;
    }
    char *end = NULL;
    errno = 0;
    double v = g_ascii_strtod(text, &end);
    while (end && g_ascii_isspace(*end)) {
        end++;
    }
    if (end == text || *end != '\0' || errno == ERANGE || !isfinite(v) ||
        strpbrk(text, "xXpP") != NULL) {
        g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_SYNTAX, "'%s' is not a number", text);
        return FALSE;
    }
    if (v < min || v > max) {
        g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE,
                    "%s out of range (must be between %g and %g)", text, min, max);
        return FALSE;
    }
    *out = v;
    return TRUE;
}

gboolean
ms_parse_uint(const char *text, guint64 min, guint64 max, guint64 *out, GError **error)
{
    /* Digits only, parsed here rather than by g_ascii_string_to_unsigned, which refuses a number
     * when errno is set after g_ascii_strtoull: with GLib 2.74, when two threads made their first
     * calls together, errno came back EAGAIN (the wait of the g_once that creates its C locale)
     * and a valid "1" was refused in about one run in a hundred of `moesim repro` (inputs loaded
     * on worker threads). */
    guint64 v = 0;
    gboolean ok = text != NULL && g_ascii_isdigit(*text);
    for (const char *c = text; ok && *c; c++) {
        guint d = (guint)(*c - '0');
        ok = g_ascii_isdigit(*c) && v <= (G_MAXUINT64 - d) / 10;
        v = v * 10 + d;
    }
    if (!ok) {
        g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_SYNTAX,
                    "'%s' is not a non-negative integer", text ? text : "");
        return FALSE;
    }
    if (v < min || v > max) {
        g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE,
                    "%s out of range (must be between %" G_GUINT64_FORMAT " and %" G_GUINT64_FORMAT
                    ")",
                    text, min, max);
        return FALSE;
    }
    *out = v;
    return TRUE;
}

MsTime
ms_time_from_s(double seconds)
{
    if (!(seconds > 0)) {
        return 0;
    }
    double ps = seconds * 1e12 + 0.5;
    if (ps >= (double)(MS_TIME_NEVER - 1)) {
        return MS_TIME_NEVER - 1;
    }
    return (MsTime)ps;
}

/* 2^64 and 2^32 as doubles (exact): the first values the types cannot hold. */
#define U64_LIMIT 18446744073709551616.0
#define U32_LIMIT 4294967296.0

guint64
ms_u64_saturate(double v)
{
    if (!(v > 0)) {
        return 0;
    }
    double r = floor(v + 0.5);
    return r >= U64_LIMIT ? G_MAXUINT64 : (guint64)r;
}

guint32
ms_u32_saturate(double v)
{
    if (!(v > 0)) {
        return 0;
    }
    double r = floor(v + 0.5);
    return r >= U32_LIMIT ? G_MAXUINT32 : (guint32)r;
}

const char *
ms_format_bytes(guint64 bytes, char *buf, gsize len)
{
    static const char *names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)bytes;
    guint i = 0;
    while (v >= 1024.0 && i + 1 < G_N_ELEMENTS(names)) {
        v /= 1024.0;
        i++;
    }
    if (i == 0) {
        g_snprintf(buf, len, "%" G_GUINT64_FORMAT " B", bytes);
    } else {
        g_snprintf(buf, len, "%.4g %s", v, names[i]);
    }
    return buf;
}

const char *
ms_format_bandwidth(MsBandwidth bw, char *buf, gsize len)
{
    if (isinf(bw)) {
        g_snprintf(buf, len, "unlimited");
    } else if (bw >= 1e9) {
        g_snprintf(buf, len, "%.4g GB/s", bw / 1e9);
    } else if (bw >= 1e6) {
        g_snprintf(buf, len, "%.4g MB/s", bw / 1e6);
    } else {
        g_snprintf(buf, len, "%.4g B/s", bw);
    }
    return buf;
}

const char *
ms_format_time(MsTime t, char *buf, gsize len)
{
    if (t >= MS_PS_PER_S) {
        g_snprintf(buf, len, "%.4g s", ms_time_to_s(t));
    } else if (t >= MS_PS_PER_MS) {
        g_snprintf(buf, len, "%.4g ms", (double)t / MS_PS_PER_MS);
    } else if (t >= MS_PS_PER_US) {
        g_snprintf(buf, len, "%.4g us", (double)t / MS_PS_PER_US);
    } else {
        g_snprintf(buf, len, "%.4g ns", (double)t / MS_PS_PER_NS);
    }
    return buf;
}
