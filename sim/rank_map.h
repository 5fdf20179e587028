/* rank_map: how a routing's ranks meet a topology's GPUs when they are not one to one. A
 * routing of R ranks runs on the first G of the topology's GPUs (--gpus G; the others stay
 * idle: no ops, no traffic), and may first be tiled N times (--ranks Nx: N x R ranks, rank p
 * routing what rank p mod R routed, with the same token ids and paths), so that R x N = G.
 * A schedule's rank r is the topology's GPU r everywhere (engine, backends, policies), which is
 * why the GPUs used are always the first ones: another set of GPUs is a topology of its own. */
#pragma once

#include <glib.h>

#include "traces/trace_routing.h"

G_BEGIN_DECLS

#define MS_RANK_MAP_ERROR (ms_rank_map_error_quark())
GQuark ms_rank_map_error_quark(void);
typedef enum {
    MS_RANK_MAP_ERROR_SYNTAX, /* --gpus or --ranks that does not parse */
    MS_RANK_MAP_ERROR_FIT,    /* ranks and GPUs that do not fit together */
} MsRankMapError;

/* The most copies --ranks may ask for. */
#define MS_RANK_MAP_MAX_TILE 4096u

/* gpus 0: all of the topology's; tile 0 or 1: the routing's ranks as they are. */
typedef struct {
    guint gpus;
    guint tile;
} MsRankMap;

/* "N" or "0-M" (the first N = M + 1 GPUs), 1 .. 65536. _SYNTAX otherwise, saying why another
 * set of GPUs is not taken. */
gboolean ms_rank_map_parse_gpus(const char *text, guint *gpus, GError **error);
/* "Nx", N in 1 .. MS_RANK_MAP_MAX_TILE. */
gboolean ms_rank_map_parse_ranks(const char *text, guint *tile, GError **error);

/* Whether the map changes anything for a topology of n_gpus GPUs. */
gboolean ms_rank_map_active(const MsRankMap *map, guint n_gpus);
/* The GPUs used of n_gpus: map->gpus, or all; _FIT when map->gpus exceeds n_gpus (topology
 * names the topology in the message). */
gboolean ms_rank_map_gpus_used(const MsRankMap *map, guint n_gpus, const char *topology,
                               guint *used, GError **error);

/* Checks routing's ranks, tiled map->tile times, against the GPUs used: they must be equal
 * (MS_RANK_MAP_ERROR_FIT naming both and the option that would fit; topology names the topology
 * in the message). *tiled gets the tiled routing, or NULL when the routing runs as it is. */
gboolean ms_rank_map_apply(const MsRankMap *map, const MsRouting *routing, guint gpus_used,
                           const char *topology, MsRouting **tiled, GError **error);

/* "trace ranks 0-5 on GPUs 0-5 of 8" or "trace ranks 0-3 tiled 2x on GPUs 0-7 of 8 (GPU g runs
 * rank g mod 4)". Free with g_free. */
char *ms_rank_map_describe(guint trace_ranks, guint tile, guint gpus_used, guint n_gpus);

G_END_DECLS
