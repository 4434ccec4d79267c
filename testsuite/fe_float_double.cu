// float and double arithmetic and the conversions between them and the integers:
// mixed float/double expressions promote to double, int <-> float conversions
// round as C says (truncation toward zero to int), -0.0 and negation, division.
// LAUNCH: float_double grid=4 block=64 f=f32[256]:rand d=f64[256]:rand k=i32[256]:randint(-5000,5000) fo=f32[2048]:zero do_=f64[2048]:zero io=i32[1024]:zero n=256

__global__ void float_double(const float* f, const double* d, const int* k, float* fo, double* do_, int* io, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = f[i];
    double y = d[i];
    int m = k[i];
    float* F = fo + 8 * i;
    double* D = do_ + 8 * i;
    int* I = io + 4 * i;
    F[0] = x * 3.0f - 1.25f;
    F[1] = x / (1.5f + x * x);
    F[2] = (float)m / 7.0f;
    F[3] = -x + (float)y;
    F[4] = x * x * x - x;
    F[5] = (float)(unsigned)m;
    F[6] = m * 0.001f + 2.0f * x;
    F[7] = x > 0.0f ? x * 0.5f : -x * 2.0f;
    D[0] = y * y + x;
    D[1] = y / 3.0 - m;
    D[2] = (double)x * 0.1;
    D[3] = y * 1e10 + (double)m;
    D[4] = (double)(long)(y * 1e6) / 1e6;
    D[5] = y - (double)(float)y;
    D[6] = (double)m / (y + 2.0);
    D[7] = -y;
    I[0] = (int)(x * 1000.0f);
    I[1] = (int)(y * 100000.0);
    I[2] = (unsigned)(x * x * 1000.0f);
    I[3] = (short)(int)(y * 70000.0);
}
