/* lina_host: where the host link's figure comes from, how many experts a GPU's cache holds, and
 * the loads of one MoE layer through the caches. */
#include "lina_host.h"

#include <math.h>
#include <string.h>

#include "policy.h"

/* Host links by GPU model, for topologies that do not describe them: x16 at the PCI-SIG
 * per-direction rate of the generation the GPU uses (8, 16, 32 GT/s with 128b/130b coding), or
 * NVLink-C2C (NVIDIA: 900 GB/s in both directions). The first match wins (GH200 before H200). */
static const struct {
    const char *model;
    double bandwidth;
    const char *what;
} gpu_links[] = {
    {"GH200", 450e9, "NVLink-C2C"},    {"GB200", 450e9, "NVLink-C2C"},
    {"V100", 15.75e9, "PCIe 3.0 x16"}, {"A100", 31.5e9, "PCIe 4.0 x16"},
    {"H100", 63.0e9, "PCIe 5.0 x16"},  {"H200", 63.0e9, "PCIe 5.0 x16"},
};

/* The shortest route from a cpu device of the GPU's node, if it has a finite bottleneck. */
static gboolean
from_cpu(const MsTopology *topo, guint gpu, MsHostLink *out)
{
    gint node = ms_topology_device_node(topo, gpu);
    guint best = G_MAXUINT;
    for (guint d = 0; d < ms_topology_n_devices(topo); d++) {
        if (ms_topology_device_kind(topo, d) != MS_DEVICE_CPU ||
            ms_topology_device_node(topo, d) != node) {
            continue;
        }
        guint hops = 0;
        const guint32 *route = ms_topology_route(topo, d, gpu, &hops, NULL);
        double bw = route ? ms_topology_route_bandwidth(topo, route, hops) : INFINITY;
        if (route && hops < best && isfinite(bw)) {
            best = hops;
            out->bandwidth = bw;
            g_snprintf(out->source, sizeof out->source, "route %s->%s",
                       ms_topology_device_name(topo, d), ms_topology_device_name(topo, gpu));
        }
    }
    return best != G_MAXUINT;
}

/* A finite pcie link into the GPU: its PCIe path (to its NIC, in the presets). */
static gboolean
own_pcie(const MsTopology *topo, guint gpu, MsHostLink *out)
{
    for (guint l = 0; l < ms_topology_n_links(topo); l++) {
        const MsLink *k = ms_topology_link(topo, l);
        if (k->to == gpu && k->klass == MS_LINK_PCIE && isfinite(k->bandwidth)) {
            out->bandwidth = k->bandwidth;
            g_snprintf(out->source, sizeof out->source, "link %s", k->name);
            return TRUE;
        }
    }
    return FALSE;
}

gboolean
ms_lina_host_link(const MsTopology *topo, guint rank, double given, MsHostLink *out, GError **error)
{
    memset(out, 0, sizeof *out);
    if (given > 0) {
        out->bandwidth = given;
        g_strlcpy(out->source, "host_bw", sizeof out->source);
        return TRUE;
    }
    guint gpu = ms_topology_gpu_device(topo, rank);
    if (from_cpu(topo, gpu, out) || own_pcie(topo, gpu, out)) {
        return TRUE;
    }
    const char *model = ms_topology_gpu_spec(topo, rank)->model;
    for (guint i = 0; model && i < G_N_ELEMENTS(gpu_links); i++) {
        if (strstr(model, gpu_links[i].model)) {
            out->bandwidth = gpu_links[i].bandwidth;
            g_snprintf(out->source, sizeof out->source, "%s (%s)", gpu_links[i].what,
                       gpu_links[i].model);
            return TRUE;
        }
    }
    g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_INPUT,
                "policy lina: weights=host loads experts over a GPU's link to host memory, and "
                "topology %s describes none (no cpu device, no pcie link into %s, GPU model "
                "'%s' unknown): give lina:host_bw=BANDWIDTH",
                ms_topology_name(topo), ms_topology_device_name(topo, gpu), model ? model : "");
    return FALSE;
}

double
ms_lina_dense_bytes(const MsModel *model)
{
    const MsModelSpec *s = ms_model_spec(model);
    return ms_model_dense_params(model) * ms_dtype_bytes(s->dtype);
}

gboolean
ms_lina_host_capacity(const MsModel *model, const MsTopology *topo, guint64 cache_bytes,
                      guint *experts, guint64 *bytes, GError **error)
{
    const MsModelSpec *s = ms_model_spec(model);
    /* A cache slot holds any layer's expert: the largest (layer groups may differ). */
    double eb = (double)ms_model_largest_expert_params(model) * ms_dtype_bytes(s->dtype);
    double memory = (double)ms_topology_gpu_spec(topo, 0)->memory_bytes;
    double dense = ms_lina_dense_bytes(model);
    double room = cache_bytes ? (double)cache_bytes : 0.5 * memory - dense;
    if (cache_bytes && (double)cache_bytes + dense > memory) {
        g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE,
                    "policy lina: cache=%" G_GUINT64_FORMAT "B and the %.0f B of dense weights "
                    "do not fit a GPU's %.0f B",
                    cache_bytes, dense, memory);
        return FALSE;
    }
    if (!(room >= eb) && cache_bytes == 0) {
        g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_INPUT,
                    "policy lina: weights=host: half of a GPU's %.0f B less the %.0f B of dense "
                    "weights leaves no room for one expert (%.0f B): give lina:cache=SIZE",
                    memory, dense, eb);
        return FALSE;
    }
    double n = eb > 0 ? floor(room / eb) : 0;
    *experts = (guint)MIN(n, (double)G_MAXUINT / 2);
    *bytes = (guint64)room;
    return TRUE;
}

void
ms_lina_host_layer(MsExpertCache *cache, guint moe, const MsPlacement *p1, const double *est,
                   const MsPlacement *final, const double *real, guint64 expert_bytes,
                   guint64 *p1_bytes, guint64 *p2_bytes)
{
    guint n = ms_expert_cache_n_ranks(cache), E = ms_placement_n_experts(final);
    g_autofree gboolean *ahead = g_new(gboolean, E);
    for (guint r = 0; r < n; r++) {
        memset(ahead, 0, sizeof(gboolean) * E);
        p1_bytes[r] = p2_bytes[r] = 0;
        for (guint e = 0; p1 && e < E; e++) {
            if (est[e] > 0 && ms_placement_hosts(p1, r, e)) {
                ahead[e] = TRUE;
                p1_bytes[r] += ms_expert_cache_use(cache, r, moe, e) ? 0 : expert_bytes;
            }
        }
        for (guint e = 0; e < E; e++) {
            if (real[e] > 0 && ms_placement_hosts(final, r, e)) {
                gboolean held = ms_expert_cache_use(cache, r, moe, e);
                p2_bytes[r] += held || ahead[e] ? 0 : expert_bytes;
            }
        }
    }
}
