// Static __shared__ memory: a 2-D tile for a matrix transpose (with the +1 padding
// that avoids bank conflicts), a 1-D array of structs, __syncthreads between the
// phases, and a __shared__ scalar written by one thread.
// LAUNCH: transpose grid=4,4 block=16,16 in=f32[4096]:rand out=f32[4096]:zero width=64
// LAUNCH: shared_structs grid=2 block=64 in=f32[128]:rand out=f32[128]:zero

#define TILE 16

__global__ void transpose(const float* in, float* out, int width) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    out[y * width + x] = tile[threadIdx.x][threadIdx.y];
}

struct Pair { float v; int idx; };

__global__ void shared_structs(const float* in, float* out) {
    __shared__ Pair items[64];
    __shared__ float total;
    int t = threadIdx.x;
    items[t].v = in[blockIdx.x * 64 + t];
    items[t].idx = 63 - t;
    if (t == 0)
        total = 0.0f;
    __syncthreads();
    if (t == 0) {
        float s = 0.0f;
        for (int k = 0; k < 64; k++)
            s += items[k].v;
        total = s;
    }
    __syncthreads();
    Pair p = items[items[t].idx];
    out[blockIdx.x * 64 + t] = p.v * 2.0f + total;
}
