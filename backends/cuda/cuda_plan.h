/* cuda_plan: what the cuda backend runs for a schedule, decided in plain C (no CUDA) so that it is
 * built and tested on every machine: the kernels of each compute op (cuBLAS GEMMs of its shape,
 * an elementwise kernel over its bytes, or an empty launch), the buffers each stream of a rank
 * needs (bytes), the byte offsets of all-to-all rows and columns, the CUDA priority of each
 * stream, the communicators of allreduces over a subset of ranks, the session blob of NCCL
 * unique ids, and the element and math types a run uses for the schedule's datatype. Refuses
 * shapes, sizes and datatypes cuBLAS or the buffers cannot hold before any allocation. */
#pragma once

#include <glib.h>

#include "cuda_kernels.h"
#include "sim/base/dtype.h"
#include "sim/schedule/schedule.h"

G_BEGIN_DECLS

#define MS_CUDA_PLAN_ERROR (ms_cuda_plan_error_quark())
GQuark ms_cuda_plan_error_quark(void);
typedef enum {
    MS_CUDA_PLAN_ERROR_SHAPE,   /* a GEMM dimension or buffer beyond what can be run */
    MS_CUDA_PLAN_ERROR_GROUPS,  /* more distinct allreduce rank sets than communicators allowed */
    MS_CUDA_PLAN_ERROR_SESSION, /* a session blob that is not a list of NCCL unique ids */
    MS_CUDA_PLAN_ERROR_DTYPE,   /* a datatype the backend does not run, or an unknown name */
} MsCudaPlanError;

/* The numeric values of the CUDA, cuBLAS and NCCL enumerators the backend uses, so that the
 * choice of types is plain C and tested without the toolkit; cuda_private.h checks each against
 * its header at compile time. */
enum {
    MS_CUDA_R_32F = 0,           /* cudaDataType CUDA_R_32F */
    MS_CUDA_R_16F = 2,           /* CUDA_R_16F */
    MS_CUDA_R_16BF = 14,         /* CUDA_R_16BF */
    MS_CUBLAS_COMPUTE_32F = 68,  /* cublasComputeType_t CUBLAS_COMPUTE_32F */
    MS_CUBLAS_COMPUTE_TF32 = 77, /* CUBLAS_COMPUTE_32F_FAST_TF32 */
    MS_NCCL_FLOAT16 = 6,         /* ncclDataType_t ncclFloat16 */
    MS_NCCL_FLOAT32 = 7,         /* ncclFloat32 */
    MS_NCCL_BFLOAT16 = 9,        /* ncclBfloat16 */
};

/* What a run computes and moves in: the datatype, its bytes per element (every buffer), the
 * cuBLAS storage type of A, B and C and the compute type, the NCCL type of allreduces, the element
 * type of the backend's kernels. */
typedef struct {
    MsDtype dtype;
    guint elem;
    int cuda_type, compute_type, nccl_type;
    MsCudaElem kernel;
} MsCudaTypes;

/* The types of a run of s: override when it is a datatype (MS_DTYPE_N: none), else the dtype the
 * schedule's metadata names (absent: bf16, the backend's element type before schedules carried
 * one). fp32 runs CUDA_R_32F with CUBLAS_COMPUTE_32F, tf32 CUDA_R_32F with
 * CUBLAS_COMPUTE_32F_FAST_TF32, fp16 and bf16 16-bit storage with fp32 accumulation. FALSE with
 * _DTYPE for fp8 (see docs/backends.md) and for a name that is no datatype. */
gboolean ms_cuda_plan_types(const MsSchedule *s, MsDtype override, MsCudaTypes *out,
                            GError **error);

/* Largest GEMM dimension (cuBLAS takes int) and largest buffer of one stream. */
#define MS_CUDA_MAX_DIM G_MAXINT32
#define MS_CUDA_MAX_BUFFER (G_GUINT64_CONSTANT(1) << 40)
/* GEMM calls of one op at most (its flops over its shape's; see MsCudaWork). */
#define MS_CUDA_MAX_CALLS 4096u
/* Communicators for allreduces over a proper subset of ranks, at most, per run. */
#define MS_CUDA_MAX_GROUPS 256u
/* Bytes of one NCCL unique id (NCCL_UNIQUE_ID_BYTES, checked where nccl.h is included). */
#define MS_CUDA_ID_BYTES 128u

typedef enum {
    MS_CUDA_WORK_GEMM,        /* calls x sets GEMMs of (m x k) . (k x n) */
    MS_CUDA_WORK_ELEMENTWISE, /* one kernel reading and writing elements values */
    MS_CUDA_WORK_EMPTY,       /* an empty kernel: the launch alone */
} MsCudaWorkKind;

