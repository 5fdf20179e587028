/* Tests of layer groups: [group NAME] sections of a model file (each group's view of the model,
 * every bad section refused with FILE:LINE, the group, the key and the value), a trace's groups
 * header in both forms with the whole-token rule per group, the generator's groups, the check of
 * a trace's groups against the model's, and an encoder-decoder model's step time in closed form
 * on one GPU in inference and training, with its per-layer figures. */
#include "ms_test.h"
#include "sim/engine.h"
#include "sim/inputs.h"
#include "sim/out/layers.h"
#include "sim/out/result.h"
#include "sim/scenario.h"
#include "traces/trace_binary.h"
#include "traces/trace_gen.h"
#include "traces/trace_reader.h"
#include "traces/trace_routing.h"

/* A Switch-style encoder (layers 0-1: 1024 tokens, d_model 768, 12 heads) and a narrower
 * decoder (layers 2-3: 256 tokens, d_model 512, 8 heads), an MoE layer in every other one. */
#define HEAD                                                                                       \
    "[model]\nformat = 1\nname = ed\nlayers = 4\nmoe_every = 2\nmoe_first = 1\nd_model = 768\n"    \
    "d_ffn = 3072\nexperts = 4\ntop_k = 1\ndtype = fp32\nheads = 12\nseq_len = 512\n"              \
    "tokens_per_gpu = 1024\n"
static const char two_groups[] = HEAD "[group encoder]\nlayers = 0-1\n"
                                      "[group decoder]\nlayers = 2-3\ntokens_per_gpu = 256\n"
                                      "d_model = 512\nheads = 8\n";

/* One GPU of 100 TFLOPS in fp32 with memory fast enough that every op is compute-bound, and no
 * launch overhead: an op takes flops / (100 TFLOPS x 0.70), the nominal efficiency. */
static const char one_gpu[] = "[topology]\nformat = 1\nname = one\n[gpu]\nmodel = X\n"
                              "peak = 100TFLOPS\npeak_fp32 = 100TFLOPS\nhbm = 1000TBps\n"
                              "memory = 80GiB\nlaunch_overhead = 0us\n[preset]\nnodes = 1\n"
                              "gpus_per_node = 1\nintra = none\nnics = none\n";

static MsModel *
load(const char *text, GError **error)
{
    return ms_model_load_data(text, strlen(text), "ed.ini", error);
}

