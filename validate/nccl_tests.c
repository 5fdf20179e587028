/* nccl_tests: a line-by-line state machine over nccl-tests output. A run is the preamble
 * ("# nccl-tests version", "# Collective test starting", "# nThread"), the "#  Rank" device lines,
 * the column header and the data lines; columns are found by name in the header, so layouts with
 * and without the root or #wrong columns read alike. Logs of `srun --label` carry a "TASK: "
 * prefix on every line: a first pass picks the task whose lines are read. */
#include "nccl_tests.h"

#include <math.h>
#include <string.h>

#include "sim/base/units.h"
#include "sim/net/host_loop.h"
#include "sim/net/nccl.h"

#define RANKS_MAX (1u << 20)
#define LOG "an nccl-tests line"

/* Every number moesim reads from an nccl-tests log (docs/bad-inputs.md is generated from this
 * table, and tests/test_input_ranges.c walks it); the rows then meet measurement.c's table. */
static const MsRange fields[] = {
    {LOG, "Rank", MS_RANGE_COUNT, 0, RANKS_MAX - 1, "ranks are numbered from 0; at most 2^20"},
    {LOG, "size", MS_RANGE_COUNT, 0, (double)MS_BYTES_MAX,
     "bytes, as nccl-tests prints them; at most 1 PiB, as every size moesim reads"},
    {LOG, "time", MS_RANGE_NUMBER, 1e-3, 1e12,
     "microseconds: 1 ns to 11.6 days, as a measurement row's time"},
    {LOG, "nThread", MS_RANGE_COUNT, 1, MS_HOST_LOOP_MAX_GPUS,
     "threads per process (nccl-tests' -t); a process drives GPUs of one host, and threads x "
     "GPUs divide the ranks"},
    {LOG, "nGpus", MS_RANGE_COUNT, 1, MS_HOST_LOOP_MAX_GPUS,
     "GPUs per thread (nccl-tests' -g); 1024, 14 times the largest NVLink domain moesim models "
     "(72 GPUs)"},
    {NULL},
};

static const MsRangeTable ranges = {"nccl-tests logs", fields};

const MsRangeTable *
ms_nccl_tests_ranges(void)
{
    return &ranges;
}

static const struct {
    const char *pattern;
    MsMeasurementKind kind;
} kind_patterns[] = {
    {"all_reduce", MS_MEASUREMENT_ALLREDUCE},
    {"allreduce", MS_MEASUREMENT_ALLREDUCE},
    {"alltoall", MS_MEASUREMENT_ALLTOALL},
    {"all_to_all", MS_MEASUREMENT_ALLTOALL},
    {"all_gather", MS_MEASUREMENT_ALLGATHER},
    {"allgather", MS_MEASUREMENT_ALLGATHER},
    {"reduce_scatter", MS_MEASUREMENT_REDUCESCATTER},
    {"reducescatter", MS_MEASUREMENT_REDUCESCATTER},
    {"sendrecv", MS_MEASUREMENT_SENDRECV},
    {"send_recv", MS_MEASUREMENT_SENDRECV},
};

/* nccl-tests type names (all versions, and the fp8 spellings of its forks) -> moesim dtypes. */
static const char *const type_map[][2] = {
    {"int8", "int8"},         {"char", "int8"},       {"uint8", "uint8"},
    {"int32", "int32"},       {"int", "int32"},       {"uint32", "uint32"},
    {"int64", "int64"},       {"uint64", "uint64"},   {"half", "fp16"},
    {"float", "fp32"},        {"double", "fp64"},     {"bfloat16", "bf16"},
    {"f8e4m3", "fp8_e4m3"},   {"f8e5m2", "fp8_e5m2"}, {"fp8_e4m3", "fp8_e4m3"},
    {"fp8_e5m2", "fp8_e5m2"},
};

gboolean
ms_nccl_tests_kind_from_name(const char *name, MsMeasurementKind *out)
{
    g_autofree char *lower = g_ascii_strdown(name, -1);
    if (strstr(lower, "alltoallv") != NULL) {
        return FALSE;
    }
    for (guint i = 0; i < G_N_ELEMENTS(kind_patterns); i++) {
        if (strstr(lower, kind_patterns[i].pattern) != NULL) {
            *out = kind_patterns[i].kind;
            return TRUE;
        }
    }
    return FALSE;
}

