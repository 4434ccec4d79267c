// Floating-point helpers: fminf/fmaxf, fabsf, sqrtf, ?: chosen as max, and a unary
// minus; the select `v > 0 ? v : 0` becomes max.f32 as in nvcc.
// LAUNCH: clamp_math grid=16 block=256 out=f32[4096]:zero in=f32[4096]:rand n=4096 lo=-0.5 hi=0.75

__global__ void clamp_math(float* out, const float* in, int n, float lo, float hi) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = in[i];
    float r = v > 0.0f ? v : 0.0f;
    float m = fminf(fmaxf(v, lo), hi);
    out[i] = r + m * sqrtf(fabsf(v)) - (-v);
}
