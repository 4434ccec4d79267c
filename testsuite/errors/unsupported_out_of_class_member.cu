// ERROR: 5:21: unsupported feature: member functions defined outside their class
// A member function is defined inside its class, or it is named as unsupported.
struct Acc {
    float sum;
    __device__ void add(float x);
};
__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }
