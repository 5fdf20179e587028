/* The walk of every range table (range_tables.h, rendered into docs/bad-inputs.md): for each field
 * and each bound, an input holding the bound itself must be accepted by the real parser, and one
 * holding the nearest value past it refused with a message naming the field. Inputs accepted at a
 * bound are then used as far as a short run can: a calibration is applied and simulated, a
 * topology carries a collective, a model's costs are computed, so that the sanitizer build shows
 * no overflow behind the bounds. A boolean's both values and every spelling of a choice are
 * accepted, anything else refused. Every field of every table must have an input here. */
#include "ms_test.h"

#include <glib/gstdio.h>

#include "range_tables.h"
#include "sim/net/collective.h"
#include "sim/sim.h"
#include "traces/trace_import.h"
#include "traces/trace_reader.h"

/* ---- inputs ---------------------------------------------------------------------------------- */

#define GPU                                                                                        \
    "[gpu]\nmodel = X\npeak = 312TFLOPS\nhbm = 2TBps\nmemory = 80GiB\nlaunch_overhead = 4us\n"
#define TOPO_HEAD "[topology]\nformat = 1\nname = walk\n" GPU

static const char preset[] =
    TOPO_HEAD "[preset]\nnodes = 2\ngpus_per_node = 2\nintra = nvswitch\n"
              "intra_bandwidth = 300GBps\nintra_latency = 1us\nintra_links = 1\nnics = per_node\n"
              "nic_bandwidth = 200Gbps\nnic_latency = 1us\ngpu_nic_bandwidth = 32GBps\n"
              "gpu_nic_latency = 1us\nfabric = fat_tree\nfabric_latency = 1us\n"
              "nodes_per_leaf = 1\noversubscription = 1\n";
static const char explicit_form[] =
    TOPO_HEAD "[device g0]\nkind = gpu\nnode = 0\n[device g1]\nkind = gpu\nnode = 0\n"
              "[device sw]\nkind = switch\n"
              "[link g0 sw]\nclass = nvswitch\nbandwidth = 300GBps\nlatency = 1us\ncount = 1\n"
              "[link g1 sw]\nclass = nvswitch\nbandwidth = 300GBps\nlatency = 1us\n";
static const char model[] =
    "[model]\nformat = 1\nname = walk\nlayers = 4\nd_model = 64\nd_ffn = 128\nd_ffn_dense = 128\n"
    "experts = 64\ntop_k = 2\ntop_k_infer = 1\ncapacity_factor = 1\n"
    "heads = 4\nkv_heads = 2\nseq_len = 64\ntokens_per_gpu = 64\n"
    "tokens_per_gpu_infer = 16\nep = 2\ngrad_bucket = 1MiB\nvocab = 0\n"
    "attention_flops = 1e6\ndense_flops = 1e6\nbackward_factor = 2\n";
static const char calibration[] =
    "[calibration]\nformat = 1\n[link nvswitch]\nbandwidth = 200GBps\nlatency = 2us\nr2 = 0.9\n"
    "max_residual = 0.1\npoints = 4\n[collective alltoall]\nalpha = 10us\nsizes = 1MiB\n"
    "efficiency = 0.5\n[gemm]\ntokens = 64\nefficiency = 0.5\noverlap_slowdown = 1.1\n"
    "launch = 4us\n[framework]\nname = deepspeed\nop = 10us\nmoe_layer = 1ms\nexpert = 100us\n"
    "sync = 20us\ntoken = 0.1us\nsyncs = 1\npoints = 12\n";
static const char trace_header[] =
    "moe-trace 1\nexperts 64\nlayers 2\nranks 2\ntop_k 1\ntokens_per_rank 8\n";
static const char nccl_log[] =
    "# nThread @THREADS nGpus @GPUS minBytes 8 maxBytes 8192 step: 2(factor) warmup iters: 5 "
    "iters: 20\n"
    "@RANKS"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
    "        @SIZE          2048     float     sum      -1    @TIME    0.27    0.00      0\n";

/* Where a value sits in a field's range: at or below the lower bound, between the bounds (a
 * choice's middle spellings), at or past the upper one. */
typedef enum { POS_LOWER = -1, POS_MIDDLE = 0, POS_UPPER = 1 } Pos;

/* Other keys a field's value needs (a bound that depends on another key, a choice that leaves
 * keys without use), "" to delete one; at both bounds, the upper only or the lower only. A group
 * that is not there is added at the end. */
