// Filter taps in constant memory set by cudaMemcpyToSymbol (whole, and one tap at an
// offset), a __device__ counter read back with cudaMemcpyFromSymbol and through
// cudaGetSymbolAddress.
// RUN: ptxc run %s
// tests/test_host_runtime.py computes the expected output with NumPy.
#include <cstdio>
#define TAPS 5
#define N 300
__constant__ float taps[TAPS];
__constant__ int radius;
__device__ unsigned int positives;

__global__ void convolve(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = 0.0f;
    for (int k = -radius; k <= radius; k++) {
        int j = i + k;
        if (j >= 0 && j < n) s += taps[k + radius] * in[j];
    }
    out[i] = s;
    if (s > 0.0f) atomicAdd(&positives, 1u);
}

int main() {
    const int n = N;
    float h_in[N], h_out[N];
    for (int i = 0; i < n; i++) h_in[i] = (float)((i * 37) % 23 - 11);
    float h_taps[TAPS] = {0.5f, 1.0f, 2.0f, 1.0f, 0.5f};
    int r = TAPS / 2;
    unsigned zero = 0;
    cudaMemcpyToSymbol(taps, h_taps, sizeof(h_taps));
    float middle = -3.0f;                  // taps[2] = -3: the offset form
    cudaMemcpyToSymbol(taps, &middle, sizeof(float), 2 * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpyToSymbol(radius, &r, sizeof(int));
    cudaMemcpyToSymbol(positives, &zero, sizeof(zero));
    float *d_in, *d_out;
    cudaMalloc(&d_in, sizeof(h_in));
    cudaMalloc(&d_out, sizeof(h_out));
    cudaMemcpy(d_in, h_in, sizeof(h_in), cudaMemcpyHostToDevice);
    convolve<<<(n + 63) / 64, 64>>>(d_in, d_out, n);
    cudaMemcpy(h_out, d_out, sizeof(h_out), cudaMemcpyDeviceToHost);
    float back[TAPS];
    cudaMemcpyFromSymbol(back, taps, sizeof(back));
    unsigned count = 0, again = 0;
    cudaMemcpyFromSymbol(&count, positives, sizeof(count));
    unsigned* where;
    cudaGetSymbolAddress((void**)&where, positives);
    cudaMemcpy(&again, where, sizeof(again), cudaMemcpyDeviceToHost);
    double sum = 0.0;
    for (int i = 0; i < n; i++) sum += h_out[i];
    printf("taps %g %g %g %g %g\n", back[0], back[1], back[2], back[3], back[4]);
    printf("out[0]=%g out[1]=%g out[n-1]=%g sum=%.2f positives=%u (%u)\n", h_out[0], h_out[1], h_out[n - 1], sum,
           count, again);
    cudaError_t e = cudaMemcpyToSymbol(taps, h_taps, sizeof(h_taps), sizeof(float));
    printf("past the end: %s: %s\n", cudaGetErrorName(e), cudaGetErrorString(e));
    cudaGetLastError();
    cudaFree(d_in);
    cudaFree(d_out);
    return 0;
}
