// Kernels of the MPI jobs for CUDA Python (NVRTC, launched through cuda.core by
// gpubench.backends.cuda_python.adapter).
//
// The reduction, matmul and Monte Carlo jobs reuse reduction.cu, matmul.cu and
// monte_carlo_pi.cu (the kernels' own implementations); these are the computations no
// kernel has: the halo job's stencil on a slab with ghost cells and the gradient and
// update of the gradient-averaging job. Grid-stride loops with bounds checks, no
// atomics (the same bits on every call). Compiles with NVRTC alone (no #include).

// out[i] = u[i] + alpha (u[i-1] - 2 u[i] + u[i+1]) for the interior i = 1..n;
// u and out hold n + 2 cells (cell 0 and n+1 are the ghosts).
template <typename T>
__device__ void stencil(const T* __restrict__ u, T* __restrict__ out, long long n, T alpha) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x + 1; i <= n;
         i += stride) {
        out[i] = u[i] + alpha * (u[i - 1] - (T)2 * u[i] + u[i + 1]);
    }
}

extern "C" __global__ void mpi_stencil_f32(const float* u, float* out, long long n,
                                           float alpha) {
    stencil<float>(u, out, n, alpha);
}

extern "C" __global__ void mpi_stencil_f64(const double* u, double* out, long long n,
                                           double alpha) {
    stencil<double>(u, out, n, alpha);
}

// Linear model pred = X W^T + b (X: rows x F, W: O x F, b: O), loss sum (pred - Y)^2.
// Pass 1: R = pred - Y (rows x O). Pass 2: g[o F + f] = 2 sum_r R[r, o] X[r, f] and
// g[O F + o] = 2 sum_r R[r, o]: one thread per gradient entry, summed over the rows.
template <typename T>
__device__ void residual(const T* __restrict__ X, const T* __restrict__ Y,
                         const T* __restrict__ W, const T* __restrict__ b,
                         T* __restrict__ R, long long rows, long long F, long long O) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < rows * O;
         i += stride) {
        const long long r = i / O;
        const long long o = i % O;
        T acc = b[o];
        for (long long f = 0; f < F; ++f) acc += X[r * F + f] * W[o * F + f];
        R[i] = acc - Y[i];
    }
}

template <typename T>
__device__ void grad(const T* __restrict__ X, const T* __restrict__ R, T* __restrict__ g,
                     long long rows, long long F, long long O) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < O * F + O;
         e += stride) {
        T acc = (T)0;
        if (e < O * F) {
            const long long o = e / F;
            const long long f = e % F;
            for (long long r = 0; r < rows; ++r) acc += R[r * O + o] * X[r * F + f];
        } else {
            const long long o = e - O * F;
            for (long long r = 0; r < rows; ++r) acc += R[r * O + o];
        }
        g[e] = (T)2 * acc;
    }
}

extern "C" __global__ void mpi_residual_f32(const float* X, const float* Y, const float* W,
                                            const float* b, float* R, long long rows,
                                            long long F, long long O) {
    residual<float>(X, Y, W, b, R, rows, F, O);
}

extern "C" __global__ void mpi_residual_f64(const double* X, const double* Y, const double* W,
                                            const double* b, double* R, long long rows,
                                            long long F, long long O) {
    residual<double>(X, Y, W, b, R, rows, F, O);
}

extern "C" __global__ void mpi_grad_f32(const float* X, const float* R, float* g,
                                        long long rows, long long F, long long O) {
    grad<float>(X, R, g, rows, F, O);
}

extern "C" __global__ void mpi_grad_f64(const double* X, const double* R, double* g,
                                        long long rows, long long F, long long O) {
    grad<double>(X, R, g, rows, F, O);
}

// p = p - scale g (the parameter update of the gradient-averaging job).
template <typename T>
__device__ void axpy(const T* __restrict__ p, const T* __restrict__ g, T* __restrict__ out,
                     long long n, T scale) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        out[i] = p[i] - scale * g[i];
    }
}

extern "C" __global__ void mpi_axpy_f32(const float* p, const float* g, float* out,
                                        long long n, float scale) {
    axpy<float>(p, g, out, n, scale);
}

extern "C" __global__ void mpi_axpy_f64(const double* p, const double* g, double* out,
                                        long long n, double scale) {
    axpy<double>(p, g, out, n, scale);
}
