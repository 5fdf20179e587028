/* Tests of what every command answers to bad input: each case writes a bad file into a fresh
 * folder, runs moesim there and asserts the exit code, a one-line "moesim..." message and no
 * crash or sanitizer report. The cases are also docs/bad-inputs.md: the table is rendered from
 * these runs, with the input files' limits (sim/base/input_file.c) and every field's range
 * (range_tables.h), and must equal the file (run with MS_BAD_INPUTS_WRITE=PATH to write it). */
#include "ms_test.h"

#include <glib/gstdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "range_tables.h"
#include "sim/base/input_file.h"
#include "sim/base/units.h"

/* Under AddressSanitizer the address space is its shadow's: no limit can be set on it. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* What the case's file is: written from content, a FIFO, or content followed by a hole up to
 * size bytes (a large file that takes no disk space). */
typedef enum { FILE_PLAIN, FILE_FIFO, FILE_SPARSE } FileKind;

typedef struct {
    const char *section; /* a parser or command; cases of a section are consecutive */
    const char *what;    /* the bad input, in words (markdown) */
    const char *file;    /* input written into the working folder, or NULL */
    const char *content;
    gsize len;  /* of content; 0 = strlen */
    gsize fill; /* then this many 'x' bytes (long lines) */
    const char *args[12];
    int exit;
    const char *expect; /* text the message must contain, or NULL */
    FileKind kind;
    guint64 size;       /* FILE_SPARSE: the file's length */
    const char *absent; /* text the message must not contain (a file's content), or NULL */
} BadInput;

#define HEAD                                                                                       \
    "[topology]\nformat = 1\nname = t\n[gpu]\nmodel = X\npeak = 312TFLOPS\nhbm = 2TBps\n"          \
    "memory = 80GB\nlaunch_overhead = 4us\n"
/* HEAD with a GPU of 1 FLOPS: refused, below the slowest GPU a topology may give. */
#define HEAD_SLOW                                                                                  \
    "[topology]\nformat = 1\nname = t\n[gpu]\nmodel = X\npeak = 1FLOPS\nhbm = 2TBps\n"             \
    "memory = 80GB\nlaunch_overhead = 4us\n"
#define PRESET(nodes, gpn) "[preset]\nnodes = " nodes "\ngpus_per_node = " gpn "\n"
#define SWITCHED                                                                                   \
    "intra = nvswitch\nintra_bandwidth = 300GBps\nintra_latency = 0.7us\nnics = per_gpu\n"         \
    "nic_bandwidth = 200Gbps\nnic_latency = 1us\nfabric = switch\nfabric_latency = 0.5us\n"
#define TOPO(...)                                                                                  \
    "t.ini", __VA_ARGS__, 0, 0,                                                                    \
    {                                                                                              \
        "topo", "show", "t.ini", NULL                                                              \
    }
#define TRACE_HEAD "moe-trace 1\nexperts 4\nlayers 2\nranks 2\ntop_k 2\n"
#define TRACE(...)                                                                                 \
    "t.trace", __VA_ARGS__, 0, 0,                                                                  \
    {                                                                                              \
        "trace", "info", "t.trace", NULL                                                           \
    }
#define GEN(spec)                                                                                  \
    NULL, NULL, 0, 0,                                                                              \
    {                                                                                              \
        "trace", "gen", spec, "-o", "out.trace", NULL                                              \
    }
#define FLOWS(...)                                                                                 \
    "f.txt", __VA_ARGS__, 0, 0,                                                                    \
    {                                                                                              \
        "flows", "--topology", "dgx-a100-2node", "f.txt", NULL                                     \
    }
#define COLL(...)                                                                                  \
    NULL, NULL, 0, 0,                                                                              \
    {                                                                                              \
        "collective", "--topology", "dgx-a100-2node", __VA_ARGS__, NULL                            \
    }
#define CAL_HEAD "[calibration]\nformat = 1\n"
#define CAL(...)                                                                                   \
    "c.ini", __VA_ARGS__, 0, 0,                                                                    \
    {                                                                                              \
        "collective", "--op", "allreduce", "--calibration", "c.ini", NULL                          \
    }
#define MEAS(name, ...)                                                                            \
    name, __VA_ARGS__, 0, 0,                                                                       \
    {                                                                                              \
        "calibrate", "-t", "dgx-a100", name, NULL                                                  \
    }
#define MCSV "# moesim-measurements 1\nkind,bytes,ranks,ranks_per_node,time_us\n"
#define VALIDATE(...)                                                                              \
    "r.json", __VA_ARGS__, 0, 0,                                                                   \
    {                                                                                              \
        "validate", "-s", "r.json", "-M", "r.json", NULL                                           \
    }
#define MODEL(...)                                                                                 \
    "m.ini", __VA_ARGS__, 0, 0,                                                                    \
    {                                                                                              \
        "plan", "-m", "m.ini", "-o", "s.json", NULL                                                \
    }
#define MODEL_HEAD "[model]\nformat = 1\nname = m\nlayers = 2\nd_model = 64\nd_ffn = 64\n"
#define RUN(...)                                                                                   \
    NULL, NULL, 0, 0,                                                                              \
    {                                                                                              \
        "run", __VA_ARGS__, NULL                                                                   \
    }
/* A schedule of one GPU: meta, op fields after the common ones, and collectives. */
#define SCHED_OP                                                                                   \
    "{\"id\": 0, \"rank\": 0, \"stream\": 0, \"kind\": \"compute\", \"role\": \"attention\", "     \
    "\"phase\": \"forward\", \"layer\": 0, \"chunk\": -1, \"label\": \"a\", \"priority\": 0, "     \
    "\"flags\": 0, \"deps\": [], \"compute\": \"attention\", \"tokens\": 1, \"experts\": 0, "
