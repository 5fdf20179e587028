/* schemoe: ScheMoE's task scheduling (Shi et al., EuroSys'24): each MoE layer in r chunks whose
 * tasks (compress, dispatch, decompress, expert, compress, combine, decompress) run in the order
 * of the paper's Theorem 1 (OptSche, built by the plan builder: MS_PLAN_ORDER_OPTSCHE), optional
 * compression and Pipe-A2A, allreduce on its own stream as under PyTorch DDP. docs/policies.md. */
#include "policy.h"

#include <string.h>

#include "sim/net/collective.h"

/* ZFP as ScheMoE's code runs it (schemoe/custom/compressor/zfpc.cpp): fixed-rate mode at 8 bits
 * per value (ZfpCompressor's default rate) on a 2D field d_model x tokens. Measured with the real
 * library by tests/perf/bench_zfp (`build/tests/perf/bench_zfp`, ZFP 1.0.0 of Debian 12's
 * libzfp-dev, on one core of a 2-core AMD EPYC virtual machine, 2026-12-02): exactly 8.000 bits
 * per value on LayerNorm-like activations of 1024 x 8192, 8192 x 1024 and 1024 x 2048 (0.2500 of
 * their fp32 bytes), error 1.65% of the data's standard deviation; 4.4 to 5.1 ns per input byte
 * to compress and 4.3 to 4.6 to decompress on the CPU (serial). Fixed rate makes the size
 * exact: 8 bits against the model's dtype is the ratio. The CPU's time is not a GPU's (ScheMoE
 * runs ZFP's CUDA kernels, zfp_exec_cuda): the cost stays the memory-bound pass of compress_cost
 * 0s unless given (docs/policies.md). */
#define ZFP_BITS_PER_VALUE 8.0

static const MsParamSpec params[] = {
    {"r", MS_PARAM_UINT, "2", 1, 64, NULL,
     "chunks of the MoE layer pipelined against each other (ScheMoE's r)"},
    {"compress", MS_PARAM_DOUBLE, "1", 0.001, 1, NULL,
     "compressed size over original size of the all-to-all data (1 = no compression tasks)"},
    {"compress_cost", MS_PARAM_TIME, "0s", 0, 1e-6, NULL,
     "time per input byte of one (de)compression; 0s = memory-bound: read and write once"},
    {"zfp", MS_PARAM_BOOL, "false", 0, 0, NULL,
     "ZFP at ScheMoE's rate, 8 bits per value: compress = 8 bits over the model's dtype"},
    {"pipe", MS_PARAM_BOOL, "false", 0, 0, NULL,
     "Pipe-A2A: intra-node and inter-node transfers as two concurrent streams"},
    {NULL},
};

static gboolean
configure(const MsPolicy *policy, const MsPolicyInput *in, MsPlanConfig *cfg, GError **error)
{
    if (ms_policy_get_bool(policy, "pipe")) {
        if (ms_policy_given(policy, "a2a") && strcmp(ms_policy_get_choice(policy, "a2a"), "pipe")) {
            g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE,
                        "policy schemoe: pipe=true conflicts with a2a=%s",
                        ms_policy_get_choice(policy, "a2a"));
            return FALSE;
        }
        cfg->a2a_algo = MS_COLL_ALGO_PIPE;
    }
    double ratio = ms_policy_get_double(policy, "compress");
    if (ms_policy_get_bool(policy, "zfp")) {
        if (ms_policy_given(policy, "compress")) {
            g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE,
                        "policy schemoe: give either zfp or compress, not both");
            return FALSE;
        }
        ratio = ZFP_BITS_PER_VALUE / (8.0 * ms_dtype_bytes(ms_model_spec(in->model)->dtype));
    }
    if (ratio == 1.0 && ms_policy_given(policy, "compress_cost")) {
        g_set_error(error, MS_POLICY_ERROR, MS_POLICY_ERROR_VALUE,
                    "policy schemoe: compress_cost needs compress below 1 (no compression tasks "
                    "run at compress=1)");
        return FALSE;
    }
    cfg->split_allreduce = TRUE;
    cfg->compress_ratio = ratio;
    cfg->compress_cost_s = ms_policy_get_seconds(policy, "compress_cost");
    return TRUE;
}

/* Every MoE layer in r chunks, pipelined in OptSche order. */
static void
moe_layer(const MsPolicy *policy, const MsMoeLayer *layer, MsMoeLayerPlan *out)
{
    out->chunks = ms_policy_get_uint(policy, "r");
    out->pipeline = TRUE;
    out->order = MS_PLAN_ORDER_OPTSCHE;
}

const MsPolicyClass ms_schemoe_policy = {
    .name = "schemoe",
    .summary = "r pipelined chunks in OptSche order; optional compression and Pipe-A2A",
    .params = params,
    .modes = MS_POLICY_ALL_MODES,
    .rules = {MS_DISPATCH_ORDER_READY, MS_ALLREDUCE_GATE_NONE},
    .configure = configure,
    .moe_layer = moe_layer,
};
