__global__ void trig(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __sinf(x[i]) * __cosf(x[i]) + __logf(fabsf(x[i]) + 1.f) + exp2f(x[i]);
}
__global__ void fdiv_sqrt(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = sqrtf(a[i]) / b[i];
}
__global__ void conv(const float* a, int* b, unsigned* c, double* d, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float f = a[i]; b[i] = __float2int_rn(f); c[i] = (unsigned)f; d[i] = (double)f * 2.0; }
}
