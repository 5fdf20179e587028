/* moesim_csv: the reader of "# moesim-measurements N" files (versions 1 and 2) into a measurement
 * set, and the set written as one, in the oldest version that holds its rows. The format itself
 * (columns, version line, how a row is written) is sim/calib/meas_csv.h's: an empty field means
 * "not measured"; lines are split by the CSV reader every CSV input shares (sim/base/csv.h). */
#include "moesim_csv.h"

#include <math.h>
#include <string.h>

#include "sim/base/output_file.h"
#include "sim/base/units.h"

#define US_MAX 1e12 /* 11.6 days: no single measured call lasts longer */

typedef struct {
    const char *source;
    guint line;
    guint version;
    gint index[MS_MEAS_N_COLS]; /* field index of each column, -1 when absent */
    guint n_fields;
    MsCsvFields *fields; /* of the line being read */
} Reader;

/* Every message names SOURCE:LINE of the line being read. */
#define FAIL_AT(error, code, r, ...)                                                               \
    ms_measurement_fail(error, code, (r)->source, (r)->line, __VA_ARGS__)

static gboolean
read_version(Reader *r, const char *line, GError **error)
{
    r->line = 1;
    if (line == NULL || !g_str_has_prefix(line, MS_MOESIM_CSV_PREFIX)) {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_FORMAT, r,
                       "a moesim CSV starts with '" MS_MOESIM_CSV_PREFIX " %d'",
                       MS_MOESIM_CSV_VERSION);
    }
    g_autofree char *rest = g_strstrip(g_strdup(line + strlen(MS_MOESIM_CSV_PREFIX)));
    guint64 v = 0;
    if (!ms_parse_uint(rest, MS_MOESIM_CSV_OLDEST, MS_MOESIM_CSV_VERSION, &v, NULL)) {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_FORMAT, r,
                       "version '%s' is not one this moesim reads (it reads %d to %d)", rest,
                       MS_MOESIM_CSV_OLDEST, MS_MOESIM_CSV_VERSION);
    }
    r->version = (guint)v;
    return TRUE;
}

static gboolean
read_header(Reader *r, const char *line, GError **error)
{
    if (!ms_measurement_split_csv(r->fields, r->source, r->line, line, error)) {
        return FALSE;
    }
    guint n = ms_csv_fields_width(r->fields);
    g_auto(GStrv) names = ms_csv_fields_dup(r->fields);
    for (guint c = 0; c < MS_MEAS_N_COLS; c++) {
        r->index[c] = -1;
    }
    for (guint i = 0; i < n; i++) {
        MsMeasColumn c;
        if (!ms_meas_csv_column_from_name(names[i], &c)) {
            g_autoptr(GString) known = g_string_new(NULL);
            for (guint k = 0; k < MS_MEAS_N_COLS; k++) {
                g_string_append_printf(known, "%s%s", k ? ", " : "", ms_meas_csv_column_name(k));
            }
            return FAIL_AT(error, MS_MEASUREMENT_ERROR_SYNTAX, r,
                           "unknown column '%s' (columns: %s)", names[i], known->str);
        }
        if (r->index[c] >= 0) {
            return FAIL_AT(error, MS_MEASUREMENT_ERROR_SYNTAX, r, "column '%s' given twice",
                           names[i]);
        }
        if (ms_meas_csv_column_version(c) > r->version) {
            return FAIL_AT(error, MS_MEASUREMENT_ERROR_SYNTAX, r,
                           "column '%s' is one of version %u, but the file says version %u",
                           names[i], ms_meas_csv_column_version(c), r->version);
        }
        r->index[c] = (gint)i;
    }
    static const MsMeasColumn required[] = {MS_MEAS_COL_KIND, MS_MEAS_COL_TIME};
    for (guint i = 0; i < G_N_ELEMENTS(required); i++) {
        if (r->index[required[i]] < 0) {
            return FAIL_AT(error, MS_MEASUREMENT_ERROR_MISSING, r,
                           "required column '%s' is missing", ms_meas_csv_column_name(required[i]));
        }
    }
    r->n_fields = n;
    return TRUE;
}

/* The field of a column, "" when the column is absent. */
static const char *
field(const Reader *r, char **fields, MsMeasColumn c)
{
    return r->index[c] >= 0 ? fields[r->index[c]] : "";
}

static gboolean
uint_field(const Reader *r, char **fields, MsMeasColumn c, guint64 max, guint64 dflt, guint64 *out,
           GError **error)
{
    const char *t = field(r, fields, c);
    if (*t == '\0') {
        *out = dflt;
        return TRUE;
    }
    return ms_measurement_parse_uint(r->source, r->line, ms_meas_csv_column_name(c), t, 0, max, out,
                                     error);
}

/* A time in microseconds -> seconds; empty gives NAN unless required. */
static gboolean
time_field(const Reader *r, char **fields, MsMeasColumn c, gboolean required, double *out,
           GError **error)
{
    const char *t = field(r, fields, c);
    if (*t == '\0') {
        if (required) {
            return FAIL_AT(error, MS_MEASUREMENT_ERROR_VALUE, r, "%s: empty, but required",
                           ms_meas_csv_column_name(c));
        }
        *out = NAN;
        return TRUE;
    }
    double us;
    if (!ms_measurement_parse_double(r->source, r->line, ms_meas_csv_column_name(c), t, -US_MAX,
                                     US_MAX, &us, error)) {
        return FALSE;
    }
    if (!(us > 0)) {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_VALUE, r, "%s: '%s' is not a positive time",
                       ms_meas_csv_column_name(c), t);
    }
    *out = us * 1e-6;
    return TRUE;
}

