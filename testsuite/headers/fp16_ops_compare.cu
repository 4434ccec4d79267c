// half arithmetic and comparisons over every half bit pattern (a) against random
// halves (b): the intrinsics (__hadd ... __hdiv, __hfma, __hmax/__hmin, hsqrt, hexp,
// __hneg, __habs), the operators, and every comparison packed into a bit mask; then
// the same on __half2 pairs (__hadd2, __hmul2, __hfma2, __h2div, __hbeq2 ...).
// LAUNCH: half_ops grid=256 block=256 b=u16[65536]:rand out=u16[655360]:zero masks=i32[65536]:zero
// LAUNCH: half2_ops grid=128 block=256 a=u32[32768]:rand b=u32[32768]:rand out=u32[163840]:zero masks=i32[32768]:zero
#include <cuda_fp16.h>

__global__ void half_ops(const __half* b, __half* out, int* masks) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half x = __ushort_as_half((unsigned short)i), y = b[i];
    __half* o = out + 10 * i;
    o[0] = __hadd(x, y);
    o[1] = __hsub(x, y);
    o[2] = __hmul(x, y);
    o[3] = __hdiv(x, y);
    o[4] = __hfma(x, y, __float2half(0.5f));
    o[5] = __hmax(x, y);
    o[6] = __hmin(x, y);
    o[7] = hsqrt(__habs(x));
    o[8] = hexp(y);
    o[9] = -x + (x * y - y / x);
    int m = __heq(x, y) | (__hne(x, y) << 1) | (__hlt(x, y) << 2) | (__hle(x, y) << 3) | (__hgt(x, y) << 4) |
            (__hge(x, y) << 5) | (__hisnan(x) << 6) | ((x == y) << 7) | ((x != y) << 8) | ((x < y) << 9) |
            ((x >= y) << 10) | (__hneu(x, y) << 11) | (__hltu(x, y) << 12);
    masks[i] = m;
}

__global__ void half2_ops(const __half2* a, const __half2* b, __half2* out, int* masks) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half2 x = a[i], y = b[i];
    __half2* o = out + 5 * i;
    o[0] = __hadd2(x, y);
    o[1] = __hmul2(x, y) - x;
    o[2] = __hfma2(x, y, __lowhigh2highlow(y));
    o[3] = __h2div(x, y);
    o[4] = __hmax2(__hneg2(x), __habs2(y));
    masks[i] = __hbeq2(x, y) | (__hblt2(x, y) << 1) | (__hbge2(x, y) << 2) | ((x == x) << 3);
}
