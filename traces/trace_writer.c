/* trace_writer: checks each record, encodes it with the text or binary codec into a buffer and
 * hands the buffer to sim/base/output_file once it passes 1 MiB. */
#include "trace_writer.h"

#include <string.h>

#include "sim/base/output_file.h"

#include "trace_binary.h"
#include "trace_text.h"

#define FLUSH_AT (1u << 20)

struct _MsTraceWriter {
    char *path;
    MsOutputFile *file;
    MsTraceFormat format;
    MsTraceHeader header;
    MsTraceBinary *bin; /* binary encoder state */
    GString *buf;
    guint64 records, bytes;
    gboolean any;
    guint64 iteration;
    MsTraceRecordKind kind; /* of the current iteration */
    gboolean closed;
    GError *io_error; /* the first failure to write, or NULL */
    guint32 *ids;
};

static void
flush_buf(MsTraceWriter *w)
{
    if (w->buf->len && w->io_error == NULL) {
        ms_output_file_write(w->file, w->buf->str, w->buf->len);
        ms_output_file_flush(w->file, &w->io_error);
    }
    w->bytes += w->buf->len;
    g_string_truncate(w->buf, 0);
}

MsTraceWriter *
ms_trace_writer_new(const char *path, MsTraceFormat format, const MsTraceHeader *header,
                    GError **error)
{
    g_return_val_if_fail(path != NULL && header != NULL, NULL);
    g_return_val_if_fail(format == MS_TRACE_FORMAT_TEXT || format == MS_TRACE_FORMAT_BINARY, NULL);
    if (!ms_trace_header_validate(header, error)) {
        return NULL;
    }
    g_autoptr(GError) local = NULL;
    MsOutputFile *f = ms_output_file_open(path, MS_OUTPUT_REPLACE, &local);
    if (f == NULL) {
        g_set_error_literal(error, MS_TRACE_ERROR, MS_TRACE_ERROR_IO, local->message);
        return NULL;
    }
    MsTraceWriter *w = g_new0(MsTraceWriter, 1);
    w->path = g_strdup(path);
    w->file = f;
    w->format = format;
    w->header = *header;
    w->buf = g_string_sized_new(FLUSH_AT + 4096);
    w->ids = g_new(guint32, ms_trace_header_path_len(header));
    if (format == MS_TRACE_FORMAT_BINARY) {
        w->bin = ms_trace_binary_new(NULL, path);
        ms_trace_binary_encode_header(w->bin, w->buf, header);
    } else {
        ms_trace_text_encode_header(w->buf, header);
    }
    return w;
}

void
ms_trace_writer_free(MsTraceWriter *w)
{
    if (w == NULL) {
        return;
    }
    ms_output_file_free(w->file);
    g_clear_error(&w->io_error);
    ms_trace_binary_free(w->bin);
    g_string_free(w->buf, TRUE);
    g_free(w->ids);
    g_free(w->path);
    g_free(w);
}

/* Ordering and kind rules shared by both record writers. */
static gboolean
check_order(MsTraceWriter *w, guint64 iteration, MsTraceRecordKind kind, GError **error)
{
    if (iteration > MS_TRACE_MAX_ITERATION) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_OVERFLOW,
                    "iteration %" G_GUINT64_FORMAT " exceeds the limit of %u", iteration,
                    MS_TRACE_MAX_ITERATION);
        return FALSE;
    }
    if (w->any && iteration < w->iteration) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_ORDER,
                    "iteration %" G_GUINT64_FORMAT " after iteration %" G_GUINT64_FORMAT
                    ": iterations must not decrease",
                    iteration, w->iteration);
        return FALSE;
    }
    if (w->any && iteration == w->iteration && kind != w->kind) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_MIXED,
                    "iteration %" G_GUINT64_FORMAT " mixes count and token records", iteration);
        return FALSE;
    }
    return TRUE;
}

static gboolean
emit(MsTraceWriter *w, const MsTraceRecord *rec, GError **error)
{
    g_return_val_if_fail(!w->closed, FALSE);
    w->any = TRUE;
    w->iteration = rec->iteration;
    w->kind = rec->kind;
    w->records++;
    if (w->bin) {
        ms_trace_binary_encode_record(w->bin, w->buf, rec);
    } else {
        ms_trace_text_encode_record(w->buf, &w->header, rec);
    }
    if (w->buf->len >= FLUSH_AT) {
        flush_buf(w);
    }
    if (w->io_error) {
        g_set_error_literal(error, MS_TRACE_ERROR, MS_TRACE_ERROR_IO, w->io_error->message);
        return FALSE;
    }
    return TRUE;
}

