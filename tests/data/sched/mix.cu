__global__ void k_shared(float* out, const float* in, int n) {
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    for (int o = 128; o > 0; o >>= 1) { if (t < o) s[t] += s[t + o]; __syncthreads(); }
    if (t == 0) out[blockIdx.x] = s[0];
}
__global__ void k_atomic(int* c, const int* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(c + (in[i] & 15), 1);
    int old = atomicCAS(c, 0, i);
    if (old == 3) c[1] = atomicExch(c + 2, old);
}
__global__ void k_double(double* y, const double* x, double a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i] / (x[i] + 1.0);
}
__global__ void k_math(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = sinf(x[i]) + expf(x[i]) * rsqrtf(x[i]) + x[i] / y[i];
}
__global__ void k_int(int* y, const int* x, int d, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] / d + x[i] % 7 + __popc(x[i]) + __clz(x[i]) + (int)(x[i] * 1.5f);
}
__global__ void k_shfl(float* y, const float* x) {
    float v = x[threadIdx.x];
    for (int o = 16; o; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    if (__any_sync(0xffffffff, v > 0.f)) y[threadIdx.x] = v;
}
__global__ void k_loop(float* y, const float* x, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.f;
    for (int j = 0; j < m; ++j) acc = acc * 0.5f + x[(i + j) % n];
    y[i] = acc;
}
__global__ void k_vec(float4* y, const float4* x, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) { float4 v = x[i]; v.x += v.w; v.y *= v.z; y[i] = v; }
}
__global__ void k_u64(unsigned long long* y, const unsigned long long* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 12345ull + (x[i] >> 7) / 3ull;
}
