/* resources: the data files compiled into moesim as GResource bundles (topologies, models,
 * sample traces, measurements), found by name wherever moesim runs from. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Shipped names are letters, digits, '-', '.' and '_' (not starting with '.', at most 128):
 * anything else is never looked up, so a name cannot reach outside its folder. */
gboolean ms_resource_valid_name(const char *name);

/* Names of the files in dir of res that end with suffix, without it, sorted; free with
 * g_strfreev. An empty list when there are none. */
char **ms_resource_list(GResource *res, const char *dir, const char *suffix);

/* The file dir/NAME+suffix of res, or NULL when absent or name is not a valid name. */
GBytes *ms_resource_data(GResource *res, const char *dir, const char *name, const char *suffix);

G_END_DECLS
