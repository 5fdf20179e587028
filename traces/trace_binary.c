/* trace_binary: binary form (layout in docs/trace-format.md). Varints are unsigned LEB128 of at
 * most 10 bytes; expert ids are packed LSB-first with ceil(log2(experts)) bits each, so a top-2
 * token of 12 layers over 16 experts takes 12 bytes of ids instead of about 60 characters. */
#include "trace_binary.h"

#include <errno.h>
#include <string.h>

enum {
    TAG_END = 0x00,
    TAG_COUNT = 0x01,
    TAG_TOKEN = 0x02,
    TAG_NODES = 0x03,  /* the header's node limit, right after the generator */
    TAG_GROUPS = 0x04, /* the header's layer groups, after the node limit */
};

struct _MsTraceBinary {
    FILE *file;
    char *source;
    guint64 offset; /* bytes consumed */
    guint64 record_offset;
    guint64 records; /* records read or encoded */
    MsTraceHeader header;
    guint bits, path_len;
    guint64 iteration;  /* of the previous record */
    guint64 token_base; /* previous token id of the same iteration */
    guint64 token_iteration;
    gboolean have_token;
    gboolean ended;
    guint32 *ids;
    guint8 *packed;
};

MsTraceBinary *
ms_trace_binary_new(FILE *file, const char *source)
{
    MsTraceBinary *b = g_new0(MsTraceBinary, 1);
    b->file = file;
    b->source = g_strdup(source);
    return b;
}

void
ms_trace_binary_free(MsTraceBinary *b)
{
    if (b == NULL) {
        return;
    }
    g_free(b->source);
    g_free(b->ids);
    g_free(b->packed);
    g_free(b);
}

guint64
ms_trace_binary_position(const MsTraceBinary *b)
{
    return b->record_offset;
}

void
ms_trace_binary_prefix_error(const MsTraceBinary *b, guint64 offset, GError **error)
{
    g_prefix_error(error, "%s:offset %" G_GUINT64_FORMAT ": ", b->source, offset);
}

static void fail(const MsTraceBinary *b, guint64 offset, GError **error, MsTraceError code,
                 const char *format, ...) G_GNUC_PRINTF(5, 6);

static void
fail(const MsTraceBinary *b, guint64 offset, GError **error, MsTraceError code, const char *format,
     ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, MS_TRACE_ERROR, code, "%s:offset %" G_GUINT64_FORMAT ": %s", b->source,
                offset, msg);
}

/* Reads n bytes; a short read is TRUNCATED (or IO on a read error) naming what was read. */
static gboolean
read_bytes(MsTraceBinary *b, void *dst, gsize n, const char *what, GError **error)
{
    gsize got = fread(dst, 1, n, b->file);
    b->offset += got;
    if (got < n) {
        if (ferror(b->file)) {
            int e = errno;
            fail(b, b->offset, error, MS_TRACE_ERROR_IO, "read error: %s", g_strerror(e));
        } else {
            fail(b, b->offset, error, MS_TRACE_ERROR_TRUNCATED, "file ends inside the %s", what);
        }
        return FALSE;
    }
    return TRUE;
}

static gboolean
read_varint(MsTraceBinary *b, const char *what, const char *field, guint64 max, guint64 *out,
            GError **error)
{
    guint64 start = b->offset, v = 0;
    for (guint shift = 0;; shift += 7) {
        /* getc_unlocked: varints are read a byte at a time, and fread per byte is slow. */
        int c = getc_unlocked(b->file);
        if (c == EOF) {
            guint8 none;
            return read_bytes(b, &none, 1, what, error); /* reports the end or the error */
        }
        guint8 byte = (guint8)c;
        b->offset++;
        if (shift == 63 && byte > 1) {
            fail(b, start, error, MS_TRACE_ERROR_OVERFLOW, "%s: varint for %s overflows 64 bits",
                 what, field);
            return FALSE;
        }
        v |= (guint64)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            break;
        }
    }
    if (v > max) {
        fail(b, start, error, MS_TRACE_ERROR_OVERFLOW,
             "%s: %s %" G_GUINT64_FORMAT " overflows its field (at most %" G_GUINT64_FORMAT ")",
             what, field, v, max);
        return FALSE;
    }
    *out = v;
    return TRUE;
}

