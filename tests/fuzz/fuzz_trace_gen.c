/* Fuzz target: generator specs ("gen:SPEC", traces/trace_gen.h). A spec that parses has a
 * canonical form that parses back to the same parameters; generators of small traces are built
 * and run, and every iteration they produce must route exactly tokens per rank at every layer
 * (a layer group's own with groups). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "traces/trace_gen.h"

/* Generated only when this small (choices per iteration, iterations). */
#define GEN_MAX_CHOICES 100000
#define GEN_MAX_ITERATIONS 4

static void
generate(const MsTraceGenParams *p)
{
    guint64 choices = (guint64)p->ranks * ms_trace_gen_params_tokens(p) * p->layers * p->top_k;
    if (choices > GEN_MAX_CHOICES || p->iterations > GEN_MAX_ITERATIONS ||
        (guint64)p->layers * p->ranks * p->experts > GEN_MAX_CHOICES) {
        return;
    }
    GError *error = NULL;
    g_autoptr(MsTraceGen) gen = ms_trace_gen_new(p, &error);
    if (gen == NULL) {
        if (error == NULL) {
            abort();
        }
        g_clear_error(&error);
        return;
    }
    MsRouting *it = NULL;
    guint n = 0;
    while (ms_trace_gen_next(gen, &it, &error)) {
        const MsTraceHeader *h = ms_routing_header(it);
        for (guint l = 0; l < p->layers; l++) {
            guint32 want = p->n_groups ? p->group_tokens[ms_trace_header_group(h, l)] : p->tokens;
            for (guint r = 0; r < p->ranks; r++) {
                if (ms_routing_layer_tokens(it, l, r) != want) {
                    abort();
                }
            }
        }
        ms_routing_free(it);
        n++;
    }
    if (error != NULL || n != p->iterations) {
        abort();
    }
}

int
LLVMFuzzerTestOneInput(const guint8 *data, size_t size)
{
    g_autofree char *spec = g_strndup((const char *)data, size);
    MsTraceGenParams p;
    GError *error = NULL;
    if (!ms_trace_gen_params_parse(spec, &p, &error)) {
        fuzz_refused(&error);
        return 0;
    }
    g_autofree char *canon = ms_trace_gen_params_to_spec(&p);
    MsTraceGenParams q;
    if (!ms_trace_gen_params_parse(canon, &q, NULL)) {
        abort();
    }
    g_autofree char *canon2 = ms_trace_gen_params_to_spec(&q);
    if (strcmp(canon, canon2) != 0) {
        abort();
    }
    generate(&p);
    return 0;
}
