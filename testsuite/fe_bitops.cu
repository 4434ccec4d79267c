// Bit manipulation: __popc, __popcll, __clz, __clzll, __ffs, __ffsll, __brev,
// __byte_perm, __funnelshift_l/r, __mulhi/__umulhi, shifts of 64-bit values, masks,
// rotations written with shifts, and bit reinterpretation (__float_as_int ...).
// LAUNCH: bitops grid=2 block=128 a=u32[256]:rand b=u64[256]:rand f=f32[256]:rand out=u32[3328]:zero

__global__ void bitops(const unsigned* a, const unsigned long long* b, const float* f, unsigned* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned x = a[i];
    unsigned long long y = b[i];
    unsigned* o = out + 13 * i;
    o[0] = __popc(x) + __popcll(y) * 100;
    o[1] = __clz(x) + __clzll(y) * 100;
    o[2] = __ffs(x) + __ffsll(y) * 100;
    o[3] = __brev(x);
    o[4] = __byte_perm(x, (unsigned)y, 0x5140);
    o[5] = __funnelshift_l(x, (unsigned)(y >> 32), i & 31) ^ __funnelshift_r(x, (unsigned)y, (i * 7) & 31);
    o[6] = (x << (i & 31)) | (x >> ((32 - (i & 31)) & 31));
    o[7] = (unsigned)(y >> 17) ^ (unsigned)(y << 5);
    o[8] = __umulhi(x, 2654435761u) + (unsigned)__mulhi((int)x, -12345);
    o[9] = __float_as_uint(f[i]) ^ (unsigned)__float_as_int(f[i] * 2.0f);
    o[10] = __float_as_uint(__int_as_float((int)(x & 0x3fffffff)) + 1.0f);
    o[11] = (unsigned)(__double_as_longlong((double)f[i]) >> 29);
    o[12] = (x & 0xff00ff00u) >> 8 | (x & 0x00ff00ffu) << 8;
}
