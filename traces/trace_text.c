/* trace_text: text form. One record a line, fields separated by blanks, '#' comments; lines come
 * from a bounded reader (trace_lines) and numbers are parsed and formatted by hand, because number
 * conversion dominates the cost of large traces. */
#include "trace_text.h"

#include "trace_lines.h"

#include <string.h>

#define COUNT_FIELDS 6
#define TOKEN_FIXED 4 /* t ITERATION TOKEN_ID RANK */
#define HEADER_LINE_MAX 65536

struct _MsTraceText {
    char *source;
    MsTraceLines *lines;
    const char *line; /* the current line, owned by lines */
    gsize line_len;
    guint64 line_no;  /* of the current line */
    gboolean pending; /* `line` holds a record line the header reader stopped at */
    MsTraceHeader header;
    guint32 *ids;
    const char **fields;
    gsize *lens;
    guint max_fields;
};

MsTraceText *
ms_trace_text_new(FILE *file, const char *source)
{
    MsTraceText *t = g_new0(MsTraceText, 1);
    t->source = g_strdup(source);
    /* Grown for long token records once the header is known. */
    t->lines = ms_trace_lines_new(file, HEADER_LINE_MAX);
    t->line = "";
    return t;
}

void
ms_trace_text_free(MsTraceText *t)
{
    if (t == NULL) {
        return;
    }
    g_free(t->source);
    ms_trace_lines_free(t->lines);
    g_free(t->ids);
    g_free(t->fields);
    g_free(t->lens);
    g_free(t);
}

guint64
ms_trace_text_position(const MsTraceText *t)
{
    return t->line_no;
}

void
ms_trace_text_prefix_error(const MsTraceText *t, guint64 line, GError **error)
{
    g_prefix_error(error, "%s:%" G_GUINT64_FORMAT ": ", t->source, line);
}

static void fail(const MsTraceText *t, GError **error, MsTraceError code, const char *format, ...)
    G_GNUC_PRINTF(4, 5);

static void
fail(const MsTraceText *t, GError **error, MsTraceError code, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, MS_TRACE_ERROR, code, "%s:%" G_GUINT64_FORMAT ": %s", t->source, t->line_no,
                msg);
}

/* Reads the next line into t->line. *got is FALSE at the end. */
static gboolean
next_line(MsTraceText *t, gboolean *got, GError **error)
{
    MsTraceLineStatus status = ms_trace_lines_next(t->lines);
    t->line_no = ms_trace_lines_number(t->lines);
    t->line = ms_trace_lines_text(t->lines, &t->line_len);
    *got = status == MS_TRACE_LINE_OK;
    switch (status) {
    case MS_TRACE_LINE_OK:
    case MS_TRACE_LINE_END:
        return TRUE;
    case MS_TRACE_LINE_TOO_LONG:
        fail(t, error, MS_TRACE_ERROR_SYNTAX, "line longer than %" G_GSIZE_FORMAT " bytes",
             ms_trace_lines_max(t->lines));
        return FALSE;
    case MS_TRACE_LINE_IO:
        fail(t, error, MS_TRACE_ERROR_IO, "read error: %s",
             g_strerror(ms_trace_lines_errno(t->lines)));
        return FALSE;
    }
    return FALSE;
}

/* Splits t->line at blanks into at most max fields; returns the number found (which may exceed
 * max: only the first max are stored). */
static guint
split(MsTraceText *t, guint max)
{
    guint n = 0;
    const char *p = t->line, *end = p + t->line_len;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t')) {
            p++;
        }
        if (p == end) {
            break;
        }
        const char *s = p;
        while (p < end && *p != ' ' && *p != '\t') {
            p++;
        }
        if (n < max) {
            t->fields[n] = s;
            t->lens[n] = (gsize)(p - s);
        }
        n++;
    }
    return n;
}

static gboolean
is_skipped(const MsTraceText *t)
{
    const char *p = t->line;
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    return *p == '\0' || *p == '#';
}

static void
ensure_fields(MsTraceText *t, guint n)
{
    if (n > t->max_fields) {
        t->fields = g_renew(const char *, t->fields, n);
        t->lens = g_renew(gsize, t->lens, n);
        t->max_fields = n;
    }
}

