/* net_model: the spec of a network model, NCCL's link figures for a topology, the communicators
 * a run needs (one per distinct rank set, made on first use) and the weight of a connection. */
#include "net_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "route_cache.h"

G_DEFINE_QUARK(ms_net_model_error_quark, ms_net_model_error)

struct _MsNetModel {
    MsNetSpec spec; /* as given, its version filled in (the default, or log) */
    guint version;  /* the release the model's communicators run: the default for log */
    const MsTopology *topo;
    guint arch;
    double *bandwidth;    /* per link, bytes/s */
    GHashTable *comms;    /* rank list (GBytes) -> MsNcclComm */
    MsRouteCache *routes; /* src << 32 | dst -> links, empty where the topology's route holds */
    GHashTable *rings;    /* (comm, channels) -> double */
};

typedef struct {
    const MsNcclComm *comm;
    guint channels;
} RingKey;

static guint
ring_hash(gconstpointer p)
{
    const RingKey *k = p;
    return g_direct_hash(k->comm) ^ (k->channels * 2654435761u);
}

static gboolean
ring_equal(gconstpointer a, gconstpointer b)
{
    const RingKey *x = a, *y = b;
    return x->comm == y->comm && x->channels == y->channels;
}

void
ms_net_spec_init(MsNetSpec *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->kind = MS_NET_FLOW;
    spec->message_exponent = 1.0;
    spec->latency_scale = 1.0;
    spec->net_efficiency = 1.0;
    spec->host_us = -1;
    for (guint p = 0; p < MS_NCCL_N_PROTOS; p++) {
        spec->proto_efficiency[p] = 1.0;
    }
}

#define SPEC_ERROR(...)                                                                            \
    (g_set_error(error, MS_NET_MODEL_ERROR, MS_NET_MODEL_ERROR_SPEC, __VA_ARGS__), FALSE)

static gboolean
parse_uint(const char *key, const char *value, guint lo, guint hi, guint *out, GError **error)
{
    guint64 v = 0;
    /* ms_parse_uint, not g_ascii_string_to_unsigned: see sim/base/units.c (safe on threads). */
    if (!ms_parse_uint(value, lo, hi, &v, NULL)) {
        return SPEC_ERROR("network model key '%s': '%s' is not a whole number in [%u, %u]", key,
                          value, lo, hi);
    }
    *out = (guint)v;
    return TRUE;
}

static gboolean
parse_double(const char *key, const char *value, double lo, double hi, double *out, GError **error)
{
    char *end = NULL;
    double x = g_ascii_strtod(value, &end);
    if (end == value || *end || !(x >= lo && x <= hi)) {
        return SPEC_ERROR("network model key '%s': '%s' is not a number in [%g, %g]", key, value,
                          lo, hi);
    }
    *out = x;
    return TRUE;
}

/* "ring", "tree+ring" ...: the bits of the names, each known to from_name. */
static gboolean
parse_mask(const char *key, const char *value, gboolean (*from_name)(const char *, guint *),
           const char *known, guint *mask, GError **error)
{
    g_auto(GStrv) parts = g_strsplit(value, "+", -1);
    guint m = 0;
    for (guint i = 0; parts[i]; i++) {
        guint bit = 0;
        if (!from_name(parts[i], &bit)) {
            return SPEC_ERROR("network model key '%s': unknown name '%s' (%s, joined by +)", key,
                              parts[i], known);
        }
        m |= 1u << bit;
    }
    *mask = m;
    return TRUE;
}

static gboolean
algo_bit(const char *name, guint *bit)
{
    MsNcclAlgo a;
    if (!ms_nccl_algo_from_name(name, &a)) {
        return FALSE;
    }
    *bit = a;
    return TRUE;
}

static gboolean
proto_bit(const char *name, guint *bit)
{
    MsNcclProto p;
    if (!ms_nccl_proto_from_name(name, &p)) {
        return FALSE;
    }
    *bit = p;
    return TRUE;
}

