__global__ void stencil1d(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 2 && i < n - 3)
        out[i] = 0.1f * in[i - 3] + 0.2f * in[i - 2] + 0.3f * in[i - 1] + 0.4f * in[i] + 0.3f * in[i + 1] + 0.2f * in[i + 2] + 0.1f * in[i + 3];
}
__global__ void jacobi2d(const float* u, float* v, int nx, int ny) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x > 0 && y > 0 && x < nx - 1 && y < ny - 1)
        v[y * nx + x] = 0.25f * (u[y * nx + x - 1] + u[y * nx + x + 1] + u[(y - 1) * nx + x] + u[(y + 1) * nx + x]);
}
