// bfloat16 conversions: every bf16 bit pattern to float (a shift on sm_89, cvt on sm_90)
// and back, float bit patterns across the range rounded to bf16 (nearest even,
// towards zero), pairs through __floats2bfloat162_rn / __bfloat1622float2.
// LAUNCH: bf16_to_float grid=256 block=256 out=u32[65536]:zero back=u16[65536]:zero
// LAUNCH: float_to_bf16 grid=128 block=256 rn=u16[32768]:zero rz=u16[32768]:zero pairs=u32[32768]:zero
#include <cuda_bf16.h>

__global__ void bf16_to_float(unsigned int* out, unsigned short* back) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __nv_bfloat16 b = __ushort_as_bfloat16((unsigned short)i);
    float f = __bfloat162float(b);
    out[i] = __float_as_uint(f);
    back[i] = __bfloat16_as_ushort(__float2bfloat16(f));
}

__global__ void float_to_bf16(unsigned short* rn, unsigned short* rz, unsigned int* pairs) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float f = __uint_as_float((unsigned int)i * 131072u + (unsigned int)i * 13u);
    float g = __uint_as_float(~((unsigned int)i * 131071u));
    rn[i] = __bfloat16_as_ushort(__float2bfloat16_rn(f));
    rz[i] = __bfloat16_as_ushort(__float2bfloat16_rz(f));
    __nv_bfloat162 p = __floats2bfloat162_rn(f, g);
    float2 q = __bfloat1622float2(p);
    __nv_bfloat162 r = __floats2bfloat162_rn(q.y, q.x);
    pairs[i] = (unsigned int)__bfloat16_as_ushort(__low2bfloat16(r)) |
               ((unsigned int)__bfloat16_as_ushort(__high2bfloat16(r)) << 16);
}
