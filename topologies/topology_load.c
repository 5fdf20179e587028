/* topology_load: reads a topology file (shipped by name or from disk): the [topology] and [gpu]
 * groups, hands the machine to the preset or explicit builder, reads [route] groups, then checks
 * that every GPU reaches every other. Values carry units (sim/base/units.h); every error names
 * FILE:LINE, the group, the key and the bad value. */
#include "topology_private.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/resources.h"

#include "topologies/ms-topologies.h"

#define RESOURCE_DIR "/moesim/topologies"

#define BW_MIN MS_TOPOLOGY_BANDWIDTH_MIN
#define BW_MAX MS_TOPOLOGY_BANDWIDTH_MAX
#define LINK_BW "the bandwidth of one link in one direction"
#define LINK_BW_OR "the bandwidth of one link in one direction, or `unlimited`"
#define LINK_LAT "paid once per flow that crosses the link; a second is a unit typo (ms for us)"

/* Every number, boolean and choice a topology file carries (docs/bad-inputs.md is generated from
 * this table, and tests/test_input_ranges.c walks it). Bounds that depend on other keys are
 * checked after. A choice's max is its last index. */
static const MsRange fields[] = {
    {"[gpu]", "peak", MS_RANGE_FLOPS, 1e9, 1e18,
     "dense tensor-core peak: 1 GFLOPS is below any GPU with tensor cores, 1 EFLOPS 500 times an "
     "H200's"},
    {"[gpu]", "hbm", MS_RANGE_BANDWIDTH, 1e9, BW_MAX,
     "memory bandwidth: 1 GB/s is below any GPU's, 1 PB/s over 100 times HBM3e's"},
    {"[gpu]", "memory", MS_RANGE_BYTES, 1 << 20, (double)MS_BYTES_MAX,
     "GPU memory (Lina's packing compares expert weights with it); 1 MiB to 1 PiB"},
    {"[gpu]", "launch_overhead", MS_RANGE_TIME, 0, 1,
     "a kernel launch costs a few microseconds; a second is a unit typo"},
    {"[gpu]", "peak_fp32", MS_RANGE_FLOPS, 1e9, 1e18,
     "dense FP32 peak (CUDA cores); without it an fp32 model is refused on this GPU"},
    {"[gpu]", "peak_fp16", MS_RANGE_FLOPS, 1e9, 1e18,
     "dense FP16 peak when it is not `peak` (the tensor-core figure)"},
    {"[gpu]", "peak_bf16", MS_RANGE_FLOPS, 1e9, 1e18,
     "dense BF16 peak when it is not `peak`: the FP32 rate on GPUs without BF16 tensor cores"},
    {"[gpu]", "peak_tf32", MS_RANGE_FLOPS, 1e9, 1e18,
     "dense TF32 tensor-core peak; without it a tf32 model is refused on this GPU"},
    {"[gpu]", "peak_fp8", MS_RANGE_FLOPS, 1e9, 1e18,
     "dense FP8 tensor-core peak; without it an fp8 model is refused on this GPU"},
    {"[preset]", "nodes", MS_RANGE_COUNT, 1, TOPO_MAX_NODES,
     "and nodes x gpus_per_node at most 65536 GPUs, the largest machine moesim models"},
    {"[preset]", "gpus_per_node", MS_RANGE_COUNT, 1, TOPO_MAX_GPUS_PER_NODE,
     "a node of 1024 GPUs is 14 times the largest NVLink domain built (72)"},
    {"[preset]", "intra", MS_RANGE_CHOICE, 0, 3,
     "inside a node: nothing (one GPU), an NVSwitch, an NVLink mesh or a PCIe switch; required "
     "with more than one GPU per node",
     topo_intra_names},
    {"[preset]", "intra_bandwidth", MS_RANGE_BANDWIDTH, BW_MIN, BW_MAX, LINK_BW},
    {"[preset]", "intra_latency", MS_RANGE_TIME, 0, 1, LINK_LAT},
    {"[preset]", "intra_links", MS_RANGE_COUNT, 1, TOPO_MAX_LINK_COUNT,
     "physical links bundled per GPU (18 on an H100); 1024 keeps count x bandwidth finite"},
    {"[preset]", "intra_multicast", MS_RANGE_BOOLEAN, 0, 1,
     "with intra = nvswitch: the switches take multicast and in-switch reductions (NVLink SHARP, "
     "third-generation NVSwitch: H100, H200, B200, GB200); NCCL's NVLS needs it"},
    {"[preset]", "nics", MS_RANGE_CHOICE, 0, 2,
     "none (one node), a NIC per GPU (DGX) or one per node; required with more than one node",
     topo_nics_names},
    {"[preset]", "nic_bandwidth", MS_RANGE_BANDWIDTH, BW_MIN, BW_MAX, LINK_BW},
    {"[preset]", "nic_latency", MS_RANGE_TIME, 0, 1, LINK_LAT},
    {"[preset]", "nccl_net_latency", MS_RANGE_TIME, 0, 1e-3,
     "the network latency NCCL's net plugin reports for the NICs (ncclNetProperties.latency), "
     "which NCCL's tuning model adds to each network hop: 0 for its own InfiniBand and RoCE, "
     "75us from aws-ofi-nccl on p4d, p4de and p5; at most 1 ms"},
    {"[preset]", "gpu_nic_bandwidth", MS_RANGE_BANDWIDTH, BW_MIN, BW_MAX, LINK_BW_OR},
    {"[preset]", "gpu_nic_latency", MS_RANGE_TIME, 0, 1, LINK_LAT},
    {"[preset]", "fabric", MS_RANGE_CHOICE, 0, 1,
     "between nodes: one non-blocking switch, or a fat tree of leaves and spines",
     topo_fabric_names},
    {"[preset]", "fabric_latency", MS_RANGE_TIME, 0, 1, LINK_LAT},
    {"[preset]", "nodes_per_leaf", MS_RANGE_COUNT, 1, TOPO_MAX_NODES,
     "the nodes of a leaf group (a scalable unit of 32 in a DGX SuperPOD); the last group may be "
     "partly filled, so it may exceed nodes"},
    {"[preset]", "oversubscription", MS_RANGE_NUMBER, 1, 1000,
     "a leaf's NIC ports over its uplink ports, a whole number of them; real fabrics are 1 to 4"},
    {"[preset]", "tiers", MS_RANGE_COUNT, 2, 3,
     "leaves and spines, or leaves in pods, spines and cores (sized by switch_radix); no fourth "
     "tier is built"},
    {"[preset]", "spines", MS_RANGE_COUNT, 1, TOPO_MAX_GPUS,
     "and a divisor of a leaf's uplink ports, of which there are at most 65536 (a NIC per GPU); "
     "32 on dgx-h100-256node"},
    {"[preset]", "switch_radix", MS_RANGE_COUNT, 2, TOPO_MAX_GPUS,
     "ports per switch at nic_bandwidth (64 on Quantum-2 QM9700, 128 on Spectrum-4 at 400 GbE); "
     "a switch of fewer than 2 joins nothing"},
    {"[preset]", "rail_optimised", MS_RANGE_BOOLEAN, 0, 1,
     "fat_tree with per_gpu NICs: NIC i of every node of a group on the group's leaf i, the DGX "
     "SuperPOD's rails (default false)"},
    {"[preset]", "fabric_routing", MS_RANGE_CHOICE, 0, 1,
     "how routes spread over equal spines: by destination (an InfiniBand subnet manager's "
     "D-mod-k, the default) or by a fixed hash of the pair, as Ethernet switches spread (ECMP)",
     topo_routing_names},
    {"[device NAME]", "kind", MS_RANGE_CHOICE, 0, 3,
     "what the device is; only a switch may stand outside every node", topo_kind_names},
    {"[device NAME]", "node", MS_RANGE_COUNT, 0, TOPO_MAX_NODES - 1,
     "nodes are numbered 0..N-1, N at most 65536"},
    {"[link FROM TO]", "class", MS_RANGE_CHOICE, 0, MS_LINK_N_CLASSES - 1,
     "the kind of link, as reports and a calibration's [link CLASS] groups name it",
     topo_class_names},
    {"[link FROM TO]", "bandwidth", MS_RANGE_BANDWIDTH, BW_MIN, BW_MAX, LINK_BW_OR},
    {"[link FROM TO]", "latency", MS_RANGE_TIME, 0, 1, LINK_LAT},
    {"[link FROM TO]", "count", MS_RANGE_COUNT, 1, TOPO_MAX_LINK_COUNT,
     "physical links bundled in the link; 1024 keeps count x bandwidth finite"},
    {"[link FROM TO]", "bidirectional", MS_RANGE_BOOLEAN, 0, 1,
     "false: a link in the direction named only (default true: both directions)"},
    {NULL},
};