typedef enum { AT_BOTH, AT_UPPER, AT_LOWER } At;
typedef struct {
    const char *table, *where, *key;
    At at;
    const char *group, *other, *value;
} Needs;

#define NODES_65536(key)                                                                           \
    {"Topology files", "[preset]", key, AT_UPPER, "preset", "gpus_per_node", "1"},                 \
        {"Topology files", "[preset]", key, AT_UPPER, "preset", "intra", "none"},                  \
        {"Topology files", "[preset]", key, AT_UPPER, "preset", "intra_bandwidth", ""},            \
        {"Topology files", "[preset]", key, AT_UPPER, "preset", "intra_latency", ""},              \
    {                                                                                              \
        "Topology files", "[preset]", key, AT_UPPER, "preset", "intra_links", ""                   \
    }

static const Needs needs[] = {
    NODES_65536("nodes"),
    {"Topology files", "[preset]", "nodes", AT_UPPER, "preset", "nodes_per_leaf", "65536"},
    /* A leaf's 1000 NIC ports over 1000 are one uplink; 65536 of them spread over 65536 spines;
     * three tiers are sized by the radix. */
    {"Topology files", "[preset]", "oversubscription", AT_UPPER, "preset", "nodes_per_leaf",
     "1000"},
    {"Topology files", "[preset]", "spines", AT_UPPER, "preset", "nodes_per_leaf", "65536"},
    {"Topology files", "[preset]", "tiers", AT_UPPER, "preset", "switch_radix", "64"},
    {"Topology files", "[preset]", "gpus_per_node", AT_UPPER, "preset", "nodes", "1"},
    {"Model files", "[model]", "moe_layers", AT_UPPER, "model", "layers", "4096"},
    {"Model files", "[model]", "moe_every", AT_UPPER, "model", "layers", "4096"},
    {"Model files", "[model]", "moe_first", AT_UPPER, "model", "layers", "4096"},
    {"Model files", "[model]", "d_model", AT_BOTH, "model", "heads", "1"},
    {"Model files", "[model]", "d_model", AT_BOTH, "model", "kv_heads", "1"},
    {"Model files", "[model]", "experts", AT_BOTH, "model", "top_k", "1"},
    {"Model files", "[model]", "top_k", AT_BOTH, "model", "top_k_infer", "1"},
    {"Model files", "[model]", "heads", AT_BOTH, "model", "d_model", "65536"},
    {"Model files", "[model]", "heads", AT_BOTH, "model", "kv_heads", "1"},
    {"Model files", "[model]", "kv_heads", AT_BOTH, "model", "d_model", "65536"},
    {"Model files", "[model]", "kv_heads", AT_BOTH, "model", "heads", "65536"},
    /* A node limit is both keys; at 65536 nodes as many experts, one on each. */
    {"Trace headers", "a trace header", "expert_nodes", AT_BOTH, "", "max_nodes", "1"},
    {"Trace headers", "a trace header", "expert_nodes", AT_UPPER, "", "experts", "65536"},
    {"Trace headers", "a trace header", "max_nodes", AT_BOTH, "", "expert_nodes", "1"},
    {"Trace headers", "a trace header", "max_nodes", AT_UPPER, "", "expert_nodes", "65536"},
    {"Trace headers", "a trace header", "max_nodes", AT_UPPER, "", "experts", "65536"},
    /* intra = none: one GPU a node, no intra keys; nics = none: one node, no network keys;
     * fabric = switch: no fat-tree keys; rails need a NIC per GPU; a link one way only needs the
     * way back as a link of its own. */
    {"Topology files", "[preset]", "intra", AT_LOWER, "preset", "gpus_per_node", "1"},
    {"Topology files", "[preset]", "intra", AT_LOWER, "preset", "intra_bandwidth", ""},
    {"Topology files", "[preset]", "intra", AT_LOWER, "preset", "intra_latency", ""},
    {"Topology files", "[preset]", "intra", AT_LOWER, "preset", "intra_links", ""},
    {"Topology files", "[preset]", "nics", AT_LOWER, "preset", "nodes", "1"},
    {"Topology files", "[preset]", "nics", AT_LOWER, "preset", "nic_bandwidth", ""},
    {"Topology files", "[preset]", "nics", AT_LOWER, "preset", "nic_latency", ""},
    {"Topology files", "[preset]", "nics", AT_LOWER, "preset", "gpu_nic_bandwidth", ""},
    {"Topology files", "[preset]", "nics", AT_LOWER, "preset", "gpu_nic_latency", ""},
    {"Topology files", "[preset]", "nics", AT_LOWER, "preset", "fabric", ""},
    {"Topology files", "[preset]", "nics", AT_LOWER, "preset", "fabric_latency", ""},
    {"Topology files", "[preset]", "nics", AT_LOWER, "preset", "nodes_per_leaf", ""},
    {"Topology files", "[preset]", "nics", AT_LOWER, "preset", "oversubscription", ""},
    {"Topology files", "[preset]", "fabric", AT_LOWER, "preset", "nodes_per_leaf", ""},
    {"Topology files", "[preset]", "fabric", AT_LOWER, "preset", "oversubscription", ""},
    {"Topology files", "[preset]", "rail_optimised", AT_BOTH, "preset", "nics", "per_gpu"},
    {"Topology files", "[link FROM TO]", "bidirectional", AT_LOWER, "link sw g0", "class",
     "nvswitch"},
    {"Topology files", "[link FROM TO]", "bidirectional", AT_LOWER, "link sw g0", "bandwidth",
     "300GBps"},
    {"Topology files", "[link FROM TO]", "bidirectional", AT_LOWER, "link sw g0", "latency", "1us"},
    {"Topology files", "[link FROM TO]", "bidirectional", AT_LOWER, "link sw g0", "bidirectional",
     "false"},
};

/* base with key = value in [group] (replaced, or added at the group's end; value "" deletes). */
static char *
ini_with(const char *base, const char *group, const char *key, const char *value)
{
    g_auto(GStrv) lines = g_strsplit(base, "\n", -1);
    GString *out = g_string_new(NULL);
    g_autofree char *header = g_strdup_printf("[%s]", group);
    g_autofree char *prefix = g_strdup_printf("%s = ", key);
    gboolean in = FALSE, done = FALSE;
    for (guint i = 0; lines[i]; i++) {
        const char *l = lines[i];
        gboolean last = lines[i + 1] == NULL;
        if ((l[0] == '[' || last) && in && !done) {
            if (*value) {
                g_string_append_printf(out, "%s%s\n", prefix, value);
            }
            done = TRUE;
        }
        if (l[0] == '[') {
            in = strcmp(l, header) == 0;
        }
        if (in && g_str_has_prefix(l, prefix)) {
            if (*value) {
                g_string_append_printf(out, "%s%s\n", prefix, value);
            }
            done = TRUE;
        } else if (!last || *l) {
            g_string_append_printf(out, "%s%s", l, last ? "" : "\n");
        }
    }
    if (!done && *value) {
        g_string_append_printf(out, "%s\n%s%s\n", header, prefix, value);
    }
    return g_string_free(out, FALSE);
}

static gboolean
applies(const Needs *n, Pos pos)
{
    return n->at == AT_BOTH || (n->at == AT_UPPER && pos == POS_UPPER) ||
           (n->at == AT_LOWER && pos == POS_LOWER);
}

static char *
with_needs(const char *base, const char *table, const MsRange *r, Pos pos)
{
    char *text = g_strdup(base);
    for (guint i = 0; i < G_N_ELEMENTS(needs); i++) {
        if (strcmp(needs[i].table, table) == 0 && strcmp(needs[i].where, r->where) == 0 &&
            strcmp(needs[i].key, r->key) == 0 && applies(&needs[i], pos)) {
            char *next = ini_with(text, needs[i].group, needs[i].other, needs[i].value);
            g_free(text);
            text = next;
        }
    }
    return text;
}

/* A trace header with `key value` replaced, or added at its end. */
static char *
header_with(const char *base, const char *key, const char *value)
{
    g_auto(GStrv) lines = g_strsplit(base, "\n", -1);
    g_autofree char *prefix = g_strdup_printf("%s ", key);
    GString *out = g_string_new(NULL);
    gboolean done = FALSE;
    for (guint i = 0; lines[i]; i++) {
        if (g_str_has_prefix(lines[i], prefix)) {
            g_string_append_printf(out, "%s%s\n", prefix, value);
            done = TRUE;
        } else if (lines[i][0]) {
            g_string_append_printf(out, "%s\n", lines[i]);
        }
    }
    if (!done) {
        g_string_append_printf(out, "%s%s\n", prefix, value);
    }
    return g_string_free(out, FALSE);
}

static char *
header_with_needs(const MsRange *r, Pos pos)
{
    char *text = g_strdup(trace_header);
    for (guint i = 0; i < G_N_ELEMENTS(needs); i++) {
        if (strcmp(needs[i].table, "Trace headers") == 0 && strcmp(needs[i].key, r->key) == 0 &&
            applies(&needs[i], pos)) {
            char *next = header_with(text, needs[i].other, needs[i].value);
            g_free(text);
            text = next;
        }
    }
    return text;
}

/* An explicit topology of GPUs numbered 0..N, each in its own node, around one switch, the last
 * in node `value` (a bound of a device's node needs that many nodes with a GPU each). */
static char *
explicit_with_node(const char *value)
{
    guint64 last = g_ascii_strtoull(value, NULL, 10);
    guint64 n = value[0] == '-' || last > 65535 ? 1 : last + 1;
    GString *s = g_string_new(TOPO_HEAD "[device sw]\nkind = switch\n");
    for (guint64 i = 0; i < n; i++) {
        if (i + 1 < n) {
            g_string_append_printf(
                s, "[device g%" G_GUINT64_FORMAT "]\nkind = gpu\nnode = %" G_GUINT64_FORMAT "\n", i,
                i);
        } else {
            g_string_append_printf(s, "[device g%" G_GUINT64_FORMAT "]\nkind = gpu\nnode = %s\n", i,
                                   value);
        }
        g_string_append_printf(s,
                               "[link g%" G_GUINT64_FORMAT
                               " sw]\nclass = nvswitch\nbandwidth = 300GBps\nlatency = 1us\n",
                               i);
    }
    return g_string_free(s, FALSE);
}

static char *
replace(const char *text, const char *what, const char *with)
{
    g_auto(GStrv) parts = g_strsplit(text, what, -1);
    return g_strjoinv(with, parts);
}

/* ---- loaders: TRUE when the input is accepted; then what a short run can check ----------------
 */

static void
run_collective(const MsTopology *topo, const MsCalibration *cal, guint64 bytes)
{
    guint n = MIN(ms_topology_n_gpus(topo), 16);
    if (n < 2) {
        return;
    }
    MsCollSpec spec = {.op = MS_COLL_ALLTOALL, .n_ranks = n, .bytes = bytes};
    g_autofree guint64 *scaled = cal ? ms_calibration_adjust_collective(cal, topo, &spec) : NULL;
    (void)scaled; /* only holds memory to free */
    g_autoptr(MsSim) sim = ms_sim_new(topo);
    ms_sim_set_check_invariants(sim, TRUE);
    GError *error = NULL;
    g_autoptr(MsColl) coll = ms_coll_new(sim, &spec, NULL, NULL, &error);
    if (coll == NULL) {
        /* Stretched by a small efficiency past the largest size a collective takes: refused. */
        gboolean too_large = spec.bytes > MS_BYTES_MAX && strstr(error->message, "1 PiB");
        if (!too_large) {
            fprintf(stderr, "\n  collective of %" G_GUINT64_FORMAT " bytes: %s\n", bytes,
                    error->message);
            CU_FAIL("a collective on an accepted input does not start");
        }
        g_clear_error(&error);
        return;
    }
    ms_coll_launch_all(coll);
    /* A slow link with a large size may reach the clock's end: that is an answer, not a bug. */
    if (!ms_sim_run(sim, &error)) {
        CU_ASSERT_TRUE(g_error_matches(error, MS_SIM_ERROR, MS_SIM_ERROR_CLOCK));
        g_clear_error(&error);
    }
}

static gboolean
load_topology(const char *text, GError **error)
{
    g_autoptr(MsTopology) t = ms_topology_load_data(text, strlen(text), "t.ini", error);
    if (t && ms_topology_n_gpus(t) <= 16) {
        run_collective(t, NULL, 1 << 20);
    }
    return t != NULL;
}

static gboolean
load_model(const char *text, GError **error)
{
    g_autoptr(MsModel) m = ms_model_load_data(text, strlen(text), "m.ini", error);
    if (m) {
        const MsModelSpec *s = ms_model_spec(m);
        double costs[] = {
            ms_model_attention_flops(m),
            ms_model_dense_ffn_flops(m),
            ms_model_expert_flops(m),
            ms_model_gate_flops(m),
            ms_model_head_flops(m),
            ms_model_attention_bytes(m, s->tokens_per_gpu),
            ms_model_gate_bytes(m, s->tokens_per_gpu, s->top_k),
            ms_model_head_bytes(m, s->tokens_per_gpu),
            (double)ms_model_capacity(m, s->tokens_per_gpu, s->top_k),
        };
        for (guint i = 0; i < G_N_ELEMENTS(costs); i++) {
            CU_ASSERT_TRUE(isfinite(costs[i]) && costs[i] >= 0);
        }
        /* A GPU's all-to-all in one layer, the largest size the planner derives. */
        double a2a = (double)s->tokens_per_gpu * s->top_k * (double)ms_model_token_bytes(m);
        CU_ASSERT_TRUE(a2a <= (double)MS_BYTES_MAX);
    }
    return m != NULL;
}

static gboolean
load_calibration(const char *text, GError **error)
{
    g_autoptr(MsCalibration) c = ms_calibration_load_data(text, strlen(text), "c.ini", error);
    if (c) {
        g_autoptr(MsTopology) t = ms_topology_load("dgx-a100", NULL);
        CU_ASSERT_TRUE_FATAL(ms_calibration_apply_topology(c, t, NULL));
        run_collective(t, c, 1 << 20);
        run_collective(t, c, MS_BYTES_MAX / 8);
        const MsGpuSpec a100 = *ms_topology_gpu_spec(t, 0);
        g_autoptr(MsComputeModel) cm = ms_calibration_compute_model(c, &a100, NULL);
        CU_ASSERT_PTR_NOT_NULL(cm);
    }
    return c != NULL;
}

static gboolean
load_trace(const char *text, GError **error)
{
    g_autoptr(GBytes) b = g_bytes_new(text, strlen(text));
    g_autoptr(MsTraceReader) r = ms_trace_reader_open_bytes(b, "t.trace", error);
    return r != NULL;
}

static gboolean
load_flows(const char *text, GError **error)
{
    static MsTopology *topo;
    if (topo == NULL) {
        topo = ms_topology_load("dgx-a100-2node", NULL);
    }
    g_autoptr(MsFlowList) l = ms_flow_list_load_data(text, strlen(text), "f.txt", topo, error);
    return l != NULL;
}

static gboolean
load_nccl(const char *text, GError **error)
{
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    return ms_measurement_set_read_data(set, text, strlen(text), "all_reduce_perf.log", error);
}

/* A framework log of one line, imported as `moesim trace import` does (into a file it removes). */
static gboolean
load_framework_log(const char *text, GError **error)
{
    gboolean megatron = strstr(text, "routing_map") || strstr(text, "topk_indices");
    g_autofree char *in = ms_test_write_tmp("log.jsonl", text);
    g_autofree char *out = g_build_filename(ms_test_tmpdir(), "log.trace", NULL);
    MsTraceImportOptions opt = {.top_k = megatron ? 0 : 1};
    gboolean ok =
        ms_trace_import_run(in, megatron ? MS_TRACE_IMPORT_MEGATRON : MS_TRACE_IMPORT_COUNTS_LIST,
                            &opt, out, MS_TRACE_FORMAT_BINARY, NULL, error);
    g_remove(out);
    return ok;
}

/* ---- the walk ------------------------------------------------------------------------------- */

/* The input for field r holding text, or NULL for tables walked through an API. */
static char *
input_for(const MsRangeTable *t, const MsRange *r, const char *text, Pos pos)
{
    const char *in = t->input;
    if (strcmp(in, "Topology files") == 0) {
        gboolean device = strcmp(r->where, "[device NAME]") == 0;
        if (device && strcmp(r->key, "node") == 0) {
            return explicit_with_node(text);
        }
        gboolean link = strcmp(r->where, "[link FROM TO]") == 0;
        g_autofree char *base = with_needs(link || device ? explicit_form : preset, in, r, pos);
        const char *group = device                           ? "device g0"
                            : link                           ? "link g0 sw"
                            : strcmp(r->where, "[gpu]") == 0 ? "gpu"
                                                             : "preset";
        return ini_with(base, group, r->key, text);
    }
    if (strcmp(in, "Model files") == 0) {
        g_autofree char *base = with_needs(model, in, r, pos);
        return ini_with(base, "model", r->key, text);
    }
    if (strcmp(in, "Calibration files") == 0) {
        const char *group = strcmp(r->where, "[link CLASS]") == 0        ? "link nvswitch"
                            : strcmp(r->where, "[collective NAME]") == 0 ? "collective alltoall"
                            : strcmp(r->where, "[framework]") == 0       ? "framework"
                                                                         : "gemm";
        return ini_with(calibration, group, r->key, text);
    }
    if (strcmp(in, "Trace headers") == 0) {
        g_autofree char *base = header_with_needs(r, pos);
        return header_with(base, r->key, text);
    }
    if (strcmp(in, "Flow lists") == 0) {
        const char *k = r->key;
        return g_strdup_printf("f1 gpu0 gpu8 %s %s%s%s\n", strcmp(k, "bytes") == 0 ? text : "1MB",
                               strcmp(k, "start") == 0 ? text : "0us",
                               strcmp(k, "weight") == 0 ? " weight=" : "",
                               strcmp(k, "weight") == 0 ? text : "");
    }
    if (strcmp(in, "Framework logs (trace import)") == 0) {
        const char *k = r->key;
        if (strcmp(k, "expert id") == 0) {
            return g_strdup_printf("{\"layer\": 0, \"topk_indices\": [[%s]]}\n", text);
        }
        if (strcmp(k, "routing map entry") == 0) {
            return g_strdup_printf("{\"layer\": 0, \"routing_map\": [[1, %s]]}\n", text);
        }
        if (strcmp(k, "count") == 0) {
            return g_strdup_printf("{\"layer\": 0, \"counts\": [%s, 0]}\n", text);
        }
        /* Every layer routes the same tokens: a layer's line needs all the layers before it. */
        GString *lines = g_string_new(NULL);
        guint64 layers = strcmp(k, "layer") == 0 ? g_ascii_strtoull(text, NULL, 10) : 0;
        for (guint64 l = 0; l <= layers; l++) {
            g_autofree char *layer = g_strdup_printf("%" G_GUINT64_FORMAT, l);
            g_string_append_printf(lines,
                                   "{\"iteration\": %s, \"layer\": %s, \"rank\": %s, "
                                   "\"counts\": [1, 1]}\n",
                                   strcmp(k, "iteration") == 0 ? text : "0", layer,
                                   strcmp(k, "rank") == 0 ? text : "0");
        }
        return g_string_free(lines, FALSE);
    }
    if (strcmp(in, "nccl-tests logs") == 0) {
        /* nThread x nGpus must divide the ranks: a run of that many ranks (at least one), the
         * one rank of the other fields' runs is @RANK. */
        gboolean threads = strcmp(r->key, "nThread") == 0, gpus = strcmp(r->key, "nGpus") == 0;
        guint64 n = threads || gpus ? MAX(g_ascii_strtoull(text, NULL, 10), 1) : 1;
        GString *ranks = g_string_new(NULL);
        for (guint64 i = 0; i < n; i++) {
            g_autofree char *num = n > 1 ? g_strdup_printf("%" G_GUINT64_FORMAT, i) : NULL;
            g_string_append_printf(ranks,
                                   "#  Rank  %s Group  0 Pid 1 on host-a device  0 [0x07] NVIDIA "
                                   "A100-SXM4-80GB\n",
                                   num ? num : "@RANK");
        }
        g_autofree char *with_ranks = replace(nccl_log, "@RANKS", ranks->str);
        g_string_free(ranks, TRUE);
        g_autofree char *with_threads = replace(with_ranks, "@THREADS", threads ? text : "1");
        g_autofree char *g = replace(with_threads, "@GPUS", gpus ? text : "1");
        g_autofree char *a = replace(g, "@RANK", strcmp(r->key, "Rank") == 0 ? text : "0");
        g_autofree char *b = replace(a, "@SIZE", strcmp(r->key, "size") == 0 ? text : "8192");
        return replace(b, "@TIME", strcmp(r->key, "time") == 0 ? text : "30.12");
    }
    return NULL;
}

static gboolean
load(const MsRangeTable *t, const char *input, GError **error)
{
    const char *in = t->input;
    return strcmp(in, "Topology files") == 0                  ? load_topology(input, error)
           : strcmp(in, "Model files") == 0                   ? load_model(input, error)
           : strcmp(in, "Calibration files") == 0             ? load_calibration(input, error)
           : strcmp(in, "Trace headers") == 0                 ? load_trace(input, error)
           : strcmp(in, "Flow lists") == 0                    ? load_flows(input, error)
           : strcmp(in, "Framework logs (trace import)") == 0 ? load_framework_log(input, error)
                                                              : load_nccl(input, error);
}

