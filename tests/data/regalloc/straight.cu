// Straight-line kernels: 32-bit arithmetic, address math, many live values.
__global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
__global__ void copy_idx(int* out) {
    out[threadIdx.x] = threadIdx.x;
}
__global__ void sum8(const float* a, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float* p = a + i * 8;
    out[i] = p[0] + p[1] + p[2] + p[3] + p[4] + p[5] + p[6] + p[7];
}
__global__ void poly(const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    y[i] = ((v * 3.0f + 2.0f) * v - 1.5f) * v + 0.25f;
}
__global__ void mixed(const int* a, const int* b, int* c, int* d) {
    int i = threadIdx.x;
    int x = a[i], y = b[i];
    c[i] = x * y + (x ^ y);
    d[i] = (x >> 3) + (y << 2) - x;
}
__global__ void many_live(const float* a, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v0 = a[i], v1 = a[i + 64], v2 = a[i + 128], v3 = a[i + 192];
    float v4 = a[i + 256], v5 = a[i + 320], v6 = a[i + 384], v7 = a[i + 448];
    out[i] = v0 * v1 + v2 * v3;
    out[i + 64] = v4 * v5 + v6 * v7;
    out[i + 128] = v0 * v7 + v1 * v6;
    out[i + 192] = v2 * v5 + v3 * v4;
}
__global__ void idx2d(float* m, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) m[y * w + x] = m[y * w + x] * 2.0f + (float)x;
}
__global__ void three_out(const float* a, float* b, float* c, float* d) {
    int i = threadIdx.x;
    float v = a[i];
    b[i] = v + 1.0f;
    c[i] = v * v;
    d[i] = v - 2.0f;
}
__global__ void select_max(const int* a, const int* b, int* c) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    int x = a[i], y = b[i];
    c[i] = x > y ? x - y : y * 2;
}
__global__ void fma_chain(const float* a, const float* b, float* c, float s, float t) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    float x = a[i], y = b[i];
    c[i] = fmaf(x, s, y) * t + fmaf(y, t, x);
}
