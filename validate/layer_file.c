/* layer_file: reading per-layer tables: moesim-layers JSON (groups of GPUs per layer) and CSV
 * (one line per GPU, columns by name), and profiler traces through kineto.c. */
#include "layer_file.h"

#include <math.h>
#include <string.h>

#include "sim/base/csv.h"
#include "sim/base/input_file.h"
#include "sim/base/json_input.h"
#include "validate/kineto.h"
#include "validate/measurement.h"

G_DEFINE_QUARK(ms_layer_file_error_quark, ms_layer_file_error)

#define CSV_PREFIX "# moesim-layers"

static gboolean G_GNUC_PRINTF(4, 5)
    fail(GError **error, MsLayerFileError code, const char *where, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, MS_LAYER_FILE_ERROR, code, "%s: %s", where, msg);
    return FALSE;
}

/* Times are microseconds, at most an hour per layer. */
#define MAX_US 3.6e9

static gboolean
phase_from(const char *text, MsPhase *out)
{
    if (!g_strcmp0(text, "forward")) {
        *out = MS_PHASE_FORWARD;
        return TRUE;
    }
    if (!g_strcmp0(text, "backward")) {
        *out = MS_PHASE_BACKWARD;
        return TRUE;
    }
    return FALSE;
}

/* --- JSON --- */

static gboolean
json_num(JsonObject *o, const char *key, gboolean required, double max, double *out,
         const char *where, GError **error)
{
    JsonNode *n = json_object_get_member(o, key);
    if (n == NULL && !required) {
        return TRUE;
    }
    GType t = n && JSON_NODE_HOLDS_VALUE(n) ? json_node_get_value_type(n) : G_TYPE_INVALID;
    double v = (t == G_TYPE_INT64 || t == G_TYPE_DOUBLE) ? json_node_get_double(n) : NAN;
    if (!(v >= 0) || !(v <= max)) {
        return fail(error, MS_LAYER_FILE_ERROR_VALUE, where,
                    "'%s' is missing or not a number in [0, %g]", key, max);
    }
    *out = v;
    return TRUE;
}

static gboolean
json_gpu(JsonObject *layer, JsonNode *g, MsLayerRow *row, const char *where, GError **error)
{
    JsonObject *o = JSON_NODE_HOLDS_OBJECT(g) ? json_node_get_object(g) : NULL;
    if (o == NULL) {
        return fail(error, MS_LAYER_FILE_ERROR_VALUE, where, "not an object");
    }
    double gpu = 0, experts = 0, tokens = 0;
    if (!json_num(o, "gpu", TRUE, 65535, &gpu, where, error) ||
        !json_num(o, "layer_us", TRUE, MAX_US, &row->layer_us, where, error) ||
        !json_num(o, "start_us", FALSE, MAX_US, &row->start_us, where, error) ||
        !json_num(o, "experts", FALSE, G_MAXUINT32, &experts, where, error) ||
        !json_num(o, "tokens", FALSE, G_MAXUINT32, &tokens, where, error)) {
        return FALSE;
    }
    row->busy_us = row->layer_us;
    if (!json_num(o, "busy_us", FALSE, MAX_US, &row->busy_us, where, error)) {
        return FALSE;
    }
    for (guint p = 0; p < MS_LAYER_N_PARTS; p++) {
        g_autofree char *key = g_strdup_printf("%s_us", ms_layer_part_name(p));
        g_autofree char *ops_key = g_strdup_printf("%s_ops", ms_layer_part_name(p));
        double ops = 0;
        if (!json_num(o, key, FALSE, MAX_US, &row->part_us[p], where, error) ||
            !json_num(o, ops_key, FALSE, G_MAXUINT32, &ops, where, error)) {
            return FALSE;
        }
        row->part_ops[p] = (guint32)ops;
    }
    row->gpu = (guint32)gpu;
    row->experts = (guint32)experts;
    row->tokens = (guint32)tokens;
    (void)layer;
    return TRUE;
}

