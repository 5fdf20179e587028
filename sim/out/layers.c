/* layers: the per-layer table from a schedule and its records (busy time per part as the union
 * of op intervals, so chunked and pipelined ops are not counted twice), its lookups and its JSON
 * and CSV writers. */
#include "layers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/json_output.h"

struct _MsLayerTable {
    GArray *rows;      /* MsLayerRow */
    GHashTable *index; /* row key -> row index + 1; NULL until a lookup needs it */
    gboolean *slowest; /* per row; NULL until asked */
    GPtrArray *meta;   /* key, value, key, value ... */
};

static const char *const part_names[MS_LAYER_N_PARTS] = {
    "attention", "gate", "host", "dispatch", "expert", "combine", "ffn", "other",
};

const char *
ms_layer_part_name(MsLayerPart part)
{
    return (guint)part < MS_LAYER_N_PARTS ? part_names[part] : "?";
}

gboolean
ms_layer_part_from_name(const char *name, MsLayerPart *out)
{
    for (guint i = 0; name && i < MS_LAYER_N_PARTS; i++) {
        if (strcmp(name, part_names[i]) == 0) {
            *out = (MsLayerPart)i;
            return TRUE;
        }
    }
    return FALSE;
}

gboolean
ms_layer_part_of_role(MsRole role, MsLayerPart *out)
{
    switch (role) {
    case MS_ROLE_ATTENTION:
        *out = MS_LAYER_ATTENTION;
        return TRUE;
    case MS_ROLE_GATE:
        *out = MS_LAYER_GATE;
        return TRUE;
    case MS_ROLE_HOST:
        *out = MS_LAYER_HOST;
        return TRUE;
    case MS_ROLE_DISPATCH:
        *out = MS_LAYER_DISPATCH;
        return TRUE;
    case MS_ROLE_EXPERT:
        *out = MS_LAYER_EXPERT;
        return TRUE;
    case MS_ROLE_COMBINE:
        *out = MS_LAYER_COMBINE;
        return TRUE;
    case MS_ROLE_DENSE_FFN:
        *out = MS_LAYER_FFN;
        return TRUE;
    case MS_ROLE_COMPRESS:
    case MS_ROLE_DECOMPRESS:
    case MS_ROLE_REPLAN:
        *out = MS_LAYER_OTHER;
        return TRUE;
    default:
        return FALSE;
    }
}

MsLayerTable *
ms_layer_table_new(void)
{
    MsLayerTable *t = g_new0(MsLayerTable, 1);
    t->rows = g_array_new(FALSE, TRUE, sizeof(MsLayerRow));
    t->meta = g_ptr_array_new_with_free_func(g_free);
    return t;
}

void
ms_layer_table_free(MsLayerTable *t)
{
    if (t == NULL) {
        return;
    }
    g_array_unref(t->rows);
    if (t->index) {
        g_hash_table_unref(t->index);
    }
    g_free(t->slowest);
    g_ptr_array_unref(t->meta);
    g_free(t);
}

static void
invalidate(MsLayerTable *t)
{
    g_clear_pointer(&t->index, g_hash_table_unref);
    g_clear_pointer(&t->slowest, g_free);
}

void
ms_layer_table_append(MsLayerTable *t, const MsLayerRow *row)
{
    g_array_append_val(t->rows, *row);
    invalidate(t);
}

void
ms_layer_table_accumulate(MsLayerTable *t, const MsLayerRow *row)
{
    const MsLayerRow *found =
        ms_layer_table_find(t, row->iteration, row->layer, row->phase, row->gpu);
    if (found == NULL) {
        ms_layer_table_append(t, row);
        return;
    }
    MsLayerRow *old =
        &g_array_index(t->rows, MsLayerRow, found - (const MsLayerRow *)t->rows->data);
    old->layer_us += row->layer_us;
    old->busy_us += row->busy_us;
    for (guint p = 0; p < MS_LAYER_N_PARTS; p++) {
        old->part_us[p] += row->part_us[p];
        old->part_ops[p] += row->part_ops[p];
    }
    g_clear_pointer(&t->slowest, g_free); /* the index stays: keys did not change */
}

guint
ms_layer_table_n_rows(const MsLayerTable *t)
{
    return t->rows->len;
}

const MsLayerRow *
ms_layer_table_row(const MsLayerTable *t, guint i)
{
    g_return_val_if_fail(i < t->rows->len, NULL);
    return &g_array_index(t->rows, MsLayerRow, i);
}

/* --- building from a schedule --- */

/* One op's interval in a part of a row. */
typedef struct {
    guint64 key; /* (layer, phase, gpu) */
    guint part;
    MsTime a, b;
} Piece;

static guint64
row_key(guint layer, guint phase, guint gpu)
{
    return ((guint64)layer << 32) | ((guint64)phase << 24) | gpu;
}

