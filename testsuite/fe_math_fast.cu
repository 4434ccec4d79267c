// The fast intrinsics NVVM maps to approximate instructions (__expf: ex2.approx after
// a multiply by log2(e); __sinf/__cosf: sin/cos.approx; __fdividef: div.approx;
// __logf, __powf, __saturatef), next to min/max/abs on integers and floats.
// LAUNCH: math_fast grid=2 block=128 x=f32[256]:rand y=f32[256]:rand k=i32[256]:randint(-1000,1000) out=f32[2560]:zero n=256

__global__ void math_fast(const float* x, const float* y, const int* k, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float a = x[i], b = y[i];
    int m = k[i], p = k[(i + 1) % n];
    float* o = out + 10 * i;
    o[0] = __expf(a * 4.0f);
    o[1] = __sinf(a * 3.0f) + __cosf(b * 3.0f);
    o[2] = __fdividef(a, b + 2.0f);
    o[3] = __logf(fabsf(a) + 0.5f);
    o[4] = __powf(fabsf(b) + 1.0f, a);
    o[5] = __saturatef(a * 2.0f);
    o[6] = (float)(min(m, p) + max(m, p) * 2 + abs(m));
    o[7] = min(a, b) + max(a, b) * 2.0f;
    o[8] = (float)(min((unsigned)m, (unsigned)p) % 1000u) + (float)(max((long long)m, 5ll));
    o[9] = __tanf(a) + __exp10f(b) + __log2f(fabsf(b) + 1.0f);
}
