// Loops, early exits (three EXITs in poly) and enough live values to need more registers.
__global__ void saxpy_loop(float a, const float* x, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

__global__ void poly(const double* x, double* y, int n, int terms) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = x[i], acc = 0.0, p = 1.0;
    for (int k = 0; k < terms; k++) { acc += p * (k + 1); p *= v; }
    if (acc < 0) return;
    y[i] = acc;
}
