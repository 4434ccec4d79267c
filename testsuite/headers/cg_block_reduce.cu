// Block reductions with cooperative groups: each warp reduces with cg::reduce over a
// tiled_partition<32> (an integer sum is one redux.sync; the float one a butterfly),
// warp leaders write shared memory, block.sync(), and warp 0 reduces the partials;
// integer min/max/and/or/xor through cg::less/greater/bit_*; a tile of 16 too.
// LAUNCH: block_sum grid=8 block=256 x=f32[2048]:rand xi=i32[2048]:randint(-1000,1000) sums=f32[8]:zero isums=i32[8]:zero
// LAUNCH: int_reductions grid=4 block=128 x=i32[512]:rand u=u32[512]:rand out=i32[2560]:zero
// LAUNCH: tile16_sum grid=2 block=128 x=f32[256]:rand xi=i32[256]:randint(-50,50) out=f32[256]:zero outi=i32[256]:zero
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__global__ void block_sum(const float* x, const int* xi, float* sums, int* isums) {
    __shared__ float partial[32];
    __shared__ int ipartial[32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    unsigned int i = blockIdx.x * block.size() + block.thread_rank();
    float v = cg::reduce(tile, x[i], cg::plus<float>());
    int iv = cg::reduce(tile, xi[i], cg::plus<int>());
    if (tile.thread_rank() == 0) {
        partial[tile.meta_group_rank()] = v;
        ipartial[tile.meta_group_rank()] = iv;
    }
    block.sync();
    if (tile.meta_group_rank() == 0) {
        unsigned int lane = tile.thread_rank();
        float p = lane < tile.meta_group_size() ? partial[lane] : 0.0f;
        int ip = lane < tile.meta_group_size() ? ipartial[lane] : 0;
        p = cg::reduce(tile, p, cg::plus<float>());
        ip = cg::reduce(tile, ip, cg::plus<int>());
        if (lane == 0) {
            sums[blockIdx.x] = p;
            isums[blockIdx.x] = ip;
        }
    }
}

__global__ void int_reductions(const int* x, const unsigned int* u, int* out) {
    auto block = cg::this_thread_block();
    auto tile = cg::tiled_partition<32>(block);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[5 * i] = cg::reduce(tile, x[i], cg::less<int>());
    out[5 * i + 1] = cg::reduce(tile, x[i], cg::greater<int>());
    out[5 * i + 2] = (int)cg::reduce(tile, u[i], cg::bit_and<unsigned int>());
    out[5 * i + 3] = (int)cg::reduce(tile, u[i], cg::bit_or<unsigned int>());
    out[5 * i + 4] = cg::reduce(tile, x[i], cg::bit_xor<int>()) ^ (int)cg::reduce(tile, u[i], cg::plus<unsigned int>());
}

__global__ void tile16_sum(const float* x, const int* xi, float* out, int* outi) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<16> t16 = cg::tiled_partition<16>(block);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = cg::reduce(t16, x[i], cg::plus<float>()) + (float)t16.meta_group_rank();
    outi[i] = cg::reduce(t16, xi[i], cg::plus<int>()) * 100 + (int)t16.thread_rank();
}
