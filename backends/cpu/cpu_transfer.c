/* cpu_transfer: collectives between the rank threads of the cpu backend, in shared memory.
 * All-to-all: each source writes a pattern unique to (collective, source, destination) and pushes
 * it into each destination's receive buffer; each destination verifies every byte. Allreduce:
 * direct reduce-scatter then all-gather of float sums, verified element by element against the
 * closed-form sum. Sizes are bytes; there is no network model here, only exactness. */
#include "cpu_private.h"

#include <string.h>

/* --- buffers --- */

static guint64
sat_add(guint64 a, guint64 b)
{
    return a > G_MAXUINT64 - b ? G_MAXUINT64 : a + b;
}

/* Bytes participant p sends (row) and receives (column) in an all-to-all. */
static void
a2a_sizes(const MsCollInfo *c, guint p, guint64 *row, guint64 *col)
{
    *row = *col = 0;
    for (guint q = 0; q < c->n_ranks; q++) {
        *row = sat_add(*row, c->matrix[(gsize)p * c->n_ranks + q]);
        *col = sat_add(*col, c->matrix[(gsize)q * c->n_ranks + p]);
    }
}

static guint
participant(const MsCollInfo *c, guint32 op)
{
    guint p = 0;
    while (c->ops[p] != op) {
        p++;
    }
    return p;
}

gboolean
cpu_buffers_alloc(CpuState *st, GError **error)
{
    guint slots = st->n_ranks * st->n_streams;
    st->buffers = g_new0(CpuBuffers, slots);
    guint64 largest = 0;
    guint32 largest_coll = 0;
    for (guint32 id = 0; id < ms_schedule_n_colls(st->s); id++) {
        MsCollInfo c;
        ms_schedule_coll(st->s, id, &c);
        for (guint p = 0; p < c.n_ranks; p++) {
            MsOpInfo i;
            ms_schedule_op(st->s, c.ops[p], &i);
            guint64 send = c.bytes, recv = c.bytes;
            if (c.kind == MS_COLL_KIND_ALLTOALL) {
                a2a_sizes(&c, p, &send, &recv);
            }
            CpuBuffers *b = &st->buffers[i.rank * st->n_streams + i.stream];
            b->send_size = MAX(b->send_size, send);
            b->recv_size = MAX(b->recv_size, recv);
            if (sat_add(send, recv) > largest) {
                largest = sat_add(send, recv);
                largest_coll = id;
            }
        }
    }
    guint64 total = 0;
    for (guint k = 0; k < slots; k++) {
        total = sat_add(total, sat_add(st->buffers[k].send_size, st->buffers[k].recv_size));
    }
    if (total > st->cpu.max_memory) {
        MsCollInfo c;
        ms_schedule_coll(st->s, largest_coll, &c);
        g_set_error(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_SETUP,
                    "the cpu backend needs %" G_GUINT64_FORMAT " bytes of rank buffers (the "
                    "largest collective, %u '%s', needs %" G_GUINT64_FORMAT " on one rank), over "
                    "the limit of %" G_GUINT64_FORMAT " bytes (--max-memory)",
                    total, largest_coll, c.label, largest, st->cpu.max_memory);
        return FALSE;
    }
    for (guint k = 0; k < slots; k++) {
        CpuBuffers *b = &st->buffers[k];
        b->send = b->send_size ? g_try_malloc(b->send_size) : NULL;
        b->recv = b->recv_size ? g_try_malloc(b->recv_size) : NULL;
        if ((b->send_size && b->send == NULL) || (b->recv_size && b->recv == NULL)) {
            g_set_error(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_SETUP,
                        "cannot allocate %" G_GUINT64_FORMAT " bytes of rank buffers", total);
            return FALSE;
        }
    }
    return TRUE;
}

void
cpu_buffers_free(CpuState *st)
{
    for (guint k = 0; st->buffers && k < st->n_ranks * st->n_streams; k++) {
        g_free(st->buffers[k].send);
        g_free(st->buffers[k].recv);
    }
    g_free(st->buffers);
    st->buffers = NULL;
}

/* --- meetings --- */

static CpuMeeting *
meeting_join(CpuState *st, guint32 coll, guint n)
{
    g_mutex_lock(&st->meet_lock);
    CpuMeeting *m = st->meetings[coll];
    if (m == NULL) {
        m = g_new0(CpuMeeting, 1);
        g_mutex_init(&m->lock);
        g_cond_init(&m->cond);
        m->n = n;
        st->meetings[coll] = m;
    }
    m->users++;
    g_mutex_unlock(&st->meet_lock);
    return m;
}

