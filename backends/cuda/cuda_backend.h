/* cuda_backend: the per-rank executor on one GPU. Compute ops run as cuBLAS GEMMs of their shapes
 * (at the schedule's dtype: fp32, tf32, fp16 or bf16), SiLU kernels over their bytes or empty
 * launches (cuda_plan.h); all-to-alls as grouped ncclSend/ncclRecv with the matrix's byte counts
 * (the part to itself a device copy); allreduces as ncclAllReduce, on a communicator of their
 * ranks. Each schedule stream is a CUDA stream with a priority; each op is timed by CUDA events, in
 * picoseconds from a base event recorded on every GPU right after one common allreduce. Runs
 * under executor_remote.h, one process per GPU. Built as the module moesim-cuda, which moesim
 * loads at run time (backend_module.h); what moesim knows of it without loading it is
 * cuda_options.h. */
#pragma once

#include <glib.h>

#include "backends/cuda/cuda_options.h"
#include "backends/executor.h"

G_BEGIN_DECLS

/* The backend's hooks (executor.h), exported by the module as its MsBackendModule. open checks the
 * options record (ms_cuda_options_resolve); session makes one NCCL unique id per
 * communicator and, for a local launch, checks there are as many GPUs as ranks; open selects GPU
 * LOCAL_RANK, plans and allocates every buffer (refusing what does not fit), creates the streams,
 * cuBLAS handles and NCCL communicators (non-blocking, polled against the timeout), warms up every
 * connection and records the base event; finish reports the stats "gemm_calls", "derived_gemms",
 * "elementwise_kernels", "empty_kernels", "nccl_calls", "device_sm" and "device_memory_bytes". */
extern const MsExecBackend ms_cuda_backend;

/* CUDA devices visible to this process (the devices hook); 0 with MS_CUDA_ERROR_DEVICE (saying
 * why) when there is none. */
guint ms_cuda_device_count(GError **error);

G_END_DECLS
