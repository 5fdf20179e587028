/* executor_wire: framed messages over non-blocking GSockets; every wait is a poll with the time
 * left to a deadline. Multi-byte values are little-endian on the wire. */
#include "executor_wire.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>

G_DEFINE_QUARK(ms_wire_error_quark, ms_wire_error)

#define MAGIC 0x3158534du /* "MSX1" read as a little-endian integer */
#define HEADER 12u
#define READ_CHUNK 65536u

static const char *const type_names[MS_WIRE_N_TYPES] = {
    "?", "HELLO", "JOB", "READY", "LAUNCH", "DONE", "FINISH", "STATS", "RESULT", "BYE", "FAIL",
};

const char *
ms_wire_type_name(guint32 type)
{
    return type > 0 && type < MS_WIRE_N_TYPES ? type_names[type] : "unknown";
}

/* --- payloads --- */

void
ms_wire_put_u32(GByteArray *b, guint32 v)
{
    guint32 le = GUINT32_TO_LE(v);
    g_byte_array_append(b, (const guint8 *)&le, 4);
}

void
ms_wire_put_u64(GByteArray *b, guint64 v)
{
    guint64 le = GUINT64_TO_LE(v);
    g_byte_array_append(b, (const guint8 *)&le, 8);
}

void
ms_wire_put_double(GByteArray *b, double v)
{
    guint64 bits;
    memcpy(&bits, &v, 8);
    ms_wire_put_u64(b, bits);
}

void
ms_wire_put_string(GByteArray *b, const char *s)
{
    gsize n = s ? strlen(s) : 0;
    ms_wire_put_u64(b, n);
    g_byte_array_append(b, (const guint8 *)(s ? s : ""), n);
}

void
ms_wire_put_bytes(GByteArray *b, GBytes *bytes)
{
    gsize n = 0;
    const guint8 *data = bytes ? g_bytes_get_data(bytes, &n) : NULL;
    ms_wire_put_u64(b, n);
    if (n) {
        g_byte_array_append(b, data, n);
    }
}

void
ms_wire_reader_init(MsWireReader *r, GBytes *payload, const char *what)
{
    r->data = g_bytes_get_data(payload, &r->len);
    r->pos = 0;
    r->what = what;
}

static gboolean
take(MsWireReader *r, gsize n, const guint8 **out, GError **error)
{
    if (r->len - r->pos < n) {
        g_set_error(error, MS_WIRE_ERROR, MS_WIRE_ERROR_PROTOCOL,
                    "%s: the message is truncated (%" G_GSIZE_FORMAT " bytes, %" G_GSIZE_FORMAT
                    " more needed at offset %" G_GSIZE_FORMAT ")",
                    r->what, r->len, n, r->pos);
        return FALSE;
    }
    *out = r->data + r->pos;
    r->pos += n;
    return TRUE;
}

gboolean
ms_wire_get_u32(MsWireReader *r, guint32 *v, GError **error)
{
    const guint8 *p;
    if (!take(r, 4, &p, error)) {
        return FALSE;
    }
    guint32 le;
    memcpy(&le, p, 4);
    *v = GUINT32_FROM_LE(le);
    return TRUE;
}

gboolean
ms_wire_get_u64(MsWireReader *r, guint64 *v, GError **error)
{
    const guint8 *p;
    if (!take(r, 8, &p, error)) {
        return FALSE;
    }
    guint64 le;
    memcpy(&le, p, 8);
    *v = GUINT64_FROM_LE(le);
    return TRUE;
}

gboolean
ms_wire_get_double(MsWireReader *r, double *v, GError **error)
{
    guint64 bits;
    if (!ms_wire_get_u64(r, &bits, error)) {
        return FALSE;
    }
    memcpy(v, &bits, 8);
    return TRUE;
}

static gboolean
get_span(MsWireReader *r, const guint8 **p, gsize *n, GError **error)
{
    guint64 len;
    if (!ms_wire_get_u64(r, &len, error)) {
        return FALSE;
    }
    if (len > r->len - r->pos) {
        g_set_error(error, MS_WIRE_ERROR, MS_WIRE_ERROR_PROTOCOL,
                    "%s: a field of %" G_GUINT64_FORMAT " bytes runs past the end of the message",
                    r->what, len);
        return FALSE;
    }
    *n = (gsize)len;
    return take(r, *n, p, error);
}

