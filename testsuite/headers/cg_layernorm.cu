// LayerNorm over rows with cooperative groups, one block per row: the mean and the
// variance by warp-level cg::reduce and a shared-memory pass over the warps, block
// syncs through block.sync() and cg::sync(block), rsqrtf, gamma and beta; the output
// also as half (__float2half_rn), as mixed-precision models store activations.
// LAUNCH: layernorm grid=8 block=128 x=f32[8192]:rand gamma=f32[1024]:rand beta=f32[1024]:rand y=f32[8192]:zero yh=u16[8192]:zero cols=1024 eps=0.00001
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_fp16.h>
namespace cg = cooperative_groups;

__device__ float block_sum(cg::thread_block& block, cg::thread_block_tile<32>& warp, float v, float* scratch) {
    v = cg::reduce(warp, v, cg::plus<float>());
    if (warp.thread_rank() == 0) scratch[warp.meta_group_rank()] = v;
    block.sync();
    float total = warp.thread_rank() < warp.meta_group_size() ? scratch[warp.thread_rank()] : 0.0f;
    total = cg::reduce(warp, total, cg::plus<float>());
    cg::sync(block);
    return total;
}

__global__ void layernorm(const float* __restrict__ x, const float* __restrict__ gamma,
                          const float* __restrict__ beta, float* __restrict__ y, __half* yh, int cols, float eps) {
    __shared__ float scratch[32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    const float* row = x + blockIdx.x * cols;
    float s = 0.0f;
    for (int c = block.thread_rank(); c < cols; c += block.size()) s += row[c];
    float mean = block_sum(block, warp, s, scratch) / cols;
    float q = 0.0f;
    for (int c = block.thread_rank(); c < cols; c += block.size()) {
        float d = row[c] - mean;
        q += d * d;
    }
    float rstd = rsqrtf(block_sum(block, warp, q, scratch) / cols + eps);
    for (int c = block.thread_rank(); c < cols; c += block.size()) {
        float v = (row[c] - mean) * rstd * gamma[c] + beta[c];
        y[blockIdx.x * cols + c] = v;
        yh[blockIdx.x * cols + c] = __float2half_rn(v);
    }
}
