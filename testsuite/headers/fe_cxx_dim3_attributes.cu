// dim3 on the device and attributes where people put them: `dim3 d = blockDim;`,
// `dim3 t(threadIdx.x, threadIdx.y)`, dim3 passed by value to and returned from
// device functions, `__launch_bounds__(256) __global__` (before the space),
// `static __device__ __forceinline__`, `__forceinline__ __device__`, `__noinline__`,
// and `__restrict__` on parameters and locals.
// LAUNCH: linearize grid=2,2 block=16,8 out=i32[1024]:zero
// LAUNCH: blur3 grid=4 block=128 in=f32[512]:rand out=f32[512]:zero n=512

__device__ __forceinline__ unsigned flatten(dim3 extent, dim3 at) {
    return (at.z * extent.y + at.y) * extent.x + at.x;
}

static __device__ __forceinline__ dim3 grid_extent(dim3 grid, dim3 block) {
    return dim3(grid.x * block.x, grid.y * block.y, grid.z * block.z);
}

__forceinline__ __device__ int weight(int x) { return (x & 3) + 1; }

__device__ __noinline__ int mix(int a, int b) { return a * 31 + b; }

__launch_bounds__(128) __global__ void linearize(int* __restrict__ out) {
    dim3 block = blockDim;
    dim3 t(threadIdx.x, threadIdx.y);
    dim3 b = dim3(blockIdx.x, blockIdx.y);
    dim3 extent = grid_extent(gridDim, block);
    dim3 at(b.x * block.x + t.x, b.y * block.y + t.y, 0);
    unsigned i = flatten(extent, at);
    int* __restrict__ slot = out + i;
    *slot = mix(weight((int)t.x), (int)(block.x * 100 + extent.y + t.z));
}

__global__ void __launch_bounds__(128, 2) blur3(const float* __restrict__ in, float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float* __restrict__ p = in;
    float l = i > 0 ? p[i - 1] : 0.0f;
    float r = i + 1 < n ? p[i + 1] : 0.0f;
    out[i] = 0.25f * l + 0.5f * p[i] + 0.25f * r;
}