static gboolean
read_json(MsLayerTable *t, JsonNode *root, const char *source, GError **error)
{
    JsonObject *top = json_node_get_object(root);
    if (json_object_get_int_member_with_default(top, "version", 0) != MS_LAYERS_FORMAT) {
        return fail(error, MS_LAYER_FILE_ERROR_FORMAT, source,
                    "moesim-layers version %" G_GINT64_FORMAT " is not one this moesim reads "
                    "(it reads %d)",
                    json_object_get_int_member_with_default(top, "version", 0), MS_LAYERS_FORMAT);
    }
    JsonNode *meta = json_object_get_member(top, "meta");
    if (meta && JSON_NODE_HOLDS_OBJECT(meta)) {
        JsonObject *mo = json_node_get_object(meta);
        g_autoptr(GList) keys = json_object_get_members(mo);
        for (GList *k = keys; k; k = k->next) {
            JsonNode *v = json_object_get_member(mo, k->data);
            if (JSON_NODE_HOLDS_VALUE(v) && json_node_get_value_type(v) == G_TYPE_STRING) {
                ms_layer_table_set_meta(t, k->data, json_node_get_string(v));
            }
        }
    }
    JsonNode *ln = json_object_get_member(top, "layers");
    if (ln == NULL || !JSON_NODE_HOLDS_ARRAY(ln)) {
        return fail(error, MS_LAYER_FILE_ERROR_VALUE, source, "no 'layers' array");
    }
    JsonArray *la = json_node_get_array(ln);
    for (guint i = 0; i < json_array_get_length(la); i++) {
        g_autofree char *where = g_strdup_printf("%s: layers[%u]", source, i);
        JsonNode *n = json_array_get_element(la, i);
        JsonObject *o = JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
        MsLayerRow base = {0};
        double it = 0, layer = 0;
        if (o == NULL) {
            return fail(error, MS_LAYER_FILE_ERROR_VALUE, where, "not an object");
        }
        JsonNode *ph = json_object_get_member(o, "phase");
        if (!json_num(o, "iteration", TRUE, G_MAXUINT32, &it, where, error) ||
            !json_num(o, "layer", TRUE, 4095, &layer, where, error)) {
            return FALSE;
        }
        if (ph == NULL || !JSON_NODE_HOLDS_VALUE(ph) ||
            json_node_get_value_type(ph) != G_TYPE_STRING ||
            !phase_from(json_node_get_string(ph), &base.phase)) {
            return fail(error, MS_LAYER_FILE_ERROR_VALUE, where,
                        "'phase' is missing or not forward or backward");
        }
        base.iteration = (guint32)it;
        base.layer = (gint32)layer;
        JsonNode *gn = json_object_get_member(o, "gpus");
        if (gn == NULL || !JSON_NODE_HOLDS_ARRAY(gn)) {
            return fail(error, MS_LAYER_FILE_ERROR_VALUE, where, "no 'gpus' array");
        }
        JsonArray *ga = json_node_get_array(gn);
        for (guint g = 0; g < json_array_get_length(ga); g++) {
            g_autofree char *gw = g_strdup_printf("%s.gpus[%u]", where, g);
            MsLayerRow row = base;
            if (!json_gpu(o, json_array_get_element(ga, g), &row, gw, error)) {
                return FALSE;
            }
            ms_layer_table_append(t, &row);
        }
    }
    return TRUE;
}

/* --- CSV --- */

static gboolean
csv_field(char **f, gint col, const char *name, double max, gboolean required, double *out,
          const char *source, guint line, GError **error)
{
    if (col < 0 || *f[col] == '\0') {
        if (required) {
            return ms_measurement_fail(error, MS_MEASUREMENT_ERROR_MISSING, source, line,
                                       "%s: required", name);
        }
        return TRUE;
    }
    return ms_measurement_parse_double(source, line, name, f[col], 0, max, out, error);
}

