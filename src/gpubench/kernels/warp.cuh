// The warp sum of the reducing kernels' .cu files (reduction, monte_carlo_pi): v summed
// over the 32 lanes, valid in lane 0. gpubench.cuda_sources.source puts this file in
// place of their #include "../warp.cuh", so NVRTC compiles one source string.
template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}
