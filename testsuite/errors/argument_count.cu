// ERROR: 6:12: too few arguments to function call, expected 2, have 1
__device__ float scale(float x, float s) { return x * s; }

__global__ void k(float* a) {
    int i = threadIdx.x;
    a[i] = scale(a[i]);
}
