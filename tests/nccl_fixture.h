/* nccl_fixture: what the tests of the nccl network model share: topologies loaded by name or path,
 * a communicator over a topology's first ranks under one NCCL release, and a network model parsed
 * from its spec. Each asserts (fatally where a test cannot go on) and prints the error. */
#pragma once

#include "ms_test.h"
#include "sim/net/nccl.h"
#include "sim/net/collective.h"
#include "sim/net/net_model.h"
#include "topologies/topology.h"

/* A shipped topology by name, or a file; NULL with the error printed (a suite's set-up fails). */
MsTopology *nccl_fx_load(const char *name);
/* The same for a file under the source tree, e.g. "validate/data/corpus/dgx-h100/topology.ini". */
MsTopology *nccl_fx_load_src(const char *relative);
/* A communicator over the first n ranks (all when n is 0) under that version. */
MsNcclComm nccl_fx_comm(const MsTopology *t, guint version, guint n);
/* NCCL's tuning model for one (algorithm, protocol) and size (ms_nccl_cost). */
MsNcclCost nccl_fx_cost(const MsNcclComm *c, MsCollOp op, MsNcclAlgo a, MsNcclProto p,
                        guint64 bytes);
/* The network model of a spec ("nccl:version=2.18") on topo. */
MsNetModel *nccl_fx_model(const char *spec, const MsTopology *topo);
/* Frees every topology of a suite (a NULL-safe clear of each). */
void nccl_fx_clear(MsTopology **const *all, guint n);

/* One collective alone on the first n ranks (at most NCCL_FX_MAX_RANKS), every rank launched at
 * 0, invariant checks on: its end, the bytes each rank sent, its flows and NCCL's choice. */
#define NCCL_FX_MAX_RANKS 32
typedef struct {
    double end_us;
    guint64 sent[NCCL_FX_MAX_RANKS];
    guint64 flows;
    MsNcclChoice ch;
} NcclFxRun;
NcclFxRun nccl_fx_run(const MsTopology *topo, MsNetModel *net, MsCollOp op, guint n, guint64 bytes,
                      gboolean symmetric);
