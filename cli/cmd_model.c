/* cmd_model: `moesim model list` (the shipped models) and `moesim model show NAME|FILE` (the
 * file's values and what follows from them: parameters per part, forward flops per token, the
 * MoE layers). Parameter counts are elements; flops are per token and forward. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "sim/base/json_output.h"
#include "sim/moe/model.h"

typedef struct {
    guint64 attention, dense, expert, shared, gate, head, embedding, total, active;
} Params;

static void
count_params(const MsModel *m, Params *p)
{
    p->attention = ms_model_attention_params(m);
    p->dense = ms_model_dense_ffn_params(m);
    p->expert = ms_model_expert_params(m);
    p->gate = ms_model_gate_params(m);
    p->head = ms_model_head_params(m);
    p->shared = ms_model_shared_params(m);
    p->embedding = ms_model_embedding_params(m);
    p->total = ms_model_total_params(m);
    p->active = ms_model_active_params(m);
}

static int
model_list(void)
{
    g_auto(GStrv) names = ms_model_list_shipped();
    printf("%-26s %6s %4s %7s %6s  %s\n", "name", "layers", "MoE", "experts", "top_k",
           "description");
    for (guint i = 0; names[i]; i++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(MsModel) m = ms_model_load(names[i], &error);
        if (m == NULL) {
            return ms_cli_fail(error);
        }
        const MsModelSpec *s = ms_model_spec(m);
        printf("%-26s %6u %4u %7u %3u/%-2u  %s\n", names[i], s->layers, s->n_moe, s->experts,
               s->top_k, s->top_k_infer, s->description);
    }
    return MS_EXIT_OK;
}

/* "1, 3, 5" or "all" */
static char *
moe_list(const MsModel *m)
{
    const MsModelSpec *s = ms_model_spec(m);
    if (s->n_moe == s->layers) {
        return g_strdup("all");
    }
    GString *str = g_string_new(NULL);
    for (guint i = 0; i < s->n_moe; i++) {
        g_string_append_printf(str, "%s%u", i ? ", " : "", ms_model_moe_layer(m, i));
    }
    return g_string_free(str, FALSE);
}

static void
print_text(const MsModel *m, const Params *p)
{
    const MsModelSpec *s = ms_model_spec(m);
    char b1[32];
    g_autofree char *moe = moe_list(m);
    printf("model       %s\n", s->name);
    if (*s->description) {
        printf("            %s\n", s->description);
    }
    printf("layers      %u, MoE: %s\n", s->layers, moe);
    printf("dimensions  d_model %" G_GUINT64_FORMAT ", expert d_ffn %" G_GUINT64_FORMAT
           "%s, dense d_ffn %" G_GUINT64_FORMAT ", heads %u (kv %u), seq_len %u\n",
           s->d_model, s->d_ffn, s->gated ? " (gated)" : "", s->d_ffn_dense, s->heads, s->kv_heads,
           s->seq_len);
    printf("experts     %u, top-%u training, top-%u inference, ", s->experts, s->top_k,
           s->top_k_infer);
    if (s->capacity_factor > 0) {
        printf("capacity factor %g\n", s->capacity_factor);
    } else {
        printf("dropless\n");
    }
    printf("tokens      %u per GPU per step, %u per inference batch; dtype %s\n", s->tokens_per_gpu,
           s->tokens_per_gpu_infer, ms_dtype_name(s->dtype));
    char ep[16] = "default";
    if (s->ep) {
        g_snprintf(ep, sizeof ep, "%u", s->ep);
    }
    printf("parallel    ep %s, gradient buckets %s\n", ep,
           ms_format_bytes(s->grad_bucket, b1, sizeof b1));
    const MsFramework *f = &s->framework;
    for (guint g = 0; g < ms_model_n_groups(m); g++) {
        const MsModelGroup *gr = ms_model_group(m, g);
        const MsModelSpec *v = ms_model_spec(ms_model_layer(m, gr->first));
        printf("group       %s: layers %u-%u (%u MoE), d_model %" G_GUINT64_FORMAT
               ", expert d_ffn %" G_GUINT64_FORMAT ", dense d_ffn %" G_GUINT64_FORMAT
               ", heads %u (kv %u), seq_len %u, tokens %u per GPU per step, %u per batch\n",
               gr->name, gr->first, gr->last, gr->n_moe, v->d_model, v->d_ffn, v->d_ffn_dense,
               v->heads, v->kv_heads, v->seq_len, v->tokens_per_gpu, v->tokens_per_gpu_infer);
    }
    printf("framework   %s: host %.4g us per op; per forward MoE layer %.4g us + %.4g us per local "
           "expert + %u sync%s x %.4g us + %.4g us per token\n",
           ms_framework_name(f->kind), f->op_s * 1e6, f->layer_s * 1e6, f->expert_s * 1e6, f->syncs,
           f->syncs == 1 ? "" : "s", f->sync_s * 1e6, f->token_s * 1e6);
    printf("parameters  %.4g total, %.4g active: attention %.4g/layer, dense FFN %.4g/layer, "
           "expert %.4g, shared experts %.4g/layer, gate %.4g, head %.4g%s\n",
           (double)p->total, (double)p->active, (double)p->attention, (double)p->dense,
           (double)p->expert, (double)p->shared, (double)p->gate, (double)p->head,
           p->embedding ? " (+ untied embedding)" : "");
    printf("flops/token attention %.4g, dense FFN %.4g, expert %.4g (per choice), shared %.4g, "
           "gate %.4g, head %.4g; %.4g per token through the model (forward; backward x%g)\n",
           ms_model_attention_flops(m), ms_model_dense_ffn_flops(m), ms_model_expert_flops(m),
           ms_model_shared_flops(m), ms_model_gate_flops(m), ms_model_head_flops(m),
           ms_model_token_flops(m), s->backward_factor);
}

