/* nccl_pack: how many channels fit a node at a given speed, the question NCCL's graph search
 * (src/graph/search.cc) answers by backtracking: rings (cycles through the node's GPUs) each
 * taking `speed` GB/s on every link of every hop's path, capped by the channels' NICs across
 * nodes. Here an exhaustive search of cycle multisets with a bound, deterministic and within a
 * fixed budget of steps; it finds what NCCL finds on the shapes moesim's topologies have. */
#include "nccl_private.h"

#include <math.h>
#include <string.h>

/* Search steps before the best packing found so far is taken (NCCL also gives up, after
 * NCCL_SEARCH_GLOBAL_TIMEOUT = 5 x 2^16 steps, v2.18 src/graph/search.cc:270). */
#define BUDGET 400000

typedef struct {
    const NcclNode *nd;
    double speed;
    NcclPath max_type;
    double *res;         /* residual bandwidth per slot */
    guint *cycles;       /* [level * n + pos] */
    const guint *starts; /* NULL: cycles from GPU 0; else paths, ring c from starts[c] */
    gboolean *used;
    guint n, best, limit;
    guint64 budget;
} Pack;

/* NCCL subtracts in float and rounds to 1/1000 (SUB_ROUND, v2.18 search.cc:65). */
static double
sub_round(double a, double b)
{
    return isinf(a) ? a : round((a - b) * 1000) / 1000;
}

/* What a hop of path k takes from a slot. A GPU-to-GPU path through an Intel CPU's root complex
 * (type PHB) takes INTEL_P2P_OVERHEAD of the speed on each of its PCIe links, for "P2P
 * inefficiency through Intel CPU RC" (12/9 in 2.8, 6/5 from 2.9: nd->intel_p2p; v2.8.4
 * search.cc:67-76, v2.10 src/graph/topo.h:29 and search.cc:70-75, unchanged to v2.30 topo.h:39
 * and search.cc:84-90); other links, and AMD CPUs, take the speed. */
static double
hop_need(const Pack *p, guint k, guint slot)
{
    const NcclNode *nd = p->nd;
    if (nd->type[k] == NCCL_PATH_PHB && nd->intel_cpu && nd->slot_pci[slot]) {
        return p->speed * nd->intel_p2p;
    }
    return p->speed;
}

static gboolean
hop_fits(const Pack *p, guint i, guint j)
{
    const NcclNode *nd = p->nd;
    guint k = i * p->n + j;
    if (nd->type[k] > p->max_type) {
        return FALSE;
    }
    for (guint s = nd->path_off[k]; s < nd->path_off[k + 1]; s++) {
        if (p->res[nd->path[s]] < hop_need(p, k, nd->path[s])) {
            return FALSE;
        }
    }
    return TRUE;
}

static void
hop_take(Pack *p, guint i, guint j, double sign)
{
    const NcclNode *nd = p->nd;
    guint k = i * p->n + j;
    for (guint s = nd->path_off[k]; s < nd->path_off[k + 1]; s++) {
        double *r = &p->res[nd->path[s]], need = hop_need(p, k, nd->path[s]);
        *r = sign > 0 ? sub_round(*r, need) : sub_round(*r, -need);
    }
}

/* Rings a GPU can still start or end: the channels its first (last) links leave room for. */
static guint
bound(const Pack *p)
{
    const NcclNode *nd = p->nd;
    guint best = G_MAXUINT;
    for (guint i = 0; i < p->n; i++) {
        for (guint dir = 0; dir < 2; dir++) {
            double sum = 0;
            for (guint j = 0; j < p->n; j++) {
                guint k = dir ? j * p->n + i : i * p->n + j;
                if (j == i || nd->type[k] > p->max_type) {
                    continue;
                }
                /* Each distinct first (or last) link counts once. */
                guint s = dir ? nd->path[nd->path_off[k + 1] - 1] : nd->path[nd->path_off[k]];
                gboolean seen = FALSE;
                for (guint q = 0; q < j && !seen; q++) {
                    guint kq = dir ? q * p->n + i : i * p->n + q;
                    if (q != i && nd->type[kq] <= p->max_type) {
                        seen = (dir ? nd->path[nd->path_off[kq + 1] - 1]
                                    : nd->path[nd->path_off[kq]]) == s;
                    }
                }
                if (!seen) {
                    sum += isinf(p->res[s]) ? 1e9 : floor(p->res[s] / p->speed + 1e-9);
                }
            }
            best = MIN(best, (guint)MIN(sum, 1e9));
        }
    }
    return best;
}

static gboolean pack_level(Pack *p, guint level);

/* Extends cycle `level` at position pos; `tight` while it still equals the previous cycle, so
 * that cycles come in lexicographic order and no multiset is tried twice. TRUE: stop. */
