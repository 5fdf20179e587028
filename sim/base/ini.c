/* ini: a structural pass over the text records where every group and key sits (for messages) and
 * refuses duplicates; GKeyFile then holds the values. */
#include "ini.h"

#include <string.h>

G_DEFINE_QUARK(ms_ini_error_quark, ms_ini_error)

#define INI_MAX_BYTES (64u << 20)

typedef struct {
    char *name;
    guint line;
    GPtrArray *keys; /* char*, file order, NULL-terminated */
} Group;

struct _MsIni {
    char *source;
    GKeyFile *kf;
    GPtrArray *groups;      /* Group*, file order */
    GPtrArray *group_names; /* borrowed names, NULL-terminated */
    GHashTable *by_name;    /* name -> Group* */
    GHashTable *lines;      /* "group\nkey" -> line */
    GHashTable *values;     /* "group\nkey" -> unescaped, stripped value */
};

static void
group_free(gpointer p)
{
    Group *g = p;
    g_free(g->name);
    g_ptr_array_unref(g->keys);
    g_free(g);
}

void
ms_ini_free(MsIni *ini)
{
    if (ini == NULL) {
        return;
    }
    g_free(ini->source);
    if (ini->kf) {
        g_key_file_unref(ini->kf);
    }
    g_ptr_array_unref(ini->groups);
    g_ptr_array_unref(ini->group_names);
    g_hash_table_unref(ini->by_name);
    g_hash_table_unref(ini->lines);
    g_hash_table_unref(ini->values);
    g_free(ini);
}

static char *
line_key(const char *group, const char *key)
{
    return g_strconcat(group, "\n", key, NULL);
}

/* Records group and key positions; rejects lines GKeyFile would reject, and duplicates, with the
 * line number that GKeyFile's own messages lack. */
static gboolean
scan(MsIni *ini, const char *data, gsize len, GError **error)
{
    Group *cur = NULL;
    guint lineno = 0;
    const char *p = data, *end = data + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', end - p);
        const char *stop = nl ? nl : end;
        lineno++;
        g_autofree char *line = g_strndup(p, stop - p);
        p = nl ? nl + 1 : end;
        g_strstrip(line);
        if (line[0] == '\0' || line[0] == '#') {
            continue;
        }
        if (!g_utf8_validate(line, -1, NULL)) {
            g_set_error(error, MS_INI_ERROR, MS_INI_ERROR_PARSE, "%s:%u: line is not valid UTF-8",
                        ini->source, lineno);
            return FALSE;
        }
        if (line[0] == '[') {
            gsize n = strlen(line);
            if (n < 3 || line[n - 1] != ']' || strpbrk(line + 1, "[]") != line + n - 1) {
                g_set_error(error, MS_INI_ERROR, MS_INI_ERROR_PARSE,
                            "%s:%u: malformed group header '%s' (expected [name])", ini->source,
                            lineno, line);
                return FALSE;
            }
            g_autofree char *name = g_strndup(line + 1, n - 2);
            if (g_hash_table_contains(ini->by_name, name)) {
                Group *old = g_hash_table_lookup(ini->by_name, name);
                g_set_error(error, MS_INI_ERROR, MS_INI_ERROR_DUPLICATE,
                            "%s:%u: group [%s] given twice (first at line %u)", ini->source, lineno,
                            name, old->line);
                return FALSE;
            }
            cur = g_new0(Group, 1);
            cur->name = g_steal_pointer(&name);
            cur->line = lineno;
            cur->keys = g_ptr_array_new_with_free_func(g_free);
            g_ptr_array_add(cur->keys, NULL);
            g_ptr_array_add(ini->groups, cur);
            g_hash_table_insert(ini->by_name, cur->name, cur);
            continue;
        }
        const char *eq = strchr(line, '=');
        if (eq == NULL || eq == line) {
            g_set_error(error, MS_INI_ERROR, MS_INI_ERROR_PARSE,
                        "%s:%u: '%s' is not a group header, key = value, or # comment", ini->source,
                        lineno, line);
            return FALSE;
        }
        if (cur == NULL) {
            g_set_error(error, MS_INI_ERROR, MS_INI_ERROR_PARSE,
                        "%s:%u: key '%s' before the first [group]", ini->source, lineno, line);
            return FALSE;
        }
        g_autofree char *key = g_strndup(line, eq - line);
        g_strstrip(key);
        if (strpbrk(key, "[]") != NULL) {
            g_set_error(error, MS_INI_ERROR, MS_INI_ERROR_PARSE, "%s:%u: bad key name '%s'",
                        ini->source, lineno, key);
            return FALSE;
        }
        char *lk = line_key(cur->name, key);
        gpointer old = g_hash_table_lookup(ini->lines, lk);
        if (old != NULL) {
            g_set_error(error, MS_INI_ERROR, MS_INI_ERROR_DUPLICATE,
                        "%s:%u: [%s] key '%s' given twice (first at line %u)", ini->source, lineno,
                        cur->name, key, GPOINTER_TO_UINT(old));
            g_free(lk);
            return FALSE;
        }
        g_hash_table_insert(ini->lines, lk, GUINT_TO_POINTER(lineno));
        g_ptr_array_index(cur->keys, cur->keys->len - 1) = g_steal_pointer(&key);
        g_ptr_array_add(cur->keys, NULL);
    }
    return TRUE;
}

