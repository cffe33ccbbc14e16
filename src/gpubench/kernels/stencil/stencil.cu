// stencil: the halo jobs' explicit heat-equation step (gpubench.mpi.jobs.halo), for
// CUDA Python (NVRTC, launched through cuda.core by kernels/stencil/with_cuda_python.py).
//
// out[i] = u[i] + alpha (u[i-1] - 2 u[i] + u[i+1]) for the interior i = 1..n; u and out
// hold n + 2 cells (cell 0 and n+1 are the ghosts). A grid-stride loop with its bounds
// check, no atomics (the same bits on every call). Compiles with NVRTC alone.

template <typename T>
__device__ void stencil(const T* __restrict__ u, T* __restrict__ out, long long n, T alpha) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x + 1; i <= n;
         i += stride) {
        out[i] = u[i] + alpha * (u[i - 1] - (T)2 * u[i] + u[i + 1]);
    }
}

extern "C" __global__ void stencil_f32(const float* u, float* out, long long n, float alpha) {
    stencil<float>(u, out, n, alpha);
}

extern "C" __global__ void stencil_f64(const double* u, double* out, long long n,
                                       double alpha) {
    stencil<double>(u, out, n, alpha);
}