static void
meeting_leave(CpuState *st, guint32 coll)
{
    g_mutex_lock(&st->meet_lock);
    CpuMeeting *m = st->meetings[coll];
    if (--m->users == 0) {
        st->meetings[coll] = NULL;
        g_mutex_clear(&m->lock);
        g_cond_clear(&m->cond);
        g_free(m);
    }
    g_mutex_unlock(&st->meet_lock);
}

/* Waits until all participants arrived; FALSE when the run was aborted meanwhile. */
static gboolean
meet(CpuState *st, CpuMeeting *m)
{
    g_mutex_lock(&m->lock);
    guint gen = m->generation;
    if (++m->arrived == m->n) {
        m->arrived = 0;
        m->generation++;
        g_cond_broadcast(&m->cond);
    }
    while (gen == m->generation && !cpu_aborted(st)) {
        g_cond_wait_until(&m->cond, &m->lock,
                          g_get_monotonic_time() + 20 * G_TIME_SPAN_MILLISECOND);
    }
    gboolean ok = gen != m->generation;
    g_mutex_unlock(&m->lock);
    return ok;
}

static void
add_copied(CpuMeeting *m, guint64 bytes)
{
    g_mutex_lock(&m->lock);
    m->copied += bytes;
    g_mutex_unlock(&m->lock);
}

/* --- patterns --- */

static guint64
mix(guint64 x)
{
    x += G_GUINT64_CONSTANT(0x9E3779B97F4A7C15);
    x = (x ^ (x >> 30)) * G_GUINT64_CONSTANT(0xBF58476D1CE4E5B9);
    x = (x ^ (x >> 27)) * G_GUINT64_CONSTANT(0x94D049BB133111EB);
    return x ^ (x >> 31);
}

static guint64
pair_seed(guint32 coll, guint src, guint dst)
{
    return mix(((guint64)coll << 40) ^ ((guint64)src << 20) ^ dst);
}

static void
pattern_fill(guint8 *dst, guint64 len, guint64 seed)
{
    for (guint64 w = 0; w * 8 < len; w++) {
        guint64 v = mix(seed ^ w);
        memcpy(dst + w * 8, &v, MIN(8, len - w * 8));
    }
}

/* Offset of the first byte that differs from the pattern, or len when none does. */
static guint64
pattern_check(const guint8 *src, guint64 len, guint64 seed)
{
    for (guint64 w = 0; w * 8 < len; w++) {
        guint8 v[8];
        guint64 x = mix(seed ^ w), n = MIN(8, len - w * 8);
        memcpy(v, &x, 8);
        if (memcmp(src + w * 8, v, n) == 0) {
            continue;
        }
        for (guint64 k = 0; k < n; k++) {
            if (src[w * 8 + k] != v[k]) {
                return w * 8 + k;
            }
        }
    }
    return len;
}

static CpuBuffers *
buffers_of(CpuState *st, const MsCollInfo *c, guint p, guint stream)
{
    return &st->buffers[c->ranks[p] * st->n_streams + stream];
}

static gboolean violation(GError **error, const MsCollInfo *c, const char *format, ...)
    G_GNUC_PRINTF(3, 4);

static gboolean
violation(GError **error, const MsCollInfo *c, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, MS_CPU_BACKEND_ERROR, MS_CPU_BACKEND_ERROR_VIOLATION, "%s %u (%s): %s",
                c->kind == MS_COLL_KIND_ALLTOALL ? "all-to-all" : "allreduce", c->id, c->label,
                msg);
    return FALSE;
}

/* --- all-to-all --- */

/* Bytes a collective must copy between rank buffers: an all-to-all its whole matrix, an
 * allreduce's all-gather every share to every other participant. */
static guint64
expected_copies(const MsCollInfo *c)
{
    guint64 total = 0;
    if (c->kind == MS_COLL_KIND_ALLTOALL) {
        for (gsize k = 0; k < (gsize)c->n_ranks * c->n_ranks; k++) {
            total += c->matrix[k];
        }
        return total;
    }
    return c->bytes * (c->n_ranks - 1);
}

/* After the last copy: the bytes all participants copied must be exactly the schedule's. */
static gboolean
check_copies(CpuMeeting *m, const MsCollInfo *c, GError **error)
{
    g_mutex_lock(&m->lock);
    guint64 copied = m->copied;
    g_mutex_unlock(&m->lock);
    if (copied != expected_copies(c)) {
        return violation(error, c,
                         "moved %" G_GUINT64_FORMAT " bytes between rank buffers, the schedule "
                         "says %" G_GUINT64_FORMAT,
                         copied, expected_copies(c));
    }
    return TRUE;
}