gboolean
ms_wire_get_string(MsWireReader *r, char **s, GError **error)
{
    const guint8 *p;
    gsize n;
    if (!get_span(r, &p, &n, error)) {
        return FALSE;
    }
    if (memchr(p, 0, n) != NULL) {
        g_set_error(error, MS_WIRE_ERROR, MS_WIRE_ERROR_PROTOCOL, "%s: a text field holds a NUL",
                    r->what);
        return FALSE;
    }
    *s = g_strndup((const char *)p, n);
    return TRUE;
}

gboolean
ms_wire_get_bytes(MsWireReader *r, GBytes **bytes, GError **error)
{
    const guint8 *p;
    gsize n;
    if (!get_span(r, &p, &n, error)) {
        return FALSE;
    }
    *bytes = g_bytes_new(p, n);
    return TRUE;
}

gboolean
ms_wire_reader_end(MsWireReader *r, GError **error)
{
    if (r->pos != r->len) {
        g_set_error(error, MS_WIRE_ERROR, MS_WIRE_ERROR_PROTOCOL,
                    "%s: %" G_GSIZE_FORMAT " unexpected bytes after the last field", r->what,
                    r->len - r->pos);
        return FALSE;
    }
    return TRUE;
}

/* --- connections --- */

struct _MsWire {
    GSocket *socket;
    char *name;
    GByteArray *in;
    GError *pending; /* a read error or EOF, reported once the buffered messages are taken */
};

MsWire *
ms_wire_new(GSocket *socket, const char *name)
{
    MsWire *w = g_new0(MsWire, 1);
    w->socket = g_object_ref(socket);
    g_socket_set_blocking(socket, FALSE);
    g_socket_set_option(socket, IPPROTO_TCP, TCP_NODELAY, 1, NULL);
    w->name = g_strdup(name);
    w->in = g_byte_array_new();
    return w;
}

void
ms_wire_free(MsWire *w)
{
    if (w == NULL) {
        return;
    }
    g_socket_close(w->socket, NULL);
    g_object_unref(w->socket);
    g_free(w->name);
    g_byte_array_unref(w->in);
    g_clear_error(&w->pending);
    g_free(w);
}

const char *
ms_wire_name(const MsWire *w)
{
    return w->name;
}

void
ms_wire_set_name(MsWire *w, const char *name)
{
    g_free(w->name);
    w->name = g_strdup(name);
}

static gint64
left_us(gint64 deadline)
{
    return MAX(deadline - g_get_monotonic_time(), 0);
}

double
ms_wire_seconds_left(gint64 deadline)
{
    return left_us(deadline) * 1e-6;
}

static gboolean
timeout_error(GError **error, const MsWire *w, const char *doing)
{
    g_set_error(error, MS_WIRE_ERROR, MS_WIRE_ERROR_TIMEOUT, "%s: timed out %s", w->name, doing);
    return FALSE;
}

gboolean
ms_wire_send(MsWire *w, guint32 type, const GByteArray *payload, gint64 deadline, GError **error)
{
    guint32 len = payload ? payload->len : 0;
    g_autoptr(GByteArray) msg = g_byte_array_sized_new(HEADER + len);
    ms_wire_put_u32(msg, MAGIC);
    ms_wire_put_u32(msg, type);
    ms_wire_put_u32(msg, len);
    if (len) {
        g_byte_array_append(msg, payload->data, len);
    }
    for (gsize off = 0; off < msg->len;) {
        g_autoptr(GError) local = NULL;
        gssize n =
            g_socket_send(w->socket, (const char *)msg->data + off, msg->len - off, NULL, &local);
        if (n >= 0) {
            off += (gsize)n;
            continue;
        }
        if (!g_error_matches(local, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK)) {
            g_set_error(error, MS_WIRE_ERROR, MS_WIRE_ERROR_CLOSED, "%s: cannot send %s: %s",
                        w->name, ms_wire_type_name(type), local->message);
            return FALSE;
        }
        if (!g_socket_condition_timed_wait(w->socket, G_IO_OUT, left_us(deadline), NULL, NULL)) {
            return timeout_error(error, w, "sending");
        }
    }
    return TRUE;
}

/* Length of the whole first message when it is buffered, else 0; header errors set pending. */
static gsize
buffered_message(MsWire *w)
{
    if (w->in->len < HEADER) {
        return 0;
    }
    guint32 h[3];
    memcpy(h, w->in->data, HEADER);
    guint32 magic = GUINT32_FROM_LE(h[0]), len = GUINT32_FROM_LE(h[2]);
    if (magic != MAGIC || len > MS_WIRE_MAX_PAYLOAD) {
        if (w->pending == NULL) {
            g_set_error(&w->pending, MS_WIRE_ERROR, MS_WIRE_ERROR_PROTOCOL,
                        magic != MAGIC ? "%s: not a moesim peer (bad message header)"
                                       : "%s: a message longer than the limit",
                        w->name);
        }
        return 0;
    }
    return w->in->len - HEADER >= len ? HEADER + len : 0;
}