static void
test_views(void)
{
    GError *error = NULL;
    g_autoptr(MsModel) m = load(two_groups, &error);
    g_assert_no_error(error);
    CU_ASSERT_EQUAL_FATAL(ms_model_n_groups(m), 2);
    const MsModelGroup *enc = ms_model_group(m, 0), *dec = ms_model_group(m, 1);
    CU_ASSERT_STRING_EQUAL(enc->name, "encoder");
    CU_ASSERT_STRING_EQUAL(dec->name, "decoder");
    CU_ASSERT_TRUE(enc->first == 0 && enc->last == 1 && enc->first_moe == 0 && enc->n_moe == 1);
    CU_ASSERT_TRUE(dec->first == 2 && dec->last == 3 && dec->first_moe == 1 && dec->n_moe == 1);
    CU_ASSERT_EQUAL(ms_model_layer_group(m, 3), 1);
    const MsModelSpec *e = ms_model_spec(ms_model_layer(m, 1));
    const MsModelSpec *d = ms_model_spec(ms_model_moe(m, 1));
    CU_ASSERT_TRUE(e->d_model == 768 && e->tokens_per_gpu == 1024 && e->heads == 12);
    /* The decoder's own keys; kv_heads follows its heads; the rest is the model's. */
    CU_ASSERT_TRUE(d->d_model == 512 && d->tokens_per_gpu == 256 && d->tokens_per_gpu_infer == 256);
    CU_ASSERT_TRUE(d->heads == 8 && d->kv_heads == 8 && d->d_ffn == 3072 && d->experts == 4);
    /* Costs in the group's dimensions: attention 2 x 4 d^2 + 4 seq d per token. */
    MS_ASSERT_REL(ms_model_attention_flops(ms_model_layer(m, 2)), 8.0 * 512 * 512 + 4.0 * 512 * 512,
                  1e-12);
    MS_ASSERT_REL(ms_model_attention_flops(ms_model_layer(m, 0)), 8.0 * 768 * 768 + 4.0 * 512 * 768,
                  1e-12);
    CU_ASSERT_EQUAL(ms_model_token_bytes(ms_model_layer(m, 3)), 512 * 4);
    /* Sums over the layers: attention of all four, the dense FFNs of 0 and 2, the gates of 1, 3. */
    double dense = 2 * (4.0 * 768 * 768) + 2 * (4.0 * 512 * 512) + 2.0 * 768 * 3072 +
                   2.0 * 512 * 3072 + 768.0 * 4 + 512.0 * 4;
    MS_ASSERT_REL(ms_model_dense_params(m), dense, 1e-12);
    MS_ASSERT_REL(ms_model_layer_expert_params(m), 2.0 * 768 * 3072 + 2.0 * 512 * 3072, 1e-12);
    CU_ASSERT_EQUAL(ms_model_largest_expert_params(m), 2u * 768 * 3072);
    /* A model without groups is its own view. */
    g_autoptr(MsModel) plain = load(HEAD, &error);
    g_assert_no_error(error);
    CU_ASSERT_EQUAL(ms_model_n_groups(plain), 0);
    CU_ASSERT_PTR_EQUAL(ms_model_layer(plain, 2), plain);
    CU_ASSERT_EQUAL(ms_model_layer_group(plain, 2), -1);
    /* Flops the model overrides stay where a group keeps the dimensions they stand for. */
    g_autoptr(MsModel) over =
        load(HEAD "attention_flops = 1e6\n[group a]\nlayers = 0-1\n[group b]\nlayers = 2-3\n"
                  "d_model = 512\nheads = 8\n",
             &error);
    g_assert_no_error(error);
    MS_ASSERT_REL(ms_model_attention_flops(ms_model_layer(over, 0)), 1e6, 1e-12);
    MS_ASSERT_REL(ms_model_attention_flops(ms_model_layer(over, 3)), 12.0 * 512 * 512, 1e-12);
}

