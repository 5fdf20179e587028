/* trace_routing: one iteration in memory. Counts are a dense layers x ranks x experts matrix of
 * guint32 tokens (bounded by MS_TRACE_MAX_CELLS); token paths are kept as guint16 expert ids in
 * rank-major order once sealed. Memory is that of one iteration, nothing more. */
#include "trace_routing.h"

#include <string.h>

typedef enum {
    KIND_EMPTY,
    KIND_COUNTS,
    KIND_TOKENS,
} Kind;

/* Open-addressing set of (rank, token id) pairs: detects a token id given twice on one rank
 * while an iteration is built, in constant time per token. It is built only once some rank's ids
 * stop increasing: while every rank's ids increase (what the generator and most logs write), no
 * id can repeat and the last id of each rank is all the check needs. */
typedef struct {
    guint64 id;
    guint32 rank;
    guint32 used;
} TokenKey;

struct _MsRouting {
    MsTraceHeader header;
    guint64 iteration;
    Kind kind;
    gboolean sealed;
    guint32 *counts;       /* [layer][rank][expert] */
    guint8 *count_given;   /* bitmap of cells given by count records, while building */
    guint32 *rank_tokens;  /* [rank]: of the first layer group */
    guint32 *group_tokens; /* [group][rank], sealed */
    /* Token paths: while building in arrival order, once sealed grouped by rank (stable). */
    GArray *paths;       /* guint16, path_len per token */
    GArray *token_rank;  /* guint32, building only */
    GArray *token_ids;   /* guint64 */
    guint32 *rank_first; /* [ranks + 1], sealed: index of each rank's first token */
    TokenKey *keys;
    gsize n_keys, cap_keys;
    guint64 *last_id;  /* [rank] while building: the last id, valid when rank_tokens > 0 */
    gboolean hashed;   /* keys hold every (rank, id) given so far */
    gboolean shuffled; /* a token came after a token of a later rank: sealing regroups them */
};

/* Expert ids reserved up front when the header fixes tokens_per_rank (8 MiB at most, whatever a
 * header claims: beyond, the arrays grow as records come). */
#define RESERVE_MAX_IDS (1u << 22)

static gsize
cell_index(const MsRouting *r, guint32 layer, guint32 rank, guint32 expert)
{
    return ((gsize)layer * r->header.ranks + rank) * r->header.experts + expert;
}

MsRouting *
ms_routing_new(const MsTraceHeader *header, guint64 iteration, GError **error)
{
    g_return_val_if_fail(header != NULL, NULL);
    if (!ms_trace_header_validate(header, error)) {
        return NULL;
    }
    if (iteration > MS_TRACE_MAX_ITERATION) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_OVERFLOW,
                    "iteration %" G_GUINT64_FORMAT " exceeds the limit of %u", iteration,
                    MS_TRACE_MAX_ITERATION);
        return NULL;
    }
    MsRouting *r = g_new0(MsRouting, 1);
    r->header = *header;
    r->iteration = iteration;
    gsize cells = (gsize)header->layers * header->ranks * header->experts;
    r->counts = g_new0(guint32, cells);
    r->rank_tokens = g_new0(guint32, header->ranks);
    return r;
}

void
ms_routing_free(MsRouting *r)
{
    if (r == NULL) {
        return;
    }
    g_free(r->counts);
    g_free(r->count_given);
    g_free(r->rank_tokens);
    g_free(r->group_tokens);
    if (r->paths) {
        g_array_unref(r->paths);
    }
    if (r->token_rank) {
        g_array_unref(r->token_rank);
    }
    if (r->token_ids) {
        g_array_unref(r->token_ids);
    }
    g_free(r->rank_first);
    g_free(r->keys);
    g_free(r->last_id);
    g_free(r);
}

static gboolean
set_kind(MsRouting *r, Kind kind, GError **error)
{
    if (r->kind != KIND_EMPTY && r->kind != kind) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_MIXED,
                    "iteration %" G_GUINT64_FORMAT " mixes count and token records", r->iteration);
        return FALSE;
    }
    r->kind = kind;
    return TRUE;
}

