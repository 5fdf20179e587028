/* executor_bench: the calibration microbenchmarks a per-rank backend runs (its bench hook), in a
 * form every rank receives: point-to-point transfers between rank pairs chosen per link class,
 * all-to-all and allreduce size sweeps, GEMM sweeps over token counts for the shapes of an expert
 * (up projection, activation, down projection), and the launch overhead of an empty kernel. Also
 * nccl-tests' bandwidth figures of a communication row (validate/bench_report.h prints the
 * tables). Sizes in bytes, seconds in measurement rows (sim/calib/meas_csv.h). */
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

/* What to measure (a bit set). */
enum {
    MS_BENCH_P2P = 1 << 0,
    MS_BENCH_ALLTOALL = 1 << 1,
    MS_BENCH_ALLREDUCE = 1 << 2,
    MS_BENCH_GEMM = 1 << 3,
    MS_BENCH_LAUNCH = 1 << 4,
    MS_BENCH_ALL = (1 << 5) - 1,
};

/* Limits the spec is checked against. */
#define MS_BENCH_MAX_ITERS 100000u
#define MS_BENCH_MAX_BYTES (G_GUINT64_CONSTANT(1) << 34)
#define MS_BENCH_MAX_TOKENS 1048576u
#define MS_BENCH_MAX_DIM 262144u
#define MS_BENCH_MAX_POINTS 4096u

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
} MsBenchSpec;

/* Defaults: everything, 8 B to 128 MiB by 2x, 20 iterations after 5 warm-up ones, bf16, one
 * Mixtral-8x7B expert (d_model 4096, d_ffn 14336, gated) at 1, 2, 4 ... 8192 tokens. */
MsBenchSpec *ms_bench_spec_new(void);
void ms_bench_spec_free(MsBenchSpec *spec);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsBenchSpec, ms_bench_spec_free)

/* "p2p,alltoall,allreduce,gemm,launch" in any order and subset, or "all". FALSE with
 * MS_BENCH_ERROR_SPEC naming the unknown item. */
gboolean ms_bench_parse_what(const char *list, guint32 *what, GError **error);
/* "1,16,256" (strictly increasing, 1 to MS_BENCH_MAX_TOKENS) into spec->tokens. */
gboolean ms_bench_parse_tokens(const char *list, MsBenchSpec *spec, GError **error);
/* Every field in range (MS_BENCH_ERROR_SPEC naming the field and the value otherwise). */
gboolean ms_bench_spec_check(const MsBenchSpec *spec, GError **error);

/* The spec as every rank receives it (JSON), and back (checked). */
GBytes *ms_bench_spec_to_bytes(const MsBenchSpec *spec);
MsBenchSpec *ms_bench_spec_from_bytes(GBytes *bytes, GError **error);

/* Sizes of the communication sweeps: min, min x step, ... up to max (guint64). */
GArray *ms_bench_sizes(const MsBenchSpec *spec);

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
