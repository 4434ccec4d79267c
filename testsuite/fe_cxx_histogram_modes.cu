// A kernel template on an `enum class` argument, warp-aggregated atomics in a
// __device__ helper, instances named in LAUNCH lines by qualified enumerators
// (`hist<Bins::Coarse>`), a namespace holding the helpers.
// LAUNCH: hist<Bins::Coarse> grid=4 block=128 v=i32[512]:randint(0,255) h=u32[16]:zero n=512
// LAUNCH: hist<Bins::Fine> grid=4 block=128 v=i32[512]:randint(0,255) hf=u32[16]:zero n=512

enum class Bins { Coarse, Fine };

namespace detail {
template <Bins B>
__device__ __forceinline__ int bin_of(int value) {
    if constexpr (B == Bins::Coarse)
        return value >> 4;
    else
        return value & 15;
}

__device__ void add_aggregated(unsigned* counter) {
    unsigned mask = __activemask();
    int leader = __ffs(mask) - 1;
    int lane = threadIdx.x % 32;
    if (lane == leader)
        atomicAdd(counter, (unsigned)__popc(mask));
}
}

template <Bins B>
__global__ void hist(const int* v, unsigned* h, int n) {
    __shared__ unsigned local[16];
    if (threadIdx.x < 16) local[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&local[detail::bin_of<B>(v[i])], 1u);
    __syncthreads();
    if (threadIdx.x < 16) atomicAdd(&h[threadIdx.x], local[threadIdx.x]);
    if (threadIdx.x == 0) detail::add_aggregated(&h[0]);
}

template __global__ void hist<Bins::Coarse>(const int*, unsigned*, int);
template __global__ void hist<Bins::Fine>(const int*, unsigned*, int);