static gboolean
read_magic(MsTraceBinary *b, GError **error)
{
    char magic[MS_TRACE_BINARY_MAGIC_LEN];
    gsize got = fread(magic, 1, sizeof(magic), b->file);
    b->offset = got;
    if (got < sizeof(magic) && ferror(b->file)) {
        int e = errno;
        fail(b, 0, error, MS_TRACE_ERROR_IO, "read error: %s", g_strerror(e));
        return FALSE;
    }
    if (got < sizeof(magic) || memcmp(magic, MS_TRACE_BINARY_MAGIC, sizeof(magic)) != 0) {
        fail(b, 0, error, MS_TRACE_ERROR_FORMAT, "bad magic: not a binary moe-trace");
        return FALSE;
    }
    guint8 v[4];
    if (!read_bytes(b, v, 4, "header", error)) {
        return FALSE;
    }
    guint32 version = v[0] | (guint32)v[1] << 8 | (guint32)v[2] << 16 | (guint32)v[3] << 24;
    if (version != MS_TRACE_VERSION) {
        fail(b, 8, error, MS_TRACE_ERROR_VERSION,
             "unsupported binary trace version %u (this moesim reads version %d)", version,
             MS_TRACE_VERSION);
        return FALSE;
    }
    return TRUE;
}

static gboolean
read_generator(MsTraceBinary *b, MsTraceHeader *header, GError **error)
{
    guint64 at = b->offset, len = 0;
    if (!read_varint(b, "header", "generator length", G_MAXUINT64, &len, error)) {
        return FALSE;
    }
    if (len >= MS_TRACE_GENERATOR_MAX) {
        fail(b, at, error, MS_TRACE_ERROR_LIMIT,
             "generator length %" G_GUINT64_FORMAT " exceeds the limit of %u", len,
             MS_TRACE_GENERATOR_MAX - 1);
        return FALSE;
    }
    char text[MS_TRACE_GENERATOR_MAX];
    if (!read_bytes(b, text, len, "header", error)) {
        return FALSE;
    }
    text[len] = '\0';
    if (memchr(text, '\0', len) != NULL) {
        fail(b, at, error, MS_TRACE_ERROR_LIMIT, "generator holds a NUL byte");
        return FALSE;
    }
    if (!ms_trace_header_set_generator(header, text, error)) {
        ms_trace_binary_prefix_error(b, at, error);
        return FALSE;
    }
    return TRUE;
}

/* The optional node limit: tag 0x03, then expert_nodes and max_nodes; a trace without one has
 * its first record (or end) here, which is put back. */
static gboolean
read_node_limit(MsTraceBinary *b, MsTraceHeader *header, GError **error)
{
    int tag = getc(b->file);
    if (tag != TAG_NODES) {
        if (tag != EOF) {
            ungetc(tag, b->file);
        }
        return TRUE;
    }
    b->offset++;
    guint64 nodes = 0, max = 0;
    if (!read_varint(b, "node limit", "expert_nodes", MS_TRACE_MAX_EXPERTS, &nodes, error) ||
        !read_varint(b, "node limit", "max_nodes", MS_TRACE_MAX_EXPERTS, &max, error)) {
        return FALSE;
    }
    header->expert_nodes = (guint32)nodes;
    header->max_nodes = (guint32)max;
    return TRUE;
}

/* The optional layer groups: tag 0x04, a varint count (1 .. 64), then each group's first MoE
 * layer as a varint; a trace without them has its first record (or end) here. */
