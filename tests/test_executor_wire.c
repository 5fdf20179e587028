/* Tests of the rendezvous wire: payload round trips and every malformed payload, messages over a
 * real localhost connection (small, large, several wires at once), and each way a wait ends:
 * timeout, closed peer, a peer that is not moesim, nobody listening, an unknown host. */
#include "backends/executor_wire.h"
#include "ms_test.h"

static gint64
in_ms(int ms)
{
    return g_get_monotonic_time() + ms * G_TIME_SPAN_MILLISECOND;
}

static void
test_payload_round_trip(void)
{
    g_autoptr(GByteArray) p = g_byte_array_new();
    ms_wire_put_u32(p, 0xdeadbeefu);
    ms_wire_put_u64(p, G_GUINT64_CONSTANT(0x0123456789abcdef));
    ms_wire_put_double(p, -2.5e-7);
    ms_wire_put_string(p, "rank 3 on node-a");
    g_autoptr(GBytes) blob = g_bytes_new("\0\1\2", 3);
    ms_wire_put_bytes(p, blob);
    ms_wire_put_bytes(p, NULL);
    /* little-endian on the wire */
    CU_ASSERT_EQUAL(p->data[0], 0xef);
    CU_ASSERT_EQUAL(p->data[3], 0xde);
    g_autoptr(GBytes) bytes = g_bytes_new(p->data, p->len);
    MsWireReader r;
    ms_wire_reader_init(&r, bytes, "test");
    guint32 a;
    guint64 b;
    double c;
    g_autofree char *d = NULL;
    g_autoptr(GBytes) e = NULL, f = NULL;
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_wire_get_u32(&r, &a, &error));
    CU_ASSERT_TRUE(ms_wire_get_u64(&r, &b, &error));
    CU_ASSERT_TRUE(ms_wire_get_double(&r, &c, &error));
    CU_ASSERT_TRUE(ms_wire_get_string(&r, &d, &error));
    CU_ASSERT_TRUE(ms_wire_get_bytes(&r, &e, &error));
    CU_ASSERT_TRUE(ms_wire_get_bytes(&r, &f, &error));
    CU_ASSERT_TRUE(ms_wire_reader_end(&r, &error));
    CU_ASSERT_EQUAL(a, 0xdeadbeefu);
    CU_ASSERT_EQUAL(b, G_GUINT64_CONSTANT(0x0123456789abcdef));
    CU_ASSERT_EQUAL(c, -2.5e-7);
    CU_ASSERT_STRING_EQUAL(d, "rank 3 on node-a");
    CU_ASSERT_TRUE(g_bytes_equal(e, blob));
    CU_ASSERT_EQUAL(g_bytes_get_size(f), 0);
    CU_ASSERT_PTR_NULL(error);
}

