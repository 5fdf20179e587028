/* cmd_trace: `moesim trace gen|info|import`: make synthetic traces, describe a trace's expert load
 * and path statistics, and convert other tools' dumps into moe-trace files. All the work is in
 * traces/; this file parses options and prints. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sim/base/json_output.h"
#include "commands.h"
#include "sim/base/units.h"
#include "traces/trace_gen.h"
#include "traces/trace_import.h"
#include "traces/trace_reader.h"
#include "traces/trace_stats.h"
#include "traces/trace_writer.h"

/* ---- gen ---- */

typedef struct {
    const char *key;  /* generator spec key */
    const char *name; /* option name */
    const char *help;
} GenOption;

static const GenOption gen_options[] = {
    {"ranks", "ranks", "GPUs (source ranks)"},
    {"experts", "experts", "experts per MoE layer"},
    {"layers", "layers", "MoE layers"},
    {"top_k", "top-k", "experts each token picks per layer"},
    {"tokens", "tokens", "tokens per rank and iteration"},
    {"iterations", "iterations", "iterations (steps or batches)"},
    {"zipf", "zipf", "Zipf exponent of expert popularity"},
    {"hot", "hot", "target share of the hottest expert (instead of --zipf)"},
    {"corr", "corr", "probability a token follows its previous expert's group"},
    {"drift", "drift", "per-iteration probability a popularity rank swaps"},
    {"seed", "seed", "PRNG seed"},
    {"expert_nodes", "expert-nodes", "nodes the experts sit on, in contiguous blocks"},
    {"max_nodes", "max-nodes", "nodes a token's experts may span (node-limited routing)"},
};

/* SPEC from the positional argument and the options, in that order. */
static char *
gen_spec(int argc, char **argv, char **values, gboolean counts)
{
    const char *given = argc > 1 ? argv[1] : "";
    GString *spec = g_string_new(g_str_has_prefix(given, "gen:") ? given + 4 : given);
    for (guint i = 0; i < G_N_ELEMENTS(gen_options); i++) {
        if (values[i]) {
            g_string_append_printf(spec, "%s%s=%s", spec->len ? "," : "", gen_options[i].key,
                                   values[i]);
        }
    }
    if (counts) {
        g_string_append_printf(spec, "%srecords=counts", spec->len ? "," : "");
    }
    return g_string_free(spec, FALSE);
}

static gboolean
gen_write(const MsTraceGenParams *params, const char *out, gboolean binary, GError **error)
{
    g_autoptr(MsTraceGen) gen = ms_trace_gen_new(params, error);
    if (gen == NULL) {
        return FALSE;
    }
    g_autoptr(MsTraceWriter) w =
        ms_trace_writer_new(out, binary ? MS_TRACE_FORMAT_BINARY : MS_TRACE_FORMAT_TEXT,
                            ms_trace_gen_header(gen), error);
    if (w == NULL) {
        return FALSE;
    }
    MsRouting *r = NULL;
    while (ms_trace_gen_next(gen, &r, error)) {
        gboolean ok = ms_trace_writer_write_routing(w, r, error);
        ms_routing_free(r);
        if (!ok) {
            return FALSE;
        }
    }
    if ((error && *error) || !ms_trace_writer_close(w, error)) {
        return FALSE;
    }
    if (strcmp(out, "-") != 0) {
        printf("wrote %s: %u iterations, %" G_GUINT64_FORMAT " records, %" G_GUINT64_FORMAT
               " bytes (expected hottest-expert share %.4f)\n",
               out, params->iterations, ms_trace_writer_records(w), ms_trace_writer_bytes(w),
               ms_trace_gen_expected_hot_share(gen));
    }
    return TRUE;
}

