/* trace_import_list: a recursive-descent reader of JSON and Python list literals of numbers, at
 * most two levels deep, and the same shape taken from a json-glib tree. */
#include "trace_import_list.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

void
ms_import_list_init(MsImportList *list)
{
    memset(list, 0, sizeof(*list));
    list->values = g_array_new(FALSE, FALSE, sizeof(double));
}

void
ms_import_list_clear(MsImportList *list)
{
    if (list->values) {
        g_array_unref(list->values);
    }
    memset(list, 0, sizeof(*list));
}

typedef struct {
    const char *start, *p, *end;
    MsImportList *out;
    char **why;
    guint number_depth;   /* the level numbers sit at (0: none seen yet) */
    gboolean inner_known; /* an inner list was read: its length is n_inner */
} Parser;

static gboolean fail(Parser *ps, const char *format, ...) G_GNUC_PRINTF(2, 3);

static gboolean
fail(Parser *ps, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    *ps->why = g_strdup_printf("at character %" G_GSIZE_FORMAT ": %s",
                               (gsize)(ps->p - ps->start) + 1, msg);
    return FALSE;
}

static void
skip_blanks(Parser *ps)
{
    while (ps->p < ps->end && strchr(" \t\r\n", *ps->p) && *ps->p != '\0') {
        ps->p++;
    }
}

static gboolean
at(Parser *ps, char c)
{
    skip_blanks(ps);
    return ps->p < ps->end && *ps->p == c;
}

static gboolean
is_name_start(char c)
{
    return g_ascii_isalpha(c) || c == '_';
}

/* A Python name, dotted (np.int64, torch.tensor); *len gets its length. */
static const char *
name(Parser *ps, gsize *len)
{
    const char *s = ps->p;
    while (ps->p < ps->end && (g_ascii_isalnum(*ps->p) || *ps->p == '_' || *ps->p == '.')) {
        ps->p++;
    }
    *len = (gsize)(ps->p - s);
    return s;
}

static gboolean
name_is(const char *s, gsize len, const char *word)
{
    return len == strlen(word) && strncmp(s, word, len) == 0;
}

/* Where a number is added: its level must be that of every other number. */
static gboolean
add_number(Parser *ps, guint level, double v)
{
    if ((ps->number_depth != 0 && ps->number_depth != level) || (level == 1 && ps->inner_known)) {
        return fail(ps, "a list mixes numbers and lists");
    }
    ps->number_depth = level;
    if (!isfinite(v)) {
        return fail(ps, "the number is not finite");
    }
    g_array_append_val(ps->out->values, v);
    return TRUE;
}

static gboolean
number(Parser *ps, guint level)
{
    /* Digits, sign, point and exponent only: strtod would also take "inf", "nan" and hex. */
    const char *s = ps->p;
    while (ps->p < ps->end && strchr("0123456789+-.eE", *ps->p) && *ps->p != '\0') {
        ps->p++;
    }
    if (ps->p == s) {
        return fail(ps, "expected a number, a list or ']'");
    }
    g_autofree char *text = g_strndup(s, (gsize)(ps->p - s));
    char *stop = NULL;
    double v = g_ascii_strtod(text, &stop);
    if (stop == text || *stop != '\0') {
        ps->p = s;
        return fail(ps, "'%.32s' is not a number", text);
    }
    return add_number(ps, level, v);
}

/* A quoted string of a keyword argument (device='cuda:0'): skipped. */
static gboolean
skip_string(Parser *ps)
{
    char q = *ps->p++;
    while (ps->p < ps->end && *ps->p != q) {
        ps->p += *ps->p == '\\' && ps->p + 1 < ps->end ? 2 : 1;
    }
    if (ps->p >= ps->end) {
        return fail(ps, "unterminated string");
    }
    ps->p++;
    return TRUE;
}

/* KEY=VALUE after a wrapper's value (dtype=torch.int64, device='cuda:0'): skipped. */
static gboolean
skip_keyword(Parser *ps)
{
    skip_blanks(ps);
    gsize len = 0;
    if (ps->p >= ps->end || !is_name_start(*ps->p) || (name(ps, &len), !at(ps, '='))) {
        return fail(ps, "expected KEY=VALUE after the wrapped value");
    }
    ps->p++;
    skip_blanks(ps);
    if (ps->p < ps->end && (*ps->p == '\'' || *ps->p == '"')) {
        return skip_string(ps);
    }
    if (ps->p < ps->end && is_name_start(*ps->p)) {
        name(ps, &len);
        return TRUE;
    }
    const char *s = ps->p;
    while (ps->p < ps->end && strchr("0123456789+-.eE", *ps->p) && *ps->p != '\0') {
        ps->p++;
    }
    return ps->p > s || fail(ps, "expected a value after '='");
}

static gboolean value(Parser *ps, guint level);

