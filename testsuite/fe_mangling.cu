// Parameter types for Itanium mangling (checked against nvcc's kernel names):
// bool, char, signed/unsigned char, short, unsigned short, long, unsigned long,
// long long, unsigned long long, float, double, size_t, an enum, pointers with
// const/volatile/__restrict__, a pointer to a pointer and repeated types
// (substitutions S_, S0_ ...).
// LAUNCH: scalars grid=1 block=32 out=f64[64]:zero flag=1 c=65 sc=-3 uc=200 s=-1234 us=60000 l=-5000000000 ul=7000000000 ll=-9000000000 ull=12000000000 f=1.5 d=-2.25 z=99
// LAUNCH: pointers grid=1 block=32 a=f32[32]:rand b=f32[32]:rand out=f64[64]:zero idx=i32[32]:iota
// LAUNCH: with_enum grid=1 block=32 out=f64[64]:zero mode=2 gain=0.5

enum Mode { OFF, ON, AUTO };

__global__ void scalars(double* out, bool flag, char c, signed char sc, unsigned char uc, short s,
                        unsigned short us, long l, unsigned long ul, long long ll, unsigned long long ull,
                        float f, double d, size_t z) {
    int t = threadIdx.x;
    double v[14] = {(double)flag, (double)c, (double)sc, (double)uc, (double)s, (double)us, (double)l,
                    (double)ul, (double)ll, (double)ull, (double)f, d, (double)z, 0.0};
    if (t < 14)
        out[t] = v[t];
}

__global__ void pointers(const float* __restrict__ a, const float* b, double* out, const int* const idx) {
    int t = threadIdx.x;
    out[32 + t] = a[idx[t]] + b[31 - idx[t]];
}

__global__ void with_enum(double* out, Mode mode, float gain) {
    int t = threadIdx.x;
    out[t] += mode == AUTO ? gain * t : -1.0;
}
