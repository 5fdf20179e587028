/* cmd_topo: `moesim topo list` (the shipped topologies) and `moesim topo show NAME|FILE` (what a
 * topology holds: devices, links by class, per-GPU injection and bisection bandwidth, the GPU).
 * Bandwidths print in bytes/s units, "unlimited" for links that never constrain. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "sim/base/json_output.h"
#include "topologies/topology.h"

/* Device lists longer than this print only with --links. */
#define SHOW_DEVICES_MAX 40

typedef struct {
    MsLinkClass klass;
    MsBandwidth bandwidth;
    MsTime latency;
    guint links;
} LinkGroup;

typedef struct {
    guint kinds[MS_DEVICE_CPU + 1];
    GArray *groups; /* LinkGroup, by class, then bandwidth (widest first), then latency */
    MsBandwidth injection_min, injection_max, bisection;
} Summary;

static gint
cmp_group(gconstpointer pa, gconstpointer pb)
{
    const LinkGroup *a = pa, *b = pb;
    if (a->klass != b->klass) {
        return a->klass < b->klass ? -1 : 1;
    }
    if (a->bandwidth != b->bandwidth) {
        return a->bandwidth > b->bandwidth ? -1 : 1;
    }
    return a->latency < b->latency ? -1 : (a->latency > b->latency);
}

static void
summarise(const MsTopology *topo, Summary *s)
{
    memset(s, 0, sizeof(*s));
    for (guint d = 0; d < ms_topology_n_devices(topo); d++) {
        s->kinds[ms_topology_device_kind(topo, d)]++;
    }
    s->groups = g_array_new(FALSE, FALSE, sizeof(LinkGroup));
    for (guint i = 0; i < ms_topology_n_links(topo); i++) {
        const MsLink *l = ms_topology_link(topo, i);
        LinkGroup key = {l->klass, l->bandwidth, l->latency, 1};
        guint k = 0;
        while (k < s->groups->len && cmp_group(&g_array_index(s->groups, LinkGroup, k), &key)) {
            k++;
        }
        if (k < s->groups->len) {
            g_array_index(s->groups, LinkGroup, k).links++;
        } else {
            g_array_append_val(s->groups, key);
        }
    }
    g_array_sort(s->groups, cmp_group);
    s->injection_min = INFINITY;
    s->injection_max = 0;
    for (guint r = 0; r < ms_topology_n_gpus(topo); r++) {
        MsBandwidth b = ms_topology_injection_bandwidth(topo, r);
        s->injection_min = MIN(s->injection_min, b);
        s->injection_max = MAX(s->injection_max, b);
    }
    s->bisection = ms_topology_bisection_bandwidth(topo);
}

/* Bandwidths of whole machines reach TB/s, where the shared formatter switches to exponents. */
static const char *
fmt_bw(MsBandwidth bw, char *buf, gsize len)
{
    if (isfinite(bw) && bw >= 1e12) {
        g_snprintf(buf, len, "%.4g TB/s", bw / 1e12);
        return buf;
    }
    return ms_format_bandwidth(bw, buf, len);
}

static void
print_devices(const MsTopology *topo)
{
    printf("  %-22s %-7s %5s %5s\n", "device", "kind", "node", "rank");
    for (guint d = 0; d < ms_topology_n_devices(topo); d++) {
        gint node = ms_topology_device_node(topo, d), rank = ms_topology_device_rank(topo, d);
        char nb[16] = "-", rb[16] = "-";
        if (node >= 0) {
            g_snprintf(nb, sizeof nb, "%d", node);
        }
        if (rank >= 0) {
            g_snprintf(rb, sizeof rb, "%d", rank);
        }
        printf("  %-22s %-7s %5s %5s\n", ms_topology_device_name(topo, d),
               ms_device_kind_name(ms_topology_device_kind(topo, d)), nb, rb);
    }
}

