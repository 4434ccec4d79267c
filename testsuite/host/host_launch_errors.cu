// Error handling as programs do it: launches with an invalid configuration report
// cudaErrorInvalidConfiguration through cudaGetLastError and the program goes on; a
// kernel that writes out of bounds is reported at the next synchronizing call, sticky.
// RUN: ptxc run %s
// tests/test_host_runtime.py: the names and strings are libcudart's.
#include <cstdio>
__global__ void fill(int* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = 2 * i;
}
__global__ void stray(int* p) { p[threadIdx.x] = 1; }

int main() {
    int* d;
    cudaMalloc(&d, 1024 * sizeof(int));
    fill<<<1, 2048>>>(d, 1024);                          // more than 1024 threads
    printf("block of 2048: %s\n", cudaGetErrorString(cudaGetLastError()));
    printf("then: %s\n", cudaGetErrorString(cudaGetLastError()));
    fill<<<1, dim3(32, 32, 2)>>>(d, 1024);
    cudaError_t e = cudaPeekAtLastError();
    printf("block 32x32x2: %s (%s), peeked: %s\n", cudaGetErrorName(e), cudaGetErrorString(e),
           cudaGetErrorName(cudaGetLastError()));
    fill<<<dim3(1, 100000), 32>>>(d, 1024);
    printf("grid y 100000: %s\n", cudaGetErrorName(cudaGetLastError()));
    fill<<<4, 256, 1 << 20>>>(d, 1024);                   // 1 MiB of shared memory
    printf("1 MiB shared: %s\n", cudaGetErrorName(cudaGetLastError()));
    printf("synchronize: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    fill<<<4, 256>>>(d, 1024);
    int h[1024];
    cudaError_t copy = cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    printf("valid launch: %s %s h[1023]=%d\n", cudaGetErrorName(cudaGetLastError()), cudaGetErrorName(copy), h[1023]);
    stray<<<1, 32>>>((int*)0);                             // a store through a null pointer
    e = cudaDeviceSynchronize();
    printf("fault: %s: %s\n", cudaGetErrorName(e), cudaGetErrorString(e));
    printf("memcpy after it: %s\n", cudaGetErrorName(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost)));
    printf("last error: %s, still: %s\n", cudaGetErrorName(cudaGetLastError()), cudaGetErrorName(cudaGetLastError()));
    return 0;
}
