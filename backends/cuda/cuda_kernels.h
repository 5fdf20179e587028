/* cuda_kernels: the few kernels the cuda backend launches besides cuBLAS and NCCL: filling
 * buffers with small pseudo-random values, an elementwise activation over 16-bit elements (bf16
 * or fp16), and an empty kernel (the launch overhead alone). Each returns the launch's
 * cudaError_t as an int so that C code needs no CUDA header to call it. */
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fills n 16-bit elements (bf16 when bf16 != 0, else fp16) with values in [-0.05, 0.05) drawn
 * from (seed, index), on stream (a cudaStream_t). */
int ms_cuda_fill(void *dst, size_t n, unsigned seed, int bf16, void *stream);
/* out[i] = silu(in[i]) = in[i] / (1 + exp(-in[i])) over n 16-bit elements: reads and writes 2n
 * elements in all, the memory traffic of an expert's activation. */
int ms_cuda_silu(const void *in, void *out, size_t n, int bf16, void *stream);
/* out[i] = silu(in[i]) * in[n + i] over n outputs: the gated (SwiGLU) activation, reading 2n
 * elements and writing n. */
int ms_cuda_swiglu(const void *in, void *out, size_t n, int bf16, void *stream);
/* One empty kernel. */
int ms_cuda_empty(void *stream);

#ifdef __cplusplus
}
#endif
