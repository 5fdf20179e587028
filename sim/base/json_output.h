/* json_output: the members moesim's JSON writers add one by one (a name, then a string, integer
 * or number) on a json-glib builder, in one place instead of a copy per writer. The builder must
 * be inside an object; values are written as given (no rounding, no unit conversion). */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

void ms_json_member_string(JsonBuilder *b, const char *name, const char *value);
void ms_json_member_int(JsonBuilder *b, const char *name, gint64 value);
void ms_json_member_double(JsonBuilder *b, const char *name, double value);

G_END_DECLS
