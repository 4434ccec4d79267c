// Conversions between float and half over the whole range: every half bit pattern to
// float and back (denormals, infinities, NaNs included), float bit patterns striding
// across the float range through each rounding of __float2half*, and the integer
// conversions at their edges (saturation, NaN).
// LAUNCH: half_to_float grid=256 block=256 out=u32[65536]:zero back=u16[65536]:zero ints=i32[65536]:zero
// LAUNCH: float_to_half grid=128 block=256 rn=u16[32768]:zero rz=u16[32768]:zero rd=u16[32768]:zero ru=u16[32768]:zero
// LAUNCH: int_to_half grid=16 block=256 vals=i32[4096]:randint(-70000,70000) out=u16[4096]:zero
#include <cuda_fp16.h>

__global__ void half_to_float(unsigned int* out, unsigned short* back, int* ints) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half h = __ushort_as_half((unsigned short)i);
    float f = __half2float(h);
    out[i] = __float_as_uint(f);
    back[i] = __half_as_ushort(__float2half(f));
    ints[i] = __half2int_rz(h) + (__half2int_rn(h) << 1);
}

__global__ void float_to_half(unsigned short* rn, unsigned short* rz, unsigned short* rd, unsigned short* ru) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    // 2^32 / 32768 = 131072 apart, plus an odd offset so mantissas vary
    float f = __uint_as_float((unsigned int)i * 131072u + (unsigned int)i * 7u);
    rn[i] = __half_as_ushort(__float2half_rn(f));
    rz[i] = __half_as_ushort(__float2half_rz(f));
    rd[i] = __half_as_ushort(__float2half_rd(f));
    ru[i] = __half_as_ushort(__float2half_ru(f));
}

__global__ void int_to_half(const int* vals, unsigned short* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    half h = __int2half_rn(vals[i]);
    half u = __uint2half_rn((unsigned int)(vals[i] & 0xffff));
    out[i] = __half_as_ushort(h) ^ __half_as_ushort(u);
}