typedef struct {
    const char *source;
    guint line;
    gint64 task;                  /* the srun task whose lines are read, -1 without labels */
    guint shape_ranks, shape_per; /* the caller's shape for runs without rank lines, 0 = none */
    MsMeasurementKind hint;
    MsMeasurementKind kind; /* MS_MEASUREMENT_N_KINDS while unknown */
    char **columns;         /* header names, NULL until the header is read */
    guint n_columns;
    gint col_size, col_type, col_time, col_wrong;
    GHashTable *ranks;    /* rank number -> host (owned strings) */
    gboolean data_in_run; /* data lines seen since the run began */
    guint threads, gpus;  /* the run's "# nThread T nGpus G", 0 until read */
    guint threads_line;   /* the line they were read from */
    guint nccl_version;   /* the last "NCCL version X.Y.Z" read, 0 until one is */
    guint rows;
} Parser;

static void
begin_run(Parser *p, MsMeasurementKind kind)
{
    g_clear_pointer(&p->columns, g_strfreev);
    g_hash_table_remove_all(p->ranks);
    p->kind = kind;
    p->data_in_run = FALSE;
    p->threads = p->gpus = p->threads_line = 0;
}

/* Every message names SOURCE:LINE of the line being read. */
#define FAIL_AT(error, code, r, ...)                                                               \
    ms_measurement_fail(error, code, (r)->source, (r)->line, __VA_ARGS__)

/* A field of the table, located at the line being read. */
static gboolean
parse_field(const Parser *p, const char *key, const char *text, double *out, GError **error)
{
    g_autoptr(GError) local = NULL;
    if (!ms_range_parse(ms_range_find(fields, LOG, key), text, out, &local)) {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_VALUE, p, "%s: %s", key, local->message);
    }
    return TRUE;
}

/* Strips mpirun --tag-output's "[1,0]<stdout>:" prefix. */
static const char *
untag(const char *line)
{
    if (line[0] != '[') {
        return line;
    }
    const char *tag = strstr(line, "]<stdout>:");
    return tag ? tag + strlen("]<stdout>:") : line;
}

/* srun --label's "TASK: " prefix (the task number, padded with spaces to one width): returns the
 * task and sets *rest to the text after the colon, or returns -1 with *rest = line. A data line
 * ("   8   2 float") or a time ("12:30:01") has no colon right after its first number. */
static gint64
label_task(const char *line, const char **rest)
{
    *rest = line;
    const char *s = line;
    while (*s == ' ') {
        s++;
    }
    const char *digits = s;
    while (g_ascii_isdigit(*s) && s - digits < 9) {
        s++;
    }
    if (s == digits || *s != ':' || (s[1] != '\0' && s[1] != ' ' && s[1] != '\r')) {
        return -1;
    }
    *rest = s + 1;
    return g_ascii_strtoll(digits, NULL, 10);
}

/* Whitespace-separated tokens of a line, empty ones dropped. */
static char **
tokens(const char *line, guint *n)
{
    char **t = g_strsplit_set(line, " \t", -1);
    guint k = 0;
    for (guint i = 0; t[i]; i++) {
        if (*t[i]) {
            t[k++] = t[i];
        } else {
            g_free(t[i]);
        }
    }
    t[k] = NULL;
    *n = k;
    return t;
}

gboolean
ms_nccl_tests_sniff(const char *data, gsize len)
{
    gsize pos = 0;
    char *raw;
    while ((raw = ms_csv_next_line(data, len, &pos)) != NULL) {
        g_autofree char *whole = raw;
        const char *rest;
        label_task(whole, &rest);
        while (*rest == ' ') {
            rest++;
        }
        const char *line = untag(rest);
        if (line[0] != '#') {
            continue;
        }
        guint n;
        g_auto(GStrv) tok = tokens(line + 1, &n);
        if (strstr(line, "# Using devices") == line || strstr(line, "# nThread ") == line ||
            (n >= 3 && strcmp(tok[0], "size") == 0 && strcmp(tok[1], "count") == 0 &&
             strcmp(tok[2], "type") == 0)) {
            return TRUE;
        }
    }
    return FALSE;
}