MsIni *
ms_ini_load_data(const char *data, gsize len, const char *source, GError **error)
{
    g_return_val_if_fail(data != NULL || len == 0, NULL);
    g_autoptr(MsIni) ini = g_new0(MsIni, 1);
    ini->source = g_strdup(source ? source : "<input>");
    ini->groups = g_ptr_array_new_with_free_func(group_free);
    ini->group_names = g_ptr_array_new();
    ini->by_name = g_hash_table_new(g_str_hash, g_str_equal);
    ini->lines = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    ini->values = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    if (len > INI_MAX_BYTES) {
        g_set_error(error, MS_INI_ERROR, MS_INI_ERROR_IO,
                    "%s: %" G_GSIZE_FORMAT
                    " bytes is too large for a configuration file (limit 64 MiB)",
                    ini->source, len);
        return NULL;
    }
    if (memchr(data, '\0', len) != NULL) {
        g_set_error(error, MS_INI_ERROR, MS_INI_ERROR_PARSE,
                    "%s: contains a NUL byte (binary file?)", ini->source);
        return NULL;
    }
    if (!scan(ini, data, len, error)) {
        return NULL;
    }
    for (guint i = 0; i < ini->groups->len; i++) {
        g_ptr_array_add(ini->group_names, ((Group *)ini->groups->pdata[i])->name);
    }
    g_ptr_array_add(ini->group_names, NULL);
    ini->kf = g_key_file_new();
    g_autoptr(GError) local = NULL;
    if (!g_key_file_load_from_data(ini->kf, data, len, G_KEY_FILE_NONE, &local)) {
        g_set_error(error, MS_INI_ERROR, MS_INI_ERROR_PARSE, "%s: %s", ini->source, local->message);
        return NULL;
    }
    /* Take every value once, unescaped by GKeyFile, so getters can hand out borrowed strings. */
    for (guint i = 0; i < ini->groups->len; i++) {
        Group *g = ini->groups->pdata[i];
        for (guint k = 0; k + 1 < g->keys->len; k++) {
            const char *key = g->keys->pdata[k];
            char *v = g_key_file_get_string(ini->kf, g->name, key, &local);
            if (v == NULL) {
                ms_ini_set_error(ini, g->name, key, error, MS_INI_ERROR_PARSE, "%s",
                                 local->message);
                return NULL;
            }
            g_hash_table_insert(ini->values, line_key(g->name, key), g_strstrip(v));
        }
    }
    return g_steal_pointer(&ini);
}

MsIni *
ms_ini_load_file(const char *path, MsInputKind kind, GError **error)
{
    g_autofree char *data = NULL;
    gsize len = 0;
    g_autoptr(GError) local = NULL;
    if (!ms_input_file_read(path, kind, &data, &len, &local)) {
        g_set_error(error, MS_INI_ERROR, MS_INI_ERROR_IO, "%s", local->message);
        return NULL;
    }
    return ms_ini_load_data(data, len, path, error);
}

