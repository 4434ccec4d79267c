// Every C operator: arithmetic, bitwise, shifts, comparisons, logical, ?:, comma,
// sizeof, casts, prefix and postfix ++/--, and all compound assignments.
// LAUNCH: operators grid=2 block=128 a=i32[256]:randint(-1000,1000) b=i32[256]:randint(1,30) out=i32[4096]:zero n=256

__global__ void operators(const int* a, const int* b, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = a[i], y = b[i];
    unsigned u = (unsigned)x;
    int* o = out + 16 * i;
    int t = x;
    t += y; t -= 3; t *= 5; t /= y; t %= 1000;
    o[0] = t;
    unsigned v = u;
    v <<= y & 7; v >>= 3; v &= 0xfff0fu; v |= 0x100u; v ^= u;
    o[1] = (int)v;
    int p = x;
    int p1 = p++;
    int p2 = ++p;
    int p3 = p--;
    int p4 = --p;
    o[2] = p1 + p2 * 3 - p3 * 5 + p4 * 7 + p;
    o[3] = (x > y ? x : y) + (x < 0 ? -x : x);
    o[4] = (t = x * 2, t + y);
    o[5] = (int)sizeof(x) + (int)sizeof(double) * 3 + (int)sizeof o[0];
    o[6] = !x + !!y + (x && y) + (x || 0) * 2 + (!(x > 0) && y > 10) * 4;
    o[7] = ~x & 0x7fff | y << 4 ^ x >> 2;
    o[8] = (x == y) + (x != y) * 2 + (x <= y) * 4 + (x >= y) * 8;
    o[9] = (char)x + (short)(x * 100) + (unsigned char)y;
    o[10] = -x * -y / y;
    o[11] = x % y - x / y * y;
    o[12] = (int)(u >> 28) + (x >> 28);
    o[13] = x * y + x * 3 - (y << 2);
    int q = y;
    int q1 = q--;
    o[14] = q1 * --q + q;
    o[15] = +x - -y;
}
