// Every integer type and C's promotions: char, signed/unsigned char, short, int, long,
// long long, their unsigned forms and size_t; integer promotion of narrow operands,
// the usual arithmetic conversions between signed and unsigned, wrap-around of
// unsigned arithmetic, truncation to narrow types, sign and zero extension.
// LAUNCH: int_types grid=4 block=64 a=i32[256]:randint(-100000,100000) b=i32[256]:randint(1,1000) c=i8[256]:rand s=i16[256]:rand ull=u64[256]:rand out=i64[4096]:zero n=256

__global__ void int_types(const int* a, const int* b, const signed char* c, const short* s,
                          const unsigned long long* ull, long long* out, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = a[i], y = b[i];
    signed char sc = c[i];
    unsigned char uc = (unsigned char)c[i];
    char ch = (char)(x & 0x7f);
    short sh = s[i];
    unsigned short us = (unsigned short)s[i];
    unsigned u = (unsigned)x;
    long l = x;
    unsigned long ul = (unsigned long)x;
    long long ll = (long long)x * y;
    unsigned long long q = ull[i];
    long long* o = out + 16 * i;
    o[0] = sc + uc;                 // both promote to int
    o[1] = sh * us;                 // int * int
    o[2] = u + x;                   // int converts to unsigned
    o[3] = (x < 0) == (u < 0u);     // unsigned never below zero
    o[4] = l - ul;                  // unsigned long arithmetic
    o[5] = ll / 3 + ll % 7;
    o[6] = q >> 7 ^ q << 3;
    o[7] = (unsigned char)(x * 13) + (signed char)(x * 7) + (short)(x * 1001) + (unsigned short)(x * 999);
    o[8] = ch + (char)sh;
    o[9] = (long long)(unsigned)(-y) + (unsigned long long)(unsigned short)(-y);
    o[10] = (int)(q % 1000003) - (int)(u % 17u);
    o[11] = sizeof(char) + sizeof(short) * 10 + sizeof(int) * 100 + sizeof(long) * 1000 + sizeof(long long) * 10000 + sizeof(size_t) * 100000;
    o[12] = (u * 2654435761u) >> 16;
    o[13] = (long)us << 40 | (long)uc << 8 | (unsigned char)sc;
    o[14] = q / (unsigned long long)y + q % (unsigned)y;
    o[15] = (x > y) + (u > (unsigned)y) * 2 + (sc < uc) * 4 + (l >= (long)ul) * 8;
}