#define SCHED(meta, op, colls)                                                                     \
    "s.json",                                                                                      \
        "{\"format\": \"moesim-schedule\", \"version\": 2, \"ranks\": 1, \"policy\": \"fifo\", "   \
        "\"dispatch\": {\"order\": \"ready\", \"allreduce_gate\": \"none\"}, \"meta\": {" meta     \
        "}, "                                                                                      \
        "\"streams\": [{\"name\": \"compute\", \"kind\": \"compute\"}], \"ops\": [" SCHED_OP op    \
        "}], \"collectives\": [" colls "]}\n",                                                     \
        0, 0,                                                                                      \
    {                                                                                              \
        "exec", "--backend", "cpu", "s.json", NULL                                                 \
    }
#define DEEP32 "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
#define DEEP512                                                                                    \
    DEEP32 DEEP32 DEEP32 DEEP32 DEEP32 DEEP32 DEEP32 DEEP32 DEEP32 DEEP32 DEEP32 DEEP32 DEEP32     \
        DEEP32 DEEP32 DEEP32

static const BadInput cases[] = {
    {"Command line", "an unknown command", NULL, NULL, 0, 0, {"simulate", NULL}, 2},
    {"Command line", "an unknown option", NULL, NULL, 0, 0, {"topo", "show", "--colour", NULL}, 2},
    {"Command line", "a number option that is not a number", COLL("--op", "alltoall", "-g", "x"),
     2},

    {.section = "Input files (any command)",
     .what = "a character device that never ends",
     .args = {"topo", "show", "/dev/zero", NULL},
     .exit = 2,
     .expect = "/dev/zero: not a regular file"},
    {.section = "Input files (any command)",
     .what = "a character device given as a trace",
     .args = {"trace", "info", "/dev/zero", NULL},
     .exit = 2,
     .expect = "/dev/zero: not a regular file"},
    {.section = "Input files (any command)",
     .what = "a folder given as a calibration",
     .args = {"collective", "--op", "allreduce", "--calibration", ".", NULL},
     .exit = 2,
     .expect = ".: not a regular file"},
    {.section = "Input files (any command)",
     .what = "a 3 GiB trace given as a topology",
     .file = "t.trace",
     .content = "moe-trace 1\n",
     .args = {"topo", "show", "t.trace", NULL},
     .exit = 2,
     .expect = "t.trace: 3221225472 bytes",
     .kind = FILE_SPARSE,
     .size = G_GUINT64_CONSTANT(3) << 30},
    {.section = "Input files (any command)",
     .what = "a FIFO given as a topology",
     .file = "t.ini",
     .args = {"topo", "show", "t.ini", NULL},
     .exit = 2,
     .expect = "t.ini: not a regular file",
     .kind = FILE_FIFO},
    {.section = "Input files (any command)",
     .what = "a FIFO given as measurements",
     .file = "m.csv",
     .args = {"calibrate", "-t", "dgx-a100", "m.csv", NULL},
     .exit = 2,
     .expect = "m.csv: not a regular file",
     .kind = FILE_FIFO},

    {"Topology files (`moesim topo show t.ini`)", "a value without a unit: `peak = 312`",
     TOPO("[topology]\nformat = 1\nname = t\n[gpu]\nmodel = X\npeak = 312\n"), 2},
    {"Topology files (`moesim topo show t.ini`)", "a unit that is not one: `hbm = 2TB`",
     TOPO("[topology]\nformat = 1\nname = t\n[gpu]\nmodel = X\npeak = 312TFLOPS\nhbm = 2TB\n"), 2},
    {"Topology files (`moesim topo show t.ini`)", "a misspelt key: `intra_bandwith`",
     TOPO(HEAD PRESET("1", "2") "intra = nvswitch\nintra_bandwith = 300GBps\n"), 2},
    {"Topology files (`moesim topo show t.ini`)", "a key given twice",
     TOPO(HEAD PRESET("1", "1") "nodes = 2\n"), 2},
    {"Topology files (`moesim topo show t.ini`)", "a group given twice",
     TOPO(HEAD PRESET("1", "1") "[gpu]\n"), 2},
    {"Topology files (`moesim topo show t.ini`)", "an unknown group: `[presets]`",
     TOPO(HEAD "[presets]\n"), 2},
    {"Topology files (`moesim topo show t.ini`)", "a line that is not `key = value`",
     TOPO(HEAD PRESET("1", "1") "gpus: 8\n"), 2},
    {"Topology files (`moesim topo show t.ini`)", "an unsupported format: `format = 2`",
     TOPO("[topology]\nformat = 2\nname = t\n[gpu]\n"), 2},
    {"Topology files (`moesim topo show t.ini`)", "no nodes: `nodes = 0`",
     TOPO(HEAD PRESET("0", "8") SWITCHED), 2},
    {"Topology files (`moesim topo show t.ini`)", "an absurd node count: `nodes = 1000000`",
     TOPO(HEAD PRESET("1000000", "8") SWITCHED), 2},
    {"Topology files (`moesim topo show t.ini`)", "more GPUs than moesim models: 65536 x 8",
     TOPO(HEAD PRESET("65536", "8") SWITCHED), 2},
    {"Topology files (`moesim topo show t.ini`)", "a latency in the wrong unit: `5s` for `5us`",
     TOPO(HEAD PRESET("1", "2") "intra = nvswitch\nintra_bandwidth = 300GBps\n"
                                "intra_latency = 5s\n"),
     2},
    {"Topology files (`moesim topo show t.ini`)", "a key that does not apply to the shape",
     TOPO(HEAD PRESET("1", "1") "oversubscription = 2\n"), 2},
    {"Topology files (`moesim topo show t.ini`)", "a GPU that cannot reach another",
     TOPO(HEAD "[device g0]\nkind = gpu\nnode = 0\n[device g1]\nkind = gpu\nnode = 0\n"
               "[device sw]\nkind = switch\nnode = 0\n"
               "[link g0 sw]\nclass = nvswitch\nbandwidth = 300GBps\nlatency = 1us\n"
               "[link g1 sw]\nclass = nvswitch\nbandwidth = 300GBps\nlatency = 1us\n"
               "bidirectional = false\n"),
     2},
    {"Topology files (`moesim topo show t.ini`)",
     "a binary file",
     "t.ini",
     "\x7f"
     "ELF\x02\x01\0\0",
     8,
     0,
     {"topo", "show", "t.ini", NULL},
     2},
    {"Topology files (`moesim topo show t.ini`)",
     "a file that does not exist",
     NULL,
     NULL,
     0,
     0,
     {"topo", "show", "t.ini", NULL},
     2},
    {"Topology files (`moesim topo show t.ini`)",
     "a shipped name that does not exist",
     NULL,
     NULL,
     0,
     0,
     {"topo", "show", "dgx-a200", NULL},
     2},

    {"Traces (`moesim trace info t.trace`)", "not a trace", TRACE("iteration,layer\n0,1\n"), 2},
    {"Traces (`moesim trace info t.trace`)", "a newer format version", TRACE("moe-trace 2\n"), 2},
    {"Traces (`moesim trace info t.trace`)", "a header value beyond the limits: `experts 70000`",
     TRACE("moe-trace 1\nexperts 70000\nlayers 2\nranks 2\ntop_k 2\n"), 2},
    {"Traces (`moesim trace info t.trace`)", "a header whose count matrix would be absurd",
     TRACE("moe-trace 1\nexperts 65536\nlayers 4096\nranks 65536\ntop_k 2\n"), 2},
    {"Traces (`moesim trace info t.trace`)", "a header key missing",
     TRACE("moe-trace 1\nexperts 4\nlayers 2\nc 0 0 0 1 2\n"), 2},
    {"Traces (`moesim trace info t.trace`)", "a number too large for its field",
     TRACE(TRACE_HEAD "c 0 0 0 1 99999999999\n"), 2},
    {"Traces (`moesim trace info t.trace`)", "an expert id out of range",
     TRACE(TRACE_HEAD "t 0 7 0 0 1 2 4\n"), 2},
    {"Traces (`moesim trace info t.trace`)", "an expert chosen twice in one top_k",
     TRACE(TRACE_HEAD "t 0 7 0 0 1 2 2\n"), 2},
    {"Traces (`moesim trace info t.trace`)", "a token path of the wrong length",
     TRACE(TRACE_HEAD "t 0 7 0 0 1 2\n"), 2},
    {"Traces (`moesim trace info t.trace`)", "the same token twice in an iteration",
     TRACE(TRACE_HEAD "t 0 7 0 0 1 2 3\nt 0 7 0 1 0 3 2\n"), 2},
    {"Traces (`moesim trace info t.trace`)", "iterations going backwards",
     TRACE(TRACE_HEAD "t 1 7 0 0 1 2 3\nt 0 7 0 1 0 3 2\n"), 2},
    {"Traces (`moesim trace info t.trace`)", "count and token records in one iteration",
     TRACE(TRACE_HEAD "c 0 0 0 1 2\nt 0 7 0 0 1 2 3\n"), 2},
    {"Traces (`moesim trace info t.trace`)", "counts that do not make whole tokens",
     TRACE(TRACE_HEAD "c 0 0 0 1 3\nc 0 1 0 1 3\n"), 2},
    {"Traces (`moesim trace info t.trace`)", "layer groups that do not start at MoE layer 0",
     TRACE(TRACE_HEAD "groups 1\n"), 2},
    {"Traces (`moesim trace info t.trace`)", "a layer group whose layers route different tokens",
     TRACE(TRACE_HEAD "groups 0\nc 0 0 0 1 4\nc 0 1 0 1 2\n"), 2},
    {"Traces (`moesim trace info t.trace`)",
     "a 2 MB line without a newline",
     "t.trace",
     TRACE_HEAD "# ",
     0,
     2000000,
     {"trace", "info", "t.trace", NULL},
     2},
    {"Traces (`moesim trace info t.trace`)",
     "a binary trace cut short",
     "t.trace",
     "\x89MOE\r\n\x1a\n\x01\x00\x00\x00\x04\x02",
     14,
     0,
     {"trace", "info", "t.trace", NULL},
     2},
    {"Traces (`moesim trace info t.trace`)",
     "a binary trace with a bad magic",
     "t.trace",
     "\x89MOX\r\n\x1a\n\x01\x00\x00\x00",
     12,
     0,
     {"trace", "info", "t.trace", NULL},
     2},

    {"Trace generator (`moesim trace gen SPEC -o out.trace`)", "an unknown key",
     GEN("ranks=4,expert=8"), 2},
    {"Trace generator (`moesim trace gen SPEC -o out.trace`)", "both `zipf` and `hot`",
     GEN("zipf=1,hot=0.5"), 2},
    {"Trace generator (`moesim trace gen SPEC -o out.trace`)", "both `corr` and `persist`",
     GEN("corr=0.3,persist=0.4"), 2},
    {"Trace generator (`moesim trace gen SPEC -o out.trace`)", "a target it cannot reach",
     GEN("experts=4,top_k=1,ratio=4.02,persist=0.4194"), 2},
    {"Trace generator (`moesim trace gen SPEC -o out.trace`)", "`top_k` above `experts`",
     GEN("experts=2,top_k=3"), 2},
    {"Trace generator (`moesim trace gen SPEC -o out.trace`)", "an iteration too large to hold",
     GEN("ranks=65536,tokens=65536"), 2},

    {"Trace import (`moesim trace import`)",
     "a CSV without the `layer` column",
     "in.csv",
     "iteration,rank,experts\n0,0,1 2\n",
     0,
     0,
     {"trace", "import", "--from", "csv", "in.csv", "-o", "out.trace", NULL},
     2},
    {"Trace import (`moesim trace import`)",
     "a JSON line that is not JSON",
     "in.jsonl",
     "{\"layer\": 0, \"experts\": [1, 2]}\n{\"layer\": 1, \"experts\": [1, 2}\n",
     0,
     0,
     {"trace", "import", "--from", "jsonl", "in.jsonl", "-o", "out.trace", NULL},
     2},
    {"Trace import (`moesim trace import`)",
     "a JSON line nested 512 deep",
     "in.jsonl",
     "{\"layer\": 0, \"experts\": " DEEP512 "\n",
     0,
     0,
     {"trace", "import", "--from", "jsonl", "in.jsonl", "-o", "out.trace", NULL},
     2},
    {"Trace import (`moesim trace import`)",
     "counts without `--top-k`",
     "in.csv",
     "layer,rank,e0,e1\n0,0,2,2\n",
     0,
     0,
     {"trace", "import", "--from", "counts-csv", "in.csv", "-o", "out.trace", NULL},
     2},

    {"Model files (`moesim plan -m m.ini -o s.json`)", "a required key missing",
     MODEL("[model]\nformat = 1\nname = m\nlayers = 2\nd_model = 4096\n"), 2},
    {"Model files (`moesim plan -m m.ini -o s.json`)", "an absurd layer count",
     MODEL("[model]\nformat = 1\nname = m\nlayers = 5000\n"), 2},
    {"Model files (`moesim plan -m m.ini -o s.json`)", "`top_k` above `experts`",
     MODEL(MODEL_HEAD "experts = 8\ntop_k = 9\nheads = 1\nseq_len = 8\ntokens_per_gpu = 8\n"), 2},
    {"Model files (`moesim plan -m m.ini -o s.json`)", "heads that do not divide `d_model`",
     MODEL(MODEL_HEAD "experts = 8\ntop_k = 2\nheads = 3\nseq_len = 8\ntokens_per_gpu = 8\n"), 2},
    {"Model files (`moesim plan -m m.ini -o s.json`)", "layer groups that overlap",
     MODEL(MODEL_HEAD "experts = 8\ntop_k = 2\nheads = 1\nseq_len = 8\ntokens_per_gpu = 8\n"
                      "[group encoder]\nlayers = 0-1\n[group decoder]\nlayers = 1\n"),
     2},
    {"Model files (`moesim plan -m m.ini -o s.json`)", "a layer in no group",
     MODEL(MODEL_HEAD "experts = 8\ntop_k = 2\nheads = 1\nseq_len = 8\ntokens_per_gpu = 8\n"
                      "[group encoder]\nlayers = 0\n"),
     2},
    {"Model files (`moesim plan -m m.ini -o s.json`)", "a group's value out of range",
     MODEL(MODEL_HEAD "experts = 8\ntop_k = 2\nheads = 1\nseq_len = 8\ntokens_per_gpu = 8\n"
                      "[group encoder]\nlayers = 0-1\ntokens_per_gpu = 0\n"),
     2},
    {"Model files (`moesim plan -m m.ini -o s.json`)", "an empty list: `moe_layers =`",
     MODEL(MODEL_HEAD "experts = 8\ntop_k = 2\nheads = 1\nseq_len = 8\ntokens_per_gpu = 8\n"
                      "moe_layers =\n"),
     2},
    {"Model files (`moesim plan -m m.ini -o s.json`)",
     "a shipped name that does not exist",
     NULL,
     NULL,
     0,
     0,
     {"plan", "-m", "mixtral-8x8b", "-o", "s.json", NULL},
     2},

    {"Policies and runs (`moesim run`)", "an unknown policy", RUN("-P", "linaa"), 2},
    {"Policies and runs (`moesim run`)", "a parameter the policy does not take",
     RUN("-P", "fifo:chunk=1MB"), 2},
    {"Policies and runs (`moesim run`)", "a parameter without a value", RUN("-P", "lina:chunk"), 2},
    {"Policies and runs (`moesim run`)", "chunks too small to be sane", RUN("-P", "lina:chunk=1KB"),
     2},
    {"Policies and runs (`moesim run`)", "a count out of range", RUN("-P", "schemoe:r=0"), 2},
    {"Policies and runs (`moesim run`)", "an unknown mode", RUN("--mode", "training"), 2},
    {"Policies and runs (`moesim run`)", "an unknown engine", RUN("--engine", "packets"), 2},
    {"Policies and runs (`moesim run`)", "a straggler that is not GPU=FACTOR",
     RUN("--straggler", "4"), 2},
    {"Policies and runs (`moesim run`)", "a straggler beyond the GPUs used",
     RUN("--straggler", "16=1.2"), 2},
    {"Policies and runs (`moesim run`)", "a straggler faster than its peers",
     RUN("--straggler", "4=0.5"), 2},
    {.section = "Policies and runs (`moesim run`)",
     .what = "a sweep's straggler value beyond the GPUs used",
     .args = {"sweep", "--vary", "straggler=4=1.5,16=1.2", "--out", "sw", NULL},
     .exit = 2,
     .expect = "sweep: straggler '16=1.2': GPU 16 is not among the 16 GPUs"},
    {"Policies and runs (`moesim run`)", "a slow link the topology lacks",
     RUN("--slow-link", "n9.nic0->fabric=2"), 2},
    {"Policies and runs (`moesim run`)", "a slow link made faster",
     RUN("--slow-link", "n0.nic0->fabric=0.5"), 2},
    {"Policies and runs (`moesim run`)", "more worker threads than allowed", RUN("--jobs", "2000"),
     2},
    {.section = "Policies and runs (`moesim run`)",
     .what = "a sweep's network model with a key it does not have",
     .args = {"sweep", "--vary", "net=flow;nccl:version=2.10,lattency_scale=2", "--out", "sw",
              NULL},
     .exit = 2,
     .expect = "sweep: net=nccl:version=2.10,lattency_scale=2: network model nccl has no key"},
    {.section = "Policies and runs (`moesim run`)",
     .what = "a sweep's slow link the topology lacks",
     .args = {"sweep", "--vary", "slow-link=n0.nic0->fabric=2;fabric->n9.nic0=2", "--out", "sw",
              NULL},
     .exit = 2,
     .expect = "sweep: slow-link 'fabric->n9.nic0=2': topology 'lina-testbed' has no link"},
    {"Policies and runs (`moesim run`)", "a negative iteration count", RUN("-n", "-1"), 2},
    {"Policies and runs (`moesim run`)", "an iteration count of 0", RUN("-n", "0"), 2},
    {"Policies and runs (`moesim run`)", "an unknown backend", RUN("--backend", "simx"), 2},
    {"Policies and runs (`moesim run`)", "a routing that does not fit the cluster",
     RUN("-T", "gen:ranks=3"), 2},
    {"Policies and runs (`moesim run`)", "more GPUs than the cluster has", RUN("--gpus", "17"), 2},
    {"Policies and runs (`moesim run`)", "GPUs that are not the first ones", RUN("--gpus", "8-15"),
     2},
    {"Policies and runs (`moesim run`)", "ranks repeated past the GPUs used",
     RUN("-T", "gen:ranks=4", "--ranks", "8x"), 2},
    {"Policies and runs (`moesim run`)",
     "a trace with no iteration left after warm-up",
     "t.trace",
     "moe-trace 1\nexperts 8\nlayers 32\nranks 16\ntop_k 2\n",
     0,
     0,
     {"run", "-T", "t.trace", "--warmup", "1", NULL},
     2},
    {"Policies and runs (`moesim run`)",
     "a GPU of 1 FLOPS (slower than any GPU with tensor cores)",
     "t.ini",
     HEAD_SLOW PRESET("1", "8") "intra = nvswitch\nintra_bandwidth = 300GBps\n"
                                "intra_latency = 0.7us\n",
     0,
     0,
     {"run", "-t", "t.ini", "--model", "switch-base-8", NULL},
     2},

    {"Flow lists (`moesim flows --topology dgx-a100-2node f.txt`)", "too few fields",
     FLOWS("f1 gpu0 gpu8 25MB\n"), 2},
    {"Flow lists (`moesim flows --topology dgx-a100-2node f.txt`)", "a size without a unit",
     FLOWS("f1 gpu0 gpu8 25 0us\n"), 2},
    {"Flow lists (`moesim flows --topology dgx-a100-2node f.txt`)", "a size beyond 1 PiB",
     FLOWS("f1 gpu0 gpu8 2048TiB 0us\n"), 2},
    {"Flow lists (`moesim flows --topology dgx-a100-2node f.txt`)", "an unknown device",
     FLOWS("f1 gpu0 gpu16 25MB 0us\n"), 2},
    {"Flow lists (`moesim flows --topology dgx-a100-2node f.txt`)", "a flow id used twice",
     FLOWS("f1 gpu0 gpu8 25MB 0us\nf1 gpu1 gpu9 25MB 0us\n"), 2},
    {"Flow lists (`moesim flows --topology dgx-a100-2node f.txt`)", "a weight out of range",
     FLOWS("f1 gpu0 gpu8 25MB 0us weight=0\n"), 2},
    {"Flow lists (`moesim flows --topology dgx-a100-2node f.txt`)", "a dependency on no flow",
     FLOWS("f1 gpu0 gpu8 25MB 0us after=f2\n"), 2},
    {"Flow lists (`moesim flows --topology dgx-a100-2node f.txt`)", "a dependency cycle",
     FLOWS("f1 gpu0 gpu8 25MB 0us after=f2\nf2 gpu8 gpu0 1MB 0us after=f1\n"), 2},

    {"Collective sweeps (`moesim collective`)", "an unknown operation", COLL("--op", "alltoal"), 2},
    {"Collective sweeps (`moesim collective`)", "`--minbytes` above `--maxbytes`",
     COLL("--op", "alltoall", "-b", "1G", "-e", "1M"), 2},
    {"Collective sweeps (`moesim collective`)", "a step factor that never grows",
     COLL("--op", "alltoall", "-f", "1"), 2},
    {"Collective sweeps (`moesim collective`)", "a size beyond 1 PiB",
     COLL("--op", "alltoall", "-e", "2048TiB"), 2},
    {"Collective sweeps (`moesim collective`)", "more ranks than the topology has GPUs",
     COLL("--op", "alltoall", "-g", "17"), 2},
    {.section = "Collective sweeps (`moesim collective`)",
     .what = "under `--net nccl`, an NVSwitch bundle without its link count (300 GB/s as one "
             "NVLink)",
     .file = "t.ini",
     .content = HEAD PRESET("1", "8") SWITCHED,
     .args = {"collective", "--topology", "t.ini", "--op", "allreduce", "--net", "nccl:arch=sm80",
              NULL},
     .exit = 2,
     .expect = "300 GB/s over 1 NVLink, more than the 50 GB/s"},

    {"Calibration files (`moesim collective --calibration c.ini`)",
     "a format this moesim does not read", CAL("[calibration]\nformat = 2\n"), 2},
    {"Calibration files (`moesim collective --calibration c.ini`)", "an unknown link class",
     CAL(CAL_HEAD "[link infiniband]\nbandwidth = 25GBps\nlatency = 2us\n"), 2},
    {"Calibration files (`moesim collective --calibration c.ini`)", "lists of different lengths",
     CAL(CAL_HEAD "[collective allreduce]\nalpha = 10us\nsizes = 1KB;1MB\nefficiency = 0.5\n"), 2},
    {"Calibration files (`moesim collective --calibration c.ini`)", "sizes not increasing",
     CAL(CAL_HEAD "[collective allreduce]\nalpha = 10us\nsizes = 1MB;1KB\n"
                  "efficiency = 0.5;0.9\n"),
     2},
    {.section = "Calibration files (`moesim collective --calibration c.ini`)",
     .what = "an efficiency so small that stretched transfers would overflow",
     .file = "c.ini",
     .content = CAL_HEAD "[collective alltoall]\nalpha = 10us\nsizes = 1KB;1GB\n"
                         "efficiency = 1e-15;1e-15\n",
     .args = {"run", "-t", "dgx-a100", "-m", "switch-base-8", "--calibration", "c.ini", NULL},
     .exit = 2,
     .expect = "out of range"},

    {"Measurements (`moesim calibrate -t dgx-a100 FILE`)", "a file in no known format",
     MEAS("m.txt", "size,time\n8,1.5\n"), 2},
    {"Measurements (`moesim calibrate -t dgx-a100 FILE`)", "a moesim CSV of another version",
     MEAS("m.csv", "# moesim-measurements 3\nkind,time_us\n"), 2},
    {"Measurements (`moesim calibrate -t dgx-a100 FILE`)", "a negative time",
     MEAS("m.csv", MCSV "allreduce,1048576,16,8,-4\n"), 2},
    {"Measurements (`moesim calibrate -t dgx-a100 FILE`)", "a row with a field missing",
     MEAS("m.csv", MCSV "allreduce,1048576,16,8\n"), 2},
    {"Measurements (`moesim calibrate -t dgx-a100 FILE`)",
     "a kernel timed under an allreduce without its kernel alone",
     MEAS("m.csv", "# moesim-measurements 2\nkind,m,n,k,dtype,label,time_us,background_bytes\n"
                   "gemm,256,4096,14336,bf16,mlp_down_proj,120,26214400\n"),
     2},
    {"Measurements (`moesim calibrate -t dgx-a100 FILE`)",
     "an nccl-tests run that failed its check",
     MEAS("all_reduce_perf.log",
          "#  Rank  0 Group  0 Pid 1 on host-a device  0 [0x07] NVIDIA A100-SXM4-80GB\n"
          "#       size         count      type   redop    root     time   algbw   busbw #wrong"
          "     time   algbw   busbw #wrong\n"
          "        8192          2048     float     sum      -1    30.12    0.27    0.00      3"
          "    29.85    0.27    0.00      0\n"),
     2},

    {"Measurements (`moesim calibrate -t dgx-a100 FILE`)",
     "an nccl-tests line with a negative size",
     MEAS("all_reduce_perf.log",
          "#  Rank  0 Group  0 Pid 1 on host-a device  0 [0x07] NVIDIA A100-SXM4-80GB\n"
          "#       size         count      type   redop    root     time   algbw   busbw #wrong"
          "     time   algbw   busbw #wrong\n"
          "       -8192          2048     float     sum      -1    30.12    0.27    0.00      0"
          "    29.85    0.27    0.00      0\n"),
     2},

    {.section = "Schedules (`moesim exec --backend cpu s.json`)",
     .what = "a topology named by a path: `\"topology\": \"/etc/passwd\"`",
     SCHED("\"topology\": \"/etc/passwd\"",
           "\"flops\": 1000.0, \"bytes\": 1000.0, \"shape\": [1, 1, 1, 1]", ""),
     .exit = 2,
     .expect = "'/etc/passwd' is not a shipped topology",
     .absent = "root:"},

    {.section = "Schedules (`moesim exec --backend cpu s.json`)",
     .what = "a key given twice in one object",
     SCHED("", "\"flops\": 1000.0, \"flops\": 2000.0, \"bytes\": 1000.0, \"shape\": [1, 1, 1, 1]",
           ""),
     .exit = 2,
     .expect = "s.json:1: key 'flops' given twice in one object"},
    {.section = "Schedules (`moesim exec --backend cpu s.json`)",
     .what = "flops with an empty shape",
     SCHED("", "\"flops\": 1000.0, \"bytes\": 1000.0, \"shape\": [0, 0, 0, 0]", ""),
     .exit = 2,
     .expect = "op 0: field 'shape': [0, 0, 0, 0] is empty but the op has 1000 flops"},
    {.section = "Schedules (`moesim exec --backend cpu s.json`)",
     .what = "an all-to-all with an allreduce's algorithm: `\"algo\": \"ring\"`",
     SCHED(
         "", "\"flops\": 1000.0, \"bytes\": 1000.0, \"shape\": [1, 1, 1, 1]",
         "{\"id\": 0, \"kind\": \"alltoall\", \"algo\": \"ring\", \"window\": 0, \"label\": \"x\", "
         "\"ranks\": [0], \"ops\": [0], \"matrix\": [[0]]}"),
     .exit = 2,
     .expect = "collective 0: field 'algo': 'ring' is not an algorithm of alltoall"},
    {.section = "Schedules (`moesim exec --backend cpu s.json`)",
     .what = "an absurd window: `\"window\": 1000000000`",
     SCHED("", "\"flops\": 1000.0, \"bytes\": 1000.0, \"shape\": [1, 1, 1, 1]",
           "{\"id\": 0, \"kind\": \"alltoall\", \"algo\": \"direct\", \"window\": 1000000000, "
           "\"label\": \"x\", \"ranks\": [0], \"ops\": [0], \"matrix\": [[0]]}"),
     .exit = 2,
     .expect = "collective 0: field 'window': 1000000000 out of range [0, 65536]"},

    {.section = "Schedules (`moesim exec --backend cpu s.json`)",
     .what = "a dependency cycle through a collective",
     .file = "s.json",
     .content =
         "{\"format\": \"moesim-schedule\", \"version\": 2, \"ranks\": 2, "
         "\"policy\": \"fifo\", \"dispatch\": {\"order\": \"ready\", "
         "\"allreduce_gate\": \"none\"}, \"meta\": {\"topology\": \"dgx-a100\"}, "
         "\"streams\": [{\"name\": \"compute\", \"kind\": \"compute\"}, {\"name\": \"comm\", "
         "\"kind\": \"comm\"}], \"ops\": [{\"id\": 0, \"rank\": 0, \"stream\": 0, "
         "\"kind\": \"compute\", \"role\": \"attention\", \"phase\": \"forward\", \"layer\": 0, "
         "\"chunk\": -1, \"label\": \"c0\", \"priority\": 0, \"flags\": 0, \"deps\": [3], "
         "\"compute\": \"attention\", \"flops\": 1000.0, \"bytes\": 1000.0, \"tokens\": 1, "
         "\"shape\": [1, 1, 1, 1], \"experts\": 0}, {\"id\": 1, \"rank\": 0, \"stream\": 1, "
         "\"kind\": \"comm\", \"role\": \"dispatch\", \"phase\": \"forward\", \"layer\": 0, "
         "\"chunk\": -1, \"label\": \"a1\", \"priority\": 0, \"flags\": 0, \"deps\": [0], "
         "\"coll\": 0}, {\"id\": 2, \"rank\": 1, \"stream\": 1, \"kind\": \"comm\", "
         "\"role\": \"dispatch\", \"phase\": \"forward\", \"layer\": 0, \"chunk\": -1, "
         "\"label\": \"a2\", \"priority\": 0, \"flags\": 0, \"deps\": [], \"coll\": 0}, "
         "{\"id\": 3, \"rank\": 1, \"stream\": 0, \"kind\": \"compute\", "
         "\"role\": \"attention\", \"phase\": \"forward\", \"layer\": 0, \"chunk\": -1, "
         "\"label\": \"c3\", \"priority\": 0, \"flags\": 0, \"deps\": [2], "
         "\"compute\": \"attention\", \"flops\": 1000.0, \"bytes\": 1000.0, \"tokens\": 1, "
         "\"shape\": [1, 1, 1, 1], \"experts\": 0}], \"collectives\": [{\"id\": 0, "
         "\"kind\": \"alltoall\", \"algo\": \"direct\", \"window\": 0, \"label\": \"x\", "
         "\"ranks\": [0, 1], \"ops\": [1, 2], \"matrix\": [[0, 8], [8, 0]]}]}"
         "\n",
     .args = {"exec", "--backend", "cpu", "s.json", NULL},
     .exit = 2,
     .expect = "s.json: op 0 (c0) is part of a dependency cycle (through deps and collectives)"},

    {"Results (`moesim validate -s r.json -m r.json`)", "not JSON", VALIDATE("{\"format\": \n"), 2},
    {"Results (`moesim validate -s r.json -m r.json`)", "JSON that is not a moesim result",
     VALIDATE("{\"format\": \"moesim-schedule\"}\n"), 2},
    {"Results (`moesim validate -s r.json -m r.json`)", "op records that are not objects",
     VALIDATE("{\"format\": \"moesim-result\", \"ops\": [1, 2]}\n"), 2},
    {"Results (`moesim validate -s r.json -m r.json`)", "two JSON documents in one file",
     VALIDATE("{\"format\": \"moesim-result\", \"ops\": []}\n{\"ops\": []}\n"), 2},
    {"Results (`moesim validate -s r.json -m r.json`)", "JSON nested 512 deep",
     VALIDATE(DEEP512 DEEP32), 2},
    {"Baselines (`moesim check --baseline b.json`)",
     "not a baseline",
     "b.json",
     "{\"format\": \"moesim-result\", \"scenarios\": []}\n",
     0,
     0,
     {"check", "--baseline", "b.json", NULL},
     2},
    {"Baselines (`moesim check --baseline b.json`)",
     "JSON nested 512 deep",
     "b.json",
     DEEP512 DEEP32,
     0,
     0,
     {"check", "--baseline", "b.json", NULL},
     2},
    {"Baselines (`moesim check --baseline b.json`)",
     "a tolerance that is not a number",
     NULL,
     NULL,
     0,
     0,
     {"check", "--baseline", "b.json", "--tolerance", "two", NULL},
     2},
    {NULL},
};

