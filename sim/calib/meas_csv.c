/* meas_csv: the columns and the writer of "# moesim-measurements N" files. The columns carry their
 * unit in their name (time_us), so values are plain numbers; an empty field means "not measured".
 * A label or dtype holding a comma or a quote is quoted (sim/base/csv.h), as the reader expects. */
#include "meas_csv.h"

#include <math.h>
#include <string.h>

#include "sim/base/csv.h"

static const char *const col_names[MS_MEAS_N_COLS] = {
    "kind",     "bytes", "ranks",   "ranks_per_node", "m",         "n",       "k",
    "dtype",    "label", "time_us", "min_us",         "median_us", "mean_us", "background_bytes",
    "channels", "qps",
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

guint
ms_meas_csv_column_version(MsMeasColumn column)
{
    return column >= MS_MEAS_COL_BACKGROUND_BYTES ? 2 : 1;
}

guint
ms_meas_csv_kind_version(MsMeasurementKind kind)
{
    return kind == MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE ? 2 : 1;
}

guint
ms_meas_csv_row_version(const MsMeasurement *row)
{
    guint v = ms_meas_csv_kind_version(row->kind);
    return row->background_bytes || row->channels || row->qps ? MAX(v, 2) : v;
}

void
ms_meas_csv_write_header(GString *out, guint version)
{
    g_return_if_fail(version >= MS_MOESIM_CSV_OLDEST && version <= MS_MOESIM_CSV_VERSION);
    g_string_append_printf(out, "%s %u\n", MS_MOESIM_CSV_PREFIX, version);
    for (guint c = 0; c < MS_MEAS_N_COLS; c++) {
        if (ms_meas_csv_column_version(c) <= version) {
            g_string_append_printf(out, "%s%s", c ? "," : "", col_names[c]);
        }
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
ms_meas_csv_write_row(GString *out, const MsMeasurement *r, guint version)
{
    g_return_if_fail(ms_meas_csv_row_version(r) <= version && version <= MS_MOESIM_CSV_VERSION);
    gboolean shaped = r->kind == MS_MEASUREMENT_GEMM || r->kind == MS_MEASUREMENT_ELEMENTWISE;
    g_string_append_printf(out, "%s,%" G_GUINT64_FORMAT ",%u,%u", ms_measurement_kind_name(r->kind),
                           r->bytes, r->ranks, r->ranks_per_node);
    append_dim(out, shaped, r->m);
    append_dim(out, shaped, r->n);
    append_dim(out, shaped, r->k);
    g_string_append_c(out, ',');
    ms_csv_append_field(out, r->dtype ? r->dtype : "");
    g_string_append_c(out, ',');
    ms_csv_append_field(out, r->label ? r->label : "");
    append_time(out, r->seconds);
    append_time(out, r->min_s);
    append_time(out, r->median_s);
    append_time(out, r->mean_s);
    if (version >= 2) {
        append_dim(out, TRUE, r->background_bytes);
        append_dim(out, TRUE, r->channels);
        append_dim(out, TRUE, r->qps);
    }
    g_string_append_c(out, '\n');
}