static gboolean
parse_key(MsNetSpec *spec, const char *key, const char *value, GError **error)
{
    MsNcclConfig *c = &spec->nccl;
    if (strcmp(key, "version") == 0) {
        if (strcmp(value, "log") == 0) {
            c->version = MS_NCCL_VERSION_LOG;
            return TRUE;
        }
        if (!ms_nccl_parse_version(value, &c->version)) {
            return SPEC_ERROR("network model key 'version': '%s' is not an NCCL version from 2.8 "
                              "to 2.30 (2.18, 2.18.6 or 21806) nor log (each measured row at its "
                              "log's)",
                              value);
        }
        return TRUE;
    }
    if (strcmp(key, "arch") == 0) {
        const char *digits = g_str_has_prefix(value, "sm") ? value + 2 : value;
        return parse_uint(key, digits, 60, 120, &c->arch, error);
    }
    if (strcmp(key, "cpu") == 0) {
        if (strcmp(value, "intel") != 0 && strcmp(value, "amd") != 0) {
            return SPEC_ERROR("network model key 'cpu': '%s' is not intel or amd", value);
        }
        c->amd_cpu = strcmp(value, "amd") == 0;
        return TRUE;
    }
    if (strcmp(key, "algo") == 0) {
        return parse_mask(key, value, algo_bit, "ring, tree, nvls, nvlstree", &c->algo_mask, error);
    }
    if (strcmp(key, "proto") == 0) {
        return parse_mask(key, value, proto_bit, "ll, ll128, simple", &c->proto_mask, error);
    }
    if (strcmp(key, "min_channels") == 0) {
        return parse_uint(key, value, 1, 64, &c->min_channels, error);
    }
    if (strcmp(key, "max_channels") == 0) {
        return parse_uint(key, value, 1, 64, &c->max_channels, error);
    }
    if (strcmp(key, "net_peer_channels") == 0) {
        return parse_uint(key, value, 1, 32, &c->net_peer_channels, error);
    }
    if (strcmp(key, "arbitration") == 0) {
        if (strcmp(value, "message") == 0) {
            spec->message_exponent = 1.0;
        } else if (strcmp(value, "connection") == 0) {
            spec->message_exponent = 0.0;
        } else {
            return SPEC_ERROR("network model key 'arbitration': '%s' is not message or connection",
                              value);
        }
        return TRUE;
    }
    if (strcmp(key, "message_exponent") == 0) {
        return parse_double(key, value, 0, 1, &spec->message_exponent, error);
    }
    if (strcmp(key, "tree") == 0) {
        if (strcmp(value, "edges") != 0 && strcmp(value, "ring-flows") != 0) {
            return SPEC_ERROR("network model key 'tree': '%s' is not edges or ring-flows", value);
        }
        spec->tree_ring_flows = strcmp(value, "ring-flows") == 0;
        return TRUE;
    }
    if (strcmp(key, "latency_scale") == 0) {
        return parse_double(key, value, 0, 100, &spec->latency_scale, error);
    }
    if (strcmp(key, "host_us") == 0) {
        return parse_double(key, value, 0, 1e4, &spec->host_us, error);
    }
    if (strcmp(key, "net_efficiency") == 0) {
        return parse_double(key, value, 0.01, 1.5, &spec->net_efficiency, error);
    }
    for (guint p = 0; p < MS_NCCL_N_PROTOS; p++) {
        g_autofree char *name = g_ascii_strdown(ms_nccl_proto_name(p), -1);
        g_autofree char *k = g_strdup_printf("%s_efficiency", name);
        if (strcmp(key, k) == 0) {
            return parse_double(key, value, 0.01, 1.5, &spec->proto_efficiency[p], error);
        }
    }
    return SPEC_ERROR(
        "network model nccl has no key '%s' (version, arch, cpu, algo, proto, "
        "min_channels, max_channels, net_peer_channels, arbitration, "
        "message_exponent, latency_scale, host_us, tree, ll_efficiency, ll128_efficiency, "
        "simple_efficiency, net_efficiency)",
        key);
}