static int
trace_gen(int argc, char **argv)
{
    char *values[G_N_ELEMENTS(gen_options)] = {NULL};
    GOptionEntry entries[G_N_ELEMENTS(gen_options) + 4];
    memset(entries, 0, sizeof(entries));
    for (guint i = 0; i < G_N_ELEMENTS(gen_options); i++) {
        entries[i] = (GOptionEntry){gen_options[i].name, 0,      0, G_OPTION_ARG_STRING, &values[i],
                                    gen_options[i].help, "VALUE"};
    }
    g_autofree char *out = NULL;
    gboolean binary = FALSE, counts = FALSE;
    guint n = G_N_ELEMENTS(gen_options);
    entries[n++] = (GOptionEntry){
        "out", 'o', 0, G_OPTION_ARG_FILENAME, &out, "write the trace to FILE ('-' = stdout)",
        "FILE"};
    entries[n++] = (GOptionEntry){
        "binary", 0, 0, G_OPTION_ARG_NONE, &binary, "binary form (default: text)", NULL};
    entries[n++] =
        (GOptionEntry){"counts", 0,
                       0,        G_OPTION_ARG_NONE,
                       &counts,  "count records only (default: token records with paths)",
                       NULL};
    gboolean parsed = ms_cli_parse(
        &argc, &argv, entries, "[SPEC]", "Generate a synthetic expert-selection trace.",
        "SPEC is KEY=VALUE,... with the keys ranks experts layers top_k tokens iterations zipf\n"
        "hot corr drift seed records expert_nodes max_nodes (the same string works as\n"
        "--trace gen:SPEC elsewhere); options add keys to it. The model is documented in\n"
        "docs/trace-format.md.");
    int rc = MS_EXIT_OK;
    if (!parsed) {
        rc = MS_EXIT_USAGE;
    } else if (argc > 2) {
        rc = ms_cli_usage("trace gen takes at most one SPEC argument");
    } else if (out == NULL) {
        rc = ms_cli_usage("trace gen needs --out FILE");
    } else {
        g_autofree char *spec = gen_spec(argc, argv, values, counts);
        g_autoptr(GError) error = NULL;
        MsTraceGenParams params;
        if (!ms_trace_gen_params_parse(spec, &params, &error) ||
            !gen_write(&params, out, binary, &error)) {
            rc = ms_cli_fail(error);
        }
    }
    for (guint i = 0; i < G_N_ELEMENTS(gen_options); i++) {
        g_free(values[i]);
    }
    return rc;
}

/* ---- info ---- */

static void
print_row(const char *label, const MsTraceLayerStats *s)
{
    printf("%6s %9.4f %8.4f %8.3f %8.3f %6.3f %8.3f %9.3f", label, s->hot_share, s->hot_share_max,
           s->max_mean, s->max_min, s->gini, s->entropy_bits, s->entropy_norm);
    if (s->has_paths) {
        printf(" %9.4f %9.4f %9.4f\n", s->path_consistency, s->path_top2, s->path_baseline);
    } else {
        printf(" %9s %9s %9s\n", "-", "-", "-");
    }
}

/* How many nodes a token's experts reach at each layer, and the distribution over all. */
static void
print_nodes(const MsTraceHeader *h, const MsTraceStats *stats)
{
    guint32 nodes = ms_trace_stats_expert_nodes(stats);
    printf("\nnodes reached by a token's top_k experts (experts on %u nodes, %u each", nodes,
           h->experts / nodes);
    if (h->max_nodes) {
        printf(", max_nodes %u declared", h->max_nodes);
    }
    printf(")\n%6s %9s %9s\n", "layer", "mean", "max");
    for (guint32 l = 0; l <= h->layers; l++) {
        MsTraceLayerStats s;
        char label[16];
        if (l < h->layers) {
            ms_trace_stats_layer(stats, l, &s);
            g_snprintf(label, sizeof(label), "%u", l);
        } else {
            ms_trace_stats_summary(stats, &s);
            g_strlcpy(label, "all", sizeof(label));
        }
        printf("%6s %9.4f %9u\n", label, s.nodes_mean, s.nodes_max);
    }
    guint n = 0;
    const guint64 *hist = ms_trace_stats_nodes_histogram(stats, &n);
    guint64 total = 0;
    for (guint i = 0; i < n; i++) {
        total += hist[i];
    }
    printf("tokens x layers reaching 1, 2, ... nodes:");
    for (guint i = 1; i < n; i++) {
        printf(" %.4f", total ? (double)hist[i] / (double)total : 0.0);
    }
    printf("\n");
}