/* The kernels of one compute op. An op with a shape runs it: gemm_count matrices of
 * (m x k) . (k x n); an expert op's m is the tokens of one expert (the plan's convention), and
 * it runs one such set per local expert that has tokens: its experts, but no more than its
 * tokens over m (rounded up), as one strided-batched call per matrix. When the op's flops are
 * more than its shape's, it makes as many calls as those flops need (rounded), cycling over the
 * matrices: a backward op carries its forward shape and backward_factor times the flops (the
 * gradients of the inputs and of the weights), attention the score products beside its four
 * projections. More than MS_CUDA_MAX_CALLS calls is refused. An op with flops but no
 * shape runs one GEMM of the same flops with m = its tokens (or a cube when it has none), marked
 * derived. An elementwise op, or one without flops, streams its bytes (half read, half written);
 * without bytes either it is an empty launch. */
typedef struct {
    MsCudaWorkKind kind;
    guint32 m, n, k;  /* one GEMM */
    guint32 count;    /* matrices per set */
    guint32 calls;    /* GEMM calls; call c multiplies by matrix c % count */
    guint32 sets;     /* expert ops: experts with tokens; else 1 */
    gboolean derived; /* the shape was derived from the flops */
    guint64 elements; /* elementwise: elements read (and as many written) */
} MsCudaWork;

/* Plans op (a compute op) with elements of elem bytes (MsCudaTypes.elem). FALSE with
 * MS_CUDA_PLAN_ERROR_SHAPE naming the op when a dimension exceeds MS_CUDA_MAX_DIM or a buffer
 * MS_CUDA_MAX_BUFFER. */
gboolean ms_cuda_plan_work(const MsOpInfo *op, guint elem, MsCudaWork *out, GError **error);
/* Elements of the inputs A (sets x m x k), the weights B (count x sets x k x n) and the
 * outputs C (sets x m x n) of a GEMM work. */
void ms_cuda_work_elements(const MsCudaWork *w, guint64 *a, guint64 *b, guint64 *c);

/* What one stream of a rank needs, in bytes: GEMM operands and elementwise input/output for
 * compute streams, send and receive buffers (the largest collective of the rank on the stream)
 * for communication streams. */
typedef struct {
    guint64 a, b, c, in, out;
    guint64 send, recv;
} MsCudaNeeds;

/* Fills needs (one per schedule stream) for rank, with elements of elem bytes (collectives are
 * in the schedule's bytes). FALSE with the error of ms_cuda_plan_work, or _SHAPE when a stream
 * needs more than MS_CUDA_MAX_BUFFER. */
gboolean ms_cuda_plan_needs(const MsSchedule *s, guint rank, guint elem, MsCudaNeeds *needs,
                            GError **error);
guint64 ms_cuda_needs_total(const MsCudaNeeds *needs, guint n_streams);

/* Byte offsets of participant p's rows in its send buffer (send_off[q]: what goes to q) and of
 * what it receives in its receive buffer (recv_off[q]: what comes from q); n_ranks entries. */
void ms_cuda_a2a_offsets(const MsCollInfo *c, guint p, guint64 *send_off, guint64 *recv_off);

/* CUDA stream priority of a schedule stream, given the device's range (least >= greatest, lower
 * is more urgent): communication streams get the most urgent priorities in stream order (NCCL
 * kernels must not wait behind long GEMMs), compute streams the least. */
int ms_cuda_stream_priority(const MsSchedule *s, guint stream, int least, int greatest);

/* The distinct rank sets of allreduces over fewer than all ranks, per communication stream, in
 * the order every rank creates their communicators (by stream, then first appearance). */
typedef struct {
    guint stream;
    guint n_ranks;
    guint32 *ranks; /* ascending */
} MsCudaGroup;

/* A GPtrArray of MsCudaGroup (freed with it). FALSE with _GROUPS beyond MS_CUDA_MAX_GROUPS. */
GPtrArray *ms_cuda_plan_groups(const MsSchedule *s, GError **error);
/* The group of collective coll (an allreduce), or -1 when it spans every rank. */
gint ms_cuda_group_of(GPtrArray *groups, const MsSchedule *s, guint32 coll);

/* The ranks rank exchanges all-to-all bytes with on stream (any collective of it on that
 * stream, either direction, itself excluded), ascending: the connections to warm up. */
GArray *ms_cuda_plan_peers(const MsSchedule *s, guint rank, guint stream);

/* The session blob: "MSCUDA1\0", a u32 count, count unique ids. */
GBytes *ms_cuda_session_pack(const guint8 *ids, guint count);
/* Returns the ids (owned by session) and their count; FALSE with _SESSION when the blob is
 * malformed or holds fewer than need ids. */
gboolean ms_cuda_session_unpack(GBytes *session, guint need, const guint8 **ids, guint *count,
                                GError **error);

G_END_DECLS
