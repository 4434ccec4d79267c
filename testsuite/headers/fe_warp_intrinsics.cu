// The warp intrinsics of sm_80+: __reduce_{add,min,max,and,or,xor}_sync on int and
// unsigned, __match_any_sync / __match_all_sync on 32- and 64-bit values, floats and
// doubles (their bits), __syncwarp with and without a mask, the fences and
// __nanosleep; __launch_bounds__ written before and after __global__.
// LAUNCH: warp_reduce grid=2 block=128 x=i32[256]:randint(-50,50) u=u32[256]:rand out=i32[1536]:zero
// LAUNCH: warp_match grid=2 block=64 keys=i32[128]:randint(0,3) keys64=u64[128]:randint(0,2) fk=f32[128]:randint(0,1) dk=f64[128]:randint(0,1) out=u32[768]:zero
// LAUNCH: fenced_sleep grid=1 block=64 data=i32[64]:iota flags=i32[64]:zero
#include <climits>

__launch_bounds__(128) __global__ void warp_reduce(const int* x, const unsigned* u, int* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = x[i];
    unsigned w = u[i];
    out[i] = __reduce_add_sync(0xffffffffu, v);
    out[256 + i] = __reduce_min_sync(0xffffffffu, v);
    out[512 + i] = __reduce_max_sync(0xffffffffu, v);
    out[768 + i] = (int)__reduce_and_sync(0xffffffffu, w);
    out[1024 + i] = (int)__reduce_or_sync(0xffffffffu, w) ^ (int)__reduce_xor_sync(0xffffffffu, w);
    // the lower half of each warp alone
    if ((threadIdx.x & 31) < 16)
        out[1280 + i] = (int)__reduce_max_sync(0x0000ffffu, w) + __reduce_add_sync(0x0000ffffu, v)
                        + (int)__reduce_min_sync(0x0000ffffu, (unsigned)v);
}

__global__ void __launch_bounds__(64, 4) warp_match(const int* keys, const unsigned long long* keys64,
                                                     const float* fk, const double* dk, unsigned* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int pred = 0, pred64 = 0;
    out[i] = __match_any_sync(0xffffffffu, keys[i]);
    out[128 + i] = __match_any_sync(0xffffffffu, keys64[i]);
    out[256 + i] = __match_any_sync(0xffffffffu, fk[i]) ^ __match_any_sync(0xffffffffu, dk[i]);
    out[384 + i] = __match_all_sync(0xffffffffu, keys[i] & 0, &pred);
    out[512 + i] = __match_all_sync(0xffffffffu, keys64[i], &pred64);
    out[640 + i] = pred * 2 + pred64;
}

__global__ void fenced_sleep(int* data, int* flags) {
    int t = threadIdx.x;
    data[t] = data[t] * 3;
    __threadfence_block();
    __syncwarp();
    data[t] += data[t ^ 1];
    __syncwarp(0xffffffffu);
    flags[t] = data[t] + INT_MAX / 1000000;
}

// __threadfence() and __threadfence_system() become MEMBAR.SC + ERRBAR + CCTL.IVALL,
// and __nanosleep NANOSLEEP, which the emulator's table lacks: compiled (ptxas accepts ptxc's PTX), not launched.
__global__ void publish(int* data, volatile int* flag) {
    data[threadIdx.x] = threadIdx.x * 7;
    __threadfence();
    if (threadIdx.x == 0) *flag = 1;
    __threadfence_system();
    __nanosleep(100);
    __nanosleep(threadIdx.x * 2);
}