gboolean
ms_trace_writer_write_count(MsTraceWriter *w, guint64 iteration, guint32 layer, guint32 src_rank,
                            guint32 expert, guint32 tokens, GError **error)
{
    if (!check_order(w, iteration, MS_TRACE_RECORD_COUNT, error) ||
        !ms_trace_check_count(&w->header, layer, src_rank, expert, error)) {
        return FALSE;
    }
    MsTraceRecord rec = {.kind = MS_TRACE_RECORD_COUNT,
                         .iteration = iteration,
                         .layer = layer,
                         .rank = src_rank,
                         .expert = expert,
                         .tokens = tokens};
    return emit(w, &rec, error);
}

gboolean
ms_trace_writer_write_token(MsTraceWriter *w, guint64 iteration, guint64 token_id, guint32 src_rank,
                            const guint32 *experts, GError **error)
{
    if (!check_order(w, iteration, MS_TRACE_RECORD_TOKEN, error) ||
        !ms_trace_check_token(&w->header, src_rank, experts, error)) {
        return FALSE;
    }
    MsTraceRecord rec = {.kind = MS_TRACE_RECORD_TOKEN,
                         .iteration = iteration,
                         .rank = src_rank,
                         .token_id = token_id,
                         .experts = experts};
    return emit(w, &rec, error);
}

static gboolean
check_shape(const MsTraceWriter *w, const MsRouting *r, GError **error)
{
    const MsTraceHeader *h = ms_routing_header(r);
    if (h->experts != w->header.experts || h->layers != w->header.layers ||
        h->ranks != w->header.ranks || h->top_k != w->header.top_k) {
        g_set_error(error, MS_TRACE_ERROR, MS_TRACE_ERROR_RANGE,
                    "iteration %" G_GUINT64_FORMAT " has shape %u experts, %u layers, %u ranks, "
                    "top_k %u; the trace has %u, %u, %u, %u",
                    ms_routing_iteration(r), h->experts, h->layers, h->ranks, h->top_k,
                    w->header.experts, w->header.layers, w->header.ranks, w->header.top_k);
        return FALSE;
    }
    return TRUE;
}

gboolean
ms_trace_writer_write_routing_counts(MsTraceWriter *w, const MsRouting *r, GError **error)
{
    if (!check_shape(w, r, error)) {
        return FALSE;
    }
    guint64 iteration = ms_routing_iteration(r);
    for (guint32 layer = 0; layer < w->header.layers; layer++) {
        for (guint32 rank = 0; rank < w->header.ranks; rank++) {
            const guint32 *row = ms_routing_counts(r, layer, rank);
            for (guint32 e = 0; e < w->header.experts; e++) {
                if (row[e] &&
                    !ms_trace_writer_write_count(w, iteration, layer, rank, e, row[e], error)) {
                    return FALSE;
                }
            }
        }
    }
    return TRUE;
}

gboolean
ms_trace_writer_write_routing(MsTraceWriter *w, const MsRouting *r, GError **error)
{
    if (!ms_routing_has_paths(r)) {
        return ms_trace_writer_write_routing_counts(w, r, error);
    }
    if (!check_shape(w, r, error)) {
        return FALSE;
    }
    const MsTraceHeader *h = &w->header;
    guint64 iteration = ms_routing_iteration(r);
    for (guint32 rank = 0; rank < h->ranks; rank++) {
        guint32 n = ms_routing_n_tokens(r, rank);
        for (guint32 t = 0; t < n; t++) {
            for (guint32 layer = 0; layer < h->layers; layer++) {
                const guint16 *ids = ms_routing_token_experts(r, rank, t, layer);
                for (guint i = 0; i < h->top_k; i++) {
                    w->ids[layer * h->top_k + i] = ids[i];
                }
            }
            if (!ms_trace_writer_write_token(w, iteration, ms_routing_token_id(r, rank, t), rank,
                                             w->ids, error)) {
                return FALSE;
            }
        }
    }
    return TRUE;
}

gboolean
ms_trace_writer_close(MsTraceWriter *w, GError **error)
{
    g_return_val_if_fail(!w->closed, FALSE);
    if (w->bin) {
        ms_trace_binary_encode_end(w->bin, w->buf);
    }
    flush_buf(w);
    w->closed = TRUE;
    if (w->io_error == NULL) {
        ms_output_file_close(g_steal_pointer(&w->file), &w->io_error);
    }
    if (w->io_error) {
        g_set_error_literal(error, MS_TRACE_ERROR, MS_TRACE_ERROR_IO, w->io_error->message);
        return FALSE;
    }
    return TRUE;
}

guint64
ms_trace_writer_records(const MsTraceWriter *w)
{
    return w->records;
}

guint64
ms_trace_writer_bytes(const MsTraceWriter *w)
{
    return w->bytes + w->buf->len;
}
