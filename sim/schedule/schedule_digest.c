/* schedule_digest: a digest of the work a schedule asks for, so that an iteration that repeats
 * the work of the one before can be known without keeping that one's schedule. */
#include "schedule_private.h"

#include <string.h>

/* Fields go into the checksum one by one in a fixed width (structs have padding). */
typedef struct {
    GChecksum *sum;
    guint8 buf[256];
    gsize len;
} Digest;

static void
digest_flush(Digest *d)
{
    g_checksum_update(d->sum, d->buf, d->len);
    d->len = 0;
}

static void
digest_bytes(Digest *d, const void *p, gsize n)
{
    if (d->len + n > sizeof d->buf) {
        digest_flush(d);
    }
    if (n > sizeof d->buf) {
        g_checksum_update(d->sum, p, n);
        return;
    }
    memcpy(d->buf + d->len, p, n);
    d->len += n;
}

static void
digest_u64(Digest *d, guint64 v)
{
    digest_bytes(d, &v, sizeof v);
}

static void
digest_double(Digest *d, double v)
{
    guint64 bits;
    memcpy(&bits, &v, sizeof bits);
    digest_u64(d, bits);
}

/* A string with its terminator, so that "ab" + "c" differs from "a" + "bc"; NULL apart. */
static void
digest_str(Digest *d, const char *str)
{
    digest_u64(d, str != NULL);
    if (str) {
        digest_bytes(d, str, strlen(str) + 1);
    }
}

static void
digest_u64s(Digest *d, const guint64 *v, gsize n)
{
    digest_u64(d, v != NULL);
    if (v) {
        digest_bytes(d, v, n * sizeof *v);
    }
}

/* Meta keys that describe an iteration without changing its work. */
static gboolean
iteration_meta(const char *key)
{
    return strcmp(key, "iteration") == 0 || strcmp(key, "dropped_tokens") == 0;
}

char *
ms_schedule_work_digest(const MsSchedule *s)
{
    Digest d = {g_checksum_new(G_CHECKSUM_SHA256), {0}, 0};
    digest_u64(&d, s->n_ranks);
    digest_str(&d, s->policy);
    digest_u64(&d, s->rules.order);
    digest_u64(&d, s->rules.allreduce_gate);
    for (guint i = 0; i < s->streams->len; i++) {
        const Stream *st = &g_array_index(s->streams, Stream, i);
        digest_str(&d, st->name);
        digest_u64(&d, st->kind);
    }
    for (guint i = 0; i < s->meta_keys->len; i++) {
        const char *key = s->meta_keys->pdata[i];
        if (!iteration_meta(key)) {
            digest_str(&d, key);
            digest_str(&d, g_hash_table_lookup(s->meta, key));
        }
    }
    digest_u64(&d, s->ops->len);
    for (guint i = 0; i < s->ops->len; i++) {
        const Op *op = SCHED_OP(s, i);
        guint64 small[] = {op->rank,
                           op->stream,
                           op->kind,
                           op->role,
                           op->phase,
                           op->compute,
                           op->flags,
                           (guint64)op->priority,
                           (guint32)op->layer,
                           (guint32)op->chunk,
                           op->tokens,
                           op->m,
                           op->n,
                           op->k,
                           op->count,
                           op->experts,
                           op->coll};
        digest_bytes(&d, small, sizeof small);
        digest_double(&d, op->flops);
        digest_double(&d, op->bytes);
        digest_double(&d, op->host);
        digest_str(&d, op->label);
        guint n = op->deps ? op->deps->len : 0;
        digest_u64(&d, n);
        if (n) {
            digest_bytes(&d, op->deps->data, n * sizeof(guint32));
        }
    }
    digest_u64(&d, s->colls->len);
    for (guint i = 0; i < s->colls->len; i++) {
        const Coll *c = SCHED_COLL(s, i);
        guint64 small[] = {c->kind, c->algo, c->window, c->n, c->bytes, (guint64)c->returning};
        digest_bytes(&d, small, sizeof small);
        digest_bytes(&d, c->ranks, c->n * sizeof(guint32));
        digest_bytes(&d, c->ops, c->n * sizeof(guint32));
        digest_u64s(&d, c->matrix, (gsize)c->n * c->n);
        digest_u64s(&d, c->rdma, (gsize)c->n * c->n);
        digest_str(&d, c->label);
    }
    digest_flush(&d);
    char *hex = g_strdup(g_checksum_get_string(d.sum));
    g_checksum_free(d.sum);
    return hex;
}
