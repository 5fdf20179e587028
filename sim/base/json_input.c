/* json_input: a nesting bound in front of json-glib's recursive parser. The scan skips strings
 * (with their escapes) and counts '[' and '{' against ']' and '}'; mismatches are left to the
 * parser, which reports them with line and column. */
#include "json_input.h"

#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(ms_json_input_error_quark, ms_json_input_error)
/* clang-format on */

static gboolean
refuse(GError **error, MsJsonInputError code, const char *source, guint line, const char *what)
{
    g_autofree char *where = source ? g_strdup_printf("%s:%u: ", source, line) : g_strdup("");
    g_set_error(error, MS_JSON_INPUT_ERROR, code, "%s%s", where, what);
    return FALSE;
}

gboolean
ms_json_input_check(const char *data, gsize len, const char *source, GError **error)
{
    guint depth = 0, line = 1;
    /* started: a top-level value has begun; closed: a top-level string, array or object ended. */
    gboolean in_string = FALSE, started = FALSE, closed = FALSE;
    for (gsize i = 0; i < len; i++) {
        char c = data[i];
        line += c == '\n';
        if (in_string) {
            if (c == '\\') {
                i++; /* the escaped character, never a quote that ends the string */
            } else if (c == '"') {
                in_string = FALSE;
                closed = depth == 0;
            }
            continue;
        }
        if (g_ascii_isspace(c)) {
            continue;
        }
        /* json-glib would take a second top-level value for part of the first and leak it. */
        if (closed || (depth == 0 && started && (c == '"' || c == '[' || c == '{'))) {
            return refuse(error, MS_JSON_INPUT_ERROR_SYNTAX, source, line,
                          "text after the end of the JSON document");
        }
        started = TRUE;
        if (c == '"') {
            in_string = TRUE;
        } else if (c == '[' || c == '{') {
            if (++depth > MS_JSON_INPUT_MAX_DEPTH) {
                g_autofree char *what =
                    g_strdup_printf("JSON nested deeper than %u levels", MS_JSON_INPUT_MAX_DEPTH);
                return refuse(error, MS_JSON_INPUT_ERROR_DEPTH, source, line, what);
            }
        } else if ((c == ']' || c == '}') && depth > 0) {
            closed = --depth == 0;
        }
    }
    return TRUE;
}

/* json-glib keeps the last of two members of one name and says nothing: the names of each object
 * being parsed are kept until it ends, and the first repeated one is remembered with its line. */
typedef struct {
    GHashTable *open; /* JsonObject * -> GHashTable * of its member names so far */
    char *name;       /* the first name given twice, or NULL */
    guint line;
} Duplicates;

static void
on_member(JsonParser *parser, JsonObject *object, const char *name, gpointer data)
{
    Duplicates *d = data;
    GHashTable *names = g_hash_table_lookup(d->open, object);
    if (names == NULL) {
        names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        g_hash_table_insert(d->open, object, names);
    }
    if (!g_hash_table_add(names, g_strdup(name)) && d->name == NULL) {
        d->name = g_strdup(name);
        d->line = json_parser_get_current_line(parser);
    }
}

static void
on_object_end(JsonParser *parser, JsonObject *object, gpointer data)
{
    (void)parser;
    Duplicates *d = data;
    g_hash_table_remove(d->open, object);
}

/* A UTF-8 byte order mark, which editors on some systems put first: read past, as nothing. */
#define BOM "\xef\xbb\xbf"

gboolean
ms_json_input_load_data(JsonParser *parser, const char *data, gsize len, const char *source,
                        GError **error)
{
    if (len >= 3 && memcmp(data, BOM, 3) == 0) {
        data += 3;
        len -= 3;
    }
    if (!ms_json_input_check(data, len, source, error)) {
        return FALSE;
    }
    g_autoptr(GError) local = NULL;
    Duplicates dups = {g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                             (GDestroyNotify)g_hash_table_unref),
                       NULL, 0};
    gulong member = g_signal_connect(parser, "object-member", G_CALLBACK(on_member), &dups);
    gulong end = g_signal_connect(parser, "object-end", G_CALLBACK(on_object_end), &dups);
    gboolean parsed = json_parser_load_from_data(parser, data, (gssize)len, &local);
    g_signal_handler_disconnect(parser, member);
    g_signal_handler_disconnect(parser, end);
    g_hash_table_unref(dups.open);
    if (parsed && dups.name) {
        g_autofree char *name = g_strescape(dups.name, NULL);
        g_autofree char *what = g_strdup_printf("key '%s' given twice in one object", name);
        g_free(dups.name);
        return refuse(error, MS_JSON_INPUT_ERROR_SYNTAX, source, dups.line, what);
    }
    g_free(dups.name);
    if (!parsed) {
        /* json-glib names text in memory "<data>": put the real source in its place. */
        const char *msg = local->message;
        if (source == NULL) {
            g_set_error_literal(error, MS_JSON_INPUT_ERROR, MS_JSON_INPUT_ERROR_SYNTAX, msg);
        } else if (g_str_has_prefix(msg, "<data>:")) {
            g_set_error(error, MS_JSON_INPUT_ERROR, MS_JSON_INPUT_ERROR_SYNTAX, "%s:%s", source,
                        msg + strlen("<data>:"));
        } else {
            g_set_error(error, MS_JSON_INPUT_ERROR, MS_JSON_INPUT_ERROR_SYNTAX, "%s: %s", source,
                        msg);
        }
        return FALSE;
    }
    return TRUE;
}

gboolean
ms_json_input_load_file(JsonParser *parser, const char *path, MsInputKind kind, GError **error)
{
    g_autofree char *data = NULL;
    gsize len = 0;
    g_autoptr(GError) local = NULL;
    if (!ms_input_file_read(path, kind, &data, &len, &local)) {
        g_set_error(error, MS_JSON_INPUT_ERROR, MS_JSON_INPUT_ERROR_IO, "%s", local->message);
        return FALSE;
    }
    return ms_json_input_load_data(parser, data, len, path, error);
}
