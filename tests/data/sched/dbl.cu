__global__ void daxpy(double a, const double* x, double* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
__global__ void ddot_partial(const double* x, const double* y, double* out, int n) {
    double s = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) s += x[i] * y[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
__global__ void dsqrt(double* y, const double* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = sqrt(x[i]);
}
