/* coll_names: the collective operations and algorithms a schedule names (alltoall, allreduce,
 * reducescatter, allgather; direct, 2dh, pipe, ring, hier, deepep), with their names in files. What
 * each algorithm does on the network is sim/net/collective.h's business. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
    MS_COLL_ALLTOALL,
    MS_COLL_ALLREDUCE,
    MS_COLL_REDUCESCATTER,
    MS_COLL_ALLGATHER,
} MsCollOp;

typedef enum {
    MS_COLL_ALGO_AUTO, /* direct for alltoall, ring otherwise */
    MS_COLL_ALGO_DIRECT,
    MS_COLL_ALGO_2DH,
    MS_COLL_ALGO_PIPE,
    MS_COLL_ALGO_RING,
    MS_COLL_ALGO_HIER,
    MS_COLL_ALGO_DEEPEP, /* DeepEP's normal kernels: RDMA once per node, NVLink forwarding */
} MsCollAlgo;

const char *ms_coll_op_name(MsCollOp op);
/* The operations' names, indexed by MsCollOp, NULL-terminated. */
const char *const *ms_coll_op_names(void);
gboolean ms_coll_op_from_name(const char *name, MsCollOp *out);
/* As ms_coll_op_from_name, and also the spellings of nccl-tests and NCCL for the same operation:
 * its test binaries (all_reduce_perf, alltoall_perf, reduce_scatter_perf, all_gather_perf, with
 * or without _perf) and NCCL's calls (AllReduce, all-to-all ...): case, '_' and '-' ignored. For
 * what users type on a command line; files keep the exact names. */
gboolean ms_coll_op_from_alias(const char *name, MsCollOp *out);
const char *ms_coll_algo_name(MsCollAlgo algo);
gboolean ms_coll_algo_from_name(const char *name, MsCollAlgo *out);

G_END_DECLS
