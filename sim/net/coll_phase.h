/* coll_phase: the internal shape of a collective: phases (an all-to-all among groups, a ring among
 * groups, or a local copy), each entered by a participant once it finished the phases before it.
 * Private to collective.c and coll_build.c. */
#pragma once

#include "collective.h"

typedef enum {
    PHASE_A2A,  /* pairs within each group, in rounds: position p sends to p+r in round r */
    PHASE_RING, /* C channels x S steps of neighbour sends around each group's ring */
    PHASE_COPY, /* a local layout copy of copy_bytes[part] on each participant */
    PHASE_TREE, /* NCCL's tree connections (coll_tree.c): a flow per connected pair, all at once */
} PhaseKind;

typedef struct {
    PhaseKind kind;
    guint n_groups, m; /* groups of equal size m */
    guint *members;    /* n_groups * m participant indices, group-major */
    guint *group_of;   /* per participant: its group, or G_MAXUINT if not in this phase */
    guint *pos_of;     /* per participant: position in its group */
    guint n_preds;     /* phases to finish before entering (0: entered at launch) */
    guint preds[2];

    /* A2A */
    guint64 *pair_bytes; /* [(g * m + p) * (m - 1) + (r - 1)]: p -> p + r; NULL for COPY/RING */
    guint64 *self_bytes; /* per participant: bytes it keeps (a local copy), may be NULL */
    guint window;        /* rounds in flight per sender; 0 = all */
    gboolean nvls;       /* NCCL's NVLS collective through the NVSwitch (coll_nvls.c) */

    /* RING */
    guint channels, steps;
    guint64 buffer;    /* bytes each participant reduces/gathers in this phase */
    guint *order;      /* [(g * channels + c) * m + i]: position at ring index i */
    guint *index_of;   /* [(g * channels + c) * m + p]: ring index of position p */
    guint *done_steps; /* [(g * channels + c) * m + i]: steps ring index i has sent */

    /* TREE: n_flows flows (connected pairs) sorted by sender; pair_bytes holds their payloads */
    guint n_flows;
    guint *flow_src, *flow_dst; /* participants */
    guint *flow_conns;          /* connections the pair's flow stands for */
    guint *sender_first;        /* per participant p: its flows are [sender_first[p], [p + 1]) */

    /* COPY */
    guint64 *copy_bytes; /* per participant */

    /* progress, per participant */
    guint8 *entered;
    guint8 *finished;
    guint *pending; /* sends + receives + copies not yet done */
    guint *preds_left;
    GArray **parked; /* flow indices waiting for this participant to enter */
} Phase;

#define MS_COLL_MAX_PHASES 4

/* Filled by the builders in coll_build.c. */
typedef struct {
    guint n_phases;
    Phase phases[MS_COLL_MAX_PHASES];
} PhasePlan;

/* Builds the phases of spec (validated) for n participants whose nodes are node_of[i]. Returns
 * FALSE with MS_COLL_ERROR when the algorithm does not fit the participants. */
gboolean ms_coll_build_phases(PhasePlan *plan, const MsCollSpec *spec, const guint64 *matrix,
                              const guint *node_of, const guint *local_of, GError **error);
void ms_coll_phase_clear(Phase *ph, guint n);
/* An empty phase of n_groups groups of m for n participants, every participant outside it. */
void ms_coll_phase_init(Phase *ph, PhaseKind kind, guint n, guint n_groups, guint m);
/* The order channel c visits a node's block of b GPUs in (ring and tree alike): out[t] is the
 * position in the block of the GPU it visits t-th. */
void ms_coll_block_order(guint b, guint c, guint *out);

/* Bytes of A2A pair (group g, position p, round r) and of ring flow (g, c, s, i). */
static inline guint64
phase_pair_bytes(const Phase *ph, guint g, guint p, guint r)
{
    return ph->pair_bytes[((gsize)g * ph->m + p) * (ph->m - 1) + (r - 1)];
}

guint64 ms_coll_ring_chunk(const Phase *ph, guint c, guint s, guint i);