static const MsRangeTable ranges = {"Topology files", fields};

const MsRangeTable *
ms_topology_ranges(void)
{
    return &ranges;
}

const MsRange *
topo_field(const char *where, const char *key)
{
    return ms_range_find(fields, where, key);
}

void
topo_error(const MsIni *ini, const char *group, const char *key, GError **error,
           MsTopologyError code, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    GError *local = NULL;
    ms_ini_set_error(ini, group, key, &local, MS_INI_ERROR_VALUE, "%s", msg);
    g_set_error_literal(error, MS_TOPOLOGY_ERROR, code, local->message);
    g_error_free(local);
}

gboolean
topo_get_bandwidth(const MsIni *ini, const char *group, const MsRange *range, gboolean required,
                   gboolean allow_unlimited, MsBandwidth *out, GError **error)
{
    if (!required && !ms_ini_has_key(ini, group, range->key)) {
        return TRUE;
    }
    const char *text = ms_ini_get_string(ini, group, range->key, error);
    if (text == NULL) {
        return FALSE;
    }
    if (allow_unlimited && strcmp(text, "unlimited") == 0) {
        *out = INFINITY;
        return TRUE;
    }
    return ms_ini_range_double(ini, group, range, TRUE, out, error);
}

char **
topo_group_words(const char *group)
{
    g_auto(GStrv) split = g_strsplit_set(group, " \t", -1);
    GPtrArray *words = g_ptr_array_new();
    for (guint k = 0; split[k]; k++) {
        if (split[k][0] != '\0') {
            g_ptr_array_add(words, g_strdup(split[k]));
        }
    }
    g_ptr_array_add(words, NULL);
    return (char **)g_ptr_array_free(words, FALSE);
}