static int
cmp_piece(gconstpointer x, gconstpointer y)
{
    const Piece *p = x, *q = y;
    if (p->key != q->key) {
        return p->key < q->key ? -1 : 1;
    }
    if (p->part != q->part) {
        return p->part < q->part ? -1 : 1;
    }
    return p->a < q->a ? -1 : p->a > q->a;
}

/* Busy time of pieces[lo..hi) (one part of one row, sorted by start). */
static MsTime
union_of(const Piece *pieces, guint lo, guint hi)
{
    MsTime total = 0, a = pieces[lo].a, b = pieces[lo].b;
    for (guint i = lo + 1; i < hi; i++) {
        if (pieces[i].a <= b) {
            b = MAX(b, pieces[i].b);
        } else {
            total += b - a;
            a = pieces[i].a;
            b = pieces[i].b;
        }
    }
    return total + (b - a);
}

/* Phase order: forward rows first (phase 0), then backward, layers ascending within each. */
static guint
phase_slot(MsPhase phase)
{
    return phase == MS_PHASE_BACKWARD ? 1 : 0;
}

void
ms_layer_table_add(MsLayerTable *t, guint iteration, const MsSchedule *s, const MsRecords *r)
{
    g_autoptr(GArray) pieces = g_array_new(FALSE, FALSE, sizeof(Piece));
    /* Per row key, the local experts and tokens seen (from the expert and gate/attention ops). */
    g_autoptr(GHashTable) features =
        g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    MsTime t0 = MS_TIME_NEVER;
    for (guint32 op = 0; op < ms_schedule_n_ops(s); op++) {
        MsOpInfo i;
        ms_schedule_op(s, op, &i);
        MsTime a = ms_records_start(r, op), b = ms_records_end(r, op);
        if (a == MS_TIME_NEVER) {
            continue;
        }
        t0 = MIN(t0, a);
        MsLayerPart part;
        if (i.layer < 0 || !ms_layer_part_of_role(i.role, &part)) {
            continue;
        }
        Piece p = {row_key((guint)i.layer, phase_slot(i.phase), i.rank), part, a, MAX(a, b)};
        /* An op's host (framework) time comes first and is the host's, not its part's: the
         * part keeps the kernel, as a profiler shows it. */
        MsTime host = part == MS_LAYER_HOST ? 0 : MIN(ms_time_from_s(i.host_s), p.b - p.a);
        if (host > 0) {
            Piece h = {p.key, MS_LAYER_HOST, p.a, p.a + host};
            g_array_append_val(pieces, h);
            p.a += host;
        }
        g_array_append_val(pieces, p);
        guint32 *f = g_hash_table_lookup(features, &p.key);
        if (f == NULL) {
            guint64 *k = g_memdup2(&p.key, sizeof p.key);
            f = g_new0(guint32, 2);
            g_hash_table_insert(features, k, f);
        }
        if (i.role == MS_ROLE_EXPERT) {
            f[0] = MAX(f[0], i.experts);
        } else if ((i.role == MS_ROLE_GATE || i.role == MS_ROLE_ATTENTION) && f[1] == 0) {
            f[1] = i.tokens;
        }
    }
    static const char *const keys[] = {"model", "topology", "policy", "mode", "dtype"};
    for (guint k = 0; k < G_N_ELEMENTS(keys); k++) {
        const char *v = ms_schedule_get_meta(s, keys[k]);
        if (v && ms_layer_table_get_meta(t, keys[k]) == NULL) {
            ms_layer_table_set_meta(t, keys[k], v);
        }
    }
    g_array_sort(pieces, cmp_piece);
    const Piece *pc = (const Piece *)pieces->data;
    for (guint lo = 0; lo < pieces->len;) {
        MsLayerRow row = {.iteration = iteration,
                          .layer = (gint32)(pc[lo].key >> 32),
                          .phase =
                              ((pc[lo].key >> 24) & 0xff) ? MS_PHASE_BACKWARD : MS_PHASE_FORWARD,
                          .gpu = (guint32)(pc[lo].key & 0xffffff)};
        MsTime first = MS_TIME_NEVER, last = 0;
        guint hi = lo;
        g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(Piece));
        while (hi < pieces->len && pc[hi].key == pc[lo].key) {
            guint end = hi;
            while (end < pieces->len && pc[end].key == pc[lo].key && pc[end].part == pc[hi].part) {
                first = MIN(first, pc[end].a);
                last = MAX(last, pc[end].b);
                Piece any = pc[end];
                any.part = 0;
                g_array_append_val(all, any);
                end++;
            }
            row.part_us[pc[hi].part] = ms_time_to_us(union_of(pc, hi, end));
            row.part_ops[pc[hi].part] = end - hi;
            hi = end;
        }
        const guint32 *f = g_hash_table_lookup(features, &pc[lo].key);
        row.experts = f ? f[0] : 0;
        row.tokens = f ? f[1] : 0;
        row.start_us = ms_time_to_us(first - t0);
        row.layer_us = ms_time_to_us(last - first);
        g_array_sort(all, cmp_piece);
        row.busy_us = ms_time_to_us(union_of((const Piece *)all->data, 0, all->len));
        g_array_append_val(t->rows, row);
        lo = hi;
    }
    invalidate(t);
}