/* Pushes participant p's rows into every destination's receive buffer. */
static guint64
a2a_push(CpuState *st, const MsCollInfo *c, guint p, guint stream)
{
    guint n = c->n_ranks;
    const guint8 *src = buffers_of(st, c, p, stream)->send;
    guint64 off = 0, copied = 0;
    gboolean short_copy = (st->cpu.faults & MS_CPU_FAULT_SHORT_COPY) && p == 0;
    for (guint q = 0; q < n; q++) {
        guint64 len = c->matrix[(gsize)p * n + q], at = 0;
        for (guint k = 0; k < p; k++) {
            at += c->matrix[(gsize)k * n + q];
        }
        if (len && short_copy) {
            len--;
            short_copy = FALSE;
        }
        if (len) {
            memcpy(buffers_of(st, c, q, stream)->recv + at, src + off, len);
        }
        off += c->matrix[(gsize)p * n + q];
        copied += len;
    }
    return copied;
}

/* The deliberate fault: participant 0 flips the first byte it received. */
static void
corrupt_first(guint8 *recv, const MsCollInfo *c)
{
    guint n = c->n_ranks;
    for (guint q = 0, at = 0; q < n; at += c->matrix[(gsize)q * n], q++) {
        if (c->matrix[(gsize)q * n]) {
            recv[at] ^= 0xff;
            return;
        }
    }
}

static gboolean
a2a_verify(CpuState *st, const MsCollInfo *c, guint p, guint stream, GError **error)
{
    guint n = c->n_ranks;
    guint8 *recv = buffers_of(st, c, p, stream)->recv;
    if ((st->cpu.faults & MS_CPU_FAULT_BAD_PATTERN) && p == 0) {
        corrupt_first(recv, c);
    }
    guint64 at = 0;
    for (guint q = 0; q < n; q++) {
        guint64 len = c->matrix[(gsize)q * n + p];
        guint64 bad = pattern_check(recv + at, len, pair_seed(c->id, q, p));
        if (bad < len) {
            return violation(error, c,
                             "rank %u received wrong bytes from rank %u: byte %" G_GUINT64_FORMAT
                             " of %" G_GUINT64_FORMAT " differs from what was sent",
                             c->ranks[p], c->ranks[q], bad, len);
        }
        atomic_fetch_add(&st->checked_bytes, len);
        at += len;
    }
    return TRUE;
}

static gboolean
alltoall(CpuState *st, const MsCollInfo *c, guint p, guint stream, CpuMeeting *m, GError **error)
{
    guint n = c->n_ranks;
    guint8 *send = buffers_of(st, c, p, stream)->send;
    guint64 off = 0;
    for (guint q = 0; q < n; q++) {
        guint64 len = c->matrix[(gsize)p * n + q];
        pattern_fill(send + off, len, pair_seed(c->id, p, q));
        off += len;
    }
    if (!meet(st, m)) {
        return FALSE;
    }
    guint64 copied = a2a_push(st, c, p, stream);
    add_copied(m, copied);
    atomic_fetch_add(&st->transfer_bytes, copied);
    return meet(st, m) && check_copies(m, c, error) && a2a_verify(st, c, p, stream, error);
}

/* --- allreduce --- */

/* Rank values are small integers, so float sums of up to 2^18 ranks are exact. */
#define VALUE_MASK 63u

static guint
value_seed(guint32 coll, guint rank)
{
    return (guint)(mix(((guint64)coll << 24) ^ rank) & VALUE_MASK);
}

static void
reduce_fill(guint8 *buf, guint64 bytes, guint seed)
{
    guint64 nf = bytes / 4;
    float *f = (float *)buf;
    for (guint64 i = 0; i < nf; i++) {
        f[i] = (float)((seed + i) & VALUE_MASK);
    }
    for (guint64 i = nf * 4; i < bytes; i++) {
        buf[i] = (guint8)(seed + i);
    }
}

/* Sums participant p's share of the floats (and, for participant 0, the tail bytes) over every
 * participant's send buffer into p's receive buffer. */
