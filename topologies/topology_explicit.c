/* topology_explicit: the explicit form, any graph: [device NAME] groups (kind, node) and
 * [link FROM TO] groups (bandwidth per physical link with a unit or "unlimited", latency, class,
 * count, bidirectional). Devices keep file order; GPU ranks are node-major in file order. */
#include "topology_private.h"

#include <string.h>

/* Counts groups of a kind so that sizes are refused before anything is allocated. */
static guint
count_groups(const MsIni *ini, const char *word)
{
    guint n = 0, count = 0;
    const char *const *groups = ms_ini_groups(ini, &n);
    for (guint i = 0; i < n; i++) {
        g_auto(GStrv) words = topo_group_words(groups[i]);
        count += strcmp(words[0], word) == 0;
    }
    return count;
}

static gboolean
read_device(MsTopology *topo, const MsIni *ini, const char *group, GHashTable *defined,
            GError **error)
{
    static const char *const keys[] = {"kind", "node", NULL};
    g_auto(GStrv) words = topo_group_words(group);
    const char *name = words[1];
    if (!topo_valid_name(name)) {
        topo_error(ini, group, NULL, error, MS_TOPOLOGY_ERROR_INVALID,
                   "bad device name '%s' (1 to %u characters of A-Z a-z 0-9 . _ -)", name,
                   TOPO_MAX_NAME);
        return FALSE;
    }
    const char *first = g_hash_table_lookup(defined, name);
    if (first) {
        topo_error(ini, group, NULL, error, MS_TOPOLOGY_ERROR_INVALID,
                   "device '%s' is already defined at line %u", name,
                   ms_ini_line(ini, first, NULL));
        return FALSE;
    }
    guint kind = 0;
    guint64 node = G_MAXUINT64;
    if (!ms_ini_check_keys(ini, group, keys, error) ||
        !ms_ini_range_choice(ini, group, topo_field("[device NAME]", "kind"), TRUE, &kind, error) ||
        !ms_ini_range_uint(ini, group, topo_field("[device NAME]", "node"), FALSE, &node, error)) {
        return FALSE;
    }
    if (node == G_MAXUINT64 && kind != MS_DEVICE_SWITCH) {
        ms_ini_set_error(ini, group, "node", error, MS_INI_ERROR_MISSING,
                         "required for a %s (only network switches stand outside any node)",
                         topo_kind_names[kind]);
        return FALSE;
    }
    topo_add_device(topo, name, kind, node == G_MAXUINT64 ? -1 : (gint)node, NULL);
    g_hash_table_insert(defined, g_strdup(name), (gpointer)group);
    return TRUE;
}

/* The preset form's limits hold for any graph: the first GPU past one is blamed. */
static gboolean
check_gpu_counts(const MsTopology *topo, const MsIni *ini, GHashTable *defined, guint d,
                 guint n_gpus, guint in_node, GError **error)
{
    if (n_gpus <= TOPO_MAX_GPUS && in_node <= TOPO_MAX_GPUS_PER_NODE) {
        return TRUE;
    }
    const char *group = g_hash_table_lookup(defined, topo_dev(topo, d)->name);
    if (n_gpus > TOPO_MAX_GPUS) {
        topo_error(ini, group, NULL, error, MS_TOPOLOGY_ERROR_INVALID,
                   "more than %u GPUs: moesim models at most %u", TOPO_MAX_GPUS, TOPO_MAX_GPUS);
    } else {
        topo_error(ini, group, "node", error, MS_TOPOLOGY_ERROR_INVALID,
                   "more than %u GPUs in node %d: moesim models at most %u per node",
                   TOPO_MAX_GPUS_PER_NODE, topo_dev(topo, d)->node, TOPO_MAX_GPUS_PER_NODE);
    }
    return FALSE;
}

/* Nodes are 0..N-1, each with a GPU: the first device in a node past a gap is blamed. */
static gboolean
check_nodes(const MsTopology *topo, const MsIni *ini, GHashTable *defined, GError **error)
{
    guint n = ms_topology_n_devices(topo);
    gint max_node = -1;
    for (guint d = 0; d < n; d++) {
        max_node = MAX(max_node, topo_dev(topo, d)->node);
    }
    g_autofree guint *gpus = g_new0(guint, max_node + 1);
    guint n_gpus = 0;
    for (guint d = 0; d < n; d++) {
        if (topo_dev(topo, d)->kind == MS_DEVICE_GPU &&
            !check_gpu_counts(topo, ini, defined, d, ++n_gpus, ++gpus[topo_dev(topo, d)->node],
                              error)) {
            return FALSE;
        }
    }
    if (n_gpus == 0) {
        topo_error(ini, "topology", NULL, error, MS_TOPOLOGY_ERROR_INVALID,
                   "no [device] of kind gpu");
        return FALSE;
    }
    for (gint k = 0; k <= max_node; k++) {
        for (guint d = 0; gpus[k] == 0 && d < n; d++) {
            if (topo_dev(topo, d)->node >= k) {
                const char *group = g_hash_table_lookup(defined, topo_dev(topo, d)->name);
                topo_error(ini, group, "node", error, MS_TOPOLOGY_ERROR_INVALID,
                           "node %d has no GPU (nodes are numbered 0..N-1 and each holds a GPU)",
                           k);
                return FALSE;
            }
        }
    }
    return TRUE;
}