static gboolean
read_groups(MsTraceBinary *b, MsTraceHeader *header, GError **error)
{
    int tag = getc(b->file);
    if (tag != TAG_GROUPS) {
        if (tag != EOF) {
            ungetc(tag, b->file);
        }
        return TRUE;
    }
    b->offset++;
    guint64 n = 0;
    if (!read_varint(b, "layer groups", "count", MS_TRACE_MAX_GROUPS, &n, error)) {
        return FALSE;
    }
    for (guint64 g = 0; g < n; g++) {
        guint64 first = 0;
        if (!read_varint(b, "layer groups", "first layer", MS_TRACE_MAX_LAYERS - 1, &first,
                         error)) {
            return FALSE;
        }
        header->group_first[g] = (guint32)first;
    }
    header->n_groups = (guint32)n;
    return TRUE;
}

gboolean
ms_trace_binary_read_header(MsTraceBinary *b, MsTraceHeader *header, GError **error)
{
    ms_trace_header_init(header);
    if (!read_magic(b, error)) {
        return FALSE;
    }
    static const char *const names[] = {"experts", "layers", "ranks", "top_k", "tokens_per_rank"};
    guint32 *fields[] = {&header->experts, &header->layers, &header->ranks, &header->top_k,
                         &header->tokens_per_rank};
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        guint64 at = b->offset, v = 0;
        if (!read_varint(b, "header", names[i], G_MAXUINT64, &v, error)) {
            return FALSE;
        }
        if (v > G_MAXUINT32) {
            fail(b, at, error, MS_TRACE_ERROR_LIMIT, "%s = %" G_GUINT64_FORMAT " is out of range",
                 names[i], v);
            return FALSE;
        }
        *fields[i] = (guint32)v;
    }
    if (!read_generator(b, header, error) || !read_node_limit(b, header, error) ||
        !read_groups(b, header, error)) {
        return FALSE;
    }
    if (!ms_trace_header_validate(header, error)) {
        ms_trace_binary_prefix_error(b, MS_TRACE_BINARY_MAGIC_LEN + 4, error);
        return FALSE;
    }
    b->header = *header;
    b->bits = ms_trace_header_expert_bits(header);
    b->path_len = ms_trace_header_path_len(header);
    b->ids = g_new(guint32, b->path_len);
    b->packed = g_new(guint8, ((gsize)b->path_len * b->bits + 7) / 8);
    return TRUE;
}

static gboolean
read_iteration(MsTraceBinary *b, const char *what, guint64 *out, GError **error)
{
    guint64 delta = 0;
    if (!read_varint(b, what, "iteration delta", G_MAXUINT64, &delta, error)) {
        return FALSE;
    }
    if (delta > MS_TRACE_MAX_ITERATION - b->iteration) {
        fail(b, b->record_offset, error, MS_TRACE_ERROR_OVERFLOW,
             "%s: iteration %" G_GUINT64_FORMAT " + %" G_GUINT64_FORMAT " exceeds the limit of %u",
             what, b->iteration, delta, MS_TRACE_MAX_ITERATION);
        return FALSE;
    }
    b->iteration += delta;
    *out = b->iteration;
    return TRUE;
}

static MsTraceRead
read_count(MsTraceBinary *b, MsTraceRecord *rec, GError **error)
{
    const char *what = "count record";
    guint64 iteration, layer, rank, expert, tokens;
    if (!read_iteration(b, what, &iteration, error) ||
        !read_varint(b, what, "layer", G_MAXUINT32, &layer, error) ||
        !read_varint(b, what, "rank", G_MAXUINT32, &rank, error) ||
        !read_varint(b, what, "expert", G_MAXUINT32, &expert, error) ||
        !read_varint(b, what, "tokens", G_MAXUINT32, &tokens, error)) {
        return MS_TRACE_READ_ERROR;
    }
    *rec = (MsTraceRecord){.kind = MS_TRACE_RECORD_COUNT,
                           .iteration = iteration,
                           .layer = (guint32)layer,
                           .rank = (guint32)rank,
                           .expert = (guint32)expert,
                           .tokens = (guint32)tokens};
    return MS_TRACE_READ_RECORD;
}