static gboolean
read_csv(MsLayerTable *t, const char *data, gsize len, const char *source, GError **error)
{
    gsize pos = ms_csv_bom_length(data, len);
    guint line = 1;
    g_autofree char *first = ms_csv_next_line(data, len, &pos);
    if (first == NULL || strcmp(g_strstrip(first), CSV_PREFIX " 1") != 0) {
        return fail(error, MS_LAYER_FILE_ERROR_FORMAT, source, "the first line is not '%s %d'",
                    CSV_PREFIX, MS_LAYERS_FORMAT);
    }
    g_autofree char *head = NULL;
    while ((head = ms_csv_next_line(data, len, &pos)) != NULL) {
        line++;
        if (head[0] != '#' && *g_strstrip(head) != '\0') {
            break;
        }
        g_clear_pointer(&head, g_free);
    }
    if (head == NULL) {
        return fail(error, MS_LAYER_FILE_ERROR_VALUE, source, "no header line");
    }
    g_autoptr(MsCsvFields) split = ms_csv_fields_new();
    if (!ms_measurement_split_csv(split, source, line, head, error)) {
        return FALSE;
    }
    guint nh = ms_csv_fields_width(split);
    g_auto(GStrv) h = ms_csv_fields_dup(split);
    enum { C_IT, C_LAYER, C_PHASE, C_GPU, C_START, C_LAYER_US, C_BUSY, C_EXPERTS, C_TOKENS, C_N };
    static const char *const names[C_N] = {"iteration", "layer",   "phase",   "gpu",   "start_us",
                                           "layer_us",  "busy_us", "experts", "tokens"};
    gint col[C_N], part_col[MS_LAYER_N_PARTS], ops_col[MS_LAYER_N_PARTS];
    for (guint c = 0; c < C_N; c++) {
        col[c] = ms_csv_column(h, names[c]);
    }
    for (guint p = 0; p < MS_LAYER_N_PARTS; p++) {
        g_autofree char *name = g_strdup_printf("%s_us", ms_layer_part_name(p));
        g_autofree char *ops = g_strdup_printf("%s_ops", ms_layer_part_name(p));
        part_col[p] = ms_csv_column(h, name);
        ops_col[p] = ms_csv_column(h, ops);
    }
    for (char *text; (text = ms_csv_next_line(data, len, &pos)) != NULL;) {
        g_autofree char *l = text;
        line++;
        if (l[0] == '#' || *g_strstrip(l) == '\0') {
            continue;
        }
        g_autoptr(GError) local = NULL;
        if (!ms_measurement_split_csv(split, source, line, l, error)) {
            return FALSE;
        }
        if (!ms_csv_fields_check_width(split, nh, &local)) {
            return ms_measurement_fail(error, MS_MEASUREMENT_ERROR_SYNTAX, source, line, "%s",
                                       local->message);
        }
        g_auto(GStrv) f = ms_csv_fields_dup(split);
        MsLayerRow row = {0};
        double it = 0, layer = 0, gpu = 0, experts = 0, tokens = 0;
        if (!csv_field(f, col[C_IT], "iteration", G_MAXUINT32, TRUE, &it, source, line, error) ||
            !csv_field(f, col[C_LAYER], "layer", 4095, TRUE, &layer, source, line, error) ||
            !csv_field(f, col[C_GPU], "gpu", 65535, TRUE, &gpu, source, line, error) ||
            !csv_field(f, col[C_LAYER_US], "layer_us", MAX_US, TRUE, &row.layer_us, source, line,
                       error) ||
            !csv_field(f, col[C_START], "start_us", MAX_US, FALSE, &row.start_us, source, line,
                       error) ||
            !csv_field(f, col[C_EXPERTS], "experts", G_MAXUINT32, FALSE, &experts, source, line,
                       error) ||
            !csv_field(f, col[C_TOKENS], "tokens", G_MAXUINT32, FALSE, &tokens, source, line,
                       error)) {
            return FALSE;
        }
        if (col[C_PHASE] < 0 || !phase_from(f[col[C_PHASE]], &row.phase)) {
            return ms_measurement_fail(error, MS_MEASUREMENT_ERROR_VALUE, source, line,
                                       "phase: '%s' is not forward or backward",
                                       col[C_PHASE] < 0 ? "" : f[col[C_PHASE]]);
        }
        row.busy_us = row.layer_us;
        if (!csv_field(f, col[C_BUSY], "busy_us", MAX_US, FALSE, &row.busy_us, source, line,
                       error)) {
            return FALSE;
        }
        for (guint p = 0; p < MS_LAYER_N_PARTS; p++) {
            g_autofree char *name = g_strdup_printf("%s_us", ms_layer_part_name(p));
            g_autofree char *ops_name = g_strdup_printf("%s_ops", ms_layer_part_name(p));
            double ops = 0;
            if (!csv_field(f, part_col[p], name, MAX_US, FALSE, &row.part_us[p], source, line,
                           error) ||
                !csv_field(f, ops_col[p], ops_name, G_MAXUINT32, FALSE, &ops, source, line,
                           error)) {
                return FALSE;
            }
            row.part_ops[p] = (guint32)ops;
        }
        /* Whole numbers where the column is a count. */
        if (it != floor(it) || layer != floor(layer) || gpu != floor(gpu)) {
            return ms_measurement_fail(error, MS_MEASUREMENT_ERROR_VALUE, source, line,
                                       "iteration, layer and gpu must be whole numbers");
        }
        row.iteration = (guint32)it;
        row.layer = (gint32)layer;
        row.gpu = (guint32)gpu;
        row.experts = (guint32)experts;
        row.tokens = (guint32)tokens;
        ms_layer_table_append(t, &row);
    }
    return TRUE;
}

gboolean
ms_layer_file_read(MsLayerTable *t, const char *data, gsize len, const char *source,
                   const MsKinetoOptions *opts, GError **error)
{
    if (len >= strlen(CSV_PREFIX) && strncmp(data, CSV_PREFIX, strlen(CSV_PREFIX)) == 0) {
        return read_csv(t, data, len, source, error);
    }
    g_autoptr(JsonParser) p = json_parser_new();
    g_autoptr(GError) local = NULL;
    if (!ms_json_input_load_data(p, data, len, source, &local)) {
        return fail(error, MS_LAYER_FILE_ERROR_FORMAT, source,
                    "neither a moesim-layers file (JSON or CSV) nor a profiler trace: %s",
                    local->message);
    }
    JsonNode *root = json_parser_get_root(p);
    JsonObject *o = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    if (o &&
        !g_strcmp0(json_object_get_string_member_with_default(o, "format", ""), "moesim-layers")) {
        return read_json(t, root, source, error);
    }
    if (o && json_object_has_member(o, "traceEvents")) {
        return ms_kineto_read_layers(root, source, opts, t, error);
    }
    return fail(error, MS_LAYER_FILE_ERROR_FORMAT, source,
                "neither a moesim-layers file (write one with `moesim run --layers`) nor a "
                "PyTorch profiler trace (a JSON object with traceEvents)");
}

gboolean
ms_layer_file_load(MsLayerTable *t, const char *path, const MsKinetoOptions *opts, GError **error)
{
    g_autofree char *data = NULL;
    gsize len = 0;
    /* Read whole into a JSON tree, as result files are (sim/base/input_file.h). */
    if (!ms_input_file_read(path, MS_INPUT_RESULT, &data, &len, error)) {
        return FALSE;
    }
    return ms_layer_file_read(t, data, len, path, opts, error);
}
