// ERROR: 4:5: read-only variable is not assignable
__global__ void k(const float* a, int n) {
    int i = threadIdx.x;
    a[i] = 1.0f;
}
