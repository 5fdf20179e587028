/* meas_csv: the columns and the writer of "# moesim-measurements 1" files. The columns carry their
 * unit in their name (time_us), so values are plain numbers; an empty field means "not measured".
 * No field is ever quoted: labels may not contain commas (validate/measurement.h refuses them). */
#include "meas_csv.h"

#include <math.h>
#include <string.h>

static const char *const col_names[MS_MEAS_N_COLS] = {
    "kind",  "bytes", "ranks",   "ranks_per_node", "m",         "n",       "k",
    "dtype", "label", "time_us", "min_us",         "median_us", "mean_us",
};

const char *
ms_meas_csv_column_name(MsMeasColumn column)
{
    g_return_val_if_fail(column < MS_MEAS_N_COLS, "?");
    return col_names[column];
}

gboolean
ms_meas_csv_column_from_name(const char *name, MsMeasColumn *out)
{
    for (guint c = 0; name && c < MS_MEAS_N_COLS; c++) {
        if (strcmp(name, col_names[c]) == 0) {
            *out = (MsMeasColumn)c;
            return TRUE;
        }
    }
    return FALSE;
}

void
ms_meas_csv_write_header(GString *out)
{
    g_string_append_printf(out, "%s %d\n", MS_MOESIM_CSV_PREFIX, MS_MOESIM_CSV_VERSION);
    for (guint c = 0; c < MS_MEAS_N_COLS; c++) {
        g_string_append_printf(out, "%s%s", c ? "," : "", col_names[c]);
    }
    g_string_append_c(out, '\n');
}

static void
append_time(GString *s, double seconds)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append_c(s, ',');
    if (!isnan(seconds)) {
        g_string_append(s, g_ascii_formatd(buf, sizeof buf, "%.12g", seconds * 1e6));
    }
}

static void
append_dim(GString *s, gboolean shaped, guint64 v)
{
    g_string_append_c(s, ',');
    if (shaped && v > 0) {
        g_string_append_printf(s, "%" G_GUINT64_FORMAT, v);
    }
}

void
ms_meas_csv_write_row(GString *out, const MsMeasurement *r)
{
    gboolean shaped = r->kind == MS_MEASUREMENT_GEMM || r->kind == MS_MEASUREMENT_ELEMENTWISE;
    g_string_append_printf(out, "%s,%" G_GUINT64_FORMAT ",%u,%u", ms_measurement_kind_name(r->kind),
                           r->bytes, r->ranks, r->ranks_per_node);
    append_dim(out, shaped, r->m);
    append_dim(out, shaped, r->n);
    append_dim(out, shaped, r->k);
    g_string_append_printf(out, ",%s,%s", r->dtype ? r->dtype : "", r->label ? r->label : "");
    append_time(out, r->seconds);
    append_time(out, r->min_s);
    append_time(out, r->median_s);
    append_time(out, r->mean_s);
    g_string_append_c(out, '\n');
}
