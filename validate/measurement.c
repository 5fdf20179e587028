/* measurement: the row table, its validation, format detection and loading (files or the shipped
 * Vidur profiles), and the helpers the format readers share; the readers themselves are
 * moesim_csv.c, nccl_tests.c and vidur.c. */
#include "measurement.h"

#include <math.h>
#include <string.h>

#include "sim/base/input_file.h"
#include "sim/compute.h"
#include "sim/base/units.h"
#include "sim/base/json_input.h"
#include "validate/kineto.h"
#include "validate/moesim_csv.h"
#include "validate/ms-validate-data.h"
#include "validate/nccl_tests.h"
#include "validate/vidur.h"

G_DEFINE_QUARK(ms_measurement_error_quark, ms_measurement_error)

#define RANKS_MAX (1u << 20)
#define SHAPE_MAX (G_GUINT64_CONSTANT(1) << 32)
#define LABEL_MAX 256
#define ROW "a measurement row"
#define TIME_REASON                                                                                \
    "no kernel or NCCL call takes under a nanosecond or over 11.6 days; bytes / time stays finite"

/* Every number a measurement row carries, whatever format it was read from (docs/bad-inputs.md
 * is generated from this table, and tests/test_input_ranges.c walks it). The formats' readers
 * check their own columns first (nccl_tests.c has its table). */
static const MsRange row_fields[] = {
    {ROW, "time", MS_RANGE_TIME, 1e-9, 1e6, TIME_REASON},
    {ROW, "min", MS_RANGE_TIME, 1e-9, 1e6, TIME_REASON},
    {ROW, "median", MS_RANGE_TIME, 1e-9, 1e6, TIME_REASON},
    {ROW, "mean", MS_RANGE_TIME, 1e-9, 1e6, TIME_REASON},
    {ROW, "ranks", MS_RANGE_COUNT, 1, RANKS_MAX,
     "2^20 GPUs, 16 times the largest machine moesim models"},
    {ROW, "ranks_per_node", MS_RANGE_COUNT, 1, RANKS_MAX, "and at most ranks"},
    {ROW, "bytes", MS_RANGE_BYTES, 0, (double)MS_BYTES_MAX, "as every size moesim reads"},
    {ROW, "m", MS_RANGE_COUNT, 0, (double)SHAPE_MAX,
     "a GEMM's rows (tokens); at least 1 for a GEMM, 0 for other kinds"},
    {ROW, "n", MS_RANGE_COUNT, 0, (double)SHAPE_MAX, "as m; 2 m n k flops stay below 2^98"},
    {ROW, "k", MS_RANGE_COUNT, 0, (double)SHAPE_MAX, "as m"},
    {ROW, "background_bytes", MS_RANGE_BYTES, 0, (double)MS_BYTES_MAX,
     "the allreduce looping under an all-to-all or a kernel; at least 1 B on an "
     "alltoall_under_allreduce row, 0 or more on gemm and elementwise rows, 0 on the others"},
    {ROW, "channels", MS_RANGE_COUNT, 0, MS_MEAS_MAX_CHANNELS,
     "NCCL's MAXCHANNELS (64 since 2.19); 0: NCCL's choice, the only value of a kind without "
     "NCCL"},
    {ROW, "qps", MS_RANGE_COUNT, 0, MS_MEAS_MAX_QPS,
     "NCCL_IB_MAX_QPS (128); 0: NCCL's default, the only value of a kind without NCCL"},
    {NULL},
};

static const MsRangeTable ranges = {"Measurements", row_fields};

const MsRangeTable *
ms_measurement_ranges(void)
{
    return &ranges;
}

static const MsRange *
F(const char *key)
{
    return ms_range_find(row_fields, ROW, key);
}
#define SHIPPED_PREFIX "/org/moesim/validate/data/"

struct _MsMeasurementSet {
    GArray *rows;          /* MsMeasurement */
    GStringChunk *strings; /* labels, dtypes and sources of the rows */
};

static const struct {
    const char *name;
    guint size;
} dtypes[] = {
    {"fp64", 8},     {"fp32", 4},     {"tf32", 4},   {"fp16", 2},  {"bf16", 2},
    {"fp8_e4m3", 1}, {"fp8_e5m2", 1}, {"int8", 1},   {"uint8", 1}, {"int32", 4},
    {"uint32", 4},   {"int64", 8},    {"uint64", 8},
};