static gboolean
unpack_ids(MsTraceBinary *b, GError **error)
{
    gsize nbytes = ((gsize)b->path_len * b->bits + 7) / 8;
    if (!read_bytes(b, b->packed, nbytes, "token record", error)) {
        return FALSE;
    }
    guint64 acc = 0, mask = (G_GUINT64_CONSTANT(1) << b->bits) - 1;
    guint have = 0, n = 0;
    for (gsize i = 0; i < nbytes; i++) {
        acc |= (guint64)b->packed[i] << have;
        have += 8;
        while (have >= b->bits && n < b->path_len) {
            b->ids[n++] = (guint32)(acc & mask);
            acc >>= b->bits;
            have -= b->bits;
        }
    }
    if (acc != 0) {
        fail(b, b->record_offset, error, MS_TRACE_ERROR_FORMAT,
             "token record: non-zero padding bits after the expert ids");
        return FALSE;
    }
    return TRUE;
}

static guint64
token_base(const MsTraceBinary *b, guint64 iteration)
{
    return b->have_token && b->token_iteration == iteration ? b->token_base : 0;
}

static MsTraceRead
read_token(MsTraceBinary *b, MsTraceRecord *rec, GError **error)
{
    const char *what = "token record";
    guint64 iteration, zz, rank;
    if (!read_iteration(b, what, &iteration, error) ||
        !read_varint(b, what, "token id delta", G_MAXUINT64, &zz, error) ||
        !read_varint(b, what, "rank", G_MAXUINT32, &rank, error) || !unpack_ids(b, error)) {
        return MS_TRACE_READ_ERROR;
    }
    /* Zigzag: the token id delta may be negative; ids wrap modulo 2^64 both ways. */
    guint64 delta = (zz >> 1) ^ (G_GUINT64_CONSTANT(0) - (zz & 1));
    guint64 id = token_base(b, iteration) + delta;
    b->have_token = TRUE;
    b->token_iteration = iteration;
    b->token_base = id;
    *rec = (MsTraceRecord){.kind = MS_TRACE_RECORD_TOKEN,
                           .iteration = iteration,
                           .rank = (guint32)rank,
                           .token_id = id,
                           .experts = b->ids};
    return MS_TRACE_READ_RECORD;
}

static MsTraceRead
read_end(MsTraceBinary *b, GError **error)
{
    guint64 count = 0;
    if (!read_varint(b, "end record", "record count", G_MAXUINT64, &count, error)) {
        return MS_TRACE_READ_ERROR;
    }
    if (count != b->records) {
        fail(b, b->record_offset, error, MS_TRACE_ERROR_FORMAT,
             "end record counts %" G_GUINT64_FORMAT " records but %" G_GUINT64_FORMAT " were read",
             count, b->records);
        return MS_TRACE_READ_ERROR;
    }
    if (getc(b->file) != EOF) {
        fail(b, b->offset, error, MS_TRACE_ERROR_FORMAT, "trailing data after the end record");
        return MS_TRACE_READ_ERROR;
    }
    b->ended = TRUE;
    return MS_TRACE_READ_END;
}

MsTraceRead
ms_trace_binary_read_record(MsTraceBinary *b, MsTraceRecord *rec, GError **error)
{
    g_return_val_if_fail(b->ids != NULL, MS_TRACE_READ_ERROR);
    if (b->ended) {
        return MS_TRACE_READ_END;
    }
    b->record_offset = b->offset;
    int tag = getc(b->file);
    if (tag == EOF) {
        if (ferror(b->file)) {
            int e = errno;
            fail(b, b->offset, error, MS_TRACE_ERROR_IO, "read error: %s", g_strerror(e));
        } else {
            fail(b, b->offset, error, MS_TRACE_ERROR_TRUNCATED,
                 "file ends without the end record (truncated?)");
        }
        return MS_TRACE_READ_ERROR;
    }
    b->offset++;
    switch (tag) {
    case TAG_END:
        return read_end(b, error);
    case TAG_COUNT:
        b->records++;
        return read_count(b, rec, error);
    case TAG_TOKEN:
        b->records++;
        return read_token(b, rec, error);
    case TAG_NODES:
        fail(b, b->record_offset, error, MS_TRACE_ERROR_FORMAT,
             "node limit (tag 0x03) among the records: it belongs right after the generator");
        return MS_TRACE_READ_ERROR;
    case TAG_GROUPS:
        fail(b, b->record_offset, error, MS_TRACE_ERROR_FORMAT,
             "layer groups (tag 0x04) among the records: they belong in the header, after the "
             "node limit");
        return MS_TRACE_READ_ERROR;
    default:
        fail(b, b->record_offset, error, MS_TRACE_ERROR_FORMAT,
             "unknown record tag 0x%02x (expected 0x00 end, 0x01 count or 0x02 token)", tag);
        return MS_TRACE_READ_ERROR;
    }
}