/* --- lookups --- */

static guint64
find_key(guint iteration, gint layer, MsPhase phase, guint gpu)
{
    /* iteration < 2^32, layer < 2^13 (4096 layers), gpu < 2^17 (65536 GPUs). */
    return ((guint64)iteration << 31) | ((guint64)(layer & 0x1fff) << 18) |
           ((guint64)phase_slot(phase) << 17) | (gpu & 0x1ffff);
}

const MsLayerRow *
ms_layer_table_find(const MsLayerTable *t, guint iteration, gint layer, MsPhase phase, guint gpu)
{
    MsLayerTable *m = (MsLayerTable *)t; /* the index is a cache */
    if (m->index == NULL) {
        m->index = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
        for (guint i = 0; i < t->rows->len; i++) {
            const MsLayerRow *r = &g_array_index(t->rows, MsLayerRow, i);
            guint64 k = find_key(r->iteration, r->layer, r->phase, r->gpu);
            g_hash_table_insert(m->index, g_memdup2(&k, sizeof k), GUINT_TO_POINTER(i + 1));
        }
    }
    guint64 k = find_key(iteration, layer, phase, gpu);
    guint i = GPOINTER_TO_UINT(g_hash_table_lookup(t->index, &k));
    return i ? &g_array_index(t->rows, MsLayerRow, i - 1) : NULL;
}

gboolean
ms_layer_table_slowest(const MsLayerTable *t, guint i)
{
    g_return_val_if_fail(i < t->rows->len, FALSE);
    MsLayerTable *m = (MsLayerTable *)t; /* a cache */
    if (m->slowest == NULL) {
        m->slowest = g_new0(gboolean, MAX(t->rows->len, 1));
        g_autoptr(GHashTable) best =
            g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
        for (guint k = 0; k < t->rows->len; k++) {
            const MsLayerRow *r = &g_array_index(t->rows, MsLayerRow, k);
            guint64 key = find_key(r->iteration, r->layer, r->phase, 0);
            guint b = GPOINTER_TO_UINT(g_hash_table_lookup(best, &key));
            const MsLayerRow *o = b ? &g_array_index(t->rows, MsLayerRow, b - 1) : NULL;
            if (o == NULL || r->layer_us > o->layer_us ||
                (r->layer_us == o->layer_us && r->gpu < o->gpu)) {
                g_hash_table_replace(best, g_memdup2(&key, sizeof key), GUINT_TO_POINTER(k + 1));
            }
        }
        GHashTableIter it;
        gpointer value;
        g_hash_table_iter_init(&it, best);
        while (g_hash_table_iter_next(&it, NULL, &value)) {
            m->slowest[GPOINTER_TO_UINT(value) - 1] = TRUE;
        }
    }
    return t->slowest[i];
}

void
ms_layer_table_set_meta(MsLayerTable *t, const char *key, const char *value)
{
    for (guint i = 0; i + 1 < t->meta->len; i += 2) {
        if (strcmp(t->meta->pdata[i], key) == 0) {
            g_free(t->meta->pdata[i + 1]);
            t->meta->pdata[i + 1] = g_strdup(value);
            return;
        }
    }
    g_ptr_array_add(t->meta, g_strdup(key));
    g_ptr_array_add(t->meta, g_strdup(value));
}

const char *
ms_layer_table_get_meta(const MsLayerTable *t, const char *key)
{
    for (guint i = 0; i + 1 < t->meta->len; i += 2) {
        if (strcmp(t->meta->pdata[i], key) == 0) {
            return t->meta->pdata[i + 1];
        }
    }
    return NULL;
}

/* --- writers --- */

static void
row_members(JsonBuilder *b, const MsLayerRow *r)
{
    ms_json_member_int(b, "gpu", r->gpu);
    ms_json_member_double(b, "start_us", r->start_us);
    ms_json_member_double(b, "layer_us", r->layer_us);
    ms_json_member_double(b, "busy_us", r->busy_us);
    for (guint p = 0; p < MS_LAYER_N_PARTS; p++) {
        g_autofree char *name = g_strdup_printf("%s_us", part_names[p]);
        ms_json_member_double(b, name, r->part_us[p]);
    }
    ms_json_member_int(b, "experts", r->experts);
    ms_json_member_int(b, "tokens", r->tokens);
    for (guint p = 0; p < MS_LAYER_N_PARTS; p++) {
        g_autofree char *name = g_strdup_printf("%s_ops", part_names[p]);
        ms_json_member_int(b, name, r->part_ops[p]);
    }
}

