// An inclusive prefix sum within a block (Hillis-Steele, double-buffered in shared
// memory), then each block's total added by a second kernel.
// LAUNCH: block_scan grid=4 block=256 in=i32[1024]:randint(-50,50) out=i32[1024]:zero sums=i32[4]:zero n=1024
// LAUNCH: add_offsets grid=4 block=256 out=i32[1024]:zero sums=i32[4]:zero n=1024

__global__ void block_scan(const int* in, int* out, int* sums, int n) {
    __shared__ int buf[2][256];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    int src = 0;
    buf[src][t] = i < n ? in[i] : 0;
    __syncthreads();
    for (int offset = 1; offset < blockDim.x; offset <<= 1) {
        int v = buf[src][t];
        if (t >= offset)
            v += buf[src][t - offset];
        buf[1 - src][t] = v;
        src = 1 - src;
        __syncthreads();
    }
    if (i < n)
        out[i] = buf[src][t];
    if (t == blockDim.x - 1)
        sums[blockIdx.x] = buf[src][t];
}

__global__ void add_offsets(int* out, const int* sums, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int offset = 0;
    for (int b = 0; b < blockIdx.x; b++)
        offset += sums[b];
    if (i < n)
        out[i] += offset;
}
