// axpy: the gradient-averaging job's update p - scale g (gpubench.mpi.jobs.grad_avg), for
// CUDA Python (NVRTC, launched through cuda.core by kernels/axpy/with_cuda_python.py).
// A grid-stride loop with its bounds check. Compiles with NVRTC alone.

template <typename T>
__device__ void axpy(const T* __restrict__ p, const T* __restrict__ g, T* __restrict__ out,
                     long long n, T scale) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        out[i] = p[i] - scale * g[i];
    }
}

extern "C" __global__ void axpy_f32(const float* p, const float* g, float* out, long long n,
                                    float scale) {
    axpy<float>(p, g, out, n, scale);
}

extern "C" __global__ void axpy_f64(const double* p, const double* g, double* out,
                                    long long n, double scale) {
    axpy<double>(p, g, out, n, scale);
}
