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
// and launch geometry; the launchers pick U (DEFAULT_UNROLL, GPUBENCH_UNROLL). The loop
// is ../pack.cuh's map2 with f = +, the one elementwise's binary variants run.

#define GPB_THREADS 256
#define GPB_MIN_BLOCKS 8  // launch bounds: <= 32 registers, no spills (ptxas -v)
// The unrolled entries' minimum blocks per SM (below) are the most without spills
// (ptxas -v, sm_90): at 8 (32 registers) _f32_u2, _f32_u4 and _f64_u2 spill 16-20 bytes
// (the U loop's 64-bit addresses and the remainder loop's live values), at 6 (40
// registers) none does; _f64_u4 fits 32.

#include "../pack.cuh"

struct GpbPlus {
    template <typename T>
    __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};

#define GPB_VECTOR_ADD(NAME, T, U, MINB)                                                   \
    extern "C" __global__ void __launch_bounds__(GPB_THREADS, MINB)                        \
    NAME(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, long long n) { \
        map2<T, U>(a, b, c, n, GpbPlus());                                                      \
    }

// NAME, T, U, minimum blocks per SM
GPB_VECTOR_ADD(vector_add_f32, float, 1, GPB_MIN_BLOCKS)
GPB_VECTOR_ADD(vector_add_f64, double, 1, GPB_MIN_BLOCKS)
GPB_VECTOR_ADD(vector_add_f32_u2, float, 2, 6)
GPB_VECTOR_ADD(vector_add_f64_u2, double, 2, 6)
GPB_VECTOR_ADD(vector_add_f32_u4, float, 4, 6)
GPB_VECTOR_ADD(vector_add_f64_u4, double, 4, GPB_MIN_BLOCKS)
