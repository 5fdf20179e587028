/* Tests of model: the shipped models and their published figures, the cost formulas in closed
 * form, the MoE layer rules, capacity and ep resolution, every error path, and `moesim model`. */
#include "plan_fixture.h"
#include "sim/base/ini.h"
#include "sim/moe/model.h"

static const char base[] = "[model]\n"              /* 1 */
                           "format = 1\n"           /* 2 */
                           "name = tiny\n"          /* 3 */
                           "layers = 4\n"           /* 4 */
                           "d_model = 64\n"         /* 5 */
                           "d_ffn = 256\n"          /* 6 */
                           "experts = 8\n"          /* 7 */
                           "top_k = 2\n"            /* 8 */
                           "heads = 4\n"            /* 9 */
                           "seq_len = 128\n"        /* 10 */
                           "tokens_per_gpu = 512\n" /* 11 */
                           "moe_every = 2\n";       /* 12 */

static MsModel *
load_text(const char *text, GError **error)
{
    return ms_model_load_data(text, strlen(text), "m.ini", error);
}

/* base with one line replaced (old must occur) or, with old NULL, a line appended. */
static char *
variant(const char *old, const char *new_text)
{
    if (old == NULL) {
        return g_strconcat(base, new_text, "\n", NULL);
    }
    const char *at = strstr(base, old);
    g_assert(at != NULL);
    return g_strdup_printf("%.*s%s%s", (int)(at - base), base, new_text, at + strlen(old));
}

static void
test_shipped(void)
{
    g_auto(GStrv) names = ms_model_list_shipped();
    CU_ASSERT_EQUAL(g_strv_length(names), 24);
    static const char *const want[] = {
        "mixtral-8x7b",      "switch-base-8",     "lina-transformer-xl-2e", "lina-gpt2-16e",
        "lina-bert2gpt2-4e", "schemoe-ct-moe-20", "schemoe-ablation-layer"};
    for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
        CU_ASSERT_TRUE(g_strv_contains((const char *const *)names, want[i]));
    }
    for (guint i = 0; names[i]; i++) {
        GError *error = NULL;
        g_autoptr(MsModel) m = ms_model_load(names[i], &error);
        CU_ASSERT_PTR_NOT_NULL(m);
        if (m == NULL) {
            fprintf(stderr, "\n  %s: %s\n", names[i], error->message);
            g_clear_error(&error);
            continue;
        }
        CU_ASSERT_STRING_EQUAL(ms_model_spec(m)->name, names[i]);
    }
}

