/* ranges: parsing a field as its unit says, the bound check, and the formats for messages, the
 * documentation and the test that walks the tables. */
#include "ranges.h"

#include <math.h>
#include <string.h>

#include "units.h"

const MsRange *
ms_range_find(const MsRange *table, const char *where, const char *key)
{
    for (const MsRange *r = table; r->key; r++) {
        if (strcmp(r->where, where) == 0 && strcmp(r->key, key) == 0) {
            return r;
        }
    }
    g_critical("no range for %s %s", where, key);
    return NULL;
}

typedef struct {
    double scale;
    const char *name;
} Scale;

/* The largest scale not above |v| (the first when none is); NULL-named entry ends the list. */
static const Scale *
pick(const Scale *scales, double v)
{
    const Scale *best = &scales[0];
    for (const Scale *s = scales; s->name; s++) {
        if (fabs(v) >= s->scale) {
            best = s;
        }
    }
    return best;
}

/* Zero is written in the unit whose scale is 1 ("0 s", "0 B/s"). */
static char *
scaled(const Scale *scales, double v)
{
    if (v == 0) {
        const Scale *s = scales;
        while (s->name && s->scale != 1) {
            s++;
        }
        return g_strdup_printf("0 %s", s->name ? s->name : scales[0].name);
    }
    const Scale *s = pick(scales, v);
    return g_strdup_printf("%g %s", v / s->scale, s->name);
}

/* Binary units where the size is a whole number of them, decimal ones otherwise. */
static char *
format_bytes(double v)
{
    static const Scale binary[] = {{1, "B"},
                                   {1024.0, "KiB"},
                                   {1048576.0, "MiB"},
                                   {1073741824.0, "GiB"},
                                   {1099511627776.0, "TiB"},
                                   {1125899906842624.0, "PiB"},
                                   {0, NULL}};
    static const Scale decimal[] = {{1, "B"},     {1e3, "KB"},  {1e6, "MB"}, {1e9, "GB"},
                                    {1e12, "TB"}, {1e15, "PB"}, {0, NULL}};
    const Scale *b = pick(binary, v);
    if (v != 0 && fmod(v, b->scale) == 0 && b->scale > 1) {
        return g_strdup_printf("%g %s", v / b->scale, b->name);
    }
    return scaled(decimal, v);
}

char *
ms_range_format(const MsRange *range, double v)
{
    static const Scale time[] = {{1e-12, "ps"}, {1e-9, "ns"}, {1e-6, "us"},
                                 {1e-3, "ms"},  {1, "s"},     {0, NULL}};
    static const Scale bandwidth[] = {{1, "B/s"},     {1e3, "KB/s"},  {1e6, "MB/s"},  {1e9, "GB/s"},
                                      {1e12, "TB/s"}, {1e15, "PB/s"}, {1e18, "EB/s"}, {0, NULL}};
    static const Scale flops[] = {{1, "FLOPS"},     {1e3, "KFLOPS"},  {1e6, "MFLOPS"},
                                  {1e9, "GFLOPS"},  {1e12, "TFLOPS"}, {1e15, "PFLOPS"},
                                  {1e18, "EFLOPS"}, {0, NULL}};
    switch (range->unit) {
    case MS_RANGE_COUNT:
        return g_strdup_printf("%.0f", v);
    case MS_RANGE_NUMBER:
        return g_strdup_printf("%g", v);
    case MS_RANGE_BYTES:
        return format_bytes(v);
    case MS_RANGE_TIME:
        return scaled(time, v);
    case MS_RANGE_BANDWIDTH:
        return scaled(bandwidth, v);
    case MS_RANGE_FLOPS:
        return scaled(flops, v);
    case MS_RANGE_BOOLEAN:
    case MS_RANGE_CHOICE:
        return ms_range_text(range, v);
    }
    g_return_val_if_reached(NULL);
}

