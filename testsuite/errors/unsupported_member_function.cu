// ERROR: 5:5: unsupported feature: member functions and constructors
// Structs with member functions are named (not yet in the subset).
struct Acc {
    float sum;
    __device__ void add(float x) { sum += x; }
};
__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }
