// cuda_fp16.h as ptxc implements it: __half and __half2 with CUDA's names and layouts,
// their operations written as the PTX that NVVM emits for NVIDIA's header (the same
// instructions, as inline asm; measured with nvcc 13.5 -ptx at sm_89 and sm_90).
// ptxc's own text, not NVIDIA's.
#pragma once
#define __CUDA_FP16_H__
#define __CUDA_FP16_TYPES_EXIST__

struct __half_raw { unsigned short x; };
struct __align__(4) __half2_raw { unsigned short x; unsigned short y; };

struct __half {
    unsigned short __x;
    __device__ __half() {}
    __device__ __half(const __half_raw& raw) : __x(raw.x) {}
    __device__ __half(float f) { asm("{  cvt.rn.f16.f32 %0, %1;}\n" : "=h"(__x) : "f"(f)); }
    __device__ __half(double f) { asm("{  cvt.rn.f16.f64 %0, %1;}\n" : "=h"(__x) : "d"(f)); }
    __device__ __half(int i) { asm("cvt.rn.f16.s32 %0, %1;" : "=h"(__x) : "r"(i)); }
    __device__ __half(unsigned int i) { asm("cvt.rn.f16.u32 %0, %1;" : "=h"(__x) : "r"(i)); }
    __device__ operator float() const { float f; asm("{  cvt.f32.f16 %0, %1;}\n" : "=f"(f) : "h"(__x)); return f; }
    __device__ operator __half_raw() const { __half_raw r; r.x = __x; return r; }
};
typedef __half half;

struct __align__(4) __half2 {
    __half x;
    __half y;
    __device__ __half2() {}
    __device__ __half2(const __half& a, const __half& b) : x(a), y(b) {}
    __device__ __half2(const __half2_raw& raw) { x.__x = raw.x; y.__x = raw.y; }
};
typedef __half2 half2;

// ---- bits --------------------------------------------------------------------------
__device__ __forceinline__ __half __ptxc_half(unsigned short bits) { const __half_raw r = {bits}; return __half(r); }
__device__ __forceinline__ unsigned short __half_as_ushort(const __half h) { return h.__x; }
__device__ __forceinline__ short __half_as_short(const __half h) { return (short)h.__x; }
__device__ __forceinline__ __half __ushort_as_half(const unsigned short i) { return __ptxc_half(i); }
__device__ __forceinline__ __half __short_as_half(const short i) { return __ptxc_half((unsigned short)i); }

