/* vidur: both profile kinds share a loop (header on line 1, one record per line, columns found by
 * name) and differ in what a record becomes. Times are milliseconds in the files. */
#include "vidur.h"

#include <math.h>
#include <string.h>

#include "sim/base/units.h"

#define MS_MAX 1e9 /* 11.6 days in milliseconds: far beyond any profiled operator */
#define RANKS_MAX (1u << 20)
#define DIM_MAX (1u << 24)
#define TOKENS_MAX (G_GUINT64_CONSTANT(1) << 32)

typedef struct Csv Csv;
typedef gboolean (*RecordFunc)(Csv *csv, char **fields, GError **error);
typedef gboolean (*HeaderFunc)(Csv *csv, GError **error);

struct Csv {
    MsMeasurementSet *set;
    const char *source;
    guint line;
    char **header;
    HeaderFunc on_header; /* checks the columns on line 1 */
    RecordFunc record;
    /* network */
    MsMeasurementKind kind;
    char *op; /* the <op> of time_stats.<op>.median */
};

#define FAIL_AT(error, code, c, ...)                                                               \
    ms_measurement_fail(error, code, (c)->source, (c)->line, __VA_ARGS__)

static gint
column(const Csv *c, const char *name)
{
    return ms_csv_column(c->header, name);
}

static gboolean
require(const Csv *c, const char *name, gint *index, GError **error)
{
    *index = column(c, name);
    if (*index < 0) {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_MISSING, c, "required column '%s' is missing",
                       name);
    }
    return TRUE;
}

/* Reads "<prefix>.median" (required) and ".min", ".mean" (when present) in ms -> seconds. */
static gboolean
read_stats(const Csv *c, char **f, const char *prefix, MsMeasurement *row, GError **error)
{
    static const char *const stats[] = {"median", "min", "mean"};
    double *outs[] = {&row->median_s, &row->min_s, &row->mean_s};
    for (guint i = 0; i < G_N_ELEMENTS(stats); i++) {
        g_autofree char *name = g_strconcat(prefix, ".", stats[i], NULL);
        gint col = column(c, name);
        double ms;
        *outs[i] = NAN;
        if (col < 0 && i > 0) {
            continue;
        }
        if ((col < 0 && !require(c, name, &col, error)) ||
            !ms_measurement_parse_double(c->source, c->line, name, f[col], -MS_MAX, MS_MAX, &ms,
                                         error)) {
            return FALSE;
        }
        if (!(ms > 0)) {
            return FAIL_AT(error, MS_MEASUREMENT_ERROR_VALUE, c,
                           "%s: '%s' ms is not a positive time", name, f[col]);
        }
        *outs[i] = ms * 1e-3;
    }
    row->seconds = row->median_s;
    return TRUE;
}

static gboolean
uint_column(const Csv *c, char **f, const char *name, guint64 min, guint64 max, guint64 *out,
            GError **error)
{
    gint col;
    return require(c, name, &col, error) &&
           ms_measurement_parse_uint(c->source, c->line, name, f[col], min, max, out, error);
}

