/* cuda_kernels: fill, SiLU, SwiGLU and empty kernels over fp32, fp16 or bf16 elements; grid-stride
 * loops of 256 threads, at most 4096 blocks. Compiled by nvcc for every SM of the gpu_archs
 * option. */
#include "cuda_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace
{

constexpr unsigned kThreads = 256;
constexpr size_t kMaxBlocks = 4096;

unsigned
blocks_for(size_t n)
{
    size_t b = (n + kThreads - 1) / kThreads;
    return (unsigned)(b < 1 ? 1 : (b > kMaxBlocks ? kMaxBlocks : b));
}

__device__ float
uniform(unsigned seed, size_t i)
{
    unsigned long long x = (unsigned long long)i * 0x9E3779B97F4A7C15ull + seed;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return (float)(x & 0xffffu) / 65536.0f;
}

template <typename T> __device__ T from_float(float v);
template <>
__device__ float
from_float(float v)
{
    return v;
}
template <>
__device__ __nv_bfloat16
from_float(float v)
{
    return __float2bfloat16(v);
}
template <>
__device__ __half
from_float(float v)
{
    return __float2half(v);
}

template <typename T> __device__ float to_float(T v);
template <>
__device__ float
to_float(float v)
{
    return v;
}
template <>
__device__ float
to_float(__nv_bfloat16 v)
{
    return __bfloat162float(v);
}
template <>
__device__ float
to_float(__half v)
{
    return __half2float(v);
}

template <typename T>
__global__ void
fill_kernel(T *dst, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        dst[i] = from_float<T>((uniform(seed, i) - 0.5f) * 0.1f);
    }
}

template <typename T>
__global__ void
silu_kernel(const T *in, T *out, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float x = to_float<T>(in[i]);
        out[i] = from_float<T>(x / (1.0f + __expf(-x)));
    }
}

template <typename T>
__global__ void
swiglu_kernel(const T *in, T *out, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float g = to_float<T>(in[i]), u = to_float<T>(in[n + i]);
        out[i] = from_float<T>(g / (1.0f + __expf(-g)) * u);
    }
}

__global__ void
empty_kernel()
{
}

/* Launches kernel<T> for the element type elem over n elements. */
template <template <typename> class K, typename... Args>
int
launch(int elem, size_t n, cudaStream_t s, Args... args)
{
    if (n == 0) {
        return cudaSuccess;
    }
    switch (elem) {
    case MS_CUDA_ELEM_FP32:
        K<float>::run(blocks_for(n), s, n, args...);
        break;
    case MS_CUDA_ELEM_FP16:
        K<__half>::run(blocks_for(n), s, n, args...);
        break;
    default:
        K<__nv_bfloat16>::run(blocks_for(n), s, n, args...);
        break;
    }
    return (int)cudaGetLastError();
}

template <typename T> struct Fill {
    static void run(unsigned blocks, cudaStream_t s, size_t n, void *dst, unsigned seed)
    {
        fill_kernel<<<blocks, kThreads, 0, s>>>((T *)dst, n, seed);
    }
};

template <typename T> struct Silu {
    static void run(unsigned blocks, cudaStream_t s, size_t n, const void *in, void *out)
    {
        silu_kernel<<<blocks, kThreads, 0, s>>>((const T *)in, (T *)out, n);
    }
};

template <typename T> struct Swiglu {
    static void run(unsigned blocks, cudaStream_t s, size_t n, const void *in, void *out)
    {
        swiglu_kernel<<<blocks, kThreads, 0, s>>>((const T *)in, (T *)out, n);
    }
};

} // namespace

extern "C" int
ms_cuda_fill(void *dst, size_t n, unsigned seed, int elem, void *stream)
{
    return launch<Fill>(elem, n, (cudaStream_t)stream, dst, seed);
}

extern "C" int
ms_cuda_silu(const void *in, void *out, size_t n, int elem, void *stream)
{
    return launch<Silu>(elem, n, (cudaStream_t)stream, in, out);
}

extern "C" int
ms_cuda_swiglu(const void *in, void *out, size_t n, int elem, void *stream)
{
    return launch<Swiglu>(elem, n, (cudaStream_t)stream, in, out);
}

extern "C" int
ms_cuda_empty(void *stream)
{
    empty_kernel<<<1, 1, 0, (cudaStream_t)stream>>>();
    return (int)cudaGetLastError();
}
