__global__ void warp_scan(const int* in, int* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i], lane = threadIdx.x & 31;
    for (int o = 1; o < 32; o <<= 1) { int t = __shfl_up_sync(0xffffffff, v, o); if (lane >= o) v += t; }
    out[i] = v;
}
__global__ void block_scan(int* data) {
    __shared__ int s[512];
    int t = threadIdx.x;
    s[t] = data[blockIdx.x * 512 + t];
    for (int o = 1; o < 512; o <<= 1) { __syncthreads(); int v = t >= o ? s[t - o] : 0; __syncthreads(); s[t] += v; }
    __syncthreads();
    data[blockIdx.x * 512 + t] = s[t];
}
