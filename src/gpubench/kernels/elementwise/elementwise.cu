// elementwise: hypot, sigmoid and rational, one fused pass each (the
// workshop book, §4.8.2, §5.5.1, §5.6).
//
// Shared by CuPy RawModule and CUDA Python. Each input is read once and the output
// written once, 16 bytes per access (float4 / double2) when every pointer is 16-byte
// aligned, in a grid-stride loop; the tail (and misaligned pointers) take the scalar
// path, so any n is correct. No fast math: sqrtf/expf are the IEEE-accurate versions
// (NVRTC defaults -prec-sqrt=true, -prec-div=true), so float32 stays within the spec's
// 2e-6. Compiles with NVRTC alone: its one #include
// (../pack.cuh) is inlined by gpubench.cuda_sources.source.
//
// Launch: 256 threads per block, grid = min(blocks needed, SMs x resident blocks per SM
// from the occupancy API). The launch bounds' minimum blocks per SM (6 for float, 4 for
// double) is the most that compiles without register spills (ptxas -v, sm_90): the
// double division / sqrt / exp paths need the registers.
//
// Unroll: the plain entries (U = 1) move one 16-byte pack of each input per thread per
// grid-stride step (load, compute, store, next). The _u2 / _u4 entries take U packs per
// step, at i, i + stride, ..., i + (U - 1) * stride (each load instruction stays
// coalesced across the warp), issuing all U loads before any compute or store; a
// remainder loop takes the last packs one at a time. Same arguments and geometry; the
// launchers pick U (DEFAULT_UNROLL, GPUBENCH_UNROLL). Their minimum blocks per SM are
// again the most without spills (ptxas -v, sm_90), listed with each entry below.

#define GPB_THREADS 256

#include "../pack.cuh"

// Overloads, so each formula is written once for float and double.
__device__ __forceinline__ float gpb_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double gpb_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float gpb_exp(float x) { return expf(x); }
__device__ __forceinline__ double gpb_exp(double x) { return exp(x); }

struct Hypot {
    template <typename T>
    __device__ __forceinline__ T operator()(T a, T b) const { return gpb_sqrt(a * a + b * b); }
};

struct Rational {
    template <typename T>
    __device__ __forceinline__ T operator()(T x, T y) const {
        return (x * T(2) + y * T(3)) / (x + y + T(1));
    }
};

struct Sigmoid {
    template <typename T>
    __device__ __forceinline__ T operator()(T a) const { return T(1) / (T(1) + gpb_exp(-a)); }
};

template <typename T, int U, typename F>
__device__ __forceinline__ void map1(const T* __restrict__ a, T* __restrict__ out,
                                     long long n, F f) {
    const int W = 16 / sizeof(T);
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long head = 0;
    if (aligned16(a) && aligned16(out)) {
        const long long nvec = n / W;
        const Pack<T>* av = reinterpret_cast<const Pack<T>*>(a);
        Pack<T>* ov = reinterpret_cast<Pack<T>*>(out);
        long long i = tid;
        if (U > 1) {  // U packs per step: every load issued before any compute or store
            for (; i + (U - 1) * stride < nvec; i += U * stride) {
                Pack<T> x[U];
#pragma unroll
                for (int u = 0; u < U; ++u) x[u] = av[i + u * stride];
#pragma unroll
                for (int u = 0; u < U; ++u) {
#pragma unroll
                    for (int k = 0; k < W; ++k) x[u].v[k] = f(x[u].v[k]);
                }
#pragma unroll
                for (int u = 0; u < U; ++u) ov[i + u * stride] = x[u];
            }
        }
        for (; i < nvec; i += stride) {  // U = 1: the whole loop; else the remainder
            const Pack<T> x = av[i];
            Pack<T> z;
#pragma unroll
            for (int k = 0; k < W; ++k) z.v[k] = f(x.v[k]);
            ov[i] = z;
        }
        head = nvec * W;
    }
    for (long long i = head + tid; i < n; i += stride) out[i] = f(a[i]);
}

#define GPB_BINARY(NAME, OP, T, U, MINB)                                                   \
    extern "C" __global__ void __launch_bounds__(GPB_THREADS, MINB)                        \
    NAME(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,            \
         long long n) {                                                                    \
        map2<T, U>(a, b, out, n, OP());                                                    \
    }

#define GPB_UNARY(NAME, OP, T, U, MINB)                                                    \
    extern "C" __global__ void __launch_bounds__(GPB_THREADS, MINB)                        \
    NAME(const T* __restrict__ a, T* __restrict__ out, long long n) {                      \
        map1<T, U>(a, out, n, OP());                                                       \
    }

// NAME, functor, T, U, minimum blocks per SM
// (a, b, out, n): out = sqrt(a*a + b*b)
GPB_BINARY(elementwise_hypot_f32, Hypot, float, 1, 6)
GPB_BINARY(elementwise_hypot_f64, Hypot, double, 1, 4)
GPB_BINARY(elementwise_hypot_f32_u2, Hypot, float, 2, 6)
GPB_BINARY(elementwise_hypot_f64_u2, Hypot, double, 2, 5)
GPB_BINARY(elementwise_hypot_f32_u4, Hypot, float, 4, 5)
GPB_BINARY(elementwise_hypot_f64_u4, Hypot, double, 4, 4)
// (a, out, n): out = 1 / (1 + exp(-a))
GPB_UNARY(elementwise_sigmoid_f32, Sigmoid, float, 1, 8)
GPB_UNARY(elementwise_sigmoid_f64, Sigmoid, double, 1, 4)
GPB_UNARY(elementwise_sigmoid_f32_u2, Sigmoid, float, 2, 8)
GPB_UNARY(elementwise_sigmoid_f64_u2, Sigmoid, double, 2, 5)
GPB_UNARY(elementwise_sigmoid_f32_u4, Sigmoid, float, 4, 6)
GPB_UNARY(elementwise_sigmoid_f64_u4, Sigmoid, double, 4, 4)
// (a, b, out, n): out = (a*2 + b*3) / (a + b + 1)
GPB_BINARY(elementwise_rational_f32, Rational, float, 1, 6)
GPB_BINARY(elementwise_rational_f64, Rational, double, 1, 4)
GPB_BINARY(elementwise_rational_f32_u2, Rational, float, 2, 6)
GPB_BINARY(elementwise_rational_f64_u2, Rational, double, 2, 4)
GPB_BINARY(elementwise_rational_f32_u4, Rational, float, 4, 4)
GPB_BINARY(elementwise_rational_f64_u4, Rational, double, 4, 3)