/* "#  Rank  3 Group  0 Pid  1234 on   host-a device  3 [0x07] NVIDIA A100" (Group is absent in
 * older versions). */
static gboolean
read_rank(Parser *p, char **tok, guint n, GError **error)
{
    if (n < 2) {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_SYNTAX, p, "'Rank' without a number");
    }
    double v = 0;
    if (!parse_field(p, "Rank", tok[1], &v, error)) {
        return FALSE;
    }
    guint64 rank = (guint64)v;
    guint on = 2;
    while (on < n && strcmp(tok[on], "on") != 0) {
        on++;
    }
    if (on + 1 >= n) {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_SYNTAX, p,
                       "Rank %" G_GUINT64_FORMAT ": no 'on HOSTNAME' in the device line", rank);
    }
    if (p->data_in_run) {
        begin_run(p, p->hint);
    }
    if (g_hash_table_contains(p->ranks, GUINT_TO_POINTER((guint)rank))) {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_VALUE, p,
                       "Rank: %" G_GUINT64_FORMAT " is listed twice in this run", rank);
    }
    g_hash_table_insert(p->ranks, GUINT_TO_POINTER((guint)rank), g_strdup(tok[on + 1]));
    return TRUE;
}

/* The column header: "# size count type redop root time algbw busbw #wrong time ...". */
static gboolean
read_header(Parser *p, char **tok, guint n, GError **error)
{
    g_clear_pointer(&p->columns, g_strfreev);
    p->columns = g_strdupv(tok);
    p->n_columns = n;
    p->col_size = 0;
    p->col_type = ms_csv_column(tok, "type");
    p->col_time = ms_csv_column(tok, "time");
    if (p->col_time < 0) {
        p->col_time = ms_csv_column(tok, "cputime");
    }
    p->col_wrong = ms_csv_column(tok, "#wrong");
    if (p->col_time < 0) {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_MISSING, p,
                       "the column header has no 'time' column");
    }
    return TRUE;
}

/* "# nThread 1 nGpus 8 minBytes 8 ...": how many threads each process ran and how many GPUs each
 * thread drove (nccl-tests' -t and -g). */
static gboolean
read_threads(Parser *p, char **tok, guint n, GError **error)
{
    double threads = 0, gpus = 0;
    if (n < 4 || strcmp(tok[2], "nGpus") != 0) {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_SYNTAX, p,
                       "nGpus: the '# nThread T nGpus G' line has no 'nGpus G' after nThread");
    }
    if (!parse_field(p, "nThread", tok[1], &threads, error) ||
        !parse_field(p, "nGpus", tok[3], &gpus, error)) {
        return FALSE;
    }
    p->threads = (guint)threads;
    p->gpus = (guint)gpus;
    p->threads_line = p->line;
    return TRUE;
}

static gboolean
read_comment(Parser *p, const char *line, GError **error)
{
    const char *start = "# Collective test starting:";
    if (g_str_has_prefix(line, start)) {
        g_autofree char *name = g_strstrip(g_strdup(line + strlen(start)));
        MsMeasurementKind kind;
        if (!ms_nccl_tests_kind_from_name(name, &kind)) {
            return FAIL_AT(error, MS_MEASUREMENT_ERROR_VALUE, p,
                           "collective test '%s' is not one moesim models (all_reduce, alltoall, "
                           "all_gather, reduce_scatter, sendrecv)",
                           name);
        }
        begin_run(p, kind);
        return TRUE;
    }
    guint n;
    g_auto(GStrv) tok = tokens(line + 1, &n);
    if (g_str_has_prefix(line, "# nThread ")) {
        if (p->data_in_run) {
            begin_run(p, p->hint);
        }
        return read_threads(p, tok, n, error);
    }
    if (n >= 1 && strcmp(tok[0], "Rank") == 0) {
        return read_rank(p, tok, n, error);
    }
    if (n >= 3 && strcmp(tok[0], "size") == 0 && strcmp(tok[1], "count") == 0) {
        return read_header(p, tok, n, error);
    }
    return TRUE;
}

