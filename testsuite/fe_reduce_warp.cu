// A two-level reduction: each warp sums with __shfl_down_sync, lane 0 of each warp
// writes its partial to shared memory, the first warp reduces the partials.  Integer
// sums (exact in any order) and a float sum whose order is fixed by the shuffles.
// LAUNCH: reduce_warp grid=8 block=256 in=i32[2048]:randint(-1000,1000) f=f32[2048]:rand out=i32[8]:zero fout=f32[8]:zero n=2048

__inline__ __device__ int warp_sum(int v) {
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}

__inline__ __device__ float warp_sum_f(float v) {
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}

__global__ void reduce_warp(const int* in, const float* f, int* out, float* fout, int n) {
    __shared__ int partial[32];
    __shared__ float fpartial[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
    int v = i < n ? in[i] : 0;
    float x = i < n ? f[i] : 0.0f;
    v = warp_sum(v);
    x = warp_sum_f(x);
    if (lane == 0) {
        partial[warp] = v;
        fpartial[warp] = x;
    }
    __syncthreads();
    if (warp == 0) {
        int nwarps = blockDim.x / warpSize;
        v = lane < nwarps ? partial[lane] : 0;
        x = lane < nwarps ? fpartial[lane] : 0.0f;
        v = warp_sum(v);
        x = warp_sum_f(x);
        if (lane == 0) {
            out[blockIdx.x] = v;
            fout[blockIdx.x] = x;
        }
    }
}
