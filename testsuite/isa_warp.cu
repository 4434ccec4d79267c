// Warp-level primitives: shuffles of every kind, votes, ballots, match, active masks,
// __syncwarp and warp-level reductions.
// LAUNCH: shuffles grid=4 block=128 in=i32[512]:rand out=i32[2048]:zero fin=f32[512]:rand fout=f32[512]:zero din=f64[512]:rand dout=f64[512]:zero
// LAUNCH: votes grid=4 block=128 in=i32[512]:randint(-3,3) out=u32[2048]:zero
// LAUNCH: matches grid=2 block=64 in=i32[128]:randint(0,4) out=u32[256]:zero
// LAUNCH: warp_reduce_ops grid=2 block=64 in=u32[128]:randint(0,1000) out=u32[16]:zero
// LAUNCH: divergent_sync grid=2 block=64 in=i32[128]:randint(0,9) out=i32[128]:zero

__global__ void shuffles(const int* in, int* out, const float* fin, float* fout, const double* din, double* dout) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    out[4 * i + 0] = __shfl_sync(0xffffffffu, v, 3);
    out[4 * i + 1] = __shfl_xor_sync(0xffffffffu, v, 5);
    out[4 * i + 2] = __shfl_up_sync(0xffffffffu, v, 2, 16);
    out[4 * i + 3] = __shfl_down_sync(0xffffffffu, v, 1, 8) + __shfl_sync(0xffffffffu, v, in[i] & 31);
    fout[i] = __shfl_xor_sync(0xffffffffu, fin[i], 16) * 2.0f;
    dout[i] = __shfl_sync(0xffffffffu, din[i], (threadIdx.x + 1) & 31);
}

__device__ __forceinline__ unsigned lanemask_lt() {
    unsigned m;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
}

__global__ void votes(const int* in, unsigned* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    out[4 * i + 0] = __ballot_sync(0xffffffffu, v > 0);
    out[4 * i + 1] = __all_sync(0xffffffffu, v >= -3) + 2 * __any_sync(0xffffffffu, v == 3);
    out[4 * i + 2] = __activemask() & lanemask_lt();
    out[4 * i + 3] = __popc(__ballot_sync(0xffffffffu, v & 1)) + __uni_sync(0xffffffffu, v);
}

__global__ void matches(const int* in, unsigned* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int pred;
    out[2 * i] = __match_any_sync(0xffffffffu, in[i]);
    out[2 * i + 1] = __match_all_sync(0xffffffffu, in[i] / 8, &pred) + pred;
}

__global__ void warp_reduce_ops(const unsigned* in, unsigned* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = in[i];
    unsigned s = __reduce_add_sync(0xffffffffu, v);
    unsigned m = __reduce_max_sync(0xffffffffu, v);
    unsigned o = __reduce_or_sync(0xffffffffu, v);
    int lo = __reduce_min_sync(0xffffffffu, (int)v - 500);
    if ((threadIdx.x & 31) == 0) {
        int w = i / 32;
        out[4 * w] = s; out[4 * w + 1] = m; out[4 * w + 2] = o;
        out[4 * w + 3] = (unsigned)lo;
    }
}

__global__ void divergent_sync(const int* in, int* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    unsigned mask = __ballot_sync(0xffffffffu, v & 1);
    if (v & 1) {
        int w = __shfl_sync(mask, v, __ffs(mask) - 1);
        __syncwarp(mask);
        v += w;
    } else {
        __syncwarp(~mask);
        v -= 1;
    }
    __syncwarp();
    out[i] = v;
}
