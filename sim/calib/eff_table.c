/* eff_table: per-size efficiency tables (see eff_table.h). */
#include "eff_table.h"

#include <math.h>
#include <string.h>

#include "sim/compute.h"

G_DEFINE_QUARK(ms_eff_table_error_quark, ms_eff_table_error)

static MsEffTable *
table_new_unchecked(const double *sizes, const double *ratios, guint n)
{
    MsEffTable *t = g_new0(MsEffTable, 1);
    t->n = n;
    t->sizes = g_new(double, n);
    t->ratios = g_new(double, n);
    memcpy(t->sizes, sizes, n * sizeof(double));
    memcpy(t->ratios, ratios, n * sizeof(double));
    return t;
}

static gboolean
check_table(const double *sizes, const double *ratios, guint n, GError **error)
{
    if (n == 0) {
        g_set_error(error, MS_EFF_TABLE_ERROR, MS_EFF_TABLE_ERROR_INPUT,
                    "an efficiency table needs entries");
        return FALSE;
    }
    for (guint i = 0; i < n; i++) {
        if (!(sizes[i] > 0) || !isfinite(sizes[i]) || (i > 0 && !(sizes[i] > sizes[i - 1]))) {
            g_set_error(error, MS_EFF_TABLE_ERROR, MS_EFF_TABLE_ERROR_INPUT,
                        "entry %u: size %g (sizes must be > 0 and strictly increasing)", i,
                        sizes[i]);
            return FALSE;
        }
        if (!(ratios[i] >= MS_EFF_RATIO_MIN) || !(ratios[i] <= MS_EFF_RATIO_MAX)) {
            g_set_error(error, MS_EFF_TABLE_ERROR, MS_EFF_TABLE_ERROR_INPUT,
                        "entry %u: ratio %g is outside [%g, %g]", i, ratios[i], MS_EFF_RATIO_MIN,
                        MS_EFF_RATIO_MAX);
            return FALSE;
        }
    }
    return TRUE;
}

MsEffTable *
ms_eff_table_new(const double *sizes, const double *ratios, guint n, GError **error)
{
    if (!check_table(sizes, ratios, n, error)) {
        return NULL;
    }
    return table_new_unchecked(sizes, ratios, n);
}

void
ms_eff_table_free(MsEffTable *table)
{
    if (table == NULL) {
        return;
    }
    g_free(table->sizes);
    g_free(table->ratios);
    g_free(table);
}

double
ms_eff_table_eval(const MsEffTable *table, double size)
{
    return ms_log_interp(table->sizes, table->ratios, table->n, size, FALSE);
}

void
ms_gemm_curve_free(MsGemmCurve *curve)
{
    if (curve == NULL) {
        return;
    }
    g_free(curve->tokens);
    g_free(curve->efficiency);
    g_free(curve);
}

double
ms_gemm_curve_eval(const MsGemmCurve *curve, double tokens)
{
    return ms_log_interp(curve->tokens, curve->efficiency, curve->n, tokens, TRUE);
}
