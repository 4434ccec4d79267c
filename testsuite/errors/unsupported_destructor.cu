// ERROR: 5:5: unsupported feature: destructors
// Classes with constructors and member functions compile; destructors are named.
struct Buffer {
    float* p;
    ~Buffer() {}
};
__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }
