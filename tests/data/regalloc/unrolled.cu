// Loops the compiler unrolls: many values, pipelined loads.
__global__ void unroll4(const float* a, float* out, int n) {
    float s = 0.0f;
    #pragma unroll 4
    for (int k = 0; k < n; k++) s += a[k];
    out[threadIdx.x] = s;
}
__global__ void dot8(const float* a, const float* b, float* out) {
    int i = threadIdx.x * 8;
    float s = 0.0f;
    #pragma unroll
    for (int k = 0; k < 8; k++) s += a[i + k] * b[i + k];
    out[threadIdx.x] = s;
}
__global__ void transpose(const float* in, float* out, int w, int h) {
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    if (x < w && y < h) tile[threadIdx.y][threadIdx.x] = in[y * w + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
    if (x < h && y < w) out[y * h + x] = tile[threadIdx.x][threadIdx.y];
}
__global__ void shuffle_sum(const float* a, float* out) {
    float v = a[threadIdx.x];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    if ((threadIdx.x & 31) == 0) out[threadIdx.x / 32] = v;
}
__global__ void histo(const unsigned char* in, int* h, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = blockDim.x * gridDim.x;
    for (; i < n; i += stride) atomicAdd(&h[in[i]], 1);
}
__global__ void fast_math(const float* a, float* b) {
    int i = threadIdx.x;
    float v = a[i];
    b[i] = __expf(v) + __sinf(v) * __fdividef(v, 3.0f);
}
