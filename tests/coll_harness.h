/* coll_harness: what the collective tests share: the two DGX A100 topologies, their figures, and
 * a run of one collective with every participant launched at 0 and invariant checks on. */
#pragma once

#include "ms_test.h"
#include "sim/net/collective.h"
#include "sim/sim.h"
#include "topologies/topology.h"

#define GIB (G_GUINT64_CONSTANT(1) << 30)
#define MAX_RANKS 16

extern MsTopology *one_node; /* dgx-a100: 8 GPUs on NVSwitch */
extern MsTopology *two_node; /* dgx-a100-2node: 2 x 8, one NIC per GPU */

static const double NVS = 300e9; /* NVSwitch bytes/s per GPU and direction */
static const double NIC = 25e9;  /* 200 Gb/s HDR */
static const double HBM = 2039e9;

/* CUnit suite set-up and tear-down: load and free the two topologies. */
int coll_suite_init(void);
int coll_suite_clean(void);

/* Route latency between two GPU ranks, in seconds. */
double coll_lat(const MsTopology *topo, guint a, guint b);

typedef struct {
    guint calls[MAX_RANKS];
    MsTime at[MAX_RANKS];
    guint total;
} Done;

/* A collective's done callback counting each rank's calls and their times in a Done. */
void coll_on_done(MsColl *coll, guint part, gpointer ctx);

typedef struct {
    MsTime last; /* latest completion */
    MsTime end[MAX_RANKS];
    guint64 sent[MAX_RANKS];
    guint64 flows;
    gboolean finished;
    Done done;
    MsSimStats stats;
} Outcome;

/* Runs spec on topo, every participant launched at 0, with invariant checks on; asserts each
 * rank's callback came once, at its end, and that the collective finished. */
void coll_run(const MsTopology *topo, const MsCollSpec *spec, Outcome *o);
/* The same, returning the last rank's end in seconds. */
double coll_run_s(const MsTopology *topo, const MsCollSpec *spec);

/* A deterministic skewed n x n matrix: 1..5 MB per pair. */
void coll_skewed(guint64 *m, guint n);

/* Ring collective of `steps` steps over n ranks: each step moves S/n per rank over bandwidth B
 * after latency a. */
static inline double
ring_closed(double S, guint n, guint steps, double B, double a)
{
    return steps * (S / n / B + a);
}
