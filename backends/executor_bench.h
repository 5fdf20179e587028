/* executor_bench: the calibration microbenchmarks a per-rank backend runs (its bench hook), in a
 * form every rank receives: point-to-point transfers between rank pairs chosen per link class,
 * all-to-all and allreduce size sweeps, GEMM sweeps over token counts for the shapes of an expert
 * (up projection, activation, down projection), the launch overhead of an empty kernel, and the
 * concurrency benchmark (all-to-alls alone and while an allreduce loops on another communicator);
 * the NCCL settings (channels, queue pairs per connection) a run is made under, as environment
 * variables every rank's process must carry. Also nccl-tests' bandwidth figures of a
 * communication row (validate/bench_report.h prints the tables). Sizes in bytes, seconds in
 * measurement rows (sim/calib/meas_csv.h). */
#pragma once

#include <glib.h>

#include "topologies/topology.h"
#include "sim/calib/meas_kind.h"

G_BEGIN_DECLS

#define MS_BENCH_ERROR (ms_bench_error_quark())
GQuark ms_bench_error_quark(void);
typedef enum {
    MS_BENCH_ERROR_SPEC, /* an option or a spec field out of range, or a malformed spec */
} MsBenchError;

/* Sets an MS_BENCH_ERROR_SPEC error from a printf format; returns FALSE. */
gboolean ms_bench_spec_error(GError **error, const char *format, ...) G_GNUC_PRINTF(2, 3);

/* What to measure (a bit set). */
enum {
    MS_BENCH_P2P = 1 << 0,
    MS_BENCH_ALLTOALL = 1 << 1,
    MS_BENCH_ALLREDUCE = 1 << 2,
    MS_BENCH_GEMM = 1 << 3,
    MS_BENCH_LAUNCH = 1 << 4,
    MS_BENCH_CONCURRENCY = 1 << 5,
    /* The expert kernels alone and each while an allreduce loops on another communicator and
     * stream (the compute model's overlap slowdown); with one rank, alone only. */
    MS_BENCH_OVERLAP = 1 << 6,
    MS_BENCH_ALL = (1 << 7) - 1,
};

/* Limits the spec is checked against. */
#define MS_BENCH_MAX_ITERS 100000u
#define MS_BENCH_MAX_BYTES (G_GUINT64_CONSTANT(1) << 34)
#define MS_BENCH_MAX_TOKENS 1048576u
#define MS_BENCH_MAX_DIM 262144u
#define MS_BENCH_MAX_POINTS 4096u
/* Allreduce calls the concurrency benchmark may loop under the all-to-alls of one size. */
#define MS_BENCH_MAX_LOOP 1000000u

/* One point-to-point measurement: rank a sends to rank b. */
typedef struct {
    guint32 a, b;
    guint32 ranks_per_node; /* 2 when a and b share a node, else 1 */
    char *label;            /* the link class (or "same-node" / "cross-node") */
} MsBenchPair;

typedef struct {
    guint32 what;
    guint64 min_bytes, max_bytes; /* communication sweeps */
    double step_factor;
    guint32 iters, warmup;
    char *dtype; /* "bf16" or "fp16" */
    guint32 world, ranks_per_node;
    guint64 d_model, d_ffn; /* the expert whose GEMMs are swept */
    gboolean gated;
    GArray *tokens; /* guint32, increasing */
    GArray *pairs;  /* MsBenchPair */
    /* The concurrency benchmark: the all-to-all sizes (guint64, increasing) and the allreduce that
     * loops under them on a second communicator. */
    GArray *concurrency_sizes;
    guint64 background_bytes;
    /* NCCL's settings every rank runs under (ms_bench_nccl_env); 0: NCCL's own. */
    guint32 channels, qps;
} MsBenchSpec;

/* Defaults: everything, 8 B to 128 MiB by 2x, 20 iterations after 5 warm-up ones, bf16, one
 * Mixtral-8x7B expert (d_model 4096, d_ffn 14336, gated) at 1, 2, 4 ... 8192 tokens; all-to-alls
 * of 1, 4, 16 and 64 MiB under a 25 MiB allreduce (PyTorch DDP's default gradient bucket,
 * bucket_cap_mb = 25), NCCL's own channels and queue pairs. */
MsBenchSpec *ms_bench_spec_new(void);
void ms_bench_spec_free(MsBenchSpec *spec);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsBenchSpec, ms_bench_spec_free)

