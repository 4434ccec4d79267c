// C = A * B for N x N matrices, one thread per element of C (2-D grid).
// LAUNCH: matmul grid=4,4 block=16,16 A=f32[4096]:rand B=f32[4096]:rand C=f32[4096]:zero N=64

__global__ void matmul(const float* A, const float* B, float* C, int N) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < N && col < N) {
        float sum = 0.0f;
        for (int k = 0; k < N; ++k)
            sum += A[row * N + k] * B[k * N + col];
        C[row * N + col] = sum;
    }
}
