// A program sized and configured by its command line: atoi, strtol (base 0, end
// pointer), atof; its exit status is main's return value.
// RUN: ptxc run %s -- 3000 0x40 1.5 label
// tests/test_host_runtime.py computes the expected output with NumPy.
#include <cstdio>
#include <cstdlib>
#include <cstring>
__global__ void ramp(float* out, int n, float step, int period) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = step * (float)(i % period);
}

int main(int argc, char** argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s N PERIOD STEP [LABEL]\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[1]);
    char* end;
    long period = strtol(argv[2], &end, 0);
    float step = (float)atof(argv[3]);
    const char* label = "none";
    if (argc > 4) label = argv[4];
    float* d;
    float* h = (float*)calloc(n, sizeof(float));
    cudaMalloc(&d, n * sizeof(float));
    ramp<<<(n + 255) / 256, 256>>>(d, n, step, (int)period);
    cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
    double sum = 0.0;
    float top = 0.0f;
    for (int i = 0; i < n; i++) { sum += h[i]; if (h[i] > top) top = h[i]; }
    printf("argc=%d n=%d period=%ld (parsed %d chars) step=%g label=%s (%d chars)\n", argc, n, period,
           (int)(end - argv[2]), step, label, (int)strlen(label));
    printf("sum=%.3f max=%g\n", sum, top);
    cudaFree(d);
    free(h);
    return n % 7;
}
