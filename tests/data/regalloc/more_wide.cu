// More 64-bit work: double math, 64-bit integer compare/shift, mixed widths.
__global__ void dpoly(const double* x, double* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double v = x[i];
    y[i] = (v * 3.0 + 2.0) * v + 1.0;
}
__global__ void d2f(const double* a, float* b) {
    int i = threadIdx.x;
    b[i] = (float)(a[i] * a[i]);
}
__global__ void dmix(const double* a, const float* b, double* c) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    c[i] = a[i] + (double)b[i] * a[i + 1];
}
__global__ void ll_cmp(const long long* a, const long long* b, int* c) {
    int i = threadIdx.x;
    c[i] = a[i] < b[i] ? 1 : 2;
}
__global__ void ll_shift(const unsigned long long* a, unsigned long long* b, int s) {
    int i = threadIdx.x;
    b[i] = (a[i] << s) | (a[i] >> (64 - s));
}
__global__ void ll_sum3(const long long* a, long long* b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    b[i] = a[3 * i] + a[3 * i + 1] + a[3 * i + 2];
}
__global__ void int2_ops(const int2* a, int2* b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int2 v = a[i];
    b[i] = make_int2(v.x * v.y, v.x + v.y);
}
__global__ void double2_ops(const double2* a, double* b) {
    int i = threadIdx.x;
    double2 v = a[i];
    b[i] = v.x * v.y;
}
__global__ void float4_sum(const float4* a, float* b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 v = a[i];
    b[i] = v.x + v.y + v.z + v.w;
}
__global__ void u64_index(const float* a, float* b, unsigned long long off) {
    unsigned long long i = threadIdx.x + off;
    b[i] = a[i] * 2.0f;
}
__global__ void dconst(double* a) {
    int i = threadIdx.x;
    a[i] = a[i] * 1.5 + 0.25;
}
__global__ void mul_hi(const unsigned* a, unsigned* b) {
    int i = threadIdx.x;
    b[i] = __umulhi(a[i], 0x9e3779b9u) + (unsigned)((unsigned long long)a[i] * a[i] >> 32);
}
