// ERROR: 4:18: use of undeclared identifier 'idx'
__global__ void k(float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[idx] = 0.0f;
}
