struct P { float x, y, z, w; };
__global__ void nbody_step(const float4* pos, float4* acc, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 p = pos[i]; float ax = 0, ay = 0, az = 0;
    for (int j = 0; j < n; ++j) {
        float4 q = pos[j];
        float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
        float d2 = dx * dx + dy * dy + dz * dz + 1e-3f;
        float inv = rsqrtf(d2); float s = q.w * inv * inv * inv;
        ax += dx * s; ay += dy * s; az += dz * s;
    }
    acc[i] = make_float4(ax, ay, az, 0.f);
}
__global__ void scale2(float2* v, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float2 a = v[i]; a.x *= s; a.y = a.y * s + a.x; v[i] = a; }
}
__global__ void bytes(const char* in, short* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (short)(in[i] * in[i + 1] - in[2 * i]);
}