static gboolean
parse_field(MsTraceText *t, guint i, const char *name, guint64 max, guint64 *out, GError **error)
{
    switch (ms_trace_parse_number(t->fields[i], t->lens[i], max, out)) {
    case MS_TRACE_NUMBER_OK:
        return TRUE;
    case MS_TRACE_NUMBER_SYNTAX:
        fail(t, error, MS_TRACE_ERROR_SYNTAX, "%s is not a number: '%.*s'", name,
             (int)MIN(t->lens[i], 64), t->fields[i]);
        return FALSE;
    case MS_TRACE_NUMBER_OVERFLOW:
        fail(t, error, MS_TRACE_ERROR_OVERFLOW,
             "%s '%.*s' overflows its field (at most %" G_GUINT64_FORMAT ")", name,
             (int)MIN(t->lens[i], 64), t->fields[i], max);
        return FALSE;
    }
    return FALSE;
}

static gboolean
read_magic(MsTraceText *t, GError **error)
{
    gboolean got = FALSE;
    if (!next_line(t, &got, error)) {
        return FALSE;
    }
    if (!got) {
        t->line_no = 1;
        fail(t, error, MS_TRACE_ERROR_FORMAT, "empty file: expected 'moe-trace %d'",
             MS_TRACE_VERSION);
        return FALSE;
    }
    ensure_fields(t, 4);
    guint n = split(t, 4);
    if (n != 2 || t->lens[0] != 9 || memcmp(t->fields[0], "moe-trace", 9) != 0) {
        fail(t, error, MS_TRACE_ERROR_FORMAT,
             "not a moe-trace file: the first line must be 'moe-trace %d'", MS_TRACE_VERSION);
        return FALSE;
    }
    guint64 version = 0;
    if (ms_trace_parse_number(t->fields[1], t->lens[1], G_MAXUINT32, &version) !=
        MS_TRACE_NUMBER_OK) {
        fail(t, error, MS_TRACE_ERROR_FORMAT, "bad version '%.*s' in 'moe-trace VERSION'",
             (int)MIN(t->lens[1], 64), t->fields[1]);
        return FALSE;
    }
    if (version != MS_TRACE_VERSION) {
        fail(t, error, MS_TRACE_ERROR_VERSION,
             "unsupported trace version %" G_GUINT64_FORMAT " (this moesim reads version %d)",
             version, MS_TRACE_VERSION);
        return FALSE;
    }
    return TRUE;
}

typedef struct {
    const char *name;
    gsize offset;
    guint32 min;
    guint32 max;
    gboolean required;
} HeaderKey;

static const HeaderKey header_keys[] = {
    {"experts", G_STRUCT_OFFSET(MsTraceHeader, experts), 1, MS_TRACE_MAX_EXPERTS, TRUE},
    {"layers", G_STRUCT_OFFSET(MsTraceHeader, layers), 1, MS_TRACE_MAX_LAYERS, TRUE},
    {"ranks", G_STRUCT_OFFSET(MsTraceHeader, ranks), 1, MS_TRACE_MAX_RANKS, TRUE},
    {"top_k", G_STRUCT_OFFSET(MsTraceHeader, top_k), 1, MS_TRACE_MAX_TOP_K, TRUE},
    {"tokens_per_rank", G_STRUCT_OFFSET(MsTraceHeader, tokens_per_rank), 0,
     MS_TRACE_MAX_TOKENS_PER_RANK, FALSE},
    /* A node limit: both or neither, checked with the rest by ms_trace_header_validate. */
    {"expert_nodes", G_STRUCT_OFFSET(MsTraceHeader, expert_nodes), 1, MS_TRACE_MAX_EXPERTS, FALSE},
    {"max_nodes", G_STRUCT_OFFSET(MsTraceHeader, max_nodes), 1, MS_TRACE_MAX_EXPERTS, FALSE},
};