static guint
ranks_per_node(const Parser *p)
{
    g_autoptr(GHashTable) per_host = g_hash_table_new(g_str_hash, g_str_equal);
    guint best = 0;
    GHashTableIter it;
    gpointer host;
    g_hash_table_iter_init(&it, p->ranks);
    /* Counting is order-independent, so iterating the hash table is deterministic here. */
    while (g_hash_table_iter_next(&it, NULL, &host)) {
        guint c = GPOINTER_TO_UINT(g_hash_table_lookup(per_host, host)) + 1;
        g_hash_table_insert(per_host, host, GUINT_TO_POINTER(c));
        best = MAX(best, c);
    }
    return best;
}

static gboolean
check_run(const Parser *p, GError **error)
{
    if (p->columns == NULL) {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_MISSING, p,
                       "data line before the '# size count type ...' column header");
    }
    if (g_hash_table_size(p->ranks) == 0 && p->shape_ranks == 0) {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_MISSING, p,
                       "data line before any '#  Rank N ... on HOST device D' line: the number of "
                       "ranks is unknown (give the run's shape: ranks and ranks per node)");
    }
    if (p->kind == MS_MEASUREMENT_N_KINDS) {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_MISSING, p,
                       "cannot tell which collective this run measured: the log has no "
                       "'# Collective test starting:' line; name the file after the test (e.g. "
                       "all_reduce_perf.log)");
    }
    return TRUE;
}

static gboolean
read_dtype(const Parser *p, const char *type, const char **dtype, GError **error)
{
    for (guint i = 0; i < G_N_ELEMENTS(type_map); i++) {
        if (strcmp(type, type_map[i][0]) == 0) {
            *dtype = type_map[i][1];
            return TRUE;
        }
    }
    return FAIL_AT(error, MS_MEASUREMENT_ERROR_VALUE, p,
                   "type: '%s' is not an nccl-tests data type", type);
}

static gboolean
read_wrong(const Parser *p, char **tok, GError **error)
{
    if (p->col_wrong < 0 || strcmp(tok[p->col_wrong], "N/A") == 0) {
        return TRUE;
    }
    double wrong;
    if (!ms_measurement_parse_double(p->source, p->line, "#wrong", tok[p->col_wrong], 0, 1e300,
                                     &wrong, error)) {
        return FALSE;
    }
    if (wrong > 0) {
        return FAIL_AT(
            error, MS_MEASUREMENT_ERROR_VALUE, p,
            "#wrong: %s elements wrong: the run failed its correctness check, so its times "
            "are not trustworthy",
            tok[p->col_wrong]);
    }
    return TRUE;
}

/* The run's ranks and ranks per node: from its '#  Rank' lines, which must then agree with the
 * caller's shape when there is one, else the caller's shape. */
static gboolean
run_shape(const Parser *p, guint *ranks, guint *per_node, GError **error)
{
    *ranks = g_hash_table_size(p->ranks);
    *per_node = ranks_per_node(p);
    if (*ranks == 0) {
        *ranks = p->shape_ranks;
        *per_node = p->shape_per;
        return TRUE;
    }
    if (p->shape_ranks && (*ranks != p->shape_ranks || *per_node != p->shape_per)) {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_VALUE, p,
                       "Rank: the '#  Rank' lines give %u ranks, %u per node, but the given shape "
                       "is %u ranks, %u per node",
                       *ranks, *per_node, p->shape_ranks, p->shape_per);
    }
    return TRUE;
}

static gboolean
read_data(Parser *p, MsMeasurementSet *set, char **tok, guint n, GError **error)
{
    if (!check_run(p, error)) {
        return FALSE;
    }
    if (n != p->n_columns) {
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_SYNTAX, p,
                       "%u fields, but the column header names %u", n, p->n_columns);
    }
    MsMeasurement row = {.kind = p->kind,
                         .source = p->source,
                         .line = p->line,
                         .label = "",
                         .min_s = NAN,
                         .median_s = NAN};
    double size = 0, us = 0;
    if (!parse_field(p, "size", tok[p->col_size], &size, error) ||
        (p->col_type >= 0 && !read_dtype(p, tok[p->col_type], &row.dtype, error)) ||
        !parse_field(p, "time", tok[p->col_time], &us, error) || !read_wrong(p, tok, error)) {
        return FALSE;
    }
    row.bytes = (guint64)size;
    row.seconds = row.mean_s = us * 1e-6;
    if (!run_shape(p, &row.ranks, &row.ranks_per_node, error)) {
        return FALSE;
    }
    /* nccl-tests runs processes x threads x GPUs ranks: a count that does not divide them is
     * not the run's. */
    if (p->threads && row.ranks % ((guint64)p->threads * p->gpus) != 0) {
        return ms_measurement_fail(error, MS_MEASUREMENT_ERROR_VALUE, p->source, p->threads_line,
                                   "nGpus: nThread %u x nGpus %u does not divide the run's %u "
                                   "ranks",
                                   p->threads, p->gpus, row.ranks);
    }
    row.threads = p->threads;
    row.gpus_per_thread = p->gpus;
    row.nccl_version = p->nccl_version;
    p->data_in_run = TRUE;
    p->rows++;
    return ms_measurement_set_add(set, &row, error);
}