static void
print_links(const MsTopology *topo)
{
    char b1[32], b2[32];
    printf("  %-34s %-9s %12s %10s %5s\n", "link", "class", "bandwidth", "latency", "count");
    for (guint i = 0; i < ms_topology_n_links(topo); i++) {
        const MsLink *l = ms_topology_link(topo, i);
        printf("  %-34s %-9s %12s %10s %5u\n", l->name, ms_link_class_name(l->klass),
               fmt_bw(l->bandwidth, b1, sizeof b1), ms_format_time(l->latency, b2, sizeof b2),
               ms_topology_link_count(topo, i));
    }
}

static void
print_gpus(const MsTopology *topo)
{
    guint n = ms_topology_n_gpus(topo), nodes = ms_topology_n_nodes(topo);
    guint gpn = ms_topology_gpus_per_node(topo), npn = ms_topology_nics_per_node(topo);
    printf("GPUs        %u (%u node%s", n, nodes, nodes == 1 ? "" : "s");
    if (gpn) {
        printf(" x %u GPU%s", gpn, gpn == 1 ? "" : "s");
    }
    if (npn) {
        printf(", %u NIC%s per node", npn, npn == 1 ? "" : "s");
    }
    printf(")\n");
    const MsGpuSpec *g = ms_topology_gpu_spec(topo, 0);
    char b1[32], b2[32], b3[32];
    printf("GPU model   %s: %.4g TFLOPS peak, %s memory bandwidth, %s memory, %s launch\n",
           g->model, g->peak_flops / 1e12, fmt_bw(g->hbm_bandwidth, b1, sizeof b1),
           ms_format_bytes(g->memory_bytes, b2, sizeof b2),
           ms_format_time(g->launch_overhead, b3, sizeof b3));
    printf("peaks       ");
    for (guint d = 0; d < MS_DTYPE_N; d++) {
        MsFlops peak = 0;
        if (ms_gpu_spec_peak(g, d, &peak)) {
            printf("%s %.4g", ms_dtype_name(d), peak / 1e12);
        } else {
            printf("%s none", ms_dtype_name(d));
        }
        printf(d + 1 < MS_DTYPE_N ? ", " : " TFLOPS dense\n");
    }
}

static void
print_text(const MsTopology *topo, const Summary *s, gboolean all)
{
    char b1[32], b2[32];
    printf("topology    %s\n", ms_topology_name(topo));
    if (*ms_topology_description(topo)) {
        printf("            %s\n", ms_topology_description(topo));
    }
    print_gpus(topo);
    printf("devices     %u: %u gpu, %u nic, %u switch, %u cpu\n", ms_topology_n_devices(topo),
           s->kinds[MS_DEVICE_GPU], s->kinds[MS_DEVICE_NIC], s->kinds[MS_DEVICE_SWITCH],
           s->kinds[MS_DEVICE_CPU]);
    if (all || ms_topology_n_devices(topo) <= SHOW_DEVICES_MAX) {
        print_devices(topo);
    }
    printf("links       %u directed\n", ms_topology_n_links(topo));
    printf("  %-10s %7s %12s %10s\n", "class", "links", "bandwidth", "latency");
    for (guint k = 0; k < s->groups->len; k++) {
        const LinkGroup *g = &g_array_index(s->groups, LinkGroup, k);
        printf("  %-10s %7u %12s %10s\n", ms_link_class_name(g->klass), g->links,
               fmt_bw(g->bandwidth, b1, sizeof b1), ms_format_time(g->latency, b2, sizeof b2));
    }
    if (all) {
        print_links(topo);
    }
    const char *what = ms_topology_n_nodes(topo) == 1
                           ? "into the node's interconnect"
                           : "off-node, with every GPU of its node sending";
    if (s->injection_min == s->injection_max) {
        printf("injection   %s per GPU (%s)\n", fmt_bw(s->injection_min, b1, sizeof b1), what);
    } else {
        printf("injection   %s to %s per GPU (%s)\n", fmt_bw(s->injection_min, b1, sizeof b1),
               fmt_bw(s->injection_max, b2, sizeof b2), what);
    }
    guint n = ms_topology_n_gpus(topo);
    if (n < 2) {
        printf("bisection   none (a single GPU)\n");
    } else {
        printf("bisection   %s (GPUs 0-%u to %u-%u, one direction)\n",
               fmt_bw(s->bisection, b1, sizeof b1), n / 2 - 1, n / 2, n - 1);
    }
}

