// ERROR: 4:26: unsupported feature: 'auto' parameters (generic lambdas)
// Lambdas compile; a lambda (or function) with an `auto` parameter is named.
__global__ void k(float* a) {
    auto twice = [](auto x) { return x + x; };
    a[threadIdx.x] = twice(a[threadIdx.x]);
}
