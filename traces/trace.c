/* trace: header limits and the field checks that every producer and consumer of trace records
 * shares, so that the reader, the writer and in-memory builders accept exactly the same traces.
 * Counts are tokens; nothing here allocates. */
#include "trace.h"

#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(ms_trace_error_quark, ms_trace_error)
/* clang-format on */

const char *
ms_trace_format_name(MsTraceFormat format)
{
    switch (format) {
    case MS_TRACE_FORMAT_TEXT:
        return "text";
    case MS_TRACE_FORMAT_BINARY:
        return "binary";
    case MS_TRACE_FORMAT_GENERATED:
        return "generated";
    }
    return "unknown";
}

void
ms_trace_header_init(MsTraceHeader *header)
{
    memset(header, 0, sizeof(*header));
}

void
ms_trace_header_init_shape(MsTraceHeader *header, guint32 experts, guint32 layers, guint32 ranks,
                           guint32 top_k)
{
    ms_trace_header_init(header);
    header->experts = experts;
    header->layers = layers;
    header->ranks = ranks;
    header->top_k = top_k;
}

#define HEADER "a trace header"

/* Every number a trace header carries (docs/bad-inputs.md is generated from this table, and
 * tests/test_input_ranges.c walks it): the limits above, which bound what a reader allocates. */
static const MsRange fields[] = {
    {HEADER, "experts", MS_RANGE_COUNT, 1, MS_TRACE_MAX_EXPERTS,
     "as a model's; and layers x ranks x experts at most 2^28 count cells"},
    {HEADER, "layers", MS_RANGE_COUNT, 1, MS_TRACE_MAX_LAYERS, "MoE layers, as a model's layers"},
    {HEADER, "ranks", MS_RANGE_COUNT, 1, MS_TRACE_MAX_RANKS, "as a topology's GPUs"},
    {HEADER, "top_k", MS_RANGE_COUNT, 1, MS_TRACE_MAX_TOP_K, "and at most experts"},
    {HEADER, "tokens_per_rank", MS_RANGE_COUNT, 0, MS_TRACE_MAX_TOKENS_PER_RANK,
     "0: not fixed; a rank's tokens per iteration are at most 2^26 either way"},
    {HEADER, "expert_nodes", MS_RANGE_COUNT, 1, MS_TRACE_MAX_EXPERTS,
     "with max_nodes or not at all (no node limit); and a divisor of experts, which sit on the "
     "nodes in equal blocks"},
    {HEADER, "max_nodes", MS_RANGE_COUNT, 1, MS_TRACE_MAX_EXPERTS,
     "with expert_nodes, at most expert_nodes, and enough nodes to hold top_k experts "
     "(DeepSeek-V3: 4 of 8)"},
    {NULL},
};

static const MsRangeTable ranges = {"Trace headers", fields};

const MsRangeTable *
ms_trace_ranges(void)
{
    return &ranges;
}

/* The table's range for field, narrowed to max when another field bounds it. */
static gboolean
check_limit(const char *field, guint64 value, guint64 max, GError **error)
{
    const MsRange *r = ms_range_find(fields, HEADER, field);
    double hi = MIN(r->max, (double)max);
    if ((double)value < r->min || (double)value > hi) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT,
                    "%s = %" G_GUINT64_FORMAT " is outside %.0f..%.0f", field, value, r->min, hi);
        return FALSE;
    }
    return TRUE;
}

/* A node limit is the layout (expert_nodes, dividing the experts) and the limit together, and the
 * max_nodes nodes a token may reach must hold its top_k experts. */
static gboolean
check_node_limit(const MsTraceHeader *h, GError **error)
{
    if (h->expert_nodes == 0 && h->max_nodes == 0) {
        return TRUE;
    }
    if (h->expert_nodes == 0 || h->max_nodes == 0) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_HEADER,
                    "%s is given without %s: a node limit needs both",
                    h->max_nodes ? "max_nodes" : "expert_nodes",
                    h->max_nodes ? "expert_nodes" : "max_nodes");
        return FALSE;
    }
    if (h->experts % h->expert_nodes != 0) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT,
                    "expert_nodes = %u does not divide experts = %u into equal blocks",
                    h->expert_nodes, h->experts);
        return FALSE;
    }
    if (h->max_nodes > h->expert_nodes) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT,
                    "max_nodes = %u exceeds expert_nodes = %u", h->max_nodes, h->expert_nodes);
        return FALSE;
    }
    guint64 reach = (guint64)h->max_nodes * (h->experts / h->expert_nodes);
    if (h->top_k > reach) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT,
                    "top_k = %u experts do not fit on max_nodes = %u nodes of %u experts each",
                    h->top_k, h->max_nodes, h->experts / h->expert_nodes);
        return FALSE;
    }
    return TRUE;
}