static void
json_spec(JsonBuilder *b, const MsModel *m)
{
    const MsModelSpec *s = ms_model_spec(m);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, s->name);
    json_builder_set_member_name(b, "description");
    json_builder_add_string_value(b, s->description);
    ms_json_member_int(b, "layers", s->layers);
    json_builder_set_member_name(b, "moe_layers");
    json_builder_begin_array(b);
    for (guint i = 0; i < s->n_moe; i++) {
        json_builder_add_int_value(b, ms_model_moe_layer(m, i));
    }
    json_builder_end_array(b);
    ms_json_member_int(b, "d_model", s->d_model);
    ms_json_member_int(b, "d_ffn", s->d_ffn);
    ms_json_member_int(b, "d_ffn_dense", s->d_ffn_dense);
    ms_json_member_int(b, "experts", s->experts);
    ms_json_member_int(b, "top_k", s->top_k);
    ms_json_member_int(b, "top_k_infer", s->top_k_infer);
    json_builder_set_member_name(b, "gated");
    json_builder_add_boolean_value(b, s->gated);
    ms_json_member_double(b, "capacity_factor", s->capacity_factor);
    json_builder_set_member_name(b, "dtype");
    json_builder_add_string_value(b, ms_dtype_name(s->dtype));
    ms_json_member_int(b, "heads", s->heads);
    ms_json_member_int(b, "kv_heads", s->kv_heads);
    ms_json_member_int(b, "head_dim", s->head_dim);
    ms_json_member_int(b, "shared_experts", s->shared_experts);
    json_builder_set_member_name(b, "tie_embeddings");
    json_builder_add_boolean_value(b, s->tied);
    ms_json_member_int(b, "seq_len", s->seq_len);
    ms_json_member_int(b, "tokens_per_gpu", s->tokens_per_gpu);
    ms_json_member_int(b, "tokens_per_gpu_infer", s->tokens_per_gpu_infer);
    ms_json_member_int(b, "ep", s->ep);
    ms_json_member_int(b, "grad_bucket", s->grad_bucket);
    ms_json_member_int(b, "vocab", s->vocab);
    ms_json_member_double(b, "backward_factor", s->backward_factor);
    json_builder_set_member_name(b, "groups");
    json_builder_begin_array(b);
    for (guint g = 0; g < ms_model_n_groups(m); g++) {
        const MsModelGroup *gr = ms_model_group(m, g);
        const MsModelSpec *v = ms_model_spec(ms_model_layer(m, gr->first));
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, gr->name);
        ms_json_member_int(b, "first", gr->first);
        ms_json_member_int(b, "last", gr->last);
        ms_json_member_int(b, "d_model", v->d_model);
        ms_json_member_int(b, "d_ffn", v->d_ffn);
        ms_json_member_int(b, "d_ffn_dense", v->d_ffn_dense);
        ms_json_member_int(b, "heads", v->heads);
        ms_json_member_int(b, "kv_heads", v->kv_heads);
        ms_json_member_int(b, "seq_len", v->seq_len);
        ms_json_member_int(b, "tokens_per_gpu", v->tokens_per_gpu);
        ms_json_member_int(b, "tokens_per_gpu_infer", v->tokens_per_gpu_infer);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    const MsFramework *f = &s->framework;
    json_builder_set_member_name(b, "framework");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, ms_framework_name(f->kind));
    ms_json_member_double(b, "op_us", f->op_s * 1e6);
    ms_json_member_double(b, "moe_layer_us", f->layer_s * 1e6);
    ms_json_member_double(b, "expert_us", f->expert_s * 1e6);
    ms_json_member_int(b, "syncs", f->syncs);
    ms_json_member_double(b, "sync_us", f->sync_s * 1e6);
    ms_json_member_double(b, "token_us", f->token_s * 1e6);
    json_builder_end_object(b);
}

