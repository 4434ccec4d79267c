// cuda_bf16.h as ptxc implements it: __nv_bfloat16 and __nv_bfloat162 with CUDA's names
// and layouts, their operations as the PTX that NVVM emits for NVIDIA's header (sm_89:
// bf16 adds and multiplies are fma.rn.bf16 with 1.0 or -0.0; sm_90 has add/mul.bf16).
// ptxc's own text, not NVIDIA's.
#pragma once
#define __CUDA_BF16_H__
#define __CUDA_BF16_TYPES_EXIST__
#include <cuda_fp16.h>

struct __nv_bfloat16_raw { unsigned short x; };
struct __align__(4) __nv_bfloat162_raw { unsigned short x; unsigned short y; };

struct __nv_bfloat16 {
    unsigned short __x;
    __device__ __nv_bfloat16() {}
    __device__ __nv_bfloat16(const __nv_bfloat16_raw& raw) : __x(raw.x) {}
    __device__ __nv_bfloat16(float f) { asm("{  cvt.rn.bf16.f32 %0, %1;}\n" : "=h"(__x) : "f"(f)); }
#if __CUDA_ARCH__ >= 900
    __device__ operator float() const { float f; asm("{ cvt.f32.bf16 %0, %1;}\n" : "=f"(f) : "h"(__x)); return f; }
#else
    __device__ operator float() const { float f; asm("{ mov.b32 %0, {0,%1};}\n" : "=f"(f) : "h"(__x)); return f; }
#endif
};
typedef __nv_bfloat16 nv_bfloat16;

struct __align__(4) __nv_bfloat162 {
    __nv_bfloat16 x;
    __nv_bfloat16 y;
    __device__ __nv_bfloat162() {}
    __device__ __nv_bfloat162(const __nv_bfloat16& a, const __nv_bfloat16& b) : x(a), y(b) {}
};
typedef __nv_bfloat162 nv_bfloat162;

__device__ __forceinline__ __nv_bfloat16 __ptxc_bf16(unsigned short bits) { const __nv_bfloat16_raw r = {bits}; return __nv_bfloat16(r); }
__device__ __forceinline__ unsigned short __bfloat16_as_ushort(const __nv_bfloat16 h) { return h.__x; }
__device__ __forceinline__ __nv_bfloat16 __ushort_as_bfloat16(const unsigned short i) { return __ptxc_bf16(i); }

// ---- conversions -------------------------------------------------------------------
__device__ __forceinline__ __nv_bfloat16 __float2bfloat16(const float a) { __nv_bfloat16 r; asm("{  cvt.rn.bf16.f32 %0, %1;}\n" : "=h"(r) : "f"(a)); return r; }
__device__ __forceinline__ __nv_bfloat16 __float2bfloat16_rn(const float a) { __nv_bfloat16 r; asm("{  cvt.rn.bf16.f32 %0, %1;}\n" : "=h"(r) : "f"(a)); return r; }
__device__ __forceinline__ __nv_bfloat16 __float2bfloat16_rz(const float a) { __nv_bfloat16 r; asm("{  cvt.rz.bf16.f32 %0, %1;}\n" : "=h"(r) : "f"(a)); return r; }
#if __CUDA_ARCH__ >= 900
__device__ __forceinline__ float __bfloat162float(const __nv_bfloat16 a) { float f; asm("{ cvt.f32.bf16 %0, %1;}\n" : "=f"(f) : "h"(a)); return f; }
#else
__device__ __forceinline__ float __bfloat162float(const __nv_bfloat16 a) { float f; asm("{ mov.b32 %0, {0,%1};}\n" : "=f"(f) : "h"(a)); return f; }
#endif
__device__ __forceinline__ __nv_bfloat162 __floats2bfloat162_rn(const float a, const float b) { __nv_bfloat162 r; asm("{ cvt.rn.bf16x2.f32 %0, %2, %1;}\n" : "=r"(r) : "f"(a), "f"(b)); return r; }
__device__ __forceinline__ __nv_bfloat162 __float22bfloat162_rn(const float2 a) { return __floats2bfloat162_rn(a.x, a.y); }
__device__ __forceinline__ __nv_bfloat162 __float2bfloat162_rn(const float a) { return __floats2bfloat162_rn(a, a); }
__device__ __forceinline__ __nv_bfloat16 __low2bfloat16(const __nv_bfloat162 a) { __nv_bfloat16 r; asm("{.reg .b16 low,high;\n mov.b32 {low,high}, %1;\n mov.b16 %0, low;}\n" : "=h"(r) : "r"(a)); return r; }
__device__ __forceinline__ __nv_bfloat16 __high2bfloat16(const __nv_bfloat162 a) { __nv_bfloat16 r; asm("{.reg .b16 low,high;\n mov.b32 {low,high}, %1;\n mov.b16 %0, high;}\n" : "=h"(r) : "r"(a)); return r; }
// (the halves as fields: NVVM splits the word with one plain `mov.b32 {lo, hi}`)
__device__ __forceinline__ float __low2float(const __nv_bfloat162 a) { return __bfloat162float(a.x); }
__device__ __forceinline__ float __high2float(const __nv_bfloat162 a) { return __bfloat162float(a.y); }
__device__ __forceinline__ float2 __bfloat1622float2(const __nv_bfloat162 a) { return make_float2(__bfloat162float(a.x), __bfloat162float(a.y)); }
__device__ __forceinline__ __nv_bfloat162 __halves2bfloat162(const __nv_bfloat16 a, const __nv_bfloat16 b) { __nv_bfloat162 r; asm("{  mov.b32 %0, {%1,%2};}\n" : "=r"(r) : "h"(a), "h"(b)); return r; }
__device__ __forceinline__ __nv_bfloat162 __bfloat162bfloat162(const __nv_bfloat16 a) { __nv_bfloat162 r; asm("{  mov.b32 %0, {%1,%1};}\n" : "=r"(r) : "h"(a)); return r; }
__device__ __forceinline__ __nv_bfloat162 make_bfloat162(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __halves2bfloat162(a, b); }
__device__ __forceinline__ __nv_bfloat16 __float2bfloat16_from_half(const __half h) { return __float2bfloat16(__half2float(h)); }

