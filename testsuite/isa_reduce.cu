// Reductions and scans: shared-memory tree reduction, warp-shuffle reduction,
// an inclusive warp scan, and a grid-wide sum finished with atomics.
// LAUNCH: block_sum grid=64 block=256 in=f32[16384]:rand out=f32[64]:zero n=16384 ulp=4
// LAUNCH: warp_sum grid=32 block=128 in=f32[4096]:rand total=f32[1]:zero n=4096 ulp=64
// LAUNCH: warp_scan grid=16 block=128 in=i32[2048]:randint(-100,100) out=i32[2048]:zero n=2048
// LAUNCH: int_sum grid=16 block=256 in=i32[4096]:randint(-1000,1000) total=i64[1]:zero n=4096
// LAUNCH: dot grid=32 block=256 a=f64[8192]:rand b=f64[8192]:rand partial=f64[32]:zero n=8192 ulp=8

__global__ void block_sum(const float* in, float* out, int n) {
    __shared__ float buf[256];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x * 2 + tid;
    float v = 0.0f;
    if (i < n) v = in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    buf[tid] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) buf[tid] += buf[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        volatile float* vb = buf;
        vb[tid] += vb[tid + 32]; vb[tid] += vb[tid + 16]; vb[tid] += vb[tid + 8];
        vb[tid] += vb[tid + 4]; vb[tid] += vb[tid + 2]; vb[tid] += vb[tid + 1];
    }
    if (tid == 0) out[blockIdx.x] = buf[0];
}

__device__ __forceinline__ float warp_reduce(float v) {
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

__global__ void warp_sum(const float* in, float* total, int n) {
    __shared__ float partial[32];
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        v += in[i];
    v = warp_reduce(v);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (blockDim.x >> 5) ? partial[lane] : 0.0f;
        v = warp_reduce(v);
        if (lane == 0) atomicAdd(total, v);
    }
}

__global__ void warp_scan(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32;
    int v = i < n ? in[i] : 0;
    for (int d = 1; d < 32; d *= 2) {
        int up = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += up;
    }
    if (i < n) out[i] = v;
}

__global__ void int_sum(const int* in, long long* total, int n) {
    __shared__ int acc;
    if (threadIdx.x == 0) acc = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&acc, in[i]);
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd((unsigned long long*)total, (unsigned long long)(long long)acc);
}

__global__ void dot(const double* a, const double* b, double* partial, int n) {
    __shared__ double cache[256];
    double t = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        t += a[i] * b[i];
    cache[threadIdx.x] = t;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) cache[threadIdx.x] += cache[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = cache[0];
}