gboolean
ms_routing_add_count(MsRouting *r, guint32 layer, guint32 src_rank, guint32 expert, guint32 tokens,
                     GError **error)
{
    g_return_val_if_fail(r != NULL && !r->sealed, FALSE);
    if (!ms_trace_check_count(&r->header, layer, src_rank, expert, error) ||
        !set_kind(r, KIND_COUNTS, error)) {
        return FALSE;
    }
    gsize cell = cell_index(r, layer, src_rank, expert);
    if (r->count_given == NULL) {
        gsize cells = (gsize)r->header.layers * r->header.ranks * r->header.experts;
        r->count_given = g_new0(guint8, cells / 8 + 1);
    }
    if (r->count_given[cell / 8] & (1u << (cell % 8))) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_DUPLICATE,
                    "duplicate count record for iteration %" G_GUINT64_FORMAT
                    " layer %u rank %u expert %u",
                    r->iteration, layer, src_rank, expert);
        return FALSE;
    }
    r->count_given[cell / 8] |= (guint8)(1u << (cell % 8));
    r->counts[cell] = tokens;
    return TRUE;
}

static guint64
key_hash(guint64 id, guint32 rank)
{
    /* splitmix64 finaliser: token ids are often consecutive, so spread them. */
    guint64 z = id ^ ((guint64)rank << 40) ^ rank;
    z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static TokenKey *
key_slot(TokenKey *keys, gsize cap, guint64 id, guint32 rank)
{
    gsize i = key_hash(id, rank) & (cap - 1);
    while (keys[i].used && !(keys[i].id == id && keys[i].rank == rank)) {
        i = (i + 1) & (cap - 1);
    }
    return &keys[i];
}

static void
keys_grow(MsRouting *r)
{
    gsize cap = r->cap_keys ? r->cap_keys * 2 : 1024;
    TokenKey *keys = g_new0(TokenKey, cap);
    for (gsize i = 0; i < r->cap_keys; i++) {
        if (r->keys[i].used) {
            *key_slot(keys, cap, r->keys[i].id, r->keys[i].rank) = r->keys[i];
        }
    }
    g_free(r->keys);
    r->keys = keys;
    r->cap_keys = cap;
}

/* Records (rank, id) in the set; FALSE when already there. */
static gboolean
keys_insert(MsRouting *r, guint64 id, guint32 rank)
{
    if ((r->n_keys + 1) * 2 > r->cap_keys) {
        keys_grow(r);
    }
    TokenKey *slot = key_slot(r->keys, r->cap_keys, id, rank);
    if (slot->used) {
        return FALSE;
    }
    *slot = (TokenKey){.id = id, .rank = rank, .used = 1};
    r->n_keys++;
    return TRUE;
}

/* Whether (rank, id) is new. Increasing ids per rank need no set; the first id that does not
 * increase builds it from the tokens so far (all distinct) and it is kept from then on. */
static gboolean
token_is_new(MsRouting *r, guint64 id, guint32 rank)
{
    if (!r->hashed) {
        if (r->last_id == NULL) {
            r->last_id = g_new(guint64, r->header.ranks);
        }
        if (r->rank_tokens[rank] == 0 || id > r->last_id[rank]) {
            r->last_id[rank] = id;
            return TRUE;
        }
        r->hashed = TRUE;
        guint n = r->token_ids ? r->token_ids->len : 0;
        for (guint t = 0; t < n; t++) {
            keys_insert(r, g_array_index(r->token_ids, guint64, t),
                        g_array_index(r->token_rank, guint32, t));
        }
    }
    return keys_insert(r, id, rank);
}

gboolean
ms_routing_add_token(MsRouting *r, guint64 token_id, guint32 src_rank, const guint32 *experts,
                     GError **error)
{
    g_return_val_if_fail(r != NULL && !r->sealed && experts != NULL, FALSE);
    if (!ms_trace_check_token(&r->header, src_rank, experts, error) ||
        !set_kind(r, KIND_TOKENS, error)) {
        return FALSE;
    }
    if (r->rank_tokens[src_rank] >= MS_TRACE_MAX_TOKENS_PER_RANK) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT,
                    "rank %u routes more than %u tokens in iteration %" G_GUINT64_FORMAT, src_rank,
                    MS_TRACE_MAX_TOKENS_PER_RANK, r->iteration);
        return FALSE;
    }
    if (!token_is_new(r, token_id, src_rank)) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_DUPLICATE,
                    "token %" G_GUINT64_FORMAT
                    " of rank %u appears twice in iteration %" G_GUINT64_FORMAT,
                    token_id, src_rank, r->iteration);
        return FALSE;
    }
    guint len = ms_trace_header_path_len(&r->header);
    if (r->paths == NULL) {
        guint64 want = (guint64)r->header.ranks * r->header.tokens_per_rank;
        guint reserve = (guint)MIN(want, RESERVE_MAX_IDS / len);
        r->paths = g_array_sized_new(FALSE, FALSE, sizeof(guint16), reserve * len);
        r->token_rank = g_array_sized_new(FALSE, FALSE, sizeof(guint32), reserve);
        r->token_ids = g_array_sized_new(FALSE, FALSE, sizeof(guint64), reserve);
    }
    guint n_before = r->token_rank->len;
    if (n_before > 0 && g_array_index(r->token_rank, guint32, n_before - 1) > src_rank) {
        r->shuffled = TRUE;
    }
    gsize at = r->paths->len;
    g_array_set_size(r->paths, at + len);
    guint16 *dst = &g_array_index(r->paths, guint16, at);
    /* Shape in locals: stores into counts could otherwise alias the header fields. */
    guint32 k = r->header.top_k, n_layers = r->header.layers;
    gsize layer_stride = (gsize)r->header.ranks * r->header.experts;
    guint32 *row = r->counts + (gsize)src_rank * r->header.experts;
    for (guint32 layer = 0; layer < n_layers; layer++, row += layer_stride) {
        for (guint32 j = 0; j < k; j++) {
            guint32 id = experts[layer * k + j];
            dst[layer * k + j] = (guint16)id;
            row[id]++;
        }
    }
    g_array_append_val(r->token_rank, src_rank);
    g_array_append_val(r->token_ids, token_id);
    r->rank_tokens[src_rank]++;
    return TRUE;
}

