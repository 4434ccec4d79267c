// Loops NVVM unrolls: small constant trip counts unroll fully without being asked,
// `#pragma unroll` unrolls a longer constant loop, `#pragma unroll 1` keeps a loop
// rolled, and a loop with a run-time bound stays a loop.
// LAUNCH: unroll grid=2 block=128 in=f32[4096]:rand coef=f32[16]:rand out=f32[1024]:zero n=256 m=13

__global__ void unroll(const float* in, const float* coef, float* out, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float* row = in + 16 * i;
    float dot = 0.0f;
    for (int k = 0; k < 4; k++)
        dot += row[k] * coef[k];
    float poly = 0.0f;
#pragma unroll
    for (int k = 15; k >= 0; k--)
        poly = poly * 0.5f + row[k];
    int bits = 0;
#pragma unroll 1
    for (int k = 0; k < 8; k++)
        bits += (i >> k) & 1;
    float tail = 0.0f;
    for (int k = 0; k < m; k++)
        tail += row[k] * (float)k;
    float stepped = 0.0f;
    for (int k = 1; k < 16; k *= 2)
        stepped += row[k];
    out[4 * i] = dot;
    out[4 * i + 1] = poly;
    out[4 * i + 2] = (float)bits + tail;
    out[4 * i + 3] = stepped;
}
