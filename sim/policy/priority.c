/* priority: the comm priority key, the partitioning parameter and the per-layer chunking. Keys
 * put every all-to-all (by program order) before every allreduce (by layer, then program order);
 * layers and program positions stay far below the field widths (MS_MODEL_MAX_LAYERS,
 * MS_PLAN_MAX_OPS). */
#include "priority.h"

#define ALLREDUCE_BAND (G_GINT64_CONSTANT(1) << 60)
#define LAYER_SHIFT 40

gint64
ms_priority_comm(MsRole role, gint layer, guint64 seq)
{
    if (role != MS_ROLE_ALLREDUCE) {
        return (gint64)seq;
    }
    return ALLREDUCE_BAND + ((gint64)MAX(layer, 0) << LAYER_SHIFT) + (gint64)seq;
}

static const MsParamSpec params[] = {
    {"chunk", MS_PARAM_BYTES, "30MB", 65536, 1e12, NULL,
     "size of the equal chunks all-to-alls and allreduce buckets are cut into"},
    {NULL},
};

static gboolean
configure(const MsPolicy *policy, const MsPolicyInput *in, MsPlanConfig *cfg, GError **error)
{
    cfg->allreduce_chunk = ms_policy_get_bytes(policy, "chunk");
    cfg->comm_priority = ms_priority_comm;
    return TRUE;
}

/* Every MoE layer's all-to-all in chunks of at most `chunk` bytes from its largest sender; the
 * expert waits for all of them (pipelining is Lina's addition). */
static void
moe_layer(const MsPolicy *policy, const MsMoeLayer *layer, MsMoeLayerPlan *out)
{
    out->chunk_bytes = ms_policy_get_bytes(policy, "chunk");
    out->chunks = ms_plan_chunks_for(layer->most_wire_bytes, out->chunk_bytes);
}

const MsPolicyClass ms_priority_policy = {
    .name = "priority",
    .summary = "equal chunks; all-to-all before allreduce, earlier layers first",
    .params = params,
    .modes = MS_POLICY_ALL_MODES,
    .rules = {MS_DISPATCH_ORDER_PRIORITY, MS_ALLREDUCE_GATE_NONE},
    .configure = configure,
    .moe_layer = moe_layer,
};
