// The vector access of the memory-bound kernels' .cu files (vector_add, elementwise,
// reduction): 16 bytes of T, loaded and stored as one access where the pointer allows.
// gpubench.cuda_sources.source puts this file in place of their #include "../pack.cuh",
// so NVRTC compiles one source string with no include path.
template <typename T>
struct alignas(16) Pack {
    T v[16 / sizeof(T)];
};

__device__ __forceinline__ bool aligned16(const void* p) {
    return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0ull;
}

// out[i] = f(a[i], b[i]) over n elements, grid-strided: U 16-byte packs per thread per
// step (every load issued before any compute or store: U loads in flight), the packs
// left one at a time, then the scalar tail (and misaligned pointers) element by element,
// so any n is correct. vector_add (f = +) and elementwise's binary variants.
template <typename T, int U, typename F>
__device__ __forceinline__ void map2(const T* __restrict__ a, const T* __restrict__ b,
                                     T* __restrict__ out, long long n, F f) {
    const int W = 16 / sizeof(T);
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long head = 0;
    if (aligned16(a) && aligned16(b) && aligned16(out)) {
        const long long nvec = n / W;
        const Pack<T>* av = reinterpret_cast<const Pack<T>*>(a);
        const Pack<T>* bv = reinterpret_cast<const Pack<T>*>(b);
        Pack<T>* ov = reinterpret_cast<Pack<T>*>(out);
        long long i = tid;
        if (U > 1) {  // U packs per step: every load issued before any compute or store
            for (; i + (U - 1) * stride < nvec; i += U * stride) {
                Pack<T> x[U], y[U];
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    x[u] = av[i + u * stride];
                    y[u] = bv[i + u * stride];
                }
#pragma unroll
                for (int u = 0; u < U; ++u) {
#pragma unroll
                    for (int k = 0; k < W; ++k) x[u].v[k] = f(x[u].v[k], y[u].v[k]);
                }
#pragma unroll
                for (int u = 0; u < U; ++u) ov[i + u * stride] = x[u];
            }
        }
        for (; i < nvec; i += stride) {  // U = 1: the whole loop; else the remainder
            const Pack<T> x = av[i];
            const Pack<T> y = bv[i];
            Pack<T> z;
#pragma unroll
            for (int k = 0; k < W; ++k) z.v[k] = f(x.v[k], y.v[k]);
            ov[i] = z;
        }
        head = nvec * W;
    }
    for (long long i = head + tid; i < n; i += stride) out[i] = f(a[i], b[i]);
}
