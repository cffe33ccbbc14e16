// launch_overhead: out = a + 1 on a tiny array (the workshop book, §1.8.3), shared by
// CuPy RawModule and CUDA Python. The work is negligible; what the rows measure is the
// cost of one launch from Python (argument packing, the driver's launch path) plus an
// almost empty kernel.
// One thread per element, bounds-checked, so any n is correct.

#define GPB_THREADS 256

template <typename T>
__device__ __forceinline__ void add_one(const T* __restrict__ a, T* __restrict__ out,
                                        long long n) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + T(1);
}

extern "C" __global__ void __launch_bounds__(GPB_THREADS)
launch_overhead_f32(const float* __restrict__ a, float* __restrict__ out, long long n) {
    add_one<float>(a, out, n);
}

extern "C" __global__ void __launch_bounds__(GPB_THREADS)
launch_overhead_f64(const double* __restrict__ a, double* __restrict__ out, long long n) {
    add_one<double>(a, out, n);
}
