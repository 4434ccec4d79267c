// Control flow and C's arithmetic: while / do-while / for with break and continue,
// switch, compound assignment, ++ and --, ?:, casts between char, short, int,
// unsigned, long, float, double and bool.
// LAUNCH: collatz grid=8 block=128 start=i32[1024]:randint(1,100000) steps=i32[1024]:zero wide=i64[1024]:zero bytes=u8[1024]:zero flags=u8[1024]:zero halves=f64[1024]:zero n=1024

typedef unsigned int uint;

__device__ int clamp_int(int x, int lo, int hi) {
    if (x < lo) return lo;
    if (x > hi) return hi;
    return x;
}

__global__ void collatz(const int* start, int* steps, long* wide, unsigned char* bytes,
                        bool* flags, double* halves, uint n) {
    uint i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    long x = start[i];
    int count = 0;
    while (x != 1) {
        if (x % 2 == 0)
            x /= 2;
        else
            x = 3 * x + 1;
        ++count;
        if (count >= 500)
            break;
    }
    int odd = 0;
    for (int k = 0; k < 16; k++) {
        if ((start[i] >> k & 1) == 0)
            continue;
        odd += k;
    }
    int kind;
    switch (count % 4) {
    case 0: kind = 10; break;
    case 1: kind = 20; break;
    case 3: kind = -5; break;
    default: kind = 0;
    }
    int j = 0;
    do {
        j += 3;
    } while (j < 10);
    steps[i] = clamp_int(count, 0, 255) + kind * j;
    wide[i] = (long)count << 33 | (unsigned)odd;
    char c = (char)(start[i] & 0xff);
    bytes[i] = (unsigned char)(c + 1);
    flags[i] = count > 100 && !(odd & 1);
    halves[i] = count * 0.5 + (float)odd / 4.0f;
    steps[i] -= count-- > 50 ? 1 : 0;
}
