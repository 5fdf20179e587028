/* cuda_kernels: the few kernels the cuda backend launches besides cuBLAS and NCCL: filling
 * buffers with small pseudo-random values, an elementwise activation over fp32, fp16 or bf16
 * elements, and an empty kernel (the launch overhead alone). Each returns the launch's
 * cudaError_t as an int so that C code needs no CUDA header to call it. */
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The element type of a kernel's buffers (the elem argument). */
typedef enum {
    MS_CUDA_ELEM_FP32,
    MS_CUDA_ELEM_FP16,
    MS_CUDA_ELEM_BF16,
} MsCudaElem;

/* Fills n elements of type elem (MsCudaElem) with values in [-0.05, 0.05) drawn from (seed,
 * index), on stream (a cudaStream_t). */
int ms_cuda_fill(void *dst, size_t n, unsigned seed, int elem, void *stream);
/* out[i] = silu(in[i]) = in[i] / (1 + exp(-in[i])) over n elements: reads and writes 2n elements
 * in all, the memory traffic of an expert's activation. */
int ms_cuda_silu(const void *in, void *out, size_t n, int elem, void *stream);
/* out[i] = silu(in[i]) * in[n + i] over n outputs: the gated (SwiGLU) activation, reading 2n
 * elements and writing n. */
int ms_cuda_swiglu(const void *in, void *out, size_t n, int elem, void *stream);
/* One empty kernel. */
int ms_cuda_empty(void *stream);

#ifdef __cplusplus
}
#endif