static void
test_bad_groups(void)
{
    static const struct {
        const char *groups, *needle;
    } cases[] = {
        {"[group a]\nlayers = 0-1\n[group b]\nlayers = 1-3\n",
         "ed.ini:18: [group b] layers: layers 1-3: overlap the group before"},
        {"[group a]\nlayers = 0\n[group b]\nlayers = 2-3\n",
         "ed.ini:18: [group b] layers: layers 2-3: leave a gap before"},
        {"[group a]\nlayers = 0-2\n", "ed.ini:16: [group a] layers: layers 0-2: layers 3-3 are in "
                                      "no group"},
        {"[group a]\nlayers = 0-4\n", "ed.ini:16: [group a] layers: '0-4' is not a range of "
                                      "layers FIRST-LAST (layers are numbered 0 to 3)"},
        {"[group a]\nlayers = 3-1\n", "'3-1' is not a range of layers"},
        {"[group a]\nlayers = x\n", "'x' is not a range of layers"},
        {"[group a]\nlayers = 0-3\nexperts = 8\n", "ed.ini:17: [group a] experts"},
        {"[group a]\nlayers = 0-3\nd_model = 0\n", "ed.ini:17: [group a] d_model"},
        {"[group a]\nlayers = 0-3\ntokens_per_gpu = 99999999999\n",
         "ed.ini:17: [group a] tokens_per_gpu"},
        {"[group a]\nlayers = 0-3\nd_model = 500\n",
         "ed.ini:17: [group a] d_model: 12 heads do not divide d_model 500"},
        {"[group a]\nlayers = 0-3\nheads = 8\nkv_heads = 3\n",
         "ed.ini:18: [group a] kv_heads: 3 kv_heads do not divide 8 heads"},
        {"[group a]\nd_model = 512\n", "[group a] layers"},
        {"[group a b]\nlayers = 0-3\n", "ed.ini:15: [group a b]: a group is named [group NAME]"},
        {"[layers]\nx = 1\n", "ed.ini:15: [layers]: unknown group"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *text = g_strconcat(HEAD, cases[i].groups, NULL);
        GError *error = NULL;
        g_autoptr(MsModel) m = load(text, &error);
        CU_ASSERT_PTR_NULL(m);
        CU_ASSERT_PTR_NOT_NULL_FATAL(error);
        if (strstr(error->message, cases[i].needle) == NULL) {
            fprintf(stderr, "\n  case %u: '%s' lacks '%s'\n", i, error->message, cases[i].needle);
            CU_FAIL("error message lacks expected text");
        }
        g_clear_error(&error);
    }
}

/* Iteration 0 of 2 ranks over 2 MoE layers in two groups: 8 tokens each at layer 0, 2 and 3 at
 * layer 1. */
static const char grouped_trace[] = "moe-trace 1\nexperts 4\nlayers 2\nranks 2\ntop_k 1\n"
                                    "groups 0 1\n"
                                    "c 0 0 0 0 5\nc 0 0 0 1 3\nc 0 0 1 2 8\n"
                                    "c 0 1 0 3 2\nc 0 1 1 0 1\nc 0 1 1 1 2\n";

static MsTraceReader *
open_text(const char *text, GError **error)
{
    g_autoptr(GBytes) b = g_bytes_new(text, strlen(text));
    return ms_trace_reader_open_bytes(b, "g.trace", error);
}

static void
test_trace(void)
{
    GError *error = NULL;
    g_autoptr(MsTraceReader) r = open_text(grouped_trace, &error);
    g_assert_no_error(error);
    const MsTraceHeader *h = ms_trace_reader_header(r);
    CU_ASSERT_TRUE(h->n_groups == 2 && h->group_first[1] == 1);
    CU_ASSERT_EQUAL(ms_trace_header_group(h, 0), 0);
    CU_ASSERT_EQUAL(ms_trace_header_group(h, 1), 1);
    g_autoptr(MsRouting) it = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_reader_next_iteration(r, &it, &error));
    CU_ASSERT_EQUAL(ms_routing_layer_tokens(it, 0, 0), 8);
    CU_ASSERT_EQUAL(ms_routing_layer_tokens(it, 1, 0), 2);
    CU_ASSERT_EQUAL(ms_routing_layer_tokens(it, 1, 1), 3);
    CU_ASSERT_EQUAL(ms_routing_rank_tokens(it, 1), 8);
    /* The binary form carries the groups (tag 0x04) and reads back the same header. */
    GString *bin = g_string_new(NULL);
    g_autoptr(MsTraceBinary) enc = ms_trace_binary_new(NULL, "g.bin");
    ms_trace_binary_encode_header(enc, bin, h);
    ms_trace_binary_encode_end(enc, bin);
    CU_ASSERT_PTR_NOT_NULL(memchr(bin->str, 0x04, bin->len));
    g_autoptr(GBytes) bytes = g_string_free_to_bytes(bin);
    g_autoptr(MsTraceReader) back = ms_trace_reader_open_bytes(bytes, "g.bin", &error);
    g_assert_no_error(error);
    CU_ASSERT_TRUE(ms_trace_header_equal(ms_trace_reader_header(back), h));
    /* Without the groups header the same counts break the whole-token rule. */
    g_autofree char *flat = g_strdup(grouped_trace);
    memcpy(strstr(flat, "groups 0 1"), "# roups 01", 10);
    g_autoptr(MsTraceReader) f = open_text(flat, &error);
    g_assert_no_error(error);
    g_autoptr(MsRouting) bad = NULL;
    CU_ASSERT_FALSE(ms_trace_reader_next_iteration(f, &bad, &error));
    MS_ASSERT_ERROR(error, MS_TRACE_ERROR, MS_TRACE_ERROR_INCONSISTENT,
                    "iteration 0 rank 0: 2 token-expert assignments at layer 1 but 8 at layer 0 "
                    "(every layer routes the same tokens)");
    static const struct {
        const char *line;
        gint code; /* GError codes are gint */
        const char *needle;
    } bad_headers[] = {
        {"groups 1\n", MS_TRACE_ERROR_HEADER, "groups: the first group starts at MoE layer 1"},
        {"groups 0 2\n", MS_TRACE_ERROR_HEADER, "group 1 starts at MoE layer 2"},
        {"groups 0 0\n", MS_TRACE_ERROR_HEADER, "group 1 starts at MoE layer 0"},
        {"groups 0 x\n", MS_TRACE_ERROR_SYNTAX, "groups is not a number: 'x'"},
        {"groups\n", MS_TRACE_ERROR_LIMIT, "groups needs the first MoE layer of each"},
        {"groups 0 1\ngroups 0 1\n", MS_TRACE_ERROR_HEADER, "header key 'groups' given twice"},
        {"groups 0 1\ntokens_per_rank 8\n", MS_TRACE_ERROR_HEADER,
         "tokens_per_rank 8 with 2 layer groups"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad_headers); i++) {
        g_autofree char *text = g_strconcat("moe-trace 1\nexperts 4\nlayers 2\nranks 2\ntop_k 1\n",
                                            bad_headers[i].line, "c 0 0 0 0 1\n", NULL);
        g_autoptr(MsTraceReader) b = open_text(text, &error);
        CU_ASSERT_PTR_NULL(b);
        MS_ASSERT_ERROR(error, MS_TRACE_ERROR, bad_headers[i].code, bad_headers[i].needle);
    }
}

