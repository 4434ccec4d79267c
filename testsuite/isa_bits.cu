// Bit tricks and integer arithmetic: popcount, leading zeros, bit reverse, byte
// permute, funnel shifts, min/max/abs, 64-bit arithmetic, high multiplies, division.
// LAUNCH: bit_tricks grid=8 block=128 x=u32[1024]:rand y=u32[1024]:rand out=u32[8192]:zero n=1024
// LAUNCH: int_arith grid=8 block=128 x=i32[1024]:rand y=i32[1024]:randint(1,1000) out=i32[8192]:zero n=1024
// LAUNCH: wide_arith grid=8 block=128 x=u64[1024]:rand y=u64[1024]:rand out=u64[4096]:zero n=1024
// LAUNCH: gray_code grid=4 block=256 out=u32[1024]:zero bits=u8[1024]:zero n=1024

__global__ void bit_tricks(const unsigned* x, const unsigned* y, unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned a = x[i], b = y[i];
    out[8 * i + 0] = __popc(a) + __popcll(((unsigned long long)a << 32) | b);
    out[8 * i + 1] = __clz(a) + __clzll((unsigned long long)b);
    out[8 * i + 2] = __brev(a) ^ (unsigned)__brevll(b);
    out[8 * i + 3] = __byte_perm(a, b, 0x5140) + __byte_perm(a, b, i & 0x7777);
    out[8 * i + 4] = __funnelshift_l(a, b, i) ^ __funnelshift_r(a, b, 7) ^ __funnelshift_rc(a, b, i);
    out[8 * i + 5] = __ffs(a) + __ffsll((long long)b << 3);
    out[8 * i + 6] = (a & ~b) | (a ^ (b >> 3)) | ((a << 5) & 0xf0f0f0f0u);
    out[8 * i + 7] = ((a >> (b & 31)) & 0x3ff) | (((int)a >> 28) << 12) | __umulhi(a, b);
}

__global__ void int_arith(const int* x, const int* y, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a = x[i], b = y[i];
    out[8 * i + 0] = min(a, b) + max(a, 17);
    out[8 * i + 1] = abs(a) - (int)min((unsigned)a, (unsigned)b);
    out[8 * i + 2] = a / b + a % b;
    out[8 * i + 3] = (int)((unsigned)a / (unsigned)b) + (int)((unsigned)a % 10u);
    out[8 * i + 4] = __mulhi(a, b) + __mul24(a, b) + a * 12345 + a * 8;
    out[8 * i + 5] = __sad(a, b, 3) + __usad((unsigned)a, (unsigned)b, 1u);
    out[8 * i + 6] = (a << 3) + (a >> 2) + ((unsigned)a >> 30) + (b * 3 - a);
    out[8 * i + 7] = __vabsdiffs4(a, b) + __hadd(a, b) + __rhadd(a, b);
}

__global__ void wide_arith(const unsigned long long* x, const unsigned long long* y, unsigned long long* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long a = x[i], b = y[i];
    out[4 * i + 0] = a * b + (a >> 13) + (b << 7);
    out[4 * i + 1] = __umul64hi(a, b) ^ (unsigned long long)((long long)a >> 5);
    out[4 * i + 2] = a / (b | 1) + a % 1000;
    out[4 * i + 3] = (a < b ? a - b : b - a) + (unsigned long long)min((long long)a, (long long)b) + max(a, b);
}

__global__ void gray_code(unsigned* out, unsigned char* bits, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned g = i ^ (i >> 1);
    out[i] = g;
    bits[i] = (unsigned char)(__popc(g) & 1 ? 0x80 | (g & 0x7f) : g & 0x7f);
}
