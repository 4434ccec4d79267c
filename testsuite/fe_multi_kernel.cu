// Several kernels in one file, launched in sequence over shared buffers (the LAUNCH
// lines run in order): fill, scale in place, a neighbour difference, and a
// reduction into one value.
// LAUNCH: fill grid=4 block=256 buf=f32[1024]:zero n=1024 base=0.5
// LAUNCH: scale_in_place grid=4 block=256 buf=f32[1024]:zero n=1024 factor=3.0
// LAUNCH: neighbour_diff grid=4 block=256 buf=f32[1024]:zero diff=f32[1024]:zero n=1024
// LAUNCH: total grid=1 block=32 diff=f32[1024]:zero result=f32[1]:zero n=1024

__global__ void fill(float* buf, int n, float base) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        buf[i] = base + (float)(i % 17) * 0.125f;
}

__global__ void scale_in_place(float* buf, int n, float factor) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        buf[i] *= factor;
}

__global__ void neighbour_diff(const float* buf, float* diff, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        diff[i] = buf[(i + 1) % n] - buf[i];
}

__global__ void total(const float* diff, float* result, int n) {
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int i = 0; i < n; i++)
            s += diff[i];
        result[0] = s;
    }
}
