// Single-precision math library calls and conversions: division, square roots,
// exponentials, trigonometry, rounding, min/max, float <-> integer conversions.
// LAUNCH: float_math grid=8 block=128 x=f32[1024]:rand y=f32[1024]:rand out=f32[8192]:zero n=1024 ulp=4
// LAUNCH: fast_math grid=8 block=128 x=f32[1024]:rand out=f32[4096]:zero n=1024 ulp=4
// LAUNCH: conversions grid=8 block=128 x=f32[1024]:rand i=i32[1024]:randint(-100000,100000) u=u32[1024]:rand fo=f32[4096]:zero io=i32[4096]:zero lo=i64[2048]:zero n=1024
// LAUNCH: compare_select grid=8 block=128 x=f32[1024]:rand y=f32[1024]:rand out=f32[2048]:zero flags=i32[1024]:zero n=1024
// LAUNCH: saxpy grid=16 block=256 n=4096 a=2.5 x=f32[4096]:rand y=f32[4096]:rand

__global__ void float_math(const float* x, const float* y, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i];
    out[8 * i + 0] = a / b;
    out[8 * i + 1] = sqrtf(fabsf(a));
    out[8 * i + 2] = expf(a) + logf(fabsf(b) + 1.0f);
    out[8 * i + 3] = sinf(a) * cosf(b);
    out[8 * i + 4] = rsqrtf(fabsf(b) + 0.25f);
    out[8 * i + 5] = fminf(a, b) - fmaxf(a, b) + floorf(a * 10.0f) + ceilf(b * 3.0f);
    out[8 * i + 6] = truncf(a * 7.0f) + roundf(b * 5.0f) + rintf(a * 2.5f);
    out[8 * i + 7] = powf(fabsf(a) + 0.5f, b) + exp2f(b) + log2f(fabsf(a) + 2.0f) + tanhf(a);
}

__global__ void fast_math(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i];
    out[4 * i + 0] = __fdividef(1.0f, a + 2.0f) + __expf(a);
    out[4 * i + 1] = __sinf(a) + __cosf(a) + __logf(a + 2.0f);
    out[4 * i + 2] = __saturatef(a * 4.0f) + __frcp_rn(a + 3.0f);
    out[4 * i + 3] = __fsqrt_rn(a + 1.0f) + __fmul_rz(a, 3.0f) + __fadd_rd(a, 0.1f) + __fmaf_ru(a, a, 1.0f);
}

__global__ void conversions(const float* x, const int* i, const unsigned* u, float* fo, int* io, long long* lo, int n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    float f = x[k] * 1000.0f;
    io[4 * k + 0] = (int)f;
    io[4 * k + 1] = (int)(unsigned)fabsf(f);
    io[4 * k + 2] = __float2int_rn(f);
    io[4 * k + 3] = __float2int_rd(f) + __float2uint_ru(fabsf(f));
    fo[4 * k + 0] = (float)i[k];
    fo[4 * k + 1] = (float)u[k];
    fo[4 * k + 2] = __int2float_rz(i[k]) + __uint2float_rd(u[k]);
    fo[4 * k + 3] = (float)(long long)i[k] * (float)(unsigned long long)u[k];
    lo[2 * k + 0] = (long long)f;
    lo[2 * k + 1] = (long long)(unsigned long long)fabsf(f);
}

__global__ void compare_select(const float* x, const float* y, float* out, int* flags, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i];
    out[2 * i] = a > b ? a * 2.0f : b - 1.0f;
    out[2 * i + 1] = (a >= 0.0f && b < 0.5f) ? -a : fabsf(b);
    int f = 0;
    if (isnan(a / b)) f |= 1;
    if (isinf(1.0f / a)) f |= 2;
    if (signbit(a)) f |= 4;
    if (a != b) f |= 8;
    if (a <= b || b > 0.75f) f |= 16;
    flags[i] = f;
}

__global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
