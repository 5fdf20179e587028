/* repro_setup: the Lina paper's testbeds and models as its text sets them up (Li et al., USENIX
 * ATC'23, sections 2, 6 and 7), as INI texts derived from the shipped lina-testbed and written
 * here with the source of every figure. docs/reproduce.md, "Setup", derives the dimensions the
 * paper leaves out. */
#include "repro_private.h"

#include "sim/inputs.h"
#include "sim/sweep_variants.h"

char *
repro_lina_testbed(guint gpus, GError **error)
{
    /* "The number of GPUs equals the number of experts per layer": 2 and 4 GPUs in one node, 8
     * in two, 16 in all four, 4 GPUs per node as the testbed has. */
    g_autoptr(GBytes) text = ms_inputs_topology_text("lina-testbed", error);
    if (text == NULL) {
        return NULL;
    }
    g_autofree char *name = g_strdup_printf("lina-testbed-%ugpu", gpus);
    g_autofree char *nodes = g_strdup_printf("%u", MAX(gpus / 4, 1));
    g_autofree char *per = g_strdup_printf("%u", MIN(gpus, 4));
    gsize len = 0;
    const char *data = g_bytes_get_data(text, &len);
    g_autofree char *a =
        ms_sweep_variants_ini_with(data, len, "preset", "nodes", nodes, "topology", name, error);
    return a ? ms_sweep_variants_ini_with(a, strlen(a), "preset", "gpus_per_node", per, "topology",
                                          name, error)
             : NULL;
}

typedef struct {
    const char *family, *what;
    guint layers;
    guint d_model, d_ffn, heads, seq_len, vocab;
    const char *source;
} Family;

/* Dimensions (docs/reproduce.md, "Setup"): Transformer-XL's from the motivation runs' parameter
 * counts (117M for 12 layers of 4 experts, 419M with 16: d_model 512 and d_ffn 2048, the
 * published Transformer-XL base for Enwik8, with 8 heads and 512-token segments); GPT-2 small
 * (12 layers, 768, 3072, 12 heads, 1024 tokens, the tied 50257-token embedding); BERT2GPT2 as a
 * 12-layer stack of BERT-base/GPT-2 small dimensions on 512 tokens; BERT-Large (24 layers, 1024,
 * 4096, 16 heads, 512 tokens; its output layer left out). */
static const Family families[] = {
    {"transformer-xl", "Transformer-XL", 24, 512, 2048, 8, 512, 0,
     "Transformer-XL base for Enwik8 (Dai et al., 2019), d_model 512 and d_ffn 2048 from the "
     "parameter counts of Lina's motivation runs"},
    {"gpt2", "GPT-2", 12, 768, 3072, 12, 1024, 50257, "GPT-2 small (Radford et al., 2019)"},
    {"bert2gpt2", "BERT2GPT2", 12, 768, 3072, 12, 512, 50257,
     "BERT-base encoder and GPT-2 small decoder dimensions as one 12-layer stack"},
    {"bert-large", "BERT-Large", 24, 1024, 4096, 16, 512, 0,
     "BERT-Large (Devlin et al., 2019), output layer left out"},
};

char *
repro_lina_model(const char *family, guint experts, guint layers, gboolean dropless)
{
    const Family *f = NULL;
    for (guint i = 0; i < G_N_ELEMENTS(families); i++) {
        f = strcmp(families[i].family, family) == 0 ? &families[i] : f;
    }
    g_return_val_if_fail(f != NULL, NULL);
    layers = layers ? layers : f->layers;
    return g_strdup_printf(
        "# %s with %u experts in every FFN position (Lina, USENIX ATC'23, section 6: each dense\n"
        "# model made MoE by replacing every FFN with an MoE layer), %u layers: %s.\n"
        "# Top-2 gating in training, top-1 in inference; %s; fp16; %u tokens per GPU\n"
        "# in training and inference alike (the batch chosen from the motivation runs'\n"
        "# all-to-all times, docs/reproduce.md); PyTorch DDP's 25 MiB gradient buckets.\n"
        "[model]\nformat = 1\nname = lina-%s-%ue-%ul\n"
        "description = Lina's %s-MoE, %u experts, every FFN MoE, %u layers\n"
        "layers = %u\nd_model = %u\nd_ffn = %u\nexperts = %u\ntop_k = 2\ntop_k_infer = 1\n"
        "gated = false\ncapacity_factor = %s\ndtype = fp16\nheads = %u\nseq_len = %u\n"
        "tokens_per_gpu = %u\ntokens_per_gpu_infer = %u\ngrad_bucket = 25MiB\nvocab = %u\n",
        f->what, experts, layers, f->source,
        dropless
            ? "dropless (inference drops no token, as Lina's analysis of\n# stragglers presumes)"
            : "capacity factor 1.0 (DeepSpeed-MoE's default, so the buffers\n# Lina and "
              "DeepSpeed send are the same)",
        REPRO_LINA_TOKENS, f->family, experts, layers, f->what, experts, layers, layers, f->d_model,
        f->d_ffn, experts, dropless ? "0" : "1.0", f->heads, f->seq_len, REPRO_LINA_TOKENS,
        REPRO_LINA_TOKENS, f->vocab);
}