/* Groups start at MoE layer 0 and at increasing layers below layers; a trace whose ranks route
 * a fixed number of tokens has one group. */
static gboolean
check_groups(const MsTraceHeader *h, GError **error)
{
    if (h->n_groups == 0) {
        return TRUE;
    }
    if (h->n_groups > MS_TRACE_MAX_GROUPS) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT,
                    "groups: %u layer groups, more than the limit of %u", h->n_groups,
                    MS_TRACE_MAX_GROUPS);
        return FALSE;
    }
    if (h->group_first[0] != 0) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_HEADER,
                    "groups: the first group starts at MoE layer %u, not 0", h->group_first[0]);
        return FALSE;
    }
    for (guint32 g = 1; g < h->n_groups; g++) {
        if (h->group_first[g] <= h->group_first[g - 1] || h->group_first[g] >= h->layers) {
            g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_HEADER,
                        "groups: group %u starts at MoE layer %u, which does not follow %u and "
                        "lie below layers = %u",
                        g, h->group_first[g], h->group_first[g - 1], h->layers);
            return FALSE;
        }
    }
    if (h->n_groups > 1 && h->tokens_per_rank) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_HEADER,
                    "tokens_per_rank %u with %u layer groups: groups route their own numbers of "
                    "tokens, so a trace with groups cannot fix one",
                    h->tokens_per_rank, h->n_groups);
        return FALSE;
    }
    return TRUE;
}

guint32
ms_trace_header_n_groups(const MsTraceHeader *header)
{
    return MAX(header->n_groups, 1);
}

gboolean
ms_trace_header_equal_groups(const MsTraceHeader *a, const MsTraceHeader *b)
{
    return ms_trace_header_n_groups(a) == ms_trace_header_n_groups(b) &&
           memcmp(a->group_first, b->group_first, ms_trace_header_n_groups(a) * sizeof(guint32)) ==
               0;
}

guint32
ms_trace_header_group(const MsTraceHeader *header, guint32 layer)
{
    guint32 g = 0;
    while (g + 1 < header->n_groups && header->group_first[g + 1] <= layer) {
        g++;
    }
    return g;
}

gboolean
ms_trace_header_validate(const MsTraceHeader *header, GError **error)
{
    g_return_val_if_fail(header != NULL, FALSE);
    if (!check_limit("experts", header->experts, G_MAXUINT64, error) ||
        !check_limit("layers", header->layers, G_MAXUINT64, error) ||
        !check_limit("ranks", header->ranks, G_MAXUINT64, error) ||
        !check_limit("top_k", header->top_k, header->experts, error) ||
        !check_limit("tokens_per_rank", header->tokens_per_rank, G_MAXUINT64, error)) {
        return FALSE;
    }
    /* 0 is no node limit; the bounds between the two and experts are check_node_limit's. */
    if ((header->expert_nodes &&
         !check_limit("expert_nodes", header->expert_nodes, G_MAXUINT64, error)) ||
        (header->max_nodes && !check_limit("max_nodes", header->max_nodes, G_MAXUINT64, error))) {
        return FALSE;
    }
    guint64 cells = (guint64)header->layers * header->ranks * header->experts;
    if (cells > MS_TRACE_MAX_CELLS) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT,
                    "layers x ranks x experts = %u x %u x %u = %" G_GUINT64_FORMAT
                    " exceeds the limit of %" G_GUINT64_FORMAT " count cells per iteration",
                    header->layers, header->ranks, header->experts, cells, MS_TRACE_MAX_CELLS);
        return FALSE;
    }
    if (!check_node_limit(header, error) || !check_groups(header, error)) {
        return FALSE;
    }
    if (memchr(header->generator, '\0', sizeof(header->generator)) == NULL) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT, "generator line not terminated");
        return FALSE;
    }
    return TRUE;
}

gboolean
ms_trace_header_set_generator(MsTraceHeader *header, const char *text, GError **error)
{
    gsize len = strlen(text);
    if (len >= MS_TRACE_GENERATOR_MAX) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT,
                    "generator line of %" G_GSIZE_FORMAT " bytes exceeds the limit of %u", len,
                    MS_TRACE_GENERATOR_MAX - 1);
        return FALSE;
    }
    for (gsize i = 0; i < len; i++) {
        if ((guchar)text[i] < 0x20 || text[i] == 0x7f) {
            g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT,
                        "generator line holds control character 0x%02x at byte %" G_GSIZE_FORMAT,
                        (guchar)text[i], i);
            return FALSE;
        }
    }
    if (!g_utf8_validate(text, (gssize)len, NULL)) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_LIMIT, "generator line is not UTF-8");
        return FALSE;
    }
    memcpy(header->generator, text, len + 1);
    return TRUE;
}