/* Whether n tokens of src_rank with ids first_id.. pass every check of ms_routing_add_token
 * given in order: valid paths, room under the rank's limit, and ids above the rank's last with
 * no set of ids kept (the set exists once ids stopped increasing). */
static gboolean
tokens_fit(const MsRouting *r, guint64 first_id, guint32 src_rank, guint32 n,
           const guint32 *experts)
{
    if (src_rank >= r->header.ranks || (r->kind != KIND_EMPTY && r->kind != KIND_TOKENS) ||
        r->hashed || n > MS_TRACE_MAX_TOKENS_PER_RANK - r->rank_tokens[src_rank] ||
        first_id > G_MAXUINT64 - n ||
        (r->rank_tokens[src_rank] > 0 &&
         (r->last_id == NULL || first_id <= r->last_id[src_rank]))) {
        return FALSE;
    }
    guint len = ms_trace_header_path_len(&r->header);
    for (guint32 t = 0; t < n; t++) {
        if (!ms_trace_check_token(&r->header, src_rank, experts + (gsize)t * len, NULL)) {
            return FALSE;
        }
    }
    return TRUE;
}

gboolean
ms_routing_add_tokens(MsRouting *r, guint64 first_id, guint32 src_rank, guint32 n,
                      const guint32 *experts, GError **error)
{
    g_return_val_if_fail(r != NULL && !r->sealed && (experts != NULL || n == 0), FALSE);
    guint len = ms_trace_header_path_len(&r->header);
    if (n == 0) {
        return TRUE;
    }
    if (!tokens_fit(r, first_id, src_rank, n, experts)) {
        /* Some token fails a check: one call per token reports the first as it would. */
        for (guint32 t = 0; t < n; t++) {
            if (!ms_routing_add_token(r, first_id + t, src_rank, experts + (gsize)t * len, error)) {
                return FALSE;
            }
        }
        return TRUE;
    }
    /* The first token through the single call sets up the arrays, the kind and the last id. */
    if (!ms_routing_add_token(r, first_id, src_rank, experts, error)) {
        return FALSE;
    }
    guint32 more = n - 1;
    if (more == 0) {
        return TRUE;
    }
    gsize at = r->paths->len, first = r->token_rank->len;
    g_array_set_size(r->paths, at + (gsize)more * len);
    g_array_set_size(r->token_rank, first + more);
    g_array_set_size(r->token_ids, first + more);
    guint16 *dst = &g_array_index(r->paths, guint16, at);
    guint32 *ranks = &g_array_index(r->token_rank, guint32, first);
    guint64 *ids = &g_array_index(r->token_ids, guint64, first);
    const guint32 *src = experts + len;
    /* Shape in locals: stores into counts could otherwise alias the header fields. */
    guint32 k = r->header.top_k, n_layers = r->header.layers;
    gsize layer_stride = (gsize)r->header.ranks * r->header.experts;
    guint32 *rank_row = r->counts + (gsize)src_rank * r->header.experts;
    for (guint32 t = 0; t < more; t++, src += len, dst += len) {
        guint32 *row = rank_row;
        for (guint32 layer = 0; layer < n_layers; layer++, row += layer_stride) {
            for (guint32 j = 0; j < k; j++) {
                guint32 id = src[layer * k + j];
                dst[layer * k + j] = (guint16)id;
                row[id]++;
            }
        }
        ranks[t] = src_rank;
        ids[t] = first_id + 1 + t;
    }
    r->rank_tokens[src_rank] += more;
    r->last_id[src_rank] = first_id + more;
    return TRUE;
}

