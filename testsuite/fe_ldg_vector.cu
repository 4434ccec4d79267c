// __ldg on every type it takes (scalars and CUDA's vector types), and the usual
// float4-vectorized kernels: a vectorized saxpy with a scalar tail, a float4 row sum.
// LAUNCH: ldg_all grid=2 block=64 c=i8[512]:rand uc=u8[512]:rand s=i16[512]:rand us=u16[512]:rand i=i32[512]:rand u=u32[512]:rand l=i64[512]:rand ul=u64[512]:rand f=f32[512]:rand d=f64[512]:rand out=i64[1024]:zero fout=f32[512]:zero dout=f64[512]:zero
// LAUNCH: saxpy_vec4 grid=4 block=64 n=1027 a=1.5 x=f32[1027]:rand y=f32[1027]:rand
// LAUNCH: row_sum4 grid=2 block=32 x=f32[4096]:rand sums=f32[64]:zero cols=64
#include <cuda_runtime.h>

__global__ void ldg_all(const char* __restrict__ c, const unsigned char* uc, const short* s, const unsigned short* us,
                        const int* i, const unsigned* u, const long long* l, const unsigned long long* ul,
                        const float* f, const double* d, long long* out, float* fout, double* dout) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    long long acc = __ldg(&c[t]) + __ldg(&uc[t]) + __ldg(&s[t]) + __ldg(&us[t]) + __ldg(&i[t]);
    acc += __ldg(&u[t]) + __ldg(&l[t]) + (long long)__ldg(&ul[t]);
    signed char sc = __ldg((const signed char*)&c[t + 1]);
    long lg = __ldg((const long*)&l[t + 1]);
    unsigned long ulg = __ldg((const unsigned long*)&ul[t + 1]);
    out[t] = acc + sc + lg + (long long)ulg;
    char2 c2 = __ldg((const char2*)c + t);
    char4 c4 = __ldg((const char4*)c + t);
    uchar2 uc2 = __ldg((const uchar2*)uc + t);
    uchar4 uc4 = __ldg((const uchar4*)uc + t);
    short2 s2 = __ldg((const short2*)s + t);
    short4 s4 = __ldg((const short4*)s + t / 2);
    ushort2 us2 = __ldg((const ushort2*)us + t);
    ushort4 us4 = __ldg((const ushort4*)us + t / 2);
    int2 i2 = __ldg((const int2*)i + t);
    int4 i4 = __ldg((const int4*)i + t / 2);
    uint2 u2 = __ldg((const uint2*)u + t);
    uint4 u4 = __ldg((const uint4*)u + t / 2);
    longlong2 l2 = __ldg((const longlong2*)l + t);
    ulonglong2 ul2 = __ldg((const ulonglong2*)ul + t);
    out[512 + t] = c2.x + c2.y + c4.x * c4.w + uc2.y + uc4.z + s2.x + s4.w + us2.y + us4.x + i2.y + i4.z
                   + u2.x + u4.w + l2.y + (long long)ul2.x;
    float2 f2 = __ldg((const float2*)f + t);
    float4 f4 = __ldg((const float4*)f + t / 2);
    double2 d2 = __ldg((const double2*)d + t);
    fout[t] = __ldg(&f[t]) + f2.x * f2.y + f4.x - f4.w;
    dout[t] = __ldg(&d[t]) + d2.x - d2.y;
}

__global__ void saxpy_vec4(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int n4 = n / 4;
    if (t < n4) {
        float4 xv = __ldg(reinterpret_cast<const float4*>(x) + t);
        float4 yv = reinterpret_cast<float4*>(y)[t];
        yv.x = a * xv.x + yv.x;
        yv.y = a * xv.y + yv.y;
        yv.z = a * xv.z + yv.z;
        yv.w = a * xv.w + yv.w;
        reinterpret_cast<float4*>(y)[t] = yv;
    }
    int tail = n4 * 4 + t;
    if (t < n - n4 * 4) y[tail] = a * x[tail] + y[tail];
}

__global__ void row_sum4(const float* __restrict__ x, float* sums, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    const float4* p = reinterpret_cast<const float4*>(x + row * cols);
    float s = 0.0f;
    for (int k = 0; k < cols / 4; k++) {
        float4 v = __ldg(p + k);
        s += (v.x + v.y) + (v.z + v.w);
    }
    sums[row] = s;
}
