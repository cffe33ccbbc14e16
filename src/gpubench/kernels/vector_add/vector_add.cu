// vector_add: c = a + b (the workshop book, §2.6.1, §4.11.1), shared by CuPy RawModule
// and CUDA Python.
//
// Memory-bound, so each thread moves 16 bytes per load (float4 / double2) when all three
// pointers are 16-byte aligned, in a grid-stride loop; the n % 4 (or n % 2) tail, and
// the whole array when a pointer is misaligned, take the scalar path. Every index is
// bounds-checked, so any n is correct. Compiles with NVRTC alone: its one #include
// (../pack.cuh) is inlined by gpubench.cuda_sources.source.
//
// Launch: 256 threads per block (the launch bounds below, which also cap registers so
// 8 blocks, a full SM, stay resident), grid = min(blocks needed, SMs x resident blocks
// per SM from the occupancy API): one wave covers the device and each thread loops
// over the rest.
//
// Unroll: vector_add_<f32|f64> (U = 1) moves one 16-byte pack per thread per grid-stride
// step (load, add, store, next: one load of each input in flight). The _u2 / _u4
// entries take U packs per step, at i, i + stride, ..., i + (U - 1) * stride (each load
// instruction stays coalesced across the warp), issuing all U loads of each input before
// any add or store; a remainder loop takes the last packs one at a time. Same arguments
// and launch geometry; the launchers pick U (DEFAULT_UNROLL, GPUBENCH_UNROLL).

#define GPB_THREADS 256
#define GPB_MIN_BLOCKS 8  // launch bounds: <= 32 registers, no spills (ptxas -v)
// The unrolled entries' minimum blocks per SM (below) are the most without spills
// (ptxas -v, sm_90): at 8 (32 registers) _f32_u2, _f32_u4 and _f64_u2 spill 16-20 bytes
// (the U loop's 64-bit addresses and the remainder loop's live values), at 6 (40
// registers) none does; _f64_u4 fits 32.

#include "../pack.cuh"

template <typename T, int U>
__device__ __forceinline__ void add_arrays(const T* __restrict__ a, const T* __restrict__ b,
                                           T* __restrict__ c, long long n) {
    const int W = 16 / sizeof(T);
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long head = 0;
    if (aligned16(a) && aligned16(b) && aligned16(c)) {
        const long long nvec = n / W;
        const Pack<T>* av = reinterpret_cast<const Pack<T>*>(a);
        const Pack<T>* bv = reinterpret_cast<const Pack<T>*>(b);
        Pack<T>* cv = reinterpret_cast<Pack<T>*>(c);
        long long i = tid;
        if (U > 1) {  // U packs per step: every load issued before any add or store
            for (; i + (U - 1) * stride < nvec; i += U * stride) {
                Pack<T> x[U], y[U];
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    x[u] = av[i + u * stride];
                    y[u] = bv[i + u * stride];
                }
#pragma unroll
                for (int u = 0; u < U; ++u) {
#pragma unroll
                    for (int k = 0; k < W; ++k) x[u].v[k] += y[u].v[k];
                }
#pragma unroll
                for (int u = 0; u < U; ++u) cv[i + u * stride] = x[u];
            }
        }
        for (; i < nvec; i += stride) {  // U = 1: the whole loop; else the remainder
            const Pack<T> x = av[i];
            const Pack<T> y = bv[i];
            Pack<T> z;
#pragma unroll
            for (int k = 0; k < W; ++k) z.v[k] = x.v[k] + y.v[k];
            cv[i] = z;
        }
        head = nvec * W;
    }
    for (long long i = head + tid; i < n; i += stride) c[i] = a[i] + b[i];
}

#define GPB_VECTOR_ADD(NAME, T, U, MINB)                                                   \
    extern "C" __global__ void __launch_bounds__(GPB_THREADS, MINB)                        \
    NAME(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, long long n) { \
        add_arrays<T, U>(a, b, c, n);                                                      \
    }

// NAME, T, U, minimum blocks per SM
GPB_VECTOR_ADD(vector_add_f32, float, 1, GPB_MIN_BLOCKS)
GPB_VECTOR_ADD(vector_add_f64, double, 1, GPB_MIN_BLOCKS)
GPB_VECTOR_ADD(vector_add_f32_u2, float, 2, 6)
GPB_VECTOR_ADD(vector_add_f64_u2, double, 2, 6)
GPB_VECTOR_ADD(vector_add_f32_u4, float, 4, 6)
GPB_VECTOR_ADD(vector_add_f64_u4, double, 4, GPB_MIN_BLOCKS)