gboolean
ms_wire_has_message(const MsWire *w)
{
    return buffered_message((MsWire *)w) > 0;
}

/* Reads what the socket holds now; FALSE once EOF or an error was met (kept in pending). */
static gboolean
read_available(MsWire *w)
{
    guint8 chunk[READ_CHUNK];
    while (w->pending == NULL) {
        g_autoptr(GError) local = NULL;
        gssize n = g_socket_receive(w->socket, (char *)chunk, sizeof chunk, NULL, &local);
        if (n > 0) {
            g_byte_array_append(w->in, chunk, (guint)n);
            continue;
        }
        if (n < 0 && g_error_matches(local, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK)) {
            return TRUE;
        }
        if (n == 0) {
            g_set_error(&w->pending, MS_WIRE_ERROR, MS_WIRE_ERROR_CLOSED,
                        "%s closed the connection", w->name);
        } else {
            g_set_error(&w->pending, MS_WIRE_ERROR, MS_WIRE_ERROR_CLOSED, "%s: %s", w->name,
                        local->message);
        }
    }
    return FALSE;
}

static gboolean
ready(MsWire *w)
{
    return buffered_message(w) > 0 || w->pending != NULL;
}

static gint
wait_any(MsWire **wires, guint n, gint64 deadline, gboolean busy)
{
    g_autofree GPollFD *fds = g_new0(GPollFD, MAX(n, 1));
    for (;;) {
        for (guint k = 0; k < n; k++) {
            if (ready(wires[k])) {
                return (gint)k;
            }
        }
        gint64 left = left_us(deadline);
        for (guint k = 0; k < n; k++) {
            fds[k].fd = g_socket_get_fd(wires[k]->socket);
            fds[k].events = G_IO_IN | G_IO_HUP | G_IO_ERR;
            fds[k].revents = 0;
        }
        /* At least one look at the sockets, even when the deadline has passed. */
        g_poll(fds, n, busy ? 0 : (gint)MIN((left + 999) / 1000, G_MAXINT));
        for (guint k = 0; k < n; k++) {
            if (fds[k].revents) {
                read_available(wires[k]);
            }
            if (ready(wires[k])) {
                return (gint)k;
            }
        }
        if (left == 0) {
            return -1;
        }
        if (busy) {
            g_thread_yield();
        }
    }
}

gint
ms_wire_wait_any(MsWire **wires, guint n, gint64 deadline)
{
    return wait_any(wires, n, deadline, FALSE);
}

gint
ms_wire_spin_any(MsWire **wires, guint n, gint64 deadline)
{
    return wait_any(wires, n, deadline, TRUE);
}

gboolean
ms_wire_recv(MsWire *w, gint64 deadline, guint32 *type, GBytes **payload, GError **error)
{
    if (ms_wire_wait_any(&w, 1, deadline) < 0) {
        return timeout_error(error, w, "waiting for a message");
    }
    gsize whole = buffered_message(w);
    if (whole == 0) {
        g_propagate_error(error, g_error_copy(w->pending));
        return FALSE;
    }
    guint32 t;
    memcpy(&t, w->in->data + 4, 4);
    *type = GUINT32_FROM_LE(t);
    *payload = g_bytes_new(w->in->data + HEADER, whole - HEADER);
    g_byte_array_remove_range(w->in, 0, (guint)whole);
    return TRUE;
}

/* --- sockets --- */

/* Every address of host (a literal address or a name), in the resolver's order. */
static GList *
resolve(const char *host, guint16 port, GError **error)
{
    g_autoptr(GInetAddress) direct = g_inet_address_new_from_string(host);
    if (direct) {
        return g_list_append(NULL, g_inet_socket_address_new(direct, port));
    }
    g_autoptr(GResolver) resolver = g_resolver_get_default();
    g_autoptr(GError) local = NULL;
    GList *list = g_resolver_lookup_by_name(resolver, host, NULL, &local);
    if (list == NULL) {
        g_set_error(error, MS_WIRE_ERROR, MS_WIRE_ERROR_NETWORK, "cannot resolve host '%s': %s",
                    host, local->message);
        return NULL;
    }
    GList *addrs = NULL;
    for (GList *l = list; l; l = l->next) {
        addrs = g_list_append(addrs, g_inet_socket_address_new(l->data, port));
    }
    g_resolver_free_addresses(list);
    return addrs;
}

