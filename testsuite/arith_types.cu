// Every arithmetic operator and conversion on char, short, int, unsigned, long, float,
// double and bool, free of undefined behaviour (divisors nonzero, shifts in range,
// no signed overflow), so ptxc's and nvcc's code must agree bit for bit.
// LAUNCH: arith_types grid=4 block=128 a=i32[512]:randint(-1000,1000) b=i32[512]:randint(1,50) f=f32[512]:rand d=f64[512]:rand c=i8[512]:randint(-100,100) ints=i32[8192]:zero longs=i64[2048]:zero floats=f32[4096]:zero doubles=f64[2048]:zero n=512

__global__ void arith_types(const int* a, const int* b, const float* f, const double* d,
                            const signed char* c, int* ints, long* longs, float* floats,
                            double* doubles, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = a[i], y = b[i];
    unsigned u = (unsigned)x;
    long l = (long)x * 100000;
    short s = (short)(x * 3);
    signed char ch = c[i];
    float fx = f[i];
    double dx = d[i];
    bool odd = x & 1;

    int* o = ints + 16 * i;
    o[0] = x / y;
    o[1] = x % y;
    o[2] = x / 8 + x % 4 + x / -2;
    o[3] = (int)(u / 16u + u % 32u);
    o[4] = x << (y & 15);
    o[5] = x >> (y & 31);
    o[6] = (int)(u >> (y & 31));
    o[7] = ~x ^ (x | y) & (x - y);
    o[8] = (x > y) + (x <= y) * 2 + (u < 7u) * 4 + (x == -x) * 8 + (x != y) * 16;
    o[9] = x > 0 && y < 20 ? x : -y;
    o[10] = !x + !odd + (odd || y > 25);
    o[11] = s + ch * 2 + (unsigned char)ch;
    o[12] = (int)fx * 1000 + (int)(dx * 1000.0);
    o[13] = min(x, y) + max(x, -y) + abs(x);
    o[14] = x * 7 + y * -3 - 11;
    o[15] = (short)(x * 300) + (char)(y * 11);

    long* w = longs + 4 * i;
    w[0] = l / 7 + l % 1000;
    w[1] = (long)u * y + ((long)x << 20);
    w[2] = l >> 3;
    w[3] = (unsigned long)(l + 5000000000L) / 3;

    float* g = floats + 8 * i;
    g[0] = fx * fx + 0.5f;
    g[1] = fx / 3.0f - fx * 2.0f;
    g[2] = (float)x / 4.0f + (float)u;
    g[3] = fx > 0.25f ? fx : 0.25f;
    g[4] = fminf(fx, 0.1f) + fmaxf(fx, -0.1f) + fabsf(fx);
    g[5] = (float)dx + (float)l;
    g[6] = -fx + (odd ? 1.0f : 2.0f);
    g[7] = sqrtf(fabsf(fx)) + (float)ch;

    double* h = doubles + 4 * i;
    h[0] = dx * dx + fx;
    h[1] = dx / 7.0 - x;
    h[2] = (double)l * 0.5 + (double)u;
    h[3] = fmax(dx, 0.0) + sqrt(fabs(dx));
}
