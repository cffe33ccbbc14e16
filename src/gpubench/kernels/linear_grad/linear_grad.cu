// linear_grad: the gradient-averaging job's local gradient (gpubench.mpi.jobs.grad_avg),
// for CUDA Python (NVRTC, launched through cuda.core by
// kernels/linear_grad/with_cuda_python.py).
//
// Linear model pred = X W^T + b (X: rows x F, W: O x F, b: O), loss sum (pred - Y)^2.
// Pass 1: R = pred - Y (rows x O). Pass 2: g[o F + f] = 2 sum_r R[r, o] X[r, f] and
// g[O F + o] = 2 sum_r R[r, o]: one thread per gradient entry, summed over the rows.
// Grid-stride loops with bounds checks, no atomics (the same bits on every call).
// Compiles with NVRTC alone.

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

extern "C" __global__ void linear_grad_residual_f32(const float* X, const float* Y,
                                                    const float* W, const float* b, float* R,
                                                    long long rows, long long F,
                                                    long long O) {
    residual<float>(X, Y, W, b, R, rows, F, O);
}

extern "C" __global__ void linear_grad_residual_f64(const double* X, const double* Y,
                                                    const double* W, const double* b,
                                                    double* R, long long rows, long long F,
                                                    long long O) {
    residual<double>(X, Y, W, b, R, rows, F, O);
}

extern "C" __global__ void linear_grad_f32(const float* X, const float* R, float* g,
                                           long long rows, long long F, long long O) {
    grad<float>(X, R, g, rows, F, O);
}

extern "C" __global__ void linear_grad_f64(const double* X, const double* R, double* g,
                                           long long rows, long long F, long long O) {
    grad<double>(X, R, g, rows, F, O);
}