gboolean
ms_net_spec_parse(const char *text, MsNetSpec *out, GError **error)
{
    MsNetSpec spec;
    ms_net_spec_init(&spec);
    const char *colon = strchr(text, ':');
    g_autofree char *name = colon ? g_strndup(text, colon - text) : g_strdup(text);
    if (strcmp(name, "flow") == 0) {
        if (colon) {
            return SPEC_ERROR("network model flow takes no keys ('%s')", text);
        }
    } else if (strcmp(name, "nccl") == 0) {
        spec.kind = MS_NET_NCCL;
        g_auto(GStrv) pairs = colon ? g_strsplit(colon + 1, ",", -1) : g_new0(char *, 1);
        g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        for (guint i = 0; pairs[i]; i++) {
            char *eq = strchr(pairs[i], '=');
            if (eq == NULL || eq == pairs[i] || eq[1] == '\0') {
                return SPEC_ERROR("network model nccl: '%s' is not key=value", pairs[i]);
            }
            *eq = '\0';
            if (!g_hash_table_add(seen, g_strdup(pairs[i]))) {
                return SPEC_ERROR("network model nccl: key '%s' is given twice", pairs[i]);
            }
            if (!parse_key(&spec, pairs[i], eq + 1, error)) {
                return FALSE;
            }
        }
        if (spec.nccl.min_channels && spec.nccl.max_channels &&
            spec.nccl.min_channels > spec.nccl.max_channels) {
            return SPEC_ERROR("network model nccl: min_channels %u is above max_channels %u",
                              spec.nccl.min_channels, spec.nccl.max_channels);
        }
    } else {
        return SPEC_ERROR("unknown network model '%s' (flow, nccl)", name);
    }
    *out = spec;
    return TRUE;
}

static void
append_mask(GString *s, const char *key, guint mask, const char *(*name)(guint), guint n)
{
    if (mask == 0) {
        return;
    }
    g_string_append_printf(s, ",%s=", key);
    gboolean first = TRUE;
    for (guint i = 0; i < n; i++) {
        if (mask & (1u << i)) {
            g_string_append_printf(s, "%s%s", first ? "" : "+", name(i));
            first = FALSE;
        }
    }
}

static const char *
algo_name(guint i)
{
    return ms_nccl_algo_name(i);
}

static const char *
proto_name(guint i)
{
    return ms_nccl_proto_name(i);
}

char *
ms_net_spec_to_string(const MsNetSpec *spec)
{
    if (spec->kind == MS_NET_FLOW) {
        return g_strdup("flow");
    }
    const MsNcclConfig *c = &spec->nccl;
    guint v = c->version;
    GString *s = g_string_new(NULL);
    /* Patch 99 is what "2.10" alone parses to (ms_nccl_parse_version): printed so, the spec reads
     * as it was given and never names a release NCCL did not make. No version is printed as none:
     * its default depends on the GPUs (ms_nccl_default_version), which a model's spec has
     * resolved and a bare one (a fitted spec to paste) must leave to them. */
    if (v == 0) {
        g_string_printf(s, "nccl");
    } else if (v == MS_NCCL_VERSION_LOG) {
        g_string_printf(s, "nccl:version=log");
    } else if (v % 100 == 99) {
        g_string_printf(s, "nccl:version=%u.%u", v / 10000, v / 100 % 100);
    } else {
        g_string_printf(s, "nccl:version=%u.%u.%u", v / 10000, v / 100 % 100, v % 100);
    }
    if (c->arch) {
        g_string_append_printf(s, ",arch=sm%u", c->arch);
    }
    if (c->amd_cpu) {
        g_string_append(s, ",cpu=amd");
    }
    append_mask(s, "algo", c->algo_mask, algo_name, MS_NCCL_N_ALGOS);
    append_mask(s, "proto", c->proto_mask, proto_name, MS_NCCL_N_PROTOS);
    if (c->min_channels) {
        g_string_append_printf(s, ",min_channels=%u", c->min_channels);
    }
    if (c->max_channels) {
        g_string_append_printf(s, ",max_channels=%u", c->max_channels);
    }
    if (c->net_peer_channels) {
        g_string_append_printf(s, ",net_peer_channels=%u", c->net_peer_channels);
    }
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    if (spec->message_exponent != 1.0) {
        g_string_append_printf(s, ",message_exponent=%s",
                               g_ascii_formatd(buf, sizeof buf, "%.6g", spec->message_exponent));
    }
    if (spec->latency_scale != 1.0) {
        g_string_append_printf(s, ",latency_scale=%s",
                               g_ascii_formatd(buf, sizeof buf, "%.6g", spec->latency_scale));
    }
    if (spec->net_efficiency != 1.0) {
        g_string_append_printf(s, ",net_efficiency=%s",
                               g_ascii_formatd(buf, sizeof buf, "%.6g", spec->net_efficiency));
    }
    if (spec->host_us >= 0) {
        g_string_append_printf(s, ",host_us=%s",
                               g_ascii_formatd(buf, sizeof buf, "%.6g", spec->host_us));
    }
    if (spec->tree_ring_flows) {
        g_string_append(s, ",tree=ring-flows");
    }
    for (guint p = 0; p < MS_NCCL_N_PROTOS; p++) {
        if (spec->proto_efficiency[p] != 1.0) {
            g_autofree char *name = g_ascii_strdown(ms_nccl_proto_name(p), -1);
            g_string_append_printf(
                s, ",%s_efficiency=%s", name,
                g_ascii_formatd(buf, sizeof buf, "%.6g", spec->proto_efficiency[p]));
        }
    }
    /* Without a version the keys follow "nccl" itself: its first ',' is the ':'. */
    if (v == 0 && s->len > 4) {
        s->str[4] = ':';
    }
    return g_string_free(s, FALSE);
}

