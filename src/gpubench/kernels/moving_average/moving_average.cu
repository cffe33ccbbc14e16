// moving_average: trailing windowed mean along each row of x (rows, L) (the workshop
// book, §4.7.2).
//
//   out[r, i] = mean(x[r, max(0, i - window + 1) : i + 1])
//
// Shared by CuPy RawModule and CUDA Python.
// moving_average_<f32|f64>(x, out, rows, length, window): a block takes one tile of
// 4 * blockDim.x consecutive outputs of one row (tiles grid-strided over rows x
// tiles-per-row), stages the tile plus the window - 1 elements before it in dynamic
// shared memory (zeros before the row's start, coalesced loads, each x read once plus a
// (window - 1) / tile halo), then each thread sums `window` values from shared memory
// for 4 outputs at once (strided by blockDim.x: consecutive lanes read consecutive
// words, no bank conflicts) and divides by the count min(i + 1, window).
//
// A direct sum, not a running sum or a cumsum difference: no cancellation, so float32
// matches the float64 reference to ~1e-7 for any row length. The cost is `window`
// shared-memory reads per output: on an H100 at 2^24 elements, window 16 runs at ~1.45
// TB/s (float32) and ~2.2 TB/s (float64); window 1 (2^22) ~2.1 / 2.5 TB/s, and
// window 300 (2^22) is compute-bound at ~0.16 / 0.2 TB/s.
// Compiles with NVRTC alone (no #include).
//
// Launch: 256 threads, dynamic shared memory (4 * 256 + window - 1) * sizeof(T) bytes,
// grid = min(rows * ceil(length / 1024), SMs x resident blocks per SM from the occupancy
// API). Launch bounds: 8 blocks per SM for float, 5 for double (no spills, ptxas -v).

#define GPB_THREADS 256
#define GPB_PER_THREAD 4  // outputs per thread: tile = GPB_PER_THREAD * blockDim.x

// Where k lands in shared memory: at k (the tiled kernel), or skewed (the sliding one).
struct GpbPlain {
    __device__ __forceinline__ long long operator()(long long k) const { return k; }
};

template <typename T>
__device__ __forceinline__ long long gpb_skew(long long k) {
    return k + (k >> (sizeof(T) == 4 ? 5 : 4));  // one pad word per 128 bytes
}

template <typename T>
struct GpbSkew {
    __device__ __forceinline__ long long operator()(long long k) const { return gpb_skew<T>(k); }
};

// s[at(k)] = x[r, i0 - halo + k] for k < halo + tile, zero outside the row. The halo
// first (g < i0 < length), then the tile: each thread issues its GPB_PER_THREAD loads
// before storing any, so they are in flight together.
template <typename T, typename At>
__device__ __forceinline__ void gpb_stage(T* s, const T* xr, long long i0, long long halo,
                                          long long length, At at) {
    for (long long k = threadIdx.x; k < halo; k += blockDim.x) {
        const long long g = i0 - halo + k;
        s[at(k)] = (g >= 0) ? xr[g] : T(0);
    }
    T v[GPB_PER_THREAD];
#pragma unroll
    for (int p = 0; p < GPB_PER_THREAD; ++p) {
        const long long g = i0 + threadIdx.x + (long long)p * blockDim.x;
        v[p] = (g < length) ? xr[g] : T(0);
    }
#pragma unroll
    for (int p = 0; p < GPB_PER_THREAD; ++p) s[at(halo + threadIdx.x + p * blockDim.x)] = v[p];
}

// The tiles of a (rows, length) array, grid-stride over the blocks: for each, its row r
// and first output i0, the block's shared memory s staged (:func:`gpb_stage`), then
// body(s, r, i0); the block syncs before the next tile overwrites s.
template <typename T, typename At, typename Body>
__device__ __forceinline__ void gpb_tiles(const T* __restrict__ x, long long rows,
                                          long long length, long long window, At at,
                                          Body body) {
    extern __shared__ __align__(16) unsigned char gpb_smem[];
    T* s = reinterpret_cast<T*>(gpb_smem);
    const long long tile = (long long)GPB_PER_THREAD * blockDim.x;
    const long long tiles_per_row = (length + tile - 1) / tile;
    const long long ntiles = rows * tiles_per_row;
    const long long halo = window - 1;
    for (long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const long long r = t / tiles_per_row;
        const long long i0 = (t - r * tiles_per_row) * tile;  // first output of the tile
        gpb_stage(s, x + r * length, i0, halo, length, at);
        __syncthreads();
        body(s, r, i0);
        __syncthreads();  // the next tile overwrites s
    }
}

template <typename T>
__device__ __forceinline__ void moving_average(const T* __restrict__ x, T* __restrict__ out,
                                               long long rows, long long length,
                                               long long window) {
    gpb_tiles(x, rows, length, window, GpbPlain(), [&](T* s, long long r, long long i0) {
        // out[i0 + local] sums s[local .. local + window - 1] (= x[i - window + 1 .. i]),
        // local = threadIdx.x + p * blockDim.x. The k loop is outside the p loop so each
        // step issues GPB_PER_THREAD independent loads and adds (every index stays inside
        // s: local < tile, k < window); outputs past the row's end are not stored.
        const int win = (int)window;
        T acc[GPB_PER_THREAD];
#pragma unroll
        for (int p = 0; p < GPB_PER_THREAD; ++p) acc[p] = T(0);
        const T* w = s + threadIdx.x;
        for (int k = 0; k < win; ++k) {
#pragma unroll
            for (int p = 0; p < GPB_PER_THREAD; ++p) acc[p] += w[p * blockDim.x + k];
        }
#pragma unroll
        for (int p = 0; p < GPB_PER_THREAD; ++p) {
            const long long i = i0 + threadIdx.x + (long long)p * blockDim.x;
            if (i < length) {
                const long long count = (i + 1 < window) ? i + 1 : window;
                out[r * length + i] = acc[p] / (T)count;
            }
        }
    });
}

extern "C" __global__ void __launch_bounds__(GPB_THREADS, 8)
moving_average_f32(const float* __restrict__ x, float* __restrict__ out, long long rows,
                   long long length, long long window) {
    moving_average<float>(x, out, rows, length, window);
}

extern "C" __global__ void __launch_bounds__(GPB_THREADS, 5)
moving_average_f64(const double* __restrict__ x, double* __restrict__ out, long long rows,
                   long long length, long long window) {
    moving_average<double>(x, out, rows, length, window);
}

// -- sliding window ----------------------------------------------------------------------
//
// moving_average_sliding_<f32|f64>(x, out, rows, length, window): the same tiles and the
// same staging as above, but each thread then owns GPB_PER_THREAD *consecutive* outputs
// and slides the window over them: one window sum (`window` shared reads), then one add
// and one subtract per further output, instead of `window` reads per output (16 -> 5.5
// shared reads per output at window 16). Consecutive runs make lanes read words
// GPB_PER_THREAD apart; one pad word per 128 bytes of shared memory (GPB_SKEW) spreads
// them over the banks. The outputs go back through shared memory (the staging area is
// reused after a barrier) so the global stores stay coalesced. Sums in the input type
// over at most window + 2 * GPB_PER_THREAD terms: float32 stays within ~1e-7.
//
// Launch: as moving_average_<f32|f64>, with dynamic shared memory
// skewed(4 * 256 + window - 1) * sizeof(T) bytes, skewed(k) = k + k / (128 / sizeof(T)).

template <typename T>
__device__ __forceinline__ void moving_average_sliding(const T* __restrict__ x,
                                                       T* __restrict__ out, long long rows,
                                                       long long length, long long window) {
    const long long halo = window - 1;
    const int win = (int)window;
    gpb_tiles(x, rows, length, window, GpbSkew<T>(), [&](T* s, long long r, long long i0) {
        // outputs local o = first .. first + GPB_PER_THREAD - 1 average s[o .. o + halo]
        const long long first = (long long)threadIdx.x * GPB_PER_THREAD;
        T sum = T(0);
        for (int k = 0; k < win; ++k) sum += s[gpb_skew<T>(first + k)];
        T res[GPB_PER_THREAD];
        res[0] = sum;
#pragma unroll
        for (int p = 1; p < GPB_PER_THREAD; ++p) {
            sum += s[gpb_skew<T>(first + p + halo)] - s[gpb_skew<T>(first + p - 1)];
            res[p] = sum;
        }
        __syncthreads();  // every thread has read its window: reuse s for the outputs
#pragma unroll
        for (int p = 0; p < GPB_PER_THREAD; ++p) {
            const long long i = i0 + first + p;
            const long long count = (i + 1 < window) ? i + 1 : window;
            s[gpb_skew<T>(first + p)] = res[p] / (T)count;
        }
        __syncthreads();
#pragma unroll
        for (int p = 0; p < GPB_PER_THREAD; ++p) {
            const long long o = threadIdx.x + (long long)p * blockDim.x;
            if (i0 + o < length) out[r * length + i0 + o] = s[gpb_skew<T>(o)];
        }
    });
}

extern "C" __global__ void __launch_bounds__(GPB_THREADS, 8)
moving_average_sliding_f32(const float* __restrict__ x, float* __restrict__ out,
                           long long rows, long long length, long long window) {
    moving_average_sliding<float>(x, out, rows, length, window);
}

extern "C" __global__ void __launch_bounds__(GPB_THREADS, 5)
moving_average_sliding_f64(const double* __restrict__ x, double* __restrict__ out,
                           long long rows, long long length, long long window) {
    moving_average_sliding<double>(x, out, rows, length, window);
}
