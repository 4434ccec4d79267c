// Matrix multiply: a shared-memory tiled SGEMM, a register-blocked version with
// float4 loads, and a naive DGEMM; plus a transpose through shared memory.
// LAUNCH: sgemm_tiled grid=4,4 block=16,16 a=f32[4096]:rand b=f32[4096]:rand c=f32[4096]:zero n=64 ulp=8
// LAUNCH: sgemm_vec4 grid=4,4 block=16,16 a=f32[4096]:rand b=f32[4096]:rand c=f32[4096]:zero n=64 alpha=1.5 beta=0.0 ulp=8
// LAUNCH: dgemm_naive grid=2,2 block=16,16 a=f64[1024]:rand b=f64[1024]:rand c=f64[1024]:rand n=32 ulp=4
// LAUNCH: transpose grid=4,4 block=32,8 in=f32[16384]:rand out=f32[16384]:zero width=128 height=128

#define TILE 16

__global__ void sgemm_tiled(const float* a, const float* b, float* c, int n) {
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < n; t += TILE) {
        as[threadIdx.y][threadIdx.x] = (row < n && t + threadIdx.x < n) ? a[row * n + t + threadIdx.x] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = (col < n && t + threadIdx.y < n) ? b[(t + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; k++) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) c[row * n + col] = acc;
}

// Each thread computes a 1x4 strip; rows of B are read as float4.
__global__ void sgemm_vec4(const float* a, const float* b, float* c, int n, float alpha, float beta) {
    __shared__ float4 bs[TILE][TILE / 4];
    __shared__ float as[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col4 = blockIdx.x * (TILE / 4) + (threadIdx.x & 3);
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int t = 0; t < n; t += TILE) {
        as[threadIdx.y][threadIdx.x] = a[row * n + t + threadIdx.x];
        if (threadIdx.x < TILE / 4)
            bs[threadIdx.y][threadIdx.x] = reinterpret_cast<const float4*>(b + (t + threadIdx.y) * n)[col4];
        __syncthreads();
        for (int k = 0; k < TILE; k++) {
            float av = as[threadIdx.y][k];
            float4 bv = bs[k][threadIdx.x & 3];
            acc.x = fmaf(av, bv.x, acc.x); acc.y = fmaf(av, bv.y, acc.y);
            acc.z = fmaf(av, bv.z, acc.z); acc.w = fmaf(av, bv.w, acc.w);
        }
        __syncthreads();
    }
    if (threadIdx.x < TILE / 4) {
        float4* out = reinterpret_cast<float4*>(c + row * n) + col4;
        float4 old = *out;
        *out = make_float4(alpha * acc.x + beta * old.x, alpha * acc.y + beta * old.y,
                           alpha * acc.z + beta * old.z, alpha * acc.w + beta * old.w);
    }
}

__global__ void dgemm_naive(const double* a, const double* b, double* c, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;
    double acc = 0.0;
    for (int k = 0; k < n; k++) acc = fma(a[row * n + k], b[k * n + col], acc);
    c[row * n + col] = 2.0 * acc - 0.5 * c[row * n + col];
}

__global__ void transpose(const float* in, float* out, int width, int height) {
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        if (x < height && y + j < width) out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
