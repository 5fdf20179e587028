/* coll_tree: an allreduce as NCCL runs it with the tree algorithm, as the flows of one TREE
 * phase: a connection per tree edge, channel and direction, carrying the channel's share of the
 * buffer once (up the tree to reduce, down it to broadcast). Private to sim/net. */
#pragma once

#include "coll_phase.h"
#include "sim/net/net_model.h"

/* Fills plan with one TREE phase for an allreduce of `bytes` over `channels` channels among n
 * participants (participant i on node node_of[i], the local_of[i]-th of its node), on the trees
 * of comm (NCCL's double binary tree across nodes, a chain inside each node). Never fails: every
 * participant layout has a tree. */
void ms_coll_tree_build(PhasePlan *plan, guint n, guint64 bytes, guint channels,
                        const MsNcclComm *comm, const guint *node_of, const guint *local_of);

/* Fills plan with the one TREE phase of NCCL's NVLS_TREE allreduce of `bytes` among n
 * participants on comm's NVLS heads (see coll_tree.c), marked nvls: its latency is paid up front
 * and its flows' bytes scaled by ms_coll_nvls_wire. */
void ms_coll_nvls_tree_build(PhasePlan *plan, guint n, guint64 bytes, const MsNcclComm *comm,
                             const guint *node_of, const guint *local_of);

/* Seconds per payload byte of one connection when every connection of the TREE phase moves at
 * once over the links as the model gives them: the busiest link's connections over its
 * bandwidth (0 when no link limits them). device[i] is participant i's topology device. */
double ms_coll_tree_link_time(const Phase *ph, const guint *device, MsNetModel *net,
                              const MsTopology *topo);
