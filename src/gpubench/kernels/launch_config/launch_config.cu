// launch_config: vector_add's loop and a multiply-add chain, one entry point per block
// size (the workshop book, §2.8, §4.11.1), shared by CuPy RawModule and CUDA Python.
//
// add: c = a + b, vector_add.cu's code (../pack.cuh's map2 with f = +, U = 1).
// poly: y = a, then 64 times y = y * a + b, c = y: the same loads and stores with 128
// flops per element in a chain of dependent multiply-adds.
//
// Entry points launch_config_<add|poly>_<threads>_<f32|f64>: launch bounds (threads, 2048 /
// threads), so every block size gets the register cap vector_add's 256-thread entry
// has (65536 registers / 2048 threads = 32) and the rows of one work differ in the
// block size alone. Launch: grid = min(blocks needed, SMs x resident blocks per SM
// from the occupancy API at that block size), grid-stride, as vector_add.

#include "../pack.cuh"

#define GPB_POLY_STEPS 64

struct GpbPlus {
    template <typename T>
    __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};

struct GpbPoly {
    template <typename T>
    __device__ __forceinline__ T operator()(T a, T b) const {
        T y = a;
#pragma unroll
        for (int k = 0; k < GPB_POLY_STEPS; ++k) y = y * a + b;
        return y;
    }
};

#define GPB_LAUNCH(WORK, F, SUF, T, B)                                                     \
    extern "C" __global__ void __launch_bounds__(B, 2048 / B)                              \
    launch_config_##WORK##_##B##_##SUF(const T* __restrict__ a, const T* __restrict__ b,    \
                                    T* __restrict__ c, long long n) {                      \
        map2<T, 1>(a, b, c, n, F());                                                       \
    }

#define GPB_BLOCKS(WORK, F, SUF, T)                                                        \
    GPB_LAUNCH(WORK, F, SUF, T, 64)                                                        \
    GPB_LAUNCH(WORK, F, SUF, T, 128)                                                       \
    GPB_LAUNCH(WORK, F, SUF, T, 256)                                                       \
    GPB_LAUNCH(WORK, F, SUF, T, 512)                                                       \
    GPB_LAUNCH(WORK, F, SUF, T, 1024)

GPB_BLOCKS(add, GpbPlus, f32, float)
GPB_BLOCKS(add, GpbPlus, f64, double)
GPB_BLOCKS(poly, GpbPoly, f32, float)
GPB_BLOCKS(poly, GpbPoly, f64, double)
