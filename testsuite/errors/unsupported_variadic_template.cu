// ERROR: 3:19: unsupported feature: variadic templates
// Parameter packs are named.
template <typename... Ts>
__device__ int count(Ts... xs) { return sizeof...(xs); }
__global__ void k(int* a) { a[threadIdx.x] = 1; }
