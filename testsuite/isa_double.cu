// Double precision: arithmetic, division and square root (Newton iterations on
// MUFU.RCP64H/RSQ64H), comparisons, and conversions to and from float and integers.
// LAUNCH: double_arith grid=8 block=128 x=f64[1024]:rand y=f64[1024]:rand out=f64[6144]:zero n=1024 ulp=2
// LAUNCH: double_convert grid=8 block=128 x=f64[1024]:rand f=f32[1024]:rand i=i32[1024]:randint(-100000,100000) fo=f32[1024]:zero dout=f64[3072]:zero io=i32[2048]:zero lo=i64[1024]:zero n=1024
// LAUNCH: double_compare grid=8 block=128 x=f64[1024]:rand y=f64[1024]:rand flags=i32[1024]:zero out=f64[1024]:zero n=1024
// LAUNCH: horner grid=8 block=128 x=f64[1024]:rand out=f64[1024]:zero n=1024 ulp=2

__global__ void double_arith(const double* x, const double* y, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double a = x[i], b = y[i];
    out[6 * i + 0] = a + b;
    out[6 * i + 1] = a * b - 1.5;
    out[6 * i + 2] = a / b;
    out[6 * i + 3] = sqrt(fabs(a));
    out[6 * i + 4] = fma(a, b, 0.25) + a * 3.0;
    out[6 * i + 5] = fmin(a, b) + fmax(a, b) + 1.0 / (b + 2.0) + rsqrt(fabs(a) + 1.0);
}

__global__ void double_convert(const double* x, const float* f, const int* i, float* fo, double* dout, int* io,
                               long long* lo, int n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    double d = x[k] * 1.0e5;
    fo[k] = (float)d;
    dout[3 * k + 0] = (double)f[k];
    dout[3 * k + 1] = (double)i[k];
    dout[3 * k + 2] = (double)(unsigned)i[k] + (double)(long long)i[k] * 0.5;
    io[2 * k + 0] = (int)d;
    io[2 * k + 1] = (int)(unsigned)fabs(d) + __double2int_rn(d);
    lo[k] = (long long)d + __double_as_longlong(d) % 7;
}

__global__ void double_compare(const double* x, const double* y, int* flags, double* out, int n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    double a = x[k], b = y[k];
    int f = 0;
    if (a < b) f |= 1;
    if (a >= 0.5) f |= 2;
    if (isnan(a / b)) f |= 4;
    if (isinf(a * 1e308 * 10.0)) f |= 8;
    if (a != b && b <= 0.0) f |= 16;
    flags[k] = f;
    out[k] = a > b ? a : -b;
}

__global__ void horner(const double* x, double* out, int n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    double t = x[k], r = 0.0;
    const double c[8] = {1.0, -0.5, 0.333333333333, -0.25, 0.2, -0.1666666666, 0.142857142857, -0.125};
#pragma unroll
    for (int j = 7; j >= 0; j--) r = r * t + c[j];
    out[k] = r;
}