static void
test_payload_errors(void)
{
    GError *error = NULL;
    MsWireReader r;
    guint32 v32;
    guint64 v64;
    /* Truncated: two bytes where four are needed. */
    g_autoptr(GBytes) two = g_bytes_new("ab", 2);
    ms_wire_reader_init(&r, two, "DONE from rank 2");
    CU_ASSERT_FALSE(ms_wire_get_u32(&r, &v32, &error));
    MS_ASSERT_ERROR(error, MS_WIRE_ERROR, MS_WIRE_ERROR_PROTOCOL,
                    "DONE from rank 2: the message is truncated (2 bytes, 4 more needed at offset "
                    "0)");
    /* A string whose length runs past the end. */
    g_autoptr(GByteArray) p = g_byte_array_new();
    ms_wire_put_u64(p, 1000);
    g_byte_array_append(p, (const guint8 *)"xyz", 3);
    g_autoptr(GBytes) longstr = g_bytes_new(p->data, p->len);
    ms_wire_reader_init(&r, longstr, "HELLO");
    char *s = NULL;
    CU_ASSERT_FALSE(ms_wire_get_string(&r, &s, &error));
    MS_ASSERT_ERROR(error, MS_WIRE_ERROR, MS_WIRE_ERROR_PROTOCOL,
                    "HELLO: a field of 1000 bytes runs past the end of the message");
    /* A NUL inside a text field. */
    g_byte_array_set_size(p, 0);
    ms_wire_put_u64(p, 3);
    g_byte_array_append(p, (const guint8 *)"a\0b", 3);
    g_autoptr(GBytes) nul = g_bytes_new(p->data, p->len);
    ms_wire_reader_init(&r, nul, "FAIL");
    CU_ASSERT_FALSE(ms_wire_get_string(&r, &s, &error));
    MS_ASSERT_ERROR(error, MS_WIRE_ERROR, MS_WIRE_ERROR_PROTOCOL, "FAIL: a text field holds a NUL");
    /* Trailing bytes. */
    g_byte_array_set_size(p, 0);
    ms_wire_put_u64(p, 7);
    ms_wire_put_u32(p, 1);
    g_autoptr(GBytes) extra = g_bytes_new(p->data, p->len);
    ms_wire_reader_init(&r, extra, "BYE");
    CU_ASSERT_TRUE(ms_wire_get_u64(&r, &v64, &error));
    CU_ASSERT_FALSE(ms_wire_reader_end(&r, &error));
    MS_ASSERT_ERROR(error, MS_WIRE_ERROR, MS_WIRE_ERROR_PROTOCOL,
                    "BYE: 4 unexpected bytes after the last field");
    CU_ASSERT_STRING_EQUAL(ms_wire_type_name(MS_WIRE_LAUNCH), "LAUNCH");
    CU_ASSERT_STRING_EQUAL(ms_wire_type_name(0), "unknown");
    CU_ASSERT_STRING_EQUAL(ms_wire_type_name(999), "unknown");
}

/* A connected pair over localhost. */
typedef struct {
    GSocket *listener;
    guint16 port;
    MsWire *client, *server;
} Pair;

static void
pair_open(Pair *p)
{
    GError *error = NULL;
    p->listener = ms_wire_listen("127.0.0.1", 0, &p->port, &error);
    g_assert_no_error(error);
    g_autoptr(GSocket) c = ms_wire_connect("127.0.0.1", p->port, in_ms(2000), &error);
    g_assert_no_error(error);
    g_autoptr(GSocket) s = ms_wire_accept(p->listener, in_ms(2000), &error);
    g_assert_no_error(error);
    p->client = ms_wire_new(c, "the client");
    p->server = ms_wire_new(s, "rank 1");
}

static void
pair_close(Pair *p)
{
    ms_wire_free(p->client);
    ms_wire_free(p->server);
    g_object_unref(p->listener);
}

static void
test_messages(void)
{
    Pair p;
    pair_open(&p);
    CU_ASSERT_TRUE(p.port > 0);
    GError *error = NULL;
    g_autoptr(GByteArray) small = g_byte_array_new();
    ms_wire_put_string(small, "hello");
    CU_ASSERT_TRUE(ms_wire_send(p.client, MS_WIRE_HELLO, small, in_ms(2000), &error));
    CU_ASSERT_TRUE(ms_wire_send(p.client, MS_WIRE_READY, NULL, in_ms(2000), &error));
    guint32 type;
    g_autoptr(GBytes) a = NULL, b = NULL;
    CU_ASSERT_TRUE(ms_wire_recv(p.server, in_ms(2000), &type, &a, &error));
    CU_ASSERT_EQUAL(type, MS_WIRE_HELLO);
    CU_ASSERT_EQUAL(g_bytes_get_size(a), 8 + 5);
    CU_ASSERT_TRUE(ms_wire_recv(p.server, in_ms(2000), &type, &b, &error));
    CU_ASSERT_EQUAL(type, MS_WIRE_READY);
    CU_ASSERT_EQUAL(g_bytes_get_size(b), 0);
    CU_ASSERT_FALSE(ms_wire_has_message(p.server));
    CU_ASSERT_PTR_NULL(error);
    pair_close(&p);
}

typedef struct {
    MsWire *w;
    GByteArray *payload;
    gboolean ok;
} Sender;

static gpointer
send_thread(gpointer data)
{
    Sender *s = data;
    s->ok = ms_wire_send(s->w, MS_WIRE_JOB, s->payload, in_ms(5000), NULL);
    return NULL;
}

