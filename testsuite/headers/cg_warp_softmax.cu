// Softmax over rows, one warp per row, as written with cooperative groups: the row's
// max and sum by cg::reduce over a thread_block_tile<32> (greater, plus), expf, and
// the result scaled; a second form with the tile's shfl_xor written out.
// LAUNCH: softmax_warp grid=4 block=128 x=f32[16384]:rand y=f32[16384]:zero rows=16 cols=1024
// LAUNCH: softmax_shfl grid=4 block=128 x=f32[16384]:rand y=f32[16384]:zero rows=16 cols=1024
#include <cmath>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__global__ void softmax_warp(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if (row >= rows) return;
    const float* in = x + row * cols;
    float m = -INFINITY;
    for (int c = warp.thread_rank(); c < cols; c += warp.size()) m = fmaxf(m, in[c]);
    m = cg::reduce(warp, m, cg::greater<float>());
    float s = 0.0f;
    for (int c = warp.thread_rank(); c < cols; c += warp.size()) s += expf(in[c] - m);
    s = cg::reduce(warp, s, cg::plus<float>());
    float inv = 1.0f / s;
    for (int c = warp.thread_rank(); c < cols; c += warp.size()) y[row * cols + c] = expf(in[c] - m) * inv;
}

__global__ void softmax_shfl(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
    auto block = cg::this_thread_block();
    auto warp = cg::tiled_partition<32>(block);
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (row >= rows) return;
    float m = -INFINITY;
    for (int c = warp.thread_rank(); c < cols; c += 32) m = fmaxf(m, x[row * cols + c]);
    for (int o = 16; o > 0; o /= 2) m = fmaxf(m, warp.shfl_xor(m, o));
    float s = 0.0f;
    for (int c = warp.thread_rank(); c < cols; c += 32) s += __expf(x[row * cols + c] - m);
    for (int o = 16; o > 0; o /= 2) s += warp.shfl_xor(s, o);
    for (int c = warp.thread_rank(); c < cols; c += 32) y[row * cols + c] = __expf(x[row * cols + c] - m) / s;
}