static JsonNode *
to_json(const MsModel *m, const Params *p)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    ms_json_member_string(b, "schema", "moesim.model/1"); /* docs/outputs.md */
    json_spec(b, m);
    json_builder_set_member_name(b, "params");
    json_builder_begin_object(b);
    ms_json_member_int(b, "attention_per_layer", p->attention);
    ms_json_member_int(b, "dense_ffn_per_layer", p->dense);
    ms_json_member_int(b, "expert", p->expert);
    ms_json_member_int(b, "gate", p->gate);
    ms_json_member_int(b, "shared_experts", p->shared);
    ms_json_member_int(b, "head", p->head);
    ms_json_member_int(b, "embedding", p->embedding);
    ms_json_member_int(b, "total", p->total);
    ms_json_member_int(b, "active", p->active);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "flops_per_token");
    json_builder_begin_object(b);
    ms_json_member_double(b, "attention", ms_model_attention_flops(m));
    ms_json_member_double(b, "dense_ffn", ms_model_dense_ffn_flops(m));
    ms_json_member_double(b, "expert", ms_model_expert_flops(m));
    ms_json_member_double(b, "gate", ms_model_gate_flops(m));
    ms_json_member_double(b, "shared_experts", ms_model_shared_flops(m));
    ms_json_member_double(b, "head", ms_model_head_flops(m));
    ms_json_member_double(b, "token", ms_model_token_flops(m));
    json_builder_end_object(b);
    json_builder_end_object(b);
    return json_builder_get_root(b);
}

static int
model_show(const char *what, const char *json, gboolean source)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(MsModel) m = ms_model_load(what, &error);
    if (m == NULL) {
        return ms_cli_fail(error);
    }
    if (source) {
        return ms_cli_print_source(what, MS_INPUT_MODEL, ms_model_shipped_data);
    }
    Params p;
    count_params(m, &p);
    if (json) {
        g_autoptr(JsonNode) node = to_json(m, &p);
        if (!ms_cli_write_json(json, node, &error)) {
            return ms_cli_fail(error);
        }
        if (strcmp(json, "-") == 0) {
            return MS_EXIT_OK;
        }
    }
    print_text(m, &p);
    return MS_EXIT_OK;
}

int
ms_cmd_model(int argc, char **argv)
{
    g_autofree char *json = NULL;
    gboolean source = FALSE;
    const GOptionEntry entries[] = {
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &json, "show: also write JSON to FILE (- = stdout)",
         "FILE|-"},
        {"source", 0, 0, G_OPTION_ARG_NONE, &source, "show: print the model file itself", NULL},
        {NULL},
    };
    if (!ms_cli_parse(&argc, &argv, entries, "list | show NAME|FILE",
                      "List the shipped MoE models, or show what one holds.",
                      "  list               the shipped models: layers, MoE layers, experts,\n"
                      "                     top-k (training/inference), description\n"
                      "  show NAME|FILE     the model's values, parameter counts and forward\n"
                      "                     flops per token (NAME: a shipped model)\n"
                      "Model files are described in docs/models.md.")) {
        return MS_EXIT_USAGE;
    }
    if (argc == 2 && strcmp(argv[1], "list") == 0) {
        return model_list();
    }
    if (argc == 3 && strcmp(argv[1], "show") == 0) {
        return model_show(argv[2], json, source);
    }
    return ms_cli_usage("model: expected 'list' or 'show NAME|FILE' (see 'moesim model --help')");
}