const char *
ms_ini_source(const MsIni *ini)
{
    return ini->source;
}

const char *const *
ms_ini_groups(const MsIni *ini, guint *n_groups)
{
    if (n_groups) {
        *n_groups = ini->groups->len;
    }
    return (const char *const *)ini->group_names->pdata;
}

const char *const *
ms_ini_keys(const MsIni *ini, const char *group, guint *n_keys)
{
    Group *g = g_hash_table_lookup(ini->by_name, group);
    if (n_keys) {
        *n_keys = g ? g->keys->len - 1 : 0;
    }
    return g ? (const char *const *)g->keys->pdata : NULL;
}

gboolean
ms_ini_has_group(const MsIni *ini, const char *group)
{
    return g_hash_table_contains(ini->by_name, group);
}

gboolean
ms_ini_has_key(const MsIni *ini, const char *group, const char *key)
{
    return ms_ini_line(ini, group, key) != 0;
}

guint
ms_ini_line(const MsIni *ini, const char *group, const char *key)
{
    if (key == NULL) {
        Group *g = g_hash_table_lookup(ini->by_name, group);
        return g ? g->line : 0;
    }
    g_autofree char *lk = line_key(group, key);
    return GPOINTER_TO_UINT(g_hash_table_lookup(ini->lines, lk));
}

void
ms_ini_set_error(const MsIni *ini, const char *group, const char *key, GError **error,
                 MsIniError code, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    guint line = group ? ms_ini_line(ini, group, key) : 0;
    if (line == 0 && group && key) {
        line = ms_ini_line(ini, group, NULL);
    }
    GString *where = g_string_new(ini->source);
    if (line) {
        g_string_append_printf(where, ":%u", line);
    }
    g_string_append(where, ":");
    if (group) {
        g_string_append_printf(where, " [%s]", group);
    }
    if (key) {
        g_string_append_printf(where, " %s", key);
    }
    g_set_error(error, MS_INI_ERROR, code, "%s: %s", where->str, msg);
    g_string_free(where, TRUE);
}

static const char *
value_of(const MsIni *ini, const char *group, const char *key)
{
    g_autofree char *lk = line_key(group, key);
    return g_hash_table_lookup(ini->values, lk);
}

const char *
ms_ini_get_string(const MsIni *ini, const char *group, const char *key, GError **error)
{
    const char *v = value_of(ini, group, key);
    if (v == NULL) {
        ms_ini_set_error(ini, group, key, error, MS_INI_ERROR_MISSING, "required key is missing");
    }
    return v;
}

gboolean
ms_ini_opt_string(const MsIni *ini, const char *group, const char *key, const char **out,
                  GError **error)
{
    (void)error;
    const char *v = value_of(ini, group, key);
    if (v != NULL) {
        *out = v;
    }
    return TRUE;
}

/* Wraps a units-module parse failure into a located MS_INI_ERROR_VALUE. */
static gboolean
located(const MsIni *ini, const char *group, const char *key, gboolean ok, GError *local,
        GError **error)
{
    if (!ok) {
        ms_ini_set_error(ini, group, key, error, MS_INI_ERROR_VALUE, "%s", local->message);
        g_error_free(local);
    }
    return ok;
}

/* Each typed getter: fetch (required or optional), parse, locate errors. */
#define DEFINE_GETTERS(suffix, ctype, parse_call)                                                  \
    static gboolean parse_##suffix(const MsIni *ini, const char *group, const char *key,           \
                                   const char *text, ctype *out, GError **error)                   \
    {                                                                                              \
        GError *local = NULL;                                                                      \
        ctype v;                                                                                   \
        gboolean ok = parse_call;                                                                  \
        if (ok) {                                                                                  \
            *out = v;                                                                              \
        }                                                                                          \
        return located(ini, group, key, ok, local, error);                                         \
    }

DEFINE_GETTERS(bandwidth, MsBandwidth, ms_parse_bandwidth(text, &v, &local))
DEFINE_GETTERS(time, MsTime, ms_parse_time(text, &v, &local))
DEFINE_GETTERS(flops, MsFlops, ms_parse_flops(text, &v, &local))
DEFINE_GETTERS(bytes, guint64, ms_parse_bytes(text, &v, &local))