static gboolean
list(Parser *ps, guint level)
{
    char close = *ps->p == '[' ? ']' : ')';
    ps->p++;
    if (level > MS_IMPORT_LIST_MAX_DEPTH) {
        return fail(ps, "more than %u levels of lists", MS_IMPORT_LIST_MAX_DEPTH);
    }
    guint elements = 0;
    while (!at(ps, close)) {
        if (ps->p >= ps->end) {
            return fail(ps, "the list is not closed (expected '%c')", close);
        }
        if (elements > 0) {
            if (!at(ps, ',')) {
                return fail(ps, "expected ',' or '%c'", close);
            }
            ps->p++;
            if (at(ps, close)) {
                break; /* a trailing comma, as Python allows */
            }
        }
        if (!value(ps, level)) {
            return FALSE;
        }
        elements++;
    }
    ps->p++;
    if (level == 1) {
        ps->out->n_outer = elements;
    } else if (level == 2) {
        if (ps->inner_known && elements != ps->out->n_inner) {
            return fail(ps, "this list has %u entries, the first one %u", elements,
                        ps->out->n_inner);
        }
        ps->out->n_inner = elements;
        ps->inner_known = TRUE;
    }
    return TRUE;
}

static gboolean
value(Parser *ps, guint level)
{
    skip_blanks(ps);
    if (ps->p >= ps->end) {
        return fail(ps, "the text ends where a value was expected");
    }
    if (*ps->p == '[' || *ps->p == '(') {
        if (level >= 1 && ps->number_depth == 1) {
            return fail(ps, "a list mixes numbers and lists");
        }
        return list(ps, level + 1);
    }
    if (!is_name_start(*ps->p)) {
        return level == 0 ? fail(ps, "expected a list") : number(ps, level);
    }
    gsize len = 0;
    const char *s = name(ps, &len);
    if (name_is(s, len, "True") || name_is(s, len, "true") || name_is(s, len, "False") ||
        name_is(s, len, "false")) {
        if (level == 0) {
            ps->p = s;
            return fail(ps, "expected a list");
        }
        return add_number(ps, level, *s == 'T' || *s == 't' ? 1 : 0);
    }
    /* A wrapper: tensor([...], device=...), array([...]), np.int64(3). */
    if (!at(ps, '(')) {
        ps->p = s;
        return fail(ps, "'%.*s' is neither a number nor a wrapper such as tensor(...)",
                    (int)MIN(len, 32), s);
    }
    ps->p++;
    if (!value(ps, level)) {
        return FALSE;
    }
    while (at(ps, ',')) {
        ps->p++;
        if (at(ps, ')')) {
            break;
        }
        if (!skip_keyword(ps)) {
            return FALSE;
        }
    }
    if (!at(ps, ')')) {
        return fail(ps, "expected ')' closing '%.*s('", (int)MIN(len, 32), s);
    }
    ps->p++;
    return TRUE;
}

gboolean
ms_import_list_parse(const char *text, gsize len, MsImportList *out, char **why)
{
    g_array_set_size(out->values, 0);
    out->depth = out->n_outer = out->n_inner = 0;
    Parser ps = {.start = text, .p = text, .end = text + len, .out = out, .why = why};
    if (!value(&ps, 0)) {
        return FALSE;
    }
    skip_blanks(&ps);
    if (ps.p < ps.end) {
        return fail(&ps, "text after the list");
    }
    out->depth = ps.number_depth ? ps.number_depth : (ps.inner_known ? 2 : 1);
    return TRUE;
}

/* --- JSON --- */

static gboolean
json_number(JsonNode *node, double *v)
{
    if (!JSON_NODE_HOLDS_VALUE(node)) {
        return FALSE;
    }
    GType t = json_node_get_value_type(node);
    if (t == G_TYPE_INT64) {
        *v = (double)json_node_get_int(node);
    } else if (t == G_TYPE_DOUBLE) {
        *v = json_node_get_double(node);
    } else if (t == G_TYPE_BOOLEAN) {
        *v = json_node_get_boolean(node) ? 1 : 0;
    } else {
        return FALSE;
    }
    return isfinite(*v);
}

gboolean
ms_import_list_from_json(JsonNode *node, MsImportList *out, char **why)
{
    g_array_set_size(out->values, 0);
    out->depth = out->n_outer = out->n_inner = 0;
    if (!JSON_NODE_HOLDS_ARRAY(node)) {
        *why = g_strdup("not a JSON list");
        return FALSE;
    }
    JsonArray *a = json_node_get_array(node);
    out->n_outer = json_array_get_length(a);
    out->depth = 1;
    for (guint i = 0; i < out->n_outer; i++) {
        JsonNode *el = json_array_get_element(a, i);
        double v = 0;
        if (JSON_NODE_HOLDS_ARRAY(el) && (i == 0 || out->depth == 2)) {
            JsonArray *row = json_node_get_array(el);
            guint n = json_array_get_length(row);
            if (i > 0 && n != out->n_inner) {
                *why = g_strdup_printf("entry %u has %u numbers, entry 0 %u", i, n, out->n_inner);
                return FALSE;
            }
            out->depth = 2;
            out->n_inner = n;
            for (guint j = 0; j < n; j++) {
                if (!json_number(json_array_get_element(row, j), &v)) {
                    *why = g_strdup_printf("entry %u, %u is not a finite number", i, j);
                    return FALSE;
                }
                g_array_append_val(out->values, v);
            }
        } else if (out->depth == 1 && json_number(el, &v)) {
            g_array_append_val(out->values, v);
        } else {
            *why = g_strdup_printf(out->depth == 2 || JSON_NODE_HOLDS_ARRAY(el)
                                       ? "entry %u: a list mixes numbers and lists"
                                       : "entry %u is not a finite number",
                                   i);
            return FALSE;
        }
    }
    return TRUE;
}