GSocket *
ms_wire_listen(const char *host, guint16 port, guint16 *bound_port, GError **error)
{
    g_autoptr(GSocketAddress) addr = NULL;
    if (host) {
        GList *addrs = resolve(host, port, error);
        if (addrs == NULL) {
            return NULL;
        }
        addr = g_object_ref(addrs->data);
        g_list_free_full(addrs, g_object_unref);
    } else {
        g_autoptr(GInetAddress) any = g_inet_address_new_any(G_SOCKET_FAMILY_IPV4);
        addr = g_inet_socket_address_new(any, port);
    }
    g_autoptr(GError) local = NULL;
    g_autoptr(GSocket) sock = g_socket_new(g_socket_address_get_family(addr), G_SOCKET_TYPE_STREAM,
                                           G_SOCKET_PROTOCOL_TCP, &local);
    if (sock == NULL || !g_socket_bind(sock, addr, TRUE, &local) ||
        !g_socket_listen(sock, &local)) {
        g_set_error(error, MS_WIRE_ERROR, MS_WIRE_ERROR_NETWORK, "cannot listen on %s:%u: %s",
                    host ? host : "*", port, local->message);
        return NULL;
    }
    g_autoptr(GSocketAddress) local_addr = g_socket_get_local_address(sock, NULL);
    *bound_port = g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(local_addr));
    g_socket_set_blocking(sock, FALSE);
    return g_steal_pointer(&sock);
}

GSocket *
ms_wire_accept(GSocket *listener, gint64 deadline, GError **error)
{
    for (;;) {
        g_autoptr(GError) local = NULL;
        GSocket *s = g_socket_accept(listener, NULL, &local);
        if (s) {
            return s;
        }
        if (!g_error_matches(local, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK)) {
            g_set_error(error, MS_WIRE_ERROR, MS_WIRE_ERROR_NETWORK, "cannot accept: %s",
                        local->message);
            return NULL;
        }
        if (!g_socket_condition_timed_wait(listener, G_IO_IN, left_us(deadline), NULL, NULL)) {
            g_set_error(error, MS_WIRE_ERROR, MS_WIRE_ERROR_TIMEOUT,
                        "timed out waiting for ranks to connect");
            return NULL;
        }
    }
}

/* One non-blocking connection attempt, given until the deadline. */
static GSocket *
try_connect(GSocketAddress *addr, gint64 deadline, GError **error)
{
    g_autoptr(GSocket) sock = g_socket_new(g_socket_address_get_family(addr), G_SOCKET_TYPE_STREAM,
                                           G_SOCKET_PROTOCOL_TCP, error);
    if (sock == NULL) {
        return NULL;
    }
    g_socket_set_blocking(sock, FALSE);
    g_autoptr(GError) local = NULL;
    if (!g_socket_connect(sock, addr, NULL, &local)) {
        if (!g_error_matches(local, G_IO_ERROR, G_IO_ERROR_PENDING)) {
            g_propagate_error(error, g_steal_pointer(&local));
            return NULL;
        }
        if (!g_socket_condition_timed_wait(sock, G_IO_OUT, left_us(deadline), NULL, error) ||
            !g_socket_check_connect_result(sock, error)) {
            return NULL;
        }
    }
    return g_steal_pointer(&sock);
}

GSocket *
ms_wire_connect(const char *host, guint16 port, gint64 deadline, GError **error)
{
    GList *addrs = resolve(host, port, error);
    if (addrs == NULL) {
        return NULL;
    }
    g_autoptr(GError) last = NULL;
    GSocket *s = NULL;
    while (s == NULL && g_get_monotonic_time() < deadline) {
        for (GList *l = addrs; l && s == NULL; l = l->next) {
            g_clear_error(&last);
            s = try_connect(l->data, deadline, &last);
        }
        if (s == NULL) {
            g_usleep(MIN(50000, left_us(deadline)));
        }
    }
    g_list_free_full(addrs, g_object_unref);
    if (s == NULL) {
        g_set_error(error, MS_WIRE_ERROR, MS_WIRE_ERROR_TIMEOUT,
                    "timed out connecting to the coordinator at %s:%u (%s)", host, port,
                    last ? last->message : "no attempt finished");
    }
    return s;
}
