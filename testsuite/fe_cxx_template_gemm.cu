// A tiled GEMM template: TILE as a non-type parameter, the element type as a type
// parameter, shared tiles sized by TILE, `constexpr` and `static_assert` on it, the
// instantiation made by a host launch `sgemm<16, float><<<...>>>`.
// LAUNCH: sgemm<16, float> grid=4,4 block=16,16 A=f32[4096]:rand B=f32[4096]:rand C=f32[4096]:zero n=64 ulp=4
// LAUNCH: sgemm<8,double> grid=4,4 block=8,8 Ad=f64[1024]:rand Bd=f64[1024]:rand Cd=f64[1024]:zero n=32 ulp=4

template <int TILE, typename T>
__global__ void sgemm(const T* __restrict__ A, const T* __restrict__ B, T* C, int n) {
    static_assert(TILE > 0 && (TILE & (TILE - 1)) == 0, "TILE must be a power of two");
    constexpr int PAD = 1;
    __shared__ T as[TILE][TILE + PAD];
    __shared__ T bs[TILE][TILE + PAD];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    T acc = 0;
    for (int t = 0; t < n / TILE; ++t) {
        as[threadIdx.y][threadIdx.x] = A[row * n + t * TILE + threadIdx.x];
        bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k)
            acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    C[row * n + col] = acc;
}

int main() {
    const int n = 64;
    float *A, *B, *C;
    cudaMalloc(&A, n * n * sizeof(float));
    cudaMalloc(&B, n * n * sizeof(float));
    cudaMalloc(&C, n * n * sizeof(float));
    dim3 block(16, 16);
    dim3 grid(n / 16, n / 16);
    sgemm<16, float><<<grid, block>>>(A, B, C, n);
    double *Ad, *Bd, *Cd;
    cudaMalloc(&Ad, 32 * 32 * sizeof(double));
    cudaMalloc(&Bd, 32 * 32 * sizeof(double));
    cudaMalloc(&Cd, 32 * 32 * sizeof(double));
    sgemm<8, double><<<dim3(4, 4), dim3(8, 8)>>>(Ad, Bd, Cd, 32);
    cudaDeviceSynchronize();
    return 0;
}
