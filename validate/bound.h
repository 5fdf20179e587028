/* bound: limits given on the command line as percentages ("2%", "0.5%"), read the same way by
 * every command that takes one (check --tolerance, validate --max-error). A bare number is
 * refused: read as a fraction, "5" allowed 500% where its user meant 5%, and a refused number
 * costs less than a gate that silently lets everything through. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define MS_BOUND_ERROR (ms_bound_error_quark())
GQuark ms_bound_error_quark(void);
typedef enum {
    MS_BOUND_ERROR_NUMBER, /* not a number */
    MS_BOUND_ERROR_UNIT,   /* a number without '%' */
    MS_BOUND_ERROR_RANGE,  /* below 0% or above MS_BOUND_MAX_PERCENT */
} MsBoundError;

/* Far beyond any meaningful error or tolerance (a factor of 10,000), small enough to catch a
 * slip of the keyboard. */
#define MS_BOUND_MAX_PERCENT 1e6

/* Parses "P%" (0 <= P <= MS_BOUND_MAX_PERCENT, blanks around P allowed) into the fraction
 * P / 100. Errors say what is wrong without the text (the caller names the option and quotes
 * it): "not a number or percentage", "no '%': a bound is a percentage, e.g. 5%", "out of range
 * (0% to 1e+06%)". */
gboolean ms_bound_parse_percent(const char *text, double *fraction, GError **error);

G_END_DECLS