guint
ms_dtype_size(const char *dtype)
{
    for (guint i = 0; dtype && i < G_N_ELEMENTS(dtypes); i++) {
        if (strcmp(dtype, dtypes[i].name) == 0) {
            return dtypes[i].size;
        }
    }
    return 0;
}

MsMeasurementSet *
ms_measurement_set_new(void)
{
    MsMeasurementSet *set = g_new0(MsMeasurementSet, 1);
    set->rows = g_array_new(FALSE, TRUE, sizeof(MsMeasurement));
    set->strings = g_string_chunk_new(4096);
    return set;
}

void
ms_measurement_set_free(MsMeasurementSet *set)
{
    if (set == NULL) {
        return;
    }
    g_array_unref(set->rows);
    g_string_chunk_free(set->strings);
    g_free(set);
}

guint
ms_measurement_set_size(const MsMeasurementSet *set)
{
    return set->rows->len;
}

const MsMeasurement *
ms_measurement_set_get(const MsMeasurementSet *set, guint i)
{
    g_return_val_if_fail(i < set->rows->len, NULL);
    return &g_array_index(set->rows, MsMeasurement, i);
}

/* "SOURCE:LINE" of a row, or just SOURCE for rows built in memory. */
static char *
row_where(const MsMeasurement *row)
{
    const char *src = row->source ? row->source : "<memory>";
    return row->line ? g_strdup_printf("%s:%u", src, row->line) : g_strdup(src);
}

static gboolean G_GNUC_PRINTF(4, 5)
    row_error(const MsMeasurement *row, GError **error, const char *field, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_autofree char *where = row_where(row);
    g_set_error(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_VALUE, "%s: %s: %s", where, field,
                msg);
    return FALSE;
}

/* A value of the table; text quotes it in the message. */
static gboolean
check_field(const MsMeasurement *row, const char *key, double v, const char *unit, GError **error)
{
    gboolean whole = v == floor(v) && fabs(v) < 1e17;
    g_autofree char *text = g_strdup_printf(whole ? "%.0f%s" : "%.9g%s", v, unit);
    g_autoptr(GError) local = NULL;
    if (!ms_range_check(F(key), v, text, &local)) {
        return row_error(row, error, key, "%s", local->message);
    }
    return TRUE;
}

static gboolean
check_time(const MsMeasurement *row, const char *field, double v, gboolean optional, GError **error)
{
    if (optional && isnan(v)) {
        return TRUE;
    }
    if (isnan(v)) {
        return row_error(row, error, field, "%g s is not a positive finite time", v);
    }
    return check_field(row, field, v, " s", error);
}

static gboolean
check_label(const MsMeasurement *row, GError **error)
{
    const char *l = row->label ? row->label : "";
    if (strlen(l) > LABEL_MAX) {
        return row_error(row, error, "label", "longer than %d characters", LABEL_MAX);
    }
    /* Commas and quotes are written quoted; a line end would split the record. */
    for (const char *p = l; *p; p++) {
        if (g_ascii_iscntrl(*p)) {
            return row_error(row, error, "label", "'%s' contains a control character", l);
        }
    }
    return TRUE;
}

static gboolean
check_shape(const MsMeasurement *row, GError **error)
{
    gboolean shaped = row->kind == MS_MEASUREMENT_GEMM || row->kind == MS_MEASUREMENT_ELEMENTWISE;
    const guint64 dims[3] = {row->m, row->n, row->k};
    const char *names[3] = {"m", "n", "k"};
    for (guint i = 0; i < 3; i++) {
        if (!shaped && dims[i] != 0) {
            return row_error(row, error, names[i], "%" G_GUINT64_FORMAT ": a %s row has no shape",
                             dims[i], ms_measurement_kind_name(row->kind));
        }
        gboolean needed = row->kind == MS_MEASUREMENT_GEMM;
        if (!check_field(row, names[i], (double)dims[i], "", error)) {
            return FALSE;
        }
        if (needed && dims[i] == 0) {
            return row_error(row, error, names[i],
                             "%" G_GUINT64_FORMAT " is outside [1, 2^32] for a %s row", dims[i],
                             ms_measurement_kind_name(row->kind));
        }
    }
    if (row->kind == MS_MEASUREMENT_GEMM && ms_dtype_size(row->dtype) == 0) {
        return row_error(row, error, "dtype",
                         "'%s' is not a dtype moesim knows (fp16, bf16, "
                         "fp32, tf32, fp8_e4m3, ...)",
                         row->dtype ? row->dtype : "");
    }
    return TRUE;
}