static void
test_generator(void)
{
    GError *error = NULL;
    MsTraceGenParams p;
    CU_ASSERT_TRUE_FATAL(ms_trace_gen_params_parse(
        "ranks=2,experts=8,layers=3,top_k=2,groups=0/2,group_tokens=64/16", &p, &error));
    g_assert_no_error(error);
    g_autoptr(MsTraceGen) g = ms_trace_gen_new(&p, &error);
    g_assert_no_error(error);
    g_autoptr(MsRouting) r = NULL;
    CU_ASSERT_TRUE_FATAL(ms_trace_gen_next(g, &r, &error));
    for (guint rank = 0; rank < 2; rank++) {
        CU_ASSERT_EQUAL(ms_routing_layer_tokens(r, 0, rank), 64);
        CU_ASSERT_EQUAL(ms_routing_layer_tokens(r, 1, rank), 64);
        CU_ASSERT_EQUAL(ms_routing_layer_tokens(r, 2, rank), 16);
    }
    /* Groups of different token counts are count records. */
    CU_ASSERT_FALSE(ms_routing_has_paths(r));
    g_autofree char *spec = ms_trace_gen_params_to_spec(&p);
    CU_ASSERT_PTR_NOT_NULL(strstr(spec, "records=counts,groups=0/2,group_tokens=64/16"));
    static const struct {
        const char *spec, *needle;
    } bad[] = {
        {"layers=3,groups=0/2", "groups gives 2 layer groups and group_tokens 0 token counts"},
        {"layers=3,groups=0/5,group_tokens=1/1", "group 1 starts at MoE layer 5"},
        {"layers=3,groups=0/x,group_tokens=1/1", "groups=0/x: item 2"},
        {"layers=3,groups=0/1,group_tokens=1/0", "group_tokens=1/0: item 2"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        CU_ASSERT_FALSE(ms_trace_gen_params_parse(bad[i].spec, &p, &error));
        CU_ASSERT_PTR_NOT_NULL_FATAL(error);
        if (strstr(error->message, bad[i].needle) == NULL) {
            fprintf(stderr, "\n  '%s' lacks '%s'\n", error->message, bad[i].needle);
            CU_FAIL("error message lacks expected text");
        }
        g_clear_error(&error);
    }
}

static MsResult *
run(const char *model_text, const char *trace, MsPlanMode mode, GError **error)
{
    g_autofree char *topo = ms_test_write_tmp("one.ini", one_gpu);
    g_autofree char *model = ms_test_write_tmp("ed.ini", model_text);
    MsInputNames names = {.topology = topo, .model = model, .policy = "fifo", .trace = trace};
    g_autoptr(MsInputs) in = ms_inputs_load(&names, error);
    if (in == NULL) {
        return NULL;
    }
    g_autoptr(MsRunner) engine = ms_engine_runner_new(&(MsEngineOptions){0});
    MsScenario sc = {.mode = mode, .iterations = 1, .layers = TRUE};
    ms_inputs_fill(in, &sc);
    sc.runner = engine;
    return ms_scenario_run(&sc, error);
}

/* Forward seconds of one layer at 70% of 100 TFLOPS: attention t (8 d^2 + 4 seq d), then a dense
 * FFN 4 t d d_ffn, or a gate 2 t d E and the experts 4 t d d_ffn (one GPU holds them all). */
static double
layer_s(gboolean moe, double t, double d)
{
    double flops = t * (8 * d * d + 4 * 512 * d) + 4 * t * d * 3072 + (moe ? 2 * t * d * 4 : 0);
    return flops / (100e12 * 0.70);
}

static void
test_step_time(void)
{
    double enc = layer_s(FALSE, 1024, 768) + layer_s(TRUE, 1024, 768);
    double dec = layer_s(FALSE, 256, 512) + layer_s(TRUE, 256, 512);
    GError *error = NULL;
    /* The generated routing gives each group its tokens per GPU. */
    g_autoptr(MsResult) infer = run(two_groups, NULL, MS_PLAN_INFER, &error);
    g_assert_no_error(error);
    const MsMetrics *mi = ms_result_iteration(infer, 0);
    /* Each op's time is whole picoseconds: a few ps off the exact sum (1e-8 is 5 ps). */
    MS_ASSERT_REL(mi->compute_us, (enc + dec) * 1e6, 1e-8);
    /* The all-to-alls of one GPU move nothing: what the step adds is their per-call latency. */
    MS_ASSERT_REL(mi->step_us, (enc + dec) * 1e6, 1e-4);
    /* Training: backward at twice the forward (backward_factor 2). */
    g_autoptr(MsResult) train = run(two_groups, NULL, MS_PLAN_TRAIN, &error);
    g_assert_no_error(error);
    MS_ASSERT_REL(ms_result_iteration(train, 0)->compute_us, 3 * (enc + dec) * 1e6, 1e-8);
    /* Per layer: the decoder's rows carry its tokens and its time. */
    const MsLayerTable *t = ms_result_layers(infer);
    CU_ASSERT_EQUAL_FATAL(ms_layer_table_n_rows(t), 4);
    const MsLayerRow *l1 = ms_layer_table_find(t, 0, 1, MS_PHASE_FORWARD, 0);
    const MsLayerRow *l3 = ms_layer_table_find(t, 0, 3, MS_PHASE_FORWARD, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l3);
    CU_ASSERT_EQUAL(l1->tokens, 1024);
    CU_ASSERT_EQUAL(l3->tokens, 256);
    const MsLayerRow *l2 = ms_layer_table_find(t, 0, 2, MS_PHASE_FORWARD, 0);
    MS_ASSERT_REL(l2->busy_us, layer_s(FALSE, 256, 512) * 1e6, 1e-8);
    MS_ASSERT_REL(l3->busy_us, layer_s(TRUE, 256, 512) * 1e6, 1e-4);
}

/* A dense group and an MoE group: the generated routing takes the MoE group's tokens, the dense
 * group its own. */
static void
test_dense_group(void)
{
    static const char text[] =
        "[model]\nformat = 1\nname = ed\nlayers = 4\nmoe_layers = 3\nd_model = 768\n"
        "d_ffn = 3072\nexperts = 4\ntop_k = 1\ndtype = fp32\nheads = 12\nseq_len = 512\n"
        "tokens_per_gpu = 1024\n[group encoder]\nlayers = 0-1\n[group decoder]\nlayers = 2-3\n"
        "tokens_per_gpu = 256\n";
    GError *error = NULL;
    g_autoptr(MsResult) res = run(text, NULL, MS_PLAN_INFER, &error);
    g_assert_no_error(error);
    const MsLayerTable *t = ms_result_layers(res);
    CU_ASSERT_EQUAL(ms_layer_table_find(t, 0, 1, MS_PHASE_FORWARD, 0)->tokens, 1024);
    CU_ASSERT_EQUAL(ms_layer_table_find(t, 0, 2, MS_PHASE_FORWARD, 0)->tokens, 256);
    CU_ASSERT_EQUAL(ms_layer_table_find(t, 0, 3, MS_PHASE_FORWARD, 0)->tokens, 256);
    double want =
        2 * layer_s(FALSE, 1024, 768) + layer_s(FALSE, 256, 768) + layer_s(TRUE, 256, 768);
    MS_ASSERT_REL(ms_result_iteration(res, 0)->compute_us, want * 1e6, 1e-8);
}

static void
test_trace_fit(void)
{
    /* A trace's groups must split the MoE layers where the model's do: layer 1 here. */
    static const char trace[] = "moe-trace 1\nexperts 4\nlayers 2\nranks 1\ntop_k 1\ngroups 0 1\n"
                                "c 0 0 0 0 1024\nc 0 1 0 1 256\n";
    g_autofree char *path = ms_test_write_tmp("ed.trace", trace);
    GError *error = NULL;
    g_autoptr(MsResult) ok = run(two_groups, path, MS_PLAN_INFER, &error);
    g_assert_no_error(error);
    MS_ASSERT_REL(ms_result_iteration(ok, 0)->compute_us,
                  (layer_s(FALSE, 1024, 768) + layer_s(TRUE, 1024, 768) + layer_s(FALSE, 256, 512) +
                   layer_s(TRUE, 256, 512)) *
                      1e6,
                  1e-8);
    /* One group over all four layers: the trace's second group has no counterpart. */
    g_autoptr(MsResult) one = run(HEAD "[group all]\nlayers = 0-3\n", path, MS_PLAN_INFER, &error);
    CU_ASSERT_PTR_NULL(one);
    MS_ASSERT_ERROR(error, MS_PLAN_ERROR, MS_PLAN_ERROR_MISMATCH,
                    "the trace's layer groups start at MoE layers 0 1 but model ed has groups "
                    "with MoE layers starting at 0");
    g_autoptr(MsResult) none = run(HEAD, path, MS_PLAN_INFER, &error);
    CU_ASSERT_PTR_NULL(none);
    MS_ASSERT_ERROR(error, MS_PLAN_ERROR, MS_PLAN_ERROR_MISMATCH,
                    "but model ed has no layer groups");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"each group's view of the model", test_views},
        {"bad groups name the file, line, group, key and value", test_bad_groups},
        {"a trace's groups: both forms, the whole-token rule per group", test_trace},
        {"the generator's groups", test_generator},
        {"an encoder-decoder step in closed form, per layer", test_step_time},
        {"a dense group's tokens are its own", test_dense_group},
        {"a trace's groups against the model's", test_trace_fit},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"layer_groups", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