static gboolean
read_lines(Csv *c, const char *data, gsize len, GError **error)
{
    gsize pos = ms_csv_bom_length(data, len);
    c->line = 1;
    g_autoptr(MsCsvFields) split = ms_csv_fields_new();
    g_autofree char *first = ms_csv_next_line(data, len, &pos);
    if (!ms_measurement_split_csv(split, c->source, c->line, first ? first : "", error)) {
        return FALSE;
    }
    guint n_header = ms_csv_fields_width(split);
    c->header = ms_csv_fields_dup(split);
    if (!c->on_header(c, error)) {
        return FALSE;
    }
    char *raw;
    while ((raw = ms_csv_next_line(data, len, &pos)) != NULL) {
        g_autofree char *line = raw;
        c->line++;
        if (*g_strstrip(line) == '\0') {
            continue;
        }
        g_autoptr(GError) local = NULL;
        if (!ms_measurement_split_csv(split, c->source, c->line, line, error)) {
            return FALSE;
        }
        if (!ms_csv_fields_check_width(split, n_header, &local)) {
            return FAIL_AT(error, MS_MEASUREMENT_ERROR_SYNTAX, c, "%s", local->message);
        }
        g_auto(GStrv) fields = ms_csv_fields_dup(split);
        if (!c->record(c, fields, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

/* Reads a whole profile: the header (checked by on_header), then a record per line. */
static gboolean
read_profile(MsMeasurementSet *set, const char *data, gsize len, const char *source,
             HeaderFunc on_header, RecordFunc record, GError **error)
{
    Csv c = {.set = set,
             .source = source ? source : "<input>",
             .on_header = on_header,
             .record = record};
    gboolean ok = read_lines(&c, data, len, error);
    g_strfreev(c.header);
    g_free(c.op);
    return ok;
}

/* ---- network --------------------------------------------------------------------------------- */

static const struct {
    const char *op;
    MsMeasurementKind kind;
} network_ops[] = {
    {"all_reduce", MS_MEASUREMENT_ALLREDUCE},         {"all_gather", MS_MEASUREMENT_ALLGATHER},
    {"reduce_scatter", MS_MEASUREMENT_REDUCESCATTER}, {"all_to_all", MS_MEASUREMENT_ALLTOALL},
    {"send_recv", MS_MEASUREMENT_SENDRECV},
};

/* Finds the one time_stats.<op>.median column and the kind of <op>. */
static gboolean
network_op(Csv *c, GError **error)
{
    static const char prefix[] = "time_stats.", suffix[] = ".median";
    for (guint i = 0; c->header[i]; i++) {
        const char *h = c->header[i];
        gsize len = strlen(h);
        /* The prefix and suffix may not overlap: "time_stats.median" names no operation. */
        if (len <= strlen(prefix) + strlen(suffix) || !g_str_has_prefix(h, prefix) ||
            !g_str_has_suffix(h, suffix)) {
            continue;
        }
        g_autofree char *op = g_strndup(h + strlen(prefix), len - strlen(prefix) - strlen(suffix));
        if (c->op != NULL) {
            return FAIL_AT(error, MS_MEASUREMENT_ERROR_VALUE, c,
                           "%s: a second operation ('%s' after '%s'): a network profile has one", h,
                           op, c->op);
        }
        c->op = g_steal_pointer(&op);
    }
    if (c->op == NULL) {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_MISSING, c,
                       "no time_stats.<operation>.median column");
    }
    for (guint i = 0; i < G_N_ELEMENTS(network_ops); i++) {
        if (strcmp(c->op, network_ops[i].op) == 0) {
            c->kind = network_ops[i].kind;
            return TRUE;
        }
    }
    return FAIL_AT(error, MS_MEASUREMENT_ERROR_VALUE, c,
                   "time_stats.%s.median: operation '%s' is not one moesim models (all_reduce, "
                   "all_gather, reduce_scatter, all_to_all, send_recv)",
                   c->op, c->op);
}

static gboolean
network_record(Csv *c, char **f, GError **error)
{
    MsMeasurement row = {.kind = c->kind, .source = c->source, .line = c->line, .label = ""};
    guint64 size, workers, per_node;
    gint coll = column(c, "collective");
    if (coll >= 0 && strcmp(f[coll], c->op) != 0) {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_VALUE, c,
                       "collective: '%s' in a file of time_stats.%s columns", f[coll], c->op);
    }
    g_autofree char *prefix = g_strconcat("time_stats.", c->op, NULL);
    if (!uint_column(c, f, "size", 0, MS_BYTES_MAX, &size, error) ||
        !uint_column(c, f, "num_workers", 1, RANKS_MAX, &workers, error) ||
        !uint_column(c, f, "devices_per_node", 1, RANKS_MAX, &per_node, error) ||
        !read_stats(c, f, prefix, &row, error)) {
        return FALSE;
    }
    row.bytes = size;
    row.ranks = (guint32)workers;
    row.ranks_per_node = (guint32)per_node;
    return ms_measurement_set_add(c->set, &row, error);
}

static gboolean
require_all(const Csv *c, const char *const *names, GError **error)
{
    gint col;
    for (guint i = 0; names[i]; i++) {
        if (!require(c, names[i], &col, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
network_header(Csv *c, GError **error)
{
    static const char *const needed[] = {"size", "num_workers", "devices_per_node", NULL};
    return network_op(c, error) && require_all(c, needed, error);
}

gboolean
ms_vidur_read_network(MsMeasurementSet *set, const char *data, gsize len, const char *source,
                      GError **error)
{
    return read_profile(set, data, len, source, network_header, network_record, error);
}

/* ---- compute --------------------------------------------------------------------------------- */

typedef struct {
    guint64 tokens, d_model, d_ffn; /* d_ffn already divided by the tensor-parallel degree */
    gboolean gated;
} MlpShape;

static gboolean
read_gated(const Csv *c, char **f, gboolean *gated, GError **error)
{
    gint col;
    if (!require(c, "use_gated_mlp", &col, error)) {
        return FALSE;
    }
    const char *v = f[col];
    if (g_ascii_strcasecmp(v, "true") == 0 || strcmp(v, "1") == 0) {
        *gated = TRUE;
    } else if (g_ascii_strcasecmp(v, "false") == 0 || strcmp(v, "0") == 0) {
        *gated = FALSE;
    } else {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_VALUE, c,
                       "use_gated_mlp: '%s' is not True or False", v);
    }
    return TRUE;
}

static gboolean
read_shape(const Csv *c, char **f, MlpShape *s, GError **error)
{
    guint64 expanded, tp = 1;
    gint tp_col = column(c, "num_tensor_parallel_workers");
    if (!uint_column(c, f, "num_tokens", 1, TOKENS_MAX, &s->tokens, error) ||
        !uint_column(c, f, "n_embd", 1, DIM_MAX, &s->d_model, error) ||
        !uint_column(c, f, "n_expanded_embd", 1, DIM_MAX, &expanded, error) ||
        (tp_col >= 0 && !uint_column(c, f, "num_tensor_parallel_workers", 1, 4096, &tp, error)) ||
        !read_gated(c, f, &s->gated, error)) {
        return FALSE;
    }
    if (expanded % tp != 0) {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_VALUE, c,
                       "num_tensor_parallel_workers: %" G_GUINT64_FORMAT
                       " does not divide n_expanded_embd %" G_GUINT64_FORMAT,
                       tp, expanded);
    }
    s->d_ffn = expanded / tp;
    return TRUE;
}

static gboolean
compute_record(Csv *c, char **f, GError **error)
{
    MlpShape s;
    if (!read_shape(c, f, &s, error)) {
        return FALSE;
    }
    guint64 up_width = s.gated ? 2 * s.d_ffn : s.d_ffn;
    const struct {
        const char *label;
        MsMeasurementKind kind;
        guint64 n, k, bytes;
    } parts[] = {
        {"mlp_up_proj", MS_MEASUREMENT_GEMM, up_width, s.d_model, 0},
        {"mlp_act", MS_MEASUREMENT_ELEMENTWISE, s.d_ffn, 0, 2 * s.tokens * (up_width + s.d_ffn)},
        {"mlp_down_proj", MS_MEASUREMENT_GEMM, s.d_model, s.d_ffn, 0},
    };
    for (guint i = 0; i < G_N_ELEMENTS(parts); i++) {
        MsMeasurement row = {.kind = parts[i].kind,
                             .ranks = 1,
                             .ranks_per_node = 1,
                             .m = s.tokens,
                             .n = parts[i].n,
                             .k = parts[i].k,
                             .bytes = parts[i].bytes,
                             .dtype = "fp16",
                             .label = parts[i].label,
                             .source = c->source,
                             .line = c->line};
        g_autofree char *prefix = g_strconcat("time_stats.", parts[i].label, NULL);
        if (!read_stats(c, f, prefix, &row, error) ||
            !ms_measurement_set_add(c->set, &row, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
compute_header(Csv *c, GError **error)
{
    static const char *const needed[] = {
        "num_tokens",
        "n_embd",
        "n_expanded_embd",
        "use_gated_mlp",
        "time_stats.mlp_up_proj.median",
        "time_stats.mlp_act.median",
        "time_stats.mlp_down_proj.median",
        NULL,
    };
    return require_all(c, needed, error);
}

gboolean
ms_vidur_read_compute(MsMeasurementSet *set, const char *data, gsize len, const char *source,
                      GError **error)
{
    return read_profile(set, data, len, source, compute_header, compute_record, error);
}
