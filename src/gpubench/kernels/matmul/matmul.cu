// matmul: C = A B for row-major n x n matrices (the workshop book, §4.9.1,
// §5.10.2), hand-written.
// A and C may have fewer rows than n (m x n, B n x n): the MPI matmul job multiplies
// its rank's rows of A with these kernels; the single-device rows pass m = n.
//
// Shared by CuPy RawModule and CUDA Python. Both accumulate in the matrix's type, as a
// float32 GEMM does; NVRTC contracts a*b + c to FMA (its default), no fast math.
// Compiles with NVRTC alone (no #include).
//
// matmul_naive_<f32|f64>(A, B, C, m, n): one thread per C element, the textbook kernel of
//   the workshop book: it reads a row of A and a column of B straight from global memory
//   (coalesced along B's rows across a warp, A broadcast).
//   Launch: block (16, 16), grid (ceil(n/16), ceil(m/16)); x indexes columns.
//
// matmul_tiled_<f32|f64>(A, B, C, m, n): 32 x 32 tiles of A and B staged in shared memory;
//   a block of 32 x 8 threads computes one 32 x 32 tile of C, each thread 4 elements
//   (rows ty, ty+8, ty+16, ty+24 of the tile), so every B value read from shared memory
//   feeds 4 FMAs and A's reads are warp broadcasts (no bank conflicts). Edge tiles are
//   zero-padded; stores are bounds-checked.
//   Launch: block (32, 8), grid (ceil(n/32), ceil(m/32)).

#define GPB_TILE 32
#define GPB_TROWS 8  // threads along y in the tiled kernel; each covers TILE/TROWS rows

template <typename T>
__device__ __forceinline__ void naive(const T* __restrict__ A, const T* __restrict__ B,
                                      T* __restrict__ C, long long m, long long n) {
    const long long col = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long row = (long long)blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= m || col >= n) return;
    const T* a = A + row * n;
    const T* b = B + col;
    T acc = T(0);
    for (long long k = 0; k < n; ++k) {
        acc += a[k] * b[0];
        b += n;
    }
    C[row * n + col] = acc;
}

template <typename T>
__device__ __forceinline__ void tiled(const T* __restrict__ A, const T* __restrict__ B,
                                      T* __restrict__ C, long long m, long long n) {
    const int R = GPB_TILE / GPB_TROWS;
    __shared__ T As[GPB_TILE][GPB_TILE];
    __shared__ T Bs[GPB_TILE][GPB_TILE];
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const long long row0 = (long long)blockIdx.y * GPB_TILE;
    const long long col = (long long)blockIdx.x * GPB_TILE + tx;
    T acc[R];
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] = T(0);
    for (long long k0 = 0; k0 < n; k0 += GPB_TILE) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int i = ty + r * GPB_TROWS;
            const long long arow = row0 + i;
            const long long acol = k0 + tx;
            As[i][tx] = (arow < m && acol < n) ? A[arow * n + acol] : T(0);
            const long long brow = k0 + i;
            Bs[i][tx] = (brow < n && col < n) ? B[brow * n + col] : T(0);
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < GPB_TILE; ++k) {
            const T bv = Bs[k][tx];
#pragma unroll
            for (int r = 0; r < R; ++r) acc[r] += As[ty + r * GPB_TROWS][k] * bv;
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const long long row = row0 + ty + r * GPB_TROWS;
        if (row < m && col < n) C[row * n + col] = acc[r];
    }
}

extern "C" __global__ void __launch_bounds__(256)
matmul_naive_f32(const float* __restrict__ A, const float* __restrict__ B,
                 float* __restrict__ C, long long m, long long n) {
    naive<float>(A, B, C, m, n);
}

extern "C" __global__ void __launch_bounds__(256)
matmul_naive_f64(const double* __restrict__ A, const double* __restrict__ B,
                 double* __restrict__ C, long long m, long long n) {
    naive<double>(A, B, C, m, n);
}

extern "C" __global__ void __launch_bounds__(GPB_TILE * GPB_TROWS)
matmul_tiled_f32(const float* __restrict__ A, const float* __restrict__ B,
                 float* __restrict__ C, long long m, long long n) {
    tiled<float>(A, B, C, m, n);
}

extern "C" __global__ void __launch_bounds__(GPB_TILE * GPB_TROWS)
matmul_tiled_f64(const double* __restrict__ A, const double* __restrict__ B,
                 double* __restrict__ C, long long m, long long n) {
    tiled<double>(A, B, C, m, n);
}