static void
print_info(MsTraceReader *reader, const MsTraceStats *stats)
{
    const MsTraceHeader *h = ms_trace_reader_header(reader);
    printf("trace       %s (%s)\n", ms_trace_reader_source(reader),
           ms_trace_format_name(ms_trace_reader_format(reader)));
    printf("shape       %u experts, %u MoE layers, %u ranks, top_k %u", h->experts, h->layers,
           h->ranks, h->top_k);
    if (h->tokens_per_rank) {
        printf(", %u tokens per rank", h->tokens_per_rank);
    }
    printf("\n");
    if (h->n_groups > 1) {
        printf("groups     ");
        for (guint32 g = 0; g < h->n_groups; g++) {
            printf(" %u", h->group_first[g]);
        }
        printf(" (first MoE layer of each layer group)\n");
    }
    if (h->generator[0]) {
        printf("generator   %s\n", h->generator);
    }
    printf("iterations  %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT
           " with token paths), %" G_GUINT64_FORMAT " tokens",
           ms_trace_stats_iterations(stats), ms_trace_stats_path_iterations(stats),
           ms_trace_stats_tokens(stats));
    if (h->n_groups > 1) {
        printf(" in the first layer group; per group:");
        for (guint32 g = 0; g < h->n_groups; g++) {
            printf(" %" G_GUINT64_FORMAT, ms_trace_stats_group_tokens(stats, g));
        }
    }
    printf("\n\n");
    printf("%6s %9s %8s %8s %8s %6s %8s %9s %9s %9s %9s\n", "layer", "hot_share", "hot_max",
           "max/mean", "max/min", "gini", "entropy", "entropy_n", "path_cons", "path_2k",
           "path_base");
    for (guint32 l = 0; l < h->layers; l++) {
        MsTraceLayerStats s;
        ms_trace_stats_layer(stats, l, &s);
        char label[16];
        g_snprintf(label, sizeof(label), "%u", l);
        print_row(label, &s);
    }
    MsTraceLayerStats all;
    ms_trace_stats_summary(stats, &all);
    print_row("all", &all);
    printf(
        "\nhot_share: hottest expert's share of a layer's token-expert assignments (mean over\n"
        "iterations); max/min: most over least loaded expert; entropy in bits; path_cons: share\n"
        "of the next-layer choices of the tokens that chose an expert falling on that group's\n"
        "top_k next experts; path_2k: on its 2 x top_k; path_base: path_cons for independent\n"
        "choices.\n");
    if (all.has_nodes) {
        print_nodes(h, stats);
    }
}

static JsonNode *
layer_json(const MsTraceLayerStats *s, gint layer)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    if (layer >= 0) {
        json_builder_set_member_name(b, "layer");
        json_builder_add_int_value(b, layer);
    }
    const struct {
        const char *name;
        double value;
    } fields[] = {
        {"hot_share", s->hot_share},       {"hot_share_max", s->hot_share_max},
        {"max_mean", s->max_mean},         {"gini", s->gini},
        {"entropy_bits", s->entropy_bits}, {"entropy_norm", s->entropy_norm},
    };
    for (guint i = 0; i < G_N_ELEMENTS(fields); i++) {
        json_builder_set_member_name(b, fields[i].name);
        json_builder_add_double_value(b, fields[i].value);
    }
    json_builder_set_member_name(b, "path_consistency");
    s->has_paths ? json_builder_add_double_value(b, s->path_consistency)
                 : json_builder_add_null_value(b);
    json_builder_set_member_name(b, "max_min");
    isfinite(s->max_min) ? json_builder_add_double_value(b, s->max_min)
                         : json_builder_add_null_value(b);
    json_builder_set_member_name(b, "path_top2");
    s->has_paths ? json_builder_add_double_value(b, s->path_top2) : json_builder_add_null_value(b);
    json_builder_set_member_name(b, "path_baseline");
    s->has_paths ? json_builder_add_double_value(b, s->path_baseline)
                 : json_builder_add_null_value(b);
    if (s->has_nodes) {
        json_builder_set_member_name(b, "nodes_mean");
        json_builder_add_double_value(b, s->nodes_mean);
        json_builder_set_member_name(b, "nodes_max");
        json_builder_add_int_value(b, s->nodes_max);
    }
    json_builder_end_object(b);
    return json_builder_get_root(b);
}