/* NCCL's count of a link (graph/topo.cc): an NVLink bundle is its links times the architecture's
 * per-link figure, a PCIe link its lanes times its generation's rate (ms_nccl_pci_bw). NICs, CPU
 * interconnects and fabric links keep their figures: NCCL counts a NIC at its line rate. A link
 * already below NCCL's figure (a calibrated or derated one) keeps its own. */
static double
nccl_link_bandwidth(const MsTopology *topo, guint l, guint arch, guint version)
{
    const MsLink *link = ms_topology_link(topo, l);
    double bw = link->bandwidth;
    if (!isfinite(bw)) {
        return bw;
    }
    double nccl = bw;
    switch (link->klass) {
    case MS_LINK_NVLINK:
    case MS_LINK_NVSWITCH:
        nccl = ms_topology_link_count(topo, l) * ms_nccl_nvlink_bw(arch, version) * 1e9;
        break;
    case MS_LINK_PCIE:
        nccl = ms_nccl_pci_bw(bw / 1e9) * 1e9;
        break;
    default:
        break;
    }
    return MIN(bw, nccl);
}

/* The fastest NVLink generation's rate, bytes/s per direction per link: NVLink 5.0 (Blackwell),
 * 18 links of 50 GB/s = 900 GB/s per GPU (NVIDIA's NVLink and NVSwitch product pages); NVLink 2.0
 * to 4.0 run 25 GB/s per link. */
#define NVLINK_MAX_LINK_BW 50e9

/* NCCL counts NVLinks one by one (nccl_link_bandwidth): a bundle described as one link of more
 * than any NVLink's rate (a topology that gives intra_bandwidth but not intra_links) would be
 * counted as a single link, a fifteenth of a DGX A100's, without a word. Refused instead. */
static gboolean
check_nvlink_counts(const MsTopology *topo, GError **error)
{
    for (guint l = 0; l < ms_topology_n_links(topo); l++) {
        const MsLink *link = ms_topology_link(topo, l);
        guint count = ms_topology_link_count(topo, l);
        gboolean nvlink = link->klass == MS_LINK_NVLINK || link->klass == MS_LINK_NVSWITCH;
        if (nvlink && isfinite(link->bandwidth) &&
            link->bandwidth > count * NVLINK_MAX_LINK_BW * (1 + 1e-9)) {
            g_set_error(error, MS_NCCL_ERROR, MS_NCCL_ERROR_TOPOLOGY,
                        "%s: network model nccl: link %s carries %.4g GB/s over %u NVLink%s, "
                        "more than the %.0f GB/s per direction of the fastest NVLink; NCCL counts "
                        "the links one by one, so say how many there are (intra_links of a "
                        "[preset], count of a [link]; a DGX A100 has 12, a DGX H100 18)",
                        ms_topology_source(topo), link->name, link->bandwidth / 1e9, count,
                        count == 1 ? "" : "s", NVLINK_MAX_LINK_BW / 1e9);
            return FALSE;
        }
    }
    return TRUE;
}

