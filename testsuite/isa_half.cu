// Half precision without cuda_fp16.h (which needs CCCL's <nv/target>): the f16 and
// f16x2 operations through the same inline PTX that cuda_fp16.hpp uses, on raw bits.
// LAUNCH: half_axpy grid=8 block=128 x=u16[1024]:randint(0,15000) y=u16[1024]:randint(0,15000) out=u16[1024]:zero n=1024
// LAUNCH: half2_ops grid=4 block=128 x=u32[512]:randint(0,900000000) y=u32[512]:randint(0,900000000) out=u32[1024]:zero n=512
// LAUNCH: half_convert grid=8 block=128 f=f32[1024]:rand h=u16[1024]:zero back=f32[1024]:zero n=1024

typedef unsigned short half_bits;
typedef unsigned int half2_bits;

__device__ __forceinline__ half_bits f2h(float f) {
    half_bits h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
__device__ __forceinline__ float h2f(half_bits h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
__device__ __forceinline__ half_bits hadd(half_bits a, half_bits b) {
    half_bits r;
    asm("add.f16 %0, %1, %2;" : "=h"(r) : "h"(a), "h"(b));
    return r;
}
__device__ __forceinline__ half_bits hmul(half_bits a, half_bits b) {
    half_bits r;
    asm("mul.f16 %0, %1, %2;" : "=h"(r) : "h"(a), "h"(b));
    return r;
}
__device__ __forceinline__ half_bits hneg(half_bits a) {
    half_bits r;
    asm("neg.f16 %0, %1;" : "=h"(r) : "h"(a));
    return r;
}
__device__ __forceinline__ half2_bits hfma2(half2_bits a, half2_bits b, half2_bits c) {
    half2_bits r;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
__device__ __forceinline__ half2_bits hmul2(half2_bits a, half2_bits b) {
    half2_bits r;
    asm("mul.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
__device__ __forceinline__ half2_bits hsub2(half2_bits a, half2_bits b) {
    half2_bits r;
    asm("sub.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
__device__ __forceinline__ half2_bits hmax2(half2_bits a, half2_bits b) {
    half2_bits r;
    asm("max.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
__device__ __forceinline__ bool hlt(half_bits a, half_bits b) {
    unsigned short r;
    asm("{ .reg .pred p; setp.lt.f16 p, %1, %2; selp.u16 %0, 1, 0, p; }" : "=h"(r) : "h"(a), "h"(b));
    return r != 0;
}

__global__ void half_axpy(const half_bits* x, const half_bits* y, half_bits* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = hadd(hmul(f2h(0.5f), x[i]), y[i]);
}

__global__ void half2_ops(const half2_bits* x, const half2_bits* y, half2_bits* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    half2_bits a = x[i], b = y[i];
    half2_bits one = 0x3c003c00u;
    out[2 * i] = hfma2(a, b, one);
    out[2 * i + 1] = hsub2(hmul2(a, a), hmax2(a, b));
}

__global__ void half_convert(const float* f, half_bits* h, float* back, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    half_bits v = f2h(f[i] * 3.0f);
    h[i] = v;
    back[i] = h2f(v) + h2f(hneg(v)) * 0.25f + (hlt(v, f2h(0.0f)) ? 1.0f : 0.0f) + h2f(hadd(v, f2h(1.5f)));
}
