/* backend_module: finding moesim-NAME.so, loading it with GModule and checking that it was built
 * for this moesim. Loaded modules stay loaded (their hooks are static data of the module). */
#include "config.h"

#include "backend_module.h"

#include <gmodule.h>

G_DEFINE_QUARK(ms_backend_module_error_quark, ms_backend_module_error)

G_LOCK_DEFINE_STATIC(loaded);
static GHashTable *loaded; /* backend name -> const MsExecBackend * */

char *
ms_backend_module_path(const char *dir, const char *name)
{
    g_autofree char *file = g_strdup_printf("moesim-%s.%s", name, G_MODULE_SUFFIX);
    return g_build_filename(dir, file, NULL);
}

/* The folders searched, in order (backend_module.h). */
static GPtrArray *
search_dirs(void)
{
    GPtrArray *dirs = g_ptr_array_new_with_free_func(g_free);
    const char *env = g_getenv(MS_BACKEND_MODULE_ENV);
    if (env && *env) {
        g_ptr_array_add(dirs, g_strdup(env));
    }
    g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
    if (exe) {
        g_autofree char *bin = g_path_get_dirname(exe);
        g_ptr_array_add(dirs, g_strdup(bin));
        g_ptr_array_add(dirs, g_path_is_absolute(MOESIM_MODULE_DIR)
                                  ? g_strdup(MOESIM_MODULE_DIR)
                                  : g_build_filename(bin, MOESIM_MODULE_DIR, NULL));
    } else if (!g_path_is_absolute(MOESIM_MODULE_DIR)) {
        g_ptr_array_add(dirs, g_strdup(MOESIM_MODULE_DIR));
    }
    return dirs;
}

static const MsExecBackend *
open_module(const char *name, const char *path, GError **error)
{
    GModule *m = g_module_open(path, G_MODULE_BIND_LOCAL);
    if (m == NULL) {
        g_set_error(error, MS_BACKEND_MODULE_ERROR, MS_BACKEND_MODULE_ERROR_LOAD,
                    "backend '%s': cannot load its module %s: %s", name, path, g_module_error());
        return NULL;
    }
    gpointer sym = NULL;
    if (!g_module_symbol(m, MS_BACKEND_MODULE_SYMBOL, &sym) || sym == NULL) {
        g_set_error(error, MS_BACKEND_MODULE_ERROR, MS_BACKEND_MODULE_ERROR_LOAD,
                    "backend '%s': %s is not a moesim backend module (it has no %s)", name, path,
                    MS_BACKEND_MODULE_SYMBOL);
        g_module_close(m);
        return NULL;
    }
    /* abi and version come first in every version of the record, so reading them is safe. */
    const MsBackendModule *mod = sym;
    if (mod->abi != MS_BACKEND_MODULE_ABI || g_strcmp0(mod->version, MOESIM_VERSION) != 0 ||
        mod->hooks_size != sizeof(MsExecBackend) || mod->hooks == NULL ||
        g_strcmp0(mod->hooks->name, name) != 0) {
        g_set_error(error, MS_BACKEND_MODULE_ERROR, MS_BACKEND_MODULE_ERROR_MISMATCH,
                    "backend '%s': %s was built for moesim %s (module interface %u), this is "
                    "moesim %s (interface %u): rebuild or reinstall them together",
                    name, path, mod->version ? mod->version : "?", mod->abi, MOESIM_VERSION,
                    MS_BACKEND_MODULE_ABI);
        g_module_close(m);
        return NULL;
    }
    g_module_make_resident(m);
    return mod->hooks;
}

static const MsExecBackend *
find_and_open(const char *name, GError **error)
{
    g_autoptr(GPtrArray) dirs = search_dirs();
    for (guint k = 0; k < dirs->len; k++) {
        g_autofree char *path = ms_backend_module_path(g_ptr_array_index(dirs, k), name);
        if (g_file_test(path, G_FILE_TEST_EXISTS)) {
            return open_module(name, path, error);
        }
    }
    g_autoptr(GString) where = g_string_new(NULL);
    for (guint k = 0; k < dirs->len; k++) {
        g_string_append_printf(where, "%s%s", k ? ", " : "", (char *)g_ptr_array_index(dirs, k));
    }
    g_autofree char *file = ms_backend_module_path("", name);
    g_set_error(error, MS_BACKEND_MODULE_ERROR, MS_BACKEND_MODULE_ERROR_NOT_FOUND,
                "backend '%s': its module %s is in none of the folders searched (%s); install it "
                "beside moesim or set %s to the folder that holds it",
                name, file, where->str, MS_BACKEND_MODULE_ENV);
    return NULL;
}

const MsExecBackend *
ms_backend_module_load(const char *name, GError **error)
{
    g_return_val_if_fail(name != NULL, NULL);
    G_LOCK(loaded);
    const MsExecBackend *hooks = loaded ? g_hash_table_lookup(loaded, name) : NULL;
    if (hooks == NULL && (hooks = find_and_open(name, error)) != NULL) {
        if (loaded == NULL) {
            loaded = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        }
        g_hash_table_insert(loaded, g_strdup(name), (gpointer)hooks);
    }
    G_UNLOCK(loaded);
    return hooks;
}
