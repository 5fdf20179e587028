/* sweep_fixture: small inputs for the sweep tests, written as files so that they are loaded by
 * name as a user's would be: a model with two MoE layers of 8 experts and a preset of 2 nodes x 2
 * GPUs, on which a point plans and runs in milliseconds. */
#pragma once

#include "ms_test.h"
#include "sim/inputs.h"

static const char sfx_model_text[] =
    "[model]\nformat = 1\nname = tiny\ndescription = four layers, two MoE\nlayers = 4\n"
    "moe_every = 2\nmoe_first = 1\nd_model = 64\nd_ffn = 128\nexperts = 8\ntop_k = 2\n"
    "top_k_infer = 2\ngated = true\ncapacity_factor = 0\ndtype = bf16\nheads = 4\n"
    "seq_len = 32\ntokens_per_gpu = 256\ntokens_per_gpu_infer = 64\ngrad_bucket = 64KiB\n"
    "vocab = 1000\n";
static const char sfx_topology_text[] =
    "[topology]\nformat = 1\nname = tiny4\ndescription = 2 nodes x 2 GPUs\n[gpu]\n"
    "model = A100\npeak = 312TFLOPS\nhbm = 2039GBps\nmemory = 80GiB\nlaunch_overhead = 4us\n"
    "[preset]\nnodes = 2\ngpus_per_node = 2\nintra = nvswitch\nintra_bandwidth = 300GBps\n"
    "intra_links = 12\nintra_latency = 0.7us\nnics = per_gpu\nnic_bandwidth = 200Gbps\n"
    "nic_latency = 0.6us\nfabric = switch\nfabric_latency = 0.13us\n";

/* Paths of the files (written once per test program). */
static inline const char *
sfx_model(void)
{
    static char *path;
    if (path == NULL) {
        path = ms_test_write_tmp("tiny.ini", sfx_model_text);
    }
    return path;
}

static inline const char *
sfx_topology(void)
{
    static char *path;
    if (path == NULL) {
        path = ms_test_write_tmp("tiny4.ini", sfx_topology_text);
    }
    return path;
}

/* The small inputs with a policy and a trace (either may be NULL). */
static inline MsInputs *
sfx_inputs(const char *policy, const char *trace)
{
    MsInputNames names = {sfx_topology(), sfx_model(), NULL, policy, trace};
    GError *error = NULL;
    MsInputs *in = ms_inputs_load(&names, &error);
    g_assert_no_error(error);
    return in;
}