/* Per-rank token totals of a count iteration, with the whole-token checks: within a layer group
 * every layer routes the same tokens. */
static gboolean
seal_counts(MsRouting *r, GError **error)
{
    const MsTraceHeader *h = &r->header;
    for (guint32 rank = 0; rank < h->ranks; rank++) {
        guint64 first = 0;
        guint32 first_layer = 0;
        for (guint32 layer = 0; layer < h->layers; layer++) {
            const guint32 *row = r->counts + cell_index(r, layer, rank, 0);
            guint64 sum = 0;
            for (guint32 e = 0; e < h->experts; e++) {
                sum += row[e];
            }
            guint32 g = ms_trace_header_group(h, layer);
            if (h->group_first[g] == layer) {
                first = sum;
                first_layer = layer;
            } else if (sum != first) {
                g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_INCONSISTENT,
                            "iteration %" G_GUINT64_FORMAT " rank %u: %" G_GUINT64_FORMAT
                            " token-expert assignments at layer %u but %" G_GUINT64_FORMAT
                            " at layer %u (every layer%s routes the same tokens)",
                            r->iteration, rank, sum, layer, first, first_layer,
                            h->n_groups > 1 ? " of a layer group" : "");
                return FALSE;
            }
            if (layer + 1 < h->layers && ms_trace_header_group(h, layer + 1) == g) {
                continue;
            }
            /* The group's last layer: its tokens. */
            if (first % h->top_k != 0) {
                g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_INCONSISTENT,
                            "iteration %" G_GUINT64_FORMAT " rank %u: %" G_GUINT64_FORMAT
                            " token-expert assignments per layer is not a multiple of top_k = %u",
                            r->iteration, rank, first, h->top_k);
                return FALSE;
            }
            if (first / h->top_k > MS_TRACE_MAX_TOKENS_PER_RANK) {
                g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT,
                            "iteration %" G_GUINT64_FORMAT " rank %u routes %" G_GUINT64_FORMAT
                            " tokens, above the limit of %u",
                            r->iteration, rank, first / h->top_k, MS_TRACE_MAX_TOKENS_PER_RANK);
                return FALSE;
            }
            r->group_tokens[(gsize)g * h->ranks + rank] = (guint32)(first / h->top_k);
        }
        r->rank_tokens[rank] = r->group_tokens[rank];
    }
    return TRUE;
}