static gboolean
read_counts(const Reader *r, char **f, MsMeasurement *row, GError **error)
{
    guint64 ranks, rpn, dims[3];
    if (!uint_field(r, f, MS_MEAS_COL_BYTES, MS_BYTES_MAX, 0, &row->bytes, error) ||
        !uint_field(r, f, MS_MEAS_COL_RANKS, G_MAXUINT32, 1, &ranks, error) ||
        !uint_field(r, f, MS_MEAS_COL_RANKS_PER_NODE, G_MAXUINT32, ranks, &rpn, error)) {
        return FALSE;
    }
    for (guint i = 0; i < 3; i++) {
        if (!uint_field(r, f, MS_MEAS_COL_M + i, G_MAXUINT64, 0, &dims[i], error)) {
            return FALSE;
        }
    }
    guint64 channels, qps;
    if (!uint_field(r, f, MS_MEAS_COL_BACKGROUND_BYTES, MS_BYTES_MAX, 0, &row->background_bytes,
                    error) ||
        !uint_field(r, f, MS_MEAS_COL_CHANNELS, MS_MEAS_MAX_CHANNELS, 0, &channels, error) ||
        !uint_field(r, f, MS_MEAS_COL_QPS, MS_MEAS_MAX_QPS, 0, &qps, error)) {
        return FALSE;
    }
    row->channels = (guint32)channels;
    row->qps = (guint32)qps;
    row->ranks = (guint32)ranks;
    row->ranks_per_node = (guint32)rpn;
    row->m = dims[0];
    row->n = dims[1];
    row->k = dims[2];
    return TRUE;
}

static gboolean
read_row(MsMeasurementSet *set, const Reader *r, const char *line, GError **error)
{
    g_autoptr(GError) local = NULL;
    if (!ms_measurement_split_csv(r->fields, r->source, r->line, line, error)) {
        return FALSE;
    }
    if (!ms_csv_fields_check_width(r->fields, r->n_fields, &local)) {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_SYNTAX, r, "%s", local->message);
    }
    g_auto(GStrv) f = ms_csv_fields_dup(r->fields);
    MsMeasurement row = {.source = r->source, .line = r->line};
    const char *kind = field(r, f, MS_MEAS_COL_KIND);
    if (!ms_measurement_kind_from_name(kind, &row.kind) ||
        ms_meas_csv_kind_version(row.kind) > r->version) {
        g_autoptr(GString) known = g_string_new(NULL);
        for (guint k = 0; k < MS_MEASUREMENT_N_KINDS; k++) {
            if (ms_meas_csv_kind_version(k) <= r->version) {
                g_string_append_printf(known, "%s%s", k ? ", " : "", ms_measurement_kind_name(k));
            }
        }
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_VALUE, r,
                       "kind: '%s' is not one of %s (the kinds of version %u)", kind, known->str,
                       r->version);
    }
    if (!read_counts(r, f, &row, error) ||
        !time_field(r, f, MS_MEAS_COL_TIME, TRUE, &row.seconds, error) ||
        !time_field(r, f, MS_MEAS_COL_MIN, FALSE, &row.min_s, error) ||
        !time_field(r, f, MS_MEAS_COL_MEDIAN, FALSE, &row.median_s, error) ||
        !time_field(r, f, MS_MEAS_COL_MEAN, FALSE, &row.mean_s, error)) {
        return FALSE;
    }
    const char *dtype = field(r, f, MS_MEAS_COL_DTYPE);
    row.dtype = *dtype ? dtype : NULL;
    row.label = field(r, f, MS_MEAS_COL_LABEL);
    return ms_measurement_set_add(set, &row, error);
}

gboolean
ms_moesim_csv_read(MsMeasurementSet *set, const char *data, gsize len, const char *source,
                   GError **error)
{
    g_autoptr(MsCsvFields) fields = ms_csv_fields_new();
    Reader r = {.source = source ? source : "<input>", .fields = fields};
    gsize pos = ms_csv_bom_length(data, len);
    g_autofree char *first = ms_csv_next_line(data, len, &pos);
    if (!read_version(&r, first, error)) {
        return FALSE;
    }
    gboolean have_header = FALSE;
    char *raw;
    while ((raw = ms_csv_next_line(data, len, &pos)) != NULL) {
        g_autofree char *line = g_strstrip(raw);
        r.line++;
        if (line[0] == '\0' || line[0] == '#') {
            continue;
        }
        gboolean ok = have_header ? read_row(set, &r, line, error) : read_header(&r, line, error);
        if (!ok) {
            return FALSE;
        }
        have_header = TRUE;
    }
    if (!have_header) {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_MISSING, &r,
                       "no column header after the version line");
    }
    return TRUE;
}

char *
ms_moesim_csv_write(const MsMeasurementSet *set, gsize *len)
{
    GString *s = g_string_new(NULL);
    guint version = MS_MOESIM_CSV_OLDEST;
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        version = MAX(version, ms_meas_csv_row_version(ms_measurement_set_get(set, i)));
    }
    ms_meas_csv_write_header(s, version);
    for (guint i = 0; i < ms_measurement_set_size(set); i++) {
        ms_meas_csv_write_row(s, ms_measurement_set_get(set, i), version);
    }
    if (len) {
        *len = s->len;
    }
    return g_string_free(s, FALSE);
}

gboolean
ms_moesim_csv_save(const MsMeasurementSet *set, const char *path, GError **error)
{
    gsize len = 0;
    g_autofree char *text = ms_moesim_csv_write(set, &len);
    g_autoptr(GError) local = NULL;
    if (!ms_output_file_set_contents(path, MS_OUTPUT_REPLACE, text, len, &local)) {
        g_set_error(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_IO, "%s", local->message);
        return FALSE;
    }
    return TRUE;
}
