// Timing a kernel with CUDA events, as the CUDA samples do; the size comes from argv.
// RUN: ptxc run %s -- 5000
// tests/test_host_runtime.py computes the expected output with NumPy (the buffer) and
// libcudart (the error names); the elapsed time itself is only checked to be positive.
#include <cstdio>
#include <cstdlib>
#define CHECK(call) do { cudaError_t e = (call); if (e != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

__global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

int main(int argc, char** argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1024;
    float a = argc > 2 ? (float)atof(argv[2]) : 2.0f;
    size_t bytes = n * sizeof(float);
    float* x = (float*)malloc(bytes);
    float* y = (float*)malloc(bytes);
    for (int i = 0; i < n; i++) { x[i] = (float)(i % 100) * 0.25f; y[i] = (float)(i % 7); }
    float *dx, *dy;
    CHECK(cudaMalloc(&dx, bytes));
    CHECK(cudaMalloc(&dy, bytes));
    CHECK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dy, y, bytes, cudaMemcpyHostToDevice));

    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventRecord(start, 0));
    saxpy<<<(n + 255) / 256, 256>>>(n, a, dx, dy);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop, 0));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost));

    double sum = 0.0;
    for (int i = 0; i < n; i++) sum += y[i];
    printf("n=%d a=%g y[0]=%g y[n-1]=%g sum=%.2f\n", n, a, y[0], y[n - 1], sum);
    printf("kernel time positive: %s\n", ms > 0.0f ? "yes" : "no");

    cudaEvent_t untimed;
    CHECK(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
    CHECK(cudaEventRecord(untimed));
    CHECK(cudaEventQuery(untimed));
    float none;
    cudaError_t e = cudaEventElapsedTime(&none, start, untimed);
    printf("elapsed with an untimed event: %s\n", cudaGetErrorName(e));
    printf("last error: %s\n", cudaGetErrorName(cudaGetLastError()));
    printf("last error now: %s\n", cudaGetErrorName(cudaGetLastError()));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaEventDestroy(untimed));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    free(x);
    free(y);
    return 0;
}
