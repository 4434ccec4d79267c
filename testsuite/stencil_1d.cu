// A 3-point stencil: __device__ helpers (inlined), && in conditions, neighbour
// offsets folded into addresses ([%rd+-4], [%rd+4]).
// LAUNCH: stencil grid=16 block=256 in=f32[4096]:rand out=f32[4096]:zero n=4096

__device__ float weight(int d) {
    return d == 0 ? 0.5f : 0.25f;
}

__device__ bool interior(int i, int n) {
    return i > 0 && i < n - 1;
}

__global__ void stencil(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (interior(i, n)) {
        out[i] = weight(-1) * in[i - 1] + weight(0) * in[i] + weight(1) * in[i + 1];
    } else if (i == 0 || i == n - 1) {
        out[i] = in[i];
    }
}
