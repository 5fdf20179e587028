/* plan: builds the schedule of one iteration from a model, the iteration's routing (which tokens
 * chose which experts), the topology and a policy's static decisions (MsPlanConfig: streams,
 * chunking, pipelining, task order, compression, placement). Training: per layer forward
 * (attention, gate, all-to-all dispatch, expert FFN, all-to-all combine) and backward in reverse,
 * dense gradients allreduced in buckets as backward produces them, expert gradients among their
 * replicas. Inference: forward only. The policy's decisions for each MoE layer (chunks,
 * pipelining, order) come from a hook it provides. Costs are flops and bytes per op
 * (docs/models.md); time is the executor's business. Ignores the optimizer update and embedding
 * lookups. */
#pragma once

#include <glib.h>

#include "sim/moe/model.h"
#include "sim/moe/placement.h"
#include "sim/schedule/schedule.h"
#include "topologies/topology.h"
#include "traces/trace_routing.h"

G_BEGIN_DECLS

#define MS_PLAN_ERROR (ms_plan_error_quark())
GQuark ms_plan_error_quark(void);
typedef enum {
    MS_PLAN_ERROR_MISMATCH, /* routing shape differs from the model or the topology */
    MS_PLAN_ERROR_LIMIT,    /* the schedule would be absurdly large (chunks, ops) */
    MS_PLAN_ERROR_INVALID,  /* a layout that does not fit (ep, placements) */
} MsPlanError;

/* At most this many chunks per partitioned tensor, and ops per schedule. */
#define MS_PLAN_MAX_CHUNKS 4096u
#define MS_PLAN_MAX_OPS 20000000u

typedef enum {
    MS_PLAN_TRAIN,
    MS_PLAN_INFER,
} MsPlanMode;

const char *ms_plan_mode_name(MsPlanMode mode);
gboolean ms_plan_mode_from_name(const char *name, MsPlanMode *out);

/* Order of an MoE layer's compute tasks when its all-to-alls are chunked and pipelined. */
typedef enum {
    /* chunk by chunk: [decompress, expert, compress] of chunk 0, then of chunk 1 ... */
    MS_PLAN_ORDER_CHUNKED,
    /* ScheMoE's OptSche (EuroSys'24, Theorem 1): every chunk's first compression, then per chunk
     * decompress, expert, compress, then every chunk's last decompression. */
    MS_PLAN_ORDER_OPTSCHE,
} MsPlanOrder;

/* How a layer's token slots are sized: the gating's capacity. */
typedef enum {
    MS_CAPACITY_MODEL,     /* the model file's capacity_factor (0: dropless), ms_model_capacity */
    MS_CAPACITY_DEEPSPEED, /* DeepSpeed's _capacity: ceil(T / E x top_k x factor), >= min */
    MS_CAPACITY_MAX,       /* DeepSpeed's drop_tokens=False: every (rank, expert) buffer padded to
                            * the layer's largest count over all ranks, nothing dropped */
    MS_CAPACITY_NONE,      /* dropless: sizes as routed, whatever the model file says */
} MsCapacityRule;

/* Priority of a communication op: its role, its layer (-1: none) and seq, the position of its
 * collective in program order. Smaller launches first under priority-ordered dispatch. */
typedef gint64 (*MsCommPriorityFn)(MsRole role, gint layer, guint64 seq);

/* Inference placement of one MoE layer, decided before the layer runs (Lina's phase 1) and
 * possibly revised once its gate has run (phase 2). Matrices are n_ranks x n_ranks weight bytes
 * [src * n + dst]; NULL means nothing moves. Owned by the MsPlanConfig. */
typedef struct {
    MsPlacement *placement; /* what the layer's all-to-all uses (after phase 2) */
    guint64 *moves_p1;      /* weights moved for phase 1, while earlier layers run */
    double plan_bytes;      /* memory traffic of phase 1's estimate (0: no planning op) */
    gboolean replan;        /* phase 2 check runs (an op after the gate) */
    double replan_bytes;    /* its memory traffic */
    guint64 *moves_p2;      /* weights moved after a phase 2 re-plan, before dispatch */
    /* Experts in host memory (never with moves): per rank the weight bytes loaded over the GPU's
     * link to host memory, at host_bw bytes/s each, on the `host` stream: for phase 1 after the
     * planning op, and after the gate (a re-plan, or experts the estimate missed) before
     * dispatch. NULL: nothing loaded. */
    guint64 *loads_p1;
    guint64 *loads_p2;
    double host_bw;
} MsLayerPlacement;

/* One MoE layer as the plan builder sees it when it asks the policy how to run it. */
typedef struct {
    const MsModel *model;
    const MsTopology *topo;
    MsPlanMode mode;
    guint layer;              /* the model layer */
    guint moe;                /* its index among the MoE layers */
    const MsTraffic *traffic; /* its tokens between GPUs, under the layer's placement */
    guint64 most_wire_bytes;  /* the largest sender's all-to-all bytes to other GPUs, as sent
                                 (after compression) */
} MsMoeLayer;

/* A policy's decisions for one MoE layer, forward and backward alike. */
typedef struct {
    guint64 chunks;      /* all-to-all chunks, 1 to MS_PLAN_MAX_CHUNKS */
    guint64 chunk_bytes; /* the chunk size chunks was derived from (0: a count): the error for too
                            many chunks names it */
    gboolean pipeline;   /* expert compute per chunk, each waiting for its own chunk only */
    MsPlanOrder order;   /* of the compute tasks when pipelined */
    /* > 0: chunks are peer groups of this many consecutive ranks, not token cuts
     * (ms_traffic_peer_matrix: FasterMoE's group-wise exchange); chunks must then be the
     * expert-parallel group's size over peers. */
    guint peers;
} MsMoeLayerPlan;

