/* dedup: DeepEP's deduplication of an all-to-all (its README and csrc/kernels/internode.cu: a
 * token goes over RDMA once per destination node, to the GPU with the sender's NVLink index,
 * and once to every destination GPU, which then permutes it to its local experts). */
#include "dedup.h"

#include <string.h>

void
ms_dedup_matrices(const MsRouting *routing, guint moe_layer, const MsPlacement *p, guint g,
                  const guint *node_of, guint64 *pair, guint64 *rdma)
{
    guint n = ms_placement_group_size(p), first = g * n, E = ms_placement_n_experts(p);
    guint top_k = ms_routing_header(routing)->top_k;
    memset(pair, 0, sizeof(guint64) * n * n);
    memset(rdma, 0, sizeof(guint64) * n * n);
    /* Each expert's position in the group; each position's local index and the position of
     * (node, local index) pairs, found by scanning the group in order. */
    g_autofree guint *home = g_new(guint, E);
    for (guint e = 0; e < E; e++) {
        guint k = 0;
        home[e] = ms_placement_replicas(p, g, e, &k)[0] - first;
    }
    g_autofree guint *local = g_new(guint, n);
    for (guint i = 0; i < n; i++) {
        local[i] = 0;
        for (guint j = 0; j < i; j++) {
            local[i] += node_of[first + j] == node_of[first + i];
        }
    }
    /* relay[i * n + d]: the GPU of i's local index on d's node. */
    g_autofree guint *relay = g_new(guint, (gsize)n * n);
    for (guint i = 0; i < n; i++) {
        for (guint d = 0; d < n; d++) {
            relay[(gsize)i * n + d] = d;
            for (guint j = 0; j < n; j++) {
                if (node_of[first + j] == node_of[first + d] && local[j] == local[i]) {
                    relay[(gsize)i * n + d] = j;
                    break;
                }
            }
        }
    }
    g_autofree guint8 *to_gpu = g_new(guint8, n);
    g_autofree guint8 *to_node = g_new(guint8, n); /* by the position of the node's relay */
    for (guint i = 0; i < n; i++) {
        guint src = first + i, tokens = ms_routing_n_tokens(routing, src);
        for (guint t = 0; t < tokens; t++) {
            const guint16 *ex = ms_routing_token_experts(routing, src, t, moe_layer);
            memset(to_gpu, 0, n);
            memset(to_node, 0, n);
            for (guint c = 0; c < top_k; c++) {
                guint d = home[ex[c]];
                if (!to_gpu[d]) {
                    to_gpu[d] = 1;
                    pair[(gsize)i * n + d]++;
                }
                if (node_of[first + d] == node_of[src]) {
                    continue;
                }
                guint r = relay[(gsize)i * n + d];
                if (!to_node[r]) {
                    to_node[r] = 1;
                    rdma[(gsize)i * n + r]++;
                }
            }
        }
    }
}
