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