gboolean
topo_valid_name(const char *name)
{
    gsize n = strlen(name);
    if (n == 0 || n > TOPO_MAX_NAME) {
        return FALSE;
    }
    for (gsize i = 0; i < n; i++) {
        if (!g_ascii_isalnum(name[i]) && !strchr("._-", name[i])) {
            return FALSE;
        }
    }
    return TRUE;
}

/* Group names are "topology", "gpu", "preset", "device NAME", "link FROM TO", "route SRC DST". */
static gboolean
check_groups(const MsIni *ini, GError **error)
{
    static const struct {
        const char *word;
        guint words;
    } known[] = {{"topology", 1}, {"gpu", 1},  {"preset", 1},
                 {"device", 2},   {"link", 3}, {"route", 3}};
    guint n = 0;
    const char *const *groups = ms_ini_groups(ini, &n);
    for (guint i = 0; i < n; i++) {
        g_auto(GStrv) words = topo_group_words(groups[i]);
        guint w = g_strv_length(words);
        gboolean ok = FALSE;
        for (guint k = 0; k < G_N_ELEMENTS(known) && w > 0; k++) {
            ok = ok || (strcmp(words[0], known[k].word) == 0 && w == known[k].words);
        }
        if (!ok) {
            ms_ini_set_error(ini, groups[i], NULL, error, MS_INI_ERROR_UNKNOWN_KEY,
                             "unknown group (groups: [topology], [gpu], [preset], "
                             "[device NAME], [link FROM TO], [route SRC DST])");
            return FALSE;
        }
    }
    for (guint k = 0; k < 2; k++) {
        if (!ms_ini_has_group(ini, known[k].word)) {
            g_set_error(error, MS_INI_ERROR, MS_INI_ERROR_MISSING, "%s: missing group [%s]",
                        ms_ini_source(ini), known[k].word);
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
read_header(const MsIni *ini, const char **name, const char **description, GError **error)
{
    static const char *const keys[] = {"format", "name", "description", NULL};
    guint64 format = 0;
    if (!ms_ini_check_keys(ini, "topology", keys, error) ||
        !ms_ini_get_uint(ini, "topology", "format", 0, G_MAXUINT32, &format, error)) {
        return FALSE;
    }
    if (format != 1) {
        ms_ini_set_error(ini, "topology", "format", error, MS_INI_ERROR_VALUE,
                         "format %" G_GUINT64_FORMAT " is not supported (this moesim reads "
                         "format 1)",
                         format);
        return FALSE;
    }
    *name = ms_ini_get_string(ini, "topology", "name", error);
    if (*name == NULL) {
        return FALSE;
    }
    if (**name == '\0') {
        ms_ini_set_error(ini, "topology", "name", error, MS_INI_ERROR_VALUE, "must not be empty");
        return FALSE;
    }
    *description = "";
    return ms_ini_opt_string(ini, "topology", "description", description, error);
}

/* peak_DTYPE: the dense peak of one datatype, optional, in the range of the table. */
static gboolean
read_dtype_peaks(const MsIni *ini, MsGpuSpec *gpu, GError **error)
{
    for (guint d = 0; d < MS_DTYPE_N; d++) {
        g_autofree char *key = g_strdup_printf("peak_%s", ms_dtype_name(d));
        if (!ms_ini_range_double(ini, "gpu", topo_field("[gpu]", key), FALSE, &gpu->dtype_peak[d],
                                 error)) {
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
read_gpu(const MsIni *ini, MsGpuSpec *gpu, GError **error)
{
    static const char *const keys[] = {"model",           "peak",      "hbm",       "memory",
                                       "launch_overhead", "peak_fp32", "peak_fp16", "peak_bf16",
                                       "peak_tf32",       "peak_fp8",  NULL};
    if (!ms_ini_check_keys(ini, "gpu", keys, error) || !read_dtype_peaks(ini, gpu, error)) {
        return FALSE;
    }
    gpu->model = ms_ini_get_string(ini, "gpu", "model", error);
    return gpu->model != NULL &&
           ms_ini_range_double(ini, "gpu", topo_field("[gpu]", "peak"), TRUE, &gpu->peak_flops,
                               error) &&
           ms_ini_range_double(ini, "gpu", topo_field("[gpu]", "hbm"), TRUE, &gpu->hbm_bandwidth,
                               error) &&
           ms_ini_range_uint(ini, "gpu", topo_field("[gpu]", "memory"), TRUE, &gpu->memory_bytes,
                             error) &&
           ms_ini_range_time(ini, "gpu", topo_field("[gpu]", "launch_overhead"), TRUE,
                             &gpu->launch_overhead, error);
}

gboolean
topo_group_device(const MsTopology *topo, const MsIni *ini, const char *group, const char *name,
                  guint *device, GError **error)
{
    if (!ms_topology_find_device(topo, name, device)) {
        topo_error(ini, group, NULL, error, MS_TOPOLOGY_ERROR_INVALID, "unknown device '%s'", name);
        return FALSE;
    }
    return TRUE;
}

/* [route SRC DST] path = SRC;dev;...;DST: the devices the route visits, each step a link. */
static gboolean
read_route(MsTopology *topo, const MsIni *ini, const char *group, GHashTable *seen, GError **error)
{
    static const char *const keys[] = {"path", NULL};
    g_auto(GStrv) words = topo_group_words(group);
    guint src, dst;
    if (!topo_group_device(topo, ini, group, words[1], &src, error) ||
        !topo_group_device(topo, ini, group, words[2], &dst, error) ||
        !ms_ini_check_keys(ini, group, keys, error)) {
        return FALSE;
    }
    g_autofree char *pair = g_strdup_printf("%u %u", src, dst);
    const char *first = g_hash_table_lookup(seen, pair);
    if (first) {
        topo_error(ini, group, NULL, error, MS_TOPOLOGY_ERROR_INVALID,
                   "route %s -> %s given twice (first at line %u)", words[1], words[2],
                   ms_ini_line(ini, first, NULL));
        return FALSE;
    }
    const char *text = ms_ini_get_string(ini, group, "path", error);
    if (text == NULL) {
        return FALSE;
    }
    g_auto(GStrv) steps = g_strsplit(text, ";", -1);
    g_autoptr(GArray) devices = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint k = 0; steps[k]; k++) {
        g_strstrip(steps[k]);
        guint d;
        if (steps[k][0] == '\0') {
            continue;
        }
        if (!ms_topology_find_device(topo, steps[k], &d)) {
            topo_error(ini, group, "path", error, MS_TOPOLOGY_ERROR_INVALID, "unknown device '%s'",
                       steps[k]);
            return FALSE;
        }
        g_array_append_val(devices, d);
    }
    guint n = devices->len;
    if (n < 2 || g_array_index(devices, guint, 0) != src ||
        g_array_index(devices, guint, n - 1) != dst || n - 1 > TOPO_MAX_HOPS) {
        topo_error(ini, group, "path", error, MS_TOPOLOGY_ERROR_INVALID,
                   "'%s' must run from %s to %s in at most %d links", text, words[1], words[2],
                   TOPO_MAX_HOPS);
        return FALSE;
    }
    /* A route may come back to a switch (through the host's memory and back: NCCL's SHM path),
     * but not to a GPU, and never crosses one directed link twice: its flows would be charged
     * twice there. At most 65 devices: pairs are cheap. */
    for (guint k = 0; k < n; k++) {
        guint dk = g_array_index(devices, guint, k);
        for (guint j = k + 1; j < n; j++) {
            if (dk == g_array_index(devices, guint, j) &&
                ms_topology_device_kind(topo, dk) == MS_DEVICE_GPU) {
                topo_error(ini, group, "path", error, MS_TOPOLOGY_ERROR_INVALID,
                           "'%s' visits GPU %s twice (steps %u and %u): a route passes a GPU at "
                           "most once",
                           text, ms_topology_device_name(topo, dk), k + 1, j + 1);
                return FALSE;
            }
        }
    }
    g_autofree guint32 *links = g_new(guint32, n - 1);
    for (guint k = 0; k + 1 < n; k++) {
        guint a = g_array_index(devices, guint, k), b = g_array_index(devices, guint, k + 1);
        guint l;
        if (!topo_find_link(topo, a, b, &l)) {
            topo_error(ini, group, "path", error, MS_TOPOLOGY_ERROR_INVALID,
                       "no link %s->%s in '%s'", ms_topology_device_name(topo, a),
                       ms_topology_device_name(topo, b), text);
            return FALSE;
        }
        for (guint j = 0; j < k; j++) {
            if (links[j] == l) {
                topo_error(ini, group, "path", error, MS_TOPOLOGY_ERROR_INVALID,
                           "'%s' crosses link %s->%s twice: its flows would be charged twice "
                           "there",
                           text, ms_topology_device_name(topo, a),
                           ms_topology_device_name(topo, b));
                return FALSE;
            }
        }
        links[k] = l;
    }
    g_hash_table_insert(seen, g_steal_pointer(&pair), (gpointer)group);
    topo_add_given_route(topo, src, dst, g_steal_pointer(&links), n - 1);
    return TRUE;
}

static gboolean
read_routes(MsTopology *topo, const MsIni *ini, GError **error)
{
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    guint n = 0;
    const char *const *groups = ms_ini_groups(ini, &n);
    for (guint i = 0; i < n; i++) {
        g_auto(GStrv) words = topo_group_words(groups[i]);
        if (strcmp(words[0], "route") == 0 && !read_route(topo, ini, groups[i], seen, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

/* The group that defines a device: [device NAME] in explicit files, else [preset]. */
static const char *
device_group(const MsIni *ini, const char *name)
{
    guint n = 0;
    const char *const *groups = ms_ini_groups(ini, &n);
    for (guint i = 0; i < n; i++) {
        g_auto(GStrv) words = topo_group_words(groups[i]);
        if (strcmp(words[0], "device") == 0 && strcmp(words[1], name) == 0) {
            return groups[i];
        }
    }
    return "preset";
}

static MsTopology *
parse(const MsIni *ini, GError **error)
{
    const char *name = NULL, *description = NULL;
    MsGpuSpec gpu = {0};
    if (!check_groups(ini, error) || !read_header(ini, &name, &description, error) ||
        !read_gpu(ini, &gpu, error)) {
        return NULL;
    }
    g_autoptr(MsTopology) topo = ms_ini_has_group(ini, "preset")
                                     ? topo_build_preset(ini, name, description, &gpu, error)
                                     : topo_build_explicit(ini, name, description, &gpu, error);
    if (topo == NULL || !read_routes(topo, ini, error)) {
        return NULL;
    }
    topo_finish(topo);
    guint src, dst;
    if (!topo_check_connected(topo, &src, &dst)) {
        const char *a = ms_topology_device_name(topo, ms_topology_gpu_device(topo, src));
        const char *b = ms_topology_device_name(topo, ms_topology_gpu_device(topo, dst));
        topo_error(ini, device_group(ini, a), NULL, error, MS_TOPOLOGY_ERROR_UNREACHABLE,
                   "GPU %s cannot reach GPU %s (no path of at most %d links that avoids other "
                   "GPUs, and no [route %s %s])",
                   a, b, TOPO_MAX_HOPS, a, b);
        return NULL;
    }
    return g_steal_pointer(&topo);
}

/* Counts the [device ...] and [link ...] group headers in the text itself (a line whose first
 * non-blank character is '['), so that a description of more than moesim models is refused
 * before the INI parser allocates a group for each: a 64 MiB file holds 5 million headers. */
static gboolean
check_group_counts(const char *data, gsize len, const char *source, GError **error)
{
    guint64 devices = 0, links = 0;
    const char *end = data + len;
    for (const char *p = data; p < end;) {
        while (p < end && (*p == ' ' || *p == '\t')) {
            p++;
        }
        if (p < end && *p == '[') {
            gsize left = (gsize)(end - p);
            devices += left > 8 && memcmp(p, "[device", 7) == 0 && (p[7] == ' ' || p[7] == '\t');
            links += left > 6 && memcmp(p, "[link", 5) == 0 && (p[5] == ' ' || p[5] == '\t');
        }
        const char *nl = memchr(p, '\n', (gsize)(end - p));
        p = nl ? nl + 1 : end;
    }
    if (devices > TOPO_MAX_FILE_DEVICES || links > TOPO_MAX_FILE_LINKS) {
        g_set_error(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_INVALID,
                    "%s: %" G_GUINT64_FORMAT " [device] and %" G_GUINT64_FORMAT
                    " [link] groups are more than moesim models (at most %u and %u)",
                    source, devices, links, TOPO_MAX_FILE_DEVICES, TOPO_MAX_FILE_LINKS);
        return FALSE;
    }
    return TRUE;
}

MsTopology *
ms_topology_load_data(const char *data, gsize len, const char *source, GError **error)
{
    if (!check_group_counts(data, len, source ? source : "<input>", error)) {
        return NULL;
    }
    g_autoptr(MsIni) ini = ms_ini_load_data(data, len, source, error);
    MsTopology *topo = ini ? parse(ini, error) : NULL;
    if (topo != NULL && source != NULL) {
        topo->source = g_strdup(source);
    }
    return topo;
}

char **
ms_topology_list_shipped(void)
{
    return ms_resource_list(ms_topologies_get_resource(), RESOURCE_DIR, ".ini");
}

GBytes *
ms_topology_shipped_data(const char *name)
{
    return ms_resource_data(ms_topologies_get_resource(), RESOURCE_DIR, name, ".ini");
}

MsTopology *
ms_topology_load(const char *name_or_path, GError **error)
{
    g_return_val_if_fail(name_or_path != NULL, NULL);
    if (g_file_test(name_or_path, G_FILE_TEST_EXISTS)) {
        g_autofree char *data = NULL;
        gsize len = 0;
        g_autoptr(GError) local = NULL;
        if (!ms_input_file_read(name_or_path, MS_INPUT_TOPOLOGY, &data, &len, &local)) {
            g_set_error(error, MS_INI_ERROR, MS_INI_ERROR_IO, "%s", local->message);
            return NULL;
        }
        return ms_topology_load_data(data, len, name_or_path, error);
    }
    if (strchr(name_or_path, '/') || g_str_has_suffix(name_or_path, ".ini")) {
        g_set_error(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_UNKNOWN,
                    "%s: no such topology file", name_or_path);
        return NULL;
    }
    return ms_topology_load_shipped(name_or_path, error);
}

/* The text of a shipped topology, or NULL with MS_TOPOLOGY_ERROR_UNKNOWN listing the shipped
 * ones. */
static GBytes *
shipped_or_error(const char *name, GError **error)
{
    GBytes *data = ms_topology_shipped_data(name);
    if (data == NULL) {
        g_auto(GStrv) names = ms_topology_list_shipped();
        g_autofree char *list = g_strjoinv(", ", names);
        g_autofree char *shown = g_strescape(name, NULL);
        g_set_error(error, MS_TOPOLOGY_ERROR, MS_TOPOLOGY_ERROR_UNKNOWN,
                    "unknown topology '%s': no such file, and no shipped topology has that name "
                    "(shipped: %s)",
                    shown, list);
    }
    return data;
}

gboolean
ms_topology_shipped_summary(const char *name, guint *gpus, guint *nodes, char **description,
                            GError **error)
{
    g_return_val_if_fail(name != NULL && gpus != NULL && nodes != NULL && description != NULL,
                         FALSE);
    g_autoptr(GBytes) data = shipped_or_error(name, error);
    if (data == NULL) {
        return FALSE;
    }
    g_autofree char *source = g_strdup_printf("topology %s", name);
    gsize len = 0;
    const char *text = g_bytes_get_data(data, &len);
    g_autoptr(MsIni) ini = ms_ini_load_data(text, len, source, error);
    const char *topo_name = NULL, *desc = NULL;
    if (ini == NULL || !check_groups(ini, error) || !read_header(ini, &topo_name, &desc, error)) {
        return FALSE;
    }
    if (ms_ini_has_group(ini, "preset")) {
        guint gpn = 0;
        if (!topo_preset_shape(ini, nodes, &gpn, error)) {
            return FALSE;
        }
        *gpus = *nodes * gpn;
        *description = g_strdup(desc);
        return TRUE;
    }
    /* An explicit file's GPUs and nodes are only known from its devices and links. */
    g_autoptr(MsTopology) topo = parse(ini, error);
    if (topo == NULL) {
        return FALSE;
    }
    *gpus = ms_topology_n_gpus(topo);
    *nodes = ms_topology_n_nodes(topo);
    *description = g_strdup(ms_topology_description(topo));
    return TRUE;
}

MsTopology *
ms_topology_load_shipped(const char *name, GError **error)
{
    g_return_val_if_fail(name != NULL, NULL);
    g_autoptr(GBytes) data = shipped_or_error(name, error);
    if (data == NULL) {
        return NULL;
    }
    g_autofree char *source = g_strdup_printf("topology %s", name);
    gsize len = 0;
    const char *text = g_bytes_get_data(data, &len);
    return ms_topology_load_data(text, len, source, error);
}