/* A measurement row with one field set to v, through the API every reader's rows go through. */
static gboolean
add_row(const MsRange *r, double v, GError **error)
{
    MsMeasurement row = {.kind = MS_MEASUREMENT_GEMM,
                         .ranks = 1,
                         .ranks_per_node = 1,
                         .m = 64,
                         .n = 64,
                         .k = 64,
                         .dtype = "bf16",
                         .label = "",
                         .seconds = 1e-3,
                         .min_s = NAN,
                         .median_s = NAN,
                         .mean_s = NAN,
                         .source = "rows.csv",
                         .line = 2};
    const char *k = r->key;
    if (v == 0 && strlen(k) == 1) {
        /* Only a GEMM needs every dimension; an elementwise row may leave one at 0. */
        row.kind = MS_MEASUREMENT_ELEMENTWISE;
        row.bytes = 1024;
    }
    /* NCCL's settings and the background allreduce belong to an all-to-all (one under an
     * allreduce where there is a background). */
    if (strcmp(k, "background_bytes") == 0 || strcmp(k, "channels") == 0 || strcmp(k, "qps") == 0) {
        row.kind = strcmp(k, "background_bytes") == 0 && v > 0
                       ? MS_MEASUREMENT_ALLTOALL_UNDER_ALLREDUCE
                       : MS_MEASUREMENT_ALLTOALL;
        row.m = row.n = row.k = 0;
        row.dtype = NULL;
        row.ranks = row.ranks_per_node = 8;
        row.bytes = 1 << 20;
    }
    if (strcmp(k, "ranks") == 0 || strcmp(k, "ranks_per_node") == 0 || strcmp(k, "bytes") == 0) {
        row.kind = MS_MEASUREMENT_ALLREDUCE;
        row.m = row.n = row.k = 0;
        row.ranks = row.ranks_per_node = 1u << 20;
    }
    double *times[] = {&row.seconds, &row.min_s, &row.median_s, &row.mean_s};
    const char *time_keys[] = {"time", "min", "median", "mean"};
    for (guint i = 0; i < 4; i++) {
        if (strcmp(k, time_keys[i]) == 0) {
            *times[i] = v;
        }
    }
    /* Values past a count's bound still fit the row's fields (2^20 + 1, 2^32 + 1, 2^50 + 1). */
    guint64 u = v < 0 ? G_MAXUINT64 : (guint64)v;
    if (strcmp(k, "ranks") == 0) {
        row.ranks = v < 1 ? 0 : (guint32)u;
        row.ranks_per_node = MAX(MIN(row.ranks, 1), 1);
    } else if (strcmp(k, "ranks_per_node") == 0) {
        row.ranks_per_node = v < 1 ? 0 : (guint32)u;
    } else if (strcmp(k, "bytes") == 0) {
        row.bytes = u;
    } else if (strcmp(k, "m") == 0) {
        row.m = u;
    } else if (strcmp(k, "n") == 0) {
        row.n = u;
    } else if (strcmp(k, "k") == 0) {
        row.k = u;
    } else if (strcmp(k, "background_bytes") == 0) {
        row.background_bytes = u;
    } else if (strcmp(k, "channels") == 0) {
        row.channels = (guint32)u;
    } else if (strcmp(k, "qps") == 0) {
        row.qps = (guint32)u;
    }
    g_autoptr(MsMeasurementSet) set = ms_measurement_set_new();
    return ms_measurement_set_add(set, &row, error);
}

/* A benchmark option set to text on the default spec, then the spec checked whole; the loop's
 * calls through the check the concurrency benchmark makes. */
static gboolean
set_bench(const MsRange *r, double v, const char *text, GError **error)
{
    if (strcmp(r->key, "allreduce calls") == 0) {
        return ms_bench_loop_check(v, "the all-to-all of 1048576 B", 25u << 20, error);
    }
    g_autoptr(MsBenchSpec) spec = ms_bench_spec_new();
    /* A sweep's bounds at the other's extreme, so that each alone decides. */
    if (strcmp(r->key, "--minbytes") == 0) {
        spec->max_bytes = MS_BENCH_MAX_BYTES;
    } else if (strcmp(r->key, "--maxbytes") == 0) {
        spec->min_bytes = 1;
    }
    return ms_bench_option_set(spec, r->key, text, error) && ms_bench_spec_check(spec, error);
}

static gboolean
integral(MsRangeUnit unit)
{
    /* A boolean's and a choice's values are 0, 1 ... their last index. */
    return unit == MS_RANGE_COUNT || unit == MS_RANGE_BYTES || unit == MS_RANGE_BOOLEAN ||
           unit == MS_RANGE_CHOICE;
}

/* The nearest value past a bound: the next integer, or the next double (in seconds, bytes/s and
 * FLOP/s, which the parsers take without rounding). Below a bound of 0 a negative value. */
static double
past(const MsRange *r, gboolean above)
{
    double b = above ? r->max : r->min;
    if (integral(r->unit)) {
        return above ? b + 1 : b - 1;
    }
    if (!above && b == 0) {
        return -1e-300;
    }
    return nextafter(b, above ? INFINITY : -INFINITY);
}

