/* resources: listing and reading shipped data files. */
#include "resources.h"

#include <string.h>

#define MAX_NAME 128

gboolean
ms_resource_valid_name(const char *name)
{
    gsize n = strlen(name);
    if (n == 0 || n > MAX_NAME || name[0] == '.') {
        return FALSE;
    }
    for (gsize i = 0; i < n; i++) {
        if (!g_ascii_isalnum(name[i]) && !strchr("._-", name[i])) {
            return FALSE;
        }
    }
    return TRUE;
}

static int
cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **
ms_resource_list(GResource *res, const char *dir, const char *suffix)
{
    g_auto(GStrv) all = g_resource_enumerate_children(res, dir, G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
    GPtrArray *names = g_ptr_array_new();
    for (guint i = 0; all && all[i]; i++) {
        if (g_str_has_suffix(all[i], suffix)) {
            g_ptr_array_add(names, g_strndup(all[i], strlen(all[i]) - strlen(suffix)));
        }
    }
    qsort(names->pdata, names->len, sizeof(char *), cmp_names);
    g_ptr_array_add(names, NULL);
    return (char **)g_ptr_array_free(names, FALSE);
}

GBytes *
ms_resource_data(GResource *res, const char *dir, const char *name, const char *suffix)
{
    if (!ms_resource_valid_name(name)) {
        return NULL;
    }
    g_autofree char *path = g_strdup_printf("%s/%s%s", dir, name, suffix);
    return g_resource_lookup_data(res, path, G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
}