gboolean
ms_trace_header_equal(const MsTraceHeader *a, const MsTraceHeader *b)
{
    return a->experts == b->experts && a->layers == b->layers && a->ranks == b->ranks &&
           a->top_k == b->top_k && a->tokens_per_rank == b->tokens_per_rank &&
           a->expert_nodes == b->expert_nodes && a->max_nodes == b->max_nodes &&
           ms_trace_header_equal_groups(a, b) && strcmp(a->generator, b->generator) == 0;
}

guint
ms_trace_header_expert_bits(const MsTraceHeader *header)
{
    guint bits = 1;
    while (bits < 32 && (G_GUINT64_CONSTANT(1) << bits) < header->experts) {
        bits++;
    }
    return bits;
}

guint
ms_trace_header_path_len(const MsTraceHeader *header)
{
    return header->layers * header->top_k;
}

guint
ms_trace_nodes_reached(guint32 experts, guint32 nodes, const guint32 *ids, guint top_k)
{
    guint32 per_node = experts / nodes, seen[MS_TRACE_MAX_TOP_K];
    guint n = 0;
    for (guint i = 0; i < top_k; i++) {
        guint32 node = ids[i] / per_node, j = 0;
        while (j < n && seen[j] != node) {
            j++;
        }
        if (j == n) {
            seen[n++] = node;
        }
    }
    return n;
}

static gboolean
check_index(const char *field, guint64 value, const char *count_name, guint32 count, GError **error)
{
    if (value >= count) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE,
                    "%s %" G_GUINT64_FORMAT " out of range (%s = %u)", field, value, count_name,
                    count);
        return FALSE;
    }
    return TRUE;
}

gboolean
ms_trace_check_count(const MsTraceHeader *header, guint64 layer, guint64 rank, guint64 expert,
                     GError **error)
{
    return check_index("layer", layer, "layers", header->layers, error) &&
           check_index("rank", rank, "ranks", header->ranks, error) &&
           check_index("expert", expert, "experts", header->experts, error);
}

gboolean
ms_trace_check_token(const MsTraceHeader *header, guint64 rank, const guint32 *experts,
                     GError **error)
{
    if (!check_index("rank", rank, "ranks", header->ranks, error)) {
        return FALSE;
    }
    guint k = header->top_k;
    /* The common case in one pass without branches: every id in range, one choice a layer
     * (nothing can repeat) and no node limit. Anything else takes the walk that names the
     * fault. */
    gsize len = (gsize)header->layers * k;
    guint32 n_experts = header->experts, in_range = 1;
    for (gsize i = 0; i < len; i++) {
        in_range &= experts[i] < n_experts;
    }
    if (in_range && k == 1 && header->max_nodes == 0) {
        return TRUE;
    }
    for (guint layer = 0; layer < header->layers; layer++) {
        const guint32 *ids = experts + (gsize)layer * k;
        for (guint i = 0; i < k; i++) {
            if (ids[i] >= header->experts) {
                g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE,
                            "layer %u: expert %u out of range (experts = %u)", layer, ids[i],
                            header->experts);
                return FALSE;
            }
            /* top_k <= 64: the quadratic scan is cheaper than any set. */
            for (guint j = 0; j < i; j++) {
                if (ids[j] == ids[i]) {
                    g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_PATH,
                                "layer %u: expert %u chosen twice in one token's top_k", layer,
                                ids[i]);
                    return FALSE;
                }
            }
        }
        guint reached = header->max_nodes
                            ? ms_trace_nodes_reached(header->experts, header->expert_nodes, ids, k)
                            : 0;
        if (reached > header->max_nodes) {
            g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_PATH,
                        "layer %u: the token's experts sit on %u nodes, more than max_nodes = %u "
                        "(expert_nodes = %u, %u experts each)",
                        layer, reached, header->max_nodes, header->expert_nodes,
                        header->experts / header->expert_nodes);
            return FALSE;
        }
    }
    return TRUE;
}

MsTraceNumber
ms_trace_parse_number(const char *text, gsize len, guint64 max, guint64 *out)
{
    if (len == 0) {
        return MS_TRACE_NUMBER_SYNTAX;
    }
    guint64 v = 0;
    gboolean over = FALSE;
    for (gsize i = 0; i < len; i++) {
        guint d = (guchar)text[i] - '0';
        if (d > 9) {
            return MS_TRACE_NUMBER_SYNTAX;
        }
        if (v > (G_MAXUINT64 - d) / 10) {
            over = TRUE; /* keep scanning: "99999999999999999999x" is a syntax error */
        } else {
            v = v * 10 + d;
        }
    }
    if (over || v > max) {
        return MS_TRACE_NUMBER_OVERFLOW;
    }
    *out = v;
    return MS_TRACE_NUMBER_OK;
}
