// y = a*x + y with a grid-stride loop; __restrict__ on both pointers, so nvcc reads x
// through the non-coherent cache (ld.global.nc).
// LAUNCH: saxpy grid=64 block=256 n=100000 a=2.5 x=f32[100000]:rand y=f32[100000]:rand

__global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}