static void
put_varint(GString *out, guint64 v)
{
    char tmp[10];
    int n = 0;
    do {
        guint8 byte = v & 0x7f;
        v >>= 7;
        tmp[n++] = (char)(byte | (v ? 0x80 : 0));
    } while (v);
    g_string_append_len(out, tmp, n);
}

void
ms_trace_binary_encode_header(MsTraceBinary *b, GString *out, const MsTraceHeader *h)
{
    g_string_append_len(out, MS_TRACE_BINARY_MAGIC, MS_TRACE_BINARY_MAGIC_LEN);
    const char version[4] = {MS_TRACE_VERSION & 0xff, 0, 0, 0};
    g_string_append_len(out, version, 4);
    put_varint(out, h->experts);
    put_varint(out, h->layers);
    put_varint(out, h->ranks);
    put_varint(out, h->top_k);
    put_varint(out, h->tokens_per_rank);
    gsize len = strlen(h->generator);
    put_varint(out, len);
    g_string_append_len(out, h->generator, (gssize)len);
    if (h->max_nodes) {
        g_string_append_c(out, TAG_NODES);
        put_varint(out, h->expert_nodes);
        put_varint(out, h->max_nodes);
    }
    if (h->n_groups > 1) {
        g_string_append_c(out, TAG_GROUPS);
        put_varint(out, h->n_groups);
        for (guint32 g = 0; g < h->n_groups; g++) {
            put_varint(out, h->group_first[g]);
        }
    }
    b->header = *h;
    b->bits = ms_trace_header_expert_bits(h);
    b->path_len = ms_trace_header_path_len(h);
}

static void
pack_ids(const MsTraceBinary *b, GString *out, const guint32 *ids)
{
    guint64 acc = 0;
    guint have = 0;
    for (guint i = 0; i < b->path_len; i++) {
        acc |= (guint64)ids[i] << have;
        have += b->bits;
        while (have >= 8) {
            g_string_append_c(out, (char)(acc & 0xff));
            acc >>= 8;
            have -= 8;
        }
    }
    if (have) {
        g_string_append_c(out, (char)(acc & 0xff));
    }
}

void
ms_trace_binary_encode_record(MsTraceBinary *b, GString *out, const MsTraceRecord *rec)
{
    g_return_if_fail(rec->iteration >= b->iteration);
    guint64 delta = rec->iteration - b->iteration;
    b->iteration = rec->iteration;
    b->records++;
    if (rec->kind == MS_TRACE_RECORD_COUNT) {
        g_string_append_c(out, TAG_COUNT);
        put_varint(out, delta);
        put_varint(out, rec->layer);
        put_varint(out, rec->rank);
        put_varint(out, rec->expert);
        put_varint(out, rec->tokens);
        return;
    }
    guint64 d = rec->token_id - token_base(b, rec->iteration);
    guint64 zz = (d << 1) ^ (G_GUINT64_CONSTANT(0) - (d >> 63));
    b->have_token = TRUE;
    b->token_iteration = rec->iteration;
    b->token_base = rec->token_id;
    g_string_append_c(out, TAG_TOKEN);
    put_varint(out, delta);
    put_varint(out, zz);
    put_varint(out, rec->rank);
    pack_ids(b, out, rec->experts);
}

void
ms_trace_binary_encode_end(MsTraceBinary *b, GString *out)
{
    g_string_append_c(out, TAG_END);
    put_varint(out, b->records);
}
