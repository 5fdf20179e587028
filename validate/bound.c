/* bound: percentages. */
#include "bound.h"

#include <string.h>

#include "sim/base/units.h"

G_DEFINE_QUARK(ms_bound_error_quark, ms_bound_error)

gboolean
ms_bound_parse_percent(const char *text, double *fraction, GError **error)
{
    g_autofree char *num = g_strstrip(g_strdup(text));
    gboolean pct = g_str_has_suffix(num, "%");
    if (pct) {
        num[strlen(num) - 1] = '\0';
        g_strstrip(num);
    }
    double v;
    if (!ms_parse_double(num, -G_MAXDOUBLE, G_MAXDOUBLE, &v, NULL)) {
        g_set_error(error, MS_BOUND_ERROR, MS_BOUND_ERROR_NUMBER, "not a number or percentage");
        return FALSE;
    }
    if (!pct) {
        g_set_error(error, MS_BOUND_ERROR, MS_BOUND_ERROR_UNIT,
                    "no '%%': a bound is a percentage, e.g. %s%%", num);
        return FALSE;
    }
    if (v < 0 || v > MS_BOUND_MAX_PERCENT) {
        g_set_error(error, MS_BOUND_ERROR, MS_BOUND_ERROR_RANGE, "out of range (0%% to %g%%)",
                    MS_BOUND_MAX_PERCENT);
        return FALSE;
    }
    *fraction = v / 100;
    return TRUE;
}