/* JSON has no infinity: unlimited bandwidths are the string "unlimited". */
static void
json_bandwidth(JsonBuilder *b, const char *member, MsBandwidth bw)
{
    json_builder_set_member_name(b, member);
    if (isinf(bw)) {
        json_builder_add_string_value(b, "unlimited");
    } else {
        json_builder_add_double_value(b, bw);
    }
}

static void
json_gpu(JsonBuilder *b, const MsGpuSpec *g)
{
    json_builder_set_member_name(b, "gpu");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "model");
    json_builder_add_string_value(b, g->model);
    json_builder_set_member_name(b, "peak_flops");
    json_builder_add_double_value(b, g->peak_flops);
    /* Per datatype, null where the GPU has no figure (a model in that dtype is refused). */
    json_builder_set_member_name(b, "dtype_peak_flops");
    json_builder_begin_object(b);
    for (guint d = 0; d < MS_DTYPE_N; d++) {
        MsFlops peak = 0;
        json_builder_set_member_name(b, ms_dtype_name(d));
        if (ms_gpu_spec_peak(g, d, &peak)) {
            json_builder_add_double_value(b, peak);
        } else {
            json_builder_add_null_value(b);
        }
    }
    json_builder_end_object(b);
    json_bandwidth(b, "memory_bandwidth", g->hbm_bandwidth);
    ms_json_member_int(b, "memory_bytes", g->memory_bytes);
    json_builder_set_member_name(b, "launch_overhead_s");
    json_builder_add_double_value(b, ms_time_to_s(g->launch_overhead));
    json_builder_end_object(b);
}

static void
json_link(JsonBuilder *b, const char *name, MsLinkClass klass, MsBandwidth bw, MsTime lat,
          const char *count_member, guint count)
{
    json_builder_begin_object(b);
    if (name) {
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, name);
    }
    json_builder_set_member_name(b, "class");
    json_builder_add_string_value(b, ms_link_class_name(klass));
    json_bandwidth(b, "bandwidth", bw);
    json_builder_set_member_name(b, "latency_s");
    json_builder_add_double_value(b, ms_time_to_s(lat));
    ms_json_member_int(b, count_member, count);
    json_builder_end_object(b);
}

static void
json_lists(JsonBuilder *b, const MsTopology *topo)
{
    json_builder_set_member_name(b, "device_list");
    json_builder_begin_array(b);
    for (guint d = 0; d < ms_topology_n_devices(topo); d++) {
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, ms_topology_device_name(topo, d));
        json_builder_set_member_name(b, "kind");
        json_builder_add_string_value(b, ms_device_kind_name(ms_topology_device_kind(topo, d)));
        ms_json_member_int(b, "node", ms_topology_device_node(topo, d));
        ms_json_member_int(b, "rank", ms_topology_device_rank(topo, d));
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "link_list");
    json_builder_begin_array(b);
    for (guint i = 0; i < ms_topology_n_links(topo); i++) {
        const MsLink *l = ms_topology_link(topo, i);
        json_link(b, l->name, l->klass, l->bandwidth, l->latency, "count",
                  ms_topology_link_count(topo, i));
    }
    json_builder_end_array(b);
}