/* The concurrency kind's sizes, and NCCL's configuration on the kinds that run NCCL. */
static gboolean
check_network(const MsMeasurement *row, GError **error)
{
    const char *kind = ms_measurement_kind_name(row->kind);
    gboolean under = row->kind == MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE;
    if (under && (row->bytes == 0 || row->ranks < 2)) {
        return row_error(row, error, row->bytes == 0 ? "bytes" : "ranks",
                         "an alltoall_under_allreduce row needs an all-to-all of at least 1 byte "
                         "over at least 2 ranks");
    }
    /* The table's ranges first, then what each kind allows within them. */
    if (!check_field(row, "background_bytes", (double)row->background_bytes, " B", error) ||
        !check_field(row, "channels", row->channels, "", error) ||
        !check_field(row, "qps", row->qps, "", error)) {
        return FALSE;
    }
    gboolean kernel = row->kind == MS_MEASUREMENT_GEMM || row->kind == MS_MEASUREMENT_ELEMENTWISE;
    if ((under && row->background_bytes == 0) || (!under && !kernel && row->background_bytes > 0)) {
        return row_error(row, error, "background_bytes", "%" G_GUINT64_FORMAT ": %s",
                         row->background_bytes,
                         under ? "the allreduce's size is required, 1 B to 1 PiB"
                               : "only alltoall_under_allreduce, gemm and elementwise rows have "
                                 "a background");
    }
    gboolean nccl = ms_measurement_kind_is_network(row->kind);
    if (!nccl && row->channels) {
        return row_error(row, error, "channels", "%u: a %s row does not run NCCL", row->channels,
                         kind);
    }
    if (!nccl && row->qps) {
        return row_error(row, error, "qps", "%u: a %s row does not run NCCL", row->qps, kind);
    }
    if (row->gpus_per_thread > row->ranks || row->threads > row->ranks) {
        return row_error(row, error, row->threads > row->ranks ? "threads" : "gpus_per_thread",
                         "%u threads x %u GPUs per thread: more than the row's %u ranks",
                         row->threads, row->gpus_per_thread, row->ranks);
    }
    return TRUE;
}

static gboolean
check_row(const MsMeasurement *row, GError **error)
{
    if (!check_time(row, "time", row->seconds, FALSE, error) ||
        !check_time(row, "min", row->min_s, TRUE, error) ||
        !check_time(row, "median", row->median_s, TRUE, error) ||
        !check_time(row, "mean", row->mean_s, TRUE, error)) {
        return FALSE;
    }
    if (!check_field(row, "ranks", row->ranks, "", error) ||
        !check_field(row, "ranks_per_node", row->ranks_per_node, "", error) ||
        !check_field(row, "bytes", (double)row->bytes, " B", error)) {
        return FALSE;
    }
    if (row->ranks_per_node > row->ranks) {
        return row_error(row, error, "ranks_per_node", "%u is outside [1, ranks = %u]",
                         row->ranks_per_node, row->ranks);
    }
    if (row->kind == MS_MEASUREMENT_ELEMENTWISE && row->bytes == 0) {
        return row_error(row, error, "bytes", "an elementwise row needs the bytes it moves");
    }
    if (row->dtype && ms_dtype_size(row->dtype) == 0) {
        return row_error(row, error, "dtype", "'%s' is not a dtype moesim knows", row->dtype);
    }
    return check_shape(row, error) && check_network(row, error) && check_label(row, error);
}

gboolean
ms_measurement_overlapped(const MsMeasurement *row)
{
    return (row->kind == MS_MEASUREMENT_GEMM || row->kind == MS_MEASUREMENT_ELEMENTWISE) &&
           row->background_bytes > 0;
}

static void
append_unchecked(MsMeasurementSet *set, const MsMeasurement *row)
{
    MsMeasurement copy = *row;
    copy.label = g_string_chunk_insert_const(set->strings, row->label ? row->label : "");
    copy.dtype = row->dtype ? g_string_chunk_insert_const(set->strings, row->dtype) : NULL;
    copy.source = g_string_chunk_insert_const(set->strings, row->source ? row->source : "");
    g_array_append_val(set->rows, copy);
}