MsNetModel *
ms_net_model_new(const MsNetSpec *spec, const MsTopology *topo, GError **error)
{
    guint arch = spec->nccl.arch;
    if (spec->kind == MS_NET_NCCL && arch == 0 && ms_topology_n_gpus(topo) > 0 &&
        !ms_nccl_arch_of_model(ms_topology_gpu_spec(topo, 0)->model, &arch)) {
        g_set_error(error, MS_NCCL_ERROR, MS_NCCL_ERROR_ARCH,
                    "network model nccl: the GPU model '%s' of topology '%s' names no known "
                    "architecture; give it as arch=sm80 (or 70, 90, 100 ...)",
                    ms_topology_gpu_spec(topo, 0)->model, ms_topology_name(topo));
        return NULL;
    }
    if (spec->kind == MS_NET_NCCL && !check_nvlink_counts(topo, error)) {
        return NULL;
    }
    MsNetModel *m = g_new0(MsNetModel, 1);
    m->spec = *spec;
    m->spec.nccl.arch = arch;
    guint dflt = ms_nccl_default_version(arch);
    if (m->spec.nccl.version == 0) {
        m->spec.nccl.version = dflt;
    }
    m->version = m->spec.nccl.version == MS_NCCL_VERSION_LOG ? dflt : m->spec.nccl.version;
    m->topo = topo;
    m->arch = arch;
    guint n = ms_topology_n_links(topo);
    m->bandwidth = g_new(double, MAX(n, 1));
    for (guint l = 0; l < n; l++) {
        m->bandwidth[l] = spec->kind == MS_NET_NCCL ? nccl_link_bandwidth(topo, l, arch, m->version)
                                                    : ms_topology_link(topo, l)->bandwidth;
    }
    m->comms =
        g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, g_free);
    m->routes = ms_route_cache_new();
    m->rings = g_hash_table_new_full(ring_hash, ring_equal, g_free, g_free);
    return m;
}

void
ms_net_model_free(MsNetModel *model)
{
    if (model == NULL) {
        return;
    }
    g_free(model->bandwidth);
    g_hash_table_unref(model->comms);
    ms_route_cache_free(model->routes);
    g_hash_table_unref(model->rings);
    g_free(model);
}

const MsNetSpec *
ms_net_model_spec(const MsNetModel *model)
{
    return &model->spec;
}

guint
ms_net_model_nccl_version(const MsNetModel *model)
{
    return model->version;
}

MsNetKind
ms_net_model_kind(const MsNetModel *model)
{
    return model->spec.kind;
}

double
ms_net_model_link_bandwidth(const MsNetModel *model, guint link)
{
    g_return_val_if_fail(link < ms_topology_n_links(model->topo), 0);
    return model->bandwidth[link];
}

void
ms_net_model_apply(const MsNetModel *model, MsSim *sim)
{
    g_return_if_fail(ms_sim_topology(sim) == model->topo);
    MsNetwork *net = ms_sim_network(sim);
    for (guint l = 0; l < ms_topology_n_links(model->topo); l++) {
        /* The network's links at the fraction of NCCL's figure they deliver; everything that
         * computes NCCL's own predictions reads model->bandwidth, the figure itself. */
        MsLinkClass k = ms_topology_link(model->topo, l)->klass;
        double bw = model->bandwidth[l] *
                    (k == MS_LINK_NIC || k == MS_LINK_FABRIC ? model->spec.net_efficiency : 1.0);
        if (isfinite(bw) && bw != ms_network_link_bandwidth(net, l)) {
            ms_network_set_link_bandwidth(net, l, ms_sim_now(sim), bw);
        }
    }
}

