/* Fuzz target: result JSON as `moesim validate --simulated/--measured` reads it
 * (ms_result_check), then paired with itself op by op (ms_compare_runs) and its GPUs' paces
 * taken (ms_pace_fit): a result that loads must compare with itself to zero error on every op and
 * give every GPU with a pace 1. */
#include <math.h>
#include <stdlib.h>

#include "fuzz.h"
#include "sim/base/json_input.h"
#include "validate/pace_fit.h"
#include "validate/validation.h"

int
LLVMFuzzerTestOneInput(const guint8 *data, size_t size)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    if (!ms_json_input_load_data(parser, (const char *)data, size, "fuzz.json", NULL)) {
        return 0;
    }
    GError *error = NULL;
    g_autoptr(JsonNode) root = ms_result_check(json_parser_get_root(parser), "fuzz.json", &error);
    if (root == NULL) {
        fuzz_refused(&error);
        return 0;
    }
    MsRunComparison cmp;
    if (!ms_compare_runs(root, root, 0, &cmp, &error)) {
        abort(); /* a result is always the same schedule as itself */
    }
    for (guint i = 0; i < cmp.ops->len; i++) {
        const MsOpPair *p = &g_array_index(cmp.ops, MsOpPair, i);
        if (p->predicted_us != p->measured_us) {
            abort();
        }
    }
    g_autoptr(GArray) paces = ms_pace_fit(&cmp);
    for (guint k = 0; k < paces->len; k++) {
        const MsGpuPace *g = &g_array_index(paces, MsGpuPace, k);
        if (!(fabs(g->pace - 1) < 1e-12)) {
            abort();
        }
    }
    ms_run_comparison_clear(&cmp);
    return 0;
}
