/* what_if: NAME=FACTOR lists of the what-ifs. */
#include "what_if.h"

#include <math.h>
#include <string.h>

#include "sim/base/units.h"
#include "sim/compute.h"

G_DEFINE_QUARK(ms_what_if_error_quark, ms_what_if_error)

gboolean
ms_what_if_split(const char *option, const char *item, const char *form, const char *meaning,
                 char **name, double *factor, GError **error)
{
    /* The last '=': a link's name may hold one, a factor never does. */
    const char *eq = strrchr(item, '=');
    char *end = NULL;
    *factor = eq ? g_ascii_strtod(eq + 1, &end) : 0;
    if (eq == NULL || eq == item || end == eq + 1 || *end) {
        g_set_error(error, MS_WHAT_IF_ERROR, MS_WHAT_IF_ERROR_SPEC,
                    "%s '%s': give %s, several joined by ','", option, item, form);
        return FALSE;
    }
    if (!(*factor >= 1) || !(*factor <= MS_COMPUTE_SLOWDOWN_MAX)) {
        g_set_error(error, MS_WHAT_IF_ERROR, MS_WHAT_IF_ERROR_SPEC,
                    "%s '%s': the factor must be between 1 and %g (%s)", option, item,
                    MS_COMPUTE_SLOWDOWN_MAX, meaning);
        return FALSE;
    }
    *name = g_strndup(item, eq - item);
    return TRUE;
}

gboolean
ms_what_if_stragglers(const char *option, const char *text, guint gpus, GArray **pace,
                      GPtrArray *notes, GError **error)
{
    g_auto(GStrv) items = g_strsplit(text, ",", -1);
    g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(double));
    *pace = NULL;
    for (guint i = 0; items[i]; i++) {
        g_autofree char *head = NULL;
        guint64 gpu = 0;
        double f = 0;
        if (!ms_what_if_split(option, items[i], "GPU=FACTOR (e.g. 3=1.2)",
                              "its kernels' time over its peers'", &head, &f, error)) {
            return FALSE;
        }
        if (!g_ascii_string_to_unsigned(head, 10, 0, G_MAXUINT, &gpu, NULL)) {
            g_set_error(error, MS_WHAT_IF_ERROR, MS_WHAT_IF_ERROR_SPEC,
                        "%s '%s': '%s' is not a GPU number", option, items[i], head);
            return FALSE;
        }
        if (gpu >= gpus) {
            g_set_error(error, MS_WHAT_IF_ERROR, MS_WHAT_IF_ERROR_SPEC,
                        "%s '%s': GPU %" G_GUINT64_FORMAT " is not among the %u GPUs the run uses",
                        option, items[i], gpu, gpus);
            return FALSE;
        }
        while (out->len <= gpu) {
            double one = 1;
            g_array_append_val(out, one);
        }
        g_array_index(out, double, gpu) = f;
        g_ptr_array_add(notes, g_strdup_printf("straggler: GPU %" G_GUINT64_FORMAT
                                               "'s kernels take %gx their time",
                                               gpu, f));
    }
    *pace = g_steal_pointer(&out);
    return TRUE;
}

gboolean
ms_what_if_slow_links(const char *option, const char *text, MsTopology *topo, GPtrArray *notes,
                      GError **error)
{
    g_auto(GStrv) items = g_strsplit(text, ",", -1);
    for (guint i = 0; items[i]; i++) {
        g_autofree char *name = NULL;
        double f = 0;
        if (!ms_what_if_split(option, items[i], "LINK=FACTOR (e.g. 'n0.nic0->fabric=2')",
                              "its time per byte over its nominal one", &name, &f, error)) {
            return FALSE;
        }
        guint l = 0;
        if (!ms_topology_find_link(topo, name, &l)) {
            g_set_error(error, MS_WHAT_IF_ERROR, MS_WHAT_IF_ERROR_SPEC,
                        "%s '%s': topology '%s' has no link '%s' (its links: moesim topo show %s "
                        "--links)",
                        option, items[i], ms_topology_name(topo), name, ms_topology_name(topo));
            return FALSE;
        }
        double bw = ms_topology_link(topo, l)->bandwidth;
        if (!isfinite(bw)) {
            g_set_error(error, MS_WHAT_IF_ERROR, MS_WHAT_IF_ERROR_SPEC,
                        "%s '%s': link '%s' has unlimited bandwidth: it never limits a flow",
                        option, items[i], name);
            return FALSE;
        }
        ms_topology_slow_link(topo, l, f);
        char rate[32];
        g_ptr_array_add(notes, g_strdup_printf("slow link: %s at 1/%g of its bandwidth, %s", name,
                                               f, ms_format_bandwidth(bw / f, rate, sizeof rate)));
    }
    return TRUE;
}
