/* cpu_private: the cpu backend's state shared by its two files: the workers and hooks
 * (cpu_backend.c) and the collectives between rank buffers (cpu_transfer.c). Not for other
 * modules. Sizes are bytes; times picoseconds of the host's monotonic clock. */
#pragma once

#include <stdatomic.h>

#include "cpu_backend.h"
#include "sim/compute.h"

G_BEGIN_DECLS

/* A running collective's meeting point: a reusable barrier for its participants' threads, and the
 * bytes they copied (checked against the schedule when the last one leaves). */
typedef struct {
    GMutex lock;
    GCond cond;
    guint n, arrived, generation, users;
    guint64 copied;
} CpuMeeting;

/* Send and receive buffers of one rank on one communication stream: sized for the largest
 * collective that rank takes part in on that stream. */
typedef struct {
    guint8 *send, *recv;
    guint64 send_size, recv_size;
} CpuBuffers;

typedef struct CpuState CpuState;

typedef struct {
    CpuState *st;
    guint rank, stream;
    GThread *thread;
    GAsyncQueue *queue;      /* ops to run, as GUINT_TO_POINTER(op + 1); STOP ends the thread */
    guint32 *program;        /* compute streams: the rank's ops on it in (priority, id) order */
    guint program_len, next; /* next: index of the op program order expects next */
    atomic_int busy;         /* an op was launched and has not finished */
    guint32 current;
    double scratch[256]; /* busy work's operands */
} CpuWorker;

struct CpuState {
    const MsSchedule *s;
    MsExecOptions opts;
    MsCpuOptions cpu; /* the backend's record, defaults filled in */
    guint n_ranks, n_streams, n_workers;
    MsComputeModel **models; /* per rank */
    CpuBuffers *buffers;     /* rank * n_streams + stream */
    CpuWorker **workers;     /* rank * n_streams + stream; NULL where a stream holds no op */
    GAsyncQueue *done;       /* MsExecDone*, or &wake after a failure */
    atomic_int *runs;        /* per op: how often it started */
    atomic_int *finished;    /* per op: 1 once it finished */
    CpuMeeting **meetings;   /* per collective while it runs */
    GMutex meet_lock;
    atomic_int aborted;
    GMutex error_lock;
    GError *error; /* the first failure of a worker */
    atomic_uint_fast64_t transfer_bytes, checked_bytes, checked_elements;
};

/* Records the first failure (taking error), stops every worker and wakes the driver. */
void cpu_fail(CpuState *st, GError *error);
gboolean cpu_aborted(CpuState *st);

/* Sizes of every rank's buffers; FALSE with MS_CPU_BACKEND_ERROR_SETUP when the total exceeds
 * cpu.max_memory (nothing allocated) or an allocation fails. */
gboolean cpu_buffers_alloc(CpuState *st, GError **error);
void cpu_buffers_free(CpuState *st);

/* Runs participant op's part of its collective: fills its send buffer with a pattern that names
 * the collective, the source and the destination (all-to-all) or with small integers
 * (allreduce), meets the other participants, copies or reduces, meets again and verifies what it
 * received. FALSE with MS_CPU_BACKEND_ERROR_VIOLATION when the bytes are wrong, or when the run
 * was aborted (then with no error set). */
gboolean cpu_collective_run(CpuWorker *w, guint32 op, GError **error);

G_END_DECLS
