/* schedule: the contract between planning and execution. A schedule lists, for every GPU rank, the
 * operations of one iteration (a training step or an inference batch): compute ops with their
 * cost, and communication ops that belong to collectives spanning several ranks; dependencies;
 * the stream each op runs on; and the priorities a policy assigned. The simulator and the cpu and
 * cuda backends execute the same schedule with the same dispatcher and write per-op records in
 * the same format. Serialised as JSON (see docs/schedule-format.md). */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "sim/base/units.h"
#include "sim/schedule/coll_names.h"

G_BEGIN_DECLS

#define MS_SCHEDULE_ERROR (ms_schedule_error_quark())
GQuark ms_schedule_error_quark(void);
typedef enum {
    MS_SCHEDULE_ERROR_IO,
    MS_SCHEDULE_ERROR_PARSE,   /* not JSON, or not a schedule */
    MS_SCHEDULE_ERROR_INVALID, /* inconsistent: unknown op in deps, cycle, bad collective ... */
} MsScheduleError;

/* The version written; the reader also takes version 1 (docs/schedule-format.md). */
#define MS_SCHEDULE_FORMAT 2
/* Ops a schedule file may hold: more than its 256 MiB limit (sim/base/input_file.c) can carry,
 * an op being at least about 130 bytes of JSON, so the file's size is what bounds a schedule's
 * memory, checked before it is parsed; the count is checked before any op is built. */
#define MS_SCHEDULE_MAX_OPS (1u << 21)
#define MS_SCHEDULE_MAX_RANKS 65536u
#define MS_SCHEDULE_MAX_STREAMS 16u

typedef enum {
    MS_OP_COMPUTE,
    MS_OP_COMM, /* one rank's part of a collective */
} MsOpKind;

/* What a compute op does: the cost model and the cuda backend's kernel choice follow from it. */
typedef enum {
    MS_COMPUTE_GEMM,        /* dense matrix multiply(s): m x n x k per matrix, count matrices */
    MS_COMPUTE_EXPERT,      /* expert FFN over routed tokens: grouped GEMMs, one per local expert */
    MS_COMPUTE_ATTENTION,   /* attention block: projections + scores */
    MS_COMPUTE_ELEMENTWISE, /* memory-bound kernels: gating, permutation, norms, (de)compression */
    MS_COMPUTE_N_KINDS,
} MsComputeKind;

typedef enum {
    MS_PHASE_FORWARD,
    MS_PHASE_BACKWARD,
    MS_PHASE_OTHER, /* optimizer, re-planning, weight movement */
} MsPhase;

/* The role of an op in the MoE layer, for policies, reports and colours. */
typedef enum {
    MS_ROLE_ATTENTION,
    MS_ROLE_DENSE_FFN,
    MS_ROLE_GATE,
    MS_ROLE_DISPATCH, /* a2a sending tokens to their experts */
    MS_ROLE_EXPERT,
    MS_ROLE_COMBINE, /* a2a bringing expert outputs back */
    MS_ROLE_COMPRESS,
    MS_ROLE_DECOMPRESS,
    MS_ROLE_ALLREDUCE, /* gradient synchronisation */
    MS_ROLE_WEIGHTS,   /* moving expert weights (inference re-placement) */
    MS_ROLE_REPLAN,    /* host-side re-planning cost (inference) */
    MS_ROLE_OTHER,
    MS_ROLE_HOST, /* framework work on the host that the GPU waits for (a fixed time, no kernel) */
    MS_ROLE_N,
} MsRole;

/* Op flags (bit set). */
enum {
    /* Starting this op tells the dispatcher an all-to-all is about to be needed on its rank (Lina
     * stops launching allreduce chunks there until the next all-to-all is launched). */
    MS_OP_FLAG_A2A_IMMINENT = 1 << 0,
};

typedef enum {
    MS_STREAM_COMPUTE, /* executes its ops strictly in priority order (a CUDA stream fed in order)
                        */
    MS_STREAM_COMM,    /* the dispatcher picks among ready collectives by the policy's order */
} MsStreamKind;

/* The collectives a schedule holds: two of coll_names.h's operations, with their values (and so
 * their names, ms_coll_op_name). */
typedef enum {
    MS_COLL_KIND_ALLTOALL = MS_COLL_ALLTOALL,
    MS_COLL_KIND_ALLREDUCE = MS_COLL_ALLREDUCE,
} MsCollKind;
#define MS_COLL_KIND_N 2

/* The dispatcher's rules: the online part of the policy that planned the schedule, carried by it
 * as data so that the dispatcher knows no policy (dispatcher.h applies them; docs/policies.md). */
typedef enum {
    /* launchable collectives of a stream in the order they became launchable */
    MS_DISPATCH_ORDER_READY,
    /* by priority (smaller first), then in the order they became launchable */
    MS_DISPATCH_ORDER_PRIORITY,
    MS_DISPATCH_ORDER_N,
} MsDispatchOrder;

typedef enum {
    MS_ALLREDUCE_GATE_NONE, /* an allreduce launches as any collective does */
    /* Lina's: an allreduce waits while any of its participants has an all-to-all waiting or
     * running, or one imminent (MS_OP_FLAG_A2A_IMMINENT) */
    MS_ALLREDUCE_GATE_A2A,
    MS_ALLREDUCE_GATE_N,
} MsAllreduceGate;

typedef struct {
    MsDispatchOrder order;
    MsAllreduceGate allreduce_gate;
} MsDispatchRules;

typedef struct _MsSchedule MsSchedule;

/* A read-only view of one op; pointers are owned by the schedule. */
typedef struct {
    guint32 id;
    guint32 rank;
    guint8 stream;
    MsOpKind kind;
    MsRole role;
    MsPhase phase;
    guint32 flags;
    gint64 priority;     /* smaller runs first (compute: program order; comm: policy order) */
    gint32 layer;        /* MoE/transformer layer index, -1 if none */
    gint32 chunk;        /* chunk index within a partitioned op, -1 if none */
    const char *label;   /* e.g. "L3.fwd.expert.c1" */
    const guint32 *deps; /* ops (on any rank) that must finish first */
    guint n_deps;
    /* compute */
    MsComputeKind compute;
    double flops;
    double bytes;   /* memory traffic */
    guint32 tokens; /* tokens processed (efficiency curves are per token count) */
    /* GEMM shape: m x k times k x n, count matrices per group; m is the tokens of one GEMM (for an
     * expert op: of one local expert; the op's total is tokens). */
    guint32 gemm_m, gemm_n, gemm_k, gemm_count;
    guint32 experts; /* local experts of an expert op (grouped GEMMs) */
    double host_s;   /* host (framework) time the op costs besides its kernel, seconds; a host op
                        (MS_ROLE_HOST) costs exactly this */
    /* comm */
    guint32 coll; /* index of its collective */
} MsOpInfo;

typedef struct {
    guint32 id;
    MsCollKind kind;
    guint8 algo;    /* MsCollAlgo of sim/net/collective.h */
    guint32 window; /* alltoall rounds in flight (0 = all) */
    guint n_ranks;
    const guint32 *ranks;  /* topology GPU ranks, in participant order */
    const guint32 *ops;    /* the op of each participant, same order */
    guint64 bytes;         /* allreduce: buffer per rank */
    const guint64 *matrix; /* alltoall: n_ranks x n_ranks bytes [src * n + dst] */
    const guint64 *rdma;   /* deepep alltoall: the RDMA leg's bytes per pair (collective.h) */
    gboolean returning;    /* deepep: the combine's direction */
    const char *label;
} MsCollInfo;

/* --- building --- */

MsSchedule *ms_schedule_new(guint n_ranks);
void ms_schedule_free(MsSchedule *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsSchedule, ms_schedule_free)

/* Streams are the same on every rank; returns the new stream's index. */
guint ms_schedule_add_stream(MsSchedule *s, const char *name, MsStreamKind kind);

/* Free-form metadata shown in results (model, topology, policy, mode, iteration ...). */
void ms_schedule_set_meta(MsSchedule *s, const char *key, const char *value);
const char *ms_schedule_get_meta(const MsSchedule *s, const char *key);
/* The name of the policy that planned the schedule, shown in results ("fifo" until set); the
 * dispatcher applies the rules below, never the name. */
void ms_schedule_set_policy(MsSchedule *s, const char *policy);
const char *ms_schedule_policy(const MsSchedule *s);
/* The rules the dispatcher applies: readiness order and no gate until set. Values are stored as
 * given; the dispatcher refuses unknown ones. */
void ms_schedule_set_rules(MsSchedule *s, const MsDispatchRules *rules);
MsDispatchRules ms_schedule_rules(const MsSchedule *s);

/* Adds a compute op; fill the cost fields with ms_schedule_set_cost. Returns its id. */
guint32 ms_schedule_add_compute(MsSchedule *s, guint rank, guint stream, MsRole role, MsPhase phase,
                                gint layer, gint chunk, const char *label);
void ms_schedule_set_cost(MsSchedule *s, guint32 op, MsComputeKind kind, double flops, double bytes,
                          guint32 tokens);
void ms_schedule_set_shape(MsSchedule *s, guint32 op, guint32 m, guint32 n, guint32 k,
                           guint32 count, guint32 experts);
/* Host (framework) seconds a compute op costs on top of its kernel; 0 until set. */
void ms_schedule_set_host(MsSchedule *s, guint32 op, double seconds);

/* Adds a collective and one comm op per participant (on the given stream of each participant);
 * the participants' op ids are written to ops_out (n_ranks entries) when not NULL. matrix is
 * copied. Returns the collective id. */
guint32 ms_schedule_add_alltoall(MsSchedule *s, guint stream, const guint32 *ranks, guint n_ranks,
                                 const guint64 *matrix, guint8 algo, guint32 window, MsRole role,
                                 MsPhase phase, gint layer, gint chunk, const char *label,
                                 guint32 *ops_out);
/* A deepep all-to-all's RDMA bytes (n_ranks x n_ranks, copied) and direction
 * (sim/net/collective.h, MsCollSpec's rdma and returning). */
void ms_schedule_set_relay(MsSchedule *s, guint32 coll, const guint64 *rdma, gboolean returning);
guint32 ms_schedule_add_allreduce(MsSchedule *s, guint stream, const guint32 *ranks, guint n_ranks,
                                  guint64 bytes, guint8 algo, MsPhase phase, gint layer, gint chunk,
                                  const char *label, guint32 *ops_out);

void ms_schedule_add_dep(MsSchedule *s, guint32 op, guint32 dep);
void ms_schedule_set_priority(MsSchedule *s, guint32 op, gint64 priority);
void ms_schedule_set_flags(MsSchedule *s, guint32 op, guint32 flags);

/* Checks the schedule is executable: deps name existing ops, no cycles, every collective has one
 * op per participant on a comm stream, ranks in range, costs finite and non-negative. */
gboolean ms_schedule_validate(const MsSchedule *s, GError **error);

/* --- reading --- */

/* SHA-256 (hex, to free) of everything a runner reads: ranks, policy, rules, streams, every op
 * and collective, the meta but for what only names the iteration ("iteration",
 * "dropped_tokens"). Two schedules of one digest do the same work. */
char *ms_schedule_work_digest(const MsSchedule *s);
guint ms_schedule_n_ranks(const MsSchedule *s);
guint ms_schedule_n_streams(const MsSchedule *s);
const char *ms_schedule_stream_name(const MsSchedule *s, guint stream);
MsStreamKind ms_schedule_stream_kind(const MsSchedule *s, guint stream);
guint ms_schedule_n_ops(const MsSchedule *s);
guint ms_schedule_n_colls(const MsSchedule *s);
/* Fills info for op (valid until the schedule changes). */
void ms_schedule_op(const MsSchedule *s, guint32 op, MsOpInfo *info);
void ms_schedule_coll(const MsSchedule *s, guint32 coll, MsCollInfo *info);
/* The ops op depends on (*n of them; NULL when none): what ms_schedule_op gives as deps, without
 * the rest. */
const guint32 *ms_schedule_op_deps(const MsSchedule *s, guint32 op, guint *n);
/* Ops of one rank, in id order. */
const guint32 *ms_schedule_rank_ops(const MsSchedule *s, guint rank, guint *n);

/* Names in files and reports ("?" for a value out of range), and the NULL-terminated tables they
 * come from, indexed by value: the JSON reader matches names against the same tables. Op kinds and
 * stream kinds share theirs ("compute", "comm"). */
const char *ms_role_name(MsRole role);
gboolean ms_role_from_name(const char *name, MsRole *out);
const char *ms_compute_kind_name(MsComputeKind kind);
const char *ms_phase_name(MsPhase phase);
const char *ms_op_kind_name(MsOpKind kind);
const char *ms_stream_kind_name(MsStreamKind kind);
const char *ms_coll_kind_name(MsCollKind kind);
const char *const *ms_role_names(void);
const char *const *ms_compute_kind_names(void);
const char *const *ms_phase_names(void);
const char *const *ms_kind_names(void);
/* Rule names: orders "ready", "priority"; gates "none", "a2a". */
const char *ms_dispatch_order_name(MsDispatchOrder order);
const char *ms_allreduce_gate_name(MsAllreduceGate gate);
const char *const *ms_dispatch_order_names(void);
const char *const *ms_allreduce_gate_names(void);

/* --- JSON --- */

JsonNode *ms_schedule_to_json(const MsSchedule *s);
gboolean ms_schedule_save(const MsSchedule *s, const char *path, GError **error);
/* Loads and validates; every problem names the file and the op/collective index and field. */
MsSchedule *ms_schedule_load(const char *path, GError **error);
MsSchedule *ms_schedule_from_json(JsonNode *root, const char *source, GError **error);

G_END_DECLS
