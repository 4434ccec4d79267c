// Warp votes and masks: __ballot_sync, __any_sync, __all_sync, __activemask inside a
// divergent branch, __popc of a ballot, and __syncwarp.
// LAUNCH: warp_vote grid=2 block=64 v=i32[128]:randint(-10,10) out=u32[768]:zero

__global__ void warp_vote(const int* v, unsigned* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int x = v[i];
    unsigned pos = __ballot_sync(0xffffffff, x > 0);
    int any_big = __any_sync(0xffffffff, x > 8);
    int all_small = __all_sync(0xffffffff, x < 10);
    unsigned active = 0;
    if (x & 1)
        active = __activemask();
    __syncwarp();
    unsigned mine = __ballot_sync(0xffffffff, x == v[i ^ 1]);
    out[6 * i] = pos;
    out[6 * i + 1] = any_big;
    out[6 * i + 2] = all_small;
    out[6 * i + 3] = active;
    out[6 * i + 4] = __popc(pos) + __popc(mine) * 100;
    out[6 * i + 5] = __any_sync(0x0000ffff, x == 0) * 2 + __all_sync(0xffff0000, x != 0);
}
