/* registry: the table of backends, and finding, loading and asking them for their options. Adding
 * a backend is one line in the table (with its header) and its folder in backends/meson.build. */
#include "registry.h"

#include "backends/backend_module.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cuda/cuda_options.h"

static const MsBackendInfo *const backends[] = {
    &ms_cpu_backend_info,
    &ms_cuda_backend_info,
    NULL,
};

const MsBackendInfo *const *
ms_backend_list(void)
{
    return backends;
}

gboolean
ms_backend_in_build(const MsBackendInfo *info)
{
    return info->hooks != NULL || (info->in_module && info->built);
}

const MsBackendInfo *
ms_backend_find(const char *name, GError **error)
{
    for (guint k = 0; backends[k]; k++) {
        if (g_strcmp0(name, backends[k]->name) == 0) {
            return backends[k];
        }
    }
    g_autoptr(GString) known = g_string_new(NULL);
    for (guint k = 0; backends[k]; k++) {
        g_string_append_printf(known, "%s%s", k ? ", " : "", backends[k]->name);
    }
    g_set_error(error, MS_EXECUTOR_ERROR, MS_EXECUTOR_ERROR_BACKEND,
                "unknown backend '%s' (known: %s)", name ? name : "(null)", known->str);
    return NULL;
}

const MsExecBackend *
ms_backend_hooks(const MsBackendInfo *info, GError **error)
{
    g_return_val_if_fail(info != NULL, NULL);
    if (info->hooks) {
        return info->hooks;
    }
    if (!ms_backend_in_build(info)) {
        g_set_error(error, MS_EXECUTOR_ERROR, MS_EXECUTOR_ERROR_BACKEND,
                    "backend '%s': this moesim was built without it (%s)", info->name,
                    info->missing ? info->missing : "not part of this build");
        return NULL;
    }
    return ms_backend_module_load(info->name, error);
}

gint
ms_backend_option_index(const MsBackendInfo *info, const char *name)
{
    for (gint k = 0; info->options && info->options[k].name; k++) {
        if (g_strcmp0(info->options[k].name, name) == 0) {
            return k;
        }
    }
    return -1;
}

gboolean
ms_backend_parse_options(const MsBackendInfo *info, const char *const *values, gpointer *record,
                         GError **error)
{
    *record = NULL;
    if (info->parse == NULL) {
        return TRUE;
    }
    guint n = 0;
    while (info->options && info->options[n].name) {
        n++;
    }
    g_autofree const char **none = values ? NULL : g_new0(const char *, n + 1);
    *record = info->parse(values ? values : none, error);
    return *record != NULL;
}

char *
ms_backend_describe(const MsBackendInfo *info, gconstpointer record)
{
    return info->describe ? info->describe(record) : g_strdup_printf("%s backend", info->name);
}
