// reduction: sum(a*a), sum(a*b), sum(w*a)/sum(w) to one scalar (the workshop
// book, §4.8.3, §5.5.2).
//
// Shared by CuPy RawModule and CUDA Python. Two launches, no atomics, so the result is
// the same bits on every call (a run-to-run check never sees reduction-order noise):
//
//   1. reduction_<variant>_<f32|f64>(inputs..., double* partials, long long n)
//      grid-stride over the inputs with 16-byte loads when aligned (scalar tail), then a
//      block reduction (warp shuffles, one shared slot per warp); thread 0 writes the
//      block's sum to partials[blockIdx.x] (and, for weighted_mean, the block's weight
//      sum to partials[gridDim.x + blockIdx.x]). partials holds gridDim.x (x2) doubles.
//   2. reduction_finalize_<f32|f64>(partials, nparts, out) or
//      reduction_finalize_ratio_<f32|f64>(partials, nparts, out): ONE block sums the
//      nparts partials in double and writes out[0] (ratio: numerator / denominator).
//
// Accumulation: within a thread and a block, in the input type (float for float32, as
// cuBLAS sdot and CUB do, full rate on every GPU; each thread holds one accumulator per
// vector lane, ~n/(grid*256*4) terms each); across blocks, in double. The float32
// error is then ~1e-7, far inside the spec's max(1e-5, 2 sqrt(n) u).
// Compiles with NVRTC alone: its #includes (../pack.cuh,
// ../warp.cuh) are inlined by gpubench.cuda_sources.source.
//
// Launch: pass 1 with 256 threads, grid = min(blocks needed, SMs x resident blocks per
// SM from the occupancy API) (the host sizes partials for that grid); pass 2 with one
// block of 256 threads. Launch bounds: 8 blocks per SM (a full SM) for sumsq and dot,
// 6 for weighted_mean (its two accumulators spill at 8), per ptxas -v on sm_90.

#define GPB_THREADS 256

#include "../pack.cuh"

#include "../warp.cuh"

// Sum of v over the block, valid in thread 0. blockDim.x a multiple of 32, <= 1024.
// Ends with a barrier, so the caller may reuse `scratch` (32 slots) right away.
template <typename T>
__device__ __forceinline__ T block_sum(T v, T* scratch) {
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    const int nwarps = (blockDim.x + 31) >> 5;
    v = (threadIdx.x < nwarps) ? scratch[threadIdx.x] : T(0);
    __syncthreads();
    if (warp == 0) v = warp_sum(v);
    return v;
}

// MODE 0: sum a*a (b unused); 1: sum a*b; 2: sum b*a and sum b (b = weights).
template <typename T, int MODE>
__device__ __forceinline__ void partial_sums(const T* __restrict__ a, const T* __restrict__ b,
                                             double* __restrict__ partials, long long n) {
    const int W = 16 / sizeof(T);
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    T acc[W];
    T wacc[W];
#pragma unroll
    for (int k = 0; k < W; ++k) {
        acc[k] = T(0);
        wacc[k] = T(0);
    }
    long long head = 0;
    if (aligned16(a) && (MODE == 0 || aligned16(b))) {
        const long long nvec = n / W;
        const Pack<T>* av = reinterpret_cast<const Pack<T>*>(a);
        const Pack<T>* bv = reinterpret_cast<const Pack<T>*>(MODE == 0 ? a : b);
        for (long long i = tid; i < nvec; i += stride) {
            const Pack<T> x = av[i];
            if (MODE == 0) {
#pragma unroll
                for (int k = 0; k < W; ++k) acc[k] += x.v[k] * x.v[k];
            } else {
                const Pack<T> y = bv[i];
#pragma unroll
                for (int k = 0; k < W; ++k) {
                    acc[k] += y.v[k] * x.v[k];
                    if (MODE == 2) wacc[k] += y.v[k];
                }
            }
        }
        head = nvec * W;
    }
    for (long long i = head + tid; i < n; i += stride) {
        const T x = a[i];
        if (MODE == 0) {
            acc[0] += x * x;
        } else {
            const T y = b[i];
            acc[0] += y * x;
            if (MODE == 2) wacc[0] += y;
        }
    }
    T s = T(0);
    T sw = T(0);
#pragma unroll
    for (int k = 0; k < W; ++k) {
        s += acc[k];
        sw += wacc[k];
    }
    __shared__ T scratch[32];
    s = block_sum(s, scratch);
    if (MODE == 2) sw = block_sum(sw, scratch);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = (double)s;
        if (MODE == 2) partials[gridDim.x + blockIdx.x] = (double)sw;
    }
}

// One block: out[0] = sum(partials[0:nparts]) (RATIO: / sum(partials[nparts:2*nparts])).
template <typename T, bool RATIO>
__device__ __forceinline__ void finalize(const double* __restrict__ partials, long long nparts,
                                         T* __restrict__ out) {
    double s = 0.0;
    double d = 0.0;
    for (long long i = threadIdx.x; i < nparts; i += blockDim.x) {
        s += partials[i];
        if (RATIO) d += partials[nparts + i];
    }
    __shared__ double scratch[32];
    s = block_sum(s, scratch);
    if (RATIO) d = block_sum(d, scratch);
    if (threadIdx.x == 0) out[0] = (T)(RATIO ? s / d : s);
}

#define GPB_PASS1_UNARY(NAME, T, MODE, MINB)                                               \
    extern "C" __global__ void __launch_bounds__(GPB_THREADS, MINB)                        \
    NAME(const T* __restrict__ a, double* __restrict__ partials, long long n) {            \
        partial_sums<T, MODE>(a, a, partials, n);                                          \
    }

#define GPB_PASS1_BINARY(NAME, T, MODE, MINB)                                              \
    extern "C" __global__ void __launch_bounds__(GPB_THREADS, MINB)                        \
    NAME(const T* __restrict__ a, const T* __restrict__ b, double* __restrict__ partials,  \
         long long n) {                                                                    \
        partial_sums<T, MODE>(a, b, partials, n);                                          \
    }

#define GPB_FINALIZE(NAME, T, RATIO)                                                       \
    extern "C" __global__ void __launch_bounds__(GPB_THREADS)                              \
    NAME(const double* __restrict__ partials, long long nparts, T* __restrict__ out) {     \
        finalize<T, RATIO>(partials, nparts, out);                                         \
    }

// (a, partials, n): partials[block] = sum a*a
GPB_PASS1_UNARY(reduction_sumsq_f32, float, 0, 8)
GPB_PASS1_UNARY(reduction_sumsq_f64, double, 0, 8)
// (a, b, partials, n): partials[block] = sum a*b
GPB_PASS1_BINARY(reduction_dot_f32, float, 1, 8)
GPB_PASS1_BINARY(reduction_dot_f64, double, 1, 8)
// (a, w, partials, n): partials[block] = sum w*a, partials[grid + block] = sum w
GPB_PASS1_BINARY(reduction_weighted_mean_f32, float, 2, 6)
GPB_PASS1_BINARY(reduction_weighted_mean_f64, double, 2, 6)
// (partials, nparts, out): out[0] = sum partials
GPB_FINALIZE(reduction_finalize_f32, float, false)
GPB_FINALIZE(reduction_finalize_f64, double, false)
// (partials, nparts, out): out[0] = sum partials[:nparts] / sum partials[nparts:]
GPB_FINALIZE(reduction_finalize_ratio_f32, float, true)
GPB_FINALIZE(reduction_finalize_ratio_f64, double, true)