/* The per-layer hook: fills out, which comes as whole all-to-alls (one chunk, not pipelined,
 * chunked order). data is the configuration's hook_data. */
typedef void (*MsMoeLayerFn)(gconstpointer data, const MsMoeLayer *layer, MsMoeLayerPlan *out);

/* The chunks that cut most bytes into pieces of at most chunk bytes: ceil(most / chunk), at least
 * 1; 1 when chunk is 0 (whole). */
guint64 ms_plan_chunks_for(guint64 most, guint64 chunk);

/* A policy's static part. ms_plan_config_init gives the plain schedule: one communication
 * stream, nothing partitioned or pipelined, program order, direct all-to-all, ring allreduce,
 * readiness order and no gate. Decisions that may differ from one MoE layer to the next are the
 * moe_layer hook's, asked once per MoE layer. */
typedef struct {
    const char *policy;       /* the policy's name, for the schedule */
    const char *spec;         /* the policy as given, for the schedule's metadata */
    MsDispatchRules rules;    /* the online part: what the dispatcher applies to the schedule */
    gboolean split_allreduce; /* allreduce on its own communication stream */
    guint64 allreduce_chunk;  /* bytes per allreduce chunk; 0 = whole buckets */
    guint64 grad_bucket;      /* gradient bucket bytes; 0 = the model's; G_MAXUINT64: one bucket
                                 of each kind, allreduced once backward is done (coalesced) */
    double compress_ratio;    /* compressed over original bytes; 1 = no compression tasks */
    double compress_cost_s;   /* seconds per input byte of (de)compression; 0 = memory-bound */
    guint8 a2a_algo;          /* MsCollAlgo */
    guint32 window;
    guint8 allreduce_algo;          /* MsCollAlgo */
    MsCommPriorityFn comm_priority; /* NULL: program order */
    gboolean imminent_flags;        /* Lina: flag the compute op before each backward all-to-all */
    guint ep;                       /* expert-parallel degree; 0 = the model's */
    MsMoeLayerFn moe_layer;         /* per MoE layer: chunks, pipelining, order; NULL = whole */
    gconstpointer hook_data;        /* given to moe_layer; must outlive the configuration's use */
    MsLayerPlacement *layers;       /* inference: one per MoE layer; NULL = static placement */
    guint n_layers;
    MsCapacityRule capacity; /* token slots (MS_CAPACITY_MODEL: the model file's) */
    double capacity_factor;  /* MS_CAPACITY_DEEPSPEED's factor */
    guint capacity_min;      /* MS_CAPACITY_DEEPSPEED's smallest capacity */
    /* Training: [moe layer * experts] experts replicated on every rank of each expert-parallel
     * group for that layer (FasterMoE's shadowing; owned, NULL: none), whose tokens stay on their
     * source. Their weights are broadcast from the home rank along a ring of the group after the
     * layer's gate (its expert ops wait for them) and their gradients reduced back along the ring
     * after the layer's backward expert ops, on a "weights" stream. */
    gboolean *shadow;
    guint n_shadow_layers;
    GPtrArray *meta; /* "key", "value" pairs for the metadata; NULL until add_meta */
} MsPlanConfig;

/* Initialisation allocates nothing; a configuration given inference placements, shadowed experts
 * or metadata must be cleared. */
void ms_plan_config_init(MsPlanConfig *cfg);
/* Frees the layer placements and metadata and re-initialises. */
void ms_plan_config_clear(MsPlanConfig *cfg);
void ms_plan_config_add_meta(MsPlanConfig *cfg, const char *key, const char *value);

/* Checks that routing fits the model and the topology in this mode: MoE layers, experts, ranks
 * (at most the topology's GPUs: a schedule of R ranks runs on GPUs 0 .. R-1) and top_k (top_k
 * or top_k_infer). MS_PLAN_ERROR_MISMATCH names both numbers. */
gboolean ms_plan_check_routing(const MsModel *model, const MsRouting *routing,
                               const MsTopology *topo, MsPlanMode mode, GError **error);

/* The capacity (token slots per (rank, expert) buffer) of MoE layer moe for a rank routing
 * `tokens` tokens with top_k choices, under cfg's rule; 0: dropless. */
guint64 ms_plan_capacity(const MsPlanConfig *cfg, const MsModel *model, const MsRouting *routing,
                         guint moe, guint64 tokens, guint top_k);

/* A lower bound of ms_plan_build's count of ops for a schedule of `ranks` ranks in this mode (one
 * chunk per all-to-all, none compressed, an allreduce per gradient bucket), which needs no
 * routing: FALSE with MS_PLAN_ERROR_LIMIT when even that exceeds MS_PLAN_MAX_OPS, so that a caller
 * refuses a run before it generates or reads its routing. */
gboolean ms_plan_check_ops(const MsModel *model, guint ranks, MsPlanMode mode, GError **error);

/* Builds and validates the schedule, asking cfg's moe_layer hook about each MoE layer in order.
 * Returns NULL with MS_PLAN_ERROR (mismatch, a partition of 0 or beyond MS_PLAN_MAX_CHUNKS, more
 * than MS_PLAN_MAX_OPS ops, an ep that does not divide the GPUs and experts, inference placements
 * that are incomplete, peer chunks that do not divide the group, shadowed experts given for the
 * wrong number of layers) or MS_MODEL_ERROR. The schedule's metadata holds model, topology, policy,
 * mode, iteration, ep and dropped_tokens. */
MsSchedule *ms_plan_build(const MsModel *model, const MsRouting *routing, const MsTopology *topo,
                          MsPlanMode mode, const MsPlanConfig *cfg, GError **error);

G_END_DECLS