/* Adds a->b, or reports the group that already defined it. */
static gboolean
add_directed(MsTopology *topo, const MsIni *ini, const char *group, GHashTable *links, guint a,
             guint b, MsBandwidth bw, guint count, MsTime lat, MsLinkClass klass, GError **error)
{
    if (!topo_add_link(topo, a, b, bw, count, lat, klass)) {
        g_autofree char *name = g_strdup_printf("%s->%s", ms_topology_device_name(topo, a),
                                                ms_topology_device_name(topo, b));
        topo_error(ini, group, NULL, error, MS_TOPOLOGY_ERROR_INVALID,
                   "link %s is already defined at line %u", name,
                   ms_ini_line(ini, g_hash_table_lookup(links, name), NULL));
        return FALSE;
    }
    g_hash_table_insert(links,
                        g_strdup_printf("%s->%s", ms_topology_device_name(topo, a),
                                        ms_topology_device_name(topo, b)),
                        (gpointer)group);
    return TRUE;
}

static gboolean
read_link(MsTopology *topo, const MsIni *ini, const char *group, GHashTable *links, GError **error)
{
    static const char *const keys[] = {"bandwidth", "latency",       "class",
                                       "count",     "bidirectional", NULL};
    g_auto(GStrv) words = topo_group_words(group);
    guint a, b, klass = 0;
    if (!topo_group_device(topo, ini, group, words[1], &a, error) ||
        !topo_group_device(topo, ini, group, words[2], &b, error)) {
        return FALSE;
    }
    if (a == b) {
        topo_error(ini, group, NULL, error, MS_TOPOLOGY_ERROR_INVALID,
                   "a link joins two different devices, not '%s' to itself", words[1]);
        return FALSE;
    }
    MsBandwidth bw = 0;
    MsTime lat = 0;
    guint64 count = 1;
    gboolean both = TRUE;
    if (!ms_ini_check_keys(ini, group, keys, error) ||
        !ms_ini_range_choice(ini, group, topo_field("[link FROM TO]", "class"), TRUE, &klass,
                             error) ||
        !topo_get_bandwidth(ini, group, topo_field("[link FROM TO]", "bandwidth"), TRUE, TRUE, &bw,
                            error) ||
        !ms_ini_range_time(ini, group, topo_field("[link FROM TO]", "latency"), TRUE, &lat,
                           error) ||
        !ms_ini_range_uint(ini, group, topo_field("[link FROM TO]", "count"), FALSE, &count,
                           error) ||
        !ms_ini_range_bool(ini, group, topo_field("[link FROM TO]", "bidirectional"), FALSE, &both,
                           error)) {
        return FALSE;
    }
    bw *= count;
    return add_directed(topo, ini, group, links, a, b, bw, count, lat, klass, error) &&
           (!both || add_directed(topo, ini, group, links, b, a, bw, count, lat, klass, error));
}

static gboolean
read_all(MsTopology *topo, const MsIni *ini, GError **error)
{
    g_autoptr(GHashTable) defined = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autoptr(GHashTable) links = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    guint n = 0;
    const char *const *groups = ms_ini_groups(ini, &n);
    for (guint i = 0; i < n; i++) {
        g_auto(GStrv) words = topo_group_words(groups[i]);
        if (strcmp(words[0], "device") == 0 && !read_device(topo, ini, groups[i], defined, error)) {
            return FALSE;
        }
    }
    if (!check_nodes(topo, ini, defined, error)) {
        return FALSE;
    }
    for (guint i = 0; i < n; i++) {
        g_auto(GStrv) words = topo_group_words(groups[i]);
        if (strcmp(words[0], "link") == 0 && !read_link(topo, ini, groups[i], links, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

MsTopology *
topo_build_explicit(const MsIni *ini, const char *name, const char *description,
                    const MsGpuSpec *gpu, GError **error)
{
    guint n_devices = count_groups(ini, "device"), n_links = count_groups(ini, "link");
    if (n_devices == 0) {
        g_set_error(error, MS_INI_ERROR, MS_INI_ERROR_MISSING,
                    "%s: no [preset] group and no [device NAME] groups: nothing to model",
                    ms_ini_source(ini));
        return NULL;
    }
    if (n_devices > TOPO_MAX_FILE_DEVICES || n_links > TOPO_MAX_FILE_LINKS) {
        g_set_error(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_INVALID,
                    "%s: %u devices and %u links are more than moesim models (at most %u and %u)",
                    ms_ini_source(ini), n_devices, n_links, TOPO_MAX_FILE_DEVICES,
                    TOPO_MAX_FILE_LINKS);
        return NULL;
    }
    g_autoptr(MsTopology) topo = topo_new(name, description, gpu);
    if (!read_all(topo, ini, error)) {
        return NULL;
    }
    return g_steal_pointer(&topo);
}