/* A "# generator: TEXT" comment in the header carries provenance. */
static gboolean
header_comment(MsTraceText *t, MsTraceHeader *header, GError **error)
{
    const char *p = t->line;
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    if (!g_str_has_prefix(p, "# generator:") || header->generator[0]) {
        return TRUE;
    }
    p += strlen("# generator:");
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    if (!ms_trace_header_set_generator(header, p, error)) {
        ms_trace_text_prefix_error(t, t->line_no, error);
        return FALSE;
    }
    return TRUE;
}

static gboolean
header_key(MsTraceText *t, MsTraceHeader *header, guint64 *seen_line, GError **error)
{
    guint i = 0;
    while (i < G_N_ELEMENTS(header_keys) &&
           !(strlen(header_keys[i].name) == t->lens[0] &&
             memcmp(header_keys[i].name, t->fields[0], t->lens[0]) == 0)) {
        i++;
    }
    if (i == G_N_ELEMENTS(header_keys)) {
        fail(t, error, MS_TRACE_ERROR_HEADER,
             "unknown header key '%.*s' (known: experts, layers, ranks, top_k, tokens_per_rank, "
             "expert_nodes, max_nodes, groups)",
             (int)MIN(t->lens[0], 64), t->fields[0]);
        return FALSE;
    }
    const HeaderKey *k = &header_keys[i];
    if (seen_line[i]) {
        fail(t, error, MS_TRACE_ERROR_HEADER,
             "header key '%s' given twice (first at line %" G_GUINT64_FORMAT ")", k->name,
             seen_line[i]);
        return FALSE;
    }
    seen_line[i] = t->line_no;
    guint64 v = 0;
    switch (ms_trace_parse_number(t->fields[1], t->lens[1], G_MAXUINT64, &v)) {
    case MS_TRACE_NUMBER_SYNTAX:
        fail(t, error, MS_TRACE_ERROR_SYNTAX, "%s is not a number: '%.*s'", k->name,
             (int)MIN(t->lens[1], 64), t->fields[1]);
        return FALSE;
    case MS_TRACE_NUMBER_OVERFLOW:
        v = G_MAXUINT64;
        break;
    case MS_TRACE_NUMBER_OK:
        break;
    }
    if (v < k->min || v > k->max) {
        fail(t, error, MS_TRACE_ERROR_LIMIT, "%s = %.*s is outside %u..%u", k->name,
             (int)MIN(t->lens[1], 64), t->fields[1], k->min, k->max);
        return FALSE;
    }
    G_STRUCT_MEMBER(guint32, header, k->offset) = (guint32)v;
    return TRUE;
}

/* "groups 0 6": the first MoE layer of every layer group, one line, at most once. */
static gboolean
header_groups(MsTraceText *t, MsTraceHeader *header, guint64 *seen, GError **error)
{
    if (*seen) {
        fail(t, error, MS_TRACE_ERROR_HEADER,
             "header key 'groups' given twice (first at line %" G_GUINT64_FORMAT ")", *seen);
        return FALSE;
    }
    *seen = t->line_no;
    ensure_fields(t, MS_TRACE_MAX_GROUPS + 2);
    guint n = split(t, MS_TRACE_MAX_GROUPS + 2);
    if (n < 2 || n > MS_TRACE_MAX_GROUPS + 1) {
        fail(t, error, MS_TRACE_ERROR_LIMIT,
             "groups needs the first MoE layer of each of 1 to %u layer groups, got %u",
             MS_TRACE_MAX_GROUPS, n - 1);
        return FALSE;
    }
    for (guint i = 1; i < n; i++) {
        guint64 v = 0;
        if (!parse_field(t, i, "groups", MS_TRACE_MAX_LAYERS - 1, &v, error)) {
            return FALSE;
        }
        header->group_first[i - 1] = (guint32)v;
    }
    header->n_groups = n - 1;
    return TRUE;
}

static gboolean
is_record_line(MsTraceText *t, guint n)
{
    return n > 0 && t->lens[0] == 1 && (t->fields[0][0] == 'c' || t->fields[0][0] == 't');
}

