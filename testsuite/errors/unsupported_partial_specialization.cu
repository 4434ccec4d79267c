// ERROR: 5:1: unsupported feature: partial specialization of class templates
// Class templates and their full specializations compile; partial ones are named.
template <typename T>
struct Traits { T zero; };
template <typename T>
struct Traits<T*> { T* zero; };
__global__ void k(float* data) { data[threadIdx.x] = 1.0f; }
