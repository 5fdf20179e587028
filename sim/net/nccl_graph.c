/* nccl_graph: NCCL's graph search (src/graph/search.cc ncclTopoCompute) over each node's view:
 * the speed list of the release and GPU, the start speed, the channels found at each speed, the
 * stop rule and the relaxation to lower speeds (ties keep the first), the tree's raised
 * intra-node speed, and the search's duplication of fast channels. What fits at a speed comes
 * from nccl_pack.c; the order in which NCCL's backtracking tries paths is not reproduced. */
#include "nccl_private.h"

#include <math.h>

typedef struct {
    guint from;
    const double *speeds;
    guint n;
} SpeedBand;
#define SB(from, list)                                                                             \
    {                                                                                              \
        from, list, G_N_ELEMENTS(list)                                                             \
    }

/* Speed lists, GB/s per channel, highest first. 2.8 and 2.9 have one list for both. */
static const double any_28[] = {42, 30, 24, 21, 18, 15,  12,  10,   9,
                                7,  6,  5,  4,  3,  2.4, 1.2, 0.24, 0.12};
static const double intra_210[] = {44, 30, 22, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
static const double intra_218[] = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
static const double inter_210[] = {48, 30, 24, 22, 18, 15,  12,  10,   9,
                                   7,  6,  5,  4,  3,  2.4, 1.2, 0.24, 0.12};
static const double inter_215[] = {48, 30, 28, 24, 22, 18,  15,  12,   10,  9,
                                   7,  6,  5,  4,  3,  2.4, 1.2, 0.24, 0.12};
static const double inter_218[] = {48, 30, 28, 24, 20, 18,  15,  12,   10,  9,
                                   7,  6,  5,  4,  3,  2.4, 1.2, 0.24, 0.12};
static const double sm90_intra_2165[] = {66, 33, 24, 20, 15, 12, 6, 3};
static const double sm90_intra_2181[] = {60, 40, 30, 24, 20, 15, 12, 6, 3};
static const double sm90_intra_2191[] = {60, 50, 40, 30, 24, 20, 15, 12, 6, 3};
static const double sm90_intra_2215[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
static const double sm90_inter_2165[] = {48, 45, 30, 24, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
static const double sm90_inter_2181[] = {48, 45, 42, 40,  30,  24,   15,
                                         12, 6,  3,  2.4, 1.2, 0.24, 0.12};
static const double sm90_inter_2183[] = {48, 45, 42, 40, 30,  24,  20,   17.5,
                                         15, 12, 6,  3,  2.4, 1.2, 0.24, 0.12};
static const double sm90_inter_2193[] = {48, 45, 42, 40, 30,  24,  22,   20,  17.5,
                                         15, 12, 6,  3,  2.4, 1.2, 0.24, 0.12};
static const double sm100_intra_2251[] = {90, 80, 70, 60, 50, 40, 30, 24, 20, 19};
static const double sm100_intra_2273[] = {90, 80, 70, 60, 50, 40, 30, 24, 20, 19, 18};
static const double sm100_intra_2292[] = {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
static const double sm100_inter_2273[] = {47.9, 45, 42, 40, 30,  24,  22,   20,  17.5,
                                          15,   12, 6,  3,  2.4, 1.2, 0.24, 0.12};
static const double sm100_inter_2275[] = {48, 45.1, 42, 40, 30,  24,  22,   20,  17.5,
                                          15, 12,   6,  3,  2.4, 1.2, 0.24, 0.12};
static const double sm100_inter_2276[] = {96,   48, 45.1, 42, 40, 30,  24,  22,   20,
                                          17.5, 15, 12,   6,  3,  2.4, 1.2, 0.24, 0.12};
static const double sm100_inter_2297[] = {96,   80, 48, 45.1, 42, 40,  30,  24,   22,  20,
                                          17.5, 15, 12, 6,    3,  2.4, 1.2, 0.24, 0.12};
static const double sm100_inter_2303[] = {96, 86,   80, 48, 45.1, 42, 40,  30,  24,   22,
                                          20, 17.5, 15, 12, 6,    3,  2.4, 1.2, 0.24, 0.12};

/* One speedArray in 2.8 and 2.9 (v2.8.4 src/graph/search.cc:651, v2.9.9 :710); intra and inter
 * lists from 2.10 (v2.10 search.cc:710-711); 28 GB/s joins the inter list in 2.15.1; v2.18
 * search.cc:807-808. The first tag with each list is given; untagged patch releases between
 * are taken to be like the tag before. */
static const SpeedBand intra_bands[] = {SB(V(2, 8, 0), any_28), SB(V(2, 10, 0), intra_210),
                                        SB(V(2, 18, 0), intra_218)};
static const SpeedBand inter_bands[] = {SB(V(2, 8, 0), any_28), SB(V(2, 10, 0), inter_210),
                                        SB(V(2, 15, 0), inter_215), SB(V(2, 18, 0), inter_218)};
/* SM90 lists from 2.16.5 (v2.16.5 search.cc:734-735; 2.16.2 has none), v2.18.1 :781-782,
 * v2.18.3 (17.5, 20), v2.19.1 (50, :802), v2.19.3 (22), v2.21.5 (11, :855; v2.22 :914-915). */
static const SpeedBand sm90_intra_bands[] = {
    SB(V(2, 16, 5), sm90_intra_2165), SB(V(2, 18, 0), sm90_intra_2181),
    SB(V(2, 19, 0), sm90_intra_2191), SB(V(2, 21, 0), sm90_intra_2215)};
static const SpeedBand sm90_inter_bands[] = {
    SB(V(2, 16, 5), sm90_inter_2165), SB(V(2, 18, 0), sm90_inter_2181),
    SB(V(2, 18, 3), sm90_inter_2183), SB(V(2, 19, 3), sm90_inter_2193)};
/* SM100 lists from 2.25.1 (its inter list is SM90's), v2.27.3, v2.27.5, v2.27.6, v2.29.2,
 * v2.29.7, v2.30.3 (v2.30 search.cc:1063-1065). */
static const SpeedBand sm100_intra_bands[] = {SB(V(2, 25, 0), sm100_intra_2251),
                                              SB(V(2, 27, 0), sm100_intra_2273),
                                              SB(V(2, 29, 0), sm100_intra_2292)};
static const SpeedBand sm100_inter_bands[] = {
    SB(V(2, 25, 0), sm90_inter_2193),  SB(V(2, 27, 0), sm100_inter_2273),
    SB(V(2, 27, 5), sm100_inter_2275), SB(V(2, 27, 6), sm100_inter_2276),
    SB(V(2, 29, 7), sm100_inter_2297), SB(V(2, 30, 0), sm100_inter_2303)};

static const SpeedBand *
pick(const SpeedBand *bands, guint n, guint version)
{
    const SpeedBand *b = NULL;
    for (guint i = 0; i < n; i++) {
        if (bands[i].from <= version) {
            b = &bands[i];
        }
    }
    return b;
}
#define PICK(bands, version) pick(bands, G_N_ELEMENTS(bands), version)

/* The list for these GPUs: SM100's from 2.25.1, SM90's for SM90 and later from 2.16.5 (v2.30
 * search.cc:1155-1160), else the default one; "inter" when the node has NICs. */
static const SpeedBand *
speed_list(guint version, guint arch, gboolean inter)
{
    const SpeedBand *b = NULL;
    if (arch >= 100) {
        b = inter ? PICK(sm100_inter_bands, version) : PICK(sm100_intra_bands, version);
    }
    if (b == NULL && arch >= 90) {
        b = inter ? PICK(sm90_inter_bands, version) : PICK(sm90_intra_bands, version);
    }
    if (b == NULL) {
        b = inter ? PICK(inter_bands, version) : PICK(intra_bands, version);
    }
    return b;
}

/* Channels of a pattern at (inter, intra) speeds and the worst intra-node hop type used. Across
 * nodes the channels enter by the NICs in turn, each as often as its bandwidth allows, at the
 * NIC's closest GPU, and cross the node's GPUs as a path. */
static guint
fit(const NcclNode *nd, const NcclSearch *s, double inter, double intra, guint max_ch,
    NcclPath *type_intra)
{
    g_autofree guint *starts = NULL;
    guint want = max_ch;
    if (s->with_nics) {
        g_autofree guint *left = g_new0(guint, nd->n_nics);
        starts = g_new0(guint, MAX(max_ch, 1));
        want = 0;
        for (guint k = 0; k < nd->n_nics; k++) {
            left[k] = nccl_pack_nic(nd, k, inter, !s->tree, s->arch);
        }
        for (gboolean any = TRUE; any && want < max_ch;) {
            any = FALSE;
            for (guint k = 0; k < nd->n_nics && want < max_ch; k++) {
                if (left[k] > 0) {
                    left[k]--;
                    starts[want++] = nd->nic_gpu[k];
                    any = TRUE;
                }
            }
        }
    }
    /* The intra-node type starts at NVL and is relaxed while nothing is found (v2.18
     * search.cc:922-927). */
    for (NcclPath t = NCCL_PATH_NVL; t <= NCCL_PATH_SYS && want > 0; t++) {
        guint r = nccl_pack_rings(nd, intra, t, want, starts);
        if (r > 0) {
            *type_intra = nd->n_gpus < 2 ? NCCL_PATH_LOC : t;
            return r;
        }
    }
    return 0;
}

/* Search dup (v2.10 search.cc:869-876; v2.18 :986-996): channels of at least 25 GB/s are doubled
 * up to maxChannels with their bandwidth divided; from 2.16.5 on SM90 only from 50 GB/s and never
 * after it, from 2.18.3 on GPUs after SM80 not below 50 GB/s with more than 4 channels. */
static void
dup_channels(NcclGraph *g, const NcclSearch *s, guint max_ch)
{
    guint v = s->version, a = s->arch;
    gboolean dup;
    if (v < V(2, 16, 5)) {
        dup = g->bw_intra >= 25.0;
    } else if (v < V(2, 18, 3)) {
        /* v2.16.5 search.cc:898, v2.18.1 :954 */
        dup = (a <= 80 && g->bw_intra >= 25.0) || (a <= 90 && g->bw_intra >= 50.0);
    } else {
        dup = g->bw_intra >= 25.0 && !(a > 80 && g->bw_intra < 50.0 && g->channels > 4);
    }
    if (!dup) {
        return;
    }
    guint n = MIN(2 * g->channels, max_ch);
    guint div = (n + g->channels - 1) / g->channels;
    g->bw_intra /= div;
    g->bw_inter /= div;
    g->channels = n;
}

void
nccl_search(const NcclNode *nd, const NcclSearch *s, NcclGraph *g)
{
    const SpeedBand *list = speed_list(s->version, s->arch, s->with_nics);
    guint min_ch = s->min_channels, max_ch = s->max_channels;
    /* maxBw: the best GPU-to-NIC path with NICs (it ends in the NIC's link), else the best
     * GPU-to-GPU path (v2.18 search.cc:17-49). */
    double max_bw = nd->max_bw, total = nd->total_bw;
    if (s->with_nics) {
        max_bw = 0;
        for (guint k = 0; k < nd->n_nics; k++) {
            max_bw = MAX(max_bw, MIN(nd->nic_bw[k], nd->nic_pci[k]));
        }
    }
    if (nd->n_gpus == 1 && !s->with_nics) {
        max_bw = 5000; /* LOC_BW (v2.18 src/graph/topo.h:13, search.cc:40-42) */
    }
    /* From 2.18.3 the start speed also fits minChannels into totalBw, scaled by n/(n-1) for
     * trees (v2.18 search.cc:874-875). */
    double start_total = s->tree && nd->n_gpus > 1 ? total * nd->n_gpus / (nd->n_gpus - 1.0)
                                                   : (s->tree ? INFINITY : total);
    guint i = 0;
    while (i + 1 < list->n &&
           (list->speeds[i] > max_bw ||
            (s->version >= V(2, 18, 3) && list->speeds[i] * min_ch > start_total))) {
        i++;
    }
    *g = (NcclGraph){0};
    for (;;) {
        double sp = list->speeds[i];
        NcclPath type = NCCL_PATH_NVL;
        guint r = fit(nd, s, sp, sp, max_ch, &type);
        /* A solution replaces the best only with more bandwidth in total (v2.18
         * search.cc:339-359); with the tree's fixed channel count, only that count. */
        if (r >= min_ch && r * sp > g->channels * g->bw_inter) {
            *g = (NcclGraph){s->tree ? min_ch : r, sp, sp, type};
        }
        /* Stop at maxChannels or at the node's total bandwidth (v2.18 search.cc:438, 897-899),
         * else go down the list while the next speed is above 0.49 of the best (:943). */
        if (g->channels == max_ch || (g->channels && g->channels * g->bw_inter >= total)) {
            break;
        }
        if (i + 1 >= list->n || (g->channels && list->speeds[i + 1] / g->bw_inter <= .49)) {
            break;
        }
        i++;
    }
    if (g->channels == 0) {
        /* "Could not find a path": one channel of 0.1 GB/s over SYS (v2.18 search.cc:977-984). */
        *g = (NcclGraph){1, 0.1, 0.1, NCCL_PATH_SYS};
        return;
    }
    if (!s->tree && s->version >= V(2, 19, 3)) {
        /* From 2.19.3 the dup comes first, then a ring may climb the list at its channel count
         * (v2.22 search.cc:1063-1080). */
        dup_channels(g, s, max_ch);
        guint j = 0;
        while (j + 1 < list->n && list->speeds[j] > g->bw_inter) {
            j++;
        }
        while (j > 0) {
            NcclPath type = g->type_intra;
            double sp = list->speeds[--j];
            if (fit(nd, s, sp, sp, g->channels, &type) >= g->channels) {
                g->bw_intra = g->bw_inter = sp;
            }
        }
        return;
    }
    if (s->tree) {
        /* Pass 2: a tree raises its intra-node speed up the list while it stays below twice the
         * inter-node one and the channels still fit (v2.10 search.cc:848-853, v2.18 :965-972). */
        guint j = 0;
        while (j + 1 < list->n && list->speeds[j] > g->bw_inter) {
            j++;
        }
        double inter = list->speeds[j];
        while (j > 0 && g->bw_intra < inter * 2) {
            NcclPath type = g->type_intra;
            double sp = list->speeds[j - 1];
            if (fit(nd, s, inter, sp, min_ch, &type) < min_ch) {
                break;
            }
            g->bw_intra = sp;
            j--;
        }
    }
    dup_channels(g, s, max_ch);
}

/* The NVLS graph of one node without NICs (v2.18 search.cc:830-836): one channel per GPU
 * (minChannels = maxChannels = the GPU count), channel g headed by GPU g; a channel takes its
 * speed on every GPU's link from the NVSwitch and to it, twice on its head's
 * (ncclTopoSearchTryNvls, v2.18 search.cc:306-336; unchanged in v2.30 :410-440), so each link
 * carries (n + 1) x speed. The start speed skips those above maxBw or whose n channels exceed
 * totalBw x n / (n - 1), as for every pattern but the ring (v2.18 search.cc:873-876); the first
 * speed at which all n channels fit is kept (no other solution compares better, :343-345).
 * From 2.19.3 pass 2 raises the graph's inter-node speed one step at a time while it is below
 * twice the intra-node one (v2.19.3 search.cc:1009, v2.29.2 :1201-1204); inside one node no path
 * is inter-node, so every raise fits. Before, bwInter stays the speed. Only 2.28's tuning model
 * reads that figure (nccl_nvls.c). */
double
nccl_nvls_speed(const NcclNode *nd, guint version, guint arch, double *bw_inter)
{
    guint n = nd->n_gpus;
    *bw_inter = 0;
    if (!nd->nvswitch || n < 2) {
        return 0;
    }
    const SpeedBand *list = speed_list(version, arch, FALSE);
    double start_total = nd->total_bw * n / (n - 1.0);
    guint i = 0;
    while (i + 1 < list->n && (list->speeds[i] > nd->max_bw ||
                               (version >= V(2, 18, 3) && list->speeds[i] * n > start_total))) {
        i++;
    }
    for (; i < list->n; i++) {
        double sp = list->speeds[i];
        gboolean fits = TRUE;
        for (guint g = 0; g < n && fits; g++) {
            fits = (n + 1) * sp <= nd->nvs_up[g] + 1e-9 && (n + 1) * sp <= nd->nvs_down[g] + 1e-9;
        }
        if (fits) {
            guint j = i;
            *bw_inter = sp;
            while (version >= V(2, 19, 3) && j > 0 && *bw_inter < 2 * sp) {
                *bw_inter = list->speeds[--j];
            }
            return sp;
        }
    }
    return 0;
}

/* Whether n_ch channels of the NVLS graph fit the node with the NICs: channel j enters by NIC j
 * carrying bw_inter (net.bw -= bw, v2.18.3 search.cc:515-529), its head at that NIC's closest
 * GPU, and takes bw_intra from every GPU's NVSwitch link each way, twice from its head's
 * (ncclTopoSearchTryNvls, :436-464). */
static gboolean
nvls_nets_fit(const NcclNode *nd, guint n_ch, double bw_intra, double bw_inter)
{
    g_autofree guint *heads = g_new0(guint, nd->n_gpus);
    for (guint j = 0; j < n_ch; j++) {
        if (MIN(nd->nic_bw[j], nd->nic_pci[j]) + 1e-9 < bw_inter) {
            return FALSE;
        }
        heads[nd->nic_gpu[j]]++;
    }
    for (guint g = 0; g < nd->n_gpus; g++) {
        double load = (n_ch + heads[g]) * bw_intra;
        if (load > nd->nvs_up[g] + 1e-9 || load > nd->nvs_down[g] + 1e-9) {
            return FALSE;
        }
    }
    return TRUE;
}

double
nccl_nvls_speed_nets(const NcclNode *nd, guint version, guint arch, double *bw_inter,
                     guint *channels)
{
    *bw_inter = 0;
    *channels = 0;
    if (!nd->nvswitch || nd->n_gpus < 2 || nd->n_nics == 0) {
        return 0;
    }
    /* The inter-node list from the first speed within maxBw (the best GPU-to-NIC path) and
     * totalBw (v2.18.3 search.cc:900-912). At most a channel per NIC: beyond it NCCL's search
     * reads its head past the NIC list (search.cc:533 passes nets[graph->nChannels]), and at most
     * one per GPU (ncclTopoCompareGraphs, :343-346). */
    const SpeedBand *list = speed_list(version, arch, TRUE);
    double max_bw = 0;
    for (guint k = 0; k < nd->n_nics; k++) {
        max_bw = MAX(max_bw, MIN(nd->nic_bw[k], nd->nic_pci[k]));
    }
    guint i = 0;
    while (i + 1 < list->n && (list->speeds[i] > max_bw || list->speeds[i] > nd->total_bw)) {
        i++;
    }
    guint most = MIN(nd->n_gpus, nd->n_nics), best = 0, at = 0;
    /* Going down the list, the graph kept is the first with the most channels (more channels
     * win, :343-346), the search going on while the next speed is above 0.49 of the kept one's
     * (:981-985). */
    for (; i < list->n && best < most; i++) {
        double sp = list->speeds[i];
        if (best > 0 && sp / list->speeds[at] <= 0.49) {
            break;
        }
        guint k = 0;
        while (k < most && nvls_nets_fit(nd, k + 1, sp, sp)) {
            k++;
        }
        if (k > best) {
            best = k;
            at = i;
        }
    }
    if (best == 0) {
        return 0;
    }
    double sp = list->speeds[at];
    *channels = best;
    *bw_inter = sp;
    /* Pass 2 from 2.19.3 raises bwInter up the list while below twice bwIntra and the NICs carry
     * it (v2.19.3 search.cc:1002-1012), as on one node. */
    for (guint j = at; version >= V(2, 19, 3) && j > 0 && *bw_inter < 2 * sp; j--) {
        if (!nvls_nets_fit(nd, best, sp, list->speeds[j - 1])) {
            break;
        }
        *bw_inter = list->speeds[j - 1];
    }
    return sp;
}