static gboolean
finish_header(MsTraceText *t, MsTraceHeader *header, const guint64 *seen_line, GError **error)
{
    for (guint i = 0; i < G_N_ELEMENTS(header_keys); i++) {
        if (header_keys[i].required && !seen_line[i]) {
            fail(t, error, MS_TRACE_ERROR_HEADER, "missing header key '%s' before the records",
                 header_keys[i].name);
            return FALSE;
        }
    }
    if (!ms_trace_header_validate(header, error)) {
        ms_trace_text_prefix_error(t, t->line_no, error);
        return FALSE;
    }
    guint len = ms_trace_header_path_len(header);
    t->header = *header;
    t->ids = g_new(guint32, len);
    ensure_fields(t, MAX(COUNT_FIELDS, TOKEN_FIXED + len));
    /* The longest valid token line: four 20-digit fields and len 10-digit ids, with blanks. */
    ms_trace_lines_set_max(t->lines, MAX(HEADER_LINE_MAX, 4 * 21 + (gsize)len * 11 + 1024));
    return TRUE;
}

gboolean
ms_trace_text_read_header(MsTraceText *t, MsTraceHeader *header, GError **error)
{
    ms_trace_header_init(header);
    if (!read_magic(t, error)) {
        return FALSE;
    }
    guint64 seen_line[G_N_ELEMENTS(header_keys)] = {0}, groups_line = 0;
    for (;;) {
        gboolean got = FALSE;
        if (!next_line(t, &got, error)) {
            return FALSE;
        }
        if (!got) {
            break;
        }
        if (is_skipped(t)) {
            if (!header_comment(t, header, error)) {
                return FALSE;
            }
            continue;
        }
        guint n = split(t, 4);
        if (is_record_line(t, n)) {
            t->pending = TRUE;
            break;
        }
        if (n >= 1 && t->lens[0] == 6 && memcmp(t->fields[0], "groups", 6) == 0) {
            if (!header_groups(t, header, &groups_line, error)) {
                return FALSE;
            }
            continue;
        }
        if (n != 2) {
            fail(t, error, MS_TRACE_ERROR_SYNTAX, "header line must be 'KEY VALUE', got %u fields",
                 n);
            return FALSE;
        }
        if (!header_key(t, header, seen_line, error)) {
            return FALSE;
        }
    }
    return finish_header(t, header, seen_line, error);
}

static MsTraceRead
parse_count(MsTraceText *t, guint n, MsTraceRecord *rec, GError **error)
{
    if (n != COUNT_FIELDS) {
        fail(t, error, MS_TRACE_ERROR_SYNTAX,
             "count record needs 6 fields 'c ITERATION LAYER RANK EXPERT TOKENS', got %u", n);
        return MS_TRACE_READ_ERROR;
    }
    guint64 v[5];
    static const char *const names[] = {"iteration", "layer", "rank", "expert", "tokens"};
    for (guint i = 0; i < 5; i++) {
        guint64 max = i == 0 ? MS_TRACE_MAX_ITERATION : G_MAXUINT32;
        if (!parse_field(t, i + 1, names[i], max, &v[i], error)) {
            return MS_TRACE_READ_ERROR;
        }
    }
    *rec = (MsTraceRecord){.kind = MS_TRACE_RECORD_COUNT,
                           .iteration = v[0],
                           .layer = (guint32)v[1],
                           .rank = (guint32)v[2],
                           .expert = (guint32)v[3],
                           .tokens = (guint32)v[4]};
    return MS_TRACE_READ_RECORD;
}

static MsTraceRead
parse_token(MsTraceText *t, guint n, MsTraceRecord *rec, GError **error)
{
    guint len = ms_trace_header_path_len(&t->header);
    if (n < TOKEN_FIXED || n - TOKEN_FIXED != len) {
        fail(t, error, n < TOKEN_FIXED ? MS_TRACE_ERROR_SYNTAX : MS_TRACE_ERROR_PATH,
             "token record has %u expert ids, expected layers x top_k = %u x %u = %u",
             n < TOKEN_FIXED ? 0 : n - TOKEN_FIXED, t->header.layers, t->header.top_k, len);
        return MS_TRACE_READ_ERROR;
    }
    guint64 iteration, token_id, rank, id;
    if (!parse_field(t, 1, "iteration", MS_TRACE_MAX_ITERATION, &iteration, error) ||
        !parse_field(t, 2, "token id", G_MAXUINT64, &token_id, error) ||
        !parse_field(t, 3, "rank", G_MAXUINT32, &rank, error)) {
        return MS_TRACE_READ_ERROR;
    }
    for (guint i = 0; i < len; i++) {
        if (!parse_field(t, TOKEN_FIXED + i, "expert id", G_MAXUINT32, &id, error)) {
            return MS_TRACE_READ_ERROR;
        }
        t->ids[i] = (guint32)id;
    }
    *rec = (MsTraceRecord){.kind = MS_TRACE_RECORD_TOKEN,
                           .iteration = iteration,
                           .rank = (guint32)rank,
                           .token_id = token_id,
                           .experts = t->ids};
    return MS_TRACE_READ_RECORD;
}

