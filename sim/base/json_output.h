/* json_output: the members moesim's JSON writers add one by one (a name, then a string, integer
 * or number) on a json-glib builder, in one place instead of a copy per writer, and the writing of
 * a document to a file through output_file. The builder must be inside an object; values are
 * written as given (no rounding, no unit conversion). */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "output_file.h"

G_BEGIN_DECLS

void ms_json_member_string(JsonBuilder *b, const char *name, const char *value);
void ms_json_member_int(JsonBuilder *b, const char *name, gint64 value);
void ms_json_member_double(JsonBuilder *b, const char *name, double value);

/* Writes node as a JSON document to path ("-": standard output) through output_file with its
 * flags (every write checked, a regular file replaced only when complete), pretty (2-space
 * indents) or on one line, ending with a newline. FALSE with output_file's error, naming path. */
gboolean ms_json_write_file(const char *path, JsonNode *node, gboolean pretty, MsOutputFlags flags,
                            GError **error);

G_END_DECLS
