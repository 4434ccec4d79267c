// Two streams, each copying its half in, running a kernel on it and copying it back
// (cudaMemcpyAsync from pinned memory, launches with a stream), then synchronizing.
// RUN: ptxc run %s
// tests/test_host_runtime.py computes the expected output with NumPy.
#include <cstdio>
#define STREAMS 2
#define CHECK(call) do { cudaError_t e = (call); if (e != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

__global__ void square_plus(const int* in, int* out, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * in[i] + k;
}

int main() {
    const int n = 4096, chunk = n / STREAMS;
    int *h_in, *h_out, *d_in, *d_out;
    CHECK(cudaMallocHost(&h_in, n * sizeof(int)));
    CHECK(cudaHostAlloc((void**)&h_out, n * sizeof(int), cudaHostAllocDefault));
    for (int i = 0; i < n; i++) { h_in[i] = i % 1000 - 500; h_out[i] = -1; }
    CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CHECK(cudaMalloc(&d_out, n * sizeof(int)));
    cudaStream_t s[STREAMS];
    CHECK(cudaStreamCreate(&s[0]));
    CHECK(cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking));
    CHECK(cudaMemsetAsync(d_out, 0, n * sizeof(int), s[0]));
    for (int k = 0; k < STREAMS; k++) {
        int off = k * chunk;
        CHECK(cudaMemcpyAsync(d_in + off, h_in + off, chunk * sizeof(int), cudaMemcpyHostToDevice, s[k]));
        square_plus<<<(chunk + 127) / 128, 128, 0, s[k]>>>(d_in + off, d_out + off, chunk, k + 1);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpyAsync(h_out + off, d_out + off, chunk * sizeof(int), cudaMemcpyDeviceToHost, s[k]));
    }
    for (int k = 0; k < STREAMS; k++)
        CHECK(cudaStreamSynchronize(s[k]));
    long long sum[STREAMS] = {0, 0};
    for (int i = 0; i < n; i++) sum[i / chunk] += h_out[i];
    printf("stream 0: %lld  stream 1: %lld  first %d last %d\n", sum[0], sum[1], h_out[0], h_out[n - 1]);
    // a device-to-device copy and cudaMemcpyDefault, on the default stream
    int* d_copy;
    CHECK(cudaMalloc(&d_copy, n * sizeof(int)));
    CHECK(cudaMemcpy(d_copy, d_out, n * sizeof(int), cudaMemcpyDeviceToDevice));
    int probe[2];
    CHECK(cudaMemcpy(probe, d_copy + chunk - 1, sizeof(probe), cudaMemcpyDefault));
    printf("across the halves: %d %d\n", probe[0], probe[1]);
    CHECK(cudaStreamQuery(s[0]));
    for (int k = 0; k < STREAMS; k++)
        CHECK(cudaStreamDestroy(s[k]));
    printf("destroyed stream: %s\n", cudaGetErrorName(cudaStreamSynchronize(s[0])));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFreeHost(h_in));
    CHECK(cudaFreeHost(h_out));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_copy));
    return 0;
}