/* What a line is to the reader (the text after any label and mpirun tag, stripped): a data line,
 * one of the comments a run is read from, or anything else (skipped). */
typedef enum { LINE_OTHER, LINE_RUN, LINE_DATA } LineKind;

static LineKind
line_kind(const char *line)
{
    if (line[0] == '#') {
        if (g_str_has_prefix(line, "# Collective test starting:") ||
            g_str_has_prefix(line, "# nThread ")) {
            return LINE_RUN;
        }
        guint n;
        g_auto(GStrv) tok = tokens(line + 1, &n);
        return (n >= 1 && strcmp(tok[0], "Rank") == 0) ||
                       (n >= 3 && strcmp(tok[0], "size") == 0 && strcmp(tok[1], "count") == 0)
                   ? LINE_RUN
                   : LINE_OTHER;
    }
    const char *first = line[0] == '-' || line[0] == '+' ? line + 1 : line;
    return g_ascii_isdigit(first[0]) ? LINE_DATA : LINE_OTHER;
}

/* The text of a raw line after its srun label (the task in *task, -1 when none) and mpirun tag,
 * stripped; owned by the caller. */
static char *
line_text(const char *raw, gint64 *task)
{
    const char *rest;
    *task = label_task(raw, &rest);
    while (*rest == ' ') {
        rest++;
    }
    return g_strstrip(g_strdup(untag(rest)));
}

/* Under srun --label every task's lines are whole but interleaved, so the lines of one task are
 * one well-defined stream: the lowest task that printed data lines is read (nccl-tests prints
 * from its first rank; other tasks print NCCL or launcher lines), and a note says so when other
 * tasks printed nccl-tests lines too. A log whose nccl-tests lines are labelled on some lines and
 * not on others cannot be split by task and is refused. Sets p->task (-1: no labels). */
static gboolean
choose_task(Parser *p, const char *data, gsize len, GPtrArray *notes, GError **error)
{
    g_autoptr(GArray) tasks = g_array_new(FALSE, FALSE, sizeof(gint64)); /* sorted, unique */
    gint64 keep = -1, labelled_task = -1;
    guint line = 0, unlabelled_at = 0, labelled_at = 0, skipped = 0;
    gsize pos = 0;
    char *raw;
    while ((raw = ms_csv_next_line(data, len, &pos)) != NULL) {
        line++;
        gint64 task;
        g_autofree char *text = line_text(raw, &task);
        g_free(raw);
        LineKind kind = line_kind(text);
        if (kind == LINE_OTHER) {
            continue;
        }
        if (task < 0) {
            unlabelled_at = unlabelled_at ? unlabelled_at : line;
            continue;
        }
        if (labelled_at == 0) {
            labelled_at = line;
            labelled_task = task;
        }
        guint at = 0;
        while (at < tasks->len && g_array_index(tasks, gint64, at) < task) {
            at++;
        }
        if (at == tasks->len || g_array_index(tasks, gint64, at) != task) {
            g_array_insert_val(tasks, at, task);
        }
        if (kind == LINE_DATA && (keep < 0 || task < keep)) {
            keep = task;
        }
    }
    p->task = -1;
    if (labelled_at == 0) {
        return TRUE;
    }
    if (unlabelled_at) {
        p->line = unlabelled_at;
        return FAIL_AT(error, MS_MEASUREMENT_ERROR_SYNTAX, p,
                       "an nccl-tests line without srun --label's 'TASK: ' prefix, while line %u "
                       "carries task %" G_GINT64_FORMAT "'s: labelled and unlabelled output are "
                       "mixed, so which task printed this line cannot be told",
                       labelled_at, labelled_task);
    }
    p->task = keep >= 0 ? keep : g_array_index(tasks, gint64, 0);
    if (tasks->len > 1 && notes) {
        g_autoptr(GString) others = g_string_new(NULL);
        for (guint i = 0; i < tasks->len; i++) {
            gint64 t = g_array_index(tasks, gint64, i);
            if (t != p->task) {
                g_string_append_printf(others, "%s%" G_GINT64_FORMAT, skipped++ ? ", " : "", t);
            }
        }
        g_ptr_array_add(notes, g_strdup_printf("%s: nccl-tests lines of %u srun tasks (--label): "
                                               "read those of task %" G_GINT64_FORMAT
                                               ", the lowest with data lines; skipped those of "
                                               "task%s %s",
                                               p->source, tasks->len, p->task,
                                               skipped > 1 ? "s" : "", others->str));
    }
    return TRUE;
}