gboolean
ms_measurement_set_add(MsMeasurementSet *set, const MsMeasurement *row, GError **error)
{
    g_return_val_if_fail(set != NULL && row != NULL, FALSE);
    g_return_val_if_fail(row->kind < MS_MEASUREMENT_N_KINDS, FALSE);
    if (!check_row(row, error)) {
        return FALSE;
    }
    append_unchecked(set, row);
    return TRUE;
}

/* ---- helpers for the readers ----------------------------------------------------------------- */

gboolean
ms_measurement_fail(GError **error, MsMeasurementError code, const char *source, guint line,
                    const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, MS_MEASUREMENT_ERROR, code, "%s:%u: %s", source, line, msg);
    return FALSE;
}

gboolean
ms_measurement_parse_double(const char *source, guint line, const char *field, const char *text,
                            double min, double max, double *out, GError **error)
{
    g_autoptr(GError) local = NULL;
    if (!ms_parse_double(text, min, max, out, &local)) {
        g_set_error(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_VALUE, "%s:%u: %s: %s",
                    source, line, field, local->message);
        return FALSE;
    }
    return TRUE;
}

gboolean
ms_measurement_parse_uint(const char *source, guint line, const char *field, const char *text,
                          guint64 min, guint64 max, guint64 *out, GError **error)
{
    g_autoptr(GError) local = NULL;
    if (!ms_parse_uint(text, min, max, out, &local)) {
        g_set_error(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_VALUE, "%s:%u: %s: %s",
                    source, line, field, local->message);
        return FALSE;
    }
    return TRUE;
}

gboolean
ms_measurement_split_csv(MsCsvFields *fields, const char *source, guint line, const char *text,
                         GError **error)
{
    g_autoptr(GError) local = NULL;
    if (!ms_csv_fields_split(fields, text, &local)) {
        return ms_measurement_fail(error, MS_MEASUREMENT_ERROR_SYNTAX, source, line, "%s",
                                   local->message);
    }
    return TRUE;
}

/* ---- formats and loading --------------------------------------------------------------------- */

const char *
ms_measurement_format_name(MsMeasurementFormat format)
{
    switch (format) {
    case MS_MEASUREMENT_FORMAT_MOESIM:
        return "moesim CSV";
    case MS_MEASUREMENT_FORMAT_NCCL_TESTS:
        return "nccl-tests log";
    case MS_MEASUREMENT_FORMAT_VIDUR_NETWORK:
        return "Vidur network profile";
    case MS_MEASUREMENT_FORMAT_VIDUR_COMPUTE:
        return "Vidur compute profile";
    case MS_MEASUREMENT_FORMAT_KINETO:
        return "PyTorch profiler trace";
    case MS_MEASUREMENT_FORMAT_UNKNOWN:
        break;
    }
    return "unknown";
}

static MsMeasurementFormat
sniff_csv_header(const char *line)
{
    if (g_str_has_prefix(line, "# moesim-measurements")) {
        return MS_MEASUREMENT_FORMAT_MOESIM;
    }
    if (strstr(line, "time_stats.") == NULL) {
        return MS_MEASUREMENT_FORMAT_UNKNOWN;
    }
    g_autoptr(MsCsvFields) fields = ms_csv_fields_new();
    if (!ms_csv_fields_split(fields, line, NULL)) {
        return MS_MEASUREMENT_FORMAT_UNKNOWN;
    }
    g_auto(GStrv) cols = ms_csv_fields_dup(fields);
    if (ms_csv_column(cols, "num_tokens") >= 0) {
        return MS_MEASUREMENT_FORMAT_VIDUR_COMPUTE;
    }
    if (ms_csv_column(cols, "num_workers") >= 0 && ms_csv_column(cols, "size") >= 0) {
        return MS_MEASUREMENT_FORMAT_VIDUR_NETWORK;
    }
    return MS_MEASUREMENT_FORMAT_UNKNOWN;
}