// ---- arithmetic --------------------------------------------------------------------
#if __CUDA_ARCH__ >= 900
__device__ __forceinline__ __nv_bfloat16 __hadd(const __nv_bfloat16 a, const __nv_bfloat16 b) { __nv_bfloat16 r; asm("{ add.bf16 %0,%1,%2; }\n" : "=h"(r) : "h"(a), "h"(b)); return r; }
__device__ __forceinline__ __nv_bfloat16 __hsub(const __nv_bfloat16 a, const __nv_bfloat16 b) { __nv_bfloat16 r; asm("{ sub.bf16 %0,%1,%2; }\n" : "=h"(r) : "h"(a), "h"(b)); return r; }
__device__ __forceinline__ __nv_bfloat16 __hmul(const __nv_bfloat16 a, const __nv_bfloat16 b) { __nv_bfloat16 r; asm("{ mul.bf16 %0,%1,%2; }\n" : "=h"(r) : "h"(a), "h"(b)); return r; }
__device__ __forceinline__ __nv_bfloat162 __hadd2(const __nv_bfloat162 a, const __nv_bfloat162 b) { __nv_bfloat162 r; asm("{ add.bf16x2 %0,%1,%2; }\n" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ __nv_bfloat162 __hsub2(const __nv_bfloat162 a, const __nv_bfloat162 b) { __nv_bfloat162 r; asm("{ sub.bf16x2 %0,%1,%2; }\n" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ __nv_bfloat162 __hmul2(const __nv_bfloat162 a, const __nv_bfloat162 b) { __nv_bfloat162 r; asm("{ mul.bf16x2 %0,%1,%2; }\n" : "=r"(r) : "r"(a), "r"(b)); return r; }
#else
__device__ __forceinline__ __nv_bfloat16 __hadd(const __nv_bfloat16 a, const __nv_bfloat16 b) { __nv_bfloat16 r; asm("{.reg .b16 c;\n  mov.b16 c, 0x3f80U;\n  fma.rn.bf16 %0,%1,c,%2;}\n" : "=h"(r) : "h"(a), "h"(b)); return r; }
__device__ __forceinline__ __nv_bfloat16 __hsub(const __nv_bfloat16 a, const __nv_bfloat16 b) { __nv_bfloat16 r; asm("{.reg .b16 c;\n  mov.b16 c, 0xbf80U;\n  fma.rn.bf16 %0,%2,c,%1;}\n" : "=h"(r) : "h"(a), "h"(b)); return r; }
__device__ __forceinline__ __nv_bfloat16 __hmul(const __nv_bfloat16 a, const __nv_bfloat16 b) { __nv_bfloat16 r; asm("{.reg .b16 c;\n  mov.b16 c, 0x8000U;\n  fma.rn.bf16 %0,%1,%2,c;}\n" : "=h"(r) : "h"(a), "h"(b)); return r; }
__device__ __forceinline__ __nv_bfloat162 __hadd2(const __nv_bfloat162 a, const __nv_bfloat162 b) { __nv_bfloat162 r; asm("{.reg .b32 c;\n  mov.b32 c, 0x3f803f80U;\n  fma.rn.bf16x2 %0,%1,c,%2;}\n" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ __nv_bfloat162 __hsub2(const __nv_bfloat162 a, const __nv_bfloat162 b) { __nv_bfloat162 r; asm("{.reg .b32 c;\n  mov.b32 c, 0xbf80bf80U;\n  fma.rn.bf16x2 %0,%2,c,%1;}\n" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ __nv_bfloat162 __hmul2(const __nv_bfloat162 a, const __nv_bfloat162 b) { __nv_bfloat162 r; asm("{.reg .b32 c;\n  mov.b32 c, 0x80008000U;\n  fma.rn.bf16x2 %0,%1,%2,c;}\n" : "=r"(r) : "r"(a), "r"(b)); return r; }
#endif
__device__ __forceinline__ __nv_bfloat16 __hfma(const __nv_bfloat16 a, const __nv_bfloat16 b, const __nv_bfloat16 c) { __nv_bfloat16 r; asm("{fma.rn.bf16 %0,%1,%2,%3;\n}\n" : "=h"(r) : "h"(a), "h"(b), "h"(c)); return r; }
__device__ __forceinline__ __nv_bfloat162 __hfma2(const __nv_bfloat162 a, const __nv_bfloat162 b, const __nv_bfloat162 c) { __nv_bfloat162 r; asm("{fma.rn.bf16x2 %0,%1,%2,%3;\n}\n" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
__device__ __forceinline__ __nv_bfloat16 __hneg(const __nv_bfloat16 a) { __nv_bfloat16 r; asm("{neg.bf16 %0,%1;\n}\n" : "=h"(r) : "h"(a)); return r; }
__device__ __forceinline__ __nv_bfloat16 __habs(const __nv_bfloat16 a) { __nv_bfloat16 r; asm("{abs.bf16 %0,%1;\n}\n" : "=h"(r) : "h"(a)); return r; }
__device__ __forceinline__ __nv_bfloat16 __hmax(const __nv_bfloat16 a, const __nv_bfloat16 b) { __nv_bfloat16 r; asm("{max.bf16 %0,%1,%2;\n}\n" : "=h"(r) : "h"(a), "h"(b)); return r; }
__device__ __forceinline__ __nv_bfloat16 __hmin(const __nv_bfloat16 a, const __nv_bfloat16 b) { __nv_bfloat16 r; asm("{min.bf16 %0,%1,%2;\n}\n" : "=h"(r) : "h"(a), "h"(b)); return r; }

// ---- operators ---------------------------------------------------------------------
__device__ __forceinline__ __nv_bfloat16 operator+(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hadd(a, b); }
__device__ __forceinline__ __nv_bfloat16 operator-(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hsub(a, b); }
__device__ __forceinline__ __nv_bfloat16 operator*(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hmul(a, b); }
__device__ __forceinline__ __nv_bfloat16 operator-(const __nv_bfloat16& a) { return __hneg(a); }
__device__ __forceinline__ __nv_bfloat16& operator+=(__nv_bfloat16& a, const __nv_bfloat16& b) { a = __hadd(a, b); return a; }
__device__ __forceinline__ __nv_bfloat16& operator*=(__nv_bfloat16& a, const __nv_bfloat16& b) { a = __hmul(a, b); return a; }
__device__ __forceinline__ __nv_bfloat162 operator+(const __nv_bfloat162& a, const __nv_bfloat162& b) { return __hadd2(a, b); }
__device__ __forceinline__ __nv_bfloat162 operator*(const __nv_bfloat162& a, const __nv_bfloat162& b) { return __hmul2(a, b); }

// ---- warp shuffles: as the __half2 ones (cuda_fp16.h), a __nv_bfloat16 as both halves --
#define __PTXC_BF2_SHFL(name, mode, lanes, lanetype) \
    __device__ __forceinline__ __nv_bfloat162 name(const unsigned int mask, const __nv_bfloat162 var, const lanetype lane, const int width = 32) { \
        __nv_bfloat162 r; const unsigned int c = __ptxc_shfl_clamp(width, lanes); \
        asm volatile("{shfl.sync." mode ".b32 %0,%1,%2,%3,%4;\n}\n" : "=r"(r) : "r"(var), "r"(lane), "r"(c), "r"(mask)); return r; } \
    __device__ __forceinline__ __nv_bfloat16 name(const unsigned int mask, const __nv_bfloat16 var, const lanetype lane, const int width = 32) { \
        return __low2bfloat16(name(mask, __bfloat162bfloat162(var), lane, width)); }
__PTXC_BF2_SHFL(__shfl_sync, "idx", 31, int)
__PTXC_BF2_SHFL(__shfl_up_sync, "up", 0, unsigned int)
__PTXC_BF2_SHFL(__shfl_down_sync, "down", 31, unsigned int)
__PTXC_BF2_SHFL(__shfl_xor_sync, "bfly", 31, int)

// ---- atomics -----------------------------------------------------------------------
#if __CUDA_ARCH__ >= 900
__device__ __forceinline__ __nv_bfloat16 atomicAdd(__nv_bfloat16* address, const __nv_bfloat16 val) { __nv_bfloat16 r; asm volatile("{ atom.add.noftz.bf16 %0,[%1],%2; }\n" : "=h"(r) : "l"(address), "h"(val) : "memory"); return r; }
#else
// sm_89 has no bf16 atomic add: a compare-and-swap loop on the 16 bits.
__device__ __forceinline__ __nv_bfloat16 atomicAdd(__nv_bfloat16* address, const __nv_bfloat16 val) {
    unsigned short* bits = (unsigned short*)address;
    unsigned short old = *bits, assumed;
    do {
        assumed = old;
        old = atomicCAS(bits, assumed, __bfloat16_as_ushort(__hadd(val, __ushort_as_bfloat16(assumed))));
    } while (assumed != old);
    return __ushort_as_bfloat16(old);
}
#endif
