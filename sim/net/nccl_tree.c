/* nccl_tree: NCCL's double binary tree over the nodes of a communicator (src/graph/trees.cc,
 * identical in 2.10.3, 2.18.6 and 2.22.3, reformatted only in 2.30.7): node indices, no
 * bandwidth. The first tree is a binary tree rooted at node 0 whose leaves alternate with inner
 * nodes; the second is its mirror (an even node count) or the first shifted by one node (odd). */
#include "nccl.h"

/* ncclGetBtree (v2.18 src/graph/trees.cc:31-65). Kept in NCCL's own shape, down to the loop that
 * finds the second child, so that the edges are NCCL's for every node count. */
static void
btree(gint nranks, gint rank, MsNcclTreeNode *out)
{
    gint bit;
    for (bit = 1; bit < nranks; bit <<= 1) {
        if (bit & rank) {
            break;
        }
    }
    out->child_type = 0;
    if (rank == 0) {
        out->up = -1;
        out->down[0] = -1;
        /* The child of the root is above it, so it is the root's second child (:41-42). */
        out->down[1] = nranks > 1 ? bit >> 1 : -1;
        return;
    }
    gint up = (rank ^ bit) | (bit << 1);
    if (up >= nranks) {
        up = rank ^ bit;
    }
    /* Below its parent a node is the parent's first child, above it its second (:49). */
    out->child_type = rank < up ? 0 : 1;
    out->up = up;
    gint lowbit = bit >> 1;
    out->down[0] = lowbit == 0 ? -1 : rank - lowbit;
    gint down1 = lowbit == 0 ? -1 : rank + lowbit;
    while (down1 >= nranks) {
        down1 = lowbit == 0 ? -1 : rank + lowbit;
        lowbit >>= 1;
    }
    out->down[1] = down1;
}

static gint
map_rank(gint r, gint nranks, gboolean mirror)
{
    if (r == -1) {
        return -1;
    }
    return mirror ? nranks - 1 - r : (r + 1) % nranks;
}

void
ms_nccl_dtree(guint n_nodes, guint node, MsNcclTreeNode *t0, MsNcclTreeNode *t1)
{
    g_return_if_fail(n_nodes > 0 && node < n_nodes && t0 != NULL && t1 != NULL);
    gint n = (gint)n_nodes, r = (gint)node;
    btree(n, r, t0);
    /* ncclGetDtree (v2.18 src/graph/trees.cc:88-109): mirror when even, shift by one when odd. */
    gboolean mirror = n % 2 == 0;
    btree(n, mirror ? n - 1 - r : (r - 1 + n) % n, t1);
    t1->up = map_rank(t1->up, n, mirror);
    t1->down[0] = map_rank(t1->down[0], n, mirror);
    t1->down[1] = map_rank(t1->down[1], n, mirror);
}
