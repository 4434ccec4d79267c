// ERROR: 9:12: unsupported feature: the CUDA function 'j0f'
// ERROR: 10:12: unsupported feature: the CUDA function '__dp4a'
// ERROR: 11:12: use of undeclared identifier 'erfcinv_f'
// CUDA's headers declare every math function and intrinsic: one that ptxc does not
// implement is an unsupported feature (named), while a name CUDA does not declare is
// undeclared, as nvcc says.
__global__ void k(float* a, unsigned* b) {
    int i = threadIdx.x;
    a[i] = j0f(a[i]);
    b[i] = __dp4a(b[i], b[i], 0u);
    a[i] = erfcinv_f(a[i]);
}
