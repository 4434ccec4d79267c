// 64-bit integers, doubles, vector loads and stores of different widths.
__global__ void add64(const long long* a, const long long* b, long long* c) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    c[i] = a[i] + b[i];
}
__global__ void mul64(const unsigned long long* a, unsigned long long* c, unsigned long long k) {
    int i = threadIdx.x;
    c[i] = a[i] * k + (a[i] >> 7);
}
__global__ void dadd(const double* a, const double* b, double* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
__global__ void dfma(const double* a, const double* b, double* c, double s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    c[i] = a[i] * s + b[i] * a[i];
}
__global__ void f2d(const float* a, double* b) {
    int i = threadIdx.x;
    b[i] = (double)a[i] * 0.5;
}
__global__ void vec2(const float2* a, float2* b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float2 v = a[i];
    b[i] = make_float2(v.x + v.y, v.x - v.y);
}
__global__ void vec4(const float4* a, float4* b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 v = a[i];
    b[i] = make_float4(v.x * v.y, v.y + v.z, v.z - v.w, v.w * 2.0f);
}
__global__ void bytes(const unsigned char* a, const short* b, int* c) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    c[i] = a[i] + b[i];
}
__global__ void idx64(float* a, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = a[i] * 3.0f;
}
__global__ void ptr_chase(int** p, int* out) {
    int i = threadIdx.x;
    out[i] = *p[i] + 1;
}
__global__ void i2d_sum(const int* a, double* out) {
    int i = threadIdx.x;
    out[i] = (double)a[i] + (double)a[i + 1] * 2.0;
}