MsMeasurementFormat
ms_measurement_sniff(const char *data, gsize len)
{
    gsize pos = 0;
    g_autofree char *first = ms_csv_next_line(data, len, &pos);
    if (first == NULL) {
        return MS_MEASUREMENT_FORMAT_UNKNOWN;
    }
    MsMeasurementFormat f = sniff_csv_header(first);
    if (f != MS_MEASUREMENT_FORMAT_UNKNOWN) {
        return f;
    }
    if (ms_kineto_sniff(data, len)) {
        return MS_MEASUREMENT_FORMAT_KINETO;
    }
    return ms_nccl_tests_sniff(data, len) ? MS_MEASUREMENT_FORMAT_NCCL_TESTS
                                          : MS_MEASUREMENT_FORMAT_UNKNOWN;
}

static gboolean
read_format(MsMeasurementSet *set, const char *data, gsize len, const char *source,
            const MsMeasurementReadOptions *opts, GError **error)
{
    if (memchr(data, '\0', len) != NULL) {
        g_set_error(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_FORMAT,
                    "%s: contains a NUL byte: not a text measurement file", source);
        return FALSE;
    }
    switch (ms_measurement_sniff(data, len)) {
    case MS_MEASUREMENT_FORMAT_MOESIM:
        return ms_moesim_csv_read(set, data, len, source, error);
    case MS_MEASUREMENT_FORMAT_NCCL_TESTS: {
        g_autofree char *base = g_path_get_basename(source);
        MsMeasurementKind hint = MS_MEASUREMENT_N_KINDS;
        ms_nccl_tests_kind_from_name(base, &hint);
        return ms_nccl_tests_read(set, data, len, source, hint, opts, error);
    }
    case MS_MEASUREMENT_FORMAT_VIDUR_NETWORK:
        return ms_vidur_read_network(set, data, len, source, error);
    case MS_MEASUREMENT_FORMAT_VIDUR_COMPUTE:
        return ms_vidur_read_compute(set, data, len, source, error);
    case MS_MEASUREMENT_FORMAT_KINETO: {
        g_autoptr(JsonParser) p = json_parser_new();
        g_autoptr(GError) local = NULL;
        guint added = 0;
        if (!ms_json_input_load_data(p, data, len, source, &local)) {
            g_set_error(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_SYNTAX, "%s",
                        local->message);
            return FALSE;
        }
        return ms_kineto_read_measurements(json_parser_get_root(p), source, set, &added, error);
    }
    case MS_MEASUREMENT_FORMAT_UNKNOWN:
        break;
    }
    g_set_error(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_FORMAT,
                "%s: not a measurement format moesim knows: expected an nccl-tests log "
                "(all_reduce_perf, alltoall_perf, sendrecv_perf ... output), a Vidur profile CSV "
                "(time_stats.* columns), a PyTorch profiler trace (a JSON object with "
                "traceEvents), or a moesim CSV whose first line is '# moesim-measurements 1'",
                source);
    return FALSE;
}

gboolean
ms_measurement_set_read_data(MsMeasurementSet *set, const char *data, gsize len, const char *source,
                             GError **error)
{
    return ms_measurement_set_read_data_with(set, data, len, source, NULL, error);
}

gboolean
ms_measurement_set_read_data_with(MsMeasurementSet *set, const char *data, gsize len,
                                  const char *source, const MsMeasurementReadOptions *opts,
                                  GError **error)
{
    g_return_val_if_fail(set != NULL && (data != NULL || len == 0), FALSE);
    source = source ? source : "<input>";
    /* Text from memory has the limit of a file (sim/base/input_file.h). */
    if (len > ms_input_kind_info(MS_INPUT_MEASUREMENT)->max_bytes) {
        g_set_error(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_IO,
                    "%s: %" G_GSIZE_FORMAT " bytes is too large for a measurement file (limit "
                    "256 MiB)",
                    source, len);
        return FALSE;
    }
    /* A byte order mark (what spreadsheets put before a CSV they save as UTF-8) is no part of
     * any format's first line. */
    gsize bom = ms_csv_bom_length(data, len);
    data += bom;
    len -= bom;
    /* Read into a scratch set so that a failure leaves the caller's rows untouched. */
    g_autoptr(MsMeasurementSet) scratch = ms_measurement_set_new();
    if (!read_format(scratch, data, len, source, opts, error)) {
        return FALSE;
    }
    for (guint i = 0; i < scratch->rows->len; i++) {
        append_unchecked(set, &g_array_index(scratch->rows, MsMeasurement, i));
    }
    return TRUE;
}

static GResource *
shipped(void)
{
    return ms_validate_data_get_resource();
}

static gint
compare_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