static JsonNode *
to_json(const MsTopology *topo, const Summary *s, gboolean all)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    ms_json_member_string(b, "schema", "moesim.topology/1"); /* docs/outputs.md */
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, ms_topology_name(topo));
    json_builder_set_member_name(b, "description");
    json_builder_add_string_value(b, ms_topology_description(topo));
    ms_json_member_int(b, "gpus", ms_topology_n_gpus(topo));
    ms_json_member_int(b, "nodes", ms_topology_n_nodes(topo));
    ms_json_member_int(b, "gpus_per_node", ms_topology_gpus_per_node(topo));
    ms_json_member_int(b, "nics_per_node", ms_topology_nics_per_node(topo));
    json_gpu(b, ms_topology_gpu_spec(topo, 0));
    json_builder_set_member_name(b, "devices");
    json_builder_begin_object(b);
    for (guint k = 0; k <= MS_DEVICE_CPU; k++) {
        ms_json_member_int(b, ms_device_kind_name(k), s->kinds[k]);
    }
    ms_json_member_int(b, "total", ms_topology_n_devices(topo));
    json_builder_end_object(b);
    ms_json_member_int(b, "links", ms_topology_n_links(topo));
    json_builder_set_member_name(b, "link_groups");
    json_builder_begin_array(b);
    for (guint k = 0; k < s->groups->len; k++) {
        const LinkGroup *g = &g_array_index(s->groups, LinkGroup, k);
        json_link(b, NULL, g->klass, g->bandwidth, g->latency, "links", g->links);
    }
    json_builder_end_array(b);
    json_bandwidth(b, "injection_bandwidth_min", s->injection_min);
    json_bandwidth(b, "injection_bandwidth_max", s->injection_max);
    json_bandwidth(b, "bisection_bandwidth", s->bisection);
    if (all) {
        json_lists(b, topo);
    }
    json_builder_end_object(b);
    return json_builder_get_root(b);
}

static int
topo_list(void)
{
    g_auto(GStrv) names = ms_topology_list_shipped();
    int width = 18;
    for (guint i = 0; names[i]; i++) {
        width = MAX(width, (int)strlen(names[i]));
    }
    printf("%-*s %6s %6s  %s\n", width, "name", "GPUs", "nodes", "description");
    for (guint i = 0; names[i]; i++) {
        g_autoptr(GError) error = NULL;
        g_autofree char *description = NULL;
        guint gpus = 0, nodes = 0;
        if (!ms_topology_shipped_summary(names[i], &gpus, &nodes, &description, &error)) {
            return ms_cli_fail(error);
        }
        printf("%-*s %6u %6u  %s\n", width, names[i], gpus, nodes, description);
    }
    return MS_EXIT_OK;
}

static int
topo_show(const char *what, const char *json, gboolean all, gboolean source)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(MsTopology) topo = ms_topology_load(what, &error);
    if (topo == NULL) {
        return ms_cli_fail(error);
    }
    if (source) {
        return ms_cli_print_source(what, MS_INPUT_TOPOLOGY, ms_topology_shipped_data);
    }
    Summary s;
    summarise(topo, &s);
    int rc = MS_EXIT_OK;
    if (json) {
        g_autoptr(JsonNode) node = to_json(topo, &s, all);
        if (!ms_cli_write_json(json, node, &error)) {
            rc = ms_cli_fail(error);
        }
    }
    if (rc == MS_EXIT_OK && (json == NULL || strcmp(json, "-") != 0)) {
        print_text(topo, &s, all);
    }
    g_array_unref(s.groups);
    return rc;
}

int
ms_cmd_topo(int argc, char **argv)
{
    g_autofree char *json = NULL;
    gboolean links = FALSE, source = FALSE;
    const GOptionEntry entries[] = {
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &json, "show: also write JSON to FILE (- = stdout)",
         "FILE|-"},
        {"links", 0, 0, G_OPTION_ARG_NONE, &links, "show: list every device and link", NULL},
        {"source", 0, 0, G_OPTION_ARG_NONE, &source, "show: print the topology file itself", NULL},
        {NULL},
    };
    if (!ms_cli_parse(
            &argc, &argv, entries, "list | show NAME|FILE",
            "List the shipped topologies, or show what one holds.",
            "  list               the shipped topologies: name, GPUs, nodes, description\n"
            "  show NAME|FILE     devices, links by class, injection and bisection\n"
            "                     bandwidth, GPU figures (NAME: a shipped topology)")) {
        return MS_EXIT_USAGE;
    }
    if (argc == 2 && strcmp(argv[1], "list") == 0) {
        return topo_list();
    }
    if (argc == 3 && strcmp(argv[1], "show") == 0) {
        return topo_show(argv[2], json, links, source);
    }
    return ms_cli_usage("topo: expected 'list' or 'show NAME|FILE' (see 'moesim topo --help')");
}
