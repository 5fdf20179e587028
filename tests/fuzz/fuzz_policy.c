/* Fuzz target: policy specs ("NAME:key=value,...", sim/policy/policy.h). A spec that parses is
 * planned and simulated end to end (ms_scenario_run) for a small model on an 8-GPU machine, in
 * training or inference (the first byte picks), with the engine's invariant checks on: whatever
 * the parameters, the run either succeeds or refuses them with a message, never breaks an
 * invariant. */
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"
#include "sim/engine.h"
#include "sim/inputs.h"
#include "sim/policy/policy.h"
#include "sim/scenario.h"

/* Two layers, one MoE with 8 experts: small enough for thousands of plans a second. */
static const char model_text[] = "[model]\nformat = 1\nname = fuzz\nlayers = 2\nmoe_every = 2\n"
                                 "d_model = 256\nd_ffn = 512\nexperts = 8\ntop_k = 2\n"
                                 "top_k_infer = 1\ncapacity_factor = 0\ndtype = bf16\n"
                                 "heads = 4\nseq_len = 64\ntokens_per_gpu = 64\n"
                                 "tokens_per_gpu_infer = 16\ngrad_bucket = 1MiB\n";

static char *path;

static void
remove_model(void)
{
    unlink(path);
}

static const char *
model_path(void)
{
    if (path == NULL) {
        path = g_strdup_printf("%s/moesim-fuzz-model-%d.ini", g_get_tmp_dir(), (int)getpid());
        if (!g_file_set_contents(path, model_text, -1, NULL)) {
            abort();
        }
        atexit(remove_model);
    }
    return path;
}

int
LLVMFuzzerTestOneInput(const guint8 *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    g_autofree char *spec = g_strndup((const char *)data + 1, size - 1);
    GError *error = NULL;
    g_autoptr(MsPolicy) policy = ms_policy_parse(spec, &error);
    if (policy == NULL) {
        fuzz_refused(&error);
        return 0;
    }
    /* The machine, the model and the runner are the same for every input: loaded once. */
    static MsInputs *inputs;
    static MsRunner *runner;
    if (inputs == NULL) {
        MsInputNames names = {.topology = "dgx-a100", .model = model_path()};
        inputs = ms_inputs_load(&names, NULL);
        runner = ms_engine_runner_new(&(MsEngineOptions){.check_invariants = TRUE});
        if (inputs == NULL) {
            abort();
        }
    }
    MsScenario sc = {
        .runner = runner,
        .mode = data[0] & 1 ? MS_PLAN_INFER : MS_PLAN_TRAIN,
        .warmup = data[0] & 2 ? 1 : 0,
        .seed = 1,
    };
    ms_inputs_fill(inputs, &sc);
    sc.policy = policy;
    g_autoptr(MsResult) result = ms_scenario_run(&sc, &error);
    if (result == NULL &&
        (error == NULL || g_error_matches(error, MS_ENGINE_ERROR, MS_ENGINE_ERROR_INVARIANT))) {
        abort();
    }
    g_clear_error(&error);
    return 0;
}
