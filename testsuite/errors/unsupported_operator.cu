// ERROR: 4:14: unsupported feature: operator overloading
// Overloaded operators are named (not yet in the subset).
struct V { float x, y; };
__device__ V operator+(V a, V b) { V r; r.x = a.x + b.x; r.y = a.y + b.y; return r; }
__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }
