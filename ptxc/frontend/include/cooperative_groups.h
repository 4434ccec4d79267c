// cooperative_groups.h as ptxc implements it: thread blocks, tiles of a warp and
// coalesced groups as small classes over the intrinsics, computing what NVIDIA's header
// computes (measured with nvcc 13.5 -ptx at sm_89 and sm_90: the block's barrier is
// barrier.sync 0, a tile's shuffles carry its mask and the clamp of its width).
// ptxc's own text, not NVIDIA's.
#pragma once
#define _COOPERATIVE_GROUPS_H_

namespace cooperative_groups {

__device__ __forceinline__ unsigned int __ptxc_block_rank() {
    return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ unsigned int __ptxc_block_size() { return blockDim.x * blockDim.y * blockDim.z; }
__device__ __forceinline__ unsigned int __ptxc_laneid() { unsigned int lane; asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane)); return lane; }
__device__ __forceinline__ unsigned int __ptxc_lanemask_lt() { unsigned int m; asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m)); return m; }

struct thread_block {
    __device__ void sync() const { __barrier_sync(0); }
    __device__ unsigned int thread_rank() const { return __ptxc_block_rank(); }
    __device__ unsigned int size() const { return __ptxc_block_size(); }
    __device__ unsigned int num_threads() const { return __ptxc_block_size(); }
    __device__ uint3 group_index() const { return make_uint3(blockIdx.x, blockIdx.y, blockIdx.z); }
    __device__ uint3 thread_index() const { return make_uint3(threadIdx.x, threadIdx.y, threadIdx.z); }
    __device__ uint3 dim_threads() const { return make_uint3(blockDim.x, blockDim.y, blockDim.z); }
    __device__ uint3 group_dim() const { return make_uint3(blockDim.x, blockDim.y, blockDim.z); }
};

__device__ __forceinline__ thread_block this_thread_block() { thread_block b; return b; }

// A tile of Size threads (a power of two up to 32) of a warp: its lanes' mask, its
// shuffles at width Size.
template <unsigned int Size>
struct thread_block_tile {
    __device__ unsigned int __mask() const {
        return Size == 32 ? 0xffffffffu : ((0xffffffffu >> (32 - Size)) << (__ptxc_laneid() & ~(Size - 1)));
    }
    __device__ unsigned int thread_rank() const { return __ptxc_block_rank() & (Size - 1); }
    __device__ unsigned int size() const { return Size; }
    __device__ unsigned int num_threads() const { return Size; }
    __device__ unsigned int meta_group_rank() const { return __ptxc_block_rank() / Size; }
    __device__ unsigned int meta_group_size() const { return (__ptxc_block_size() + Size - 1) / Size; }
    __device__ void sync() const { __syncwarp(__mask()); }
    __device__ int shfl(int v, int src) const { return __shfl_sync(__mask(), v, src, Size); }
    __device__ unsigned int shfl(unsigned int v, int src) const { return __shfl_sync(__mask(), v, src, Size); }
    __device__ float shfl(float v, int src) const { return __shfl_sync(__mask(), v, src, Size); }
    __device__ double shfl(double v, int src) const { return __shfl_sync(__mask(), v, src, Size); }
    __device__ long long shfl(long long v, int src) const { return __shfl_sync(__mask(), v, src, Size); }
    __device__ int shfl_down(int v, unsigned int d) const { return __shfl_down_sync(__mask(), v, d, Size); }
    __device__ unsigned int shfl_down(unsigned int v, unsigned int d) const { return __shfl_down_sync(__mask(), v, d, Size); }
    __device__ float shfl_down(float v, unsigned int d) const { return __shfl_down_sync(__mask(), v, d, Size); }
    __device__ double shfl_down(double v, unsigned int d) const { return __shfl_down_sync(__mask(), v, d, Size); }
    __device__ long long shfl_down(long long v, unsigned int d) const { return __shfl_down_sync(__mask(), v, d, Size); }
    __device__ int shfl_up(int v, unsigned int d) const { return __shfl_up_sync(__mask(), v, d, Size); }
    __device__ unsigned int shfl_up(unsigned int v, unsigned int d) const { return __shfl_up_sync(__mask(), v, d, Size); }
    __device__ float shfl_up(float v, unsigned int d) const { return __shfl_up_sync(__mask(), v, d, Size); }
    __device__ double shfl_up(double v, unsigned int d) const { return __shfl_up_sync(__mask(), v, d, Size); }
    __device__ long long shfl_up(long long v, unsigned int d) const { return __shfl_up_sync(__mask(), v, d, Size); }
    __device__ int shfl_xor(int v, int m) const { return __shfl_xor_sync(__mask(), v, m, Size); }
    __device__ unsigned int shfl_xor(unsigned int v, int m) const { return __shfl_xor_sync(__mask(), v, m, Size); }
    __device__ float shfl_xor(float v, int m) const { return __shfl_xor_sync(__mask(), v, m, Size); }
    __device__ double shfl_xor(double v, int m) const { return __shfl_xor_sync(__mask(), v, m, Size); }
    __device__ long long shfl_xor(long long v, int m) const { return __shfl_xor_sync(__mask(), v, m, Size); }
    __device__ unsigned int ballot(int p) const {
        return Size == 32 ? __ballot_sync(0xffffffffu, p) : (__ballot_sync(__mask(), p) >> (__ptxc_laneid() & ~(Size - 1)));
    }
    __device__ bool any(int p) const { return __ballot_sync(__mask(), p) != 0; }
    __device__ bool all(int p) const { return __ballot_sync(__mask(), p) == __mask(); }
};

template <unsigned int Size>
__device__ __forceinline__ thread_block_tile<Size> tiled_partition(const thread_block& parent) {
    thread_block_tile<Size> tile;
    return tile;
}

// The threads of the warp that are active where the group is made.
struct coalesced_group {
    unsigned int __m;
    __device__ unsigned int thread_rank() const { return __popc(__ptxc_lanemask_lt() & __m); }
    __device__ unsigned int size() const { return __popc(__m); }
    __device__ unsigned int num_threads() const { return __popc(__m); }
    __device__ void sync() const { __syncwarp(__m); }
    __device__ unsigned int ballot(int p) const { return __ballot_sync(__m, p); }
    __device__ bool any(int p) const { return __ballot_sync(__m, p) != 0; }
    __device__ bool all(int p) const { return __ballot_sync(__m, p) == __m; }
};

__device__ __forceinline__ coalesced_group coalesced_threads() { coalesced_group g; g.__m = __activemask(); return g; }

template <typename Group>
__device__ __forceinline__ void sync(const Group& g) { g.sync(); }

}  // namespace cooperative_groups
