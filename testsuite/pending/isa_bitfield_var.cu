// bfe and bfi with the position and length in registers (hand-written PTX does this;
// nvcc writes constants for C bit fields): u32/s32/u64/s64 extracts and b32/b64 inserts,
// with positions and lengths over their whole range (PTX reads the low byte of each for
// 32-bit values) and in the interesting 0..70 band, where fields run off the top.
// LAUNCH: bitfield_var grid=2 block=64 x=u32[128]:rand l=u64[128]:rand pos=u32[128]:randint(0,70) len=u32[128]:randint(0,70) wild=u32[128]:rand out=u32[768]:zero lout=u64[768]:zero

__device__ __forceinline__ unsigned bfe_u32(unsigned x, unsigned p, unsigned n) {
    unsigned r;
    asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(p), "r"(n));
    return r;
}

__device__ __forceinline__ int bfe_s32(int x, unsigned p, unsigned n) {
    int r;
    asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(p), "r"(n));
    return r;
}

__device__ __forceinline__ unsigned bfi_b32(unsigned a, unsigned b, unsigned p, unsigned n) {
    unsigned r;
    asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(a), "r"(b), "r"(p), "r"(n));
    return r;
}

__device__ __forceinline__ unsigned long long bfe_u64(unsigned long long x, unsigned p, unsigned n) {
    unsigned long long r;
    asm("bfe.u64 %0, %1, %2, %3;" : "=l"(r) : "l"(x), "r"(p), "r"(n));
    return r;
}

__device__ __forceinline__ long long bfe_s64(long long x, unsigned p, unsigned n) {
    long long r;
    asm("bfe.s64 %0, %1, %2, %3;" : "=l"(r) : "l"(x), "r"(p), "r"(n));
    return r;
}

__device__ __forceinline__ unsigned long long bfi_b64(unsigned long long a, unsigned long long b, unsigned p,
                                                      unsigned n) {
    unsigned long long r;
    asm("bfi.b64 %0, %1, %2, %3, %4;" : "=l"(r) : "l"(a), "l"(b), "r"(p), "r"(n));
    return r;
}

__global__ void bitfield_var(const unsigned* x, const unsigned long long* l, const unsigned* pos,
                             const unsigned* len, const unsigned* wild, unsigned* out, unsigned long long* lout) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned p = pos[i], n = len[i], w = wild[i], v = x[i];
    unsigned long long q = l[i];
    out[i] = bfe_u32(v, p, n);
    out[128 + i] = (unsigned)bfe_s32((int)v, p, n);
    out[256 + i] = bfi_b32(v, w, p, n);
    out[384 + i] = bfe_u32(v, w, w >> 8);          // the whole range: only the low bytes count
    out[512 + i] = (unsigned)bfe_s32((int)v, w >> 16, w);
    out[640 + i] = bfi_b32(w, v, w >> 24, w >> 4);
    lout[i] = bfe_u64(q, p, n);
    lout[128 + i] = (unsigned long long)bfe_s64((long long)q, p, n);
    lout[256 + i] = bfi_b64(q, (unsigned long long)w * 0x9E3779B97F4A7C15ull, p, n);
    lout[384 + i] = bfe_u64(q, p & 63, 8);         // a constant length
    lout[512 + i] = (unsigned long long)bfe_s64((long long)q, 13, n & 63);
    lout[640 + i] = bfi_b64(q, ~q, p & 63, 17);
}