MsTraceRead
ms_trace_text_read_record(MsTraceText *t, MsTraceRecord *rec, GError **error)
{
    g_return_val_if_fail(t->ids != NULL, MS_TRACE_READ_ERROR);
    for (;;) {
        if (t->pending) {
            t->pending = FALSE;
        } else {
            gboolean got = FALSE;
            if (!next_line(t, &got, error)) {
                return MS_TRACE_READ_ERROR;
            }
            if (!got) {
                return MS_TRACE_READ_END;
            }
            if (is_skipped(t)) {
                continue;
            }
        }
        guint n = split(t, t->max_fields);
        if (is_record_line(t, n)) {
            return t->fields[0][0] == 'c' ? parse_count(t, n, rec, error)
                                          : parse_token(t, n, rec, error);
        }
        fail(t, error, MS_TRACE_ERROR_SYNTAX, "unknown record kind '%.*s' (expected 'c' or 't')",
             (int)MIN(t->lens[0], 64), t->fields[0]);
        return MS_TRACE_READ_ERROR;
    }
}

/* Appends v in decimal and a separator; hand-rolled because printf dominates writing. */
static void
put_uint(GString *out, guint64 v, char sep)
{
    char tmp[24];
    int i = (int)sizeof(tmp);
    tmp[--i] = sep;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    g_string_append_len(out, tmp + i, (gssize)sizeof(tmp) - i);
}

void
ms_trace_text_encode_header(GString *out, const MsTraceHeader *h)
{
    g_string_append_printf(out, "moe-trace %d\n", MS_TRACE_VERSION);
    if (h->generator[0]) {
        g_string_append_printf(out, "# generator: %s\n", h->generator);
    }
    g_string_append_printf(out, "experts %u\nlayers %u\nranks %u\ntop_k %u\n", h->experts,
                           h->layers, h->ranks, h->top_k);
    if (h->tokens_per_rank) {
        g_string_append_printf(out, "tokens_per_rank %u\n", h->tokens_per_rank);
    }
    if (h->max_nodes) {
        g_string_append_printf(out, "expert_nodes %u\nmax_nodes %u\n", h->expert_nodes,
                               h->max_nodes);
    }
    if (h->n_groups > 1) {
        g_string_append(out, "groups");
        for (guint32 g = 0; g < h->n_groups; g++) {
            g_string_append_printf(out, " %u", h->group_first[g]);
        }
        g_string_append_c(out, '\n');
    }
}

void
ms_trace_text_encode_record(GString *out, const MsTraceHeader *h, const MsTraceRecord *rec)
{
    if (rec->kind == MS_TRACE_RECORD_COUNT) {
        g_string_append_len(out, "c ", 2);
        put_uint(out, rec->iteration, ' ');
        put_uint(out, rec->layer, ' ');
        put_uint(out, rec->rank, ' ');
        put_uint(out, rec->expert, ' ');
        put_uint(out, rec->tokens, '\n');
        return;
    }
    g_string_append_len(out, "t ", 2);
    put_uint(out, rec->iteration, ' ');
    put_uint(out, rec->token_id, ' ');
    guint len = ms_trace_header_path_len(h);
    put_uint(out, rec->rank, len ? ' ' : '\n');
    for (guint i = 0; i < len; i++) {
        put_uint(out, rec->experts[i], i + 1 < len ? ' ' : '\n');
    }
}
