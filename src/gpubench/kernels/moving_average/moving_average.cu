// moving_average: trailing windowed mean along each row of x (rows, L) (the workshop
// book, §4.7.2).
//
//   out[r, i] = mean(x[r, max(0, i - window + 1) : i + 1])
//
// Shared by CuPy RawModule and CUDA Python. Two kernels: the tiled one below (the
// `nvrtc` / `raw_kernel` rows) and the warp-sliding one at the end of the file (the
// `nvrtc_sliding` / `raw_kernel_sliding` rows). Compiles with NVRTC alone (no #include).
//
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
//
// Launch: 256 threads, dynamic shared memory (4 * 256 + window - 1) * sizeof(T) bytes,
// grid = min(rows * ceil(length / 1024), SMs x resident blocks per SM from the occupancy
// API). Launch bounds: 8 blocks per SM for float, 5 for double (no spills, ptxas -v).

#define GPB_THREADS 256
#define GPB_PER_THREAD 4  // outputs per thread: tile = GPB_PER_THREAD * blockDim.x

// s[k] = x[r, i0 - halo + k] for k < halo + tile, zero outside the row. The halo
// first (g < i0 < length), then the tile: each thread issues its GPB_PER_THREAD loads
// before storing any, so they are in flight together.
template <typename T>
__device__ __forceinline__ void gpb_stage(T* s, const T* xr, long long i0, long long halo,
                                          long long length) {
    for (long long k = threadIdx.x; k < halo; k += blockDim.x) {
        const long long g = i0 - halo + k;
        s[k] = (g >= 0) ? xr[g] : T(0);
    }
    T v[GPB_PER_THREAD];
#pragma unroll
    for (int p = 0; p < GPB_PER_THREAD; ++p) {
        const long long g = i0 + threadIdx.x + (long long)p * blockDim.x;
        v[p] = (g < length) ? xr[g] : T(0);
    }
#pragma unroll
    for (int p = 0; p < GPB_PER_THREAD; ++p) s[halo + threadIdx.x + p * blockDim.x] = v[p];
}

// The tiles of a (rows, length) array, grid-stride over the blocks: for each, its row r
// and first output i0, the block's shared memory s staged (:func:`gpb_stage`), then
// body(s, r, i0); the block syncs before the next tile overwrites s.
template <typename T, typename Body>
__device__ __forceinline__ void gpb_tiles(const T* __restrict__ x, long long rows,
                                          long long length, long long window, Body body) {
    extern __shared__ __align__(16) unsigned char gpb_smem[];
    T* s = reinterpret_cast<T*>(gpb_smem);
    const long long tile = (long long)GPB_PER_THREAD * blockDim.x;
    const long long tiles_per_row = (length + tile - 1) / tile;
    const long long ntiles = rows * tiles_per_row;
    const long long halo = window - 1;
    for (long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const long long r = t / tiles_per_row;
        const long long i0 = (t - r * tiles_per_row) * tile;  // first output of the tile
        gpb_stage(s, x + r * length, i0, halo, length);
        __syncthreads();
        body(s, r, i0);
        __syncthreads();  // the next tile overwrites s
    }
}