const MsNcclComm *
ms_net_model_comm(MsNetModel *model, const guint *ranks, guint n, GError **error)
{
    if (model->spec.kind != MS_NET_NCCL) {
        return NULL;
    }
    g_autofree guint *list = g_new(guint, MAX(n, 1));
    for (guint i = 0; i < n; i++) {
        list[i] = ranks ? ranks[i] : i;
    }
    g_autoptr(GBytes) key = g_bytes_new(list, n * sizeof(guint));
    MsNcclComm *comm = g_hash_table_lookup(model->comms, key);
    if (comm) {
        return comm;
    }
    comm = g_new(MsNcclComm, 1);
    MsNcclConfig cfg = model->spec.nccl;
    cfg.version = model->version;
    if (!ms_nccl_comm_init(comm, model->topo, list, n, &cfg, error)) {
        g_free(comm);
        return NULL;
    }
    g_hash_table_insert(model->comms, g_bytes_ref(key), comm);
    return comm;
}

static gboolean
nvlink_route(const guint32 *route, guint n, const MsTopology *topo)
{
    for (guint i = 0; i < n; i++) {
        MsLinkClass k = ms_topology_link(topo, route[i])->klass;
        if (k != MS_LINK_NVLINK && k != MS_LINK_NVSWITCH) {
            return FALSE;
        }
    }
    return TRUE;
}

/* The one direct NVLink from GPU device a to device b, or NULL. */
static const guint32 *
direct_nvlink(const MsTopology *topo, guint a, guint b)
{
    guint n = 0;
    const guint32 *r = ms_topology_route(topo, a, b, &n, NULL);
    return r && n == 1 && ms_topology_link(topo, r[0])->klass == MS_LINK_NVLINK ? r : NULL;
}

/* NCCL's P2P via an intermediate GPU (graph/paths.cc: a path may cross one GPU over NVLink). */
static GArray *
nvb_route(const MsNetModel *model, guint src, guint dst)
{
    const MsTopology *topo = model->topo;
    guint best = G_MAXUINT;
    double best_bw = 0;
    const guint32 *first = NULL, *second = NULL;
    for (guint r = 0; r < ms_topology_n_gpus(topo); r++) {
        guint k = ms_topology_gpu_device(topo, r);
        if (k == src || k == dst ||
            ms_topology_device_node(topo, k) != ms_topology_device_node(topo, src)) {
            continue;
        }
        const guint32 *a = direct_nvlink(topo, src, k), *b = direct_nvlink(topo, k, dst);
        if (a && b) {
            double bw = MIN(model->bandwidth[a[0]], model->bandwidth[b[0]]);
            if (best == G_MAXUINT || bw > best_bw) {
                best = k;
                best_bw = bw;
                first = a;
                second = b;
            }
        }
    }
    if (best == G_MAXUINT) {
        return NULL;
    }
    GArray *route = g_array_sized_new(FALSE, FALSE, sizeof(guint32), 2);
    g_array_append_val(route, first[0]);
    g_array_append_val(route, second[0]);
    return route;
}

const guint32 *
ms_net_model_route(MsNetModel *model, guint src, guint dst, guint *n_links, GError **error)
{
    const MsTopology *topo = model->topo;
    const guint32 *route = ms_topology_route(topo, src, dst, n_links, error);
    if (route == NULL || model->spec.kind != MS_NET_NCCL || *n_links == 0 ||
        ms_topology_device_kind(topo, src) != MS_DEVICE_GPU ||
        ms_topology_device_kind(topo, dst) != MS_DEVICE_GPU ||
        ms_topology_device_node(topo, src) != ms_topology_device_node(topo, dst) ||
        nvlink_route(route, *n_links, topo)) {
        return route;
    }
    guint64 key = ((guint64)src << 32) | dst;
    const guint32 *via = NULL;
    guint n_via = 0;
    if (!ms_route_cache_lookup(model->routes, key, &via, &n_via)) {
        /* No GPU to go through: NCCL uses the PCIe path too. That is remembered as an empty
         * route so the search runs once. */
        g_autoptr(GArray) found = nvb_route(model, src, dst);
        n_via = found ? found->len : 0;
        via =
            ms_route_cache_insert(model->routes, key, found ? (guint32 *)found->data : NULL, n_via);
    }
    if (n_via == 0) {
        return route;
    }
    *n_links = n_via;
    return via;
}

/* The first NIC on a route, or G_MAXUINT. */
static guint
route_nic(const MsTopology *topo, const guint32 *route, guint n)
{
    for (guint i = 0; i < n; i++) {
        const MsLink *l = ms_topology_link(topo, route[i]);
        if (ms_topology_device_kind(topo, l->to) == MS_DEVICE_NIC) {
            return l->to;
        }
    }
    return G_MAXUINT;
}

