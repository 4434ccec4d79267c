// An n-body force step: float4 positions (x, y, z, mass) read as vectors, rsqrtf of
// the softened distance, fmaf-shaped accumulation, tiles of bodies in shared memory.
// LAUNCH: nbody grid=4 block=64 pos=f32[1024]:rand acc=f32[1024]:zero n=256 eps2=0.01

__device__ float3 interact(float4 bi, float4 bj, float3 a, float eps2) {
    float3 r;
    r.x = bj.x - bi.x;
    r.y = bj.y - bi.y;
    r.z = bj.z - bi.z;
    float dist2 = r.x * r.x + r.y * r.y + r.z * r.z + eps2;
    float inv = rsqrtf(dist2);
    float s = bj.w * inv * inv * inv;
    a.x += r.x * s;
    a.y += r.y * s;
    a.z += r.z * s;
    return a;
}

__global__ void nbody(const float4* pos, float4* acc, int n, float eps2) {
    __shared__ float4 tile[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 me = pos[i];
    float3 a = make_float3(0.0f, 0.0f, 0.0f);
    for (int base = 0; base < n; base += 64) {
        tile[threadIdx.x] = pos[base + threadIdx.x];
        __syncthreads();
        for (int j = 0; j < 64; j++)
            a = interact(me, tile[j], a, eps2);
        __syncthreads();
    }
    acc[i] = make_float4(a.x, a.y, a.z, 0.0f);
}
