// A block-wide tree reduction in shared memory, one partial sum per block.
// LAUNCH: block_reduce grid=64 block=256 in=f32[16384]:rand out=f32[64]:zero n=16384

#define BLOCK 256

__global__ void block_reduce(const float* in, float* out, int n) {
    __shared__ float buf[BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            buf[tid] += buf[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = buf[0];
}