/* The GPU of src's node with dst's local index (GPUs are numbered node-major), or G_MAXUINT. */
static guint
rail_peer(const MsTopology *topo, guint src, guint dst)
{
    gint rs = ms_topology_device_rank(topo, src), rd = ms_topology_device_rank(topo, dst);
    guint g = ms_topology_gpus_per_node(topo);
    if (rs < 0 || rd < 0 || g == 0) {
        return G_MAXUINT;
    }
    guint peer = (guint)rs / g * g + (guint)rd % g;
    return peer == (guint)rs ? G_MAXUINT : ms_topology_gpu_device(topo, peer);
}

/* PXN: the send goes over NVLink to the GPU on the destination's rail and leaves by its NIC
 * (graph/paths.cc from 2.12.7; the GPU with the peer's device index from 2.18). Only when that
 * GPU reaches it over NVLink and its NIC differs from the sender's. */
static GArray *
pxn_route(const MsNetModel *model, guint src, guint dst, const guint32 *direct, guint n_direct)
{
    const MsTopology *topo = model->topo;
    guint proxy = rail_peer(topo, src, dst);
    if (proxy == G_MAXUINT) {
        return NULL;
    }
    guint n1 = 0, n2 = 0;
    const guint32 *hop = ms_topology_route(topo, src, proxy, &n1, NULL);
    const guint32 *out = ms_topology_route(topo, proxy, dst, &n2, NULL);
    if (hop == NULL || out == NULL || !nvlink_route(hop, n1, topo) ||
        route_nic(topo, out, n2) == route_nic(topo, direct, n_direct)) {
        return NULL;
    }
    GArray *route = g_array_sized_new(FALSE, FALSE, sizeof(guint32), n1 + n2);
    g_array_append_vals(route, hop, n1);
    g_array_append_vals(route, out, n2);
    return route;
}

const guint32 *
ms_net_model_p2p_route(MsNetModel *model, guint src, guint dst, guint *n_links, GError **error)
{
    const MsTopology *topo = model->topo;
    if (model->spec.kind != MS_NET_NCCL || model->version < MS_NCCL_VERSION(2, 12, 7) ||
        ms_topology_device_kind(topo, src) != MS_DEVICE_GPU ||
        ms_topology_device_kind(topo, dst) != MS_DEVICE_GPU ||
        ms_topology_device_node(topo, src) == ms_topology_device_node(topo, dst)) {
        return ms_net_model_route(model, src, dst, n_links, error);
    }
    const guint32 *route = ms_topology_route(topo, src, dst, n_links, error);
    if (route == NULL) {
        return NULL;
    }
    /* Bit 63 tells PXN routes from the NVB ones in the cache. */
    guint64 key = (G_GUINT64_CONSTANT(1) << 63) | ((guint64)src << 32) | dst;
    const guint32 *via = NULL;
    guint n_via = 0;
    if (!ms_route_cache_lookup(model->routes, key, &via, &n_via)) {
        g_autoptr(GArray) found = pxn_route(model, src, dst, route, *n_links);
        n_via = found ? found->len : 0;
        via =
            ms_route_cache_insert(model->routes, key, found ? (guint32 *)found->data : NULL, n_via);
    }
    if (n_via == 0) {
        return route;
    }
    *n_links = n_via;
    return via;
}

double *
ms_net_model_ring_slot(MsNetModel *model, const MsNcclComm *comm, guint channels)
{
    RingKey key = {comm, channels};
    double *slot = g_hash_table_lookup(model->rings, &key);
    if (slot == NULL) {
        slot = g_new(double, 1);
        *slot = NAN;
        g_hash_table_insert(model->rings, g_memdup2(&key, sizeof key), slot);
    }
    return slot;
}

double
ms_net_model_message_weight(const MsNetModel *model, guint64 message)
{
    double x = model->spec.message_exponent;
    if (x == 0 || message == 0) {
        return 1.0;
    }
    return pow((double)message / (double)MS_NET_REFERENCE_MESSAGE, x);
}
