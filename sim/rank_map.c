/* rank_map: parsing --gpus and --ranks, tiling a routing's ranks through the MsRouting builder,
 * and the messages that say which option would make a routing fit. */
#include "rank_map.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/units.h"

G_DEFINE_QUARK(ms_rank_map_error_quark, ms_rank_map_error)

#define MAX_GPUS 65536u

gboolean
ms_rank_map_parse_gpus(const char *text, guint *gpus, GError **error)
{
    const char *dash = strchr(text, '-');
    guint64 v = 0;
    g_autoptr(GError) local = NULL;
    if (dash == NULL) {
        if (!ms_parse_uint(text, 1, MAX_GPUS, &v, &local)) {
            g_set_error(error, MS_RANK_MAP_ERROR, MS_RANK_MAP_ERROR_SYNTAX, "--gpus: %s",
                        local->message);
            return FALSE;
        }
        *gpus = (guint)v;
        return TRUE;
    }
    g_autofree char *first = g_strndup(text, (gsize)(dash - text));
    guint64 lo = 0;
    if (!ms_parse_uint(first, 0, MAX_GPUS - 1, &lo, NULL) ||
        !ms_parse_uint(dash + 1, 0, MAX_GPUS - 1, &v, NULL) || v < lo) {
        g_set_error(error, MS_RANK_MAP_ERROR, MS_RANK_MAP_ERROR_SYNTAX,
                    "--gpus '%s': expected N (the first N GPUs) or 0-M", text);
        return FALSE;
    }
    if (lo != 0) {
        g_set_error(error, MS_RANK_MAP_ERROR, MS_RANK_MAP_ERROR_SYNTAX,
                    "--gpus '%s': the GPUs used are the first ones (0-%" G_GUINT64_FORMAT
                    " or %" G_GUINT64_FORMAT "): a schedule's rank r is GPU r, so other GPUs "
                    "need a topology file that lists them (docs/running.md)",
                    text, v - lo, v - lo + 1);
        return FALSE;
    }
    *gpus = (guint)v + 1;
    return TRUE;
}

gboolean
ms_rank_map_parse_ranks(const char *text, guint *tile, GError **error)
{
    gsize n = strlen(text);
    guint64 v = 0;
    g_autofree char *count =
        n > 1 && (text[n - 1] == 'x' || text[n - 1] == 'X') ? g_strndup(text, n - 1) : NULL;
    if (count == NULL || !ms_parse_uint(count, 1, MS_RANK_MAP_MAX_TILE, &v, NULL)) {
        g_set_error(error, MS_RANK_MAP_ERROR, MS_RANK_MAP_ERROR_SYNTAX,
                    "--ranks '%s': expected Nx, the trace's ranks repeated N times (1x .. %ux)",
                    text, MS_RANK_MAP_MAX_TILE);
        return FALSE;
    }
    *tile = (guint)v;
    return TRUE;
}

gboolean
ms_rank_map_active(const MsRankMap *map, guint n_gpus)
{
    return map && ((map->gpus && map->gpus != n_gpus) || map->tile > 1);
}

gboolean
ms_rank_map_gpus_used(const MsRankMap *map, guint n_gpus, const char *topology, guint *used,
                      GError **error)
{
    guint g = map && map->gpus ? map->gpus : n_gpus;
    if (g > n_gpus) {
        g_set_error(error, MS_RANK_MAP_ERROR, MS_RANK_MAP_ERROR_FIT,
                    "--gpus %u but topology %s has %u GPUs", g, topology, n_gpus);
        return FALSE;
    }
    *used = g;
    return TRUE;
}

/* Why r ranks do not fit g GPUs, and what would. */
static void
misfit(guint r, guint tile, guint g, const char *topology, GError **error)
{
    g_autofree char *tiled =
        tile > 1 ? g_strdup_printf(" (%u tiled %ux)", r / tile, tile) : g_strdup("");
    g_autofree char *hint = NULL;
    guint base = r / MAX(tile, 1);
    if (base < g && g % base == 0) {
        hint = g_strdup_printf("run it on %u of them with --gpus %u, or repeat its ranks over "
                               "all of them with --ranks %ux",
                               base, base, g / base);
    } else if (base < g) {
        hint = g_strdup_printf("run it on %u of them with --gpus %u", base, base);
    } else if (base == g) {
        hint = g_strdup("leave out --ranks");
    } else {
        hint = g_strdup("it needs a topology with as many GPUs");
    }
    g_set_error(error, MS_RANK_MAP_ERROR, MS_RANK_MAP_ERROR_FIT,
                "the trace has %u ranks%s but %u GPUs of topology %s are used: %s "
                "(docs/running.md, \"Ranks and GPUs\")",
                r, tiled, g, topology, hint);
}

static gboolean
copy_counts(const MsRouting *src, MsRouting *dst, guint to, guint from, GError **error)
{
    const MsTraceHeader *h = ms_routing_header(src);
    for (guint32 l = 0; l < h->layers; l++) {
        const guint32 *row = ms_routing_counts(src, l, from);
        for (guint32 e = 0; e < h->experts; e++) {
            if (row[e] && !ms_routing_add_count(dst, l, to, e, row[e], error)) {
                return FALSE;
            }
        }
    }
    return TRUE;
}

static gboolean
copy_tokens(const MsRouting *src, MsRouting *dst, guint to, guint from, guint32 *path,
            GError **error)
{
    const MsTraceHeader *h = ms_routing_header(src);
    for (guint32 t = 0; t < ms_routing_n_tokens(src, from); t++) {
        for (guint32 l = 0; l < h->layers; l++) {
            const guint16 *ids = ms_routing_token_experts(src, from, t, l);
            for (guint k = 0; k < h->top_k; k++) {
                path[(gsize)l * h->top_k + k] = ids[k];
            }
        }
        if (!ms_routing_add_token(dst, ms_routing_token_id(src, from, t), to, path, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

static MsRouting *
tile_routing(const MsRouting *src, guint tile, GError **error)
{
    MsTraceHeader h = *ms_routing_header(src);
    guint r = h.ranks;
    if ((guint64)r * tile > MAX_GPUS) {
        g_set_error(error, MS_RANK_MAP_ERROR, MS_RANK_MAP_ERROR_FIT,
                    "--ranks %ux: %u ranks tiled make more than %u", tile, r, MAX_GPUS);
        return NULL;
    }
    h.ranks = r * tile;
    g_autoptr(MsRouting) dst = ms_routing_new(&h, ms_routing_iteration(src), error);
    if (dst == NULL) {
        return NULL;
    }
    gboolean paths = ms_routing_has_paths(src);
    g_autofree guint32 *path = g_new(guint32, ms_trace_header_path_len(&h));
    for (guint p = 0; p < h.ranks; p++) {
        if (!(paths ? copy_tokens(src, dst, p, p % r, path, error)
                    : copy_counts(src, dst, p, p % r, error))) {
            return NULL;
        }
    }
    if (!ms_routing_seal(dst, error)) {
        return NULL;
    }
    return g_steal_pointer(&dst);
}

gboolean
ms_rank_map_apply(const MsRankMap *map, const MsRouting *routing, guint gpus_used,
                  const char *topology, MsRouting **tiled, GError **error)
{
    *tiled = NULL;
    guint tile = map && map->tile > 1 ? map->tile : 1;
    guint r = ms_routing_header(routing)->ranks;
    if ((guint64)r * tile != gpus_used) {
        misfit((guint)MIN((guint64)r * tile, G_MAXUINT), tile, gpus_used, topology, error);
        return FALSE;
    }
    if (tile > 1) {
        *tiled = tile_routing(routing, tile, error);
        return *tiled != NULL;
    }
    return TRUE;
}

static char *
span(guint n)
{
    return n == 1 ? g_strdup("0") : g_strdup_printf("0-%u", n - 1);
}

char *
ms_rank_map_describe(guint trace_ranks, guint tile, guint gpus_used, guint n_gpus)
{
    g_autofree char *ranks = span(trace_ranks), *gpus = span(gpus_used);
    if (tile > 1) {
        return g_strdup_printf("trace ranks %s tiled %ux on GPUs %s of %u (GPU g runs rank g mod "
                               "%u)",
                               ranks, tile, gpus, n_gpus, trace_ranks);
    }
    return g_strdup_printf("trace ranks %s on GPUs %s of %u", ranks, gpus, n_gpus);
}
