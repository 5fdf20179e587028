/* cuda_private: what the cuda backend's files share (cuda_backend.c, cuda_bench.c): error
 * checking of CUDA, cuBLAS and NCCL calls, device selection, communicators polled against a
 * deadline (monotonic microseconds), and device waits that cannot hang. Not for other modules. */
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include "cuda_backend.h"
#include "cuda_plan.h"

G_BEGIN_DECLS

G_STATIC_ASSERT(sizeof(ncclUniqueId) == MS_CUDA_ID_BYTES);
/* The types ms_cuda_plan_types chooses are these headers' enumerators. */
G_STATIC_ASSERT((int)MS_CUDA_R_32F == (int)CUDA_R_32F && (int)MS_CUDA_R_16F == (int)CUDA_R_16F &&
                (int)MS_CUDA_R_16BF == (int)CUDA_R_16BF);
G_STATIC_ASSERT((int)MS_CUBLAS_COMPUTE_32F == (int)CUBLAS_COMPUTE_32F &&
                (int)MS_CUBLAS_COMPUTE_TF32 == (int)CUBLAS_COMPUTE_32F_FAST_TF32);
G_STATIC_ASSERT((int)MS_NCCL_FLOAT16 == (int)ncclFloat16 &&
                (int)MS_NCCL_FLOAT32 == (int)ncclFloat32 &&
                (int)MS_NCCL_BFLOAT16 == (int)ncclBfloat16);

/* FALSE with MS_CUDA_ERROR_RUNTIME / _CUBLAS / _NCCL "WHAT: reason" unless the call succeeded. */
gboolean cuda_ok(cudaError_t e, const char *what, GError **error);
gboolean cublas_ok(cublasStatus_t st, const char *what, GError **error);
gboolean nccl_ok(ncclResult_t r, ncclComm_t comm, const char *what, GError **error);
/* Polls a non-blocking communicator until its last call completed on the host, or the deadline. */
gboolean nccl_settle(ncclComm_t comm, gint64 deadline, const char *what, GError **error);
/* A non-blocking communicator of place's world from unique id (NCCL_UNIQUE_ID_BYTES). */
gboolean nccl_init(ncclComm_t *comm, const MsExecPlace *place, const guint8 *id, gint64 deadline,
                   GError **error);
void nccl_drop(ncclComm_t comm);

/* Selects GPU place->local_rank; writes its compute capability and memory to the out values. */
gboolean cuda_select(const MsExecPlace *place, int *sm, guint64 *memory, GError **error);
/* Waits for event without blocking in the driver: polls until done or the deadline. */
gboolean cuda_event_wait(cudaEvent_t ev, gint64 deadline, const char *what, GError **error);

/* The bench hook (cuda_bench.c). */
GBytes *cuda_bench_run(GBytes *spec, const MsExecOptions *opts, const MsExecPlace *place,
                       GError **error);

G_END_DECLS