static void
test_published_figures(void)
{
    GError *error = NULL;
    g_autoptr(MsModel) mix = ms_model_load("mixtral-8x7b", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mix);
    const MsModelSpec *s = ms_model_spec(mix);
    CU_ASSERT_EQUAL(s->layers, 32);
    CU_ASSERT_EQUAL(s->n_moe, 32);
    CU_ASSERT_EQUAL(s->d_model, 4096);
    CU_ASSERT_EQUAL(s->d_ffn, 14336);
    CU_ASSERT_EQUAL(s->experts, 8);
    CU_ASSERT_EQUAL(s->top_k, 2);
    CU_ASSERT_TRUE(s->gated);
    /* Mixtral 8x7B has 46.7 B parameters; the shipped file ties the head to the embedding
     * (one 131 M matrix less), so 46.57 B: within 0.5%. */
    guint64 total = s->layers * (ms_model_attention_params(mix) + ms_model_gate_params(mix) +
                                 s->experts * ms_model_expert_params(mix)) +
                    ms_model_head_params(mix);
    MS_ASSERT_REL((double)total, 46.7e9, 0.005);

    g_autoptr(MsModel) sw = ms_model_load("switch-base-8", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
    CU_ASSERT_EQUAL(ms_model_spec(sw)->layers, 12);
    CU_ASSERT_EQUAL(ms_model_spec(sw)->n_moe, 6);
    CU_ASSERT_EQUAL(ms_model_spec(sw)->top_k, 1);
    for (guint l = 0; l < 12; l++) {
        CU_ASSERT_EQUAL(ms_model_is_moe(sw, l), l % 2 == 1);
    }
    g_autoptr(MsModel) lina = ms_model_load("lina-transformer-xl-8e", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(lina);
    CU_ASSERT_EQUAL(ms_model_spec(lina)->layers, 24);
    CU_ASSERT_EQUAL(ms_model_spec(lina)->experts, 8);
    CU_ASSERT_EQUAL(ms_model_spec(lina)->top_k, 2);
    CU_ASSERT_EQUAL(ms_model_spec(lina)->top_k_infer, 1);
    g_autoptr(MsModel) abl = ms_model_load("schemoe-ablation-layer", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(abl);
    CU_ASSERT_EQUAL(ms_model_spec(abl)->d_model, 8192);
    CU_ASSERT_EQUAL(ms_model_spec(abl)->d_ffn, 8192);
    CU_ASSERT_EQUAL(ms_model_spec(abl)->tokens_per_gpu, 8 * 2048);
    CU_ASSERT_EQUAL(ms_model_spec(abl)->capacity_factor, 1.2);
    CU_ASSERT_EQUAL(ms_model_spec(abl)->experts, 32);
}

/* Today's models against their model cards' published totals and active counts. The published
 * figures are rounded to two or three significant digits (22B, 36B), so a count within 2.5% of
 * the figure is the configuration's; every part is counted from the file's dimensions by hand
 * here, independently of ms_model_total_params, and the two must agree exactly. */
static void
test_todays_models(void)
{
    static const struct {
        const char *name;
        double total, active;
        guint64 attention; /* one layer's attention, by hand from config.json */
        guint dense_layers, shared;
    } cases[] = {
        /* MLA: q_a + q_b + kv_a + kv_b + o (the model file's comment) */
        {"deepseek-v3", 671e9, 36.6e9,
         7168ull * 1536 + 1536ull * 128 * 192 + 7168ull * 576 + 512ull * 128 * 256 +
             128ull * 128 * 7168,
         3, 1},
        {"qwen3-235b-a22b", 235e9, 22e9, 4096ull * (2 * 64 * 128 + 2 * 4 * 128), 0, 0},
        {"mixtral-8x22b", 141e9, 39e9, 6144ull * (2 * 6144 + 2 * 1024), 0, 0},
        {"dbrx", 132e9, 36e9, 6144ull * (2 * 6144 + 2 * 1024), 0, 0},
        {"gpt-oss-120b", 116.83e9, 5.13e9, 2880ull * (2 * 64 * 64 + 2 * 8 * 64), 0, 0},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        GError *error = NULL;
        g_autoptr(MsModel) m = ms_model_load(cases[i].name, &error);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        const MsModelSpec *s = ms_model_spec(m);
        CU_ASSERT_EQUAL(ms_model_attention_params(m), cases[i].attention);
        CU_ASSERT_EQUAL(s->layers - s->n_moe, cases[i].dense_layers);
        CU_ASSERT_EQUAL(s->shared_experts, cases[i].shared);
        CU_ASSERT_FALSE(s->tied);
        guint64 expert = 3ull * s->d_model * s->d_ffn, head = s->vocab * s->d_model;
        guint64 moe = (s->experts + s->shared_experts) * expert + s->d_model * s->experts;
        guint64 moe_active = (s->top_k + s->shared_experts) * expert + s->d_model * s->experts;
        guint64 dense = 3ull * s->d_model * s->d_ffn_dense;
        guint64 total = s->layers * cases[i].attention + s->n_moe * moe +
                        cases[i].dense_layers * dense + 2 * head;
        guint64 active = s->layers * cases[i].attention + s->n_moe * moe_active +
                         cases[i].dense_layers * dense + head;
        CU_ASSERT_EQUAL(ms_model_total_params(m), total);
        CU_ASSERT_EQUAL(ms_model_active_params(m), active);
        MS_ASSERT_REL((double)total, cases[i].total, 0.025);
        MS_ASSERT_REL((double)active, cases[i].active, 0.025);
        /* Forward flops per token: 2 per weight a token runs through, plus attention's scores. */
        double scores = ms_model_attention_flops(m) - 2.0 * (double)cases[i].attention;
        MS_ASSERT_REL(ms_model_token_flops(m), 2.0 * (double)active + s->layers * scores, 1e-12);
    }
    /* DeepSeek-V3's shape as the task states it, and its node limit. */
    GError *error = NULL;
    g_autoptr(MsModel) ds = ms_model_load("deepseek-v3", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ds);
    const MsModelSpec *s = ms_model_spec(ds);
    CU_ASSERT_EQUAL(s->layers, 61);
    CU_ASSERT_EQUAL(s->n_moe, 58);
    CU_ASSERT_FALSE(ms_model_is_moe(ds, 2));
    CU_ASSERT_TRUE(ms_model_is_moe(ds, 3));
    CU_ASSERT_EQUAL(s->experts, 256);
    CU_ASSERT_EQUAL(s->top_k, 8);
    CU_ASSERT_EQUAL(s->max_nodes, 4);
    CU_ASSERT_EQUAL(s->d_model, 7168);
    CU_ASSERT_EQUAL(s->d_ffn, 2048);
    CU_ASSERT_EQUAL(s->ep, 64);
    /* MLA's forward flops per token (the file's comment): weights, scores and values. */
    MS_ASSERT_REL(ms_model_attention_flops(ds),
                  2.0 * 187105280 + 2.0 * 4096 * 128 * 192 + 2.0 * 4096 * 128 * 128, 1e-15);
    /* Qwen3's heads are wider than d_model / heads: 64 x 128 query channels on d_model 4096,
     * and attention's scores follow the query channels. */
    g_autoptr(MsModel) qw = ms_model_load("qwen3-235b-a22b", &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(qw);
    MS_ASSERT_REL(ms_model_attention_flops(qw), 2.0 * 71303168 + 4.0 * 4096 * 64 * 128, 1e-15);
}

static void
test_formulas(void)
{
    GError *error = NULL;
    g_autofree char *text = variant(NULL, "kv_heads = 2\ngated = true\nvocab = 1000\ndtype = fp32");
    g_autoptr(MsModel) m = load_text(text, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    /* head_dim 16, kv_dim 32: Q, O 64x64; K, V 64x32. */
    CU_ASSERT_EQUAL(ms_model_attention_params(m), 64 * 64 * 2 + 64 * 32 * 2);
    CU_ASSERT_EQUAL(ms_model_expert_params(m), 3 * 64 * 256);
    CU_ASSERT_EQUAL(ms_model_dense_ffn_params(m), 3 * 64 * 256);
    CU_ASSERT_EQUAL(ms_model_gate_params(m), 64 * 8);
    CU_ASSERT_EQUAL(ms_model_head_params(m), 1000 * 64);
    CU_ASSERT_EQUAL(ms_model_attention_flops(m), 2.0 * 12288 + 4.0 * 128 * 64);
    CU_ASSERT_EQUAL(ms_model_expert_flops(m), 2.0 * 3 * 64 * 256);
    CU_ASSERT_EQUAL(ms_model_gate_flops(m), 2.0 * 64 * 8);
    CU_ASSERT_EQUAL(ms_model_head_flops(m), 2.0 * 64000);
    CU_ASSERT_EQUAL(ms_model_token_bytes(m), 64 * 4);
    /* 10 tokens: weights + 2 x 10 x (4 x 64 + 2 x 32) elements, 4 bytes each. */
    CU_ASSERT_EQUAL(ms_model_attention_bytes(m, 10), 4.0 * (12288 + 20.0 * 320));
    CU_ASSERT_EQUAL(ms_model_gate_bytes(m, 10, 2), 4.0 * (512 + 640 + 80 + 2560));
    CU_ASSERT_EQUAL(ms_model_head_bytes(m, 10), 4.0 * (64000 + 10.0 * (64 + 2000)));
    const MsModelSpec *s = ms_model_spec(m);
    CU_ASSERT_EQUAL(s->backward_factor, 2.0);
    CU_ASSERT_EQUAL(s->grad_bucket, 25u << 20);
    CU_ASSERT_EQUAL(s->top_k_infer, 2);
    CU_ASSERT_EQUAL(s->tokens_per_gpu_infer, 512);
    CU_ASSERT_EQUAL(s->dtype, MS_DTYPE_FP32);

    g_autofree char *over = variant(NULL, "attention_flops = 1e6\ndense_flops = 5e5");
    g_autoptr(MsModel) o = load_text(over, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    CU_ASSERT_EQUAL(ms_model_attention_flops(o), 1e6);
    CU_ASSERT_EQUAL(ms_model_dense_ffn_flops(o), 5e5);
    CU_ASSERT_STRING_EQUAL(ms_dtype_name(MS_DTYPE_BF16), "bf16");
    CU_ASSERT_EQUAL(ms_dtype_bytes(MS_DTYPE_FP16), 2);
}

/* framework = NAME sets a framework's structure (syncs per layer, from its code) and no time;
 * host_* keys set the times; a calibration may replace them all. */
static void
test_framework(void)
{
    GError *error = NULL;
    g_autofree char *none = variant(NULL, "");
    g_autoptr(MsModel) plain = load_text(none, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plain);
    const MsFramework *f = &ms_model_spec(plain)->framework;
    CU_ASSERT_EQUAL(f->kind, MS_FRAMEWORK_CUSTOM);
    CU_ASSERT_FALSE(ms_framework_has_time(f));
    CU_ASSERT_EQUAL(f->syncs, 0);
    static const struct {
        const char *name;
        guint dropless_syncs, capacity_syncs;
    } named[] = {
        {"custom", 0, 0}, {"deepspeed", 1, 1}, {"megatron", 1, 0}, {"tutel", 1, 0}, {"vllm", 0, 0},
    };
    for (guint i = 0; i < G_N_ELEMENTS(named); i++) {
        g_autofree char *line = g_strdup_printf("framework = %s", named[i].name);
        g_autofree char *cap =
            g_strdup_printf("framework = %s\ncapacity_factor = 1.25", named[i].name);
        g_autofree char *t1 = variant(NULL, line), *t2 = variant(NULL, cap);
        g_autoptr(MsModel) a = load_text(t1, &error);
        g_autoptr(MsModel) b = load_text(t2, &error);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        CU_ASSERT_STRING_EQUAL(ms_framework_name(ms_model_spec(a)->framework.kind), named[i].name);
        CU_ASSERT_EQUAL(ms_model_spec(a)->framework.syncs, named[i].dropless_syncs);
        CU_ASSERT_EQUAL(ms_model_spec(b)->framework.syncs, named[i].capacity_syncs);
        CU_ASSERT_FALSE(ms_framework_has_time(&ms_model_spec(a)->framework));
    }
    g_autofree char *timed = variant(NULL, "framework = tutel\nhost_op = 12us\n"
                                           "host_moe_layer = 9.7ms\nhost_expert = 650us\n"
                                           "host_sync = 25us\nhost_syncs = 3\nhost_token = 0.5us");
    g_autoptr(MsModel) t = load_text(timed, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    f = &ms_model_spec(t)->framework;
    CU_ASSERT_EQUAL(f->kind, MS_FRAMEWORK_TUTEL);
    MS_ASSERT_REL(f->op_s, 12e-6, 1e-12);
    MS_ASSERT_REL(f->layer_s, 9.7e-3, 1e-12);
    MS_ASSERT_REL(f->expert_s, 650e-6, 1e-12);
    MS_ASSERT_REL(f->sync_s, 25e-6, 1e-12);
    CU_ASSERT_EQUAL(f->syncs, 3);
    MS_ASSERT_REL(f->token_s, 0.5e-6, 1e-12);
    CU_ASSERT_TRUE(ms_framework_has_time(f));
    /* 2 local experts, 100 tokens: 9.7 ms + 1.3 ms + 75 us + 50 us. */
    MS_ASSERT_REL(ms_framework_layer_s(f, 2, 100), 9.7e-3 + 1.3e-3 + 75e-6 + 50e-6, 1e-12);
    MsFramework other = {.kind = MS_FRAMEWORK_VLLM, .layer_s = 1e-3};
    ms_model_set_framework(t, &other);
    CU_ASSERT_EQUAL(ms_model_spec(t)->framework.kind, MS_FRAMEWORK_VLLM);
    CU_ASSERT_EQUAL(ms_model_spec(t)->framework.op_s, 0);
    char *problem = NULL;
    other.token_s = -1;
    CU_ASSERT_FALSE(ms_framework_check(&other, &problem));
    CU_ASSERT_PTR_NOT_NULL(strstr(problem, "token time -1 s is outside [0, 1] s"));
    g_free(problem);
    other.token_s = 0;
    other.syncs = 65;
    CU_ASSERT_FALSE(ms_framework_check(&other, &problem));
    CU_ASSERT_PTR_NOT_NULL(strstr(problem, "65 synchronisations per layer is more than 64"));
    g_free(problem);
}

/* Bytes per element follow the datatype: tf32 is stored as fp32, fp8 in one byte, for tokens
 * (all-to-all payloads), activations and weights alike. */
static void
test_dtypes(void)
{
    static const struct {
        const char *name;
        MsDtype dtype;
        guint bytes;
    } cases[] = {
        {"fp32", MS_DTYPE_FP32, 4}, {"tf32", MS_DTYPE_TF32, 4}, {"fp16", MS_DTYPE_FP16, 2},
        {"bf16", MS_DTYPE_BF16, 2}, {"fp8", MS_DTYPE_FP8, 1},
    };
    GError *error = NULL;
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *line = g_strdup_printf("dtype = %s", cases[i].name);
        g_autofree char *text = variant(NULL, line);
        g_autoptr(MsModel) m = load_text(text, &error);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT_EQUAL(ms_model_spec(m)->dtype, cases[i].dtype);
        CU_ASSERT_STRING_EQUAL(ms_dtype_name(cases[i].dtype), cases[i].name);
        CU_ASSERT_EQUAL(ms_dtype_bytes(cases[i].dtype), cases[i].bytes);
        CU_ASSERT_EQUAL(ms_model_token_bytes(m), 64 * cases[i].bytes);
        /* Weights: the gate's bytes at 10 tokens, top-2, scale with the element size. */
        CU_ASSERT_EQUAL(ms_model_gate_bytes(m, 10, 2), cases[i].bytes * (512.0 + 640 + 80 + 2560));
        MsDtype back;
        CU_ASSERT_TRUE(ms_dtype_from_name(cases[i].name, &back) && back == cases[i].dtype);
    }
    MsDtype none;
    CU_ASSERT_FALSE(ms_dtype_from_name("fp64", &none));
    CU_ASSERT_FALSE(ms_dtype_from_name(NULL, &none));
    CU_ASSERT_STRING_EQUAL(ms_dtype_name(MS_DTYPE_N), "?");
    CU_ASSERT_EQUAL(ms_dtype_bytes(MS_DTYPE_N), 0);
}

static void
test_moe_layers(void)
{
    GError *error = NULL;
    g_autoptr(MsModel) every = load_text(base, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(every);
    CU_ASSERT_EQUAL(ms_model_spec(every)->n_moe, 2);
    CU_ASSERT_EQUAL(ms_model_moe_layer(every, 1), 2);
    CU_ASSERT_EQUAL(ms_model_moe_index(every, 2), 1);
    CU_ASSERT_EQUAL(ms_model_moe_index(every, 1), -1);

    g_autofree char *t = variant("moe_every = 2\n", "moe_layers = 1, 3\n");
    g_autoptr(MsModel) list = load_text(t, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(list);
    CU_ASSERT_FALSE(ms_model_is_moe(list, 0));
    CU_ASSERT_TRUE(ms_model_is_moe(list, 3));
    CU_ASSERT_EQUAL(ms_model_moe_layer(list, 0), 1);

    g_autofree char *f = variant("moe_every = 2\n", "moe_first = 3\n");
    g_autoptr(MsModel) first = load_text(f, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(first);
    CU_ASSERT_EQUAL(ms_model_spec(first)->n_moe, 1);
    CU_ASSERT_EQUAL(ms_model_moe_layer(first, 0), 3);
}

static void
test_capacity_and_ep(void)
{
    GError *error = NULL;
    g_autoptr(MsModel) dropless = load_text(base, &error);
    CU_ASSERT_EQUAL(ms_model_capacity(dropless, 512, 2), 0);
    g_autofree char *t = variant(NULL, "capacity_factor = 1.25");
    g_autoptr(MsModel) m = load_text(t, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    /* 2 x floor(1.25 x ceil(500 / 8)) = 2 x floor(78.75) = 156 */
    CU_ASSERT_EQUAL(ms_model_capacity(m, 500, 2), 156);
    CU_ASSERT_EQUAL(ms_model_capacity(m, 1, 1), 1);
    CU_ASSERT_EQUAL(ms_model_capacity(m, 0, 1), 1);

    guint ep = 0;
    CU_ASSERT_TRUE(ms_model_resolve_ep(m, 8, &ep, &error));
    CU_ASSERT_EQUAL(ep, 8);
    CU_ASSERT_TRUE(ms_model_resolve_ep(m, 4, &ep, &error));
    CU_ASSERT_EQUAL(ep, 4);
    CU_ASSERT_TRUE(ms_model_resolve_ep(m, 16, &ep, &error));
    CU_ASSERT_EQUAL(ep, 8);
    CU_ASSERT_TRUE(ms_model_resolve_ep(m, 12, &ep, &error));
    CU_ASSERT_EQUAL(ep, 4);
    g_autofree char *e = variant(NULL, "ep = 4");
    g_autoptr(MsModel) fixed = load_text(e, &error);
    CU_ASSERT_TRUE(ms_model_resolve_ep(fixed, 16, &ep, &error));
    CU_ASSERT_EQUAL(ep, 4);
    CU_ASSERT_FALSE(ms_model_resolve_ep(fixed, 6, &ep, &error));
    MS_ASSERT_ERROR(error, MS_MODEL_ERROR, MS_MODEL_ERROR_INVALID,
                    "m.ini:13: [model] ep: expert-parallel degree 4 must divide both the 6 GPUs "
                    "and the 8 experts");
}

static void
test_errors(void)
{
    static const struct {
        const char *old, *new_text; /* old NULL: append */
        int code;
        const char *needle;
    } cases[] = {
        {"format = 1", "format = 2", MS_INI_ERROR_VALUE, "m.ini:2: [model] format: format 2"},
        {"name = tiny", "name = ", MS_INI_ERROR_VALUE, "m.ini:3: [model] name: empty name"},
        {"layers = 4", "layers = 0", MS_INI_ERROR_VALUE, "m.ini:4: [model] layers: '0' out of"},
        {"layers = 4", "layers = 5000", MS_INI_ERROR_VALUE, "m.ini:4: [model] layers: '5000'"},
        {"d_model = 64", "d_model = 64x", MS_INI_ERROR_VALUE, "m.ini:5: [model] d_model:"},
        {"d_ffn = 256\n", "", MS_INI_ERROR_MISSING, "[model] d_ffn:"},
        {"top_k = 2", "top_k = 9", MS_INI_ERROR_VALUE,
         "m.ini:8: [model] top_k: 9 is more than experts (8)"},
        {"heads = 4", "heads = 5", MS_INI_ERROR_VALUE,
         "m.ini:9: [model] heads: 5 heads do not divide d_model 64"},
        {NULL, "kv_heads = 3", MS_INI_ERROR_VALUE,
         "m.ini:13: [model] kv_heads: 3 kv_heads do not divide 4 heads"},
        {NULL, "dtype = int8", MS_INI_ERROR_VALUE,
         "m.ini:13: [model] dtype: 'int8' is not one of: fp32, fp16, bf16, tf32, fp8"},
        {NULL, "framework = fairseq", MS_INI_ERROR_VALUE,
         "m.ini:13: [model] framework: 'fairseq' is not one of: custom, deepspeed, megatron, "
         "tutel, vllm"},
        {NULL, "host_op = 12", MS_INI_ERROR_VALUE, "m.ini:13: [model] host_op:"},
        {NULL, "host_moe_layer = 2s", MS_INI_ERROR_VALUE,
         "m.ini:13: [model] host_moe_layer: '2s' out of range"},
        {NULL, "host_syncs = 65", MS_INI_ERROR_VALUE, "m.ini:13: [model] host_syncs: '65' out of"},
        {NULL, "host_expert = -1us", MS_INI_ERROR_VALUE, "m.ini:13: [model] host_expert:"},
        {NULL, "grad_bucket = 0B", MS_INI_ERROR_VALUE,
         "m.ini:13: [model] grad_bucket: '0B' out of range"},
        {NULL, "grad_bucket = 25", MS_INI_ERROR_VALUE, "m.ini:13: [model] grad_bucket:"},
        {NULL, "capacity_factor = -1", MS_INI_ERROR_VALUE,
         "m.ini:13: [model] capacity_factor: '-1' out of range"},
        {NULL, "experts_count = 3", MS_INI_ERROR_UNKNOWN_KEY, "m.ini:13: [model] experts_count"},
        {NULL, "[extra]", MS_INI_ERROR_UNKNOWN_KEY, "m.ini:13: [extra]: unknown group"},
        {NULL, "moe_layers = 1", MS_INI_ERROR_VALUE,
         "m.ini:12: [model] moe_every: give either moe_layers or moe_every/moe_first"},
        {"moe_every = 2", "moe_layers = 1, 7", MS_INI_ERROR_VALUE,
         "m.ini:12: [model] moe_layers: item 2:"},
        {"moe_every = 2", "moe_layers = 2, 1", MS_INI_ERROR_VALUE,
         "m.ini:12: [model] moe_layers: item 2: layer 1 does not follow 2"},
        {"moe_every = 2", "moe_layers = 1,,2", MS_INI_ERROR_VALUE,
         "m.ini:12: [model] moe_layers: item 2:"},
        {"moe_every = 2", "moe_first = 4", MS_INI_ERROR_VALUE,
         "m.ini:12: [model] moe_first: 4 is more than layers - 1 (3)"},
        {NULL, "backward_factor = 0", MS_INI_ERROR_VALUE, "m.ini:13: [model] backward_factor"},
        {NULL, "vocab = -3", MS_INI_ERROR_VALUE, "m.ini:13: [model] vocab"},
        {NULL, "tokens_per_gpu_infer = 0", MS_INI_ERROR_VALUE,
         "m.ini:13: [model] tokens_per_gpu_infer: '0' out of range"},
        {NULL, "attention_flops = nan", MS_INI_ERROR_VALUE, "m.ini:13: [model] attention_flops"},
        {NULL, "head_dim = 0", MS_INI_ERROR_VALUE, "m.ini:13: [model] head_dim: '0' out of"},
        {"heads = 4", "heads = 64\nhead_dim = 4097", MS_INI_ERROR_VALUE,
         "m.ini:10: [model] head_dim: '4097' out of range"},
        {"d_model = 64\nd_ffn = 256\nexperts = 8\ntop_k = 2\nheads = 4",
         "d_model = 128\nd_ffn = 256\nexperts = 8\ntop_k = 2\nheads = 128\nhead_dim = 4096",
         MS_INI_ERROR_VALUE,
         "m.ini:10: [model] head_dim: 128 heads of 4096 make 524288 query channels (at most "
         "262144)"},
        {NULL, "attention_params = 0", MS_INI_ERROR_VALUE,
         "m.ini:13: [model] attention_params: '0' out of range"},
        {NULL, "attention_params = 1e3", MS_INI_ERROR_VALUE, "m.ini:13: [model] attention_params"},
        {NULL, "shared_experts = 65", MS_INI_ERROR_VALUE,
         "m.ini:13: [model] shared_experts: '65' out of range"},
        {NULL, "max_nodes = -1", MS_INI_ERROR_VALUE, "m.ini:13: [model] max_nodes"},
        {NULL, "tie_embeddings = maybe", MS_INI_ERROR_VALUE, "m.ini:13: [model] tie_embeddings"},
        {"[model]", "[modell]", MS_INI_ERROR_MISSING, "m.ini: no [model] group"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        GError *error = NULL;
        g_autofree char *text = variant(cases[i].old, cases[i].new_text);
        g_autoptr(MsModel) m = load_text(text, &error);
        CU_ASSERT_PTR_NULL(m);
        if (error && strstr(error->message, cases[i].needle) == NULL) {
            fprintf(stderr, "\n  case %u: '%s'\n", i, error->message);
        }
        MS_ASSERT_ERROR(error, MS_INI_ERROR, cases[i].code, cases[i].needle);
    }
}

static void
test_load_by_name(void)
{
    GError *error = NULL;
    CU_ASSERT_PTR_NULL(ms_model_load("mixtral-8x8b", &error));
    MS_ASSERT_ERROR(error, MS_MODEL_ERROR, MS_MODEL_ERROR_UNKNOWN,
                    "unknown model 'mixtral-8x8b': no such file, and no shipped model has that "
                    "name (shipped: dbrx, deepseek-v3, gpt-oss-120b, lina-bert2gpt2-16e,");
    CU_ASSERT_PTR_NULL(ms_model_load("nowhere/m.ini", &error));
    MS_ASSERT_ERROR(error, MS_MODEL_ERROR, MS_MODEL_ERROR_UNKNOWN, "nowhere/m.ini: no such");
    CU_ASSERT_PTR_NULL(ms_model_shipped_data("../models/x"));
    g_autofree char *path = ms_test_write_tmp("tiny.ini", base);
    g_autoptr(MsModel) m = ms_model_load(path, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_STRING_EQUAL(ms_model_source(m), path);
    CU_ASSERT_STRING_EQUAL(ms_model_spec(m)->description, "");
}

static void
test_cli(void)
{
    const char *list[] = {"model", "list", NULL};
    fx_expect_run(list, 0, "switch-base-8                  12    6       8   1/1", NULL);
    const char *show[] = {"model", "show", "mixtral-8x7b", NULL};
    fx_expect_run(show, 0, "experts     8, top-2 training, top-2 inference, dropless", NULL);
    const char *json[] = {"model", "show", "switch-base-8", "--json", "-", NULL};
    fx_expect_run(json, 0, "\"capacity_factor\" : 1.25", NULL);
    const char *src[] = {"model", "show", "switch-base-8", "--source", NULL};
    fx_expect_run(src, 0, "moe_every = 2", NULL);
    g_autofree char *bad_text = variant("heads = 4", "heads = 5");
    g_autofree char *bad = ms_test_write_tmp("bad.ini", bad_text);
    const char *show_bad[] = {"model", "show", bad, NULL};
    g_autofree char *want = g_strdup_printf("moesim: %s:9: [model] heads: 5 heads", bad);
    fx_expect_run(show_bad, 2, NULL, want);
    const char *unknown[] = {"model", "show", "gpt-5", NULL};
    fx_expect_run(unknown, 2, NULL, "moesim: unknown model 'gpt-5'");
    const char *usage[] = {"model", "shw", NULL};
    fx_expect_run(usage, 2, NULL, "expected 'list' or 'show NAME|FILE'");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"shipped models load", test_shipped},
        {"published figures of the shipped models", test_published_figures},
        {"today's models: published total and active parameters", test_todays_models},
        {"parameter, flop and byte formulas", test_formulas},
        {"datatypes and their sizes", test_dtypes},
        {"framework overheads", test_framework},
        {"MoE layers: every/first and lists", test_moe_layers},
        {"capacity and expert-parallel degree", test_capacity_and_ep},
        {"every bad value names file:line", test_errors},
        {"load by name or path", test_load_by_name},
        {"moesim model", test_cli},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"model", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