/* moesim answers bad input without needing much memory: an input it read whole before checking
 * it (an endless device, a huge file) makes it fail here instead of exhausting the machine. 2 GiB
 * of address space is ten times what a run of the shipped models maps. */
static void
limit_memory(gpointer data)
{
    (void)data;
#ifndef UNDER_ASAN
    struct rlimit lim = {.rlim_cur = G_GUINT64_CONSTANT(2) << 30, .rlim_max = RLIM_INFINITY};
    setrlimit(RLIMIT_AS, &lim);
#endif
}

static void
write_input(const BadInput *c, const char *dir)
{
    g_autofree char *path = g_build_filename(dir, c->file, NULL);
    if (c->kind == FILE_FIFO) {
        g_assert(mkfifo(path, 0600) == 0);
        return;
    }
    GString *data = g_string_new_len(c->content, c->len ? (gssize)c->len : -1);
    for (gsize i = 0; i < c->fill; i++) {
        g_string_append_c(data, 'x');
    }
    g_assert(g_file_set_contents(path, data->str, (gssize)data->len, NULL));
    g_string_free(data, TRUE);
    if (c->kind == FILE_SPARSE) {
        g_assert(truncate(path, (off_t)c->size) == 0);
    }
}

/* Runs one case in a fresh folder; returns the exit status (-1 for a signal) and stderr. */
static int
run_case(const BadInput *c, char **err)
{
    g_autofree char *dir = g_dir_make_tmp("moesim-bad-XXXXXX", NULL);
    g_assert(dir != NULL);
    if (c->file) {
        write_input(c, dir);
    }
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)ms_test_moesim());
    for (guint i = 0; c->args[i]; i++) {
        g_ptr_array_add(argv, (gpointer)c->args[i]);
    }
    g_ptr_array_add(argv, NULL);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "LC_ALL", "C", TRUE);
    int status = 0;
    g_autofree char *out = NULL;
    gboolean ok = g_spawn_sync(dir, (char **)argv->pdata, env, G_SPAWN_DEFAULT, limit_memory, NULL,
                               &out, err, &status, NULL);
    g_ptr_array_free(argv, TRUE);
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name(d)) != NULL) {
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_unlink(path);
    }
    g_rmdir(dir);
    g_assert(ok);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The first line of text with '|' escaped for a markdown table. */
static char *
table_cell(const char *text)
{
    const char *nl = strchr(text, '\n');
    g_autofree char *line = g_strndup(text, nl ? (gsize)(nl - text) : strlen(text));
    g_auto(GStrv) parts = g_strsplit(line, "|", -1);
    return g_strjoinv("\\|", parts);
}

/* The kinds of input file and their limits, from sim/base/input_file.c. */
static void
render_limits(GString *md)
{
    g_string_append(md, "\n## Input files and their limits\n\n"
                        "Every file moesim reads is checked before it is read: it must be a "
                        "regular file (a\ndevice, FIFO or folder is refused, so nothing blocks or "
                        "reads without end), and a kind\nread whole must be within its limit; the "
                        "message names the file and the limit. A UTF-8 byte order mark at the "
                        "start of a file is\nread past, and a JSON object with a key given twice "
                        "is refused.\n\n"
                        "| input | read by | limit | why |\n| --- | --- | --- | --- |\n");
    for (guint k = 0; k < MS_INPUT_N_KINDS; k++) {
        const MsInputKindInfo *info = ms_input_kind_info(k);
        char limit[32];
        if (info->max_bytes) {
            ms_format_bytes(info->max_bytes, limit, sizeof limit);
        } else {
            g_strlcpy(limit, "none (streamed)", sizeof limit);
        }
        g_string_append_printf(md, "| %s | %s | %s | %s |\n", info->name + 2, info->read_by, limit,
                               info->reason);
    }
}