// ---- conversions -------------------------------------------------------------------
__device__ __forceinline__ __half __float2half(const float a) { __half r; asm("{  cvt.rn.f16.f32 %0, %1;}\n" : "=h"(r) : "f"(a)); return r; }
__device__ __forceinline__ __half __float2half_rn(const float a) { __half r; asm("{  cvt.rn.f16.f32 %0, %1;}\n" : "=h"(r) : "f"(a)); return r; }
__device__ __forceinline__ __half __float2half_rz(const float a) { __half r; asm("{  cvt.rz.f16.f32 %0, %1;}\n" : "=h"(r) : "f"(a)); return r; }
__device__ __forceinline__ __half __float2half_rd(const float a) { __half r; asm("{  cvt.rm.f16.f32 %0, %1;}\n" : "=h"(r) : "f"(a)); return r; }
__device__ __forceinline__ __half __float2half_ru(const float a) { __half r; asm("{  cvt.rp.f16.f32 %0, %1;}\n" : "=h"(r) : "f"(a)); return r; }
__device__ __forceinline__ __half __double2half(const double a) { __half r; asm("{  cvt.rn.f16.f64 %0, %1;}\n" : "=h"(r) : "d"(a)); return r; }
__device__ __forceinline__ float __half2float(const __half a) { float f; asm("{  cvt.f32.f16 %0, %1;}\n" : "=f"(f) : "h"(a)); return f; }
__device__ __forceinline__ __half2 __floats2half2_rn(const float a, const float b) { __half2 r; asm("{ cvt.rn.f16x2.f32 %0, %2, %1; }\n" : "=r"(r) : "f"(a), "f"(b)); return r; }
__device__ __forceinline__ __half2 __float22half2_rn(const float2 a) { return __floats2half2_rn(a.x, a.y); }
__device__ __forceinline__ __half2 __float2half2_rn(const float a) { return __floats2half2_rn(a, a); }
__device__ __forceinline__ float __low2float(const __half2 a) { float f; asm("{.reg .f16 low,high;\n  mov.b32 {low,high},%1;\n  cvt.f32.f16 %0, low;}\n" : "=f"(f) : "r"(a)); return f; }
__device__ __forceinline__ float __high2float(const __half2 a) { float f; asm("{.reg .f16 low,high;\n  mov.b32 {low,high},%1;\n  cvt.f32.f16 %0, high;}\n" : "=f"(f) : "r"(a)); return f; }
__device__ __forceinline__ float2 __half22float2(const __half2 a) { float hi = __high2float(a); float lo = __low2float(a); return make_float2(lo, hi); }
__device__ __forceinline__ __half __low2half(const __half2 a) { __half r; asm("{.reg .f16 low,high;\n mov.b32 {low,high}, %1;\n mov.b16 %0, low;}\n" : "=h"(r) : "r"(a)); return r; }
__device__ __forceinline__ __half __high2half(const __half2 a) { __half r; asm("{.reg .f16 low,high;\n mov.b32 {low,high}, %1;\n mov.b16 %0, high;}\n" : "=h"(r) : "r"(a)); return r; }
__device__ __forceinline__ __half2 __halves2half2(const __half a, const __half b) { __half2 r; asm("{  mov.b32 %0, {%1,%2};}\n" : "=r"(r) : "h"(a), "h"(b)); return r; }
__device__ __forceinline__ __half2 __half2half2(const __half a) { __half2 r; asm("{  mov.b32 %0, {%1,%1};}\n" : "=r"(r) : "h"(a)); return r; }
__device__ __forceinline__ __half2 make_half2(const __half a, const __half b) { return __halves2half2(a, b); }
__device__ __forceinline__ __half2 __low2half2(const __half2 a) { return __half2half2(__low2half(a)); }
__device__ __forceinline__ __half2 __high2half2(const __half2 a) { return __half2half2(__high2half(a)); }
__device__ __forceinline__ __half2 __lowhigh2highlow(const __half2 a) { return __halves2half2(__high2half(a), __low2half(a)); }
__device__ __forceinline__ __half __int2half_rn(const int i) { __half r; asm("cvt.rn.f16.s32 %0, %1;" : "=h"(r) : "r"(i)); return r; }
__device__ __forceinline__ __half __uint2half_rn(const unsigned int i) { __half r; asm("cvt.rn.f16.u32 %0, %1;" : "=h"(r) : "r"(i)); return r; }
__device__ __forceinline__ __half __short2half_rn(const short i) { __half r; asm("cvt.rn.f16.s16 %0, %1;" : "=h"(r) : "h"(i)); return r; }
__device__ __forceinline__ __half __ushort2half_rn(const unsigned short i) { __half r; asm("cvt.rn.f16.u16 %0, %1;" : "=h"(r) : "h"(i)); return r; }
__device__ __forceinline__ int __half2int_rn(const __half h) { int i; asm("cvt.rni.s32.f16 %0, %1;" : "=r"(i) : "h"(h)); return i; }
__device__ __forceinline__ int __half2int_rz(const __half h) { int i; asm("cvt.rzi.s32.f16 %0, %1;" : "=r"(i) : "h"(h)); return i; }
__device__ __forceinline__ int __half2int_rd(const __half h) { int i; asm("cvt.rmi.s32.f16 %0, %1;" : "=r"(i) : "h"(h)); return i; }
__device__ __forceinline__ int __half2int_ru(const __half h) { int i; asm("cvt.rpi.s32.f16 %0, %1;" : "=r"(i) : "h"(h)); return i; }
__device__ __forceinline__ unsigned int __half2uint_rz(const __half h) { unsigned int i; asm("cvt.rzi.u32.f16 %0, %1;" : "=r"(i) : "h"(h)); return i; }
__device__ __forceinline__ short __half2short_rz(const __half h) { short i; asm("cvt.rzi.s16.f16 %0, %1;" : "=h"(i) : "h"(h)); return i; }

