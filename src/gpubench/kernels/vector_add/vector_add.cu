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

#define GPB_THREADS 256
#define GPB_MIN_BLOCKS 8  // launch bounds: <= 32 registers, no spills (ptxas -v)

#include "../pack.cuh"

template <typename T>
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
        for (long long i = tid; i < nvec; i += stride) {
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

extern "C" __global__ void __launch_bounds__(GPB_THREADS, GPB_MIN_BLOCKS)
vector_add_f32(const float* __restrict__ a, const float* __restrict__ b,
               float* __restrict__ c, long long n) {
    add_arrays<float>(a, b, c, n);
}

extern "C" __global__ void __launch_bounds__(GPB_THREADS, GPB_MIN_BLOCKS)
vector_add_f64(const double* __restrict__ a, const double* __restrict__ b,
               double* __restrict__ c, long long n) {
    add_arrays<double>(a, b, c, n);
}
