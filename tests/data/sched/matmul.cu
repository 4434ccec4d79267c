#define T 16
__global__ void matmul_tiled(const float* A, const float* B, float* C, int N) {
    __shared__ float As[T][T], Bs[T][T];
    int r = blockIdx.y * T + threadIdx.y, c = blockIdx.x * T + threadIdx.x;
    float acc = 0.f;
    for (int k0 = 0; k0 < N; k0 += T) {
        As[threadIdx.y][threadIdx.x] = A[r * N + k0 + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * N + c];
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < T; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    C[r * N + c] = acc;
}
__global__ void matvec(const float* A, const float* x, float* y, int n) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n) return;
    float acc = 0.f;
    #pragma unroll 4
    for (int k = 0; k < n; ++k) acc = fmaf(A[(size_t)r * n + k], x[k], acc);
    y[r] = acc;
}
