// ERROR: 4:5: unsupported feature: virtual functions
// Virtual functions are outside the subset, and named as such (not a parse error).
struct Shape {
    virtual float area();
};
__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }
