// More control flow: loops with several carried values, branches joining values.
__global__ void fib(int* out, int n) {
    int a = 0, b = 1;
    for (int k = 0; k < n; k++) { int t = a + b; a = b; b = t; }
    out[threadIdx.x] = a;
}
__global__ void pow_loop(const float* x, float* y, int n) {
    int i = threadIdx.x;
    float v = x[i], r = 1.0f;
    for (int k = 0; k < n; k++) r *= v;
    y[i] = r;
}
__global__ void join(const int* a, int* b) {
    int i = threadIdx.x;
    int v = a[i], r;
    if (v > 10) r = v * 3; else if (v < -10) r = v - 7; else r = 0;
    b[i] = r + i;
}
__global__ void search(const int* a, int* out, int n, int key) {
    int i = 0;
    while (i < n && a[i] != key) i++;
    out[threadIdx.x] = i;
}
__global__ void grid_stride(const float* a, float* b, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        b[i] = a[i] * a[i];
}
__global__ void dloop(const double* a, double* out, int n) {
    double s = 0.0, p = 1.0;
    for (int k = 0; k < n; k++) { s += a[k]; p *= a[k]; }
    out[0] = s; out[1] = p;
}
__global__ void cond_store(const float* a, float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = a[i];
    if (v > 0.0f) b[i] = v; else c[i] = -v;
}
__global__ void two_loops(float* a, int n) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += a[k];
    for (int k = 0; k < n; k++) a[k] -= s;
}
__global__ void smem_stencil(const float* in, float* out) {
    __shared__ float t[258];
    int i = blockIdx.x * 256 + threadIdx.x;
    t[threadIdx.x + 1] = in[i];
    if (threadIdx.x == 0) t[0] = in[i > 0 ? i - 1 : 0];
    if (threadIdx.x == 255) t[257] = in[i + 1];
    __syncthreads();
    out[i] = t[threadIdx.x] + t[threadIdx.x + 1] + t[threadIdx.x + 2];
}
__global__ void popc_loop(const unsigned* a, int* out, int n) {
    int c = 0;
    for (int k = threadIdx.x; k < n; k += 32) c += __popc(a[k]);
    out[threadIdx.x] = c;
}
