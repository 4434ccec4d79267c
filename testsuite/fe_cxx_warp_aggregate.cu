// Warp-aggregated atomics as the CUDA blog writes them, the whole warp taking part:
// the lanes that append vote (`__ballot_sync`), elect a leader (`__ffs`), it does one
// atomicAdd for the warp and broadcasts the base with `__shfl_sync`; a lambda decides which lanes append, a
// functor template filters, and each lane's rank comes from `__popc` of the lanes
// below it.  Every lane writes its own slot, so the output does not depend on order.
// LAUNCH: filter_positive grid=4 block=128 in=i32[512]:randint(-50,50) counter=u32[1]:zero ranks=i32[512]:zero n=500
// LAUNCH: count_multiples<3> grid=2 block=64 in=i32[128]:randint(0,100) counts=u32[2]:zero

__device__ __forceinline__ unsigned lane_id() { return threadIdx.x & 31; }

__device__ unsigned aggregated_increment(unsigned* counter, bool append) {
    unsigned mask = __ballot_sync(0xffffffffu, append);
    int leader = __ffs(mask) - 1;
    unsigned base = 0;
    if (mask != 0 && (int)lane_id() == leader) base = atomicAdd(counter, (unsigned)__popc(mask));
    base = __shfl_sync(0xffffffffu, base, leader < 0 ? 0 : leader);
    return base + __popc(mask & ((1u << lane_id()) - 1u));
}

__global__ void filter_positive(const int* in, unsigned* counter, int* ranks, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    auto keep = [](int v) { return v > 0; };
    bool append = i < n && keep(in[i]);
    unsigned slot = aggregated_increment(counter, append);
    if (i < n) ranks[i] = append ? (slot < 100000u ? 1 : 0) : -1;   // (the slot itself depends on warp order)
}

template <int K>
struct MultipleOf {
    __device__ bool operator()(int v) const { return v % K == 0; }
};

template <int K>
__global__ void count_multiples(const int* in, unsigned* counts) {
    MultipleOf<K> pred;
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    unsigned votes = __ballot_sync(0xffffffffu, pred(v));
    if (lane_id() == 0) atomicAdd(&counts[blockIdx.x], (unsigned)__popc(votes));
}
template __global__ void count_multiples<3>(const int*, unsigned*);