gboolean
ms_ini_get_bandwidth(const MsIni *ini, const char *group, const char *key, MsBandwidth *out,
                     GError **error)
{
    const char *t = ms_ini_get_string(ini, group, key, error);
    return t && parse_bandwidth(ini, group, key, t, out, error);
}

gboolean
ms_ini_get_time(const MsIni *ini, const char *group, const char *key, MsTime *out, GError **error)
{
    const char *t = ms_ini_get_string(ini, group, key, error);
    return t && parse_time(ini, group, key, t, out, error);
}

gboolean
ms_ini_get_flops(const MsIni *ini, const char *group, const char *key, MsFlops *out, GError **error)
{
    const char *t = ms_ini_get_string(ini, group, key, error);
    return t && parse_flops(ini, group, key, t, out, error);
}

gboolean
ms_ini_get_bytes(const MsIni *ini, const char *group, const char *key, guint64 *out, GError **error)
{
    const char *t = ms_ini_get_string(ini, group, key, error);
    return t && parse_bytes(ini, group, key, t, out, error);
}

gboolean
ms_ini_get_uint(const MsIni *ini, const char *group, const char *key, guint64 min, guint64 max,
                guint64 *out, GError **error)
{
    const char *t = ms_ini_get_string(ini, group, key, error);
    if (t == NULL) {
        return FALSE;
    }
    GError *local = NULL;
    guint64 v;
    gboolean ok = ms_parse_uint(t, min, max, &v, &local);
    if (ok) {
        *out = v;
    }
    return located(ini, group, key, ok, local, error);
}

gboolean
ms_ini_get_double(const MsIni *ini, const char *group, const char *key, double min, double max,
                  double *out, GError **error)
{
    const char *t = ms_ini_get_string(ini, group, key, error);
    if (t == NULL) {
        return FALSE;
    }
    GError *local = NULL;
    double v;
    gboolean ok = ms_parse_double(t, min, max, &v, &local);
    if (ok) {
        *out = v;
    }
    return located(ini, group, key, ok, local, error);
}

gboolean
ms_ini_get_bool(const MsIni *ini, const char *group, const char *key, gboolean *out, GError **error)
{
    const char *t = ms_ini_get_string(ini, group, key, error);
    if (t == NULL) {
        return FALSE;
    }
    if (g_ascii_strcasecmp(t, "true") == 0 || strcmp(t, "1") == 0 ||
        g_ascii_strcasecmp(t, "yes") == 0) {
        *out = TRUE;
        return TRUE;
    }
    if (g_ascii_strcasecmp(t, "false") == 0 || strcmp(t, "0") == 0 ||
        g_ascii_strcasecmp(t, "no") == 0) {
        *out = FALSE;
        return TRUE;
    }
    ms_ini_set_error(ini, group, key, error, MS_INI_ERROR_VALUE,
                     "'%s' is not a boolean (true/false)", t);
    return FALSE;
}

#define DEFINE_OPT(name, ...)                                                                      \
    if (!ms_ini_has_key(ini, group, key)) {                                                        \
        return TRUE;                                                                               \
    }                                                                                              \
    return ms_ini_get_##name(ini, group, key, __VA_ARGS__);

gboolean
ms_ini_opt_bandwidth(const MsIni *ini, const char *group, const char *key, MsBandwidth *out,
                     GError **error){DEFINE_OPT(bandwidth, out, error)}

gboolean ms_ini_opt_time(const MsIni *ini, const char *group, const char *key, MsTime *out,
                         GError **error){DEFINE_OPT(time, out, error)}

gboolean ms_ini_opt_flops(const MsIni *ini, const char *group, const char *key, MsFlops *out,
                          GError **error){DEFINE_OPT(flops, out, error)}

gboolean ms_ini_opt_bytes(const MsIni *ini, const char *group, const char *key, guint64 *out,
                          GError **error){DEFINE_OPT(bytes, out, error)}