/* "p2p,alltoall,allreduce,gemm,launch,concurrency,overlap" in any order and subset, or "all". FALSE
 * with MS_BENCH_ERROR_SPEC naming the unknown item. */
gboolean ms_bench_parse_what(const char *list, guint32 *what, GError **error);
/* Every field in range (MS_BENCH_ERROR_SPEC naming the field and the value otherwise). */
gboolean ms_bench_spec_check(const MsBenchSpec *spec, GError **error);

/* The spec as every rank receives it (JSON), and back (checked). */
GBytes *ms_bench_spec_to_bytes(const MsBenchSpec *spec);
MsBenchSpec *ms_bench_spec_from_bytes(GBytes *bytes, GError **error);

/* Sizes of the communication sweeps: min, min x step, ... up to max (guint64). */
GArray *ms_bench_sizes(const MsBenchSpec *spec);

/* NCCL reads NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS and NCCL_IB_QPS_PER_CONNECTION from the
 * environment once per process, when its first communicator is made (src/include/param.h caches
 * every NCCL_PARAM), so one run has one value of each, and every rank's process must carry it:
 * spec->channels stands for NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS, spec->qps for
 * NCCL_IB_QPS_PER_CONNECTION. */

/* Where the options left spec->channels or ->qps at 0, takes them from envp (NULL: this
 * process's environment): both channel bounds set and equal, the queue pairs set. FALSE with
 * MS_BENCH_ERROR_SPEC naming the variable when the environment sets channels in a way a row
 * cannot record (one bound alone, bounds that differ, the older NCCL_MIN_NRINGS and
 * NCCL_MAX_NRINGS) or a value that is not a count in range. */
gboolean ms_bench_nccl_env(MsBenchSpec *spec, const char *const *envp, GError **error);
/* The variables spec's settings stand for as "NAME=VALUE" (free with g_strfreev): what a command
 * sets in its environment before any rank starts. */
char **ms_bench_nccl_assignments(const MsBenchSpec *spec);
/* Whether envp (NULL: this process's environment) carries exactly spec's settings: each one's
 * variables at its value, and none of the channel or queue pair variables where spec leaves them
 * to NCCL. FALSE with MS_BENCH_ERROR_SPEC naming the variable, its value and the spec's. */
gboolean ms_bench_nccl_env_check(const MsBenchSpec *spec, const char *const *envp, GError **error);

/* The version of the measurement CSV (sim/calib/meas_csv.h) a run of spec writes: 2 with the
 * concurrency or overlap benchmark or NCCL settings (their kind and columns), else 1. */
guint ms_bench_csv_version(const MsBenchSpec *spec);

/* Fills spec->world, ->ranks_per_node and ->pairs from the ranks' host names: rank 0 with the
 * first rank whose route from it has a link class not met yet, the class being that of the
 * narrowest link on the route (topology given; its GPUs must cover world) or the rank's node
 * (same-node, cross-node). FALSE with MS_BENCH_ERROR_SPEC when the topology is too small. */
gboolean ms_bench_plan_pairs(MsBenchSpec *spec, const MsTopology *topo, const char *const *hosts,
                             guint world, GError **error);

/* One expert kernel swept over token counts. */
typedef struct {
    MsMeasurementKind kind; /* gemm or elementwise */
    guint64 m, n, k;        /* gemm: (m x k) . (k x n); elementwise: m rows of n */
    guint64 bytes;          /* elementwise: bytes read plus written */
    const char *label;      /* mlp_up_proj, mlp_act, mlp_down_proj */
} MsBenchKernel;

/* The three kernels of one expert at tokens tokens, in the layout calibration reads
 * (docs/calibration-format.md): the up projection (n = 2 d_ffn when gated), the activation, the
 * down projection. */
void ms_bench_expert_kernels(const MsBenchSpec *spec, guint32 tokens, MsBenchKernel out[3]);

/* nccl-tests figures: algbw = bytes / time (bytes/s); busbw = algbw x the collective's factor
 * (2(n-1)/n allreduce, (n-1)/n all-to-all, 1 send/recv). */
void ms_bench_bandwidth(MsMeasurementKind kind, guint64 bytes, double seconds, guint ranks,
                        double *algbw, double *busbw);

G_END_DECLS
