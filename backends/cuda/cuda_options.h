/* cuda_options: the cuda backend's registration, built into every moesim (it needs no CUDA
 * header): its options record, made from --dtype, the help and the note of its runs. Its hooks
 * live in the module moesim-cuda (cuda_backend.h, backend_module.h), which only commands that
 * execute on GPUs load. */
#pragma once

#include <glib.h>

#include "backends/registry.h"
#include "sim/base/dtype.h"

G_BEGIN_DECLS

/* The backend's error domain, defined here so that moesim and the module share it. */
#define MS_CUDA_ERROR (ms_cuda_error_quark())
GQuark ms_cuda_error_quark(void);
typedef enum {
    MS_CUDA_ERROR_DEVICE,  /* no CUDA device, or fewer than the ranks that need one */
    MS_CUDA_ERROR_RUNTIME, /* a CUDA runtime call failed */
    MS_CUDA_ERROR_CUBLAS,  /* a cuBLAS call failed */
    MS_CUDA_ERROR_NCCL,    /* an NCCL call failed, or a peer's failure reached this rank */
    MS_CUDA_ERROR_MEMORY,  /* the buffers the schedule needs do not fit the GPU */
    MS_CUDA_ERROR_TIMEOUT, /* communicator set-up or a device wait outlasted the run's timeout */
    MS_CUDA_ERROR_OPTIONS, /* an option (--dtype) or a field of the options record out of range */
} MsCudaError;

/* The datatype of GEMMs, activations and allreduces: the schedule's (its metadata's dtype, the
 * model's) unless --dtype overrides it. */
typedef enum {
    MS_CUDA_SCHEDULE, /* the default */
    MS_CUDA_FP32,
    MS_CUDA_TF32,
    MS_CUDA_FP16,
    MS_CUDA_BF16,
} MsCudaDtype;

/* The backend's own options (MsExecOptions.backend): a plain value record without pointers (it
 * travels to every rank as its bytes); zero fields take their defaults. */
typedef struct {
    MsCudaDtype dtype;
} MsCudaOptions;

/* Checks a record and fills out (record NULL: the defaults). FALSE with MS_CUDA_ERROR_OPTIONS
 * naming the field and its value. */
gboolean ms_cuda_options_resolve(const MsCudaOptions *record, MsCudaOptions *out, GError **error);
/* The datatype a resolved record overrides the schedule's with, or MS_DTYPE_N for none. */
MsDtype ms_cuda_options_dtype(const MsCudaOptions *o);

/* Its registration (registry.h): in a module, option --dtype, microbenchmarks. */
extern const MsBackendInfo ms_cuda_backend_info;

G_END_DECLS
