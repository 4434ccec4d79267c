// CUDA's vector types: float4 and int2 loads and stores as single vector accesses
// (ld.global.v4.f32), make_float4 / make_int2 / make_float2, member access, a
// float4 kept in registers, and float3 (no vector access: 12 bytes).
// LAUNCH: vector_types grid=2 block=64 a=f32[512]:rand p=i32[256]:randint(-50,50) out=f32[512]:zero o2=i32[256]:zero o3=f32[384]:zero n=128

__device__ float4 lerp4(float4 a, float4 b, float t) {
    return make_float4(a.x + t * (b.x - a.x), a.y + t * (b.y - a.y), a.z + t * (b.z - a.z), a.w + t * (b.w - a.w));
}

__global__ void vector_types(const float4* a, const int2* p, float4* out, int2* o2, float3* o3, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float4 v = a[i];
    float4 w = a[(i + 1) % n];
    float4 r = lerp4(v, w, 0.25f);
    r.w = v.x * w.y;
    out[i] = r;
    int2 q = p[i];
    o2[i] = make_int2(q.y * 2, q.x - q.y);
    float2 h = make_float2(v.z, w.z);
    float3 c;
    c.x = h.x + h.y;
    c.y = (float)q.x;
    c.z = r.z;
    o3[i] = c;
}
