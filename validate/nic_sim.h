/* nic_sim: an all-to-all under a looping allreduce, simulated the way `moesim bench`'s
 * concurrency benchmark runs it on GPUs (backends/cuda/cuda_bench.c): two communicators over the
 * same ranks, each on its own stream, so every rank starts its next call when its own previous
 * one ends. The allreduce loops from time 0; each rank starts its all-to-alls once its first
 * allreduce has ended (the loop in its steady state); one untimed all-to-all, then `calls` timed
 * ones; the time is the slowest rank's, from the end of its untimed call to the end of its last,
 * per call, as the benchmark's CUDA events time it. Alone: the same all-to-alls with no
 * allreduce. Seconds; sizes as nccl-tests counts them. */
#pragma once

#include <glib.h>

#include "sim/net/net_model.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

/* Timed all-to-alls of one simulation: enough to average over the allreduce's phases, few enough
 * that a fit's hundreds of simulations stay quick (ms_nic_sim_calls). */
#define MS_NIC_SIM_MIN_CALLS 3u
#define MS_NIC_SIM_MAX_CALLS 12u

typedef struct {
    guint n_ranks;
    const guint *ranks; /* topology GPU ranks, n_ranks of them */
    guint64 a2a_bytes;  /* the all-to-all's size: a2a_bytes / n_ranks to every rank */
    guint64 ar_bytes;   /* the looping allreduce's buffer */
    MsNetModel *net;    /* NULL: the flow model */
} MsNicCase;

/* The all-to-all's time per call alone (no allreduce) over calls timed calls. FALSE with the
 * collective module's error for a case it refuses (sizes, ranks). */
gboolean ms_nic_sim_alone(const MsTopology *topo, const MsNicCase *c, guint calls, double *seconds,
                          GError **error);
/* The allreduce's time per call alone, looping as the benchmark loops it. */
gboolean ms_nic_sim_background(const MsTopology *topo, const MsNicCase *c, guint calls,
                               double *seconds, GError **error);
/* The all-to-all's time per call while the allreduce loops. */
gboolean ms_nic_sim_together(const MsTopology *topo, const MsNicCase *c, guint calls,
                             double *seconds, GError **error);

/* Timed calls for a case whose all-to-all takes a2a_s alone and allreduce ar_s: enough to span
 * two allreduce calls, within [MS_NIC_SIM_MIN_CALLS, MS_NIC_SIM_MAX_CALLS]. */
guint ms_nic_sim_calls(double a2a_s, double ar_s);

G_END_DECLS
