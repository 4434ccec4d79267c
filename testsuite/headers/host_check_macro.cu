// A host program as people write them: the CHECK macro, header constants on both sides.
// (no LAUNCH lines: tests/test_headers.py runs it with `ptxc run`)
#include <cstdio>
#include <cfloat>
#include <cmath>
#define CHECK(call) do { cudaError_t e = (call); if (e != cudaSuccess) { printf("%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)
__global__ void k(float* o) { o[threadIdx.x] = FLT_MAX; }
int main() {
  float* d; CHECK(cudaMalloc(&d, 4 * sizeof(float)));
  k<<<1, 4>>>(d);
  CHECK(cudaDeviceSynchronize());
  float h[4]; CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
  float m = INFINITY;
  printf("%g %d line %d\n", h[0], h[0] < m, __LINE__ - 2);
  return 0;
}
