// Managed memory written by the host, updated by a kernel, read by the host without a
// copy; the device described by cudaGetDeviceProperties and cudaDeviceGetAttribute
// (the compute capability's facts only: the product's are the emulator's model).
// RUN: ptxc run %s
// tests/test_host_runtime.py computes the expected output with NumPy and the emulated
// architecture's limits.
#include <cstdio>
__global__ void bump(int* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = v[i] * 3 + 1;
}

int main() {
    int count = 0, device = -1;
    cudaGetDeviceCount(&count);
    cudaSetDevice(0);
    cudaGetDevice(&device);
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    int warp, threads, dimz, optin;
    cudaDeviceGetAttribute(&warp, cudaDevAttrWarpSize, 0);
    cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerBlock, 0);
    cudaDeviceGetAttribute(&dimz, cudaDevAttrMaxBlockDimZ, 0);
    cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
    printf("devices %d, device %d: compute capability %d.%d\n", count, device, prop.major, prop.minor);
    printf("warp %d (%d), threads/block %d (%d), block dims %d %d %d (%d), grid %d %d %d\n", prop.warpSize, warp,
           prop.maxThreadsPerBlock, threads, prop.maxThreadsDim[0], prop.maxThreadsDim[1], prop.maxThreadsDim[2],
           dimz, prop.maxGridSize[0], prop.maxGridSize[1], prop.maxGridSize[2]);
    printf("shared/block %zu, opt-in %zu (%d), constant %zu, registers/block %d\n", prop.sharedMemPerBlock,
           prop.sharedMemPerBlockOptin, optin, prop.totalConstMem, prop.regsPerBlock);
    printf("threads/SM %d, blocks/SM %d, shared/SM %zu\n", prop.maxThreadsPerMultiProcessor,
           prop.maxBlocksPerMultiProcessor, prop.sharedMemPerMultiprocessor);
    printf("other device: %s\n", cudaGetErrorName(cudaSetDevice(count)));
    const int n = 1000;
    int* v;
    cudaMallocManaged(&v, n * sizeof(int));
    for (int i = 0; i < n; i++) v[i] = i - 500;
    bump<<<(n + 127) / 128, 128>>>(v, n);
    cudaDeviceSynchronize();
    long long sum = 0;
    for (int i = 0; i < n; i++) sum += v[i];
    printf("managed: v[0]=%d v[999]=%d sum=%lld\n", v[0], v[n - 1], sum);
    cudaFree(v);
    return 0;
}
