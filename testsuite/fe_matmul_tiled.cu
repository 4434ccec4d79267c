// Tiled matrix multiply: two 2-D __shared__ tiles, __syncthreads around each phase,
// an unrolled inner product over the tile, and bounds checks for partial tiles.
// LAUNCH: matmul_tiled grid=3,3 block=16,16 A=f32[2304]:rand B=f32[2304]:rand C=f32[2304]:zero N=48

#define T 16

__global__ void matmul_tiled(const float* A, const float* B, float* C, int N) {
    __shared__ float As[T][T];
    __shared__ float Bs[T][T];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
    float acc = 0.0f;
    for (int t = 0; t < (N + T - 1) / T; t++) {
        int ac = t * T + tx, br = t * T + ty;
        As[ty][tx] = (row < N && ac < N) ? A[row * N + ac] : 0.0f;
        Bs[ty][tx] = (br < N && col < N) ? B[br * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < T; k++)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < N && col < N)
        C[row * N + col] = acc;
}
