// ERROR: 4:35: expected ')' before ';'
__global__ void k(float* a, int n) {
    int i = threadIdx.x;
    if (i < n) a[i] = (a[i] + 1.0f;
}
