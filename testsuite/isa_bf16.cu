// bfloat16 without cuda_bf16.h: the conversions and the bf16/bf16x2 arithmetic sm_89 and
// sm_90 both take (fma, neg, abs, min, max; add and mul are sm_90 PTX), through the
// inline PTX cuda_bf16.hpp uses, on raw bits: every rounding mode of f32 -> bf16, .relu,
// and the exact widening back.
// LAUNCH: bf16_convert grid=4 block=128 f=f32[512]:rand g=f32[512]:randint(-70000,70000) out=u32[3584]:zero back=f32[512]:zero
// LAUNCH: bf16_arith grid=4 block=128 x=u32[512]:rand y=u32[512]:rand z=u32[512]:rand out=u32[4096]:zero

__device__ __forceinline__ unsigned short f2bf_rn(float f) {
    unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
__device__ __forceinline__ unsigned short f2bf_rz(float f) {
    unsigned short h; asm("cvt.rz.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
__device__ __forceinline__ unsigned short f2bf_rm(float f) {
    unsigned short h; asm("cvt.rm.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
__device__ __forceinline__ unsigned short f2bf_rp(float f) {
    unsigned short h; asm("cvt.rp.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
__device__ __forceinline__ float bf2f(unsigned short h) {
    float f; asm("cvt.f32.bf16 %0, %1;" : "=f"(f) : "h"(h)); return f;
}
__device__ __forceinline__ unsigned pack_rn(float hi, float lo) {
    unsigned r; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r;
}
__device__ __forceinline__ unsigned pack_rz(float hi, float lo) {
    unsigned r; asm("cvt.rz.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r;
}
__device__ __forceinline__ unsigned pack_relu(float hi, float lo) {
    unsigned r; asm("cvt.rn.relu.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r;
}

__global__ void bf16_convert(const float* f, const float* g, unsigned* out, float* back) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = f[i] * 1e-3f + g[i], b = g[i] * 3.0e-39f;        // normal and subnormal bf16
    out[i] = f2bf_rn(a);
    out[512 + i] = f2bf_rz(a);
    out[1024 + i] = f2bf_rm(a);
    out[1536 + i] = f2bf_rp(a) | (f2bf_rn(b) << 16);
    out[2048 + i] = pack_rn(a, b);
    out[2560 + i] = pack_rz(b, a);
    out[3072 + i] = pack_relu(a, -a);
    back[i] = bf2f(f2bf_rn(a)) + bf2f(f2bf_rz(b));
}

__global__ void bf16_arith(const unsigned* x, const unsigned* y, const unsigned* z, unsigned* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned a = x[i] & 0xBFFFBFFFu, b = y[i] & 0xBFFFBFFFu, c = z[i], r;  // no NaN inputs but c's
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); out[i] = r;
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(c), "r"(a), "r"(b)); out[512 + i] = r;
    asm("neg.bf16x2 %0, %1;" : "=r"(r) : "r"(c)); out[1024 + i] = r;
    asm("abs.bf16x2 %0, %1;" : "=r"(r) : "r"(c)); out[1536 + i] = r;
    asm("min.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); out[2048 + i] = r;
    asm("max.NaN.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(c)); out[2560 + i] = r;
    unsigned short h, ha = (unsigned short)a, hb = (unsigned short)(b >> 16), hc = (unsigned short)c;
    asm("fma.rn.bf16 %0, %1, %2, %3;" : "=h"(h) : "h"(ha), "h"(hb), "h"(hc)); out[3072 + i] = h;
    asm("max.bf16 %0, %1, %2;" : "=h"(h) : "h"(ha), "h"(hb)); out[3584 + i] = h;
}