gboolean
    ms_ini_opt_uint(const MsIni *ini, const char *group, const char *key, guint64 min, guint64 max,
                    guint64 *out, GError **error){DEFINE_OPT(uint, min, max, out, error)}

gboolean
    ms_ini_opt_double(const MsIni *ini, const char *group, const char *key, double min, double max,
                      double *out, GError **error){DEFINE_OPT(double, min, max, out, error)}

gboolean ms_ini_opt_bool(const MsIni *ini, const char *group, const char *key, gboolean *out,
                         GError **error){DEFINE_OPT(bool, out, error)}

gboolean ms_ini_check_keys(const MsIni *ini, const char *group, const char *const *allowed,
                           GError **error)
{
    const char *const *keys = ms_ini_keys(ini, group, NULL);
    for (guint i = 0; keys && keys[i]; i++) {
        if (!g_strv_contains(allowed, keys[i])) {
            g_autofree char *list = g_strjoinv(", ", (char **)allowed);
            ms_ini_set_error(ini, group, keys[i], error, MS_INI_ERROR_UNKNOWN_KEY,
                             "unknown key (known keys: %s)", list);
            return FALSE;
        }
    }
    return TRUE;
}

gboolean
ms_ini_range_double(const MsIni *ini, const char *group, const MsRange *range, gboolean required,
                    double *out, GError **error)
{
    g_return_val_if_fail(range != NULL, FALSE);
    const char *t = value_of(ini, group, range->key);
    if (t == NULL) {
        return !required || ms_ini_get_string(ini, group, range->key, error) != NULL;
    }
    GError *local = NULL;
    double v;
    gboolean ok = ms_range_parse(range, t, &v, &local);
    if (ok) {
        *out = v;
    }
    return located(ini, group, range->key, ok, local, error);
}

/* The value of a key checked against its range; *present says whether the file gave it (when it
 * did not, the caller's default stays). */
static gboolean
range_value(const MsIni *ini, const char *group, const MsRange *range, gboolean required, double *v,
            gboolean *present, GError **error)
{
    *v = 0;
    *present = value_of(ini, group, range->key) != NULL;
    return ms_ini_range_double(ini, group, range, required, v, error);
}

gboolean
ms_ini_range_uint(const MsIni *ini, const char *group, const MsRange *range, gboolean required,
                  guint64 *out, GError **error)
{
    g_return_val_if_fail(range->unit == MS_RANGE_COUNT || range->unit == MS_RANGE_BYTES, FALSE);
    /* The ranges of counts and sizes stay below 2^53: the double holds them exactly. */
    double v;
    gboolean present;
    if (!range_value(ini, group, range, required, &v, &present, error)) {
        return FALSE;
    }
    if (present) {
        *out = (guint64)v;
    }
    return TRUE;
}

gboolean
ms_ini_range_time(const MsIni *ini, const char *group, const MsRange *range, gboolean required,
                  MsTime *out, GError **error)
{
    g_return_val_if_fail(range->unit == MS_RANGE_TIME, FALSE);
    double v;
    gboolean present;
    if (!range_value(ini, group, range, required, &v, &present, error)) {
        return FALSE;
    }
    if (present) {
        *out = ms_time_from_s(v);
    }
    return TRUE;
}

gboolean
ms_ini_range_bool(const MsIni *ini, const char *group, const MsRange *range, gboolean required,
                  gboolean *out, GError **error)
{
    g_return_val_if_fail(range->unit == MS_RANGE_BOOLEAN, FALSE);
    double v;
    gboolean present;
    if (!range_value(ini, group, range, required, &v, &present, error)) {
        return FALSE;
    }
    if (present) {
        *out = v != 0;
    }
    return TRUE;
}

gboolean
ms_ini_range_choice(const MsIni *ini, const char *group, const MsRange *range, gboolean required,
                    guint *out, GError **error)
{
    g_return_val_if_fail(range->unit == MS_RANGE_CHOICE && range->names != NULL, FALSE);
    double v;
    gboolean present;
    if (!range_value(ini, group, range, required, &v, &present, error)) {
        return FALSE;
    }
    if (present) {
        *out = (guint)v;
    }
    return TRUE;
}
