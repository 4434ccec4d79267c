// Tiles smaller than a warp and coalesced groups: an inclusive scan in tiles of 16 with
// shfl_up, tile votes (any, all, ballot), the block's index helpers, and a
// warp-aggregated atomic through cg::coalesced_threads() (one atomicAdd per group).
// LAUNCH: tile_scan grid=2 block=64 x=i32[128]:randint(-9,9) out=i32[128]:zero votes=u32[128]:zero
// LAUNCH: aggregated grid=4 block=128 x=i32[512]:randint(0,9) counter=i32[1]:zero slots=i32[512]:zero
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void tile_scan(const int* x, int* out, unsigned int* votes) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
    int i = block.group_index().x * block.num_threads() + block.thread_rank();
    int v = x[i];
    for (int d = 1; d < 16; d *= 2) {
        int up = tile.shfl_up(v, d);
        if (tile.thread_rank() >= (unsigned int)d) v += up;
    }
    out[i] = v;
    unsigned int b = tile.ballot(v > 0);
    votes[i] = b | (tile.any(v > 20) << 16) | (tile.all(v > -40) << 17) | (block.thread_index().x << 18);
}

__global__ void aggregated(const int* x, int* counter, int* slots) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (x[i] > 4) {
        cg::coalesced_group active = cg::coalesced_threads();
        int base = 0;
        if (active.thread_rank() == 0) base = atomicAdd(counter, (int)active.size());
        slots[i] = (int)active.thread_rank() + 1000 * (int)active.size();
    }
}
