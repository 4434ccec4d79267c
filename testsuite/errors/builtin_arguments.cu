// ERROR: 7:13: no matching function for call to '__shfl_sync(unsigned int, int)'
// ERROR: 8:12: too many arguments to function call, expected 0, have 1
// ERROR: 9:5: no matching function for call to 'atomicAdd(float *, int *)'
// Warp intrinsics, builtins and atomics check their arguments.
__global__ void k(int* a, float* f) {
    int v = a[threadIdx.x];
    int w = __shfl_sync(0xffffffffu, v);
    a[0] = __activemask(1);
    atomicAdd(f, a);
}
