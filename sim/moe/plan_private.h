/* plan_private: the state the plan builder threads through its files: the schedule being built,
 * per-rank program counters and data frontiers, and the gradient buckets. plan.c builds the
 * step and its dense parts, plan_moe.c the MoE layers. */
#pragma once

#include "plan.h"

#define NO_STREAM G_MAXUINT
#define NO_OP G_MAXUINT32

/* Gradients waiting for their allreduce: bytes, the smallest layer that contributed (priority:
 * earlier layers first) and each rank's latest contributing op (compute streams run in order, so
 * the latest one finishing means all have). */
typedef struct {
    guint64 bytes;
    gint layer;
    guint32 *last; /* per rank */
    guint count;   /* buckets emitted so far */
} Bucket;

typedef struct {
    MsSchedule *s;
    const MsModel *root; /* the model of the file */
    /* The model as the layer being planned sees it (its layer group's view, plan_enter): every
     * per-layer cost and size below reads these; model-wide values are the same in every view. */
    const MsModel *model;
    const MsModelSpec *spec;
    const MsRouting *routing;
    const MsTopology *topo;
    const MsPlanConfig *cfg;
    MsPlanMode mode;
    guint n;     /* ranks */
    guint top_k; /* of this mode */
    guint ep;
    guint st_compute, st_a2a, st_ar, st_weights, st_planner, st_host;
    gint64 *prio; /* per rank: next compute priority (program order) */
    guint64 comm_seq;
    GArray **front; /* per rank: ops the next op of the data chain depends on */
    guint32 *gate;  /* per rank: gate op of the latest forward MoE layer */
    Bucket dense, expert;
    guint64 token_bytes;
    guint64 dropped;
    MsPlacement *base;           /* training layout, or inference static placement */
    MsPlacement **shadowed;      /* training, per MoE layer: base plus shadowed replicas (NULL:
                                    none, or none in that layer) */
    MsTraffic **traffic;         /* per MoE layer */
    guint *node_of;              /* a2a=deepep: the node of every rank; else NULL */
    MsMoeLayerPlan *layer_plans; /* per MoE layer: the policy's decisions */
    guint32 *ids;                /* scratch: one op id per rank */
    guint32 *cids;               /* scratch: the participant ops of a new collective */
    guint32 *expert_ops;         /* per rank: last expert op of the latest MoE section */
    guint32 *ranks;              /* 0 .. n-1 */
    GError **error;
} Plan;

/* Makes transformer layer `layer`'s view the model the plan reads (model, spec, token_bytes). */
void plan_enter(Plan *p, guint layer);
/* Tokens rank r processes at transformer layer `layer`: its layer group's from the routing, or,
 * in a group without MoE layers, the group's tokens per GPU of the mode. */
guint64 plan_layer_tokens(const Plan *p, guint layer, guint r);

/* A compute op on rank r depending on the rank's frontier, which it then replaces. */
guint32 plan_compute(Plan *p, guint r, guint stream, MsRole role, MsPhase phase, gint layer,
                     gint chunk, const char *label, MsComputeKind kind, double flops, double bytes,
                     guint64 tokens);
/* Priority of a comm op created now (advances the program-order sequence). */
gint64 plan_comm_priority(Plan *p, MsRole role, gint layer);
/* Sets a frontier to the single op. */
void plan_front_set(Plan *p, guint r, guint32 op);
/* Adds each of the rank's frontier ops as a dependency of op. */
void plan_deps_on_front(Plan *p, guint r, guint32 op);
/* A label "L<layer>.<phase>.<what>[.c<chunk>][.g<group>]" (chunk < 0 or k == 1: no chunk). */
char *plan_label(gint layer, MsPhase phase, const char *what, gint chunk, gint group);

/* Adds contributing ops (one per rank in ids) of `bytes` gradient bytes per rank from layer to a
 * bucket; emits the bucket's allreduce once it holds at least the bucket size. */
gboolean plan_bucket_add(Plan *p, Bucket *b, gboolean expert, gint layer, guint64 bytes,
                         const guint32 *ids);
gboolean plan_bucket_flush(Plan *p, Bucket *b, gboolean expert);

/* The MoE parts (plan_moe.c): traffic and chunk counts for every MoE layer, then the forward
 * and backward of one MoE block (gate to combine). */
gboolean plan_moe_prepare(Plan *p);
gboolean plan_moe_forward(Plan *p, guint layer);
gboolean plan_moe_backward(Plan *p, guint layer);
/* From plan_moe_prep.c, for plan_moe.c: MoE layer m's per-layer inference layout (NULL: none),
 * the placement its experts have, its shadowed experts in training (NULL: none); the wire bytes
 * of a count of tokens (with the compression ratio); whether the all-to-alls are DeepEP's. */
const MsLayerPlacement *plan_moe_layer_placement(const Plan *p, guint m);
const MsPlacement *plan_moe_placement(const Plan *p, guint m);
const gboolean *plan_moe_shadow(const Plan *p, guint m);
guint64 plan_moe_wire_bytes(const Plan *p, guint64 tokens);
gboolean plan_moe_deepep(const Plan *p);