static void
reduce_share(CpuState *st, const MsCollInfo *c, guint p, guint stream)
{
    guint n = c->n_ranks;
    guint64 nf = c->bytes / 4, lo = nf * p / n, hi = nf * (p + 1) / n;
    float *out = (float *)buffers_of(st, c, p, stream)->recv;
    for (guint64 i = lo; i < hi; i++) {
        float sum = 0;
        for (guint q = 0; q < n; q++) {
            gboolean skip = (st->cpu.faults & MS_CPU_FAULT_BAD_REDUCE) && i == 0 && q == n - 1;
            sum += skip ? 0 : ((const float *)buffers_of(st, c, q, stream)->send)[i];
        }
        out[i] = sum;
    }
    if (p == 0) {
        for (guint64 i = nf * 4; i < c->bytes; i++) {
            guint8 sum = 0;
            for (guint q = 0; q < n; q++) {
                sum += buffers_of(st, c, q, stream)->send[i];
            }
            ((guint8 *)out)[i] = sum;
        }
    }
}

/* Copies every other participant's reduced share (participant 0's includes the tail bytes) into
 * p's receive buffer. */
static guint64
gather_shares(CpuState *st, const MsCollInfo *c, guint p, guint stream)
{
    guint n = c->n_ranks;
    guint64 nf = c->bytes / 4, tail = c->bytes - nf * 4, copied = 0;
    guint8 *out = buffers_of(st, c, p, stream)->recv;
    for (guint q = 0; q < n; q++) {
        guint64 lo = nf * q / n * 4, hi = nf * (q + 1) / n * 4;
        if (q == p) {
            continue;
        }
        const guint8 *src = buffers_of(st, c, q, stream)->recv;
        if (hi > lo) {
            memcpy(out + lo, src + lo, hi - lo);
        }
        copied += hi - lo;
        if (q == 0 && tail) {
            memcpy(out + nf * 4, src + nf * 4, tail);
            copied += tail;
        }
    }
    return copied;
}

static gboolean
reduce_verify(CpuState *st, const MsCollInfo *c, guint p, guint stream, GError **error)
{
    guint n = c->n_ranks;
    float expect[VALUE_MASK + 1] = {0};
    guint8 tail[4] = {0};
    guint64 nf = c->bytes / 4;
    for (guint q = 0; q < n; q++) {
        guint seed = value_seed(c->id, c->ranks[q]);
        for (guint j = 0; j <= VALUE_MASK; j++) {
            expect[j] += (float)((seed + j) & VALUE_MASK);
        }
        for (guint64 i = nf * 4; i < c->bytes; i++) {
            tail[i - nf * 4] += (guint8)(seed + i);
        }
    }
    const guint8 *out = buffers_of(st, c, p, stream)->recv;
    for (guint64 i = 0; i < nf; i++) {
        float v;
        memcpy(&v, out + i * 4, 4);
        if (v != expect[i & VALUE_MASK]) {
            return violation(error, c,
                             "rank %u holds %g in element %" G_GUINT64_FORMAT
                             " after the reduction, expected %g (the sum over %u ranks)",
                             c->ranks[p], v, i, expect[i & VALUE_MASK], n);
        }
    }
    for (guint64 i = nf * 4; i < c->bytes; i++) {
        if (out[i] != tail[i - nf * 4]) {
            return violation(error, c,
                             "rank %u holds a wrong sum in trailing byte %" G_GUINT64_FORMAT,
                             c->ranks[p], i);
        }
    }
    atomic_fetch_add(&st->checked_elements, nf + (c->bytes - nf * 4));
    return TRUE;
}

static gboolean
allreduce(CpuState *st, const MsCollInfo *c, guint p, guint stream, CpuMeeting *m, GError **error)
{
    reduce_fill(buffers_of(st, c, p, stream)->send, c->bytes, value_seed(c->id, c->ranks[p]));
    if (!meet(st, m)) {
        return FALSE;
    }
    reduce_share(st, c, p, stream);
    if (!meet(st, m)) {
        return FALSE;
    }
    guint64 copied = gather_shares(st, c, p, stream);
    add_copied(m, copied);
    atomic_fetch_add(&st->transfer_bytes, copied);
    /* Nobody may reuse a buffer a peer still reads from. */
    return meet(st, m) && check_copies(m, c, error) && reduce_verify(st, c, p, stream, error);
}

gboolean
cpu_collective_run(CpuWorker *w, guint32 op, GError **error)
{
    CpuState *st = w->st;
    MsOpInfo i;
    ms_schedule_op(st->s, op, &i);
    MsCollInfo c;
    ms_schedule_coll(st->s, i.coll, &c);
    guint p = participant(&c, op);
    CpuMeeting *m = meeting_join(st, c.id, c.n_ranks);
    gboolean ok = c.kind == MS_COLL_KIND_ALLTOALL ? alltoall(st, &c, p, i.stream, m, error)
                                                  : allreduce(st, &c, p, i.stream, m, error);
    meeting_leave(st, c.id);
    return ok;
}
