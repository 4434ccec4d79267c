// Single-precision math as NVVM lowers it (libdevice, full precision): sqrtf rsqrtf
// expf exp2f logf log2f sinf cosf tanhf powf fabsf fminf fmaxf floorf ceilf roundf
// fmaf, and C++'s float overloads (sqrt(float) is sqrtf).  Large arguments take the
// slow paths (sinf's Payne-Hanek reduction uses local memory).
// LAUNCH: math_float grid=4 block=64 x=f32[256]:rand y=f32[256]:rand big=f32[256]:randint(-100000,100000) out=f32[5120]:zero n=256

__global__ void math_float(const float* x, const float* y, const float* big, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float a = x[i], b = y[i], c = big[i] * 1000.0f;
    float* o = out + 20 * i;
    o[0] = sqrtf(fabsf(a));
    o[1] = rsqrtf(fabsf(b) + 0.01f);
    o[2] = expf(a * 10.0f);
    o[3] = exp2f(b * 20.0f);
    o[4] = logf(fabsf(a) + 1e-3f);
    o[5] = log2f(fabsf(b) * 100.0f);
    o[6] = sinf(a * 3.0f) + sinf(c);
    o[7] = cosf(b * 5.0f) + cosf(c);
    o[8] = tanhf(a * 4.0f);
    o[9] = powf(fabsf(a) + 0.5f, b * 3.0f);
    o[10] = fminf(a, b) + fmaxf(a, b);
    o[11] = floorf(a * 10.0f) + ceilf(b * 10.0f);
    o[12] = roundf(a * 7.5f);
    o[13] = fmaf(a, b, 0.25f);
    o[14] = sqrt(fabs(b)) + exp(a) + log(fabs(b) + 1.0f);
    o[15] = powf(2.0f, a) + powf(a, 2.0f);
    o[16] = expf(c);
    o[17] = logf(0.0f * a) + sqrtf(-fabsf(b) - 1.0f);
    o[18] = tanhf(c) + floorf(c);
    o[19] = fabsf(sinf(a) * cosf(a) - 0.5f * sinf(2.0f * a));
}
