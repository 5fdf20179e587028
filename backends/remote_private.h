/* remote_private: what the coordinator (executor_remote.c) and the worker (executor_worker.c)
 * share: the payload layouts of the messages and small helpers. Not for other modules.
 *
 *   HELLO   u32 protocol, u32 rank, u32 world, u32 local rank, string host
 *   JOB     string kind ("schedule" | "bench"), bytes payload (schedule JSON | bench spec),
 *           double timeout_s, bytes backend options (its record, or empty for its defaults),
 *           bytes session
 *   READY   (empty)
 *   LAUNCH  u32 n, n x u32 op
 *   DONE    u32 n, n x (u32 op, u64 start ps, u64 end ps)
 *   FINISH  (empty)
 *   STATS   u32 n, n x (string name, double value)
 *   RESULT  bytes
 *   BYE     u64 time origin of the records (ps, the smallest start)
 *   FAIL    string message */
#pragma once

#include "executor_remote.h"
#include "executor_wire.h"

G_BEGIN_DECLS

typedef struct {
    guint32 version, rank, world, local_rank;
    char *host;
} RemoteHello;

void remote_hello_write(GByteArray *p, const RemoteHello *h);
gboolean remote_hello_read(GBytes *payload, RemoteHello *h, GError **error);

/* The backend's options record travels as its options_size bytes (none when o->backend is NULL). */
void remote_job_write(GByteArray *p, const char *kind, GBytes *payload, const MsExecOptions *o,
                      gsize options_size, GBytes *session);

/* Appends a DONE payload's ops to done (MsExecDone), checking each op is rank's. */
gboolean remote_done_read(GBytes *payload, const MsSchedule *s, guint rank, GArray *done,
                          GError **error);
/* Sets every figure of a STATS payload on records. */
gboolean remote_stats_read(GBytes *payload, MsRecords *records, GError **error);
gboolean remote_result_read(GBytes *payload, GBytes **result, GError **error);

/* The schedule's JSON text, as the coordinator sends it. */
GBytes *remote_schedule_bytes(const MsSchedule *s);
guint remote_n_comm_streams(const MsSchedule *s);

/* Turns a FAIL payload from rank into MS_REMOTE_ERROR_RANK "rank N: message"; FALSE always. */
gboolean remote_rank_failed(guint rank, GBytes *payload, GError **error);
/* MS_REMOTE_ERROR_PEER "WHO sent TYPE WHEN"; FALSE always. */
gboolean remote_unexpected(const char *who, guint32 type, const char *when, GError **error);
/* Best effort: tells the peer the run is over and why (at most a second). */
void remote_send_fail(MsWire *w, const char *message);

G_END_DECLS
