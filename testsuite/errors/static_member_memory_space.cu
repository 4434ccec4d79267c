// ERROR: 4:25: memory qualifier on data member is not allowed
// As nvcc says: a static data member is a host variable; __device__ does not apply to it.
struct Counter { static int hits; };
__device__ int Counter::hits;
__global__ void k(int* p) { p[0] = 1; }