/* Groups the tokens by rank, keeping their order within a rank (counting sort). */
static void
seal_tokens(MsRouting *r)
{
    guint32 ranks = r->header.ranks;
    guint len = ms_trace_header_path_len(&r->header);
    guint n = r->token_rank->len;
    r->rank_first = g_new0(guint32, ranks + 1);
    for (guint32 rank = 0; rank < ranks; rank++) {
        r->rank_first[rank + 1] = r->rank_first[rank] + r->rank_tokens[rank];
    }
    if (!r->shuffled) {
        g_clear_pointer(&r->token_rank, g_array_unref); /* already grouped by rank */
        return;
    }
    g_autofree guint32 *next = g_memdup2(r->rank_first, sizeof(guint32) * ranks);
    GArray *paths = g_array_sized_new(FALSE, FALSE, sizeof(guint16), n * len);
    GArray *ids = g_array_sized_new(FALSE, FALSE, sizeof(guint64), n);
    g_array_set_size(paths, (gsize)n * len);
    g_array_set_size(ids, n);
    for (guint t = 0; t < n; t++) {
        guint32 dst = next[g_array_index(r->token_rank, guint32, t)]++;
        memcpy(&g_array_index(paths, guint16, (gsize)dst * len),
               &g_array_index(r->paths, guint16, (gsize)t * len), len * sizeof(guint16));
        g_array_index(ids, guint64, dst) = g_array_index(r->token_ids, guint64, t);
    }
    g_array_unref(r->paths);
    g_array_unref(r->token_ids);
    g_clear_pointer(&r->token_rank, g_array_unref);
    r->paths = paths;
    r->token_ids = ids;
}

gboolean
ms_routing_seal(MsRouting *r, GError **error)
{
    g_return_val_if_fail(r != NULL && !r->sealed, FALSE);
    g_clear_pointer(&r->count_given, g_free);
    g_clear_pointer(&r->keys, g_free);
    g_clear_pointer(&r->last_id, g_free);
    r->n_keys = r->cap_keys = 0;
    guint32 n_groups = ms_trace_header_n_groups(&r->header);
    r->group_tokens = g_new0(guint32, (gsize)n_groups * r->header.ranks);
    if (r->kind == KIND_COUNTS && !seal_counts(r, error)) {
        return FALSE;
    }
    if (r->kind == KIND_TOKENS) {
        /* A token record crosses every layer: every group routes the rank's tokens. */
        seal_tokens(r);
        for (guint32 g = 0; g < n_groups; g++) {
            memcpy(r->group_tokens + (gsize)g * r->header.ranks, r->rank_tokens,
                   r->header.ranks * sizeof(guint32));
        }
    }
    guint32 want = r->header.tokens_per_rank;
    for (guint32 rank = 0; want && rank < r->header.ranks; rank++) {
        if (r->rank_tokens[rank] != want) {
            g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_INCONSISTENT,
                        "iteration %" G_GUINT64_FORMAT
                        " rank %u routes %u tokens but the header says tokens_per_rank %u",
                        r->iteration, rank, r->rank_tokens[rank], want);
            return FALSE;
        }
    }
    r->sealed = TRUE;
    return TRUE;
}

void
ms_routing_drop_paths(MsRouting *r)
{
    g_return_if_fail(r != NULL && r->sealed);
    g_clear_pointer(&r->paths, g_array_unref);
    g_clear_pointer(&r->token_ids, g_array_unref);
    g_clear_pointer(&r->rank_first, g_free);
    if (r->kind == KIND_TOKENS) {
        r->kind = KIND_COUNTS;
    }
}

const MsTraceHeader *
ms_routing_header(const MsRouting *r)
{
    return &r->header;
}

guint64
ms_routing_iteration(const MsRouting *r)
{
    return r->iteration;
}

guint32
ms_routing_count(const MsRouting *r, guint32 layer, guint32 src_rank, guint32 expert)
{
    g_return_val_if_fail(r->sealed && layer < r->header.layers && src_rank < r->header.ranks &&
                             expert < r->header.experts,
                         0);
    return r->counts[cell_index(r, layer, src_rank, expert)];
}

const guint32 *
ms_routing_counts(const MsRouting *r, guint32 layer, guint32 src_rank)
{
    g_return_val_if_fail(r->sealed && layer < r->header.layers && src_rank < r->header.ranks, NULL);
    return r->counts + cell_index(r, layer, src_rank, 0);
}

guint64
ms_routing_expert_load(const MsRouting *r, guint32 layer, guint32 expert)
{
    g_return_val_if_fail(r->sealed && layer < r->header.layers && expert < r->header.experts, 0);
    guint64 sum = 0;
    for (guint32 rank = 0; rank < r->header.ranks; rank++) {
        sum += r->counts[cell_index(r, layer, rank, expert)];
    }
    return sum;
}

guint32
ms_routing_rank_tokens(const MsRouting *r, guint32 rank)
{
    g_return_val_if_fail(r->sealed && rank < r->header.ranks, 0);
    return r->rank_tokens[rank];
}

guint32
ms_routing_layer_tokens(const MsRouting *r, guint32 layer, guint32 rank)
{
    g_return_val_if_fail(r->sealed && layer < r->header.layers && rank < r->header.ranks, 0);
    guint32 g = ms_trace_header_group(&r->header, layer);
    return r->group_tokens[(gsize)g * r->header.ranks + rank];
}

guint64
ms_routing_total_tokens(const MsRouting *r)
{
    guint64 sum = 0;
    for (guint32 rank = 0; rank < r->header.ranks; rank++) {
        sum += r->rank_tokens[rank];
    }
    return sum;
}

gboolean
ms_routing_has_paths(const MsRouting *r)
{
    return r->sealed && r->paths != NULL;
}

guint32
ms_routing_n_tokens(const MsRouting *r, guint32 rank)
{
    g_return_val_if_fail(r->sealed && rank < r->header.ranks, 0);
    return r->paths ? r->rank_tokens[rank] : 0;
}

const guint16 *
ms_routing_token_experts(const MsRouting *r, guint32 rank, guint32 token, guint32 layer)
{
    g_return_val_if_fail(ms_routing_has_paths(r) && rank < r->header.ranks &&
                             token < r->rank_tokens[rank] && layer < r->header.layers,
                         NULL);
    gsize t = (gsize)r->rank_first[rank] + token;
    return &g_array_index(r->paths, guint16,
                          t * ms_trace_header_path_len(&r->header) +
                              (gsize)layer * r->header.top_k);
}

guint64
ms_routing_token_id(const MsRouting *r, guint32 rank, guint32 token)
{
    g_return_val_if_fail(
        ms_routing_has_paths(r) && rank < r->header.ranks && token < r->rank_tokens[rank], 0);
    return g_array_index(r->token_ids, guint64, (gsize)r->rank_first[rank] + token);
}

static gboolean
arrays_equal(const GArray *a, const GArray *b, gsize elt)
{
    return a->len == b->len && memcmp(a->data, b->data, (gsize)a->len * elt) == 0;
}

gboolean
ms_routing_equal(const MsRouting *a, const MsRouting *b)
{
    g_return_val_if_fail(a->sealed && b->sealed, FALSE);
    const MsTraceHeader *ha = &a->header, *hb = &b->header;
    if (ha->experts != hb->experts || ha->layers != hb->layers || ha->ranks != hb->ranks ||
        ha->top_k != hb->top_k || ha->tokens_per_rank != hb->tokens_per_rank ||
        a->iteration != b->iteration) {
        return FALSE;
    }
    gsize cells = (gsize)ha->layers * ha->ranks * ha->experts;
    if (memcmp(a->counts, b->counts, cells * sizeof(guint32)) != 0 ||
        memcmp(a->rank_tokens, b->rank_tokens, ha->ranks * sizeof(guint32)) != 0 ||
        !ms_trace_header_equal_groups(ha, hb) ||
        memcmp(a->group_tokens, b->group_tokens,
               (gsize)ms_trace_header_n_groups(ha) * ha->ranks * sizeof(guint32)) != 0 ||
        ms_routing_has_paths(a) != ms_routing_has_paths(b)) {
        return FALSE;
    }
    return !ms_routing_has_paths(a) || (arrays_equal(a->paths, b->paths, sizeof(guint16)) &&
                                        arrays_equal(a->token_ids, b->token_ids, sizeof(guint64)));
}
