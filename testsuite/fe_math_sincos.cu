// sincosf, sincos, sincospif, sincospi and __sincosf: both results of one call, into
// locals (kept in registers) and straight into global memory through the pointers;
// small arguments and huge ones (the Payne-Hanek slow path).
// LAUNCH: math_sincos grid=4 block=64 x=f32[256]:rand big=f32[256]:randint(-100000,100000) xd=f64[256]:rand out=f32[1536]:zero outd=f64[1536]:zero
#include <math.h>

__global__ void math_sincos(const float* x, const float* big, const double* xd, float* out, double* outd) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = (i & 1) ? x[i] * 10.0f : big[i] * 1000.0f;
    float s, c;
    sincosf(a, &s, &c);
    out[6 * i] = s - c;
    sincosf(x[i], &out[6 * i + 1], &out[6 * i + 2]);
    sincospif(a * 0.001f, &s, &c);
    out[6 * i + 3] = s;
    out[6 * i + 4] = c;
    __sincosf(x[i] * 3.0f, &s, &c);
    out[6 * i + 5] = s * c;
    double ad = (i & 1) ? xd[i] * 10.0 : (double)big[i] * 1e7;
    double sd, cd;
    sincos(ad, &sd, &cd);
    outd[6 * i] = sd;
    outd[6 * i + 1] = cd;
    sincospi(xd[i] * 7.0, &outd[6 * i + 2], &outd[6 * i + 3]);
    sincos(xd[i], &sd, &outd[6 * i + 5]);
    outd[6 * i + 4] = sd;
}