static JsonNode *
header_json(const MsTraceHeader *h)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    const struct {
        const char *name;
        guint32 value;
    } fields[] = {{"experts", h->experts},
                  {"layers", h->layers},
                  {"ranks", h->ranks},
                  {"top_k", h->top_k},
                  {"tokens_per_rank", h->tokens_per_rank},
                  {"expert_nodes", h->expert_nodes},
                  {"max_nodes", h->max_nodes}};
    for (guint i = 0; i < G_N_ELEMENTS(fields); i++) {
        json_builder_set_member_name(b, fields[i].name);
        json_builder_add_int_value(b, fields[i].value);
    }
    /* Layer groups: the first MoE layer of each ([0] without groups). */
    json_builder_set_member_name(b, "groups");
    json_builder_begin_array(b);
    for (guint32 g = 0; g < ms_trace_header_n_groups(h); g++) {
        json_builder_add_int_value(b, h->group_first[g]);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "generator");
    json_builder_add_string_value(b, h->generator);
    json_builder_end_object(b);
    return json_builder_get_root(b);
}

static JsonNode *
info_json(MsTraceReader *reader, const MsTraceStats *stats)
{
    const MsTraceHeader *h = ms_trace_reader_header(reader);
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    ms_json_member_string(b, "schema", "moesim.trace-info/1"); /* docs/outputs.md */
    json_builder_set_member_name(b, "source");
    json_builder_add_string_value(b, ms_trace_reader_source(reader));
    json_builder_set_member_name(b, "format");
    json_builder_add_string_value(b, ms_trace_format_name(ms_trace_reader_format(reader)));
    json_builder_set_member_name(b, "header");
    json_builder_add_value(b, header_json(h));
    json_builder_set_member_name(b, "iterations");
    json_builder_add_int_value(b, (gint64)ms_trace_stats_iterations(stats));
    json_builder_set_member_name(b, "path_iterations");
    json_builder_add_int_value(b, (gint64)ms_trace_stats_path_iterations(stats));
    json_builder_set_member_name(b, "tokens");
    json_builder_add_int_value(b, (gint64)ms_trace_stats_tokens(stats));
    json_builder_set_member_name(b, "group_tokens");
    json_builder_begin_array(b);
    for (guint32 g = 0; g < ms_trace_header_n_groups(h); g++) {
        json_builder_add_int_value(b, (gint64)ms_trace_stats_group_tokens(stats, g));
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "layers");
    json_builder_begin_array(b);
    for (guint32 l = 0; l < h->layers; l++) {
        MsTraceLayerStats s;
        ms_trace_stats_layer(stats, l, &s);
        json_builder_add_value(b, layer_json(&s, (gint)l));
    }
    json_builder_end_array(b);
    MsTraceLayerStats all;
    ms_trace_stats_summary(stats, &all);
    json_builder_set_member_name(b, "summary");
    json_builder_add_value(b, layer_json(&all, -1));
    guint n = 0;
    const guint64 *hist = ms_trace_stats_nodes_histogram(stats, &n);
    if (all.has_nodes) {
        json_builder_set_member_name(b, "nodes_reached");
        json_builder_begin_array(b);
        for (guint i = 0; i < n; i++) {
            json_builder_add_int_value(b, (gint64)hist[i]);
        }
        json_builder_end_array(b);
    }
    json_builder_end_object(b);
    return json_builder_get_root(b);
}

static gboolean
info_run(const char *source, const char *json, gint64 expert_nodes, GError **error)
{
    g_autoptr(MsTraceReader) reader = ms_trace_reader_open(source, error);
    if (reader == NULL) {
        return FALSE;
    }
    g_autoptr(MsTraceStats) stats = ms_trace_stats_new(ms_trace_reader_header(reader));
    if (expert_nodes >= 0 &&
        !ms_trace_stats_set_expert_nodes(stats, (guint32)MIN(expert_nodes, G_MAXUINT32), error)) {
        g_prefix_error(error, "--expert-nodes: ");
        return FALSE;
    }
    MsRouting *r = NULL;
    while (ms_trace_reader_next_iteration(reader, &r, error)) {
        ms_trace_stats_add(stats, r);
        ms_routing_free(r);
    }
    if (error && *error) {
        return FALSE;
    }
    if (json == NULL || strcmp(json, "-") != 0) {
        print_info(reader, stats);
    }
    if (json) {
        g_autoptr(JsonNode) node = info_json(reader, stats);
        return ms_cli_write_json(json, node, error);
    }
    return TRUE;
}