static char *
render(GPtrArray *answers)
{
    GString *md = g_string_new(
        "# What moesim answers to bad input\n\n"
        "Every row below is a run of the `moesim` command line on a bad input, generated by\n"
        "`tests/test_bad_inputs.c`, which checks on every test run that this file still says what\n"
        "moesim answers, and that every message names its source: the file (and, where it has\n"
        "them, line, group and key), or the option or argument it comes from. Exit status 2\n"
        "means bad input or usage; moesim never crashes, hangs or prints a number it could not\n"
        "compute. Regenerate the file after changing a message:\n\n"
        "```sh\n"
        "MS_BAD_INPUTS_WRITE=$PWD/docs/bad-inputs.md meson test -C build bad_inputs\n"
        "```\n\n"
        "The fuzz targets in `tests/fuzz/` try far more inputs than these (and the `sim` target\n"
        "runs what they accept); the limits that keep absurd sizes from being allocated are\n"
        "listed in each format's documentation, the limits on files and the range of every\n"
        "number below.\n");
    render_limits(md);
    render_ranges(md);
    const char *section = NULL;
    for (guint i = 0; cases[i].section; i++) {
        if (section == NULL || strcmp(section, cases[i].section) != 0) {
            section = cases[i].section;
            g_string_append_printf(md,
                                   "\n## %s\n\n| bad input | moesim answers | exit |\n"
                                   "| --- | --- | --- |\n",
                                   section);
        }
        g_autofree char *cmd = g_strjoinv(" ", (char **)cases[i].args);
        g_autofree char *answer = table_cell(answers->pdata[i]);
        /* Double backticks: messages quote commands in single ones. */
        g_string_append_printf(md, "| %s (`moesim %s`) | `` %s `` | %d |\n", cases[i].what, cmd,
                               answer, cases[i].exit);
    }
    return g_string_free(md, FALSE);
}

