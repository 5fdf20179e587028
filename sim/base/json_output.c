/* json_output: member helpers for json-glib builders (see json_output.h). */
#include "json_output.h"

void
ms_json_member_string(JsonBuilder *b, const char *name, const char *value)
{
    json_builder_set_member_name(b, name);
    json_builder_add_string_value(b, value);
}

void
ms_json_member_int(JsonBuilder *b, const char *name, gint64 value)
{
    json_builder_set_member_name(b, name);
    json_builder_add_int_value(b, value);
}

void
ms_json_member_double(JsonBuilder *b, const char *name, double value)
{
    json_builder_set_member_name(b, name);
    json_builder_add_double_value(b, value);
}

gboolean
ms_json_write_file(const char *path, JsonNode *node, gboolean pretty, MsOutputFlags flags,
                   GError **error)
{
    g_autoptr(JsonGenerator) gen = json_generator_new();
    json_generator_set_pretty(gen, pretty);
    json_generator_set_indent(gen, 2);
    json_generator_set_root(gen, node);
    gsize len = 0;
    g_autofree char *text = json_generator_to_data(gen, &len);
    MsOutputFile *f = ms_output_file_open(path, flags, error);
    if (f == NULL) {
        return FALSE;
    }
    ms_output_file_write(f, text, len);
    ms_output_file_write(f, "\n", 1);
    return ms_output_file_close(f, error);
}
