// Branches and loops: values live across blocks and around back edges.
__global__ void ifelse(const float* a, float* b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = a[i];
    if (v > 0.0f) b[i] = v * 2.0f;
    else b[i + 1] = v - 1.0f;
}
__global__ void sumloop(const float* a, float* out, int n) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += a[k * blockDim.x + threadIdx.x];
    out[threadIdx.x] = s;
}
__global__ void sumloop64(const double* a, double* out, int n) {
    double s = 0.0;
    for (int k = threadIdx.x; k < n; k += blockDim.x) s += a[k];
    out[threadIdx.x] = s;
}
__global__ void countdown(int* out, int n) {
    int c = 0;
    while (n > 1) { n = (n & 1) ? 3 * n + 1 : n >> 1; c++; }
    out[threadIdx.x] = c;
}
__global__ void nested(float* out, int n, int m) {
    float s = 0.0f;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            s += (float)(i * j + threadIdx.x);
    out[threadIdx.x] = s;
}
__global__ void matmul(const float* A, const float* B, float* C, int n) {
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < n && c < n) {
        float s = 0.0f;
        for (int k = 0; k < n; k++) s += A[r * n + k] * B[k * n + c];
        C[r * n + c] = s;
    }
}
__global__ void early(const int* a, int* b, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    int v = a[i];
    if (v < 0) { b[i] = -v; return; }
    b[i] = v * 3;
}
__global__ void shared_rev(int* d, int n) {
    __shared__ int s[256];
    int t = threadIdx.x;
    s[t] = d[t];
    __syncthreads();
    d[t] = s[n - t - 1];
}
__global__ void reduce(const float* in, float* out) {
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
__global__ void atomics(int* counter, const int* a) {
    int v = a[threadIdx.x];
    if (v > 3) atomicAdd(counter, v);
}
__global__ void stencil(const float* a, float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) b[i] = 0.25f * a[i - 1] + 0.5f * a[i] + 0.25f * a[i + 1];
}
__global__ void divmod(const int* a, int* q, int* r, int d) {
    int i = threadIdx.x;
    q[i] = a[i] / d;
    r[i] = a[i] % d;
}