static gboolean
same_layer(const MsLayerRow *a, const MsLayerRow *b)
{
    return a->iteration == b->iteration && a->layer == b->layer && a->phase == b->phase;
}

JsonNode *
ms_layer_table_to_json(const MsLayerTable *t)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    ms_json_member_string(b, "format", "moesim-layers");
    ms_json_member_int(b, "version", MS_LAYERS_FORMAT);
    json_builder_set_member_name(b, "meta");
    json_builder_begin_object(b);
    for (guint i = 0; i + 1 < t->meta->len; i += 2) {
        ms_json_member_string(b, t->meta->pdata[i], t->meta->pdata[i + 1]);
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "parts");
    json_builder_begin_array(b);
    for (guint p = 0; p < MS_LAYER_N_PARTS; p++) {
        json_builder_add_string_value(b, part_names[p]);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "layers");
    json_builder_begin_array(b);
    for (guint lo = 0; lo < t->rows->len;) {
        const MsLayerRow *first = ms_layer_table_row(t, lo);
        guint hi = lo, slow = lo;
        while (hi < t->rows->len && same_layer(ms_layer_table_row(t, hi), first)) {
            slow = ms_layer_table_slowest(t, hi) ? hi : slow;
            hi++;
        }
        json_builder_begin_object(b);
        ms_json_member_int(b, "iteration", first->iteration);
        ms_json_member_int(b, "layer", first->layer);
        ms_json_member_string(b, "phase", ms_phase_name(first->phase));
        ms_json_member_int(b, "slowest_gpu", ms_layer_table_row(t, slow)->gpu);
        ms_json_member_double(b, "slowest_us", ms_layer_table_row(t, slow)->layer_us);
        json_builder_set_member_name(b, "gpus");
        json_builder_begin_array(b);
        for (guint i = lo; i < hi; i++) {
            json_builder_begin_object(b);
            row_members(b, ms_layer_table_row(t, i));
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
        json_builder_end_object(b);
        lo = hi;
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    return json_builder_get_root(b);
}

void
ms_layer_table_write_csv(MsOutputFile *f, const MsLayerTable *t, const char *column,
                         const char *value, gboolean header)
{
    if (header) {
        ms_output_file_printf(f, "# moesim-layers %d\n", MS_LAYERS_FORMAT);
        if (column) {
            ms_output_file_printf(f, "%s,", column);
        }
        ms_output_file_printf(f, "iteration,layer,phase,gpu,slowest,start_us,layer_us,busy_us");
        for (guint p = 0; p < MS_LAYER_N_PARTS; p++) {
            ms_output_file_printf(f, ",%s_us", part_names[p]);
        }
        ms_output_file_printf(f, ",experts,tokens");
        for (guint p = 0; p < MS_LAYER_N_PARTS; p++) {
            ms_output_file_printf(f, ",%s_ops", part_names[p]);
        }
        ms_output_file_printf(f, "\n");
    }
    for (guint i = 0; i < t->rows->len; i++) {
        const MsLayerRow *r = ms_layer_table_row(t, i);
        if (column) {
            ms_output_file_printf(f, "%s,", value);
        }
        ms_output_file_printf(f, "%u,%d,%s,%u,%d,%.6f,%.6f,%.6f", r->iteration, r->layer,
                              ms_phase_name(r->phase), r->gpu, ms_layer_table_slowest(t, i) ? 1 : 0,
                              r->start_us, r->layer_us, r->busy_us);
        for (guint p = 0; p < MS_LAYER_N_PARTS; p++) {
            ms_output_file_printf(f, ",%.6f", r->part_us[p]);
        }
        ms_output_file_printf(f, ",%u,%u", r->experts, r->tokens);
        for (guint p = 0; p < MS_LAYER_N_PARTS; p++) {
            ms_output_file_printf(f, ",%u", r->part_ops[p]);
        }
        ms_output_file_printf(f, "\n");
    }
}

gboolean
ms_layer_table_save(const MsLayerTable *t, const char *path, GError **error)
{
    if (g_str_has_suffix(path, ".json")) {
        g_autoptr(JsonNode) root = ms_layer_table_to_json(t);
        return ms_json_write_file(path, root, TRUE, MS_OUTPUT_REPLACE, error);
    }
    MsOutputFile *f = ms_output_file_open(path, MS_OUTPUT_REPLACE, error);
    if (f == NULL) {
        return FALSE;
    }
    ms_layer_table_write_csv(f, t, NULL, NULL, TRUE);
    return ms_output_file_close(f, error);
}