static void
expect(const MsRangeTable *t, const MsRange *r, double v, gboolean accepted, guint *walked)
{
    g_autofree char *text = ms_range_text(r, v);
    GError *error = NULL;
    gboolean ok;
    if (strcmp(t->input, "Measurements") == 0) {
        ok = add_row(r, v, &error);
    } else if (t == ms_bench_ranges()) {
        ok = set_bench(r, v, text, &error);
    } else {
        Pos pos = v >= r->max ? POS_UPPER : v <= r->min ? POS_LOWER : POS_MIDDLE;
        g_autofree char *input = input_for(t, r, text, pos);
        CU_ASSERT_PTR_NOT_NULL_FATAL(input);
        ok = load(t, input, &error);
    }
    (*walked)++;
    if (g_getenv("WALK_TIME")) {
        fprintf(stderr, "%s %s = %s\n", t->input, r->key, text);
    }
    gboolean named =
        error && strstr(error->message, r->key) &&
        (strstr(error->message, "out of range") || strstr(error->message, "outside") ||
         strstr(error->message, "is not a boolean") || strstr(error->message, "is not one of"));
    if (ok != accepted || (!accepted && !named)) {
        fprintf(stderr, "\n  %s %s %s = %s: %s (%s)\n", t->input, r->where, r->key, text,
                ok ? "accepted" : "refused", error ? error->message : "no error");
        CU_FAIL("a bound of the table is not the bound the parser checks");
    }
    g_clear_error(&error);
}

static void
test_walk_tables(void)
{
    guint walked = 0, fields = 0;
    for (const MsRangeTable *const *t = range_tables(); *t; t++) {
        for (const MsRange *r = (*t)->fields; r->key; r++) {
            fields++;
            expect(*t, r, r->min, TRUE, &walked);
            expect(*t, r, r->max, TRUE, &walked);
            /* A count from 0 has nothing below it: "-1" is no count at all. */
            if (!(r->unit == MS_RANGE_COUNT && r->min == 0)) {
                expect(*t, r, past(r, FALSE), FALSE, &walked);
            }
            expect(*t, r, past(r, TRUE), FALSE, &walked);
            if (r->unit == MS_RANGE_CHOICE) {
                /* Every spelling is accepted, and max is the last one. */
                CU_ASSERT_TRUE(r->names[(gsize)r->max] && !r->names[(gsize)r->max + 1]);
                for (double v = r->min + 1; v < r->max; v++) {
                    expect(*t, r, v, TRUE, &walked);
                }
            }
        }
    }
    CU_ASSERT_TRUE(fields > 60);
    CU_ASSERT_TRUE(walked >= 3 * fields);
}

/* The policies' parameters, whose ranges sit in their own specs. */
static void
test_walk_policies(void)
{
    const char *const *names = ms_policy_names();
    for (guint i = 0; names[i]; i++) {
        const MsParamSpec *specs[2] = {ms_policy_common_params(),
                                       ms_policy_class(names[i])->params};
        for (guint s = 0; s < 2; s++) {
            for (const MsParamSpec *ps = specs[s]; ps && ps->key; ps++) {
                MsRange r;
                if (!range_of_param(ps, &r)) {
                    continue;
                }
                /* Times are read to the picosecond: the next one is 1 ps on. */
                double step = r.unit == MS_RANGE_TIME ? 1e-12 : 0;
                double values[4] = {r.min, r.max, step ? r.max + step : past(&r, TRUE),
                                    past(&r, FALSE)};
                guint n = r.min == 0 ? 3 : 4;
                for (guint k = 0; k < n; k++) {
                    g_autofree char *text = ms_range_text(&r, values[k]);
                    g_autofree char *spec = g_strdup_printf("%s:%s=%s", names[i], ps->key, text);
                    GError *error = NULL;
                    g_autoptr(MsPolicy) p = ms_policy_parse(spec, &error);
                    gboolean want = k < 2;
                    if ((p != NULL) != want ||
                        (!want && strstr(error->message, "out of range") == NULL)) {
                        fprintf(stderr, "\n  %s: %s\n", spec, error ? error->message : "accepted");
                        CU_FAIL("a policy parameter's bound is not the one documented");
                    }
                    g_clear_error(&error);
                }
            }
        }
    }
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"every bound of every table, both sides", test_walk_tables},
        {"every numeric policy parameter's bounds", test_walk_policies},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"input_ranges", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
