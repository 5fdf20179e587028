/* Fuzz target: the INI layer (sim/base/ini.h) on arbitrary bytes, then every typed getter on every
 * key it found. Checks the layer's promises: each group and key has a line, values of keys that
 * exist can be fetched, and every refusal carries a message. */
#include <stdlib.h>

#include "fuzz.h"
#include "sim/base/ini.h"

static void
expect_message(gboolean ok, GError **error)
{
    if (ok) {
        g_clear_error(error);
    } else {
        fuzz_refused(error);
    }
}

static void
get_all(const MsIni *ini, const char *group, const char *key)
{
    GError *error = NULL;
    if (ms_ini_line(ini, group, key) == 0 || ms_ini_get_string(ini, group, key, &error) == NULL) {
        abort();
    }
    MsBandwidth bw;
    MsTime t;
    MsFlops f;
    guint64 u;
    double d;
    gboolean b;
    expect_message(ms_ini_get_bandwidth(ini, group, key, &bw, &error), &error);
    expect_message(ms_ini_get_time(ini, group, key, &t, &error), &error);
    expect_message(ms_ini_get_flops(ini, group, key, &f, &error), &error);
    expect_message(ms_ini_get_bytes(ini, group, key, &u, &error), &error);
    expect_message(ms_ini_get_uint(ini, group, key, 0, 100, &u, &error), &error);
    expect_message(ms_ini_get_double(ini, group, key, -1, 1, &d, &error), &error);
    expect_message(ms_ini_opt_bool(ini, group, key, &b, &error), &error);
}

int
LLVMFuzzerTestOneInput(const guint8 *data, size_t size)
{
    GError *error = NULL;
    g_autoptr(MsIni) ini = ms_ini_load_data((const char *)data, size, "fuzz.ini", &error);
    if (ini == NULL) {
        expect_message(FALSE, &error);
        return 0;
    }
    guint n_groups = 0;
    const char *const *groups = ms_ini_groups(ini, &n_groups);
    static const char *const allowed[] = {"name", "format", NULL};
    for (guint g = 0; g < n_groups; g++) {
        if (!ms_ini_has_group(ini, groups[g]) || ms_ini_line(ini, groups[g], NULL) == 0) {
            abort();
        }
        guint n_keys = 0;
        const char *const *keys = ms_ini_keys(ini, groups[g], &n_keys);
        for (guint k = 0; k < n_keys; k++) {
            get_all(ini, groups[g], keys[k]);
        }
        expect_message(ms_ini_check_keys(ini, groups[g], allowed, &error), &error);
        expect_message(ms_ini_get_string(ini, groups[g], "no such key", &error) != NULL, &error);
    }
    return 0;
}
