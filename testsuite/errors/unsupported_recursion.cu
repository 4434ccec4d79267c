// ERROR: 5:29: unsupported feature: recursive call of 'fact'
// __device__ functions are inlined: recursion cannot be.

__device__ int fact(int n) {
    return n <= 1 ? 1 : n * fact(n - 1);
}

__global__ void k(int* out) {
    out[threadIdx.x] = fact(threadIdx.x);
}