/* Whether a case's message names where the bad input came from: its file when it has one (as
 * "FILE:" or 'FILE'), else an option ("--name") or a word of its arguments (a command, a
 * policy, a key, a value, a shipped name: the arguments split at ":=,"), so that a user knows
 * what to fix. */
static gboolean
names_source(const BadInput *c, const char *err)
{
    if (c->file) {
        g_autofree char *colon = g_strconcat(c->file, ":", NULL);
        g_autofree char *quoted = g_strconcat("'", c->file, "'", NULL);
        return strstr(err, colon) || strstr(err, quoted);
    }
    if (strstr(err, " --")) {
        return TRUE;
    }
    /* The command's own words (trace info, topo show) name nothing unless quoted. */
    static const char *const commands[] = {"topo", "trace", "model", NULL};
    guint first = g_strv_contains(commands, c->args[0]) && c->args[1] ? 2 : 1;
    for (guint i = 0; c->args[i]; i++) {
        g_autofree char *colon = g_strconcat(c->args[i], ":", NULL);
        g_autofree char *quoted = g_strconcat("'", c->args[i], "'", NULL);
        if (strstr(err, colon) || strstr(err, quoted)) {
            return TRUE;
        }
        if (i < first) {
            continue;
        }
        g_auto(GStrv) words = g_strsplit_set(c->args[i], ":=,", -1);
        for (guint w = 0; words[w]; w++) {
            if (strlen(words[w]) > 1 && words[w][0] != '-' && strstr(err, words[w])) {
                return TRUE;
            }
        }
    }
    return FALSE;
}