static int
trace_info(int argc, char **argv)
{
    g_autofree char *json = NULL;
    gint64 expert_nodes = -1;
    GOptionEntry entries[] = {
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &json,
         "also write the figures as JSON ('-' = "
         "stdout, instead of the table)",
         "FILE"},
        {"expert-nodes", 0, 0, G_OPTION_ARG_INT64, &expert_nodes,
         "count the nodes each token reaches with the experts on N nodes in contiguous blocks "
         "(default: the trace's declared layout, if any)",
         "N"},
        {NULL},
    };
    if (!ms_cli_parse(&argc, &argv, entries, "FILE|sample:NAME|gen:SPEC",
                      "Expert load and token-path statistics of a trace, per MoE layer.", NULL)) {
        return MS_EXIT_USAGE;
    }
    if (argc != 2) {
        return ms_cli_usage("trace info takes one trace (a file, sample:NAME or gen:SPEC)");
    }
    g_autoptr(GError) error = NULL;
    if (!info_run(argv[1], json, expert_nodes, &error)) {
        return ms_cli_fail(error);
    }
    return MS_EXIT_OK;
}

/* ---- import ---- */

static gboolean
parse_count_option(const char *name, const char *value, guint64 max, guint32 *out, GError **error)
{
    guint64 v = 0;
    if (value == NULL) {
        return TRUE;
    }
    if (!ms_parse_uint(value, 1, max, &v, error)) {
        g_prefix_error(error, "--%s: ", name);
        return FALSE;
    }
    *out = (guint32)v;
    return TRUE;
}

typedef struct {
    char *from, *out;
    char *counts[4];
    char **fields;
    char *groups;
    gboolean binary;
} ImportOpts;

/* --groups 0,6: the first MoE layer of each layer group (the header's checks follow). */
static gboolean
parse_groups(const char *value, MsTraceImportOptions *opt, GError **error)
{
    if (value == NULL) {
        return TRUE;
    }
    g_auto(GStrv) items = g_strsplit(value, ",", -1);
    guint n = g_strv_length(items);
    if (n == 0 || n > MS_TRACE_MAX_GROUPS) {
        g_set_error(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_MISSING,
                    "--groups '%s': give the first MoE layer of each of 1 to %u layer groups, "
                    "comma-separated (0,6)",
                    value, MS_TRACE_MAX_GROUPS);
        return FALSE;
    }
    for (guint i = 0; i < n; i++) {
        guint64 v = 0;
        if (!ms_parse_uint(g_strstrip(items[i]), 0, MS_TRACE_MAX_LAYERS - 1, &v, error)) {
            g_prefix_error(error, "--groups '%s': item %u: ", value, i + 1);
            return FALSE;
        }
        opt->group_first[i] = (guint32)v;
    }
    opt->n_groups = n;
    return TRUE;
}

static gboolean
import_run(const char *input, const ImportOpts *o, GError **error)
{
    MsTraceImportFormat format;
    if (!ms_trace_import_format_from_name(o->from, &format)) {
        g_set_error(error, MS_TRACE_IMPORT_ERROR, MS_TRACE_IMPORT_ERROR_MISSING,
                    "--from %s: expected one of %s", o->from, ms_trace_import_format_names());
        return FALSE;
    }
    MsTraceImportOptions opt = {.fields = (const char *const *)o->fields};
    if (!parse_count_option("experts", o->counts[0], MS_TRACE_MAX_EXPERTS, &opt.experts, error) ||
        !parse_count_option("layers", o->counts[1], MS_TRACE_MAX_LAYERS, &opt.layers, error) ||
        !parse_count_option("ranks", o->counts[2], MS_TRACE_MAX_RANKS, &opt.ranks, error) ||
        !parse_count_option("top-k", o->counts[3], MS_TRACE_MAX_TOP_K, &opt.top_k, error) ||
        !parse_groups(o->groups, &opt, error)) {
        return FALSE;
    }
    MsTraceImportResult res = {0};
    if (!ms_trace_import_run(input, format, &opt, o->out,
                             o->binary ? MS_TRACE_FORMAT_BINARY : MS_TRACE_FORMAT_TEXT, &res,
                             error)) {
        return FALSE;
    }
    /* Columns the format does not read are named once, so that a misspelt one is seen. */
    if (res.ignored) {
        fprintf(stderr, "moesim: notice: %s: not read by --from %s: %s\n", input, o->from,
                res.ignored);
    }
    const MsTraceHeader *h = &res.header;
    if (strcmp(o->out, "-") != 0) {
        printf("wrote %s: %u experts, %u MoE layers, %u ranks, top_k %u\n", o->out, h->experts,
               h->layers, h->ranks, h->top_k);
    }
    ms_trace_import_result_clear(&res);
    return TRUE;
}

