// monte_carlo_pi: count points of the unit square inside the quarter circle (the
// workshop book, §4.11.2).
//
// Shared by CuPy RawModule and CUDA Python. The generator is Philox4x32-10 (Salmon et
// al., SC'11; the Random123 / cuRAND algorithm), counter-based: block j of four 32-bit
// words is philox(counter = (j, call), key = seed). No per-thread state is created or
// seeded, so there is no `seed = idx` stream overlap (the workshop book's mistake); streams of
// different samples, threads and calls never share a counter, and the counts depend
// only on (seed, call, n), not on the launch geometry. The host passes a new `call`
// on every call, so every call draws fresh points.
//
//   monte_carlo_pi_<f32|f64>(seed, call, n, hits): grid-stride over Philox blocks; f32
//     takes 2 samples per block (24-bit uniforms k * 2^-24 from the top bits of each
//     word), f64 1 sample (53-bit uniforms from two words each); x*x + y*y <= 1 in the
//     dtype. Each thread counts many samples, the block sums its counts (warp shuffles)
//     and thread 0 adds them to *hits with one atomicAdd.
//   monte_carlo_pi_finalize(hits, n, estimate): one thread: *estimate = 4 * hits / n
//     (double), then *hits = 0, ready for the next call (the host zeroes it once).
//
// Compiles with NVRTC alone (no curand_kernel.h): its one #include (../warp.cuh) is
// inlined by gpubench.cuda_sources.source.
// Launch: 256 threads, grid = min(blocks needed, SMs x resident blocks per SM from the
// occupancy API; the launch bounds guarantee at least 4); finalize: 1 block, 1 thread.

#define GPB_THREADS 256
#define GPB_MIN_BLOCKS 4

// BEGIN PHILOX (plain C++ between these markers; the tests compile it on the host too)
struct PhiloxBlock {
    unsigned int v[4];
};

__device__ __forceinline__ unsigned int philox_mulhilo(unsigned int a, unsigned int b,
                                                       unsigned int* hi) {
    const unsigned long long p = (unsigned long long)a * (unsigned long long)b;
    *hi = (unsigned int)(p >> 32);
    return (unsigned int)p;
}

// Philox4x32 with 10 rounds: counter (c0..c3), key (k0, k1) -> four random words.
__device__ __forceinline__ PhiloxBlock philox4x32_10(PhiloxBlock c, unsigned int k0,
                                                    unsigned int k1) {
#pragma unroll
    for (int round = 0; round < 10; ++round) {
        if (round > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        unsigned int hi0;
        unsigned int hi1;
        const unsigned int lo0 = philox_mulhilo(0xD2511F53u, c.v[0], &hi0);
        const unsigned int lo1 = philox_mulhilo(0xCD9E8D57u, c.v[2], &hi1);
        PhiloxBlock next;
        next.v[0] = hi1 ^ c.v[1] ^ k0;
        next.v[1] = lo1;
        next.v[2] = hi0 ^ c.v[3] ^ k1;
        next.v[3] = lo0;
        c = next;
    }
    return c;
}

// The Philox block j of a call: counter (j lo, j hi, call lo, call hi), key (seed lo, hi).
__device__ __forceinline__ PhiloxBlock philox_block(unsigned long long seed,
                                                   unsigned long long call,
                                                   unsigned long long j) {
    PhiloxBlock c;
    c.v[0] = (unsigned int)j;
    c.v[1] = (unsigned int)(j >> 32);
    c.v[2] = (unsigned int)call;
    c.v[3] = (unsigned int)(call >> 32);
    return philox4x32_10(c, (unsigned int)seed, (unsigned int)(seed >> 32));
}
// END PHILOX

__device__ __forceinline__ float unit_f32(unsigned int w) {
    return (float)(w >> 8) * 5.9604644775390625e-08f;  // k * 2^-24, k < 2^24: exact
}

__device__ __forceinline__ double unit_f64(unsigned int hi, unsigned int lo) {
    const unsigned long long bits = ((unsigned long long)hi << 32) | lo;
    return (double)(bits >> 11) * 1.1102230246251565e-16;  // k * 2^-53, k < 2^53: exact
}

#include "../warp.cuh"

// Adds the block's count to *hits (one atomic per block).
__device__ __forceinline__ void block_add(unsigned long long count, unsigned long long* hits) {
    __shared__ unsigned long long scratch[32];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    count = warp_sum(count);
    if (lane == 0) scratch[warp] = count;
    __syncthreads();
    const int nwarps = (blockDim.x + 31) >> 5;
    if (warp == 0) {
        count = (lane < nwarps) ? scratch[lane] : 0ull;
        count = warp_sum(count);
        if (lane == 0 && count != 0ull) atomicAdd(hits, count);
    }
}

extern "C" __global__ void __launch_bounds__(GPB_THREADS, GPB_MIN_BLOCKS)
monte_carlo_pi_f32(unsigned long long seed, unsigned long long call, long long n,
                   unsigned long long* __restrict__ hits) {
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long nblocks = (n + 1) / 2;  // two samples per Philox block
    unsigned long long count = 0;
    for (long long j = tid; j < nblocks; j += stride) {
        const PhiloxBlock r = philox_block(seed, call, (unsigned long long)j);
        const float x0 = unit_f32(r.v[0]);
        const float y0 = unit_f32(r.v[1]);
        count += (x0 * x0 + y0 * y0 <= 1.0f) ? 1ull : 0ull;
        if (2 * j + 1 < n) {
            const float x1 = unit_f32(r.v[2]);
            const float y1 = unit_f32(r.v[3]);
            count += (x1 * x1 + y1 * y1 <= 1.0f) ? 1ull : 0ull;
        }
    }
    block_add(count, hits);
}

extern "C" __global__ void __launch_bounds__(GPB_THREADS, GPB_MIN_BLOCKS)
monte_carlo_pi_f64(unsigned long long seed, unsigned long long call, long long n,
                   unsigned long long* __restrict__ hits) {
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    unsigned long long count = 0;
    for (long long j = tid; j < n; j += stride) {  // one sample per Philox block
        const PhiloxBlock r = philox_block(seed, call, (unsigned long long)j);
        const double x = unit_f64(r.v[0], r.v[1]);
        const double y = unit_f64(r.v[2], r.v[3]);
        count += (x * x + y * y <= 1.0) ? 1ull : 0ull;
    }
    block_add(count, hits);
}

extern "C" __global__ void monte_carlo_pi_finalize(unsigned long long* __restrict__ hits,
                                                   long long n, double* __restrict__ estimate) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        estimate[0] = 4.0 * (double)hits[0] / (double)n;
        hits[0] = 0ull;
    }
}