static void
test_cases(void)
{
    g_autoptr(GPtrArray) answers = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; cases[i].section; i++) {
        char *err = NULL;
        int rc = run_case(&cases[i], &err);
        if (rc != cases[i].exit || !g_str_has_prefix(err, "moesim") || strstr(err, "CRITICAL") ||
            strstr(err, "WARNING") || strstr(err, "Sanitizer") || strstr(err, "runtime error") ||
            (cases[i].expect && strstr(err, cases[i].expect) == NULL) ||
            (cases[i].absent && strstr(err, cases[i].absent) != NULL)) {
            fprintf(stderr, "\n  case '%s' (%s): exit %d, stderr:\n%s\n", cases[i].what,
                    cases[i].section, rc, err);
            CU_FAIL("unexpected answer to bad input");
        }
        if (!names_source(&cases[i], err)) {
            fprintf(stderr,
                    "\n  case '%s' (%s): the message names neither its file nor an "
                    "argument:\n%s\n",
                    cases[i].what, cases[i].section, err);
            CU_FAIL("a message without its source");
        }
        g_ptr_array_add(answers, err);
    }
    g_autofree char *md = render(answers);
    const char *write = g_getenv("MS_BAD_INPUTS_WRITE");
    if (write) {
        CU_ASSERT_TRUE(g_file_set_contents(write, md, -1, NULL));
        return;
    }
    g_autofree char *doc_path = g_build_filename(ms_test_srcdir(), "docs", "bad-inputs.md", NULL);
    g_autofree char *doc = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(doc_path, &doc, NULL, NULL));
    if (strcmp(doc, md) != 0) {
        fprintf(stderr, "\n  docs/bad-inputs.md differs from what moesim answers now; "
                        "regenerate it (see its head)\n");
        CU_FAIL("docs/bad-inputs.md is out of date");
    }
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"every bad input gets exit 2 and one located message, as documented", test_cases},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"bad_inputs", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