guint
ms_nccl_tests_release(const char *line)
{
    const char *at = strstr(line, "NCCL version ");
    guint major = 0, minor = 0, patch = 0;
    char end = 0;
    gint n =
        at ? sscanf(at + strlen("NCCL version "), "%u.%u.%u%c", &major, &minor, &patch, &end) : 0;
    if (n < 3 || (n == 4 && end != '+' && end != ' ') || minor > 99 || patch > 99 || major > 9) {
        return 0;
    }
    return MS_NCCL_VERSION(major, minor, patch);
}

static gboolean
read_line(Parser *p, MsMeasurementSet *set, const char *raw, GError **error)
{
    gint64 task;
    g_autofree char *line = line_text(raw, &task);
    /* NCCL prints its release at init, alone or in an NCCL INFO line, on whichever task: every
     * task of a run links the same NCCL. */
    guint release = ms_nccl_tests_release(line);
    p->nccl_version = release ? release : p->nccl_version;
    if (task != p->task) {
        return TRUE; /* another task's line, or an unlabelled one (never an nccl-tests line) */
    }
    if (line[0] == '#') {
        return read_comment(p, line, error);
    }
    guint n;
    g_auto(GStrv) tok = tokens(line, &n);
    /* Data lines start with the size (a signed one is a data line too, refused by the size's
     * range rather than skipped); anything else here is NCCL INFO or launcher output. */
    const char *first = n ? tok[0] : "";
    if (first[0] == '-' || first[0] == '+') {
        first++;
    }
    if (n == 0 || !g_ascii_isdigit(first[0])) {
        return TRUE;
    }
    return read_data(p, set, tok, n, error);
}

gboolean
ms_nccl_tests_read(MsMeasurementSet *set, const char *data, gsize len, const char *source,
                   MsMeasurementKind hint, const MsMeasurementReadOptions *opts, GError **error)
{
    Parser p = {.source = source ? source : "<input>", .hint = hint, .kind = hint};
    if (opts) {
        p.shape_ranks = opts->ranks;
        p.shape_per = opts->ranks_per_node;
    }
    if ((p.shape_ranks == 0) != (p.shape_per == 0) || p.shape_per > p.shape_ranks ||
        p.shape_ranks > RANKS_MAX) {
        g_set_error(error, MS_MEASUREMENT_ERROR, MS_MEASUREMENT_ERROR_VALUE,
                    "%s: shape: %u ranks, %u per node: give both, with 1 <= per node <= ranks "
                    "<= 2^20",
                    p.source, p.shape_ranks, p.shape_per);
        return FALSE;
    }
    if (!choose_task(&p, data, len, opts ? opts->notes : NULL, error)) {
        return FALSE;
    }
    p.line = 0;
    p.ranks = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    gboolean ok = TRUE;
    gsize pos = 0;
    char *raw;
    while (ok && (raw = ms_csv_next_line(data, len, &pos)) != NULL) {
        p.line++;
        ok = read_line(&p, set, raw, error);
        g_free(raw);
    }
    if (ok && p.rows == 0) {
        ok = FAIL_AT(error, MS_MEASUREMENT_ERROR_FORMAT, &p, "no nccl-tests data line in the log");
    }
    g_strfreev(p.columns);
    g_hash_table_unref(p.ranks);
    return ok;
}
