/* executor_wire: the messages a coordinator and its rank workers exchange over TCP (GIO sockets):
 * framed as a 12-byte header (magic "MSX1", type, payload length, little-endian) and a payload
 * built from little-endian integers, doubles and length-prefixed strings. Every wait takes a
 * deadline (monotonic microseconds) and ends with a clear error; payloads over
 * MS_WIRE_MAX_PAYLOAD are refused before anything is allocated. Knows nothing of schedules. */
#pragma once

#include <gio/gio.h>
#include <glib.h>

G_BEGIN_DECLS

#define MS_WIRE_ERROR (ms_wire_error_quark())
GQuark ms_wire_error_quark(void);
typedef enum {
    MS_WIRE_ERROR_TIMEOUT,  /* the deadline passed while waiting */
    MS_WIRE_ERROR_CLOSED,   /* the peer closed the connection */
    MS_WIRE_ERROR_PROTOCOL, /* bad magic, an unknown or unexpected message, a truncated payload */
    MS_WIRE_ERROR_NETWORK,  /* the socket layer failed (address, bind, connect, send) */
} MsWireError;

#define MS_WIRE_MAX_PAYLOAD (G_GUINT64_CONSTANT(1) << 30)

typedef enum {
    MS_WIRE_HELLO = 1, /* worker: version, rank, world, local rank, host name */
    MS_WIRE_JOB,       /* coordinator: kind, payload, options, session */
    MS_WIRE_READY,     /* worker: the job is set up */
    MS_WIRE_LAUNCH,    /* coordinator: ops to start now */
    MS_WIRE_DONE,      /* worker: finished ops with their start and end */
    MS_WIRE_FINISH,    /* coordinator: every op ran; report your figures */
    MS_WIRE_STATS,     /* worker: figures (name, value) */
    MS_WIRE_RESULT,    /* worker: a job's result (rank 0's is the job's answer) */
    MS_WIRE_BYE,       /* coordinator: the run is over (with the time origin of the records) */
    MS_WIRE_FAIL,      /* either side: a message; the run is over */
    MS_WIRE_N_TYPES,
} MsWireType;

const char *ms_wire_type_name(guint32 type);

/* --- payloads --- */

/* Appending to a payload. */
void ms_wire_put_u32(GByteArray *b, guint32 v);
void ms_wire_put_u64(GByteArray *b, guint64 v);
void ms_wire_put_double(GByteArray *b, double v);
void ms_wire_put_string(GByteArray *b, const char *s);
void ms_wire_put_bytes(GByteArray *b, GBytes *bytes); /* NULL: empty */

/* Reading a payload: every getter fails (FALSE, MS_WIRE_ERROR_PROTOCOL naming what) once the
 * payload is exhausted; strings must hold no NUL. */
typedef struct {
    const guint8 *data;
    gsize len, pos;
    const char *what; /* named in errors, e.g. "DONE from rank 3" */
} MsWireReader;

void ms_wire_reader_init(MsWireReader *r, GBytes *payload, const char *what);
gboolean ms_wire_get_u32(MsWireReader *r, guint32 *v, GError **error);
gboolean ms_wire_get_u64(MsWireReader *r, guint64 *v, GError **error);
gboolean ms_wire_get_double(MsWireReader *r, double *v, GError **error);
/* A newly allocated string. */
gboolean ms_wire_get_string(MsWireReader *r, char **s, GError **error);
gboolean ms_wire_get_bytes(MsWireReader *r, GBytes **bytes, GError **error);
/* FALSE with _PROTOCOL when bytes remain. */
gboolean ms_wire_reader_end(MsWireReader *r, GError **error);

/* --- connections --- */

typedef struct _MsWire MsWire;

/* Takes a reference on socket (connected, stream); name appears in errors ("rank 3"). */
MsWire *ms_wire_new(GSocket *socket, const char *name);
void ms_wire_free(MsWire *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsWire, ms_wire_free)
const char *ms_wire_name(const MsWire *w);
void ms_wire_set_name(MsWire *w, const char *name);

/* Sends one message whole, waiting at most until deadline. */
gboolean ms_wire_send(MsWire *w, guint32 type, const GByteArray *payload, gint64 deadline,
                      GError **error);
/* Receives one whole message, waiting until deadline. An EOF is MS_WIRE_ERROR_CLOSED; a bad
 * header _PROTOCOL. *payload is never NULL on success. */
gboolean ms_wire_recv(MsWire *w, gint64 deadline, guint32 *type, GBytes **payload, GError **error);
/* TRUE when a whole message is already buffered (ms_wire_recv will not block). */
gboolean ms_wire_has_message(const MsWire *w);
/* Waits until one of the wires has a whole message, an EOF or an error to report, or until
 * deadline; returns its index, or -1 when the deadline passed. Reads what arrives into the
 * wires' buffers; a read error is kept and reported by the next ms_wire_recv on that wire. */
gint ms_wire_wait_any(MsWire **wires, guint n, gint64 deadline);
/* The same without ever sleeping in the kernel: no wake-up latency, a core busy while it waits
 * (for backends with busy_poll, executor.h). */
gint ms_wire_spin_any(MsWire **wires, guint n, gint64 deadline);

/* Listens on host:port (host NULL: every address; port 0: any free port) and returns the
 * socket; *bound_port receives the port. */
GSocket *ms_wire_listen(const char *host, guint16 port, guint16 *bound_port, GError **error);
/* Accepts one connection before the deadline. */
GSocket *ms_wire_accept(GSocket *listener, gint64 deadline, GError **error);
/* Connects to host:port, retrying (the listener may not be up yet) until the deadline. */
GSocket *ms_wire_connect(const char *host, guint16 port, gint64 deadline, GError **error);

/* Seconds left until a deadline, for messages. */
double ms_wire_seconds_left(gint64 deadline);

G_END_DECLS
