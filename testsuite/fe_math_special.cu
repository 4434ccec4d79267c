// CUDA's special and rounding functions, float and double, as NVVM inlines them
// (libdevice): the inverse hyperbolics, erfc/erfinv/erfcinv/erfcx, normcdf and its
// inverse, lgamma/tgamma, sinpi/cospi, rcbrt, logb/ilogb, nearbyint, l/llrint and
// l/llround, ldexp/scalbn/scalbln, remainder, nextafter, rhypot, norm3d/norm4d and
// their reciprocals, fdividef; and C++'s float overloads (ldexp(float, int) is ldexpf).
// One result per store: NVVM folds a multiply that ends both arms of a libdevice
// function's branch into an FMA with the caller's add (ptxc does not: see
// docs/frontend.md), which would move a sum of two such calls by an ulp.
// LAUNCH: math_special_float grid=2 block=64 x=f32[128]:rand y=f32[128]:rand out=f32[5120]:zero wide=i64[512]:zero n=128
// LAUNCH: math_special_double grid=2 block=64 xd=f64[128]:rand yd=f64[128]:rand outd=f64[5120]:zero wided=i64[512]:zero n=128

__global__ void math_special_float(const float* x, const float* y, float* out, long long* wide, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float a = x[i], b = y[i];
    float* o = out + 40 * i;
    o[0] = acoshf(fabsf(a) * 8.0f + 1.0f);
    o[1] = asinhf(b * 50.0f);
    o[2] = atanhf(a * 0.999f);
    o[3] = erfcf(a * 6.0f);
    o[4] = erfcxf(b * 30.0f);
    o[5] = erfinvf(a);
    o[6] = erfcinvf(b + 1.0f);
    o[7] = normcdff(a * 10.0f);
    o[8] = normcdfinvf(fabsf(b) * 0.999f + 0.0005f);
    o[9] = lgammaf(a * 40.0f);
    o[10] = tgammaf(b * 20.0f);
    o[11] = sinpif(a * 1000.0f);
    o[12] = cospif(b * 3.0f);
    o[13] = rcbrtf(a * 1e6f);
    o[14] = logbf(a * 1e20f);
    o[15] = (float)ilogbf(b * 1e-20f);
    o[16] = nearbyintf(a * 10.5f);
    o[17] = (float)lrintf(a * 1e7f);
    o[18] = (float)lroundf(b * 2.5e6f);
    o[19] = ldexpf(a, 100);
    o[20] = scalbnf(b, -120);
    o[21] = scalblnf(a, 3L);
    o[22] = remainderf(a * 100.0f, b + 1.5f);
    o[23] = nextafterf(a, b);
    o[24] = rhypotf(a, b);
    o[25] = norm3df(a, b, 0.5f);
    o[26] = rnorm3df(b, a, 2.0f);
    o[27] = norm4df(a, b, a * b, 1e-3f);
    o[28] = rnorm4df(b, a, 3.0f, -4.0f);
    o[29] = fdividef(a, b + 2.0f);
    // C++'s float overloads of the double names
    o[30] = ldexp(a, 5);
    o[31] = lgamma(b * 3.0f);
    o[32] = erfc(a);
    wide[4 * i + 0] = llrintf(a * 3e9f);
    wide[4 * i + 1] = llroundf(b * 1.5e12f);
    wide[4 * i + 2] = lrintf(b * 7.5f);
    wide[4 * i + 3] = (long long)ilogbf(0.0f) * 4 + ilogbf(a);
}

__global__ void math_special_double(const double* xd, const double* yd, double* outd, long long* wided, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    double a = xd[i], b = yd[i];
    double* o = outd + 40 * i;
    o[0] = acosh(fabs(a) * 8.0 + 1.0);
    o[1] = asinh(b * 50.0);
    o[2] = atanh(a * 0.999);
    o[3] = erfc(a * 6.0);
    o[4] = erfcx(b * 30.0);
    o[5] = erfinv(a);
    o[6] = erfcinv(b + 1.0);
    o[7] = normcdf(a * 10.0);
    o[8] = normcdfinv(fabs(b) * 0.999 + 0.0005);
    o[9] = lgamma(a * 40.0);
    o[10] = tgamma(b * 20.0);
    o[11] = sinpi(a * 1000.0);
    o[12] = cospi(b * 3.0);
    o[13] = rcbrt(a * 1e6);
    o[14] = logb(a * 1e200);
    o[15] = (double)ilogb(b * 1e-200);
    o[16] = nearbyint(a * 10.5);
    o[17] = (double)lrint(a * 1e7);
    o[18] = (double)lround(b * 2.5e6);
    o[19] = ldexp(a, 1000);
    o[20] = scalbn(b, -1030);
    o[21] = scalbln(a, 3L);
    o[22] = remainder(a * 100.0, b + 1.5);
    o[23] = nextafter(a, b);
    o[24] = rhypot(a, b);
    o[25] = norm3d(a, b, 0.5);
    o[26] = rnorm3d(b, a, 2.0);
    o[27] = norm4d(a, b, a * b, 1e-3);
    o[28] = rnorm4d(b, a, 3.0, -4.0);
    wided[4 * i + 0] = llrint(a * 3e15);
    wided[4 * i + 1] = llround(b * 1.5e12);
    wided[4 * i + 2] = lrint(b * 7.5);
    wided[4 * i + 3] = (long long)ilogb(0.0) * 4 + ilogb(a);
}