static void
test_large_message(void)
{
    Pair p;
    pair_open(&p);
    g_autoptr(GByteArray) big = g_byte_array_new();
    g_byte_array_set_size(big, 3 << 20);
    for (guint k = 0; k < big->len; k++) {
        big->data[k] = (guint8)(k * 7 + (k >> 11));
    }
    /* 3 MiB does not fit the socket buffers: the receiver reads while the sender waits. */
    Sender s = {p.client, big, FALSE};
    GThread *t = g_thread_new("send", send_thread, &s);
    guint32 type;
    g_autoptr(GBytes) got = NULL;
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_wire_recv(p.server, in_ms(5000), &type, &got, &error));
    g_thread_join(t);
    CU_ASSERT_TRUE(s.ok);
    CU_ASSERT_EQUAL(type, MS_WIRE_JOB);
    CU_ASSERT_EQUAL_FATAL(g_bytes_get_size(got), big->len);
    CU_ASSERT_EQUAL(memcmp(g_bytes_get_data(got, NULL), big->data, big->len), 0);
    pair_close(&p);
}

static void
test_wait_any(void)
{
    Pair p[3];
    for (guint k = 0; k < 3; k++) {
        pair_open(&p[k]);
    }
    MsWire *servers[3] = {p[0].server, p[1].server, p[2].server};
    /* Nothing sent: the deadline passes. */
    gint64 t0 = g_get_monotonic_time();
    CU_ASSERT_EQUAL(ms_wire_wait_any(servers, 3, in_ms(60)), -1);
    CU_ASSERT_TRUE(g_get_monotonic_time() - t0 >= 60000);
    /* A deadline already past still looks at the sockets once. */
    CU_ASSERT_TRUE(ms_wire_send(p[2].client, MS_WIRE_DONE, NULL, in_ms(1000), NULL));
    g_usleep(20000);
    CU_ASSERT_EQUAL(ms_wire_wait_any(servers, 3, g_get_monotonic_time() - 1), 2);
    CU_ASSERT_TRUE(ms_wire_has_message(p[2].server));
    /* A closed peer is ready too: its EOF is reported by recv after the buffered message. */
    ms_wire_free(p[1].client);
    p[1].client = NULL;
    guint32 type;
    g_autoptr(GBytes) m = NULL;
    GError *error = NULL;
    CU_ASSERT_TRUE(ms_wire_recv(p[2].server, in_ms(1000), &type, &m, &error));
    CU_ASSERT_EQUAL(ms_wire_wait_any(servers, 3, in_ms(1000)), 1);
    g_autoptr(GBytes) none = NULL;
    CU_ASSERT_FALSE(ms_wire_recv(p[1].server, in_ms(1000), &type, &none, &error));
    MS_ASSERT_ERROR(error, MS_WIRE_ERROR, MS_WIRE_ERROR_CLOSED, "rank 1 closed the connection");
    for (guint k = 0; k < 3; k++) {
        pair_close(&p[k]);
    }
}