template <typename T>
__device__ __forceinline__ void moving_average(const T* __restrict__ x, T* __restrict__ out,
                                               long long rows, long long length,
                                               long long window) {
    gpb_tiles(x, rows, length, window, [&](T* s, long long r, long long i0) {
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

// -- warp-sliding kernel -----------------------------------------------------------------
//
// moving_average_warp<T, W, V>(x, out, n, length), n = rows * length: the window W and
// the elements per thread V are template arguments (the launchers instantiate the one
// they need through NVRTC name expressions), so every register index and shuffle
// distance below is a constant and the loops unroll into straight code.
//
// Why not the tiles above: at float32 their time follows the element count, not the
// bytes (instruction-bound: staging through shared memory between two barriers, 64-bit
// index math, `window` shared reads per output and a divide each). Streaming at an
// H100's ~3 TB/s leaves an SM ~2.5 warp-instructions per float32 element (~5 per
// float64 one). Here, with no shared memory and no barrier, a warp's 32 V elements take
// ~120 (float32) / ~160 (float64) PTX instructions at window 16: ~1 per float32
// element, ~2.5 per float64 one. Not yet timed on a GPU: tools/mavg_check.py.
//
// * x is one flat sequence; a warp takes a chunk of 32 * V consecutive elements (chunks
//   grid-strided over at most one wave), each lane V consecutive ones with one load and
//   one store of V * sizeof(T) bytes (16 at the default: ld.global.nc.v4.f32 /
//   .v2.f64; 8 or 4 when L is not a multiple of 16 bytes). 32-bit index math: the
//   launchers keep n < 2^31.
// * The window before a lane's first element comes from the lanes before it through
//   __shfl_sync, as sums: Q = (W - 1) / V whole lanes (each lane's sum of its V) and one
//   suffix sum of the R = (W - 1) % V elements before those. The lane then slides over
//   its own V outputs, one add and one subtract each; the V - 1 elements that leave
//   the window come one shuffle each. Q + V shuffles per V outputs (7 per 4 outputs at
//   float32, window 16), not W reads per output.
// * Lanes near the chunk's start need the previous chunk: its last H = ceil((W - 1) / V)
//   lanes' elements. The last H lanes load the previous chunk's V elements at their own
//   lane (another warp's elements: read twice, the second time mostly from L2), and for
//   a shuffle from d lanes back the lanes from 32 - d on offer that value instead of
//   their own (no lane asks them for theirs at that distance): one shuffle serves both
//   (gpb_back). Hence H <= 32: W <= 32 V + 1 (129 for float, 65 for double at 16 bytes).
// * Row starts: the launchers require L % V == 0, so a lane's V elements lie in one row
//   and a row starts at a lane's first element; col = (first element) mod L. A value d
//   lanes back counts when d * V <= col, else it is 0 (before the row: the reference's
//   partial windows). Output j divides by min(col + j + 1, W): a multiply by 1 / W when
//   the lane's windows are all full, a true divide on the rows' first W - 1 outputs only.
// * Sums in the input type: a direct window sum per lane, then at most V - 1 slide
//   steps (no long running sum to drift): float32 within ~1e-7 of the float64
//   reference in the 2-norm, ~4e-7 per element at window 129, as the tiled kernel
//   (run on the host: tests/test_moving_average_host.py).
//
// The launchers pick V (16 bytes' worth, halved while L or a pointer needs it) and take
// the tiled kernel where this one cannot run: W > 32 V + 1, n >= 2^31.
//
// Launch: 256 threads, no shared memory, grid = min(ceil(n / (V * 256)) blocks, SMs x
// resident blocks per SM from the occupancy API). Launch bounds: 8 blocks per SM (<= 32
// registers, a full SM: 2048 threads with 16 bytes each in flight).
//
// Unroll: moving_average_warp<T, W, V, U> takes U chunks per warp per grid-stride step
// (U = 1, the default template argument, is the kernel above, unchanged: the same PTX
// up to register names): each lane issues the loads of all U chunks before any shuffle,
// then computes and stores them in turn; a remainder loop takes the last chunks one at
// a time. U = 2 needs more registers: its launch bounds are 6 blocks per SM (float) and
// 5 (double), and even so ptxas spills at large windows, so the launchers take U = 2
// only up to UNROLL2_MAX_WINDOW (with_cuda_python_sliding.py; tests check every window).

#define GPB_WARP_BLOCKS 8
#define GPB_WARP_BLOCKS_U(T) (sizeof(T) == 4 ? 6 : 5)  // U > 1: no spills (ptxas -v)

// V consecutive elements as one aligned access (16, 8 or 4 bytes).
template <typename T, int V>
struct alignas(V * sizeof(T)) GpbVec {
    T v[V];
};

// A value of lane (lane - d), where lane - d < 0 means lane (lane - d + 32) of the
// previous chunk: lanes from 32 - d on offer `prev` (their previous-chunk value) instead
// of `own`, so one shuffle serves both. d is a constant once the loops unroll; d == 0 is
// the lane's own value, d == 32 its own previous one.
template <typename T>
__device__ __forceinline__ T gpb_back(T own, T prev, int lane, int d) {
    if (d == 0) return own;
    const T v = (lane >= 32 - d) ? prev : own;
    return d == 32 ? v : __shfl_sync(0xffffffffu, v, (lane - d) & 31);
}

// A lane's loads for chunk c: e its own V elements, h (last H lanes, c > 0) the previous
// chunk's at this lane; zeros where there are none.
template <typename T, int V, int H>
__device__ __forceinline__ void gpb_warp_load(const GpbVec<T, V>* xv, unsigned c, int lane,
                                              unsigned packs, GpbVec<T, V>& e,
                                              GpbVec<T, V>& h) {
    const unsigned p = c * 32 + lane;  // this lane's elements: p * V .. p * V + V - 1
#pragma unroll
    for (int k = 0; k < V; ++k) e.v[k] = h.v[k] = T(0);
    if (p < packs) e = xv[p];
    if (H > 0 && c > 0 && lane >= 32 - H) h = xv[p - 32];
}

// A lane's V outputs of chunk c from its loads (gpb_warp_load): shuffles, slide, store.
template <typename T, int W, int V>
__device__ __forceinline__ void gpb_warp_chunk(const GpbVec<T, V>& e, const GpbVec<T, V>& h,
                                               unsigned c, int lane, int length,
                                               unsigned packs, GpbVec<T, V>* ov, T inv_w) {
    constexpr int Q = (W - 1) / V;  // whole lanes of the window before a lane's first
    constexpr int R = (W - 1) % V;  // and the last R elements of the lane before those
    const unsigned p = c * 32 + lane;
    const int col = (int)(p * V % (unsigned)length);  // where in its row

    // the window ending at element 0: itself, Q whole lanes back, R elements before
    T a = e.v[0], ah = h.v[0];
#pragma unroll
    for (int k = 1; k < V; ++k) {
        a += e.v[k];
        ah += h.v[k];
    }
    T s = e.v[0];
#pragma unroll
    for (int d = 1; d <= Q; ++d) {
        const T t = gpb_back(a, ah, lane, d);
        s += (d * V <= col) ? t : T(0);
    }
    if (R > 0) {
        T b = e.v[V - R], bh = h.v[V - R];
#pragma unroll
        for (int k = V - R + 1; k < V; ++k) {
            b += e.v[k];
            bh += h.v[k];
        }
        const T t = gpb_back(b, bh, lane, Q + 1);
        s += ((Q + 1) * V <= col) ? t : T(0);
    }

    // slide: element j enters, element j - W (d lanes back, register k) leaves
    T res[V];
    res[0] = s;
#pragma unroll
    for (int j = 1; j < V; ++j) {
        const int d = (W - j + V - 1) / V;
        const int k = j - W + d * V;
        const T t = gpb_back(e.v[k], h.v[k], lane, d);
        s += e.v[j] - ((d * V <= col) ? t : T(0));
        res[j] = s;
    }

    GpbVec<T, V> o;
    if (col >= W - 1) {  // every window of this lane is full
#pragma unroll
        for (int j = 0; j < V; ++j) o.v[j] = res[j] * inv_w;
    } else {  // among a row's first W - 1 outputs: fewer elements
#pragma unroll
        for (int j = 0; j < V; ++j) o.v[j] = res[j] / T(col + j + 1 < W ? col + j + 1 : W);
    }
    if (p < packs) ov[p] = o;
}

// U chunks per warp per grid-stride step (c, c + warps, ..., c + (U - 1) warps): each
// lane issues the loads of all U before any shuffle, then computes and stores them one
// by one; a remainder loop takes the last chunks one at a time (U = 1: the whole loop).
template <typename T, int W, int V, int U = 1>
__global__ void __launch_bounds__(GPB_THREADS, U == 1 ? GPB_WARP_BLOCKS : GPB_WARP_BLOCKS_U(T))
moving_average_warp(const T* __restrict__ x, T* __restrict__ out, int n, int length) {
    constexpr int Q = (W - 1) / V;
    constexpr int R = (W - 1) % V;
    constexpr int H = Q + (R > 0);  // lanes back the window reaches
    static_assert(W >= 1 && H <= 32, "the window must lie in this chunk and the previous");
    static_assert(U >= 1, "U: chunks per warp per step");
    typedef GpbVec<T, V> Vec;
    const Vec* xv = reinterpret_cast<const Vec*>(x);
    Vec* ov = reinterpret_cast<Vec*>(out);
    const int lane = threadIdx.x & 31;
    const unsigned packs = (unsigned)n / V;
    const unsigned chunks = (packs + 31) / 32;
    const unsigned warps = gridDim.x * (blockDim.x / 32);
    const T inv_w = T(1) / T(W);
    // the whole warp takes the same chunks: every lane reaches every shuffle
    unsigned c = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (U > 1) {
        for (; c + (U - 1) * warps < chunks; c += U * warps) {
            Vec e[U], h[U];
#pragma unroll
            for (int u = 0; u < U; ++u) gpb_warp_load<T, V, H>(xv, c + u * warps, lane, packs,
                                                               e[u], h[u]);
#pragma unroll
            for (int u = 0; u < U; ++u)
                gpb_warp_chunk<T, W, V>(e[u], h[u], c + u * warps, lane, length, packs, ov,
                                        inv_w);
        }
    }
    for (; c < chunks; c += warps) {
        Vec e, h;  // its own, and (last H lanes) the previous chunk's at this lane
        gpb_warp_load<T, V, H>(xv, c, lane, packs, e, h);
        gpb_warp_chunk<T, W, V>(e, h, c, lane, length, packs, ov, inv_w);
    }
}