// ---- arithmetic --------------------------------------------------------------------
#define __PTXC_H_BINARY(name, op) \
    __device__ __forceinline__ __half name(const __half a, const __half b) { __half r; asm("{" op " %0,%1,%2;\n}\n" : "=h"(r) : "h"(a), "h"(b)); return r; }
#define __PTXC_H2_BINARY(name, op) \
    __device__ __forceinline__ __half2 name(const __half2 a, const __half2 b) { __half2 r; asm("{" op " %0,%1,%2;\n}\n" : "=r"(r) : "r"(a), "r"(b)); return r; }
__PTXC_H_BINARY(__hadd, "add.f16")
__PTXC_H_BINARY(__hsub, "sub.f16")
__PTXC_H_BINARY(__hmul, "mul.f16")
__PTXC_H_BINARY(__hadd_sat, "add.sat.f16")
__PTXC_H_BINARY(__hsub_sat, "sub.sat.f16")
__PTXC_H_BINARY(__hmul_sat, "mul.sat.f16")
__PTXC_H_BINARY(__hadd_rn, "add.rn.f16")
__PTXC_H_BINARY(__hmul_rn, "mul.rn.f16")
__PTXC_H_BINARY(__hmax, "max.f16")
__PTXC_H_BINARY(__hmin, "min.f16")
__PTXC_H_BINARY(__hmax_nan, "max.NaN.f16")
__PTXC_H_BINARY(__hmin_nan, "min.NaN.f16")
__PTXC_H2_BINARY(__hadd2, "add.f16x2")
__PTXC_H2_BINARY(__hsub2, "sub.f16x2")
__PTXC_H2_BINARY(__hmul2, "mul.f16x2")
__PTXC_H2_BINARY(__hadd2_sat, "add.sat.f16x2")
__PTXC_H2_BINARY(__hmul2_sat, "mul.sat.f16x2")
__PTXC_H2_BINARY(__hmax2, "max.f16x2")
__PTXC_H2_BINARY(__hmin2, "min.f16x2")
__device__ __forceinline__ __half __hfma(const __half a, const __half b, const __half c) { __half r; asm("{fma.rn.f16 %0,%1,%2,%3;\n}\n" : "=h"(r) : "h"(a), "h"(b), "h"(c)); return r; }
__device__ __forceinline__ __half __hfma_sat(const __half a, const __half b, const __half c) { __half r; asm("{fma.rn.sat.f16 %0,%1,%2,%3;\n}\n" : "=h"(r) : "h"(a), "h"(b), "h"(c)); return r; }
__device__ __forceinline__ __half2 __hfma2(const __half2 a, const __half2 b, const __half2 c) { __half2 r; asm("{fma.rn.f16x2 %0,%1,%2,%3;\n}\n" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
__device__ __forceinline__ __half2 __hfma2_sat(const __half2 a, const __half2 b, const __half2 c) { __half2 r; asm("{fma.rn.sat.f16x2 %0,%1,%2,%3;\n}\n" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
__device__ __forceinline__ __half __hneg(const __half a) { __half r; asm("{neg.f16 %0,%1;\n}\n" : "=h"(r) : "h"(a)); return r; }
__device__ __forceinline__ __half __habs(const __half a) { __half r; asm("{abs.f16 %0,%1;\n}\n" : "=h"(r) : "h"(a)); return r; }
__device__ __forceinline__ __half2 __hneg2(const __half2 a) { __half2 r; asm("{neg.f16x2 %0,%1;\n}\n" : "=r"(r) : "r"(a)); return r; }
__device__ __forceinline__ __half2 __habs2(const __half2 a) { __half2 r; asm("{abs.f16x2 %0,%1;\n}\n" : "=r"(r) : "r"(a)); return r; }

// Division as NVIDIA's header computes it: an approximate reciprocal in float, then,
// where the quotient is a small normal number, one Newton step.
__device__ __forceinline__ float __ptxc_rcp_approx(const float x) { float r; asm("{rcp.approx.ftz.f32 %0, %1;\n}\n" : "=f"(r) : "f"(x)); return r; }
__device__ __forceinline__ bool __hlt(const __half a, const __half b);
__device__ __forceinline__ __half __hdiv(const __half a, const __half b) {
    const float fa = __half2float(a);
    const float fb = __half2float(b);
    const float rcp = __ptxc_rcp_approx(fb);
    const float f = fa * rcp;
    __half q = __float2half(f);
    const __half mag = __habs(q);
    if (__hlt(mag, __ptxc_half(0x008F)) && __hlt(__float2half(0.0f), mag))
        q = __float2half(__fmaf_rn(rcp, __fmaf_rn(-fb, f, fa), f));
    return q;
}
__device__ __forceinline__ __half2 __h2div(const __half2 a, const __half2 b) {
    const __half lo = __hdiv(__low2half(a), __low2half(b));
    const __half hi = __hdiv(__high2half(a), __high2half(b));
    return __halves2half2(lo, hi);
}

// ---- math (the approximations NVIDIA's header writes as inline PTX) ---------------
#define __PTXC_H_FLOAT_FN(name, body) \
    __device__ __forceinline__ __half name(const __half a) { __half r; asm("{.reg.b32         f;        \n .reg.b16         r;        \n  mov.b16         r,%1;     \n  cvt.f32.f16     f,r;      \n  " body "   f,f;  \n  cvt.rn.f16.f32      r,f;  \n  mov.b16         %0,r;     \n}" : "=h"(r) : "h"(a)); return r; }
__PTXC_H_FLOAT_FN(hsqrt, "sqrt.approx.ftz.f32")
__PTXC_H_FLOAT_FN(hrsqrt, "rsqrt.approx.ftz.f32")
__PTXC_H_FLOAT_FN(hrcp, "rcp.approx.ftz.f32")
__device__ __forceinline__ __half hexp(const __half a) {
    __half r;
    asm("{.reg.b32         f, C, nZ;       \n .reg.b16         h,r;            \n  mov.b16         h,%1;           \n"
        "  cvt.f32.f16     f,h;            \n  mov.b32         C, 0x3fb8aa3bU; \n  mov.b32         nZ, 0x80000000U;\n"
        "  fma.rn.f32      f,f,C,nZ;       \n  ex2.approx.ftz.f32  f,f;        \n  cvt.rn.f16.f32      r,f;        \n"
        "{.reg.b16 spc, ulp, p;\n  mov.b16 spc,0X1F79U;\n  mov.b16 ulp,0x9400U;\n  set.eq.f16.f16 p,h, spc;\n  fma.rn.f16 r,p,ulp,r;\n}\n"
        "{.reg.b16 spc, ulp, p;\n  mov.b16 spc,0X25CFU;\n  mov.b16 ulp,0x9400U;\n  set.eq.f16.f16 p,h, spc;\n  fma.rn.f16 r,p,ulp,r;\n}\n"
        "{.reg.b16 spc, ulp, p;\n  mov.b16 spc,0XC13BU;\n  mov.b16 ulp,0x0400U;\n  set.eq.f16.f16 p,h, spc;\n  fma.rn.f16 r,p,ulp,r;\n}\n"
        "{.reg.b16 spc, ulp, p;\n  mov.b16 spc,0XC1EFU;\n  mov.b16 ulp,0x0200U;\n  set.eq.f16.f16 p,h, spc;\n  fma.rn.f16 r,p,ulp,r;\n}\n"
        "  mov.b16         %0,r;           \n}" : "=h"(r) : "h"(a));
    return r;
}

// ---- comparisons -------------------------------------------------------------------
#define __PTXC_H_COMPARE(name, cmp) \
    __device__ __forceinline__ bool name(const __half a, const __half b) { unsigned short v; asm("{ .reg .pred __$temp3;\n  setp." cmp ".f16  __$temp3, %1, %2;\n  selp.u16 %0, 1, 0, __$temp3;}\n" : "=h"(v) : "h"(a), "h"(b)); return v != 0; }
__PTXC_H_COMPARE(__heq, "eq")
__PTXC_H_COMPARE(__hne, "ne")
__PTXC_H_COMPARE(__hlt, "lt")
__PTXC_H_COMPARE(__hle, "le")
__PTXC_H_COMPARE(__hgt, "gt")
__PTXC_H_COMPARE(__hge, "ge")
__PTXC_H_COMPARE(__hequ, "equ")
__PTXC_H_COMPARE(__hneu, "neu")
__PTXC_H_COMPARE(__hltu, "ltu")
__PTXC_H_COMPARE(__hleu, "leu")
__PTXC_H_COMPARE(__hgtu, "gtu")
__PTXC_H_COMPARE(__hgeu, "geu")
__device__ __forceinline__ bool __hisnan(const __half a) { unsigned short v; asm("{ .reg .pred __$temp3;\n  setp.nan.f16  __$temp3, %1, %1;\n  selp.u16 %0, 1, 0, __$temp3;}\n" : "=h"(v) : "h"(a)); return v != 0; }
#define __PTXC_H2_COMPARE(name, bname, cmp) \
    __device__ __forceinline__ __half2 name(const __half2 a, const __half2 b) { __half2 r; asm("{ set." cmp ".f16x2.f16x2 %0,%1,%2;\n}\n" : "=r"(r) : "r"(a), "r"(b)); return r; } \
    __device__ __forceinline__ bool bname(const __half2 a, const __half2 b) { unsigned int v; asm("{ set." cmp ".u32.f16x2 %0,%1,%2;\n}\n" : "=r"(v) : "r"(a), "r"(b)); return v == 0xffffffffU; }
__PTXC_H2_COMPARE(__heq2, __hbeq2, "eq")
__PTXC_H2_COMPARE(__hne2, __hbne2, "ne")
__PTXC_H2_COMPARE(__hlt2, __hblt2, "lt")
__PTXC_H2_COMPARE(__hle2, __hble2, "le")
__PTXC_H2_COMPARE(__hgt2, __hbgt2, "gt")
__PTXC_H2_COMPARE(__hge2, __hbge2, "ge")

// ---- operators ---------------------------------------------------------------------
__device__ __forceinline__ __half operator+(const __half& a, const __half& b) { return __hadd(a, b); }
__device__ __forceinline__ __half operator-(const __half& a, const __half& b) { return __hsub(a, b); }
__device__ __forceinline__ __half operator*(const __half& a, const __half& b) { return __hmul(a, b); }
__device__ __forceinline__ __half operator/(const __half& a, const __half& b) { return __hdiv(a, b); }
__device__ __forceinline__ __half operator-(const __half& a) { return __hneg(a); }
__device__ __forceinline__ __half operator+(const __half& a) { return a; }
__device__ __forceinline__ __half& operator+=(__half& a, const __half& b) { a = __hadd(a, b); return a; }
__device__ __forceinline__ __half& operator-=(__half& a, const __half& b) { a = __hsub(a, b); return a; }
__device__ __forceinline__ __half& operator*=(__half& a, const __half& b) { a = __hmul(a, b); return a; }
__device__ __forceinline__ __half& operator/=(__half& a, const __half& b) { a = __hdiv(a, b); return a; }
__device__ __forceinline__ bool operator==(const __half& a, const __half& b) { return __heq(a, b); }
__device__ __forceinline__ bool operator!=(const __half& a, const __half& b) { return __hneu(a, b); }
__device__ __forceinline__ bool operator<(const __half& a, const __half& b) { return __hlt(a, b); }
__device__ __forceinline__ bool operator<=(const __half& a, const __half& b) { return __hle(a, b); }
__device__ __forceinline__ bool operator>(const __half& a, const __half& b) { return __hgt(a, b); }
__device__ __forceinline__ bool operator>=(const __half& a, const __half& b) { return __hge(a, b); }
__device__ __forceinline__ __half2 operator+(const __half2& a, const __half2& b) { return __hadd2(a, b); }
__device__ __forceinline__ __half2 operator-(const __half2& a, const __half2& b) { return __hsub2(a, b); }
__device__ __forceinline__ __half2 operator*(const __half2& a, const __half2& b) { return __hmul2(a, b); }
__device__ __forceinline__ __half2 operator/(const __half2& a, const __half2& b) { return __h2div(a, b); }
__device__ __forceinline__ __half2 operator-(const __half2& a) { return __hneg2(a); }
__device__ __forceinline__ __half2& operator+=(__half2& a, const __half2& b) { a = __hadd2(a, b); return a; }
__device__ __forceinline__ __half2& operator-=(__half2& a, const __half2& b) { a = __hsub2(a, b); return a; }
__device__ __forceinline__ __half2& operator*=(__half2& a, const __half2& b) { a = __hmul2(a, b); return a; }
__device__ __forceinline__ __half2& operator/=(__half2& a, const __half2& b) { a = __h2div(a, b); return a; }
__device__ __forceinline__ bool operator==(const __half2& a, const __half2& b) { return __hbeq2(a, b); }
__device__ __forceinline__ bool operator!=(const __half2& a, const __half2& b) { return __hbne2(a, b); }

// ---- warp shuffles: a __half travels as both halves of a __half2 -------------------
__device__ __forceinline__ unsigned int __ptxc_shfl_clamp(int width, unsigned int lanes) {
    unsigned int warp; asm("{mov.u32 %0, WARP_SZ;\n}\n" : "=r"(warp));
    return ((warp << 8) - ((unsigned int)width << 8)) | lanes;
}
#define __PTXC_H2_SHFL(name, mode, lanes, lanetype) \
    __device__ __forceinline__ __half2 name(const unsigned int mask, const __half2 var, const lanetype lane, const int width = 32) { \
        __half2 r; const unsigned int c = __ptxc_shfl_clamp(width, lanes); \
        asm volatile("{shfl.sync." mode ".b32 %0,%1,%2,%3,%4;\n}\n" : "=r"(r) : "r"(var), "r"(lane), "r"(c), "r"(mask)); return r; } \
    __device__ __forceinline__ __half name(const unsigned int mask, const __half var, const lanetype lane, const int width = 32) { \
        return __low2half(name(mask, __half2half2(var), lane, width)); }
__PTXC_H2_SHFL(__shfl_sync, "idx", 31, int)
__PTXC_H2_SHFL(__shfl_up_sync, "up", 0, unsigned int)
__PTXC_H2_SHFL(__shfl_down_sync, "down", 31, unsigned int)
__PTXC_H2_SHFL(__shfl_xor_sync, "bfly", 31, int)

// ---- atomics -----------------------------------------------------------------------
__device__ __forceinline__ __half atomicAdd(__half* address, const __half val) { __half r; asm volatile("{ atom.add.noftz.f16 %0,[%1],%2; }\n" : "=h"(r) : "l"(address), "h"(val) : "memory"); return r; }
__device__ __forceinline__ __half2 atomicAdd(__half2* address, const __half2 val) { __half2 r; asm volatile("{ atom.add.noftz.f16x2 %0,[%1],%2; }\n" : "=r"(r) : "l"(address), "r"(val) : "memory"); return r; }

// ---- loads -------------------------------------------------------------------------
__device__ __forceinline__ __half __ldg(const __half* p) { __half r; asm("ld.global.nc.b16 %0, [%1];" : "=h"(r) : "l"(p)); return r; }
__device__ __forceinline__ __half2 __ldg(const __half2* p) { __half2 r; asm("ld.global.nc.b32 %0, [%1];" : "=r"(r) : "l"(p)); return r; }
