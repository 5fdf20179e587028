/* schemoe: ScheMoE's task scheduling (Shi et al., EuroSys'24). The MoE layer is
 * split into r chunks, each a chain of tasks: compress, all-to-all dispatch, decompress, expert,
 * compress, all-to-all combine, decompress. Compute tasks run in the order of the paper's
 * Theorem 1 (OptSche): every chunk's first compression, then per chunk decompress - expert -
 * compress, then every chunk's final decompression; communication tasks go out as early as
 * possible, first come first served. Compression (a ratio and a cost per byte) and Pipe-A2A
 * (intra- and inter-node transfers as two concurrent streams) are optional. Allreduce buckets
 * use their own stream, as in the PyTorch DDP that ScheMoE trains under. docs/policies.md. */
#pragma once

#include "policy.h"

G_BEGIN_DECLS

extern const MsPolicyClass ms_schemoe_policy;

G_END_DECLS