static gboolean
extend(Pack *p, guint level, guint pos, gboolean tight)
{
    if (p->budget == 0) {
        return TRUE;
    }
    p->budget--;
    guint *cyc = p->cycles + level * p->n;
    const guint *prev = level > 0 ? cyc - p->n : NULL;
    if (pos == p->n) {
        gboolean cycle = p->starts == NULL;
        if (cycle && !hop_fits(p, cyc[p->n - 1], cyc[0])) {
            return FALSE;
        }
        /* The ring is complete: the next one starts with every GPU free again. */
        if (cycle) {
            hop_take(p, cyc[p->n - 1], cyc[0], 1);
        }
        memset(p->used, 0, p->n * sizeof(gboolean));
        gboolean stop = pack_level(p, level + 1);
        for (guint i = 0; i < p->n; i++) {
            p->used[i] = TRUE;
        }
        if (cycle) {
            hop_take(p, cyc[p->n - 1], cyc[0], -1);
        }
        return stop;
    }
    /* Rings of the same start come in lexicographic order, so no multiset is tried twice. */
    gboolean ordered = tight && prev && prev[0] == cyc[0];
    for (guint j = ordered ? prev[pos] : 0; j < p->n; j++) {
        if (p->used[j] || !hop_fits(p, cyc[pos - 1], j)) {
            continue;
        }
        hop_take(p, cyc[pos - 1], j, 1);
        p->used[j] = TRUE;
        cyc[pos] = j;
        gboolean stop = extend(p, level, pos + 1, ordered && j == prev[pos]);
        p->used[j] = FALSE;
        hop_take(p, cyc[pos - 1], j, -1);
        if (stop) {
            return TRUE;
        }
    }
    return FALSE;
}

static gboolean
pack_level(Pack *p, guint level)
{
    p->best = MAX(p->best, level);
    if (p->best >= p->limit) {
        return TRUE;
    }
    if (p->starts == NULL && level + bound(p) <= p->best) {
        return FALSE;
    }
    guint first = p->starts ? p->starts[level] : 0;
    memset(p->used, 0, p->n * sizeof(gboolean));
    p->used[first] = TRUE;
    p->cycles[level * p->n] = first;
    gboolean stop = extend(p, level, 1, TRUE);
    for (guint i = 0; i < p->n; i++) {
        p->used[i] = TRUE;
    }
    return stop;
}

/* All pairs through one NVSwitch: only each GPU's links to the switch bind. Cycles: each GPU
 * sends and receives once per ring. Paths: a GPU does not receive in the rings it starts nor
 * send in the rings it ends, and the ends can be spread at will. */
static guint
pack_nvswitch(const NcclNode *nd, double speed, guint max_channels, const guint *starts)
{
    guint n = nd->n_gpus, best = 0;
    for (guint r = 1; r <= max_channels; r++) {
        guint ends = 0;
        gboolean ok = TRUE;
        for (guint i = 0; i < n && ok; i++) {
            guint up = (guint)MIN(floor(nd->nvs_up[i] / speed + 1e-9), 1e6);
            guint down = (guint)MIN(floor(nd->nvs_down[i] / speed + 1e-9), 1e6);
            if (starts == NULL) {
                ok = r <= up && r <= down;
                continue;
            }
            guint began = 0;
            for (guint c = 0; c < r; c++) {
                began += starts[c] == i;
            }
            ok = r - began <= down;
            ends += r > up ? r - up : 0;
        }
        if (!ok || ends > r) {
            break;
        }
        best = r;
    }
    return best;
}

guint
nccl_pack_rings(const NcclNode *nd, double speed, NcclPath max_type, guint max_channels,
                const guint *starts)
{
    if (nd->n_gpus < 2 || max_channels == 0) {
        return max_channels;
    }
    if (nd->nvswitch) {
        return pack_nvswitch(nd, speed, max_channels, starts);
    }
    Pack p = {nd, speed, max_type};
    p.n = nd->n_gpus;
    p.starts = starts;
    p.res = g_memdup2(nd->slot_bw, MAX(nd->n_slots, 1) * sizeof(double));
    p.cycles = g_new0(guint, (gsize)(max_channels + 1) * p.n);
    p.used = g_new0(gboolean, p.n);
    p.budget = BUDGET;
    p.limit = starts ? max_channels : MIN(max_channels, bound(&p));
    if (p.limit > 0) {
        pack_level(&p, 0);
    }
    g_free(p.res);
    g_free(p.cycles);
    g_free(p.used);
    return MIN(p.best, p.limit);
}

guint
nccl_pack_nic(const NcclNode *nd, guint k, double speed, gboolean ring, guint arch)
{
    /* Into a pre-SM80 GPU from a NIC, NCCL reserves 1/8 of the bandwidth on the way back (v2.18
     * src/graph/search.cc:87-90); a ring also leaves the node by that path. */
    double back = arch < 80 ? 1.0 / 8.0 : 0.0;
    double up = ring || nd->n_gpus == 1 ? 1.0 + back : 1.0;
    double by_nic = floor(nd->nic_bw[k] / speed + 1e-6);
    double by_pci = isinf(nd->nic_pci[k]) ? by_nic : floor(nd->nic_pci[k] / (speed * up) + 1e-6);
    return (guint)MAX(MIN(by_nic, by_pci), 0);
}