static int
trace_import(int argc, char **argv)
{
    ImportOpts o = {0};
    GOptionEntry entries[] = {
        {"from", 0, 0, G_OPTION_ARG_STRING, &o.from,
         "input format: csv, jsonl, counts-csv, counts-list, deepspeed, megatron or hf", "FORMAT"},
        {"out", 'o', 0, G_OPTION_ARG_FILENAME, &o.out, "output trace ('-' = stdout)", "FILE"},
        {"binary", 0, 0, G_OPTION_ARG_NONE, &o.binary, "binary form (default: text)", NULL},
        {"experts", 0, 0, G_OPTION_ARG_STRING, &o.counts[0],
         "experts (default: largest id + 1, or the lists' length)", "N"},
        {"layers", 0, 0, G_OPTION_ARG_STRING, &o.counts[1], "MoE layers (default: largest + 1)",
         "N"},
        {"ranks", 0, 0, G_OPTION_ARG_STRING, &o.counts[2], "ranks (default: largest + 1, or 1)",
         "N"},
        {"top-k", 0, 0, G_OPTION_ARG_STRING, &o.counts[3],
         "experts per token and layer (default: ids per token; required for counts and logits)",
         "K"},
        {"groups", 0, 0, G_OPTION_ARG_STRING, &o.groups,
         "layer groups: the first MoE layer of each (an encoder's and a decoder's: 0,6), whose "
         "layers route the same tokens (docs/models.md)",
         "L0,L1..."},
        {"field", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o.fields,
         "list formats: read field KEY (iteration, layer, rank or the format's list) from column "
         "NAME (repeatable)",
         "KEY=NAME"},
        {NULL},
    };
    gboolean parsed = ms_cli_parse(&argc, &argv, entries, "INPUT",
                                   "Convert routing dumps (per-token CSV/JSONL, per-rank counts, "
                                   "framework logs) into a moe-trace.",
                                   "Input formats and a recipe per framework are in "
                                   "docs/trace-format.md.");
    int rc = MS_EXIT_OK;
    g_autoptr(GError) error = NULL;
    if (!parsed) {
        rc = MS_EXIT_USAGE;
    } else if (argc != 2 || o.from == NULL || o.out == NULL) {
        rc = ms_cli_usage("trace import needs --from FORMAT, --out FILE and one INPUT");
    } else if (!import_run(argv[1], &o, &error)) {
        rc = ms_cli_fail(error);
    }
    for (guint i = 0; i < G_N_ELEMENTS(o.counts); i++) {
        g_free(o.counts[i]);
    }
    g_free(o.from);
    g_free(o.out);
    g_strfreev(o.fields);
    g_free(o.groups);
    return rc;
}

/* ---- dispatch ---- */

static const MsCommand subcommands[] = {
    {"gen", "generate a synthetic trace", trace_gen},
    {"info", "expert load and path statistics of a trace", trace_info},
    {"import", "convert CSV/JSONL dumps into a trace", trace_import},
    {NULL, NULL, NULL},
};

static void
trace_usage(FILE *out)
{
    fprintf(out, "Usage: moesim trace SUBCOMMAND [OPTIONS]\n\nSubcommands:\n");
    for (const MsCommand *c = subcommands; c->name; c++) {
        fprintf(out, "  %-8s %s\n", c->name, c->summary);
    }
    g_auto(GStrv) samples = ms_trace_sample_names();
    g_autofree char *list = g_strjoinv(", ", samples);
    fprintf(out,
            "\nA trace is a file (text or binary), sample:NAME (shipped: %s) or gen:SPEC.\n"
            "Run 'moesim trace SUBCOMMAND --help' for its options.\n",
            list);
}

int
ms_cmd_trace(int argc, char **argv)
{
    if (argc < 2) {
        trace_usage(stderr);
        return MS_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        trace_usage(stdout);
        return MS_EXIT_OK;
    }
    for (const MsCommand *c = subcommands; c->name; c++) {
        if (strcmp(c->name, argv[1]) == 0) {
            g_autofree char *prog = g_strdup_printf("moesim trace %s", c->name);
            argv[1] = prog;
            return c->run(argc - 1, argv + 1);
        }
    }
    fprintf(stderr, "moesim: unknown trace subcommand '%s'\n\n", argv[1]);
    trace_usage(stderr);
    return MS_EXIT_USAGE;
}