char *
ms_range_text(const MsRange *range, double v)
{
    char num[G_ASCII_DTOSTR_BUF_SIZE];
    switch (range->unit) {
    case MS_RANGE_COUNT:
        return g_strdup_printf("%.0f", v);
    case MS_RANGE_BYTES:
        return g_strdup_printf("%.0fB", v);
    case MS_RANGE_NUMBER:
        return g_strdup(g_ascii_formatd(num, sizeof num, "%.17g", v));
    case MS_RANGE_TIME:
        return g_strconcat(g_ascii_formatd(num, sizeof num, "%.17g", v), "s", NULL);
    case MS_RANGE_BANDWIDTH:
        return g_strconcat(g_ascii_formatd(num, sizeof num, "%.17g", v), "Bps", NULL);
    case MS_RANGE_FLOPS:
        return g_strconcat(g_ascii_formatd(num, sizeof num, "%.17g", v), "FLOPS", NULL);
    /* A value past the bounds (a walk's beyond the last) is no spelling at all. */
    case MS_RANGE_BOOLEAN:
        return g_strdup(v == 1 ? "true" : v == 0 ? "false" : "(neither)");
    case MS_RANGE_CHOICE:
        return v >= 0 && v <= range->max && v == floor(v) ? g_strdup(range->names[(gsize)v])
                                                          : g_strdup("(none of these)");
    }
    g_return_val_if_reached(NULL);
}

gboolean
ms_range_check(const MsRange *range, double v, const char *text, GError **error)
{
    if (v >= range->min && v <= range->max) {
        return TRUE;
    }
    g_autofree char *lo = ms_range_format(range, range->min);
    g_autofree char *hi = ms_range_format(range, range->max);
    g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE,
                "'%s' out of range (must be between %s and %s)", text, lo, hi);
    return FALSE;
}

static gboolean
parse_value(const MsRange *range, const char *text, double *v, GError **error)
{
    static const MsUnitKind kinds[] = {
        [MS_RANGE_BYTES] = MS_UNIT_BYTES,
        [MS_RANGE_TIME] = MS_UNIT_TIME,
        [MS_RANGE_BANDWIDTH] = MS_UNIT_BANDWIDTH,
        [MS_RANGE_FLOPS] = MS_UNIT_FLOPS,
    };
    guint64 u = 0;
    switch (range->unit) {
    case MS_RANGE_BOOLEAN:
        if (text && (g_ascii_strcasecmp(text, "true") == 0 || strcmp(text, "1") == 0 ||
                     g_ascii_strcasecmp(text, "yes") == 0)) {
            *v = 1;
            return TRUE;
        }
        if (text && (g_ascii_strcasecmp(text, "false") == 0 || strcmp(text, "0") == 0 ||
                     g_ascii_strcasecmp(text, "no") == 0)) {
            *v = 0;
            return TRUE;
        }
        g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_SYNTAX,
                    "'%s' is not a boolean (true/false)", text ? text : "");
        return FALSE;
    case MS_RANGE_CHOICE: {
        for (guint i = 0; text && range->names[i]; i++) {
            if (strcmp(text, range->names[i]) == 0) {
                *v = i;
                return TRUE;
            }
        }
        g_autofree char *list = g_strjoinv(", ", (char **)range->names);
        g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_SYNTAX, "'%s' is not one of: %s",
                    text ? text : "", list);
        return FALSE;
    }
    case MS_RANGE_COUNT:
        /* A sign is refused as a syntax error by the parser; say what the range is instead. */
        if (text && text[0] == '-' && g_ascii_isdigit(text[1])) {
            *v = -1;
            return TRUE;
        }
        if (!ms_parse_uint(text, 0, G_MAXUINT64, &u, error)) {
            return FALSE;
        }
        *v = (double)u;
        return TRUE;
    case MS_RANGE_NUMBER:
        return ms_parse_double(text, -G_MAXDOUBLE, G_MAXDOUBLE, v, error);
    case MS_RANGE_BYTES:
    case MS_RANGE_TIME:
    case MS_RANGE_BANDWIDTH:
    case MS_RANGE_FLOPS:
        return ms_parse_unit_value(text, kinds[range->unit], v, error);
    }
    g_return_val_if_reached(FALSE);
}

gboolean
ms_range_parse(const MsRange *range, const char *text, double *out, GError **error)
{
    g_return_val_if_fail(range != NULL, FALSE);
    double v = 0;
    if (!parse_value(range, text, &v, error) || !ms_range_check(range, v, text, error)) {
        return FALSE;
    }
    if (range->unit == MS_RANGE_BYTES && v != floor(v)) {
        g_set_error(error, MS_UNITS_ERROR, MS_UNITS_ERROR_RANGE,
                    "size '%s' is not a whole number of bytes", text);
        return FALSE;
    }
    *out = v;
    return TRUE;
}
