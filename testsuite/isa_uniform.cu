// Block-uniform values (S2UR and the uniform datapath), predicates unpacked from a
// bit mask (R2P), and atomics through a pointer that may be shared or global (ATOM).
// LAUNCH: block_lookup grid=8 block=128 weights=f32[64]:rand out=f32[128]:zero ulp=8
// LAUNCH: mask_gather grid=2 block=32 masks=u32[64]:rand data=i32[512]:randint(-100,100) out=i32[64]:zero
// LAUNCH: generic_cas grid=2 block=64 g=i32[4]:zero v=7

__constant__ float bias[64];

// Each block reads one shared slot and one constant chosen by its block index: a
// uniform address, computed once per warp in uniform registers.
__global__ void block_lookup(const float* weights, float* out) {
    __shared__ float row[128];
    row[threadIdx.x] = weights[threadIdx.x & 63] * (float)threadIdx.x;
    __syncthreads();
    float v = row[blockIdx.x & 127] + bias[blockIdx.x & 63];
    atomicAdd(&out[threadIdx.x], v);  // every block adds to the same row: blockIdx stays uniform
}

__global__ void mask_gather(const unsigned* masks, const int* data, int* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned m = masks[i];
    int acc = 0;
#pragma unroll
    for (int k = 0; k < 8; k++)
        if (m & (1u << k)) acc += data[k * 64 + i];
    out[i] = acc;
}

__global__ void generic_cas(int* g, int v) {
    __shared__ int s;
    if (threadIdx.x == 0) s = 0;
    __syncthreads();
    int* p = (threadIdx.x & 1) ? &s : g;
    atomicCAS(p, 0, v);
    atomicExch(p + 0, v);
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(&g[1 + blockIdx.x], s);
}