static void
test_wait_errors(void)
{
    GError *error = NULL;
    guint32 type;
    GBytes *payload = NULL;
    /* Nothing arrives. */
    Pair p;
    pair_open(&p);
    CU_ASSERT_FALSE(ms_wire_recv(p.server, in_ms(50), &type, &payload, &error));
    MS_ASSERT_ERROR(error, MS_WIRE_ERROR, MS_WIRE_ERROR_TIMEOUT,
                    "rank 1: timed out waiting for a message");
    pair_close(&p);
    /* A peer that is not moesim. */
    pair_open(&p);
    g_autoptr(GSocket) raw = ms_wire_connect("127.0.0.1", p.port, in_ms(2000), &error);
    g_autoptr(GSocket) acc = ms_wire_accept(p.listener, in_ms(2000), &error);
    g_assert_no_error(error);
    g_autoptr(MsWire) stranger = ms_wire_new(acc, "rank 4");
    g_socket_send(raw, "GET / HTTP/1.1\r\n\r\n", 18, NULL, NULL);
    CU_ASSERT_FALSE(ms_wire_recv(stranger, in_ms(2000), &type, &payload, &error));
    MS_ASSERT_ERROR(error, MS_WIRE_ERROR, MS_WIRE_ERROR_PROTOCOL,
                    "rank 4: not a moesim peer (bad message header)");
    /* A header announcing a payload over the limit. */
    g_autoptr(GSocket) raw2 = ms_wire_connect("127.0.0.1", p.port, in_ms(2000), &error);
    g_autoptr(GSocket) acc2 = ms_wire_accept(p.listener, in_ms(2000), &error);
    g_autoptr(MsWire) greedy = ms_wire_new(acc2, "rank 5");
    const guint8 header[12] = {'M', 'S', 'X', '1', 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
    g_socket_send(raw2, (const char *)header, 12, NULL, NULL);
    CU_ASSERT_FALSE(ms_wire_recv(greedy, in_ms(2000), &type, &payload, &error));
    MS_ASSERT_ERROR(error, MS_WIRE_ERROR, MS_WIRE_ERROR_PROTOCOL,
                    "rank 5: a message longer than the limit");
    /* Sending to a peer that has gone. */
    ms_wire_free(p.server);
    p.server = NULL;
    g_autoptr(GByteArray) chunk = g_byte_array_new();
    g_byte_array_set_size(chunk, 1 << 20);
    gboolean sent = TRUE;
    for (guint k = 0; k < 64 && sent; k++) {
        sent = ms_wire_send(p.client, MS_WIRE_JOB, chunk, in_ms(500), &error);
    }
    CU_ASSERT_FALSE(sent);
    CU_ASSERT_PTR_NOT_NULL(error);
    CU_ASSERT_TRUE(error && error->domain == MS_WIRE_ERROR &&
                   (error->code == MS_WIRE_ERROR_CLOSED || error->code == MS_WIRE_ERROR_TIMEOUT));
    g_clear_error(&error);
    pair_close(&p);
}

static void
test_socket_errors(void)
{
    GError *error = NULL;
    guint16 port = 0;
    g_autoptr(GSocket) l = ms_wire_listen("127.0.0.1", 0, &port, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    /* Nobody connects. */
    CU_ASSERT_PTR_NULL(ms_wire_accept(l, in_ms(50), &error));
    MS_ASSERT_ERROR(error, MS_WIRE_ERROR, MS_WIRE_ERROR_TIMEOUT,
                    "timed out waiting for ranks to connect");
    /* The port is taken. */
    guint16 again = 0;
    CU_ASSERT_PTR_NULL(ms_wire_listen("127.0.0.1", port, &again, &error));
    g_autofree char *busy = g_strdup_printf("cannot listen on 127.0.0.1:%u", port);
    MS_ASSERT_ERROR(error, MS_WIRE_ERROR, MS_WIRE_ERROR_NETWORK, busy);
    /* Nobody listens: retried until the deadline. */
    g_object_unref(g_steal_pointer(&l));
    gint64 t0 = g_get_monotonic_time();
    CU_ASSERT_PTR_NULL(ms_wire_connect("127.0.0.1", port, in_ms(200), &error));
    CU_ASSERT_TRUE(g_get_monotonic_time() - t0 >= 200000);
    g_autofree char *refused =
        g_strdup_printf("timed out connecting to the coordinator at 127.0.0.1:%u", port);
    MS_ASSERT_ERROR(error, MS_WIRE_ERROR, MS_WIRE_ERROR_TIMEOUT, refused);
    /* A host that does not resolve. */
    CU_ASSERT_PTR_NULL(ms_wire_connect("no-such-host.invalid", 1234, in_ms(2000), &error));
    MS_ASSERT_ERROR(error, MS_WIRE_ERROR, MS_WIRE_ERROR_NETWORK,
                    "cannot resolve host 'no-such-host.invalid'");
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"payload round trip", test_payload_round_trip},
        {"malformed payloads", test_payload_errors},
        {"messages over a connection", test_messages},
        {"a message larger than the socket buffers", test_large_message},
        {"waiting on several wires", test_wait_any},
        {"timeouts, strangers, oversized headers, gone peers", test_wait_errors},
        {"listen, accept and connect errors", test_socket_errors},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"executor wire", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