char **
ms_measurement_list_shipped(void)
{
    char **names = g_resource_enumerate_children(shipped(), SHIPPED_PREFIX,
                                                 G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
    GPtrArray *out = g_ptr_array_new();
    for (guint i = 0; names && names[i]; i++) {
        if (g_str_has_suffix(names[i], ".csv")) {
            g_ptr_array_add(out, g_strdup(names[i]));
        }
    }
    g_strfreev(names);
    g_ptr_array_sort(out, compare_names);
    g_ptr_array_add(out, NULL);
    return (char **)g_ptr_array_free(out, FALSE);
}

static GBytes *
shipped_data(const char *name)
{
    if (strchr(name, '/') != NULL) {
        return NULL;
    }
    g_autofree char *path = g_strconcat(SHIPPED_PREFIX, name, NULL);
    return g_resource_lookup_data(shipped(), path, G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
}

static GBytes *
read_file(const char *path, GError **error)
{
    char *data = NULL;
    gsize len = 0;
    g_autoptr(GError) local = NULL;
    if (!ms_input_file_read(path, MS_INPUT_MEASUREMENT, &data, &len, &local)) {
        g_set_error(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_IO, "%s", local->message);
        return NULL;
    }
    return g_bytes_new_take(data, len);
}

MsMeasurementSet *
ms_measurement_set_load(const char *name_or_path, GError **error)
{
    return ms_measurement_set_load_with(name_or_path, NULL, error);
}

MsMeasurementSet *
ms_measurement_set_load_with(const char *name_or_path, const MsMeasurementReadOptions *opts,
                             GError **error)
{
    g_return_val_if_fail(name_or_path != NULL, NULL);
    g_autoptr(GBytes) bytes = NULL;
    if (!g_file_test(name_or_path, G_FILE_TEST_EXISTS)) {
        bytes = shipped_data(name_or_path);
    }
    if (bytes == NULL && !g_file_test(name_or_path, G_FILE_TEST_EXISTS)) {
        g_auto(GStrv) names = ms_measurement_list_shipped();
        g_autofree char *list = g_strjoinv(", ", names);
        g_set_error(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_IO,
                    "%s: no such file, nor a shipped measurement file (shipped: %s)", name_or_path,
                    list);
        return NULL;
    }
    if (bytes == NULL && (bytes = read_file(name_or_path, error)) == NULL) {
        return NULL;
    }
    gsize len = 0;
    const char *data = g_bytes_get_data(bytes, &len);
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    if (!ms_measurement_set_read_data_with(set, data ? data : "", len, name_or_path, opts, error)) {
        return NULL;
    }
    return g_steal_pointer(&set);
}

/* ---- selections for the fits ----------------------------------------------------------------- */

void
ms_measurement_gemm_cost(const MsMeasurement *row, double *flops, double *bytes)
{
    double m = (double)row->m, n = (double)row->n, k = (double)row->k;
    *flops = 2.0 * m * n * k;
    *bytes = (double)ms_dtype_size(row->dtype) * (m * k + k * n + m * n);
}

guint
ms_measurement_set_series(const MsMeasurementSet *set, MsMeasurementKind kind, guint ranks,
                          guint ranks_per_node, GArray *bytes, GArray *seconds)
{
    guint added = 0;
    for (guint i = 0; i < set->rows->len; i++) {
        const MsMeasurement *r = &g_array_index(set->rows, MsMeasurement, i);
        if (r->kind != kind || (ranks && r->ranks != ranks) ||
            (ranks_per_node && r->ranks_per_node != ranks_per_node)) {
            continue;
        }
        double b = (double)r->bytes;
        g_array_append_val(bytes, b);
        g_array_append_val(seconds, r->seconds);
        added++;
    }
    return added;
}

/* Sums and counts of the three parts of an expert FFN at one token count. */
typedef struct {
    guint64 tokens;
    double sum[3];
    guint count[3];
} FfnParts;

/* Which FFN part (0 up, 1 act, 2 down) a row is for this expert shape, or -1 (also for a kernel
 * timed under an allreduce: the curve is the kernels' alone). */
static gint
ffn_part(const MsMeasurement *r, guint64 d_model, guint64 d_ffn, gboolean gated)
{
    guint64 up_width = gated ? 2 * d_ffn : d_ffn;
    if (ms_measurement_overlapped(r)) {
        return -1;
    }
    if (r->kind == MS_MEASUREMENT_GEMM && strcmp(r->label, "mlp_up_proj") == 0 && r->k == d_model &&
        r->n == up_width) {
        return 0;
    }
    /* The activation reads the up output and writes d_ffn per token; its byte count tells a gated
     * expert from a plain one of twice the width. */
    if (r->kind == MS_MEASUREMENT_ELEMENTWISE && strcmp(r->label, "mlp_act") == 0 &&
        r->n == d_ffn && r->bytes == ms_dtype_size(r->dtype) * r->m * (up_width + d_ffn)) {
        return 1;
    }
    if (r->kind == MS_MEASUREMENT_GEMM && strcmp(r->label, "mlp_down_proj") == 0 && r->k == d_ffn &&
        r->n == d_model) {
        return 2;
    }
    return -1;
}

static gint
parts_cmp(gconstpointer a, gconstpointer b)
{
    guint64 ta = ((const FfnParts *)a)->tokens, tb = ((const FfnParts *)b)->tokens;
    return ta < tb ? -1 : ta > tb;
}

/* Groups the FFN rows by token count, sorted by tokens; *dtype is the rows' common dtype. */
static GArray *
collect_ffn_parts(const MsMeasurementSet *set, guint64 d_model, guint64 d_ffn, gboolean gated,
                  const char **dtype, GError **error)
{
    /* token count -> 1 + index into parts */
    g_autoptr(GHashTable) index = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    g_autoptr(GArray) parts = g_array_new(FALSE, TRUE, sizeof(FfnParts));
    *dtype = NULL;
    for (guint i = 0; i < set->rows->len; i++) {
        const MsMeasurement *r = &g_array_index(set->rows, MsMeasurement, i);
        gint part = ffn_part(r, d_model, d_ffn, gated);
        if (part < 0) {
            continue;
        }
        if (*dtype == NULL && r->dtype) {
            *dtype = r->dtype;
        } else if (r->dtype && strcmp(r->dtype, *dtype) != 0) {
            row_error(r, error, "dtype", "'%s' differs from the '%s' of earlier expert rows",
                      r->dtype, *dtype);
            return NULL;
        }
        gint64 key = (gint64)r->m;
        gpointer slot = g_hash_table_lookup(index, &key);
        if (slot == NULL) {
            FfnParts p = {.tokens = r->m};
            g_array_append_val(parts, p);
            slot = GUINT_TO_POINTER(parts->len);
            gint64 *k = g_new(gint64, 1);
            *k = key;
            g_hash_table_insert(index, k, slot);
        }
        FfnParts *p = &g_array_index(parts, FfnParts, GPOINTER_TO_UINT(slot) - 1);
        p->sum[part] += r->seconds;
        p->count[part]++;
    }
    g_array_sort(parts, parts_cmp);
    return g_steal_pointer(&parts);
}

gboolean
ms_measurement_set_expert_points(const MsMeasurementSet *set, guint64 d_model, guint64 d_ffn,
                                 gboolean gated, GArray *points, GError **error)
{
    const char *dtype = NULL;
    g_autoptr(GArray) parts = collect_ffn_parts(set, d_model, d_ffn, gated, &dtype, error);
    if (parts == NULL) {
        return FALSE;
    }
    guint added = 0;
    for (guint i = 0; i < parts->len; i++) {
        const FfnParts *p = &g_array_index(parts, FfnParts, i);
        if (!p->count[0] || !p->count[1] || !p->count[2]) {
            continue;
        }
        MsGemmPoint pt = {.tokens = (double)p->tokens};
        guint64 bytes;
        ms_compute_expert_ffn_cost(p->tokens, d_model, d_ffn, gated, ms_dtype_size(dtype),
                                   &pt.flops, &bytes);
        pt.bytes = (double)bytes;
        for (guint j = 0; j < 3; j++) {
            pt.seconds += p->sum[j] / p->count[j];
        }
        g_array_append_val(points, pt);
        added++;
    }
    if (added == 0) {
        g_set_error(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_MISSING,
                    "no token count has mlp_up_proj, mlp_act and mlp_down_proj rows for an "
                    "expert with d_model %" G_GUINT64_FORMAT ", d_ffn %" G_GUINT64_FORMAT " (%s)",
                    d_model, d_ffn, gated ? "gated" : "not gated");
        return FALSE;
    }
    return TRUE;
}
