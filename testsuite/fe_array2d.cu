// Two-dimensional arrays: a local 3x3 matrix (constant indices: registers), a local
// 4x4 indexed at run time (local memory), and a 2-D __shared__ tile.
// LAUNCH: array2d grid=4 block=16,4 in=f32[1024]:rand out=f32[1024]:zero rows=i32[256]:randint(0,3)

#define W 16

__global__ void array2d(const float* in, float* out, const int* rows) {
    __shared__ float tile[4][W];
    int tx = threadIdx.x, ty = threadIdx.y;
    int g = blockIdx.x * (W * 4) + ty * W + tx;
    tile[ty][tx] = in[g];
    __syncthreads();
    float m[3][3];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            m[r][c] = tile[(ty + r) % 4][(tx + c) % W];
    float det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
              - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
              + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    int q[4][4];
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++)
            q[r][c] = r * 4 + c + tx;
    int pick = rows[g % 256];
    out[g] = det + (float)(q[pick][3 - pick] + q[3][pick]) + tile[3 - ty][W - 1 - tx];
}
